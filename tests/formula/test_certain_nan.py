"""The tracked float64 evaluation marks results that are NaN in exact
arithmetic too (a function's argument outside its real domain by more than
its error, and what such a NaN flows into); the oracle then skips mpmath for
them.  Every mark must be a NaN of the exact evaluation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.families.elementwise.floatrun import FloatRun
from dmlconform.families.elementwise.formula_oracle import prepare
from dmlconform.formula import parse
from dmlconform.formula.evaluate import certain_nan, decides
from dmlconform.formula.expand import expand
from dmlconform.formula.functions import mp_context
from dmlconform.formula.refine import PRECISION, _Scalar

FORMULAS = [
    "f(x, y) = sqrt(x * y - 1) + y",
    "f(x, y) = log(x + y) * 3",
    "f(x, y) = acosh(x / y)",
    "f(x, y) = asin(x * 0.5 + y)",
    "f(x, y) = x - 2 * sqrt(y * y * 0.25 - x)",
    "f(x, y) = -(atanh(x - y) / (1 + abs(y)))",
    "f(x, y) = sqrt(1 - pow(0.25, y)) / (1 - x)",
    "f(x, y) = sqrt(x * x * y - 1) * (y * y * 1e30)",
    "f(x, y) = log(y * y * y - x * x) - exp(x)",
    "f(x, y) = x,            if y > 0\n          log(y * 3),   otherwise",
    "f(x, y) = sqrt(x),      if y > x * 1.5\n          sqrt(y - x),  otherwise",
]
values = st.floats(-8, 8, width=32) | st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FORMULAS), st.lists(st.tuples(values, values), min_size=1, max_size=12))
def test_every_certain_nan_is_nan_exactly(text: str, pairs: list[tuple[float, float]]) -> None:
    tree, x, y, run = _float_run(text, [p[0] for p in pairs], [p[1] for p in pairs])
    values64, val, ev = run.run({"x": x, "y": y}, track=True)
    marked = certain_nan(val, ev, x.shape, decides=decides(tree))  # as the oracle asks
    assert np.isnan(values64[marked]).all()
    _assert_nan_exactly(text, tree, x, y, marked)


def _float_run(text: str, x: list[float], y: list[float]) -> tuple[object, np.ndarray, np.ndarray, FloatRun]:
    """The tree of ``text`` and a float32 oracle run of it on ``x`` and ``y``."""
    tree = expand(parse(text))
    xs, ys = np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32)
    run = FloatRun(prepare(tree), {"x": xs, "y": ys}, {}, xs.shape, np.dtype(np.float32),
                   output=None, propagate_nan=True)
    return tree, xs, ys, run


def _assert_nan_exactly(text: str, tree: object, x: np.ndarray, y: np.ndarray, marked: np.ndarray) -> None:
    ctx = mp_context(PRECISION)
    for k in np.flatnonzero(marked):
        try:
            exact = _Scalar(ctx, {"x": x[k], "y": y[k]}, "propagate").run(tree, None)  # type: ignore[arg-type]
        except (ZeroDivisionError, ValueError, OverflowError):
            continue  # the oracle keeps the float64 NaN there as well
        assert ctx.isnan(exact), (text, float(x[k]), float(y[k]), exact)


def test_a_negative_argument_beyond_its_error_is_marked() -> None:
    tree = expand(parse("f(x, y) = sqrt(x * y - 1) + y"))
    x = np.asarray([-3.0, 0.5, 2.0], dtype=np.float32)
    y = np.asarray([1.0, 1.0, 1.0], dtype=np.float32)
    run = FloatRun(prepare(tree), {"x": x, "y": y}, {}, x.shape, np.dtype(np.float32),
                   output=None, propagate_nan=True)
    _, val, ev = run.run({"x": x, "y": y}, track=True)
    assert certain_nan(val, ev, x.shape).tolist() == [True, True, False]


def test_without_a_decision_an_overflow_leaves_the_nan_certain() -> None:
    """x * x overflows float32's range (flagged), yet sqrt of a negative
    number is NaN whatever the magnitude: a tree that compares nothing keeps
    the mark; one that compares does not."""
    x = np.asarray([3e30, 3e30], dtype=np.float32)
    y = np.asarray([-1.0, 1.0], dtype=np.float32)
    for text, want in (("f(x, y) = sqrt(x * x * y - 1) * y", [True, False]),
                       ("f(x, y) = sqrt(x * x * y - 1),  if y < 2\n          y,  otherwise", [False, False])):
        tree = expand(parse(text))
        run = FloatRun(prepare(tree), {"x": x, "y": y}, {}, x.shape, np.dtype(np.float32),
                       output=None, propagate_nan=True)
        _, val, ev = run.run({"x": x, "y": y}, track=True)
        assert ev.overflow is not None and ev.overflow.all()
        assert certain_nan(val, ev, x.shape, decides=decides(tree)).tolist() == want, text


#: Formulas whose float64 value cancels to 0 while the exact value does not:
#: pow or exp of a tiny exponent rounds to 1 (`evaluate._near_one`).
NEAR_ONE = [
    "f(x, y) = sqrt(1 - pow(0.25, y)) / (1 - pow(2, y)) * x",
    "f(x, y) = sqrt(pow(3, y) - 1) / (1 - exp(y)) + x",
    "f(x, y) = x - sqrt(exp(-y) - 1) * (1 - pow(x, y))",
    "f(x, y) = sqrt(-(1 - pow(0.5, y)) + 0) / (exp(y) - 1)",
]
tiny = st.floats(-2.0 ** -66, 2.0 ** -66, width=32) | st.sampled_from([1.4e-45, -1.4e-45, 1.2e-38, -1.2e-38, 0.0])


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(NEAR_ONE), st.lists(st.tuples(values, tiny), min_size=1, max_size=12))
def test_every_exact64_nan_mark_is_nan_exactly(text: str, pairs: list[tuple[float, float]]) -> None:
    """`FloatRun.exact_nan` (the exactness evaluation's `Val.nan`, which
    knows on which side of 1 a rounded pow or exp lies) lets the oracle skip
    mpmath: every element it marks is NaN (or fails) in exact arithmetic."""
    tree, x, y, run = _float_run(text, [p[0] for p in pairs], [p[1] for p in pairs])
    marked = run.exact_nan(np.arange(x.size))
    _assert_nan_exactly(text, tree, x, y, marked)


def test_adams_bias_correction_of_a_tiny_negative_step_is_nan_exactly() -> None:
    """1 - pow(0.25, T) cancels to 0 in float64 for a tiny T; its exact value
    is negative for T < 0 (pow above 1) and positive for T > 0, so only the
    former's square root is NaN exactly.  For T = 0 both factors are exactly
    0, and mpmath's 0 / 0 raises: the float64 NaN stands."""
    tree = expand(parse("f(x, y) = sqrt(1 - pow(0.25, y)) / (1 - pow(2, y)) * x"))
    x = np.ones(6, dtype=np.float32)
    y = np.asarray([-1e-30, 1e-30, -1.4e-45, 0.5, 0.0, -0.0], dtype=np.float32)
    run = FloatRun(prepare(tree), {"x": x, "y": y}, {}, x.shape, np.dtype(np.float32),
                   output=None, propagate_nan=True)
    assert run.exact_nan(np.arange(6)).tolist() == [True, False, True, False, True, True]


