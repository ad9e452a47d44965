"""The tracked float64 evaluation marks results that are NaN in exact
arithmetic too (a function's argument outside its real domain by more than
its error, and what such a NaN flows into); the oracle then skips mpmath for
them.  Every mark must be a NaN of the exact evaluation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.formula import parse
from dmlconform.formula.evaluate import certain_nan, decides
from dmlconform.formula.expand import expand
from dmlconform.formula.floatrun import FloatRun
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
    tree = expand(parse(text))
    x = np.asarray([p[0] for p in pairs], dtype=np.float32)
    y = np.asarray([p[1] for p in pairs], dtype=np.float32)
    run = FloatRun(tree, {"x": x, "y": y}, {}, x.shape, np.dtype(np.float32), output=None, propagate_nan=True)
    values64, val, ev = run.run({"x": x, "y": y}, track=True)
    marked = certain_nan(val, ev, x.shape, decides=decides(tree))  # as the oracle asks
    assert np.isnan(values64[marked]).all()
    _assert_nan_exactly(text, tree, x, y, marked)


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
    run = FloatRun(tree, {"x": x, "y": y}, {}, x.shape, np.dtype(np.float32), output=None, propagate_nan=True)
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
        run = FloatRun(tree, {"x": x, "y": y}, {}, x.shape, np.dtype(np.float32), output=None, propagate_nan=True)
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
    tree = expand(parse(text))
    x = np.asarray([p[0] for p in pairs], dtype=np.float32)
    y = np.asarray([p[1] for p in pairs], dtype=np.float32)
    run = FloatRun(tree, {"x": x, "y": y}, {}, x.shape, np.dtype(np.float32), output=None, propagate_nan=True)
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
    run = FloatRun(tree, {"x": x, "y": y}, {}, x.shape, np.dtype(np.float32), output=None, propagate_nan=True)
    assert run.exact_nan(np.arange(6)).tolist() == [True, False, True, False, True, True]
