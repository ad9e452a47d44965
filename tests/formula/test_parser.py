"""Parser and printer: the docs' formulas parse as written, errors point at the
column, and ``parse(to_text(tree)) == tree`` for every tree."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings

from dmlconform.errors import FormulaError
from dmlconform.formula import parse, to_text
from dmlconform.formula.tree import Assign, Binary, Branch, Call, Comment, Name, Num, Piecewise, Unary
from dmlconform.limits import MAX_FORMULA_DEPTH
from tests.conftest import REPO
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


# --- nesting depth (issue #20): a located error, never a RecursionError ---------------

#: Formula shapes that nest one level more per step, by the way they nest.
DEEP_SHAPES = {
    "brackets": lambda n: "(" * n + "x" + ")" * n,
    "right operands": lambda n: "x + (" * n + "x" + ")" * n,
    "a long sum": lambda n: " + ".join(["x"] * n),
    "unary minus": lambda n: "-" * n + "x",
    "powers": lambda n: "^".join(["x"] * n),
    "conditionals": lambda n: "x > 0 ? " * n + "x" + " : 1" * n,
    "library calls": lambda n: "Sigmoid(" * n + "x" + ")" * n,
    "calls with arguments": lambda n: "HardSigmoid(" * n + "x" + ", 0.2, 0.5)" * n,
    "mixed": lambda n: "(x * Sigmoid(-" * n + "x" + "))" * n,
}


def _piecewise(expr: str) -> str:
    return f"f(x) = {expr}, if x > Threshold\n       x + Bias, if x < -Threshold\n       0, otherwise"


def _deepest(shape: str) -> int:
    """The largest n for which the shape still parses (looked for up to 4
    times the limit: a parser without one must fail the tests, not loop)."""
    for n in range(1, 4 * MAX_FORMULA_DEPTH):
        try:
            parse(_piecewise(DEEP_SHAPES[shape](n + 1)))
        except FormulaError:
            return n
    raise AssertionError(f"{shape}: no nesting limit up to {4 * MAX_FORMULA_DEPTH} levels")


@pytest.mark.parametrize("shape", sorted(DEEP_SHAPES))
def test_nesting_past_the_limit_is_a_located_error(shape: str) -> None:
    with pytest.raises(FormulaError) as info:
        parse(_piecewise(DEEP_SHAPES[shape](2000)), origin="specs/X.yaml")
    assert info.value.message == (
        f"nesting deeper than {MAX_FORMULA_DEPTH} levels (brackets, operators, calls and branches inside one "
        "another); split the formula into named steps (M = ...)")
    assert info.value.path == "specs/X.yaml" and info.value.line == 1 and info.value.column >= 1


def test_nesting_error_points_at_what_nests_too_deep() -> None:
    with pytest.raises(FormulaError) as info:
        parse("f(x) = " + "(" * 40 + "x" + ")" * 40)
    assert (info.value.line, info.value.column) == (1, 8 + MAX_FORMULA_DEPTH)  # the 33rd bracket


def test_a_long_chain_is_refused_at_its_statement() -> None:
    """``x + x + ...`` is built by a loop, not by recursion: the tree's depth
    is checked once the statement is read, and the error points at it."""
    with pytest.raises(FormulaError) as info:
        parse("M = 1\n  f(x) = " + " + ".join(["x"] * 100), first_line=10)
    assert (info.value.line, info.value.column) == (11, 3)


@pytest.mark.parametrize("shape", sorted(DEEP_SHAPES))
def test_formulas_at_the_limit_survive_every_walker(shape: str) -> None:
    """At the limit, with a third of Python's recursion limit left (see
    limits.MAX_FORMULA_DEPTH), nothing that walks the tree recurses too deep:
    classification (with its expansion of library calls), printing, the
    linter's formula rules (boundaries, overlaps, NaN) and default tolerances."""
    from dmlconform.formula import classify
    from dmlconform.formula.expand import expand
    from dmlconform.formula.tolerance import default_ulp
    from dmlconform.lint.checks import lint_text
    from dmlconform.spec.model import DataType

    text = _piecewise(DEEP_SHAPES[shape](_deepest(shape)))
    spec = _spec_with_parsed(text)
    with _recursion_limit(500):
        tree = parse(text)
        assert parse(to_text(tree)) == tree
        expanded = expand(tree)
        assert to_text(expanded)
        assert classify(text, ["InputTensor", "OutputTensor", "Bias", "Threshold"])
        default_ulp(expanded, DataType.FLOAT32)
        findings = lint_text(spec, path="X.yaml")
    assert not [f for f in findings if f.code in ("DML001", "DML002", "DML121")]


def test_the_limit_leaves_room_for_real_formulas() -> None:
    """Each shape takes at least twice the docs' deepest formula (8 levels)."""
    assert min(_deepest(shape) for shape in DEEP_SHAPES if shape != "mixed") >= 14


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(DEEP_SHAPES))
def test_formulas_at_the_limit_run(shape: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The oracle and the case generator at the limit, through `run`."""
    from click.testing import CliRunner

    from dmlconform.cli import main

    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "ACTIVATION_SHRINK.yaml").write_text(
        _spec_with_parsed(_piecewise(DEEP_SHAPES[shape](_deepest(shape)))))
    with _recursion_limit(500):
        result = CliRunner().invoke(main, ["run", "--specs", str(tmp_path / "specs"), "--dtype", "FLOAT32",
                                           "--no-isolate", "-j", "1", "--no-progress", "-o", str(tmp_path / "r")])
    assert result.exit_code in (0, 1), result.output
    assert "Recursion" not in result.output and "internal error" not in result.output


def _spec_with_parsed(formula: str) -> str:
    text = (REPO / "specs" / "ACTIVATION_SHRINK.yaml").read_text()
    start = text.index("  parsed: |-\n") + len("  parsed: |-\n")
    end = text.index("  evaluable:", start)
    return text[:start] + "".join(f"    {line}\n" for line in formula.splitlines()) + text[end:]


@contextmanager
def _recursion_limit(limit: int) -> Iterator[None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
