"""Default ULP budgets computed from the tree (issue 4, part 5)."""

from __future__ import annotations

import pytest

from dmlconform.formula import parse
from dmlconform.formula.expand import expand
from dmlconform.formula.tolerance import default_ulp, signed_zero


@pytest.mark.parametrize(("formula", "ulp"), [
    ("f(x) = -1, if x < 0\n        1, if x > 0\n        0, otherwise", 0),   # sign: exact
    ("f(a, b) = (a > b)", 0),
    ("f(x) = max(Min, min(x, Max))", 0),                                   # clip: exact
    ("f(x) = x / (1 + abs(x))", 3),                                        # softsign
    ("f(x) = max(0, min(Alpha * x + Beta, 1))", 2),                        # hard sigmoid: one fused a*x+b
    ("f(x) = x - Bias, if x > Threshold\n       x + Bias, if x < -Threshold\n       0, otherwise", 2),
    ("f(x) = x * Sigmoid(SigmoidInputScale * x)", 7),                      # swish
    ("f(x) = exp(x)", 3),
    ("f(x) = 2 / sqrt(pi) * integrate(i = 0 to x, exp(-(i^2)))", 5),       # constants fold for free
])
def test_budgets(formula: str, ulp: int) -> None:
    assert default_ulp(expand(parse(formula))) == ulp


def test_integers_are_exact() -> None:
    from dmlconform.spec.model import DataType

    tree = expand(parse("f(a, b) = a / b"))
    assert default_ulp(tree, "int32") == 0 and default_ulp(tree, DataType.UINT8) == 0
    assert default_ulp(tree, DataType.FLOAT16) == default_ulp(tree, "float32") == 2


def test_let_bound_names_that_depend_on_inputs_count() -> None:
    program = parse("X = InputTensor\nY = X * 2.5 + 1\nOutputTensor = Y")
    assert default_ulp(program) == 2


def test_signed_zero_only_where_the_doc_speaks_of_it() -> None:
    assert signed_zero(parse("f(x) = -1, if x < 0\n        1, if x > 0\n        0, otherwise // This includes negative zero."))
    assert not signed_zero(parse("f(x) = x / (1 + abs(x))"))
