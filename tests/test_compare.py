"""ULP distance and the comparator (DESIGN.md, "Comparison, verdicts and reports")."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.compare import (
    Alternative,
    Policy,
    Tier,
    Verdict,
    compare,
    compare_sparse,
    finfo,
    nan_mask,
    ordered_bits,
    ulp_distance,
)
from dmlconform.errors import InputError

FLOATS = [np.float16, np.float32, np.float64, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]


def _bits_of(dtype: type) -> st.SearchStrategy[np.ndarray]:
    """Arrays of any bit patterns of ``dtype`` (NaNs, infinities, subnormals, -0)."""
    n = np.dtype(dtype).itemsize
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[n]
    return st.lists(st.integers(0, 2 ** (8 * n) - 1), min_size=1, max_size=20).map(
        lambda xs: np.asarray(xs, dtype=unsigned).view(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_adjacent_values_are_one_ulp_apart(dtype: type) -> None:
    info = finfo(dtype)
    values = np.asarray([0.0, float(info.smallest_subnormal), 1.0, float(info.max), -1.0], dtype=np.float64).astype(dtype)
    up = np.asarray([float(info.smallest_subnormal), 2 * float(info.smallest_subnormal),
                     1.0 + float(info.eps), np.inf, -1.0 + float(info.epsneg)]).astype(dtype)
    if not np.isinf(up[3].astype(np.float64)):  # types without infinity (float8_e4m3fn): max has no successor
        up[3] = values[3]
        values = values.copy()
    got = ulp_distance(values, up)
    assert list(got[[0, 1, 2, 4]]) == [1, 1, 1, 1]


@pytest.mark.parametrize("dtype", FLOATS)
def test_zero_signs(dtype: type) -> None:
    zeros = np.asarray([0.0, -0.0], dtype=np.float64).astype(dtype)
    assert ulp_distance(zeros[:1], zeros[1:])[0] == 0
    assert ulp_distance(zeros[:1], zeros[1:], signed_zero=True)[0] == 1
    tiny = float(finfo(dtype).smallest_subnormal)
    pair = np.asarray([tiny, -tiny]).astype(dtype)
    assert ulp_distance(pair[:1], pair[1:])[0] == 2
    assert ulp_distance(pair[:1], pair[1:], signed_zero=True)[0] == 3


def test_any_nan_matches_any_nan() -> None:
    nans = np.asarray([0x7FC00000, 0xFFC00001, 0x7F800001], dtype=np.uint32).view(np.float32)
    assert list(ulp_distance(nans, nans[::-1])) == [0, 0, 0]
    number = np.float32([1.0, 1.0, 1.0])
    assert set(ulp_distance(nans, number).tolist()) == {2 ** 64 - 1}


def test_extreme_distance_does_not_overflow() -> None:
    a, b = np.asarray([-np.inf]), np.asarray([np.inf])
    assert int(ulp_distance(a, b)[0]) == 2 * 0x7FF0000000000000


def test_integers_are_plain_differences() -> None:
    a = np.asarray([0, 2 ** 64 - 1], dtype=np.uint64)
    b = np.asarray([2 ** 64 - 1, 0], dtype=np.uint64)
    assert ulp_distance(a, b).tolist() == [2 ** 64 - 1] * 2
    c = np.asarray([-128, 127], dtype=np.int8)
    assert ulp_distance(c, c[::-1]).tolist() == [255, 255]


def test_mixed_dtypes_are_refused() -> None:
    with pytest.raises(InputError, match="dtypes differ: a is float32, b is float16"):
        ulp_distance(np.float32([1]), np.float16([1]))


@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_distance_is_a_metric_on_the_ordering(dtype: type, data: st.DataObject) -> None:
    a = data.draw(_bits_of(dtype), label="a")
    b = data.draw(_bits_of(dtype).filter(lambda x: True), label="b")
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    d = ulp_distance(a, b)
    assert np.array_equal(d, ulp_distance(b, a))
    with np.errstate(invalid="ignore"):  # a cast of a bfloat16 signalling NaN warns
        finite = ~np.isnan(a.astype(np.float64)) & ~np.isnan(b.astype(np.float64))
        same = a.astype(np.float64) == b.astype(np.float64)
    assert np.array_equal(d[finite] == 0, same[finite])
    ka, kb = ordered_bits(a), ordered_bits(b)
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity: masked out by ~same
        order = np.sign(a.astype(np.float64) - b.astype(np.float64))
    assert np.array_equal(np.sign(ka - kb)[finite & ~same], order[finite & ~same])



def _plain_distance(x: float, y: float, dtype: type, signed_zero: bool) -> int:
    """The ULP distance by Python integers, one pair at a time (sign and magnitude of the bits)."""
    bits = 8 * np.dtype(dtype).itemsize
    unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]

    def key(v: float) -> int:
        raw = int(np.asarray([v], dtype=dtype).view(unsigned)[0])
        magnitude, negative = raw & ((1 << (bits - 1)) - 1), raw >> (bits - 1)
        return (-magnitude if negative else magnitude) - (negative if signed_zero else 0)

    return abs(key(x) - key(y))


@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data(), signed_zero=st.booleans())
@settings(max_examples=30, deadline=None)
def test_distance_matches_a_plain_integer_reference(dtype: type, data: st.DataObject, signed_zero: bool) -> None:
    """The in-place keys and the larger-less-smaller difference (`bench/bench_gemm.py`) against plain integers."""
    a, b = data.draw(_bits_of(dtype), label="a"), data.draw(_bits_of(dtype), label="b")
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    got = ulp_distance(a, b, signed_zero=signed_zero).tolist()
    with np.errstate(invalid="ignore"):
        nan_a, nan_b = np.isnan(a.astype(np.float64)), np.isnan(b.astype(np.float64))
    for i in range(n):
        if nan_a[i] or nan_b[i]:
            assert got[i] == (0 if nan_a[i] and nan_b[i] else 2 ** 64 - 1)
        else:
            assert got[i] == _plain_distance(a[i], b[i], dtype, signed_zero)

#: numpy's float16 and every ml_dtypes float of 1 or 2 bytes: small enough to try every bit pattern.
SMALL_FLOATS = [np.float16, ml_dtypes.bfloat16] + [getattr(ml_dtypes, name) for name in (
    "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz")]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype", SMALL_FLOATS, ids=lambda t: np.dtype(t).name)
def test_every_bit_pattern_is_compared_without_a_warning(dtype: type) -> None:
    # ml_dtypes' bfloat16 isnan compares the value with itself as a float32: a signalling NaN
    # (quiet bit clear, e.g. 0xFF8D) raised "invalid value encountered in isnan" (a CI run's warning)
    bits = np.arange(2 ** (8 * np.dtype(dtype).itemsize), dtype={1: np.uint8, 2: np.uint16}[np.dtype(dtype).itemsize])
    x = bits.view(dtype)
    nan = nan_mask(x)
    d = ulp_distance(x, x[::-1])
    assert (d[nan != nan[::-1]] == 2 ** 64 - 1).all() and (d[nan & nan[::-1]] == 0).all()
    result = compare(x, x[::-1], policy=Policy(ulp=0, relaxed_factor=1))
    assert result.counts[0] == int(np.sum(nan & nan[::-1])) + int(np.sum((d == 0) & ~nan & ~nan[::-1]))


@pytest.mark.filterwarnings("error")
def test_a_bfloat16_signalling_nan_is_a_nan() -> None:
    x = np.array([0xFF8D, 0x7F81, 0x7FC0, 0x3F80, 0x7F80], np.uint16).view(ml_dtypes.bfloat16)  # sNaN, sNaN, qNaN, 1, inf
    assert nan_mask(x).tolist() == [True, True, True, False, False]
    assert ulp_distance(x, x[[2, 0, 1, 3, 4]]).tolist() == [0, 0, 0, 0, 0]
    assert ulp_distance(x, np.full(5, 1.0).astype(ml_dtypes.bfloat16)).tolist() == [2 ** 64 - 1] * 3 + [0, 0x7F80 - 0x3F80]
    every = np.arange(2 ** 16, dtype=np.uint16)
    assert np.array_equal(nan_mask(every.view(ml_dtypes.bfloat16)), (every & 0x7FFF) > 0x7F80)


# -- compare ---------------------------------------------------------------------
def test_tiers() -> None:
    expected = np.float32([1.0, 1.0, 1.0, 1.0])
    eps = np.finfo(np.float32).eps
    actual = np.float32([1.0, 1 + 2 * eps, 1 + 6 * eps, 1 + 40 * eps])
    result = compare(expected, actual, policy=Policy(ulp=2, relaxed_factor=4))
    assert result.status.tolist() == [Verdict.PASS, Verdict.PASS, Verdict.QUALITY_WARNING, Verdict.FAIL]
    assert result.verdict is Verdict.FAIL
    assert result.counts == (2, 1, 1)
    assert [m.index for m in result.worst] == [(3,), (2,)]
    assert result.summary() == "Mismatched elements: 1 / 4 (1 quality warnings)"
    assert not result.status.flags.writeable


def test_bound_gives_absolute_slack_where_it_is_given() -> None:
    expected = np.float32([1e-8, 1e-8])
    actual = np.float32([3e-8, 3e-8])
    bound = np.asarray([5e-8, 0.0])
    result = compare(expected, actual, policy=Policy(ulp=2), bound_strict=bound)
    assert result.status.tolist() == [Verdict.PASS, Verdict.FAIL]
    assert result.worst[0].bound == 0.0


def _plain_verdict(e: float, a: float, dtype: type, policy: Policy, strict: float, relaxed: float) -> Verdict:
    """The comparator's rule for one element, in Python floats and integers."""
    if np.isnan(e) or np.isnan(a):
        return Verdict.PASS if np.isnan(e) and np.isnan(a) else Verdict.FAIL
    distance = _plain_distance(e, a, dtype, policy.signed_zero)
    error = abs(float(a) - float(e)) if not (np.isinf(e) and e == a) else 0.0
    if distance <= policy.ulp or error <= strict:
        return Verdict.PASS
    if distance <= int(np.ceil(policy.ulp * policy.relaxed_factor)) or error <= relaxed:
        return Verdict.QUALITY_WARNING
    return Verdict.FAIL


