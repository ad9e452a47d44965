"""The ``directml`` backend: ctypes over the real DirectML library and D3D12.

DESIGN.md, "Backends".  Modules, in the order a call flows through them:
`abi` (structs, enum values, IIDs, vtable slots), `com` (calling through
vtables per platform convention), `descs` (operator descs from a spec's
fields), `library` (where DirectML, D3D12 and DXCore come from), `execute`
(the D3D12 + DirectML path that runs one operator), `backend` (the Backend
protocol), and for validation without a GPU `fake_device` + ``fake_dxcore.c``,
`validator` (CreateOperator in a subprocess) and `validate` (the doc's tables
against the library).  The real kernels on a Linux CPU (issues #25, #37):
`linux_stack` (vkd3d, lavapipe and the bridge, built by ``dmlconform directml
setup-linux``), `vkd3d_build` (vkd3d from its release source with the
patches of ``vkd3d-patches/``), `census` (how many of the library's shaders
that vkd3d translates), `bridge_gen` + ``bridge_runtime.c`` (the System V
libd3d12.so over vkd3d), `stack_client` / `stack_worker` (the backend in a
worker started through the machine's loader with the stack's library path)
and `linux_results` (the docs/results page of such a run).
"""
