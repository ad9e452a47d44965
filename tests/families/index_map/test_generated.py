"""The index-map family's generated operations (issue #34): CAST, the fills,
the diagonals and RANDOM_GENERATOR: the oracle's conversions and Philox,
the readings told apart, the reference at 0 FAIL, each planted fault caught
by name, the pages' examples."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.index_map import generated_reference, philox
from dmlconform.families.index_map.cases import case_problems, generable
from dmlconform.families.index_map.conversions import readings, to_float, to_integer_exact
from dmlconform.families.index_map.generated_faults import FAULTS
from dmlconform.families.index_map.generated_oracle import expected_of, span_mask
from dmlconform.lint.examples import findings
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from dmlconform.spec.model import DataType as D
from tests.conftest import REPO

OPERATORS = ("CAST", "FILL_VALUE_CONSTANT", "FILL_VALUE_SEQUENCE", "DIAGONAL_MATRIX", "DIAGONAL_MATRIX1",
             "RANDOM_GENERATOR")
TYPES = (D.FLOAT64, D.FLOAT32, D.FLOAT16, D.INT64, D.INT32, D.INT16, D.INT8, D.UINT64, D.UINT32, D.UINT16, D.UINT8)


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


@cache
def _suite(level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[tuple[m.Spec, Case], ...]:
    return tuple((_spec(op), c) for op in OPERATORS if generable(_spec(op), level)[0]
                 for c in cases_of(_spec(op), level, seed=0))


# -- conversions ---------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=True, width=64), min_size=1, max_size=64))
def test_a_float_is_rounded_once_to_nearest_even(values: list[float]) -> None:
    x = np.array(values)
    with np.errstate(over="ignore"):
        for target, nt in ((D.FLOAT16, np.float16), (D.FLOAT32, np.float32)):
            got, want = to_float(x, target), x.astype(nt)  # numpy's casts round once, ties to even
            assert np.array_equal(got.view(f"u{nt().itemsize}"), want.view(f"u{nt().itemsize}"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), min_size=1, max_size=64))
def test_a_64_bit_integer_is_rounded_once_into_float32(values: list[int]) -> None:
    x = np.array(values, dtype=np.int64)
    assert np.array_equal(to_float(x, D.FLOAT32), x.astype(np.float32))
    assert np.array_equal(to_float(x, D.FLOAT64), x.astype(np.float64))


def test_each_float_reading_has_its_own_value_where_they_differ() -> None:
    x = np.array([65519.0, 65520.0, np.inf, 2051.0, -70000.0])
    primary, others = readings(x, D.FLOAT64, D.FLOAT16)
    assert primary.tolist() == [65504.0, np.inf, np.inf, 2052.0, -np.inf]
    assert others["float-overflow:saturate"].tolist() == [65504.0, 65504.0, np.inf, 2052.0, -65504.0]
    assert others["float-rounding:toward-zero"].tolist() == [65504.0, 65504.0, np.inf, 2050.0, -65504.0]
    v = np.array([2 ** 60 + 2 ** 36 + 1], dtype=np.int64)  # a tie only once float64 dropped the +1
    primary, others = readings(v, D.INT64, D.FLOAT32)
    assert float(primary[0]) == 2.0 ** 60 + 2.0 ** 37 and float(others["float-rounding:through-float64"][0]) == 2.0 ** 60


def test_a_float_into_an_integer_truncates_and_out_of_range_takes_the_readings() -> None:
    x = np.array([2.5, -2.5, 3.7, -3.7, 300.0, np.nan, -1.0], dtype=np.float32)
    primary, others = readings(x, D.FLOAT32, D.UINT8)
    assert primary.tolist() == [2, 254, 3, 253, 44, 0, 255]  # truncated, then modulo 256
    assert others["integer-overflow:saturate"].tolist() == [2, 0, 3, 0, 255, 0, 0]
    assert any(k.startswith("float-to-integer-conversion:") for k in others)


def test_integer_narrowing_wraps_or_saturates() -> None:
    x = np.array([300, -129, 127, -2 ** 31], dtype=np.int32)
    assert to_integer_exact(x, D.INT8, m.Overflow.WRAP).tolist() == [44, 127, 127, 0]
    assert to_integer_exact(x, D.INT8, m.Overflow.SATURATE).tolist() == [127, -128, 127, -128]
    u = np.array([2 ** 64 - 1], dtype=np.uint64)
    assert to_integer_exact(u, D.INT64, m.Overflow.SATURATE).tolist() == [2 ** 63 - 1]
    # Into UINT64 the bounds are no int64 (numpy 2.5 raises OverflowError on a bare 2^64 - 1).
    s = np.array([-5, 2 ** 63 - 1, 7], dtype=np.int64)
    saturated = to_integer_exact(s, D.UINT64, m.Overflow.SATURATE)
    assert saturated.dtype == np.uint64 and saturated.tolist() == [0, 2 ** 63 - 1, 7]
    assert to_integer_exact(u, D.UINT64, m.Overflow.SATURATE).tolist() == [2 ** 64 - 1]


# -- Philox ----------------------------------------------------------------------------------------
#: Random123's known-answer vectors of philox4x32_10: (counter, key, output).
KAT = (((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
       ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
       ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)))


@pytest.mark.parametrize("ctr, key, want", KAT)
def test_both_philox_give_the_known_answers(ctr: tuple[int, ...], key: tuple[int, int], want: tuple[int, ...]) -> None:
    counters = np.array([ctr], dtype=np.uint32)
    assert philox.blocks(counters, key)[0].tolist() == list(want)
    assert generated_reference.philox4x32_10(counters, np.array(key, dtype=np.uint32))[0].tolist() == list(want)


def test_the_counter_carries_across_128_bits_and_advances_by_a_quarter() -> None:
    state = (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 7, 9)
    assert philox.next_state(state, 9).tolist() == [2, 0, 0, 0, 7, 9]  # ceil(9 / 4) = 3 past 2^128 - 1
    words = philox.bits(state, 8)
    first = philox.blocks(np.array([state[:4], (0, 0, 0, 0)], dtype=np.uint32), (7, 9)).reshape(-1)
    assert words.tolist() == first.tolist()


def test_the_pages_counter_example_subtracts_where_it_says_add() -> None:
    counter = 0x48656C6C_6F46726F_6D536561_74746C65
    step = -(-(3 * 3 * 20 * 7219) // 4)
    assert step == 324855
    assert (counter + step) & 0xFFFFFFFF == 0x7479615C and (counter - step) & 0xFFFFFFFF == 0x746F776E


def test_the_random_readings_differ_on_every_block_after_the_first() -> None:
    spec = _spec("RANDOM_GENERATOR")
    case = next(c for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0) if "carry32/state" in c.id)
    (values, others), (state, state_others) = expected_of(spec.semantics, case)  # type: ignore[arg-type]
    for key in ("counter-order:high-first", "output-layout:word-planes"):
        assert not np.array_equal(others[key][4:], values[4:])
    assert not np.array_equal(state_others["counter-order:high-first"], state)


# -- the suite -------------------------------------------------------------------------------------
def test_cast_covers_every_pair_of_the_eleven_types_and_every_dimension_count() -> None:
    ids = [c.id for s, c in _suite() if s.operator == "CAST"]
    assert {(i.split("/")[1], i.split("/")[3]) for i in ids if "/4d/" in i} == \
        {(a.name, f"to={b.name}") for a in TYPES for b in TYPES}
    assert {i.split("/")[2] for i in ids} == {f"{r}d" for r in range(1, 9)}
    assert any(i.endswith("/broadcast") for i in ids) and any(i.endswith("/permuted") for i in ids)


def test_a_cast_input_holds_the_edge_values_and_values_past_the_target() -> None:
    case = next(c for s, c in _suite() if c.id == "CAST/FLOAT32/4d/to=INT8")
    x = np.asarray(case.inputs[0].view()).reshape(-1)
    for v in (0.0, 1.0, -1.0, np.inf, -np.inf, 128.0, -129.0, 2.5, np.finfo(np.float32).smallest_subnormal):
        assert (x == np.float32(v)).any(), v
    assert np.isnan(x).any() and np.signbit(x[x == 0]).any()


@pytest.mark.parametrize("level", [m.FeatureLevel.FL_6_4, m.FeatureLevel.FL_4_0])
def test_the_reference_passes_every_case(level: m.FeatureLevel) -> None:
    pairs = [p for p in _suite(level)]
    results = run_cases(list(pairs), CpuBackend())
    bad = [(r.case_id, r.message) for r in results if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert not bad, bad[:3]
    assert sum(r.outcome is Outcome.PASS for r in results) > 0.9 * len(results)


#: Fault -> the operator it must be caught on.
WHERE = {"cast-rounds-to-nearest": "CAST", "cast-float16-infinity-clamped": "CAST",
         "random-counter-advanced-per-element": "RANDOM_GENERATOR", "diagonal-offset-off-by-one": "DIAGONAL_MATRIX",
         "diagonal-span-off-by-one": "DIAGONAL_MATRIX1"}


@pytest.mark.parametrize("fault", sorted(WHERE))
def test_each_fault_is_caught_by_name_on_its_operator_alone(fault: str) -> None:
    assert sorted(WHERE) == sorted(FAULTS)
    failed = {r.case_id.split("/")[0] for r in run_cases(list(_suite()), FaultyBackend(fault))
              if r.outcome is Outcome.FAIL}
    assert failed == {WHERE[fault]}


def test_a_cast_rounding_to_nearest_fails_on_every_float_to_integer_pair() -> None:
    pairs = [p for p in _suite() if p[0].operator == "CAST" and "/4d/" in p[1].id and p[1].id.count("/") == 3]
    failed = {r.case_id for r in run_cases(pairs, FaultyBackend("cast-rounds-to-nearest")) if r.outcome is Outcome.FAIL}
    floats = {f"CAST/{a.name}/4d/to={b.name}" for a in TYPES if a.is_float for b in TYPES if not b.is_float}
    assert failed == floats


def test_the_sequence_readings_differ_where_the_cases_say() -> None:
    spec = _spec("FILL_VALUE_SEQUENCE")
    cases = {c.id: c for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0)}
    ((exact, others),) = expected_of(spec.semantics, cases["FILL_VALUE_SEQUENCE/FLOAT32/4d/start=1,delta=0.1"])  # type: ignore[arg-type]
    for reading in ("multiply-add", "accumulated"):
        assert not np.array_equal(others[f"sequence-precision:{reading}"], exact), reading
    ((exact, others),) = expected_of(spec.semantics, cases["FILL_VALUE_SEQUENCE/FLOAT32/4d/start=16777216,delta=1"])  # type: ignore[arg-type]
    assert exact[2] == 16777218 and others["sequence-precision:accumulated"][2] == 16777216
    ((wrapped, others),) = expected_of(spec.semantics, cases["FILL_VALUE_SEQUENCE/INT8/4d/start=max,delta=1"])  # type: ignore[arg-type]
    assert wrapped[:2].tolist() == [127, -128] and others["integer-overflow:saturate"][:2].tolist() == [127, 127]


def test_diagonal_matrix_is_diagonal_matrix1_from_offset_to_offset_plus_one() -> None:
    for offset in (-3, -1, 0, 1, 4):
        a, b = span_mask((2, 3, 4), offset, offset + 1), np.eye(3, 4, k=offset, dtype=bool)
        assert np.array_equal(a, np.broadcast_to(b, (2, 3, 4)))
    assert not span_mask((3, 4), 2, 2).any() and span_mask((3, 4), 1, 0).sum() == 12 - 3


def test_the_pages_examples_are_cases_and_only_the_wrong_one_a_finding() -> None:
    found = [(op, message) for op in OPERATORS for _, message in findings(_spec(op))]
    assert [(op, message.split(" ")[0]) for op, message in found] == [("DIAGONAL_MATRIX1", "example1")]
    assert "Value=7" in found[0][1] and "prints {1, 0" in found[0][1]
    ids = [c.id for s, c in _suite() if "/example" in c.id]
    assert "FILL_VALUE_SEQUENCE/UINT8/4d/example2" in ids and "DIAGONAL_MATRIX/FLOAT32/4d/example4" in ids


def test_a_value_type_other_than_the_outputs_and_unequal_cast_sizes_are_problems() -> None:
    spec = _spec("FILL_VALUE_CONSTANT")
    case = next(c for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is D.INT32)
    wrong = dataclasses.replace(case, attributes=tuple((n, "DML_TENSOR_DATA_TYPE_FLOAT32" if n == "ValueDataType"
                                                        else v) for n, v in case.attributes))
    assert not list(case_problems(spec, case)) and "must match" in " ".join(case_problems(spec, wrong))
    cast = _spec("CAST")
    c = next(iter(cases_of(cast, m.FeatureLevel.FL_6_4, seed=0)))
    other = dataclasses.replace(c, outputs=(dataclasses.replace(c.outputs[0], sizes=(1, 2, 3, 4)),))
    assert "same sizes" in " ".join(case_problems(cast, other))


def test_a_flushing_backend_may_read_a_subnormal_input_as_zero_and_no_other_may() -> None:
    from dmlconform.families.index_map.oracle import IndexMapOracle

    spec = _spec("CAST")
    case = next(c for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0) if c.id == "CAST/FLOAT32/4d/to=FLOAT64")
    x = np.asarray(case.inputs[0].view()).reshape(-1)
    flushing = IndexMapOracle.of(spec).bind([case], flush_subnormals=True).expect(0, x.size)[0]
    (alt,) = flushing.alternatives
    assert np.array_equal(alt.index, np.flatnonzero((x != 0) & (np.abs(x) < np.finfo(np.float32).smallest_normal)))
    assert np.all(alt.values == 0) and np.array_equal(np.signbit(alt.values), np.signbit(x[alt.index]))
    assert not IndexMapOracle.of(spec).bind([case], flush_subnormals=False).expect(0, x.size)[0].alternatives
