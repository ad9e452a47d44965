"""One rounding to the target type, neighbours, and float64 exactness tests."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.formula import exact64
from dmlconform.formula.rounding import fraction_to_float, neighbours, round_exact, to_float
from tests.formula.closed_forms import rounded

finite64 = st.floats(allow_nan=False, allow_infinity=False)
float32s = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(st.lists(finite64, min_size=1, max_size=50))
@settings(max_examples=100, deadline=None)
def test_round_exact_agrees_with_numpys_correct_casts(values: list[float]) -> None:
    v = np.asarray(values)
    with np.errstate(over="ignore"):
        for dtype in (np.float32, np.float16):
            assert np.array_equal(round_exact(v, dtype), v.astype(dtype).astype(np.float64))


@given(st.lists(finite64, min_size=1, max_size=30))
@settings(max_examples=100, deadline=None)
def test_bfloat16_rounds_once(values: list[float]) -> None:
    got = to_float(np.asarray(values), ml_dtypes.bfloat16).astype(np.float64)
    want = [rounded(mpmath.mpf(v), ml_dtypes.bfloat16) for v in values]
    assert got.tolist() == want


def test_fraction_to_float() -> None:
    assert fraction_to_float(Fraction(1, 6), np.float32) == float(np.float32(1 / 6))
    assert fraction_to_float(Fraction(1, 10), np.float16) == float(np.float16(0.1))
    assert fraction_to_float(Fraction(65520), np.float16) == float("inf")  # max + half an ULP ties to inf
    assert fraction_to_float(Fraction(65519), np.float16) == 65504.0
    half_way = Fraction(1) + Fraction(1, 2 ** 24)  # tie: to even
    assert fraction_to_float(half_way, np.float32) == 1.0
    assert fraction_to_float(half_way + Fraction(1, 2 ** 80), np.float32) == 1 + 2 ** -23


def test_neighbours_step_through_zero_and_stop_at_infinity() -> None:
    x = np.float32([0.0, 1.0, np.inf, -np.inf])
    assert neighbours(x, 1).tolist()[1:] == [float(np.nextafter(np.float32(1), np.float32(2))), np.inf,
                                             float(-np.finfo(np.float32).max)]
    assert neighbours(np.asarray([1.0], dtype=ml_dtypes.bfloat16), 1).astype(np.float64).tolist() == [1.0078125]


@given(float32s, float32s)
@settings(max_examples=300, deadline=None)
def test_exactness_of_float64_operations(a32: float, b32: float) -> None:
    a, b = np.float64(a32), np.float64(b32)
    fa, fb = Fraction(a32), Fraction(b32)
    with np.errstate(all="ignore"):
        s, p = a + b, a * b
        assert bool(exact64.sum_exact(a, b, s)) == (np.isfinite(s) and Fraction(float(s)) == fa + fb)
        assert bool(exact64.product_exact(a, b, p)) == (np.isfinite(p) and Fraction(float(p)) == fa * fb) or not np.isfinite(p)
        if b != 0:
            q = a / b
            if np.isfinite(q) and q != 0 and abs(q) > 1e-290:
                assert bool(exact64.quotient_exact(a, b, q)) == (Fraction(float(q)) == fa / fb)
        if a >= 0:
            r = np.sqrt(a)
            assert bool(exact64.root_exact(a, r)) == (Fraction(float(r)) ** 2 == fa)
