"""The sequence family (issue #24 items 2-4, 7): TOP_K, TOP_K1,
CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT.  The cases, the doc's worked
examples reproduced, the oracle's order and bounds against plain
implementations, the readings a backend takes, and the CPU reference
passing every case with 0 FAIL."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, writable_view
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of, family_of
from dmlconform.families.sequence.cases import attributes_of, placed, sequences
from dmlconform.families.sequence.oracle import Order, SequenceOracle, scan, select
from dmlconform.report.readings import summarize
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

OPERATORS = ("TOP_K", "TOP_K1", "CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT")


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


@cache
def _cases(op: str, level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[Case, ...]:
    return tuple(cases_of(_spec(op), level, seed=0))


def _expected(op: str, case_id: str) -> list[list[float]]:
    case = next(c for c in _cases(op) if c.id == case_id)
    found = SequenceOracle.of(_spec(op)).bind([case], flush_subnormals=False).expect(0, 10 ** 6)
    return [e.expected.reshape(t.sizes)[0, 0].tolist() for e, t in zip(found, case.outputs)]


def test_each_operator_is_claimed_and_generable_where_its_tables_are() -> None:
    for op in OPERATORS:
        family, reason = family_of(_spec(op))
        assert family is not None and family.name == "sequence" and reason == "ok"
        assert family.generable(_spec(op), m.FeatureLevel.FL_1_0) == \
            (False, f"{op}: no cases at 1_0: no support table or dimension count there")
    family, _ = family_of(_spec("CUMULATIVE_PRODUCT"))
    assert family is not None and not family.generable(_spec("CUMULATIVE_PRODUCT"), m.FeatureLevel.FL_2_1)[0]


def test_the_suite_has_what_the_issue_asks_for() -> None:
    ids = {op: [c.id for c in _cases(op)] for op in OPERATORS}
    assert all(len(set(v)) == len(v) for v in ids.values())
    top1 = ids["TOP_K1"]
    assert {f"TOP_K1/FLOAT32/4d/axis=3/n={n}/k=1/decreasing/random" for n in (2, 7, 33, 257, 1000)} <= set(top1)
    assert "TOP_K1/FLOAT32/4d/axis=3/n=1000/k=999/decreasing/random" in top1
    assert {f"TOP_K1/{t}/4d/axis=3/n=33/k=5/increasing/ties" for t in ("FLOAT16", "INT8", "UINT64")} <= set(top1)
    assert {f"TOP_K1/FLOAT32/{r}d/axis={r // 2}/n=33/k=5/decreasing/random" for r in (1, 2, 3, 5, 6, 7, 8)} <= set(top1)
    k_size = next(c for c in _cases("TOP_K1") if c.id == "TOP_K1/FLOAT32/4d/axis=3/n=7/k=7/decreasing/random")
    assert not k_size.expect_supported and k_size.out_of_domain == ("K",)
    total = set(ids["CUMULATIVE_SUMMATION"])
    assert {f"CUMULATIVE_SUMMATION/INT64/4d/axis=3/n=7/{d}/{x}/exact" for d in ("increasing", "decreasing")
            for x in ("inclusive", "exclusive")} <= total
    assert "CUMULATIVE_SUMMATION/UINT32/4d/axis=3/n=33/decreasing/exclusive/overflow" in total
    in_place = [c for c in _cases("CUMULATIVE_PRODUCT") if "in-place" in c.id]
    assert len(in_place) == 2 and all(c.aliases == (("OutputTensor", "InputTensor"),) for c in in_place)


def test_cases_are_reproducible_and_keep_draws_only_what_it_keeps() -> None:
    again = list(cases_of(_spec("TOP_K"), m.FeatureLevel.FL_6_4, seed=0, keep=lambda i, _: i.endswith("/nan")))
    first = {c.id: c for c in _cases("TOP_K")}
    assert again and all(np.array_equal(c.inputs[0].buffer, first[c.id].inputs[0].buffer, equal_nan=True)
                         for c in again)
    other = {c.id: c for c in cases_of(_spec("TOP_K"), m.FeatureLevel.FL_6_4, seed=1)}
    assert not np.array_equal(other[again[0].id].inputs[0].buffer, again[0].inputs[0].buffer, equal_nan=True)


@pytest.mark.parametrize(("op", "case_id", "outputs"), [
    # TOP_K1 page, Examples 1-4 (Example 3: ties, the lower index first and selected)
    ("TOP_K1", "TOP_K1/FLOAT32/4d/axis=3/n=4/k=2/decreasing/example1",
     [[[11, 10], [9, 8], [7, 6]], [[3, 2], [2, 3], [3, 2]]]),
    ("TOP_K1", "TOP_K1/FLOAT32/4d/axis=2/n=3/k=2/decreasing/example2",
     [[[4, 5, 10, 11], [3, 2, 9, 8]], [[2, 2, 0, 0], [1, 1, 1, 1]]]),
    ("TOP_K", "TOP_K/FLOAT32/4d/axis=3/n=4/k=3/example3",
     [[[3, 2, 2], [5, 5, 4], [6, 6, 6]], [[3, 1, 2], [2, 3, 1], [0, 1, 2]]]),
    ("TOP_K1", "TOP_K1/FLOAT32/4d/axis=3/n=4/k=3/increasing/example4",
     [[[1, 2, 2], [3, 4, 5], [6, 6, 6]], [[0, 1, 2], [0, 1, 2], [0, 1, 2]]]),
    # CUMULATIVE_SUMMATION page, Examples 1-4
    ("CUMULATIVE_SUMMATION", "CUMULATIVE_SUMMATION/FLOAT32/4d/axis=3/n=4/increasing/inclusive/example1",
     [[[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]]]),
    ("CUMULATIVE_SUMMATION", "CUMULATIVE_SUMMATION/FLOAT32/4d/axis=3/n=4/increasing/exclusive/example2",
     [[[0, 2, 3, 6], [0, 3, 11, 18], [0, 9, 15, 17]]]),
    ("CUMULATIVE_SUMMATION", "CUMULATIVE_SUMMATION/FLOAT32/4d/axis=3/n=4/decreasing/inclusive/example3",
     [[[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]]]),
    ("CUMULATIVE_SUMMATION", "CUMULATIVE_SUMMATION/FLOAT32/4d/axis=2/n=3/increasing/inclusive/example4",
     [[[2, 1, 3, 5], [5, 9, 10, 8], [14, 15, 12, 12]]]),
    # CUMULATIVE_PRODUCT page, Examples 1-4
    ("CUMULATIVE_PRODUCT", "CUMULATIVE_PRODUCT/FLOAT32/4d/axis=3/n=4/increasing/exclusive/example2",
     [[[1, 2, 2, 6], [1, 3, 24, 168], [1, 9, 54, 108]]]),
    ("CUMULATIVE_PRODUCT", "CUMULATIVE_PRODUCT/FLOAT32/4d/axis=3/n=4/decreasing/inclusive/example3",
     [[[30, 15, 15, 5], [504, 168, 21, 3], [432, 48, 8, 4]]]),
    ("CUMULATIVE_PRODUCT", "CUMULATIVE_PRODUCT/FLOAT32/4d/axis=2/n=3/increasing/inclusive/example4",
     [[[2, 1, 3, 5], [6, 8, 21, 15], [54, 48, 42, 60]]]),
])
def test_the_docs_worked_examples_are_reproduced(op: str, case_id: str, outputs: list[list[list[int]]]) -> None:
    assert _expected(op, case_id) == outputs


@pytest.mark.parametrize("op", OPERATORS)
def test_the_cpu_reference_passes_every_case(op: str) -> None:
    results = run_cases([(_spec(op), c) for c in _cases(op)], CpuBackend())
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert not bad, "\n".join(bad[:10])
    assert sum(r.outcome is Outcome.NOT_SUPPORTED for r in results) == (2 if op.startswith("TOP") else 1)


def test_the_cpu_reference_passes_at_the_first_level_of_each_table() -> None:
    for op, level in (("TOP_K", m.FeatureLevel.FL_2_0), ("TOP_K1", m.FeatureLevel.FL_2_1),
                      ("CUMULATIVE_SUMMATION", m.FeatureLevel.FL_2_1), ("CUMULATIVE_PRODUCT", m.FeatureLevel.FL_3_1)):
        cases = _cases(op, level)
        assert cases and all(c.dimension_count == 4 for c in cases if c.expect_supported)
        results = run_cases([(_spec(op), c) for c in cases], CpuBackend(feature_level=level.short))
        assert all(r.outcome in (Outcome.PASS, Outcome.NOT_SUPPORTED) for r in results), op


def _plain_top_k(row: list[float], k: int, *, increasing: bool, order: Order) -> list[int]:
    """The indices of the top k of one sequence by Python's sort on (rank, index): the reference order."""
    def rank(i: int) -> tuple[float, int]:
        v = row[i]
        if v != v:
            return (np.inf if order.nan_largest else -np.inf, 1 if order.nan_largest else -1)
        zero_rank = int(v == 0 and not np.signbit(v)) if order.zero_total_order else 0
        return (v, zero_rank)
    if increasing:
        return sorted(range(len(row)), key=lambda i: (rank(i)[0], rank(i)[1], i))[:k]
    return sorted(range(len(row)), key=lambda i: (-rank(i)[0], -rank(i)[1], i))[:k]


