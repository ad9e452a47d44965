"""The exact evaluation's budget (`limits.MAX_EXACT_ROWS`): past it, the
elements are accepted with any finite value and the result says so; within
it, they are exact.  TANH's literal formula ``(1 - exp(-2x)) / (1 + exp(-2x))``
cancels for tiny x (float64 gives 0, the value is x) and overflows for
x < -355 (float64 gives NaN, the value is -1): every such element needs
mpmath, and a large case held 84,393 distinct ones."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.compare import Verdict, compare
from dmlconform.families.elementwise.formula_oracle import evaluate
from dmlconform.formula import parse, refine

TANH = parse("f(x) = (1 - exp(-2 * x)) / (1 + exp(-2 * x))")
#: Tiny values (cancelling) and values past float64's exp (overflowing), each twice.
X = np.concatenate([np.geomspace(1e-30, 1e-12, 6), -np.geomspace(1e3, 1e30, 6)] * 2).astype(np.float32)


def test_within_the_budget_every_element_is_exact() -> None:
    result = evaluate(TANH, {"x": X}, dtype=np.float32)
    assert np.array_equal(result.expected, np.tanh(X.astype(np.float64)).astype(np.float32))
    assert result.uncertain is None and result.notes == ()


def test_past_the_budget_elements_are_left_out_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refine, "MAX_EXACT_ROWS", 3)
    result = evaluate(TANH, {"x": X}, dtype=np.float32)
    assert result.uncertain is not None
    left = result.uncertain.reshape(-1)
    exact = np.tanh(X.astype(np.float64)).astype(np.float32)
    assert np.array_equal(result.expected[~left], exact[~left])  # the rows within the budget are exact
    # each call evaluates 3 distinct rows (the tiny ones and the overflowing ones go in two calls): the
    # rest, both copies of each row, are left out
    assert left.sum() == X.size - 2 * 3 * 2
    assert any("elements past the exact evaluation's budget of" in n for n in result.notes)
    # a right answer passes where it is checked, and is accepted (relaxed) where it is not
    def verdict(actual: np.ndarray) -> Verdict:
        return compare(result.expected, actual, policy=result.policy(), bound_strict=result.bound_strict,
                       bound_relaxed=result.bound_relaxed).verdict

    assert verdict(exact) is Verdict.QUALITY_WARNING  # NaN (float64's) expected where left out: accepted, relaxed
    wrong = exact.copy()
    wrong[np.flatnonzero(~left)[0]] = 0.5  # every check within the budget can still fail
    assert verdict(wrong) is Verdict.FAIL


def test_refine_reports_the_positions_it_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refine, "MAX_EXACT_ROWS", 2)
    x = np.asarray([1e-30, 2e-30, 3e-30, 1e-30, 3e-30])
    values, done, left_out = refine.refine(TANH, {"x": x}, np.arange(5), (5,), np.dtype(np.float32),
                                           minmax="propagate")
    assert done.sum() + left_out.sum() == 5 and not (done & left_out).any()
    assert left_out.sum() in (1, 2)  # one distinct row of three is left out, with its copies
    assert np.array_equal(values[done], x[done].astype(np.float32))
