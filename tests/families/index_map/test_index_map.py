"""The index-map family (issue #34 items 1-4, 7): GATHER, GATHER_ELEMENTS,
GATHER_ND, GATHER_ND1, SLICE, SLICE1 and TILE.  The oracle's coordinates against the numpy
reference over drawn shapes, the exact comparison (signed zero, NaN,
indices outside their dimension), the cases the issue asks for, the doc's
worked examples, and the CPU reference at 0 FAIL."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.compare import Policy, Verdict, compare_sparse
from dmlconform.families import cases_of, family_of
from dmlconform.families.index_map.cases import Call, case_problems, output_sizes, right_aligned
from dmlconform.families.index_map.oracle import IndexMapOracle, slice_map, source_map, tile_map
from dmlconform.families.index_map.reference import gather, sliced
from dmlconform.families.index_map.semantics import Operation
from dmlconform.families.index_map.slices import SliceCall
from dmlconform.lint.examples import findings
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

GATHERS = ("GATHER", "GATHER_ELEMENTS", "GATHER_ND", "GATHER_ND1")
OPERATORS = (*GATHERS, "SLICE", "SLICE1", "TILE")
INDEX_TYPES = (np.int32, np.int64, np.uint32, np.uint64)


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


@cache
def _cases(op: str, level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[Case, ...]:
    return tuple(cases_of(_spec(op), level, seed=0))


# -- the oracle's coordinates against the reference -------------------------------------------
@st.composite
def _calls(draw: st.DrawFn) -> tuple[Call, np.ndarray, np.ndarray, tuple[int, ...]]:
    """A call of one of the three operations, an input of integers 0..n-1
    (each element its own position) and in-range indices of a drawn type."""
    op = draw(st.sampled_from(list(Operation)), label="operation")
    rank = draw(st.integers(1, 5), label="rank")
    sizes = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank), label="sizes"))
    index_type = np.dtype(draw(st.sampled_from(INDEX_TYPES), label="index type"))
    signed = index_type.kind == "i"
    if op is Operation.GATHER:
        axis = draw(st.integers(0, rank - 1), label="axis")
        inner = tuple(draw(st.lists(st.integers(1, 3), max_size=1 if rank == 1 else 2), label="index sizes"))
        call = Call(op, axis=axis, index_dimensions=len(inner))
        idx_sizes = right_aligned(inner, max(rank, len(inner)))
        bound: int | tuple[int, ...] = sizes[axis]
        if len(idx_sizes) != rank:
            idx_sizes = inner
    elif op is Operation.GATHER_ELEMENTS:
        axis = draw(st.integers(0, rank - 1), label="axis")
        idx_sizes = tuple(draw(st.integers(1, 4), label="axis width") if d == axis else s for d, s in enumerate(sizes))
        call, bound = Call(op, axis=axis), sizes[axis]
    else:
        batch = draw(st.integers(0, rank - 1), label="batch")
        q = draw(st.integers(1, rank - batch), label="tuple size")
        middle = tuple(draw(st.lists(st.integers(1, 3), max_size=2), label="index sizes"))
        idx_sizes = sizes[:batch] + middle + (q,)
        call, bound = Call(op, input_rank=rank, indices_rank=len(idx_sizes), batch=batch), sizes[batch:batch + q]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    high = np.broadcast_to(np.array(bound), idx_sizes)
    values = np.floor(rng.random(idx_sizes) * (2 * high if signed else high)).astype(np.int64) - (high if signed else 0)
    x = np.arange(int(np.prod(sizes)), dtype=np.float64).reshape(sizes)
    return call, x, values.astype(index_type), idx_sizes


@settings(max_examples=300, deadline=None)
@given(_calls())
def test_the_index_map_is_the_reference_on_drawn_shapes(drawn: tuple[Call, np.ndarray, np.ndarray, tuple]) -> None:
    call, x, idx, _ = drawn
    natural = gather(call, x, idx)  # numpy's shape before right alignment
    rank = max(x.ndim, idx.ndim) if call.operation is Operation.GATHER else x.ndim
    try:
        sizes = output_sizes(call, x.shape, idx.shape, rank)
    except ValueError:
        sizes = natural.shape
    found = source_map(call, x.shape, idx, sizes)
    assert found.valid.all()
    assert np.array_equal(x.reshape(-1)[found.position], natural.reshape(sizes))


def test_an_index_outside_marks_only_its_element() -> None:
    x = np.arange(5.0)
    idx = np.array([0, 5, -1, -6, 4, 2 ** 32 + 1], dtype=np.int64)
    found = source_map(Call(Operation.GATHER, axis=0, index_dimensions=1), (5,), idx, (6,))
    assert found.valid.tolist() == [True, False, True, False, True, False]
    assert x[found.position][found.valid].tolist() == [0.0, 4.0, 4.0]
    unsigned = source_map(Call(Operation.GATHER, axis=0, index_dimensions=1), (5,),
                          np.array([4, 2 ** 32 - 1], dtype=np.uint32), (2,))
    assert unsigned.valid.tolist() == [True, False]  # never counted from the end


# -- the exact comparison ---------------------------------------------------------------------------
def _expectation(op: str, case_id: str) -> tuple[Case, object]:
    case = next(c for c in _cases(op) if c.id == case_id)
    (exp,) = IndexMapOracle.of(_spec(op)).bind([case], flush_subnormals=False).expect(0, 10 ** 7)
    return case, exp


def _verdict(exp: object, actual: np.ndarray) -> Verdict:
    policy = Policy(ulp=exp.ulp, signed_zero=exp.signed_zero)  # type: ignore[attr-defined]
    found = compare_sparse(exp.expected, actual, policy=policy, bound_strict=exp.bound_strict,  # type: ignore[attr-defined]
                           bound_relaxed=exp.bound_relaxed, alternatives=exp.alternatives)  # type: ignore[attr-defined]
    return Verdict(int(found.status.max())) if found.status.size else Verdict.PASS


def test_every_bit_pattern_must_move_unchanged() -> None:
    _, exp = _expectation("GATHER", "GATHER/FLOAT32/4d/axis=2/k=1/INT64/boundary/edges")
    expected = exp.expected  # type: ignore[attr-defined]
    assert exp.bound_strict is None and exp.ulp == 0 and exp.signed_zero  # type: ignore[attr-defined]
    assert _verdict(exp, expected.copy()) is Verdict.PASS
    zeros = np.flatnonzero(expected == 0)
    assert zeros.size and np.signbit(expected[zeros]).any()  # -0 among the values
    flipped = expected.copy()
    flipped[zeros] = -flipped[zeros]
    assert _verdict(exp, flipped) is Verdict.FAIL
    tiny = np.flatnonzero((expected != 0) & (np.abs(expected) < np.finfo(np.float32).tiny))
    assert tiny.size  # subnormals: flushed, they FAIL (the backend declares no flushing)
    flushed = expected.copy()
    flushed[tiny] = 0
    assert _verdict(exp, flushed) is Verdict.FAIL
    one_ulp = expected.copy()
    one_ulp[0] = np.nextafter(one_ulp[0], np.float32(np.inf))
    assert _verdict(exp, one_ulp) is Verdict.FAIL


def test_integers_compare_exactly_at_64_bits() -> None:
    _, exp = _expectation("GATHER", "GATHER/INT64/4d/axis=2/k=1/INT64/boundary/edges")
    expected = exp.expected  # type: ignore[attr-defined]
    big = np.flatnonzero(np.abs(expected.astype(np.float64)) > 2.0 ** 60)
    assert big.size
    off = expected.copy()
    off[big[0]] += 1  # the same float64: an exact comparison still sees it
    assert _verdict(exp, off) is Verdict.FAIL


def test_an_index_outside_its_dimension_expects_nothing_there_and_the_rest_exactly() -> None:
    case, exp = _expectation("GATHER", "GATHER/FLOAT32/4d/axis=2/k=1/INT64/out-of-range")
    expected = exp.expected  # type: ignore[attr-defined]
    bad = np.isinf(exp.bound_strict)  # type: ignore[attr-defined]
    assert bad.any() and (~bad).any() and case.expect_supported
    garbage = expected.copy()
    garbage[bad] = np.where(np.arange(bad.sum()) % 2, np.nan, 1e30)
    assert _verdict(exp, garbage) is Verdict.PASS
    wrong = garbage.copy()
    wrong[np.flatnonzero(~bad)[0]] *= -1
    assert _verdict(exp, wrong) is Verdict.FAIL
    silent = next(c for c in _cases("GATHER_ND") if c.id.endswith("/INT64/out-of-range"))
    assert not silent.expect_supported  # the page is silent: a clean rejection passes there


# -- the cases ---------------------------------------------------------------------------------------
def test_each_operator_is_claimed_and_generable_where_its_tables_are() -> None:
    for op in OPERATORS:
        family, reason = family_of(_spec(op))
        assert family is not None and family.name == "index-map" and reason == "ok"
    family, _ = family_of(_spec("GATHER_ND1"))
    assert family is not None and not family.generable(_spec("GATHER_ND1"), m.FeatureLevel.FL_2_1)[0]
    assert family.generable(_spec("GATHER"), m.FeatureLevel.FL_1_0) == (True, "ok")


def _suite_checks(op: str) -> tuple[tuple[Case, ...], list[str], m.SupportTable]:
    """What every operator's suite has: unique ids, every data type and
    dimension count of the 6_4 table (SLICE1's has none outside it: no
    negative case there), padded, permuted (the first
    dimension innermost) and stride-0 inputs, every case a call the page
    describes.  The cases, their ids and the table."""
    cases = _cases(op)
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    table = _spec(op).table_at(m.FeatureLevel.FL_6_4)
    assert table is not None
    assert {c.dtype for c in cases if c.expect_supported} == set(table.rows[0].dtypes)
    assert {c.dimension_count for c in cases} == set(range(1, 9))
    assert {c.layout.value for c in cases} >= {"packed", "padded", "broadcast"}
    assert any(0 in c.inputs[0].strides for c in cases)
    assert any(c.inputs[0].strides[0] < c.inputs[0].strides[-1] for c in cases)
    assert any("/example" in i for i in ids)
    for c in cases:
        assert list(case_problems(_spec(op), c)) == []
    return cases, ids, table


@pytest.mark.parametrize("op", GATHERS)
def test_the_suite_has_what_the_issue_asks_for(op: str) -> None:
    cases, ids, table = _suite_checks(op)
    index_types = next(r for r in table.rows if r.tensor == "IndicesTensor").dtypes
    assert {c.inputs[1].dtype for c in cases if c.expect_supported} == set(index_types)
    assert any("/out-of-range" in i for i in ids) and any(not c.expect_supported for c in cases)


def test_boundary_indices_are_there_for_each_signed_type() -> None:
    for op, size in (("GATHER", 5), ("GATHER_ELEMENTS", 5)):
        for t in (np.int32, np.int64):
            case = next(c for c in _cases(op) if c.inputs[1].dtype.name == np.dtype(t).name.upper()
                        and c.id.endswith("/boundary"))
            values = set(np.asarray(case.inputs[1].view()).reshape(-1).tolist())
            assert {0, size - 1, -1, -size} <= values, case.id


def test_out_of_range_cases_hold_64_bit_indices_beyond_32_bits() -> None:
    case = next(c for c in _cases("GATHER") if c.id.endswith("/UINT64/out-of-range"))
    values = np.asarray(case.inputs[1].view()).reshape(-1)
    assert (values == 2 ** 32 + 1).any() and (values == np.iinfo(np.uint64).max).any()


def test_values_depend_on_the_seed_and_the_id_alone() -> None:
    spec = _spec("GATHER")
    pick = "GATHER/FLOAT32/4d/axis=2/k=1/INT64/boundary/padded"
    alone = next(cases_of(spec, m.FeatureLevel.FL_6_4, seed=3, keep=lambda i, _: i == pick))
    among = next(c for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=3) if c.id == pick)
    for a, b in zip(alone.inputs, among.inputs):
        assert np.array_equal(a.buffer, b.buffer, equal_nan=True)


def test_a_case_of_other_output_sizes_is_a_problem() -> None:
    import dataclasses

    case = _cases("GATHER")[0]
    out = dataclasses.replace(case.outputs[0], sizes=(1, 2, 3, 4))
    assert list(case_problems(_spec("GATHER"), dataclasses.replace(case, outputs=(out,)))) == \
        [f"OutputTensor's sizes [1, 2, 3, 4] are not {list(case.outputs[0].sizes)}: give it those"]


# -- the doc's worked examples -------------------------------------------------------------------
def test_the_pages_examples_are_cases_and_their_mistakes_lint_findings() -> None:
    examples = {c.id: c for op in OPERATORS for c in _cases(op) if "/example" in c.id}
    assert len(examples) == 4 + 1 + 2 + 2 + 2 + 2 + 1  # GATHER's Example 3 breaks its own rules: no case
    assert not examples["GATHER/FLOAT32/1d/axis=0/k=1/UINT32/example/example1"].expect_supported
    gather_findings = [message for _, message in findings(_spec("GATHER"))]
    assert len(gather_findings) == 1 and gather_findings[0].startswith("example3 ") and \
        "IndexDimensions=2" in gather_findings[0]
    elements = [message for _, message in findings(_spec("GATHER_ELEMENTS"))]
    assert elements == [
        "example1 (operators/sdk-api/ns-directml-dml_gather_elements_operator_desc.md:83) prints the output's "
        "DataType UINT32, but it must be the input's, FLOAT32: the doc's type is wrong"]
    for op in ("GATHER_ND", "GATHER_ND1", "SLICE", "SLICE1", "TILE"):
        assert list(findings(_spec(op))) == [], op


def test_a_wrong_example_value_is_found() -> None:
    import dataclasses

    spec = _spec("GATHER_ND1")
    sem = spec.semantics
    bad = dataclasses.replace(sem.examples[1], output_values=(0, 3, 7, 4, 9, 11))  # type: ignore[union-attr]
    wrong = dataclasses.replace(spec, semantics=dataclasses.replace(sem, examples=(bad,)))  # type: ignore[type-var]
    (found,) = findings(wrong)
    assert found[0] == ("semantics", "examples", 1, "output") and "gives {0, 3, 7, 4, 9, 10}" in found[1]


# -- the CPU reference --------------------------------------------------------------------------------
@pytest.mark.parametrize("level", [m.FeatureLevel.FL_1_0, m.FeatureLevel.FL_2_1, m.FeatureLevel.FL_3_0,
                                   m.FeatureLevel.FL_6_4])
def test_the_reference_passes_every_case(level: m.FeatureLevel) -> None:
    family, _ = family_of(_spec("GATHER"))
    assert family is not None
    pairs = [(_spec(op), c) for op in OPERATORS if family.generable(_spec(op), level)[0] for c in _cases(op, level)]
    results = run_cases(pairs, CpuBackend())
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert pairs and not bad, "\n".join(bad[:5])


# -- slices --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["SLICE", "SLICE1", "TILE"])
def test_the_slice_and_tile_suites_have_what_the_issue_asks_for(op: str) -> None:
    cases, ids, _ = _suite_checks(op)
    if op == "SLICE1":
        assert {"reversed", "negative", "mixed", "partial", "unreached"} <= {i.split("/")[3] for i in ids}
    elif op == "TILE":
        assert {"mixed", "copy", "last", "first"} <= {i.split("/")[3] for i in ids}
        assert any(not c.expect_supported and c.dtype is m.DataType.FLOAT64 for c in cases)
    else:
        repeat = next(c for c in cases if c.id.endswith("/repeat"))
        assert repeat.out_of_domain == ("Strides",) and not repeat.expect_supported


def test_a_negative_stride_starts_at_the_windows_far_end() -> None:
    call = SliceCall(True, (0, 1), (6, 8), (-3, 2))
    found = slice_map(call, (7, 9), (2, 4))
    rows, cols = np.unravel_index(found.position, (7, 9))
    assert rows[:, 0].tolist() == [5, 2] and cols[0].tolist() == [1, 3, 5, 7]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_slice_map_is_numpys_slicing(data: st.DataObject) -> None:
    rank = data.draw(st.integers(1, 4), label="rank")
    sizes = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank), label="sizes"))
    offsets, counts, strides, out = [], [], [], []
    for size in sizes:
        offset = data.draw(st.integers(0, size - 1), label="offset")
        count = data.draw(st.integers(1, size - offset), label="window")
        stride = data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3]), label="stride")
        reach = 1 + (count - 1) // abs(stride)
        offsets.append(offset), counts.append(count), strides.append(stride)
        out.append(data.draw(st.integers(1, reach), label="output size"))
    call = SliceCall(True, tuple(offsets), tuple(counts), tuple(strides))
    x = np.arange(int(np.prod(sizes)), dtype=np.float64).reshape(sizes)
    found = slice_map(call, sizes, tuple(out))
    assert np.array_equal(x.reshape(-1)[found.position], sliced(call, x, tuple(out)))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 3)), min_size=1, max_size=5))
def test_the_tile_map_is_numpys_tile(dims: list[tuple[int, int]]) -> None:
    sizes = tuple(n for n, _ in dims)
    repeats = tuple(r for _, r in dims)
    x = np.arange(int(np.prod(sizes)), dtype=np.float64).reshape(sizes)
    found = tile_map(sizes, tuple(n * r for n, r in dims))
    assert np.array_equal(x.reshape(-1)[found.position], np.tile(x, repeats))
