"""`FormulaTree` back to text: the canonical form stored in ``formula.parsed``.

DESIGN.md, "The spec".  The printer writes the fewest parentheses that keep the
tree's shape, so ``parse(to_text(tree)) == tree`` for every tree (a hypothesis
property in ``tests/formula/test_printer.py``).  Piecewise definitions always
come out as ``value, if cond`` lines ending in ``value, otherwise``.
"""

from __future__ import annotations

from dmlconform.formula.parser import BINARY_PRECEDENCE, POWER_PRECEDENCE, UNARY_PRECEDENCE
from dmlconform.formula.tree import (
    Assign,
    Binary,
    Branch,
    Call,
    Comment,
    Conditional,
    Expr,
    FormulaTree,
    Integral,
    Name,
    Num,
    Piecewise,
    Unary,
)

_ATOM = 100
_CONDITIONAL = 0


def to_text(tree: FormulaTree) -> str:
    """The canonical text of ``tree``, one statement per line (no final newline)."""
    lines: list[str] = []
    for s in tree.statements:
        if isinstance(s, Comment):
            lines.append(f"// {s.text}".rstrip())
        else:
            lines.extend(_statement(s))
    return "\n".join(lines)


def expr_text(e: Expr) -> str:
    """The text of one expression (conditions, boundaries, findings)."""
    if isinstance(e, Num):
        return e.text
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Call):
        return f"{e.func}({', '.join(expr_text(a) for a in e.args)})"
    if isinstance(e, Integral):
        return f"integrate({e.var} = {expr_text(e.lower)} to {expr_text(e.upper)}, {expr_text(e.body)})"
    if isinstance(e, Unary):
        return e.op + _wrap(e.operand, _precedence(e.operand) < UNARY_PRECEDENCE)
    if isinstance(e, Conditional):
        cond = _wrap(e.cond, isinstance(e.cond, Conditional))
        return f"{cond} ? {expr_text(e.then)} : {expr_text(e.otherwise)}"
    return _binary(e)


def _binary(e: Binary) -> str:
    prec = _precedence(e)
    lp, rp = _precedence(e.left), _precedence(e.right)
    if e.op == "^":  # right-associative; the exponent is a unary-level operand
        left = _wrap(e.left, lp <= prec)
        right = _wrap(e.right, rp < UNARY_PRECEDENCE)
        return f"{left}^{right}"
    left = _wrap(e.left, lp < prec)
    right = _wrap(e.right, rp <= prec)
    return f"{left} {e.op} {right}"


def _precedence(e: Expr) -> int:
    if isinstance(e, Binary):
        return POWER_PRECEDENCE if e.op == "^" else BINARY_PRECEDENCE[e.op]
    if isinstance(e, Unary):
        return UNARY_PRECEDENCE
    if isinstance(e, Conditional):
        return _CONDITIONAL
    return _ATOM


def _wrap(e: Expr, parens: bool) -> str:
    text = expr_text(e)
    return f"({text})" if parens else text


def _statement(s: Assign) -> list[str]:
    head = s.target if s.params is None else f"{s.target}({', '.join(s.params)})"
    head = f"{head} {s.op} "
    if not isinstance(s.value, Piecewise):
        return [_with_note(head + expr_text(s.value), s.note)]
    indent = " " * len(head)
    return [
        _with_note((head if i == 0 else indent) + _branch(b), b.note)
        for i, b in enumerate(s.value.branches)
    ]


def _branch(b: Branch) -> str:
    value = _wrap(b.value, isinstance(b.value, Conditional))
    tail = "otherwise" if b.cond is None else f"if {expr_text(b.cond)}"
    return f"{value}, {tail}"


def _with_note(text: str, note: str | None) -> str:
    return f"{text}  // {note}" if note else text
