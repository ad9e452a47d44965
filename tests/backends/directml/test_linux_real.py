"""The real DirectML kernels on this machine's CPU (issues #25, #37), marked ``real_directml``.

The stack (vkd3d 1.17 built from its release source with the project's
patches, lavapipe, the D3D12 bridge, the torch-directml wheel's
libdirectml.so) is set up through the documented command, ``dmlconform
directml setup-linux``, every session: the first time it builds vkd3d (about
two to three minutes on two cores), then it only checks that the build in the
cache still matches the source and the patches.  The release tarball is the
one beside the checkout (``../shared/directml-linux/vkd3d-1.17.tar.xz``, as
in CI).  The tests skip, with the command's own reason, only when the stack
cannot be set up (not Debian, a build dependency missing).  Each case goes
through the project's directml backend in its worker process and is judged
against the oracle by ``dmlconform run``.

With the patches, the shaders of strided (padded) and broadcast layouts
translate (they divide with ``dx.op.binaryWithTwoOuts``), so those run for
real.  Over the machine's lavapipe the device reports no 16-bit support, so
FLOAT16, INT16 and UINT16 cases are NOT_SUPPORTED with that reason; over
Debian sid's (``setup-linux --mesa sid``, the ``mesa=sid`` option) they run,
and the backend declares that lavapipe's float32 subnormal flushing.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dmlconform.backends.directml.linux_stack import Stack
from dmlconform.cli import main

pytestmark = pytest.mark.real_directml

#: What the device reports it lacks (DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT: vkd3d reports no native 16-bit ops).
NO_16_BIT = ("FLOAT16", "INT16", "UINT16")
LAYOUTS = {"packed", "padded", "broadcast"}
RAN = ("PASS", "QUALITY_WARNING", "FAIL")


def _report(tmp_path: Path, *ops: str, jobs: int = 1, mesa: str = "host") -> dict[str, Any]:
    args = ["run", "--backend", "directml", "-j", str(jobs), "-o", str(tmp_path), "--backend-arg", f"mesa={mesa}"]
    for op in ops:
        args += ["--op", op]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    report: dict[str, Any] = json.loads((tmp_path / "report.json").read_text())
    return report


def _run(tmp_path: Path, *ops: str, jobs: int = 1) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = _report(tmp_path, *ops, jobs=jobs)["cases"]
    return cases


def _flushed(cases: list[dict[str, Any]]) -> int:
    """Elements accepted only as the float32 subnormal flushing the backend declared."""
    return sum(n for c in cases for name, n in c.get("alternatives", []) if name == "flushed_inputs")


def _layouts(cases: list[dict[str, Any]], operator: str, dtype: str, outcomes: tuple[str, ...]) -> set[str]:
    return {c["layout"] for c in cases if (c["operator"], c["dtype"], c["outcome"]) in
            {(operator, dtype, o) for o in outcomes}}


def _not_supported_is_16_bit_or_a_clean_rejection(c: dict[str, Any]) -> bool:
    if c["dtype"] in NO_16_BIT:
        return str(c["message"]).startswith(f"the device does not support {c['dtype']} tensors "
                                            "(DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT)")
    return not c["expect_supported"] and str(c["message"]).startswith("DirectML rejected the desc")


def test_identity_and_if_pass_in_every_layout(linux_stack: Stack, tmp_path: Path) -> None:
    cases = _run(tmp_path, "ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_IF")
    outcomes = Counter(c["outcome"] for c in cases)
    assert set(outcomes) == {"PASS", "NOT_SUPPORTED"}, outcomes
    for c in cases:
        if c["outcome"] == "NOT_SUPPORTED":
            assert _not_supported_is_16_bit_or_a_clean_rejection(c), c
    for op in ("ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_IF"):
        for dtype in ("FLOAT32", "FLOAT64", "INT8", "INT32", "INT64", "UINT8", "UINT32", "UINT64"):
            assert _layouts(cases, op, dtype, ("PASS",)) >= LAYOUTS, (op, dtype)
    assert Counter(c["dtype"] for c in cases if c["layout"] == "in_place" and c["outcome"] == "PASS") \
        == Counter({t: 1 for t in ("FLOAT32", "FLOAT64", "INT8", "INT32", "INT64", "UINT8", "UINT32", "UINT64")})


def test_relu_grad_runs_in_every_layout_and_its_fails_are_directml_s_nan(linux_stack: Stack, tmp_path: Path) -> None:
    """Integers PASS everywhere; FLOAT32 runs in every layout, and the only
    disagreement is DirectML's own (docs/results/directml-linux.md): a NaN
    input or gradient where the input is not positive gives 0, not NaN."""
    cases = _run(tmp_path, "ACTIVATION_RELU_GRAD")
    for dtype in ("INT8", "INT32"):
        assert _layouts(cases, "ACTIVATION_RELU_GRAD", dtype, ("PASS",)) >= LAYOUTS, dtype
    assert _layouts(cases, "ACTIVATION_RELU_GRAD", "FLOAT32", RAN) >= LAYOUTS
    for c in cases:
        if c["outcome"] == "FAIL":
            assert c["dtype"] == "FLOAT32" and ("edges" in c["case_id"] or "pairs" in c["case_id"]), c["case_id"]
            assert all(w["expected"] == "nan" and w["actual"] == 0.0 for w in c["worst"]), c["worst"]
        elif c["outcome"] == "NOT_SUPPORTED":
            assert _not_supported_is_16_bit_or_a_clean_rejection(c), c


def test_softsign_and_gemm_float32_pass_for_real(linux_stack: Stack, tmp_path: Path) -> None:
    cases = _run(tmp_path, "ACTIVATION_SOFTSIGN", "GEMM", jobs=2)
    for op in ("ACTIVATION_SOFTSIGN", "GEMM"):
        float32 = [c for c in cases if (c["operator"], c["dtype"]) == (op, "FLOAT32") and c["expect_supported"]]
        assert float32 and all(c["outcome"] in ("PASS", "QUALITY_WARNING") for c in float32), \
            [(c["case_id"], c["message"]) for c in float32 if c["outcome"] not in ("PASS", "QUALITY_WARNING")][:3]
    assert _layouts(cases, "ACTIVATION_SOFTSIGN", "FLOAT32", ("PASS",)) >= LAYOUTS | {"in_place"}
    assert any("fused=" in c["case_id"] for c in cases if c["operator"] == "GEMM" and c["outcome"] == "PASS")


def test_reductions_run_with_their_temporary_resource(linux_stack: Stack, tmp_path: Path) -> None:
    """ACTIVATION_HARDMAX, SOFTMAX, REDUCE ... need a temporary resource to execute but none to
    initialize; binding one to the initializer made DirectML remove its device (issue #37).  They run:
    every FLOAT32 case in the table PASSes but the NaN ones (DirectML's max drops NaN) and
    LOG_SUM_EXP's ``big`` and ``small``: DirectML sums exp(x) without subtracting the largest, +inf
    near 104 and -inf near -110, a loss of range that FAILs since issue #32 (docs/ambiguities.md)."""
    cases = _run(tmp_path, "ACTIVATION_HARDMAX", "ACTIVATION_SOFTMAX", "REDUCE", jobs=2)
    assert not [c["message"] for c in cases if "DEVICE_REMOVED" in str(c["message"])]
    float32 = [c for c in cases if c["dtype"] == "FLOAT32" and c["expect_supported"]]
    assert {c["operator"] for c in float32} == {"ACTIVATION_HARDMAX", "ACTIVATION_SOFTMAX", "REDUCE"}
    literal = ("/log_sum_exp/big", "/log_sum_exp/small")
    assert all(c["outcome"] in ("PASS", "QUALITY_WARNING") or c["case_id"].endswith(("/nan", *literal))
               for c in float32), \
        [(c["case_id"], c["message"]) for c in float32 if c["outcome"] not in ("PASS", "QUALITY_WARNING")][:3]
    lse = [c for c in float32 if c["case_id"].endswith(literal)]
    assert lse and all(c["outcome"] == "FAIL" and all(w["actual"] in ("inf", "-inf") for w in c["worst"])
                       for c in lse), [(c["case_id"], c["worst"]) for c in lse]


def test_sid_s_mesa_runs_16_bit_types_and_its_flushing_is_declared(sid_mesa: Stack, tmp_path: Path) -> None:
    """With sid's lavapipe (Mesa 26) DirectML reports the 16-bit types (its
    shader model 6.0 shaders, over vkd3d's unchanged answers) and they run in
    every layout; that lavapipe flushes float32 subnormals to zero, which
    the backend declares, so the harness takes the flushed reading there
    (and only there: the machine's lavapipe neither flushes nor declares it).
    The FAILs are DirectML's NaN in RELU_GRAD, as over the machine's Mesa."""
    sid = _report(tmp_path / "sid", "ACTIVATION_RELU_GRAD", mesa="sid")
    assert sid["run"]["flush_subnormals"] is True and sid["run"]["device"].endswith("(CPU, Mesa from Debian sid)")
    cases = sid["cases"]
    for dtype in ("INT8", "INT16", "INT32"):
        assert _layouts(cases, "ACTIVATION_RELU_GRAD", dtype, ("PASS",)) >= LAYOUTS, dtype
    for dtype in ("FLOAT16", "FLOAT32"):
        assert _layouts(cases, "ACTIVATION_RELU_GRAD", dtype, RAN) >= LAYOUTS, dtype
    assert _flushed([c for c in cases if c["dtype"] == "FLOAT32"]) > 0
    for c in cases:
        if c["outcome"] == "FAIL":
            assert c["dtype"] in ("FLOAT16", "FLOAT32") and ("edges" in c["case_id"] or "pairs" in c["case_id"]), \
                c["case_id"]
            assert all(w["expected"] == "nan" and w["actual"] == 0.0 for w in c["worst"]), c["worst"]
        elif c["outcome"] == "NOT_SUPPORTED":
            assert not c["expect_supported"] and str(c["message"]).startswith("DirectML rejected the desc"), c
    host = _report(tmp_path / "host", "ACTIVATION_RELU_GRAD")
    assert host["run"]["flush_subnormals"] is False and _flushed(host["cases"]) == 0


def _matched(cases: list[dict[str, Any]], name: str) -> int:
    """Elements accepted only as the alternative ``name``."""
    return sum(n for c in cases for alt, n in c.get("alternatives", []) if alt == name)


def test_sid_s_per_operation_flushing_is_a_reading_of_the_declared_flushing(sid_mesa: Stack, tmp_path: Path) -> None:
    """sid's lavapipe flushes per operation: Leaky ReLU's comparison sees a subnormal x as -0 and its select
    returns x unflushed.  The per-operation reading accepts it (those cases FAILed with the two whole-case
    readings); the machine's lavapipe keeps subnormals and never needs it."""
    def float32(mesa: str) -> list[dict[str, Any]]:
        cases = _report(tmp_path / mesa, "ACTIVATION_LEAKY_RELU", mesa=mesa)["cases"]
        return [c for c in cases if c["dtype"] == "FLOAT32" and c["expect_supported"]]

    sid = float32("sid")
    assert sid and all(c["outcome"] == "PASS" for c in sid), [(c["case_id"], c["message"]) for c in sid
                                                              if c["outcome"] != "PASS"]
    assert _matched(sid, "flushed_per_operation") > 0
    host = float32("host")
    assert host and all(c["outcome"] == "PASS" for c in host) and _matched(host, "flushed_per_operation") == 0
