"""The contraction family on real libraries (issue #24 item 5): torch and
onnxruntime mappings, torch's tf32 option, and the simulated TF32 fault
that the harness tells apart from float32."""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np
import pytest
from click.testing import CliRunner

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.errors import InputError
from dmlconform.families import cases_of
from dmlconform.families.contraction.faults import to_tf32
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

#: A few cases of each operator that exercise transposes, broadcasts, FLOAT16, fused activations, overflow.
PICKED = ("GEMM/FLOAT32/4d/k33/random/transA,transB", "GEMM/FLOAT16/4d/k257/random",
          "GEMM/FLOAT32/4d/k7/random/broadcastC-row", "GEMM/FLOAT16/4d/k33/random/fused=sigmoid",
          "GEMM/FLOAT32/2d/k7/random", "MATRIX_MULTIPLY_INTEGER/UINT8/4d/k33/random/zp=tensor",
          "MATRIX_MULTIPLY_INTEGER/INT8/4d/k33/random/zp=tensor-1d",
          "MATRIX_MULTIPLY_INTEGER_TO_FLOAT/INT8/4d/k33/random/scale=tensor/out=FLOAT32")
#: What torch maps beyond onnxruntime: A's zero point per row, INT32 overflow, A's scale per row.
TORCH_ONLY = ("MATRIX_MULTIPLY_INTEGER/INT8/4d/k7/random/broadcastB-batch", "MATRIX_MULTIPLY_INTEGER/UINT8/4d/k33040/overflow",
              "MATRIX_MULTIPLY_INTEGER_TO_FLOAT/UINT16/4d/k33/random/out=FLOAT16")


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


@cache
def _cases(op: str) -> tuple[Case, ...]:
    return tuple(cases_of(_spec(op), m.FeatureLevel.FL_6_4, seed=0))


def _picked(ids: tuple[str, ...]) -> list[tuple[m.Spec, Case]]:
    return [(_spec(i.split("/")[0]), c) for i in ids for c in _cases(i.split("/")[0]) if c.id == i]


def test_tf32_rounds_to_ten_bits_to_nearest_even() -> None:
    x = np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -10, -(1 + 2.0 ** -11 + 2.0 ** -20), np.inf],
                 np.float32)
    assert to_tf32(x).tolist() == [1.0, 1 + 2.0 ** -9, 1 + 2.0 ** -10, -(1 + 2.0 ** -10), np.inf]


def test_tf32_products_fail_by_name_and_float32_passes() -> None:
    pairs = [(_spec("GEMM"), c) for c in _cases("GEMM") if c.dtype is m.DataType.FLOAT32]
    tf32 = Counter(r.outcome for r in run_cases(pairs, FaultyBackend("gemm-tf32")))
    honest = Counter(r.outcome for r in run_cases(pairs, CpuBackend()))
    assert tf32[Outcome.FAIL] >= 20 and set(honest) == {Outcome.PASS, Outcome.NOT_SUPPORTED}
    exact = [r for r in run_cases([p for p in pairs if "/exact" in p[1].id], FaultyBackend("gemm-tf32"))]
    assert {r.outcome for r in exact} == {Outcome.PASS}  # small integers are exact in TF32: only random data tells


def test_torch_runs_the_family_and_records_tf32() -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases(_picked(PICKED + TORCH_ONLY), TorchBackend())
    assert len(results) == len(PICKED + TORCH_ONLY)
    assert {r.outcome for r in results} == {Outcome.PASS}, [(r.case_id, r.message) for r in results]
    assert TorchBackend().info().device.endswith(", tf32 matmul and cudnn off")
    assert TorchBackend(tf32="on").info().device.endswith(", tf32 matmul and cudnn on")
    with pytest.raises(InputError, match="torch backend: tf32='yes'; write tf32=on or tf32=off"):
        TorchBackend(tf32="yes")


def test_a_bad_tf32_value_is_one_line_exit_2() -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    result = CliRunner().invoke(main, ["run", "--backend", "torch", "--backend-arg", "tf32=maybe", "--op", "GEMM",
                                       "--no-progress"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == \
        "error: dmlconform[torch]: torch backend: tf32='maybe'; write tf32=on or tf32=off"


def test_onnxruntime_runs_what_onnx_expresses_and_says_why_not_the_rest() -> None:
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    backend = OnnxRuntimeBackend()
    results = run_cases(_picked(PICKED), backend)
    assert {r.outcome for r in results} == {Outcome.PASS}, [(r.case_id, r.message) for r in results]
    row = _picked(("MATRIX_MULTIPLY_INTEGER/INT8/4d/k7/random/zp=row,column",))[0]
    assert backend.supports(*row).reason == "a_zero_point per row: onnxruntime takes A's zero point per tensor only"
    linear = _picked(("GEMM/FLOAT32/4d/k33/random/fused=linear",))[0]
    assert backend.supports(*linear).reason == "FusedActivation ACTIVATION_LINEAR: FusedGemm has no such activation"
    assert backend.implements(_spec("MATRIX_MULTIPLY_INTEGER_TO_FLOAT")) is None