#: Formulas whose float64 NaN comes from a negative base to a fractional
#: power, pow(0, t < 0), or an overflowed pow or exp of known sign under a
#: square root or logarithm (`evaluate._overflowed`, `_outside`), and some
#: whose float64 NaN is not NaN exactly (inf * 0, inf - inf of an overflow).
OVERFLOWING = [
    "f(x, y) = x - sqrt(1 - pow(0.25, y)) / (1 - pow(-2, y)) * x",
    "f(x, y) = log(1.5 - exp(y)) * x + pow(0, y)",
    "f(x, y) = sqrt(1 - pow(x, y)) * y - pow(0, y) * x",
    "f(x, y) = asin(-(2 - pow(3, y))) / x",
    "f(x, y) = sqrt(1 - pow(2, y) * 0) + x",
    "f(x, y) = x / sqrt(pow(0.5, y) - pow(0.5, y))",
    "f(x, y) = sqrt(-(pow(x, y) - 2)) + abs(pow(-0.5, y)) * x",
    "f(x, y) = log10(exp(y) * -1 + x) - sqrt(exp(-y) - exp(-y))",
]
steps = st.floats(width=32, allow_nan=False) | st.floats(-4, 4, width=32) | st.sampled_from([-1e30, 1e30, 0.5, -0.5])


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(OVERFLOWING), st.lists(st.tuples(values, steps), min_size=1, max_size=12))
def test_every_overflow_or_power_nan_mark_is_nan_exactly(text: str, pairs: list[tuple[float, float]]) -> None:
    tree, x, y, run = _float_run(text, [p[0] for p in pairs], [p[1] for p in pairs])
    marked = run.exact_nan(np.arange(x.size))
    _assert_nan_exactly(text, tree, x, y, marked)


