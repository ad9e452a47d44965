"""Parser and printer: the docs' formulas parse as written, errors point at the
column, and ``parse(to_text(tree)) == tree`` for every tree."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from dmlconform.errors import FormulaError
from dmlconform.formula import parse, to_text
from dmlconform.formula.tree import Assign, Binary, Branch, Call, Comment, Name, Num, Piecewise, Unary
from tests.formula.strategies import trees

SHRINK = """f(x) = x - Bias, if x > Threshold
       x + Bias, if x < -Threshold
       0,        otherwise"""


def test_function_definition() -> None:
    tree = parse("f(x) = x / (1 + abs(x))")
    main = tree.main
    assert (main.target, main.params, main.op) == ("f", ("x",), "=")
    assert main.value == Binary("/", Name("x"), Binary("+", Num("1"), Call("abs", (Name("x"),))))


def test_piecewise_in_doc_order() -> None:
    value = parse(SHRINK).main.value
    assert isinstance(value, Piecewise)
    assert [b.cond for b in value.branches] == [
        Binary(">", Name("x"), Name("Threshold")),
        Binary("<", Name("x"), Unary("-", Name("Threshold"))),
        None,
    ]


def test_branch_comment_is_kept() -> None:
    tree = parse("f(x) = -1, if x < 0\n        1, if x > 0\n        0, otherwise // This includes negative zero.")
    assert tree.main.value.branches[-1] == Branch(Num("0"), None, "This includes negative zero.")


def test_if_then_else_chain_is_piecewise() -> None:
    text = "f(x, gradient) = if x <= Min then 0\n                 if x >= Max then 0\n                 else        then gradient"
    assert to_text(parse(text)) == (
        "f(x, gradient) = 0, if x <= Min\n                 0, if x >= Max\n                 gradient, otherwise"
    )


@pytest.mark.parametrize("text", [
    "f(x) = Alpha * x + Beta.",                       # trailing period (linear page)
    "f(x) = max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1));",  # trailing semicolon (celu page)
    "f(x) = x * Sigmoid(SigmoidInputScale * x)",
    "f(x) = max(0, min(Alpha * x + Beta, 1))",
    "f(x) = 2 / sqrt(pi) * integrate( i = 0 to x, exp(-(i^2)) )",
    "f(a, b) = (!!a) != (!!b)",
    "X = InputTensor\ndY = InputGradientTensor\n\nOutputGradientTensor = (X > 0 ? dY : 0)",
    "f(x) = isinf(x) && (\n       (x > 0 && InfinityMode == DML_IS_INFINITY_MODE_POSITIVE) ||\n"
    "                 InfinityMode == DML_IS_INFINITY_MODE_EITHER)",
    "M = Beta1 * M + (1.0 - Beta1) * G\nX -= LearningRate * Alpha * M / (sqrt(V) + Epsilon)",
])
def test_doc_formulas_parse_and_round_trip(text: str) -> None:
    tree = parse(text)
    assert parse(to_text(tree)) == tree


def test_power_binds_tighter_than_unary_minus() -> None:
    assert parse("f(i) = -i^2").main.value == Unary("-", Binary("^", Name("i"), Num("2")))


def test_comment_lines_are_statements() -> None:
    tree = parse("// For uint8 output, Min = 0, Max = 255\nf(x) = x")
    assert tree.statements[0] == Comment("For uint8 output, Min = 0, Max = 255")
    assert isinstance(tree.statements[1], Assign)


@pytest.mark.parametrize(("text", "line", "column", "fragment"), [
    ("f(x) = x +", 1, 11, "expected a number, a name or '(', found end of line"),
    ("f(x) = (x", 1, 10, "expected ')'"),
    ("f(x) = x\n  y", 2, 3, "expected a statement"),
    ("f(x) = a \u2013 b", 1, 10, "U+2013"),
    ("f(x) = x, if", 1, 13, "found end of line"),
    ("For 1-D InputTensor:", 1, 1, "expected a statement such as 'f(x) = ...'"),
    ("f(x) = x @ 2", 1, 10, "unexpected character '@'"),
])
def test_errors_point_at_the_column(text: str, line: int, column: int, fragment: str) -> None:
    with pytest.raises(FormulaError) as info:
        parse(text)
    err = info.value
    assert (err.line, err.column) == (line, column), err.render()
    assert fragment in err.message


def test_error_lines_count_from_first_line() -> None:
    with pytest.raises(FormulaError) as info:
        parse("f(x) = x\ng(x) = )", origin="page.md", first_line=40)
    assert info.value.render() == "page.md:41:8: error: expected a number, a name or '(', found ')'"


def test_en_dash_error_names_the_fix() -> None:
    with pytest.raises(FormulaError, match="write '-' instead"):
        parse("f(x) = a \u2013 b")


@given(trees())
@settings(max_examples=300, deadline=None)
def test_round_trip(tree) -> None:  # type: ignore[no-untyped-def]
    text = to_text(tree)
    assert parse(text) == tree, text


@given(trees())
@settings(max_examples=100, deadline=None)
def test_printing_is_a_fixed_point(tree) -> None:  # type: ignore[no-untyped-def]
    text = to_text(tree)
    assert to_text(parse(text)) == text
