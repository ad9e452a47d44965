"""The oracle on remainders ``a - b * trunc(a / b)`` and ``a - b * floor(a / b)``
of float64 operands whose quotient is far beyond float64's range or precision
(a / b up to 2^2098): trunc of the quotient needs every bit of its integer
part, which neither float64, long double nor 256-bit mpmath holds.  The exact
value comes from `Fraction` arithmetic here."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dmlconform.compare import Policy, Verdict, compare
from dmlconform.families.elementwise.formula_oracle import OracleResult, evaluate
from dmlconform.formula import parse

TRUNCATE = parse("f(a, b) = a - b * trunc(a / b)")
FLOOR = parse("f(a, b) = a - b * floor(a / b)")
finite = st.floats(allow_nan=False, allow_infinity=False)
nonzero = finite.filter(lambda x: x != 0)


def exact(a: float, b: float, rounding: object) -> float:
    """The remainder in rationals, rounded once to float64."""
    q = Fraction(a) / Fraction(b)
    return float(Fraction(a) - Fraction(b) * rounding(q))  # type: ignore[operator]


def oracle(tree: object, a: float, b: float) -> OracleResult:
    return evaluate(tree, {"a": np.array([a]), "b": np.array([b])}, {}, dtype=np.dtype(np.float64))  # type: ignore[arg-type]


def accepts(result: OracleResult, value: float) -> bool:
    """Whether the comparison the runner makes passes ``value`` (PASS or a
    quality warning): the oracle's value or bound covers it."""
    relaxed = result.bound_relaxed if result.uncertain is not None else None
    cmp = compare(result.expected, np.array([value]), policy=Policy(ulp=result.ulp, relaxed_factor=result.relaxed_factor),
                  bound_strict=result.bound_strict, bound_relaxed=relaxed, alternatives=result.alternatives)
    return cmp.verdict is not Verdict.FAIL


def test_the_onnxruntime_case_huge_over_tiny() -> None:
    """ELEMENT_WISE_MODULUS_TRUNCATE/FLOAT64/4d/unsupported: 1.797e308 mod
    -8.1e-203 was expected as 9.7e288 (long double's 64-bit trunc of a
    2^1683 quotient); the exact remainder is below |b|."""
    a, b = 1.797e308, -8.1e-203
    got = float(oracle(TRUNCATE, a, b).expected[0])
    assert got == math.fmod(a, b) == exact(a, b, math.trunc)
    assert abs(got) < abs(b)


def huge(a: float, b: float) -> bool:
    """The quotient leaves float64's range."""
    return abs(Fraction(a) / Fraction(b)) > 2 ** 1024


@settings(max_examples=60, deadline=None)
@given(finite, nonzero)
@example(float(np.finfo(np.float64).max), 5e-324)
@example(-float(np.finfo(np.float64).max), 3e-300)
@example(1e300, -7.0)
def test_truncated_remainder(a: float, b: float) -> None:
    """fmod is exact in IEEE arithmetic: the comparison accepts it always, and
    where the quotient leaves float64's range the oracle gives it to the bit."""
    result = oracle(TRUNCATE, a, b)
    assert accepts(result, math.fmod(a, b))
    if huge(a, b):
        assert float(result.expected[0]) == math.fmod(a, b)


@settings(max_examples=60, deadline=None)
@given(finite, nonzero)
@example(float(np.finfo(np.float64).max), -5e-324)
@example(-1.797e308, 8.1e-203)
@example(1.0115435607267508e+16, 3.0)
def test_floored_remainder(a: float, b: float) -> None:
    want = exact(a, b, math.floor)
    result = oracle(FLOOR, a, b)
    assert accepts(result, want)
    if huge(a, b):
        assert float(result.expected[0]) == want
