"""The formula tree: frozen records for the harness's expression language.

DESIGN.md, "The spec" (``formula.parsed``) and "The oracle": the doc's formula
text becomes this tree in `formula.parse`, goes back to text in
`formula.to_text`, and is evaluated by `families.elementwise.formula_oracle`.  Nodes hold no source
positions, so two parses of equivalent text compare equal; that equality is the
round-trip property ``parse(to_text(tree)) == tree``.

Numbers keep the text they were written with (``Num("0.5")``) and give their
exact rational value on demand, so ``1/6`` or ``0.2`` are never rounded before
the oracle decides how.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction


@dataclass(frozen=True, slots=True)
class Num:
    """A non-negative numeric literal, kept as written (``"1.0"``, ``"2e-3"``)."""

    text: str

    @property
    def value(self) -> Fraction:
        """The exact rational value of the decimal text."""
        return _fraction(self.text)


@dataclass(frozen=True, slots=True)
class Name:
    """A variable: an input, an attribute, a let-bound name, a constant (``pi``)
    or an enum constant (``DML_IS_INFINITY_MODE_POSITIVE``)."""

    id: str


@dataclass(frozen=True, slots=True)
class Unary:
    """``-x``, ``+x``, ``!x`` (logical not), ``~x`` (bitwise not)."""

    op: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class Binary:
    """Arithmetic (``+ - * / % ^``), comparison, logical (``&& ||``), bitwise
    (``& | << >>``).  ``^`` is the power operator, as in the docs' math."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Call:
    """``func(args...)``; the name is kept as written (``Sigmoid``, ``ln``)."""

    func: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Conditional:
    """``cond ? then : otherwise``."""

    cond: Expr
    then: Expr
    otherwise: Expr


@dataclass(frozen=True, slots=True)
class Integral:
    """``integrate(var = lower to upper, body)``, as the erf page writes it."""

    var: str
    lower: Expr
    upper: Expr
    body: Expr


Expr = Num | Name | Unary | Binary | Call | Conditional | Integral


@dataclass(frozen=True, slots=True)
class Branch:
    """One line of a piecewise definition; ``cond`` None is ``otherwise``."""

    value: Expr
    cond: Expr | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Piecewise:
    """Branches in doc order; the first whose condition holds wins."""

    branches: tuple[Branch, ...]


Value = Expr | Piecewise


@dataclass(frozen=True, slots=True)
class Assign:
    """``target(params) op value``: ``f(x) = ...`` defines the formula,
    ``M = ...`` binds a name, ``X -= ...`` updates one.  ``params`` is None
    for a plain name on the left."""

    target: str
    params: tuple[str, ...] | None
    op: str
    value: Value
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Comment:
    """A whole-line ``// comment`` between statements."""

    text: str


Statement = Assign | Comment


@dataclass(frozen=True, slots=True)
class FormulaTree:
    """A parsed formula block: statements in order, at least one of them an
    assignment.

    ``assignments`` and ``main`` are worked out once, here, rather than at
    every read (the oracle reads them on every evaluation); equality and the
    hash are structural, ``statements`` alone."""

    statements: tuple[Statement, ...]
    #: The `Assign` statements, in order.
    assignments: tuple[Assign, ...] = field(init=False, repr=False, compare=False)
    #: The defining statement: the function-style one (``f(x) = ...``) if
    #: there is one, else the last assignment.
    main: Assign = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        assigns = tuple(s for s in self.statements if isinstance(s, Assign))
        if not assigns:
            raise ValueError("a formula tree needs at least one assignment such as 'f(x) = ...'")
        object.__setattr__(self, "assignments", assigns)
        object.__setattr__(self, "main", next((a for a in assigns if a.params is not None), assigns[-1]))


Node = Expr | Piecewise | Branch


def children(node: Node) -> tuple[Node, ...]:
    """Direct sub-nodes, in reading order."""
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Conditional):
        return (node.cond, node.then, node.otherwise)
    if isinstance(node, Integral):
        return (node.lower, node.upper, node.body)
    if isinstance(node, Piecewise):
        return node.branches
    if isinstance(node, Branch):
        return (node.value,) if node.cond is None else (node.value, node.cond)
    return ()


def walk(node: Node) -> Iterator[Node]:
    """Pre-order traversal of ``node`` and everything under it."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def names(node: Node) -> frozenset[str]:
    """Every free ``Name`` under ``node`` (integration variables excluded)."""
    bound = {n.var for n in walk(node) if isinstance(n, Integral)}
    return frozenset(n.id for n in walk(node) if isinstance(n, Name) and n.id not in bound)


def calls(node: Node) -> frozenset[str]:
    """Every function name called under ``node``."""
    return frozenset(n.func for n in walk(node) if isinstance(n, Call))


def notes(tree: FormulaTree) -> tuple[str, ...]:
    """Every comment text of the tree: whole-line, statement and branch notes."""
    out: list[str] = []
    for s in tree.statements:
        if isinstance(s, Comment):
            out.append(s.text)
            continue
        if s.note:
            out.append(s.note)
        if isinstance(s.value, Piecewise):
            out.extend(b.note for b in s.value.branches if b.note)
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _fraction(text: str) -> Fraction:
    return Fraction(text.rstrip("."))


def otherwise_branches(tree: FormulaTree) -> tuple[Branch, ...]:
    """The ``otherwise`` branches (no condition) of every piecewise definition."""
    return tuple(b for a in tree.assignments for n in walk(a.value) if isinstance(n, Piecewise)
                 for b in n.branches if b.cond is None)
