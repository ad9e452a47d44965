"""The normalization family on MEAN_VARIANCE_NORMALIZATION1 (issue #36): the
suite's shape, the CPU reference at 0 FAIL, the bound against honest
float32 kernels (two-pass and one-pass variance) and against values it must
not admit, the sample-variance reading with its own bound, each planted
fault caught where it should be, and the shape rules."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.compare import Alternative, Policy, Tier, compare
from dmlconform.families.normalization import cases as mvn
from dmlconform.families.normalization.oracle import NormalizationOracle
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.normalization import suites

OP = "MEAN_VARIANCE_NORMALIZATION1"


def _spec() -> m.Spec:
    return suites.spec(OP)


def _cases(level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[Case, ...]:
    return suites.cases(OP, level)


def _case(suffix: str) -> Case:
    return suites.case(OP, suffix)


_honest = suites.honest


def test_the_suite_has_every_axis_set_and_affine_form() -> None:
    ids = {c.id for c in _cases()}
    assert len(ids) == len(_cases()) == 80  # 13 of them with a FusedActivation (test_fused_activation.py)
    four = {c.attribute_map()["Axes"] for c in _cases() if c.dimension_count == 4 and c.dtype is m.DataType.FLOAT32}
    assert len(four) == 15  # every non-empty subset of 4 dimensions
    for want in ("FLOAT32/1d/axes=0/channel/random", "FLOAT32/8d/axes=2,3,4,5,6,7/channel/random",
                 "FLOAT32/4d/axes=2,3/strided/random", "FLOAT32/4d/axes=1,2,3/normalized/random",
                 "FLOAT32/4d/axes=2,3/scale-only/random", "FLOAT32/4d/axes=2,3/channel/constant",
                 "FLOAT32/4d/axes=2,3/channel/random/n1", "FLOAT16/4d/axes=2,3/channel/wide",
                 "FLOAT32/4d/axes=2,3/channel/random/no-variance", "FLOAT64/4d/axes=3/channel/random/unsupported"):
        assert f"{OP}/{want}" in ids
    strided = _case("FLOAT32/4d/axes=2,3/strided/random").input("ScaleTensor")
    assert strided.sizes == (2, 3, 4, 5) and strided.strides == (0, 1, 0, 0)


def test_level_2_1_has_4d_only_and_no_lone_scale() -> None:
    early = _cases(m.FeatureLevel.FL_2_1)
    assert {c.dimension_count for c in early if c.expect_supported} == {4}
    assert not any("scale-only" in c.id or "normalized" in c.id for c in early)
    assert any(c.dimension_count == 3 and not c.expect_supported for c in early)


def test_the_reference_passes_the_suite() -> None:
    results = run_cases([(_spec(), c) for c in _cases()], CpuBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 79, Outcome.NOT_SUPPORTED: 1}


def test_constant_input_gives_the_bias() -> None:
    case = _case("FLOAT32/4d/axes=2,3/channel/constant")
    bias = np.broadcast_to(case.input("BiasTensor").view(), case.input("InputTensor").sizes).reshape(-1)
    (exp,) = NormalizationOracle.of(_spec()).bind([case], flush_subnormals=False).expect(0, bias.size)
    assert np.array_equal(exp.expected, bias)
    # the mean of 20 x 0.7 may round (2u of 0.7 per step): a deviation of about 1e-6 over sqrt(Epsilon), 3.2e-3
    assert exp.bound_relaxed is not None and np.all(exp.bound_relaxed < 1e-3)


@pytest.mark.parametrize("variant", ["f32-sequential", "f32-one-pass"])
def test_two_pass_and_one_pass_float32_kernels_pass(variant: str) -> None:
    backend = _honest().VARIANTS[variant]()
    results = run_cases([(_spec(), c) for c in _cases()], backend)
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 79, Outcome.NOT_SUPPORTED: 1}


def test_the_large_mean_case_tells_one_pass_from_two_pass() -> None:
    """Where mean^2 / variance is about 770, one pass loses about 10 bits: its error is 30x the two-pass one's."""
    honest = _honest()
    case = _case("FLOAT32/4d/axes=2,3/channel/large-mean")
    batch = NormalizationOracle.of(_spec()).bind([case], flush_subnormals=False)
    expected = batch.expect(0, int(np.prod(case.outputs[0].sizes)))[0].expected.astype(np.float64)
    errors = []
    for variant in ("f32-sequential", "f32-one-pass"):
        buffers = {t.name: np.array(t.buffer) for t in (*case.inputs, *case.outputs)}
        honest.VARIANTS[variant]().run(_spec(), case, buffers)
        errors.append(np.abs(case.outputs[0].view(buffers["OutputTensor"]).reshape(-1) - expected).max())
    assert errors[1] > 10 * errors[0]


def _groups(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, ...]]:
    rank = draw(st.integers(1, 4))
    sizes = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    mean = draw(st.sampled_from([0.0, 1.0, 16.0, -100.0]))
    spread = draw(st.sampled_from([1e-3, 1.0, 50.0]))
    x = mean + spread * np.random.default_rng(seed).uniform(-1, 1, sizes)
    return x.astype(np.float32), axes


