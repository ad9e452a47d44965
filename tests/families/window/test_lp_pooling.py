"""The window family on LP_POOLING and LP_POOLING1 (issue #35): the Lp norm
of each window, the ``lp-sign`` readings (|X|^P or X^P as printed, and the
root of a negative sum) with bounds of their own, the CPU reference at 0
FAIL, the planted faults caught, onnxruntime's LpPool and torch's lp_pool."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case, writable_view
from dmlconform.families.window.cases import geometry, power, window
from dmlconform.families.window.oracle import WindowOracle
from dmlconform.families.window.reference import lp_norm
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.window.suites import case as _case
from tests.families.window.suites import cases as _cases
from tests.families.window.suites import spec as _spec

OPS = ("LP_POOLING", "LP_POOLING1")


def test_the_suites_have_every_geometry_and_power() -> None:
    assert [len(_cases(op)) for op in OPS] == [60, 66]  # LP_POOLING1 adds dilation2 at P 1, 2, 3
    ids = {c.id for c in _cases("LP_POOLING1")}
    for want in ("FLOAT32/4d/dilation2-p3/random", "FLOAT16/4d/all-padding-p1/random", "FLOAT32/5d/k3-p3/exact",
                 "FLOAT32/4d/k3-p3/random/padded", "FLOAT16/4d/k3-p2/exact", "FLOAT64/4d/k3/random/unsupported"):
        assert f"LP_POOLING1/{want}" in ids
    assert _case("LP_POOLING", "FLOAT32/4d/k3-p3/exact").attribute_map()["P"] == 3


def _bind(case: Case):  # type: ignore[no-untyped-def]
    return WindowOracle.of(_spec(case.operator)).bind([case], flush_subnormals=False)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_the_corner_is_the_lp_norm_of_its_four_taps(p: int) -> None:
    """k3 with padding 1: the first output reads the 2x2 corner; |x| summed at P 1 (exact: bound 0)."""
    case = _case("LP_POOLING", f"FLOAT32/4d/k3-p{p}/exact")
    taps = np.abs(case.input("InputTensor").view()[0, 0, :2, :2].astype(np.float64))
    batch = _bind(case)
    assert batch.expected[0] == np.float32((taps ** p).sum() ** (1 / p))
    assert bool(batch.relaxed[0] == 0) is (p == 1)


def test_the_signed_readings_differ_beyond_their_bounds_at_odd_p() -> None:
    """P 3 on random data: where a window holds a negative value the printed X^P gives another value, offered
    with a bound of its own that is smaller than the distance between the readings (they are told apart),
    and NaN where the sum is negative; at P 2 nothing is offered (X^2 = |X|^2)."""
    batch = _bind(_case("LP_POOLING", "FLOAT32/4d/k3-p3/random"))
    found = {a.name: a for a in batch.alternatives}
    root, nan = found["reading:lp-sign:signed-root"], found["reading:lp-sign:signed-nan"]
    assert "reading:lp-sign=absolute" in found and root.bound is not None
    apart = np.abs(root.values.astype(np.float64) - batch.expected[root.index])
    assert np.mean(apart > root.bound) > 0.95
    assert np.all(root.bound < batch.relaxed[root.index] + np.abs(root.values) + 1e-3)
    negative = np.isnan(nan.values)
    assert nan.index.tolist() == root.index.tolist() and (root.values < 0).sum() <= negative.sum() < negative.size
    assert nan.values[~negative].tolist() == root.values[~negative].tolist()
    assert not _bind(_case("LP_POOLING", "FLOAT32/4d/k3-p2/random")).alternatives


class _Reading(CpuBackend):
    """The CPU reference taking another ``lp-sign`` reading (in float32, as a GPU would)."""

    def __init__(self, reading: str) -> None:
        super().__init__()
        self.reading = reading

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:  # type: ignore[override]
        super().run(spec, case, buffers)  # type: ignore[arg-type]
        sem, out = spec.semantics, case.outputs[0]
        x = case.input("InputTensor").view(buffers["InputTensor"])
        writable_view(out, buffers[out.name])[...] = lp_norm(x, window(sem, case), geometry(sem, case),  # type: ignore[arg-type]
                                                             out.sizes, out.dtype, power(sem, case),  # type: ignore[arg-type]
                                                             reading=self.reading)


def _took(results: list[CaseResult]) -> Counter[str]:
    """Per reading of the results, the elements that took it."""
    took: Counter[str] = Counter()
    for r in results:
        took.update({name: n for name, _, n in r.readings})
    return took


@pytest.mark.parametrize("reading", ["signed-root", "signed-nan"])
def test_a_backend_taking_a_signed_reading_passes_and_is_named(reading: str) -> None:
    pairs = [(_spec("LP_POOLING"), c) for c in _cases("LP_POOLING")]
    results = run_cases(pairs, _Reading(reading))
    assert Counter(r.outcome for r in results) == {Outcome.PASS: len(pairs) - 2, Outcome.NOT_SUPPORTED: 2}
    took = _took(results)
    assert took[f"reading:lp-sign:{reading}"] > 100 * took["reading:lp-sign=absolute"] > 0
    other = "signed-nan" if reading == "signed-root" else "signed-root"
    assert took[f"reading:lp-sign:{other}"] < took[f"reading:lp-sign:{reading}"]


@pytest.mark.parametrize("op", OPS)
def test_the_cpu_reference_passes_and_the_faults_are_caught(op: str) -> None:
    pairs = [(_spec(op), c) for c in _cases(op)]
    good = run_cases(pairs, CpuBackend())
    assert Counter(r.outcome for r in good) == {Outcome.PASS: len(pairs) - 2, Outcome.NOT_SUPPORTED: 2}
    took = _took(good)  # the readings agree within their bounds at a few elements (a small negative value's cube)
    assert took["reading:lp-sign=absolute"] > 100 * max(took["reading:lp-sign:signed-root"], 1)
    for fault, caught, missed in (("lp-p-as-two", ("-p1/", "-p3/"), "-p2/"), ("lp-root-dropped", ("-p2/", "-p3/"), "-p1/")):
        bad = [r.case_id for r in run_cases(pairs, FaultyBackend(fault)) if r.outcome is Outcome.FAIL]
        assert all(any(c in i for i in bad) for c in caught) and not any(missed in i for i in bad), fault


@pytest.mark.parametrize("op", OPS)
def test_onnxruntime_lp_pool_takes_the_absolute_reading(op: str) -> None:
    """LpPool (|x|^p) passes all but the windows reaching over their padding, which ONNX forbids (refused)."""
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec(op), c) for c in _cases(op)], OnnxRuntimeBackend())
    refused = [r for r in results if r.refused]
    assert len(refused) == 6 and all("all-padding" in r.case_id and "below it" in r.message for r in refused)
    assert Counter(r.outcome for r in results) == {Outcome.PASS: len(results) - 8, Outcome.NOT_SUPPORTED: 8}
    took = _took(results)
    assert took["reading:lp-sign=absolute"] > 100 * max(took["reading:lp-sign:signed-nan"], 1)


def test_torch_lp_pool_takes_the_signed_nan_reading_and_overflows_in_float16() -> None:
    """torch's lp_pool is x.pow(P) without |x| (the signed-nan reading, named); FLOAT32 passes.  In FLOAT16
    (declared: its powers are rounded to FLOAT16) the windows whose cubes pass 65504 overflow to inf where the
    norm is about 40: an intermediate overflow, FAIL whatever the reading (DESIGN, Ambiguities)."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec("LP_POOLING"), c) for c in _cases("LP_POOLING")], TorchBackend())
    assert [r.case_id for r in results if r.outcome is Outcome.FAIL] == ["LP_POOLING/FLOAT16/4d/k3-p3/range"]
    assert all(r.outcome is Outcome.PASS for r in results if "/FLOAT32/" in r.case_id and r.expect_supported)
    took = _took(results)
    assert took["reading:lp-sign:signed-nan"] > 100 * max(took["reading:lp-sign=absolute"], 1)