def _exact_nan(text: str, x: list[float], y: list[float]) -> list[bool]:
    run = _float_run(text, x, y)[3]
    return run.exact_nan(np.arange(len(x))).tolist()


def test_a_negative_base_to_a_fractional_power_is_nan_through_inexact_arithmetic() -> None:
    """Adam with Beta1 = -2: pow(-2, T) is NaN exactly for a fractional T
    (mpmath's value is complex), and stays NaN through the inexact division
    and product; an integer T gives a number."""
    text = "f(x, y) = x - sqrt(1 - pow(0.25, y)) / (1 - pow(-2, y)) * x / (sqrt(x) + 1.5)"
    assert _exact_nan(text, [0.3, 0.3, 0.3], [0.5, 3.0, 0.1]) == [True, False, True]


def test_an_overflowed_power_under_a_square_root_is_nan_exactly() -> None:
    """Adam with Beta2 = 0.25 and a huge negative T: pow overflows to +inf,
    ``1 - pow`` is -inf in float64 and exactly negative, its square root NaN.
    A huge positive T underflows instead (no NaN), and an overflow times 0
    (float64 NaN, exactly 1 under the root) is not claimed."""
    adam = "f(x, y) = x - sqrt(1 - pow(0.25, y)) / (1 - pow(2, y)) * x / (sqrt(x) + 1.5)"
    assert _exact_nan(adam, [0.3, 0.3, 0.3], [-5e34, 5e34, -3e38]) == [True, False, True]
    assert _exact_nan("f(x, y) = sqrt(1 - pow(2, y) * 0) + x", [1.0], [2000.0]) == [False]
    assert _exact_nan("f(x, y) = x / sqrt(pow(0.5, y) - pow(0.5, y))", [1.0], [-2000.0]) == [False]
    # a negative base gives no known sign: (-2)**2000 is positive, (-2)**2001 negative
    assert _exact_nan("f(x, y) = sqrt(1 - pow(-2, y)) + x", [1.0, 1.0], [2000.0, 2001.0]) == [False, False]


def test_the_sign_of_an_overflow_survives_only_a_small_exact_addend() -> None:
    """exp(y) for y = 1000 overflows (the exact value is about 2**1443): x -
    exp(y) keeps its sign for any float32 x, its logarithm is NaN exactly;
    sqrt of exp(y) - x is +inf (no NaN); and NaN propagates through every
    function (abs and pow included), as mpmath's does."""
    assert _exact_nan("f(x, y) = log(x - exp(y)) * x", [3e38, -1.0], [1000.0, 1000.0]) == [True, True]
    assert _exact_nan("f(x, y) = sqrt(exp(y) - x) - exp(y)", [1.0], [1000.0]) == [False]
    assert _exact_nan("f(x, y) = pow(abs(sqrt(x - exp(y))), 2) * y", [1.0], [1000.0]) == [True]


def test_pow_of_zero_to_a_negative_power_is_not_claimed() -> None:
    """mpmath's 0 ** t (t < 0) raises for some t and is +inf for others
    (-0.25, -1e-20): inf - inf is NaN in float64, yet no mark."""
    text = "f(x, y) = pow(0, y) - pow(0, y) + x"
    assert _exact_nan(text, [1.0, 1.0, 1.0], [-1.5, -0.25, 2.0]) == [False, False, False]
