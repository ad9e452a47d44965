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
    ctx = mp_context(PRECISION)
    for k in np.flatnonzero(marked):
        try:
            exact = _Scalar(ctx, {"x": x[k], "y": y[k]}, "propagate").run(tree, None)
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