@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16])
@given(data=st.data(), ulp=st.integers(0, 3), signed_zero=st.booleans())
@settings(max_examples=40, deadline=None)
def test_verdicts_with_bounds_match_a_plain_rule(dtype: type, data: st.DataObject, ulp: int,
                                                 signed_zero: bool) -> None:
    """Every element's verdict, where the bound decides most of them (a
    result within its bound is left out of the sparse index at once),
    against the rule written out one element at a time."""
    a = data.draw(_bits_of(dtype), label="a")
    with np.errstate(all="ignore"):
        e = (a.astype(np.float64) * data.draw(st.sampled_from([1.0, 1.001, 0.999, -1.0]))).astype(dtype)
    bits = data.draw(_bits_of(dtype), label="mixed in")[:a.size]
    e[:bits.size:3] = bits[::3]  # some elements far apart, NaN, inf
    strict = np.asarray(data.draw(st.lists(st.sampled_from([0.0, 1e-3, 0.5, np.inf]), min_size=a.size,
                                           max_size=a.size)))
    relaxed = strict * 4
    policy = Policy(ulp=ulp, signed_zero=signed_zero)
    result = compare(e, a, policy=policy, bound_strict=strict, bound_relaxed=relaxed)
    with np.errstate(all="ignore"):
        want = [_plain_verdict(x, y, dtype, policy, s, r)
                for x, y, s, r in zip(e.tolist(), a.tolist(), strict.tolist(), relaxed.tolist())]
    assert result.status.tolist() == [int(v) for v in want]
    sparse = compare_sparse(e, a, policy=policy, bound_strict=strict, bound_relaxed=relaxed)
    with np.errstate(all="ignore"):
        within = np.abs(a.astype(np.float64) - e.astype(np.float64)) <= strict
    assert not np.isin(sparse.index, np.flatnonzero(within)).any()


