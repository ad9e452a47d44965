"""Interval bounds (``Val.span``) let the oracle skip the range check of a
step whose result surely stays within the target's range: the overflow marks
must be exactly those of checking every step."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.families.elementwise.floatrun import FloatRun
from dmlconform.families.elementwise.formula_oracle import prepare
from dmlconform.formula import parse
from dmlconform.formula.expand import expand

FORMULAS = [
    "f(x) = x / (1 + abs(x))",
    "f(x) = x * x * 3 - x",
    "f(x) = (x + 1) / (abs(x) + 2) * x",
    "f(x) = -x * 1e30 + x / 3",
    "f(x) = x / (x - 3)",
]


def overflow_marks(text: str, x: np.ndarray, *, spans: bool) -> np.ndarray:
    tree = expand(parse(text))
    run = FloatRun(prepare(tree), {"x": x}, {}, x.shape, np.dtype(np.float32),
                   output=None, propagate_nan=True)
    given_spans = {"x": (float(x.min()), float(x.max()))} if spans else None
    _, _, ev = run.run({"x": x}, track=True, spans=given_spans)
    return np.zeros(x.shape, dtype=bool) if ev.overflow is None else np.broadcast_to(ev.overflow, x.shape)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(FORMULAS),
       st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=30))
def test_spans_mark_the_same_overflows_as_checking_every_step(text: str, xs: list[float]) -> None:
    x = np.asarray(xs, dtype=np.float32)
    assert np.array_equal(overflow_marks(text, x, spans=True), overflow_marks(text, x, spans=False))


def test_a_span_within_range_skips_the_check_and_a_wide_one_does_not() -> None:
    small = np.linspace(-100, 100, 11, dtype=np.float32)
    assert not overflow_marks("f(x) = x * x * 3 - x", small, spans=True).any()
    big = np.array([1.0, 3e19], dtype=np.float32)
    assert overflow_marks("f(x) = x * x * 3 - x", big, spans=True).tolist() == [False, True]


def test_nan_elements_neither_hide_an_overflow_nor_are_one() -> None:
    """The range check's reductions skip NaN (fmax/fmin): an element beyond
    the range beside a NaN is marked, the NaN never is."""
    x = np.array([np.nan, 1.0, 3e19, np.nan], dtype=np.float32)
    assert overflow_marks("f(x) = x * x * 3 - x", x, spans=False).tolist() == [False, False, True, False]
    assert not overflow_marks("f(x) = x * x * 3 - x", np.full(3, np.nan, dtype=np.float32), spans=False).any()