@st.composite
def _mvn_case(draw: st.DrawFn) -> Case:
    x, axes = _groups(draw)
    shape = mvn.Shape(m.DataType.FLOAT32, x.shape, axes, affine="none")
    base = mvn._case(_spec(), mvn.semantics_of(_spec()), m.FeatureLevel.FL_6_4, 0, "h", shape)
    return replace(base, inputs=(mvn.family.input_tensor("InputTensor", m.DataType.FLOAT32, x),))


@settings(max_examples=60, deadline=None)
@given(_mvn_case())
def test_the_bound_admits_honest_kernels_and_no_scaled_output(case: Case) -> None:
    """Both float32 kernels within the worst-case bound; 1.01 x the output beyond it wherever |y| >= 1 and the
    group is well conditioned (mean^2 below 100 variances)."""
    n = int(np.prod(case.outputs[0].sizes))
    expectation = NormalizationOracle.of(_spec()).bind([case], flush_subnormals=False).expect(0, n)[0]
    expected = expectation.expected.astype(np.float64)
    honest = _honest()
    for variant in ("f32-sequential", "f32-one-pass", "cpu"):
        buffers = {t.name: np.array(t.buffer) for t in (*case.inputs, *case.outputs)}
        honest.VARIANTS[variant]().run(_spec(), case, buffers)
        got = case.outputs[0].view(buffers["OutputTensor"]).reshape(-1).astype(np.float64)
        assert np.all(np.abs(got - expected) <= expectation.bound_relaxed), variant
    x = case.input("InputTensor").view().astype(np.float64)
    axes = mvn.axes_of(mvn.semantics_of(_spec()), case)
    mean, variance = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    calm = np.broadcast_to(mean ** 2 < 100 * variance, x.shape).reshape(-1) & (np.abs(expected) >= 1)
    assert np.all(0.01 * np.abs(expected[calm]) > expectation.bound_relaxed[calm])


def test_an_alternative_with_a_bound_accepts_within_it_only() -> None:
    expected = np.array([1.0, 2.0], np.float32)
    actual = np.array([1.5, 2.0], np.float32)
    for bound, verdict in ((0.45, "PASS"), (0.35, "FAIL")):  # |1.5 - 1.1| = 0.4
        alt = Alternative("reading:variance:sample", np.array([0]), np.array([1.1], np.float32), Tier.STRICT, "",
                          np.array([bound]))
        result = compare(expected, actual, policy=Policy(), bound_strict=np.zeros(2), alternatives=(alt,))
        assert result.verdict.name == verdict


def test_the_sample_variance_is_a_reading_except_for_one_element() -> None:
    """A backend dividing by N - 1 takes the ``sample`` reading wherever N > 1 (reported) and FAILs where N = 1
    (0/0 where the population reading gives the bias): the planted fault is caught there, by name."""
    results = run_cases([(_spec(), c) for c in _cases()], FaultyBackend("norm-sample-variance"))
    failed = [r.case_id for r in results if r.outcome is Outcome.FAIL]
    assert failed == [f"{OP}/FLOAT32/4d/axes=2,3/channel/random/n1"]
    took = [r for r in results if any(name == "reading:variance:sample"
                                      for name, _, took in r.readings if took)]
    assert len(took) > 40


@pytest.mark.parametrize(("fault", "where"), [("norm-epsilon-outside-sqrt", "small-variance"),
                                              ("norm-wrong-axes", "axes=")])
def test_each_fault_is_caught_where_it_should_be(fault: str, where: str) -> None:
    results = run_cases([(_spec(), c) for c in _cases()], FaultyBackend(fault))
    failed = [r.case_id for r in results if r.outcome is Outcome.FAIL]
    # a squashing activation (sigmoid, tanh) may shrink a fault's error to a quality warning
    assert failed and all(r.outcome in (Outcome.PASS, Outcome.QUALITY_WARNING, Outcome.NOT_SUPPORTED, Outcome.FAIL)
                          for r in results)
    assert any(where in f for f in failed)
    if fault == "norm-epsilon-outside-sqrt":
        assert all(f"{OP}/{c}" in failed for c in ("FLOAT32/4d/axes=2,3/channel/small-variance",
                                                    "FLOAT16/4d/axes=2,3/channel/small-variance"))


def test_case_problems_name_the_fix() -> None:
    case = _case("FLOAT32/4d/axes=2,3/channel/random")
    attrs = dict(case.attributes)
    bad_axes = replace(case, attributes=tuple({**attrs, "Axes": "2,4"}.items()))
    assert "4 is no dimension of the 4-D InputTensor" in " ".join(mvn.case_problems(_spec(), bad_axes))
    counted = replace(case, attributes=tuple({**attrs, "AxisCount": 3}.items()))
    assert "give AxisCount=2" in " ".join(mvn.case_problems(_spec(), counted))
    scale = case.input("ScaleTensor")
    wide = replace(scale, sizes=(1, 2, 1, 1), strides=(2, 1, 1, 1))
    odd = replace(case, inputs=tuple(wide if t.name == "ScaleTensor" else t for t in case.inputs))
    assert "do not broadcast" in " ".join(mvn.case_problems(_spec(), odd))
    assert not list(mvn.case_problems(_spec(), case))