def test_signed_zero_only_when_asked() -> None:
    e, a = np.float32([0.0]), np.float32([-0.0])
    assert compare(e, a).verdict is Verdict.PASS
    assert compare(e, a, policy=Policy(signed_zero=True)).verdict is Verdict.FAIL


def test_flushed_output_needs_the_declaration() -> None:
    tiny = np.float32(1e-40)
    e, a = np.float32([tiny]), np.float32([0.0])
    assert compare(e, a).verdict is Verdict.FAIL
    assert compare(e, a, policy=Policy(flush_subnormals=True)).verdict is Verdict.PASS


def test_alternatives_by_tier_and_report() -> None:
    expected = np.float32([np.nan, np.nan, 0.5])
    actual = np.float32([1.0, np.nan, 1.0])
    maxnum = Alternative("ieee_minmax", np.asarray([0, 1]), np.float32([1.0, 1.0]), Tier.STRICT, "maxNum")
    limit = Alternative("limit", np.asarray([2]), np.float32([1.0]), Tier.RELAXED, "limit")
    result = compare(expected, actual, alternatives=(maxnum, limit))
    assert result.status.tolist() == [Verdict.PASS, Verdict.PASS, Verdict.QUALITY_WARNING]
    used = {u.name: (u.matched_literal, u.matched_alternative) for u in result.alternatives}
    assert used == {"ieee_minmax": (1, 1), "limit": (0, 1)}


