"""The Linux CPU stack of the directml backend (issue #25), without building it:
the bridge generator on a small header in vkd3d's shape, the exact reasons
a missing piece gives, the worker's wire format, and the runner's verdict
for what the stack lacks.  The real stack: test_linux_real.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from dmlconform.backends.base import BackendInfo, DeviceLimitError, NotSupportedError, Support
from dmlconform.backends.directml import bridge_gen
from dmlconform.backends.directml.backend import DirectMLBackend
from dmlconform.backends.directml.library import Unavailable
from dmlconform.backends.directml.linux_stack import MANIFEST, Stack, check
from dmlconform.backends.directml.stack_client import decode_case, encode_case
from dmlconform.cases.model import Case, Layout, TensorData
from dmlconform.cli import main
from dmlconform.errors import InputError
from dmlconform.families.elementwise.cases import generate
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec.model import DataType, FeatureLevel, Spec
from tests.backends.directml.conftest import spec

#: Three interfaces in widl's C layout, as vkd3d_d3d12.h and vkd3d_d3dcommon.h have them.
HEADER = """
typedef struct IUnknownVtbl {
    BEGIN_INTERFACE

    /*** IUnknown methods ***/
    HRESULT (STDMETHODCALLTYPE *QueryInterface)(
        IUnknown *This,
        REFIID riid,
        void **object);

    ULONG (STDMETHODCALLTYPE *AddRef)(
        IUnknown *This);

    ULONG (STDMETHODCALLTYPE *Release)(
        IUnknown *This);

    END_INTERFACE
} IUnknownVtbl;
typedef struct ID3D10BlobVtbl {
    /*** IUnknown methods ***/
    HRESULT (STDMETHODCALLTYPE *QueryInterface)(ID3D10Blob *This, REFIID riid, void **object);
    ULONG (STDMETHODCALLTYPE *AddRef)(ID3D10Blob *This);
    ULONG (STDMETHODCALLTYPE *Release)(ID3D10Blob *This);
    /*** ID3D10Blob methods ***/
    SIZE_T (STDMETHODCALLTYPE *GetBufferSize)(ID3D10Blob *This);
} ID3D10BlobVtbl;
typedef struct ID3D12ResourceVtbl {
    /*** IUnknown methods ***/
    HRESULT (STDMETHODCALLTYPE *QueryInterface)(ID3D12Resource *This, REFIID riid, void **object);
    ULONG (STDMETHODCALLTYPE *AddRef)(ID3D12Resource *This);
    ULONG (STDMETHODCALLTYPE *Release)(ID3D12Resource *This);
    /*** ID3D12Resource methods ***/
    HRESULT (STDMETHODCALLTYPE *SetName)(ID3D12Resource *This, const WCHAR *name);
    D3D12_RESOURCE_DESC * (STDMETHODCALLTYPE *GetDesc)(
        ID3D12Resource *This,
        D3D12_RESOURCE_DESC *__ret);
} ID3D12ResourceVtbl;
typedef struct ID3D12DeviceVtbl {
    /*** IUnknown methods ***/
    HRESULT (STDMETHODCALLTYPE *QueryInterface)(ID3D12Device *This, REFIID riid, void **object);
    ULONG (STDMETHODCALLTYPE *AddRef)(ID3D12Device *This);
    ULONG (STDMETHODCALLTYPE *Release)(ID3D12Device *This);
    /*** ID3D12Device methods ***/
    HRESULT (STDMETHODCALLTYPE *MakeResident)(
        ID3D12Device *This,
        UINT object_count,
        ID3D12Resource *const *objects);
    HRESULT (STDMETHODCALLTYPE *CreateComputePipelineState)(
        ID3D12Device *This,
        const D3D12_COMPUTE_PIPELINE_STATE_DESC *desc,
        REFIID riid,
        void **pipeline_state);
    void (STDMETHODCALLTYPE *CopyResource)(
        ID3D12Device *This,
        ID3D12Resource *dst,
        ID3D12Resource *src);
    HRESULT (STDMETHODCALLTYPE *GetBlob)(ID3D12Device *This, ID3DBlob **blob);
} ID3D12DeviceVtbl;
"""


def _function(source: str, name: str) -> str:
    start = source.index(f" {name}(")
    return source[start: source.index("\n}", start)]


def test_bridge_generator_translates_what_crosses_the_abi() -> None:
    bridge = bridge_gen.generate([HEADER])
    assert (bridge.interfaces, bridge.methods) == (4, 19)
    src = bridge.source
    assert "r->lpVtbl->CopyResource(r, (ID3D12Resource *)bridge_unwrap(dst), " in _function(src, "px_ID3D12Device_CopyResource")
    resident = _function(src, "px_ID3D12Device_MakeResident")
    assert "for (UINT k = 0; k < (object_count); k++) tmp_objects[k] = bridge_unwrap(objects[k]);" in resident
    pso = _function(src, "px_ID3D12Device_CreateComputePipelineState")
    assert "tmp_desc.pRootSignature = bridge_unwrap(tmp_desc.pRootSignature);" in pso
    assert "bridge_pipeline_result(ret_);" in pso and "*pipeline_state = bridge_wrap(*pipeline_state, riid)" in pso
    assert "*blob = bridge_wrap(*blob, &IID_ID3D10Blob)" in _function(src, "px_ID3D12Device_GetBlob")
    get_desc = _function(src, "px_ID3D12Resource_GetDesc")
    assert get_desc.startswith(" px_ID3D12Resource_GetDesc(struct bridge_proxy *This) {")
    assert "D3D12_RESOURCE_DESC ret_;" in get_desc and "GetDesc(r, &ret_);" in get_desc
    assert "if (!ret_) bridge_forget(This);" in _function(src, "px_ID3D12Device_Release")
    assert "return S_OK;" in _function(src, "px_ID3D12Resource_SetName")
    # IUnknown is index 0: every interface derives from it; each is its own line's deepest.
    assert '{"ID3D12Device", &IID_ID3D12Device, vt_ID3D12Device, 2, 2, 0x5ull},' in src
    query = _function(src, "px_IUnknown_QueryInterface")
    assert query.startswith(" px_IUnknown_QueryInterface(struct bridge_proxy *This, REFIID riid, void ** object)")
    assert "int ok = SUCCEEDED(ret_), failed = 0;" in query and "if (failed) ret_ = E_NOINTERFACE;" in query
    assert "global: D3D12CreateDevice; " in bridge_gen.version_script()


def test_bridge_generator_names_a_header_it_cannot_read() -> None:
    with pytest.raises(bridge_gen.BridgeError, match="no ID3D12DeviceVtbl in the headers"):
        bridge_gen.generate([HEADER.replace("ID3D12Device", "ID3D12Other")])
    broken = HEADER.replace("UINT object_count,", "UINT flags,")
    with pytest.raises(bridge_gen.BridgeError, match="no count parameter for objects"):
        bridge_gen.generate([broken])


@pytest.mark.skipif(not Path("/lib64/ld-linux-x86-64.so.2").exists(), reason="x86-64 Linux only")
def test_check_names_the_first_missing_piece(tmp_path: Path) -> None:
    stack = Stack(tmp_path)
    with pytest.raises(Unavailable) as exc:
        check(stack)
    assert str(exc.value) == (f"no Linux CPU stack at {tmp_path} (stack.json missing): build it with "
                              f"`dmlconform directml setup-linux --dir {tmp_path}`")
    (tmp_path / MANIFEST).write_text("{}")
    stack.libdir.mkdir(parents=True)
    for name in ("libvulkan.so.1", "libvulkan_lvp.so"):
        (stack.libdir / name).write_bytes(b"")
    with pytest.raises(Unavailable) as exc:
        check(stack)
    assert str(exc.value) == (f"the Linux CPU stack at {tmp_path} lacks vkd3d built from source: "
                              f"{stack.vkd3d / 'lib' / 'libvkd3d.so.1'} is missing; run "
                              f"`dmlconform directml setup-linux --dir {tmp_path}` again")


def test_run_over_a_missing_stack_is_unavailable_with_the_reason(tmp_path: Path) -> None:
    args = ["run", "--backend", "directml", "--backend-arg", f"stack={tmp_path}", "--op", "ELEMENT_WISE_IDENTITY",
            "-o", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output
    assert f"no Linux CPU stack at {tmp_path} (stack.json missing)" in result.output
    assert CliRunner().invoke(main, [*args, "--skip-unavailable"]).exit_code == 0


def test_stack_and_dml_path_together_are_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--backend", "directml", "--backend-arg", f"stack={tmp_path}",
                                       "--backend-arg", "dml_path=x.so", "--op", "ELEMENT_WISE_IDENTITY",
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "give dml_path (a GPU's DirectML) or stack (the Linux CPU stack), not both" in result.output


def test_the_wire_format_keeps_attributes_exact_and_in_place_aliases() -> None:
    x = TensorData("InputTensor", DataType.FLOAT32, (2, 2), (2, 1), np.array([1, -2, 3, 4], dtype=np.float32))
    out = TensorData("OutputTensor", DataType.FLOAT32, (2, 2), (2, 1), np.zeros(4, dtype=np.float32))
    attrs = (("Alpha", "1/6"), ("Beta", math.inf), ("Gamma", math.nan), ("Count", 3), ("Flag", True))
    case = Case("OP/FLOAT32/x", "OP", FeatureLevel.FL_6_2, DataType.FLOAT32, (x,), (out,), attrs, Layout.IN_PLACE,
                (("OutputTensor", "InputTensor"),), expect_supported=False)
    buffers = {"InputTensor": x.buffer.copy(), "OutputTensor": np.full(4, 7, dtype=np.float32)}
    back, bound = decode_case(encode_case(case, buffers))
    assert (back.id, back.level, back.layout, back.aliases, back.expect_supported) == \
        (case.id, case.level, case.layout, case.aliases, False)
    assert back.attributes[:2] == attrs[:2] and math.isnan(float(back.attributes[2][1]))
    assert back.attributes[3:] == attrs[3:]
    assert bound["OutputTensor"] is bound["InputTensor"]
    assert bound["InputTensor"].tolist() == [1, -2, 3, 4] and bound["InputTensor"].flags.writeable


class _Limited:
    """A backend whose machine lacks what every case needs."""

    def info(self) -> BackendInfo:
        return BackendInfo("limited", "cpu", "0", FeatureLevel.FL_6_2)

    def supports(self, spec: Spec, case: Case) -> Support:
        return Support(True)

    def run(self, spec: Spec, case: Case, buffers: object) -> None:
        if case.layout is Layout.PACKED:
            raise DeviceLimitError("CompileOperator failed: the D3D12 layer could not translate the shader")
        raise NotSupportedError("DirectML rejected the desc")


def test_a_device_limit_is_not_supported_even_inside_the_table() -> None:
    s = spec("ELEMENT_WISE_IDENTITY")
    cases = [c for c in generate(s, FeatureLevel.FL_6_2, seed=0) if c.expect_supported][:12]
    results = run_cases([(s, c) for c in cases], _Limited())
    for case, result in zip(cases, results):
        if case.layout is Layout.PACKED:
            assert (result.outcome, result.message) == \
                (Outcome.NOT_SUPPORTED, "CompileOperator failed: the D3D12 layer could not translate the shader")
        else:
            assert result.outcome is Outcome.FAIL
            assert result.message.endswith("table supports: DirectML rejected the desc")


def test_directml_backend_option_list_names_stack() -> None:
    with pytest.raises(InputError, match=r"it knows dml_path, feature_level, stack, mesa; did you mean stack\?"):
        DirectMLBackend(stak="1")


def _case(case_id: str, outcome: str, message: str, dtype: str = "FLOAT32") -> dict[str, object]:
    return {"case_id": case_id, "operator": case_id.split("/")[0], "dtype": dtype, "outcome": outcome,
            "message": message, "layout": "packed", "expect_supported": True}


REPORT = {"run": {"backend": "directml", "device": "DirectML on vkd3d", "feature_level": "6_2", "seed": 0,
                  "seconds": 1.5},
          "cases": [_case("ELEMENT_WISE_IDENTITY/FLOAT32/4d/a", "PASS", ""),
                    _case("ACTIVATION_SOFTSIGN/FLOAT32/4d/a", "NOT_SUPPORTED",
                          "CompileOperator failed: the D3D12 layer could not translate the shader (IDMLDevice::"
                          "CompileOperator failed with E_FAIL (0x80004005); vkd3d: E8013: Call to intrinsic function "
                          "dx.op.binaryWithTwoOuts.i32 is unhandled.)"),
                    _case("ACTIVATION_SOFTSIGN/FLOAT16/4d/a", "NOT_SUPPORTED",
                          "the device does not support FLOAT16 tensors (DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT): ...",
                          "FLOAT16"),
                    _case("ADAM_OPTIMIZER/FLOAT32/4d/a", "FAIL", "rejected a configuration that the 6_2 table "
                          "supports: DirectML rejected the desc: IDMLDevice::CreateOperator failed with E_INVALIDARG"),
                    _case("ACTIVATION_SOFTPLUS/FLOAT32/4d/a", "FAIL", "rejected a configuration ...")]}


def test_results_page_says_ran_or_why_not_and_analyses_each_fail(tmp_path: Path) -> None:
    report, notes, page = tmp_path / "report.json", tmp_path / "notes.yaml", tmp_path / "page.md"
    report.write_text(json.dumps(REPORT))
    notes.write_text('- match: "ADAM_OPTIMIZER/*"\n  class: doc\n  note: The table says FLOAT32, the text UINT32.\n')
    result = CliRunner().invoke(main, ["directml", "results", str(report), "-o", str(page), "--notes", str(notes)])
    assert result.exit_code == 0, result.output
    assert "not analysed: ACTIVATION_SOFTPLUS/FLOAT32/4d/a" in result.output
    text = page.read_text()
    assert "| 5 | 1 | 1 | 0 | 0 | 2 | 2 | 0 |" in text  # cases, ran, PASS, QW, FAIL computed, rejected, NS, other
    assert ("| shader not translated by vkd3d (E8013: Call to intrinsic function dx.op.binaryWithTwoOuts.i32 "
            "is unhandled) | 1 |") in text
    assert "| ACTIVATION_SOFTSIGN | FLOAT16 | 1 | 0 | 0 | 1 | device lacks FLOAT16 (no 16-bit shader ops) (1) |" in text
    assert "| ELEMENT_WISE_IDENTITY | FLOAT32 | 1 | 1 | 0 | 0 | ran |" in text
    assert "doc ambiguity or semantic difference: The table says FLOAT32, the text UINT32. |" in text
    assert "| ACTIVATION_SOFTPLUS | FLOAT32 | 1 | `ACTIVATION_SOFTPLUS/FLOAT32/4d/a` | rejected a configuration ... " \
           "| not analysed |" in text


def test_results_page_takes_a_preface_after_the_run_line(tmp_path: Path) -> None:
    report, preface, page = tmp_path / "report.json", tmp_path / "preface.md", tmp_path / "page.md"
    report.write_text(json.dumps(REPORT))
    preface.write_text("## The shader census\n\n| vkd3d | translated |\n| --- | --: |\n| 1.17 | 374 |\n\n")
    result = CliRunner().invoke(main, ["directml", "results", str(report), "-o", str(page), "--preface", str(preface)])
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert f"--preface {preface}` from a run's report.json" in text
    run_line = next(i for i, x in enumerate(text.splitlines()) if x.startswith("Run: "))
    assert text.splitlines()[run_line + 2: run_line + 8] == [
        "## The shader census", "", "| vkd3d | translated |", "| --- | --: |", "| 1.17 | 374 |", ""]
    assert text.splitlines()[run_line + 8] == "## Totals"


def test_results_of_something_else_is_a_usage_error(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({**REPORT, "run": {"backend": "cpu"}}))
    result = CliRunner().invoke(main, ["directml", "results", str(report), "-o", str(tmp_path / "p.md")])
    assert (result.exit_code, result.output.strip()) == \
        (2, f"error: {report}: a run of backend 'cpu', not directml")
    report.write_text("[1, 2]")
    result = CliRunner().invoke(main, ["directml", "results", str(report), "-o", str(tmp_path / "p.md")])
    assert (result.exit_code, result.output.strip()) == \
        (2, f"error: {report}: not a report.json of dmlconform run (no cases and run)")
    assert not (tmp_path / "p.md").exists()


def test_setup_linux_into_a_folder_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    """It was an internal error (exit 4, NotADirectoryError) before."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = CliRunner().invoke(main, ["directml", "setup-linux", "--dir", str(blocker / "stack")])
    assert (result.exit_code, result.output.strip()) == \
        (2, f"error: --dir {blocker / 'stack'}: cannot create the folder (Not a directory); give a writable folder")
