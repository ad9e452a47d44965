"""The contraction family on GEMM (issue #24 items 2-4): its cases, the
oracle's bounds, and the CPU reference passing them with 0 FAIL."""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.base import BackendInfo
from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of, family_of
from dmlconform.families.contraction.cases import exact_range, operands
from dmlconform.families.contraction.oracle import ContractionOracle
from dmlconform.oracles.base import gamma, gamma_probable
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _spec() -> m.Spec:
    return load_spec(REPO / "specs" / "GEMM.yaml")


@cache
def _cases(level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[Case, ...]:
    return tuple(cases_of(_spec(), level, seed=0))


def _case(case_id: str) -> Case:
    return next(c for c in _cases() if c.id == case_id)


def test_gemm_is_claimed_by_the_contraction_family() -> None:
    family, reason = family_of(_spec())
    assert family is not None and family.name == "contraction" and reason == "ok"


def test_the_suite_has_what_the_issue_asks_for() -> None:
    ids = [c.id for c in _cases()]
    assert len(ids) == len(set(ids)) == 86
    for wanted in ("GEMM/FLOAT32/4d/k1/exact", "GEMM/FLOAT16/4d/k1000/exact", "GEMM/FLOAT32/4d/k257/random",
                   "GEMM/FLOAT32/4d/k33/random/transA", "GEMM/FLOAT16/4d/k33/random/transA,transB",
                   "GEMM/FLOAT32/4d/k7/random/alpha=0.5,beta=-0.25", "GEMM/FLOAT32/4d/k7/random/broadcastC-row",
                   "GEMM/FLOAT32/4d/k257/cancel", "GEMM/FLOAT16/4d/k33/nan", "GEMM/FLOAT32/4d/k33/inf",
                   "GEMM/FLOAT32/4d/k1000/equal", "GEMM/FLOAT32/2d/k7/random", "GEMM/FLOAT32/3d/k7/random",
                   "GEMM/FLOAT64/4d/k7/random/unsupported", "GEMM/FLOAT32/5d/k7/random/unsupported"):
        assert wanted in ids
    at_1_0 = {c.dimension_count for c in _cases(m.FeatureLevel.FL_1_0) if c.expect_supported}
    assert at_1_0 == {4}


def test_cases_are_reproducible_and_keep_draws_nothing_else() -> None:
    again = {c.id: c for c in cases_of(_spec(), m.FeatureLevel.FL_6_4, seed=0)}
    kept = list(cases_of(_spec(), m.FeatureLevel.FL_6_4, seed=0, keep=lambda i, _: i.endswith("k257/cancel")))
    assert [c.id for c in kept] == ["GEMM/FLOAT32/4d/k257/cancel", "GEMM/FLOAT16/4d/k257/cancel"]
    for case in kept:
        assert all(np.array_equal(a.buffer, b.buffer, equal_nan=True)
                   for a, b in zip(case.inputs, again[case.id].inputs))
    other = next(iter(cases_of(_spec(), m.FeatureLevel.FL_6_4, seed=1)))
    assert not np.array_equal(other.inputs[0].buffer, _cases()[0].inputs[0].buffer)


def test_the_shapes_follow_the_transposes_and_broadcasts() -> None:
    case = _case("GEMM/FLOAT32/4d/k33/random/transA,transB")
    assert [t.sizes for t in case.inputs] == [(2, 3, 33, 3), (2, 3, 5, 33), (2, 3, 3, 5)]
    ops = operands(_spec().semantics, case)  # type: ignore[arg-type]
    assert (ops.a.shape, ops.b.shape) == ((2, 3, 3, 33), (2, 3, 33, 5))
    row = _case("GEMM/FLOAT32/4d/k7/random/broadcastC-row").input("CTensor")
    assert (row.sizes, row.strides, row.buffer.size) == ((2, 3, 3, 5), (0, 0, 0, 1), 5)
    batch = _case("GEMM/FLOAT32/4d/k7/random/broadcastC-batch").input("CTensor")
    assert (batch.strides, batch.buffer.size) == ((0, 0, 5, 1), 15)


@pytest.mark.parametrize("level", [m.FeatureLevel.FL_6_4, m.FeatureLevel.FL_1_0])
def test_the_cpu_reference_passes_every_case(level: m.FeatureLevel) -> None:
    results = run_cases([(_spec(), c) for c in _cases(level)], CpuBackend())
    counts = Counter(r.outcome for r in results)
    assert set(counts) == {Outcome.PASS, Outcome.NOT_SUPPORTED}, [
        (r.case_id, r.message) for r in results if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert all(not r.expect_supported for r in results if r.outcome is Outcome.NOT_SUPPORTED)


def test_exact_cases_allow_no_error_at_all() -> None:
    """Integer data that fits the significand: the bound is 0 everywhere, so 1 ULP fails."""
    for case_id in ("GEMM/FLOAT32/4d/k1000/exact", "GEMM/FLOAT16/4d/k257/exact", "GEMM/FLOAT16/4d/k7/exact/broadcastC-row"):
        exp = ContractionOracle.of(_spec()).bind([_case(case_id)], flush_subnormals=False).expect(0, 90)[0]
        assert exp.ulp == 0 and not np.any(exp.bound_strict) and not np.any(exp.bound_relaxed)
    results = run_cases([(_spec(), _case("GEMM/FLOAT16/4d/k257/exact"))], FaultyBackend("one-ulp"))
    assert results[0].outcome is Outcome.FAIL


def test_exact_range_keeps_every_partial_sum_exact() -> None:
    assert exact_range(m.DataType.FLOAT16, 1000) == 1 and exact_range(m.DataType.FLOAT16, 257) == 2
    assert exact_range(m.DataType.FLOAT32, 7) == 8
    for dtype, k in ((m.DataType.FLOAT16, 33), (m.DataType.FLOAT32, 1000)):
        r = exact_range(dtype, k)
        assert k * r * r + r <= 2 ** (11 if dtype is m.DataType.FLOAT16 else 24)


def test_gamma_and_the_probabilistic_bound() -> None:
    n = np.array([1, 3, 1002, 10 ** 9])
    u = 2.0 ** -24
    assert gamma(n, u)[1] == pytest.approx(3 * u / (1 - 3 * u))
    assert gamma(np.array([2048]), 2.0 ** -11)[0] == np.inf  # n u >= 1: no bound
    probable = gamma_probable(n, u)
    assert np.all(probable <= gamma(n, u))
    assert probable[2] == pytest.approx(np.expm1(5 * np.sqrt(1002) * u + 1002 * u * u / (1 - u)))


def _sums(a: np.ndarray, b: np.ndarray, order: np.ndarray, acc: type) -> np.ndarray:
    """a @ b summed term by term in ``order`` in ``acc`` (a plain loop: the honest worst case)."""
    total = np.zeros((a.shape[0], b.shape[1]), acc)
    for k in order:
        total = (total + np.outer(a[:, k].astype(acc), b[k, :].astype(acc))).astype(acc)
    return total


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 300, ), seed=st.integers(0, 2 ** 32 - 1), scale=st.sampled_from([1.0, 2.0 ** 20, 2.0 ** -20]))
def test_any_summation_order_is_within_the_worst_case_bound(k: int, seed: int, scale: float) -> None:
    """Higham's bound holds for float32 sums in any order: no honest order is a FAIL."""
    rng = np.random.default_rng(seed)
    a = (rng.uniform(-1, 1, (3, k)) * scale).astype(np.float32)
    b = rng.uniform(-1, 1, (k, 2)).astype(np.float32)
    case = _with_values(a, b)
    exp = ContractionOracle.of(_spec()).bind([case], flush_subnormals=False).expect(0, 6)[0]
    for order in (np.arange(k), rng.permutation(k), np.arange(k)[::-1]):
        got = _sums(a, b, order, np.float32).reshape(-1)
        error = np.abs(got.astype(np.float64) - exp.expected.astype(np.float64))
        assert np.all(error <= exp.bound_relaxed), (order[:5], error, exp.bound_relaxed)


