"""The window family on CONVOLUTION (issue #35 items 2-4, 7): its cases, the
oracle's bounds and readings, the CPU reference at 0 FAIL and each planted
fault caught by name."""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of, family_of
from dmlconform.families.window.faults import FAULTS
from dmlconform.families.window.oracle import WindowOracle
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _spec() -> m.Spec:
    return load_spec(REPO / "specs" / "CONVOLUTION.yaml")


@cache
def _cases(level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[Case, ...]:
    return tuple(cases_of(_spec(), level, seed=0))


def _case(case_id: str) -> Case:
    return next(c for c in _cases() if c.id == case_id)


@cache
def _run(backend: str) -> tuple[CaseResult, ...]:
    return tuple(run_cases([(_spec(), c) for c in _cases()], CpuBackend() if backend == "cpu"
                           else FaultyBackend(backend)))


def test_convolution_is_claimed_by_the_window_family() -> None:
    family, reason = family_of(_spec())
    assert family is not None and family.name == "window" and reason == "ok"


def test_the_suite_has_what_the_issue_asks_for() -> None:
    ids = [c.id for c in _cases()]
    assert len(ids) == len(set(ids)) == 190  # 40 of them FusedActivation (test_fused_activation.py)
    for wanted in ("CONVOLUTION/FLOAT32/4d/forward/cross/k1/exact", "CONVOLUTION/FLOAT16/4d/forward/cross/k5/random",
                   "CONVOLUTION/FLOAT32/4d/forward/conv/k5-over/exact", "CONVOLUTION/FLOAT32/4d/forward/cross/asym-pad/exact",
                   "CONVOLUTION/FLOAT32/4d/forward/cross/stride3-k2/random", "CONVOLUTION/FLOAT32/4d/forward/conv/dilation2/exact",
                   "CONVOLUTION/FLOAT32/4d/forward/cross/depthwise/exact", "CONVOLUTION/FLOAT32/3d/forward/cross/k3/random",
                   "CONVOLUTION/FLOAT32/5d/forward/conv/mixed/exact", "CONVOLUTION/FLOAT32/4d/backward/cross/k2-s3-outpad2/exact",
                   "CONVOLUTION/FLOAT16/4d/backward/conv/dilation2-asym/random", "CONVOLUTION/FLOAT32/4d/forward/cross/k3/nan",
                   "CONVOLUTION/FLOAT32/4d/forward/cross/k3/random/padded", "CONVOLUTION/FLOAT64/4d/forward/cross/k3/random/unsupported",
                   "CONVOLUTION/FLOAT32/6d/forward/cross/k3/random/unsupported"):
        assert wanted in ids
    assert {c.dimension_count for c in _cases(m.FeatureLevel.FL_1_0) if c.expect_supported} == {4, 5}


def test_the_shapes_follow_the_geometry() -> None:
    case = _case("CONVOLUTION/FLOAT32/4d/backward/cross/k3-s2-outpad1/exact")
    assert [t.sizes for t in case.inputs] == [(2, 4, 4, 4), (4, 6, 3, 3), (1, 6, 1, 1)]
    assert case.outputs[0].sizes == (2, 6, 8, 8)  # (4 - 1) 2 + 3 - 1 - 1 + 1
    mixed = _case("CONVOLUTION/FLOAT32/5d/forward/cross/mixed/random")
    assert dict(mixed.attributes)["Strides"] == "2,2,3" and mixed.outputs[0].sizes == (2, 6, 4, 4, 3)


def test_exact_cases_require_zero_error_and_random_ones_get_a_bound() -> None:
    oracle = WindowOracle.of(_spec())
    exact = oracle.bind([_case("CONVOLUTION/FLOAT16/4d/forward/cross/k5/exact")], flush_subnormals=False)
    assert not exact.strict.any() and not exact.relaxed.any()
    rand = oracle.bind([_case("CONVOLUTION/FLOAT16/4d/forward/cross/k5/random")], flush_subnormals=False)
    assert (rand.relaxed > 0).all() and (rand.relaxed >= rand.strict).all()
    assert set(np.unique(rand.n)) >= {4 * 9 + 1, 4 * 25 + 1}  # a corner's 3x3 taps, the middle's 5x5, plus the bias
    half = oracle.bind([_case("CONVOLUTION/FLOAT16/4d/forward/cross/k5/random")], flush_subnormals=False,
                       float16_accumulation=True)
    assert (half.relaxed > rand.relaxed).all()


def test_the_mode_flips_the_filter_forward_and_the_adjoint_backward() -> None:
    """A 1-D check by hand: x = [1, 2, 3], w = [1, 10], no padding.  Cross-correlation gives
    [1 + 20, 2 + 30] = [21, 32]; convolution (w reversed) [10 + 2, 20 + 3] = [12, 23].  The
    backward direction's output is the adjoint of the forward map: x scattered, [1, 12, 23, 30]."""
    from dmlconform.families.window.cases import Geometry
    from dmlconform.families.window.oracle import convolve
    x, w = np.array([[[1.0, 2.0, 3.0]]]), np.array([[[1.0, 10.0]]])
    geo = Geometry((1,), (1,), (0,), (0,), (0,))
    assert convolve(x, w, None, geo, (2,), flip=(False,)).value.ravel().tolist() == [21, 32]
    assert convolve(x, w, None, geo, (2,), flip=(True,)).value.ravel().tolist() == [12, 23]
    back = Geometry((1,), (1,), (0,), (0,), (0,), transposed=True)
    assert convolve(x, w, None, back, (4,), flip=(False,)).value.ravel().tolist() == [1, 12, 23, 30]


def test_the_cpu_reference_passes_with_zero_fail() -> None:
    results = _run("cpu")
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 188, Outcome.NOT_SUPPORTED: 2}
    assert all(not r.expect_supported for r in results if r.outcome is Outcome.NOT_SUPPORTED)


