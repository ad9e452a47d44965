"""The window family on real implementations (issue #35 item 5):
onnxruntime's Conv/ConvTranspose and torch's conv*/conv_transpose* pass
the CONVOLUTION suite; what they cannot express is NOT_SUPPORTED with the
reason, never FAIL."""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import cache

import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _spec() -> m.Spec:
    return load_spec(REPO / "specs" / "CONVOLUTION.yaml")


@cache
def _cases() -> tuple[Case, ...]:
    return tuple(cases_of(_spec(), m.FeatureLevel.FL_6_4, seed=0))


def test_onnxruntime_passes_the_convolution_suite_but_mlas_logistic() -> None:
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec(), c) for c in _cases()], OnnxRuntimeBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 187, Outcome.NOT_SUPPORTED: 2, Outcome.FAIL: 1}
    refused = sorted(r.case_id for r in results if r.outcome is Outcome.NOT_SUPPORTED)
    assert refused[0].endswith("/fused=celu") and refused[1].startswith("CONVOLUTION/FLOAT64/")  # ONNX Celu: float
    (failed,) = [r for r in results if r.outcome is Outcome.FAIL]  # MLAS's approximate logistic (docs/window.md)
    assert failed.case_id == "CONVOLUTION/FLOAT32/4d/forward/cross/k3/random/fused=sigmoid"


def test_torch_passes_the_convolution_suite_with_its_declared_float16_sums() -> None:
    """torch's CPU conv_transpose sums FLOAT16 in FLOAT16 (declared: judged by that reading); without the
    declaration those cases FAIL, so the declaration is what lets them pass."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec(), c) for c in _cases()], TorchBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 189, Outcome.NOT_SUPPORTED: 1}
    (refused,) = [r for r in results if r.outcome is Outcome.NOT_SUPPORTED]
    assert "/6d/" in refused.case_id and "conv1d to conv3d" in refused.message


def test_torch_float16_backward_fails_the_float32_bound() -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch import backend

    class Undeclared(backend.TorchBackend):
        def info(self):  # type: ignore[no-untyped-def]
            import dataclasses
            return dataclasses.replace(super().info(), float16_accumulation=frozenset())

    case = next(c for c in _cases() if c.id == "CONVOLUTION/FLOAT16/4d/backward/cross/k3/random")
    (result,) = run_cases([(_spec(), case)], Undeclared())
    assert result.outcome is Outcome.FAIL


class _Declaring(FaultyBackend):
    """A fake of torch on CUDA: FLOAT16 convolutions summed in FLOAT16 (the planted
    ``conv-float16-accumulation``), declaring it as the torch backend does for ``cuda``."""

    def info(self):  # type: ignore[no-untyped-def]
        from dmlconform.backends.torch.backend import float16_accumulation

        return dataclasses.replace(super().info(), float16_accumulation=float16_accumulation("cuda"))


def test_float16_convolution_sums_pass_only_where_declared() -> None:
    """The declaration path of torch's CUDA CONVOLUTION (cuDNN's FLOAT16 sums): with the declaration the
    FLOAT16 random cases are judged by FLOAT16's bound and pass; without it they FAIL.  FLOAT32 is untouched."""
    pairs = [(_spec(), c) for c in _cases() if "/FLOAT16/" in c.id]
    undeclared = run_cases(pairs, FaultyBackend("conv-float16-accumulation"))
    assert sum(r.outcome is Outcome.FAIL for r in undeclared) >= 10
    declared = run_cases(pairs, _Declaring("conv-float16-accumulation"))
    assert {r.outcome for r in declared} <= {Outcome.PASS, Outcome.QUALITY_WARNING, Outcome.NOT_SUPPORTED}


def test_tf32_convolutions_fail_by_name_and_the_option_is_recorded() -> None:
    """cuDNN's TF32 (``torch.backends.cudnn.allow_tf32``, the torch backend's ``tf32`` option): FLOAT32 inputs
    and filters rounded to TF32 FAIL the random FLOAT32 cases (the harness tells TF32 on from off); exact
    small integers are exact in TF32 and pass."""
    pairs = [(_spec(), c) for c in _cases() if "/FLOAT32/" in c.id]
    results = run_cases(pairs, FaultyBackend("conv-tf32"))
    failed = {r.case_id for r in results if r.outcome is Outcome.FAIL}
    assert len(failed) >= 20 and "CONVOLUTION/FLOAT32/4d/forward/cross/k3/random" in failed
    assert not any("/exact" in i for i in failed)
    assert {r.outcome for r in run_cases(pairs, CpuBackend())} == {Outcome.PASS, Outcome.NOT_SUPPORTED}