def _with_values(a: np.ndarray, b: np.ndarray) -> Case:
    """The 2-D no-C case of the suite with ``a`` and ``b`` as its operands (FLOAT32)."""
    base = _case("GEMM/FLOAT32/2d/k7/random")
    tensors = [dataclasses.replace(base.input("ATensor"), sizes=a.shape, strides=(a.shape[1], 1), buffer=a.reshape(-1)),
               dataclasses.replace(base.input("BTensor"), sizes=b.shape, strides=(b.shape[1], 1), buffer=b.reshape(-1))]
    out = dataclasses.replace(base.outputs[0], sizes=(a.shape[0], b.shape[1]), strides=(b.shape[1], 1),
                              buffer=np.zeros(a.shape[0] * b.shape[1], np.float32))
    return dataclasses.replace(base, inputs=tuple(tensors), outputs=(out,))


class _Float16Accumulating(FaultyBackend):
    """A backend that sums FLOAT16 in FLOAT16 and says so."""

    def info(self) -> BackendInfo:
        return dataclasses.replace(super().info(), float16_accumulation=True)


def test_declared_float16_accumulation_is_judged_by_its_own_bound() -> None:
    pairs = [(_spec(), c) for c in _cases() if c.dtype is m.DataType.FLOAT16]
    hidden = run_cases(pairs, FaultyBackend("gemm-float16-accumulation"))
    declared = run_cases(pairs, _Float16Accumulating("gemm-float16-accumulation"))
    assert sum(r.outcome is Outcome.FAIL for r in hidden) >= 20
    assert {r.outcome for r in declared} == {Outcome.PASS}