def test_a_float16_square_rounded_into_the_subnormals_is_within_the_float16_bound() -> None:
    """torch (FLOAT16 accumulation declared) rounds x^2 to FLOAT16: a square below 2^-14 keeps few digits
    (x = 2.7e-4: x^2 = 7.3e-8 becomes 5.96e-8, the root 2.44e-4, 110 ULP away).  The declared bound allows each
    term's underflow, half the smallest subnormal; a square flushed to 0 (root 0) still FAILs."""
    case = _case("LP_POOLING1", "FLOAT16/4d/k1-p2/random")
    x = case.input("InputTensor").view().astype(np.float64)
    batch = WindowOracle.of(_spec(case.operator)).bind([case], flush_subnormals=False, float16_accumulation=True)
    stepwise = np.sqrt(np.square(x.astype(np.float16)).astype(np.float64)).astype(np.float16).reshape(-1)
    expected = batch.expected.astype(np.float64)
    underflowed = np.square(x).reshape(-1) < 2.0 ** -14
    assert underflowed.any() and np.abs(stepwise - expected).max() > 10 * np.spacing(np.float16(2.0 ** -12))
    assert np.all(np.abs(stepwise.astype(np.float64) - expected) <= batch.relaxed)
    flushed = np.where(underflowed, 0.0, expected)  # a subnormal square flushed: not FLOAT16 arithmetic
    assert np.any(np.abs(flushed - expected) > batch.relaxed)
