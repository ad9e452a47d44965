"""MEAN_VARIANCE_NORMALIZATION (CrossChannel) and MEAN_VARIANCE_NORMALIZATION2
(UseMean, UseVariance: "TBD" on its page) in the normalization family
(issue #36): the suites, the reference at 0 FAIL, the axes CrossChannel
picks, UseMean FALSE's primary reading and its alternative with a bound,
the planted faults, and the engines."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.families.normalization.cases import axes_of, semantics_of
from dmlconform.families.normalization.oracle import NormalizationOracle
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from tests.families.normalization import suites

OPS = ("MEAN_VARIANCE_NORMALIZATION", "MEAN_VARIANCE_NORMALIZATION2")


_spec, _cases, _case = suites.spec, suites.cases, suites.case


@pytest.mark.parametrize(("op", "counts"), [("MEAN_VARIANCE_NORMALIZATION", (49, 2)),
                                            ("MEAN_VARIANCE_NORMALIZATION2", (85, 1))])
def test_the_reference_passes_the_suite(op: str, counts: tuple[int, int]) -> None:
    results = run_cases([(_spec(op), c) for c in _cases(op)], CpuBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: counts[0], Outcome.NOT_SUPPORTED: counts[1]}


def test_cross_channel_picks_the_axes() -> None:
    op = "MEAN_VARIANCE_NORMALIZATION"
    sem = semantics_of(_spec(op))
    for suffix, flag, axes in (("axes=2,3", False, (2, 3)), ("axes=1,2,3", True, (1, 2, 3))):
        case = _case(op, f"FLOAT32/4d/{suffix}/channel/random")
        assert case.attribute_map()["CrossChannel"] is flag and axes_of(sem, case) == axes
    assert {axes_of(sem, c) for c in _cases(op) if c.expect_supported} == {(2, 3), (1, 2, 3)}


def test_use_mean_false_is_rms_normalization_with_the_other_reading_bounded() -> None:
    op = "MEAN_VARIANCE_NORMALIZATION2"
    case = _case(op, "FLOAT32/4d/axes=1,2,3/channel/random/no-mean")
    x = case.input("InputTensor").view().astype(np.float64)
    a = np.broadcast_to(case.input("ScaleTensor").view(), x.shape).astype(np.float64)
    b = np.broadcast_to(case.input("BiasTensor").view(), x.shape).astype(np.float64)
    eps = float(np.float32(1e-5))
    rms = a * x / np.sqrt((x * x).mean(axis=(1, 2, 3), keepdims=True) + eps) + b
    central = a * x / np.sqrt(x.var(axis=(1, 2, 3), keepdims=True) + eps) + b
    (exp,) = NormalizationOracle.of(_spec(op)).bind([case], flush_subnormals=False).expect(0, x.size)
    assert np.array_equal(exp.expected, rms.reshape(-1).astype(np.float32))
    (alt,) = [a for a in exp.alternatives if a.name == "reading:variance-without-mean:about-the-mean"]
    assert alt.bound is not None and alt.index.size > 100
    assert np.all(np.abs(central.reshape(-1)[alt.index] - alt.values) <= alt.bound)
    assert np.all(alt.bound < 1e-3 * np.abs(alt.values) + 1e-5)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("fault", ["norm-sample-variance", "norm-epsilon-outside-sqrt", "norm-wrong-axes"])
def test_each_fault_is_caught(op: str, fault: str) -> None:
    results = run_cases([(_spec(op), c) for c in _cases(op)], FaultyBackend(fault))
    failed = [r.case_id for r in results if r.outcome is Outcome.FAIL]
    assert failed
    if fault == "norm-sample-variance":
        assert f"{op}/FLOAT32/4d/axes=2,3/channel/random/n1" in failed


@pytest.mark.parametrize(("op", "counts"), [("MEAN_VARIANCE_NORMALIZATION", (43, 8)),
                                            ("MEAN_VARIANCE_NORMALIZATION2", (57, 29))])
def test_onnxruntime(op: str, counts: tuple[int, int]) -> None:
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec(op), c) for c in _cases(op)], OnnxRuntimeBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: counts[0], Outcome.NOT_SUPPORTED: counts[1]}


@pytest.mark.parametrize(("op", "counts"), [("MEAN_VARIANCE_NORMALIZATION", (46, 5)),
                                            ("MEAN_VARIANCE_NORMALIZATION2", (61, 25))])
def test_torch(op: str, counts: tuple[int, int]) -> None:
    """MEAN_VARIANCE_NORMALIZATION2's UseMean FALSE runs as rms_norm (the about-zero reading) and passes."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec(op), c) for c in _cases(op)], TorchBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: counts[0], Outcome.NOT_SUPPORTED: counts[1]}
    if op == "MEAN_VARIANCE_NORMALIZATION2":
        assert any("no-mean" in r.case_id and r.outcome is Outcome.PASS for r in results)