def test_the_readings_are_offered_where_they_differ() -> None:
    oracle = WindowOracle.of(_spec())
    flip = oracle.bind([_case("CONVOLUTION/FLOAT32/5d/forward/conv/mixed/exact")], flush_subnormals=False)
    assert {a.name for a in flip.alternatives} >= {"reading:flip-axes:height-width"}
    pad = oracle.bind([_case("CONVOLUTION/FLOAT32/4d/backward/cross/k3-s2-outpad1/random")], flush_subnormals=False)
    zero = next(a for a in pad.alternatives if a.name == "reading:output-padding:zero")
    bias = _case("CONVOLUTION/FLOAT32/4d/backward/cross/k3-s2-outpad1/random").input("BiasTensor").view().ravel()
    assert set(zero.values.tolist()) <= set(bias.tolist())  # zero, then the bias
    after = next(a for a in pad.alternatives if a.name == "reading:output-padding:zero-after-bias")
    assert after.values.size and not after.values.any()  # zero, the bias not added (DirectML's kernels)
    assert np.array_equal(after.index, zero.index)


#: Where each fault must show: substrings one of which every case id it FAILs holds (() where any case may
#: show it), and one that some case it FAILs holds.
WHERE = {"conv-no-flip": (("/conv/",), "/5d/"), "conv-flip-in-cross-correlation": (("/cross/",), "/backward/"),
         "conv-pads-swapped": ((), "asym"), "conv-dilation-ignored": (("dilation", "mixed"), "/backward/"),
         "conv-groups-mixed": (("groups", "depthwise", "mixed"), "depthwise"),
         "conv-output-padding-ignored": (("outpad",), "k2-s3"), "conv-dropped-border-tap": ((), "k1/exact"),
         "conv-float16-accumulation": (("FLOAT16",), "/random"), "conv-tf32": (("FLOAT32",), "/backward/"),
         "conv-activation-skipped": (("/fused=",), "fused=gelu"),
         "conv-activation-before-bias": (("/fused=",), "/backward/")}


@pytest.mark.parametrize("name", sorted(n for n in FAULTS if n.startswith("conv-")))
def test_each_fault_is_caught_by_name(name: str) -> None:
    failed = [r.case_id for r in _run(name) if r.outcome is Outcome.FAIL]
    every, some = WHERE[name]
    assert all(any(w in i for w in every) for i in failed) if every else failed, failed
    assert any(some in i for i in failed), failed
