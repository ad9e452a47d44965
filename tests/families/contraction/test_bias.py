"""The whole-tensor bias check (issue #24 item 2, TOSA's statistical test):
a directed rounding within every element's bound is a QUALITY_WARNING,
honest summation orders are not."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform import bias
from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.contraction.cases import operands
from dmlconform.families.contraction.oracle import ContractionOracle
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

WIDE = "GEMM/FLOAT32/4d/k257/random/wide"


@cache
def _spec() -> m.Spec:
    return load_spec(REPO / "specs" / "GEMM.yaml")


@cache
def _case(case_id: str) -> Case:
    return next(iter(cases_of(_spec(), m.FeatureLevel.FL_6_4, seed=0, keep=lambda i, _: i == case_id)))


def _verdict(case: Case, actual: np.ndarray) -> str | None:
    exp = ContractionOracle.of(_spec()).bind([case], flush_subnormals=False).expect(0, actual.size)[0]
    assert exp.bias_scale is not None
    sums = bias.moments(exp.expected, actual, exp.bias_scale, np.array([actual.size]))
    return bias.verdict(float(sums.count[0]), float(sums.signed[0]), float(sums.toward[0]), float(sums.square[0]))


def _in_order(case: Case, order: np.ndarray) -> np.ndarray:
    """The wide case summed in float32, rounded to nearest, term by term in ``order``, plus C."""
    sem = _spec().semantics
    assert isinstance(sem, Contraction)
    ops = operands(sem, case)
    assert ops.c is not None
    total = np.zeros(np.broadcast_shapes(ops.a.shape[:-1] + (1,), ops.b.shape[:-2] + (1, ops.b.shape[-1])),
                     np.float32)
    for k in order:
        total = total + ops.a[..., :, k:k + 1] * ops.b[..., k:k + 1, :]
    return (total + ops.c).reshape(-1)


def test_a_truncating_backend_is_warned_by_name_and_cpu_is_not() -> None:
    truncating = run_cases([(_spec(), _case(WIDE))], FaultyBackend("gemm-truncated-sum"))[0]
    assert truncating.outcome is Outcome.QUALITY_WARNING
    assert truncating.counts[1:] == (0, 0)  # every element within its bounds: only the bias tells
    assert truncating.message.startswith("OutputTensor: errors biased toward zero: mean -0.0")
    assert "over 6144 elements" in truncating.message and "(limit 6)" in truncating.message
    assert run_cases([(_spec(), _case(WIDE))], CpuBackend())[0].outcome is Outcome.PASS


@pytest.mark.parametrize("order", ["forward", "reversed", "shuffled"])
def test_honest_orders_rounded_to_nearest_are_not_biased(order: str) -> None:
    k = 257
    orders = {"forward": np.arange(k), "reversed": np.arange(k)[::-1],
              "shuffled": np.random.default_rng(7).permutation(k)}
    case = _case(WIDE)
    assert _verdict(case, _in_order(case, orders[order])) is None


def test_too_few_elements_say_nothing() -> None:
    assert bias.verdict(bias.MIN_ELEMENTS - 1, -1000.0, -1000.0, 1000.0) is None
    assert bias.verdict(bias.MIN_ELEMENTS, 0.0, 0.0, 0.0) is None  # every error 0: no spread, no bias
    assert bias.verdict(1000, -500.0, 0.0, 1000.0) is not None


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(bias.MIN_ELEMENTS, 5000))
def test_zero_mean_errors_are_never_called_a_bias(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    expected = rng.uniform(-1, 1, n)
    scale = rng.uniform(0.5, 2.0, n)
    actual = expected + rng.choice([-1.0, 0.0, 1.0], n) * scale * 1e-7
    sums = bias.moments(expected, actual, scale, np.array([n]))
    assert bias.verdict(float(sums.count[0]), float(sums.signed[0]), float(sums.toward[0]),
                        float(sums.square[0])) is None


def test_moments_split_by_case_and_skip_what_cannot_be_judged() -> None:
    expected = np.array([1.0, -1.0, np.nan, 2.0, 3.0])
    actual = np.array([0.5, -0.5, 1.0, np.inf, 3.0])
    scale = np.array([1.0, 1.0, 1.0, 1.0, 0.0])
    sums = bias.moments(expected, actual, scale, np.array([2, 3]))
    assert sums.count.tolist() == [2.0, 0.0]
    assert sums.signed.tolist() == [0.0, 0.0] and sums.toward.tolist() == [-1.0, 0.0]
    assert sums.square.tolist() == [0.5, 0.0]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), cases=st.integers(1, 5), n=st.integers(0, 60))
def test_moments_are_the_plain_per_case_sums(seed: int, cases: int, n: int) -> None:
    """The in-place arrays and the sums by runs (`bench/bench_gemm.py`) against a plain loop per element."""
    rng = np.random.default_rng(seed)
    owner = np.sort(rng.integers(0, cases, n))
    expected = rng.choice([-2.0, -1.0, 0.0, 1.0, np.nan, np.inf], n) * rng.uniform(0.5, 1.5, n)
    actual = expected + rng.choice([-1.0, 0.0, 1.0, np.nan], n) * 1e-3
    scale = rng.choice([-1.0, 0.0, 1e-3, 2e-3], n)
    sums = bias.moments(expected.astype(np.float32), actual.astype(np.float32), scale,
                         np.bincount(owner, minlength=cases))
    want = np.zeros((4, cases))
    for e, a, sc, k in zip(expected.astype(np.float32).tolist(), actual.astype(np.float32).tolist(), scale.tolist(),
                           owner.tolist()):
        z = (a - e) / sc if sc > 0 else float("nan")
        if np.isfinite(z) and np.isfinite(e):
            want[:, k] += (1.0, z, z * float(np.sign(e)), z * z)
    assert np.allclose([sums.count, sums.signed, sums.toward, sums.square], want, rtol=1e-9, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), sizes=st.lists(st.integers(0, 40), min_size=1, max_size=5),
       block=st.integers(1, 50))
def test_moments_are_the_same_however_the_elements_are_blocked(seed: int, sizes: list[int], block: int) -> None:
    """`plan.SUM_BLOCK` cuts the chunk anywhere, cases included: the sums do not change."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    expected = rng.choice([-2.0, 0.0, 1.0, np.inf], n) * rng.uniform(0.5, 1.5, n)
    actual = expected + rng.choice([-1.0, 0.0, 1.0, np.nan], n) * 1e-3
    scale = rng.choice([0.0, 1e-3, 2e-3], n)
    whole = bias.moments(expected, actual, scale, np.array(sizes))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bias, "SUM_BLOCK", block)
        cut = bias.moments(expected, actual, scale, np.array(sizes))
    for field in ("count", "signed", "toward", "square"):
        assert np.allclose(getattr(cut, field), getattr(whole, field), rtol=1e-12, atol=1e-12), field
