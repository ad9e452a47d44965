"""The ``directml`` backend: ctypes over the real DirectML library and D3D12.

DESIGN.md, "Backends".  Modules, in the order a call flows through them:
`abi` (structs, enum values, IIDs, vtable slots), `com` (calling through
vtables per platform convention), `descs` (operator descs from a spec's
fields), `library` (where DirectML, D3D12 and DXCore come from), `execute`
(the D3D12 + DirectML path that runs one operator), `backend` (the Backend
protocol), and for validation without a GPU `fake_device` + ``fake_dxcore.c``,
`validator` (CreateOperator in a subprocess) and `validate` (the doc's tables
against the library).
"""