_VALUES = st.sampled_from([-0.0, 0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan])


@settings(max_examples=150, deadline=None)
@given(row=st.lists(_VALUES, min_size=1, max_size=12), data=st.data(), increasing=st.booleans(),
       nan_largest=st.booleans(), zero_total_order=st.booleans())
def test_select_ranks_as_a_plain_sort_with_ties_by_ascending_index(row: list[float], data: st.DataObject,
                                                                    increasing: bool, nan_largest: bool,
                                                                    zero_total_order: bool) -> None:
    k = data.draw(st.integers(1, len(row)), label="k")
    order = Order(nan_largest, zero_total_order)
    values, index = select(np.array([row], np.float32), k, increasing=increasing, order=order)
    assert index[0].tolist() == _plain_top_k(row, k, increasing=increasing, order=order)
    assert np.array_equal(values[0], np.array(row, np.float32)[index[0]], equal_nan=True)


def _pairwise(x: np.ndarray) -> np.float32:
    """A sum as a balanced tree in float32 (a parallel scan's order)."""
    if x.size == 1:
        return np.float32(x[0])
    half = x.size // 2
    return np.float32(_pairwise(x[:half]) + _pairwise(x[half:]))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 200), seed=st.integers(0, 2 ** 32 - 1), scale=st.sampled_from([1.0, 2.0 ** 20, 2.0 ** -20]))