def test_an_alternative_with_a_bound_accepts_within_it_only() -> None:
    """A reading with rounding errors of its own (`Alternative.bound`): within its bound of its value PASS,
    beyond it FAIL; without a bound the same value 1 ULP off FAILs; the part of an alternative keeps its bound."""
    expected, actual = np.float32([2.0, 2.0]), np.float32([-1.0 + 2 ** -20, -1.0 - 2 ** -18])
    bounded = Alternative("signed", np.asarray([0, 1]), np.float32([-1.0, -1.0]), Tier.STRICT, "x^P",
                          np.asarray([2.0 ** -19, 2.0 ** -19]))
    assert compare(expected, actual, alternatives=(bounded,)).status.tolist() == [Verdict.PASS, Verdict.FAIL]
    exact = Alternative("signed", np.asarray([0, 1]), np.float32([-1.0, -1.0]), Tier.STRICT, "x^P")
    assert compare(expected, actual, alternatives=(exact,)).status.tolist() == [Verdict.FAIL, Verdict.FAIL]
    part = bounded.part(np.asarray([1]), 5)
    assert part.index.tolist() == [6] and part.bound is not None and part.bound.tolist() == [2.0 ** -19]


def test_flush_alternative_only_with_declaration() -> None:
    alt = Alternative("flushed_inputs", np.asarray([0]), np.float32([0.0]), Tier.FLUSH, "flush")
    e, a = np.float32([0.5]), np.float32([0.0])
    assert compare(e, a, alternatives=(alt,)).verdict is Verdict.FAIL
    assert compare(e, a, alternatives=(alt,), policy=Policy(flush_subnormals=True)).verdict is Verdict.PASS


def test_bad_arguments_name_the_value() -> None:
    with pytest.raises(InputError, match="ulp=-1 is negative"):
        Policy(ulp=-1)
    with pytest.raises(InputError, match=r"shapes differ: expected \(2,\), actual \(3,\)"):
        compare(np.float32([1, 2]), np.float32([1, 2, 3]))


@given(st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=30))
@settings(max_examples=60, deadline=None)
def test_an_array_matches_itself(values: list[float]) -> None:
    x = np.asarray(values, dtype=np.float32)
    result = compare(x, x.copy(), policy=Policy(signed_zero=True))
    assert result.verdict is Verdict.PASS and result.worst == ()


@pytest.mark.parametrize("dtype", [*FLOATS, np.int32, np.uint8, np.bool_])
def test_an_identical_result_is_the_empty_comparison_of_the_same_types(dtype: type) -> None:
    """No differing element returns early; its arrays keep the types of a
    comparison with differences (batches of both are joined), and its
    alternatives count as matched literally."""
    from dmlconform.compare import SparseComparison, compare_sparse

    x = np.arange(6).astype(dtype)
    y = x.copy()
    y[3] = np.ones(1, dtype)[0] if x[3] != np.ones(1, dtype)[0] else np.zeros(1, dtype)[0]
    alt = Alternative("other", np.asarray([1, 3]), x[[1, 3]], Tier.STRICT, "why")
    same = compare_sparse(x, x.copy(), bound_strict=np.ones(6), alternatives=(alt,))
    differ = compare_sparse(x, y, bound_strict=np.ones(6), alternatives=(alt,))
    assert same.index.size == 0 and same.size == 6
    for field in ("index", "status", "ulp", "error", "bound", "expected", "actual"):
        assert getattr(same, field).dtype == getattr(differ, field).dtype, field
    (trace,) = same.traces
    assert trace.before.tolist() == [True, True] and trace.gained.tolist() == [False, False]
    joined = SparseComparison.join([same, differ.shifted(6)])
    assert joined.index.tolist() == [9] and joined.ulp.dtype == np.uint64