def test_a_failure_shows_k_and_s_beside_each_element() -> None:
    result = run_cases([(_spec(), _case("GEMM/FLOAT32/4d/k7/exact"))], FaultyBackend("gemm-dropped-term"))[0]
    assert result.outcome is Outcome.FAIL
    names = {name for d in result.worst for name, _ in d.inputs}
    assert names == {"K", "S"} and all(dict(d.inputs)["K"] == 7 for d in result.worst)


def test_explicit_sums_are_the_same_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a NaN or inf among the operands the oracle sums products itself,
    a block of rows at a time: the blocks change nothing, down to one row."""
    from dmlconform.families.contraction import oracle as contraction

    whole = ContractionOracle.of(_spec()).bind([_case("GEMM/FLOAT32/4d/k33/inf")], flush_subnormals=False)
    monkeypatch.setattr(contraction, "CONTRACTION_PRODUCTS", 1)
    rows = ContractionOracle.of(_spec()).bind([_case("GEMM/FLOAT32/4d/k33/inf")], flush_subnormals=False)
    for got, want in ((rows.expected, whole.expected), (rows.magnitude, whole.magnitude)):
        assert np.array_equal(got, want, equal_nan=True)
    assert np.isinf(whole.expected.reshape(2, 3, 3, 5)[..., 0]).all()
    assert np.isfinite(whole.expected.reshape(2, 3, 3, 5)[..., 1:]).all()


class _Off(CpuBackend):
    """The reference with element 0 moved to ``where`` between the bounds (0: the strict one, 1: the relaxed one)."""

    def __init__(self, where: float) -> None:
        super().__init__()
        self.where = where

    def run(self, spec: m.Spec, case: Case, buffers: dict[str, np.ndarray]) -> None:  # type: ignore[override]
        super().run(spec, case, buffers)
        exp = ContractionOracle.of(spec).bind([case], flush_subnormals=False).expect(0, 1)[0]
        strict, relaxed = float(exp.bound_strict[0]), float(exp.bound_relaxed[0])  # type: ignore[index]
        out = buffers["OutputTensor"]
        out[0] = np.float32(float(exp.expected[0]) + strict + self.where * (relaxed - strict))


@pytest.mark.parametrize(("where", "outcome"), [(-0.01, Outcome.PASS), (0.5, Outcome.QUALITY_WARNING),
                                                (1.5, Outcome.FAIL)])
def test_the_tiers_between_the_bounds(where: float, outcome: Outcome) -> None:
    """Within the probabilistic bound PASS, beyond it QUALITY_WARNING, beyond the worst case FAIL."""
    result = run_cases([(_spec(), _case("GEMM/FLOAT32/4d/k1000/random"))], _Off(where))[0]
    assert result.outcome is outcome, result.message


def _with_half_values(a: np.ndarray, b: np.ndarray) -> Case:
    """`_with_values` in FLOAT16."""
    case = _with_values(a.astype(np.float32), b.astype(np.float32))
    tensors = tuple(dataclasses.replace(t, dtype=m.DataType.FLOAT16, buffer=t.buffer.astype(np.float16))
                    for t in case.inputs)
    out = dataclasses.replace(case.outputs[0], dtype=m.DataType.FLOAT16,
                              buffer=case.outputs[0].buffer.astype(np.float16))
    return dataclasses.replace(case, dtype=m.DataType.FLOAT16, inputs=tensors, outputs=(out,))


@settings(max_examples=30, deadline=None)
@given(k=st.integers(1, 200), seed=st.integers(0, 2 ** 32 - 1))
def test_float16_sums_are_within_the_bound_of_their_accumulator(k: int, seed: int) -> None:
    """FLOAT16 tensors: float32 sums in any order are within the float32
    accumulator's worst case; FLOAT16 sums within FLOAT16's where the
    backend declares them (`float16_accumulation`)."""
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-1, 1, (3, k)).astype(np.float16), rng.uniform(-1, 1, (k, 2)).astype(np.float16)
    case = _with_half_values(a, b)
    oracle = ContractionOracle.of(_spec())
    for acc, declared in ((np.float32, False), (np.float16, True)):
        exp = oracle.bind([case], flush_subnormals=False, float16_accumulation=declared).expect(0, 6)[0]
        got = _sums(a, b, rng.permutation(k), acc).astype(np.float16).reshape(-1)
        error = np.abs(got.astype(np.float64) - exp.expected.astype(np.float64))
        assert np.all(error <= exp.bound_relaxed), (acc, error, exp.bound_relaxed)