def test_any_summation_order_is_within_the_worst_case_bound(n: int, seed: int, scale: float) -> None:
    """Higham's bound holds for every prefix summed forward, backward or as a tree in float32."""
    rng = np.random.default_rng(seed)
    x = (rng.uniform(-1, 1, (1, n)) * scale).astype(np.float32)
    case = _with_input("CUMULATIVE_SUMMATION", "CUMULATIVE_SUMMATION/FLOAT32/4d/axis=3/n=33/increasing/inclusive/random", x)
    exp = SequenceOracle.of(_spec("CUMULATIVE_SUMMATION")).bind([case], flush_subnormals=False).expect(0, n)[0]
    assert exp.bound_relaxed is not None
    for i in range(n):
        prefix = x[0, :i + 1]
        for got in (np.cumsum(prefix, dtype=np.float32)[-1], np.cumsum(prefix[::-1], dtype=np.float32)[-1],
                    _pairwise(prefix)):
            assert abs(float(got) - float(exp.expected[i])) <= exp.bound_relaxed[i], (i, got, exp.expected[i])


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 2 ** 32 - 1))
def test_a_float16_product_in_float32_is_within_the_bound(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (np.where(rng.random((1, n)) < 0.5, -1, 1) * 2.0 ** rng.uniform(-0.25, 0.25, (1, n))).astype(np.float16)
    case = _with_input("CUMULATIVE_PRODUCT", "CUMULATIVE_PRODUCT/FLOAT16/4d/axis=3/n=33/increasing/inclusive/random", x)
    exp = SequenceOracle.of(_spec("CUMULATIVE_PRODUCT")).bind([case], flush_subnormals=False).expect(0, n)[0]
    assert exp.bound_strict is not None and exp.bound_relaxed is not None
    got = np.cumprod(x[0].astype(np.float32), dtype=np.float32).astype(np.float16)
    assert np.all(np.abs(got.astype(np.float64) - exp.expected.astype(np.float64)) <= exp.bound_strict)


def _with_input(op: str, case_id: str, x: np.ndarray) -> Case:
    """The suite's case ``case_id`` with ``x`` (1 x n) as its input, 2-D, along axis 1."""
    base = next(c for c in _cases(op) if c.id == case_id)
    tensor = dataclasses.replace(base.inputs[0], sizes=x.shape, strides=(x.shape[1], 1), buffer=x.reshape(-1))
    out = dataclasses.replace(base.outputs[0], sizes=x.shape, strides=(x.shape[1], 1), buffer=np.zeros(x.size, x.dtype))
    attrs = tuple((n, 1 if n == "Axis" else v) for n, v in base.attributes)
    return dataclasses.replace(base, inputs=(tensor,), outputs=(out,), attributes=attrs)


def test_exact_cases_allow_no_error_at_all() -> None:
    for op in ("CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"):
        for case in (c for c in _cases(op) if c.id.endswith("/exact") and c.dtype.is_float):
            exp = SequenceOracle.of(_spec(op)).bind([case], flush_subnormals=False).expect(0, 10 ** 6)[0]
            assert exp.bound_strict is not None and not exp.bound_strict.any(), case.id


def test_a_scan_failure_shows_its_term_count_and_magnitude() -> None:
    case = next(c for c in _cases("CUMULATIVE_SUMMATION") if c.id.endswith("n=4/increasing/inclusive/example1"))
    batch = SequenceOracle.of(_spec("CUMULATIVE_SUMMATION")).bind([case], flush_subnormals=False)
    assert batch.inputs_at(0, np.array([3, 4])) == (("n", [4.0, 1.0]), ("S", [11.0, 3.0]))


class _Reading(CpuBackend):
    """The CPU reference, but top-k ranks by ``order`` and integer tallies saturate at each step."""

    def __init__(self, order: Order) -> None:
        super().__init__()
        self.order = order

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        super().run(spec, case, buffers)
        sem = spec.semantics
        if sem is None or sem.operation.value != "top-k":  # type: ignore[attr-defined]
            from dmlconform.families.sequence.oracle import saturating
            a = attributes_of(sem, case)  # type: ignore[arg-type]
            x = sequences(sem, case, dict(buffers))  # type: ignore[arg-type]
            if x.dtype.kind in "iu":
                tally = saturating(x, product=sem.operation.value == "cumulative-product",  # type: ignore[union-attr]
                                   increasing=a.increasing, exclusive=a.exclusive)
                writable_view(case.outputs[0], buffers[case.outputs[0].name])[...] = placed(sem, case, tally)  # type: ignore[arg-type]
            return
        a = attributes_of(sem, case)  # type: ignore[arg-type]
        x = sequences(sem, case, dict(buffers))  # type: ignore[arg-type]
        values, index = select(x, a.k, increasing=a.increasing, order=self.order)
        for out, v in zip(case.outputs, (values, index)):
            writable_view(out, buffers[out.name])[...] = placed(sem, case, v)  # type: ignore[arg-type]


@pytest.mark.parametrize(("op", "order", "want"), [
    ("TOP_K1", Order(nan_largest=False), {"nan-order": "took smallest", "signed-zero-order": "took primary"}),
    ("TOP_K", Order(zero_total_order=True), {"nan-order": "took primary", "signed-zero-order": "took total-order"}),
    ("TOP_K", Order(), {"nan-order": "took primary", "signed-zero-order": "took primary"}),
    ("CUMULATIVE_SUMMATION", Order(), {"integer-overflow": "took saturate"}),
    ("CUMULATIVE_PRODUCT", Order(), {"integer-overflow": "took saturate"}),
])
def test_a_backend_that_takes_another_reading_passes_and_is_named(op: str, order: Order,
                                                                   want: dict[str, str]) -> None:
    results = run_cases([(_spec(op), c) for c in _cases(op)], _Reading(order))
    assert all(r.outcome in (Outcome.PASS, Outcome.NOT_SUPPORTED) for r in results), \
        [f"{r.case_id} {r.message}" for r in results if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)][:3]
    assert {t.ambiguity: t.status for t in summarize(results)} == want


def test_scan_tallies_are_exact_integers_wrapping_as_twos_complement() -> None:
    x = np.array([[2 ** 31 - 1, 1, -5]], np.int32)
    assert scan(x, product=False, increasing=True, exclusive=False).tally.tolist() == [[2 ** 31 - 1, -2 ** 31,
                                                                                          2 ** 31 - 5]]
