"""Rewrite a tree into primitives only: inline library calls, replace integrals
that have a closed form.

DESIGN.md, "The oracle": the oracle, the boundary finder and the tolerance model
all work on primitives (`functions.PRIMITIVES`); this module is where a call of
another operator (``Sigmoid(...)``, ``HardSigmoid(x, Alpha, Beta)``) or the erf
page's integral becomes one.  Pure tree rewriting, no numpy.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace

from dmlconform.formula.functions import LIBRARY, LibraryFunction
from dmlconform.formula.parser import parse
from dmlconform.formula.tree import (
    Assign,
    Binary,
    Branch,
    Call,
    Conditional,
    Expr,
    FormulaTree,
    Integral,
    Name,
    Num,
    Piecewise,
    Unary,
    Value,
    names,
)


def expand(tree: FormulaTree, library: Mapping[str, LibraryFunction] | None = None) -> FormulaTree:
    """``tree`` with every library call inlined and every known integral in
    closed form.  Calls of unknown functions stay as they are."""
    lib = LIBRARY if library is None else library
    statements = tuple(
        replace(s, value=expand_value(s.value, lib)) if isinstance(s, Assign) else s
        for s in tree.statements
    )
    return FormulaTree(statements)


def expand_value(value: Value, library: Mapping[str, LibraryFunction]) -> Value:
    if isinstance(value, Piecewise):
        return Piecewise(tuple(
            Branch(expand_expr(b.value, library), None if b.cond is None else expand_expr(b.cond, library), b.note)
            for b in value.branches
        ))
    return expand_expr(value, library)


def expand_expr(e: Expr, library: Mapping[str, LibraryFunction]) -> Expr:
    """Bottom-up rewrite of one expression."""
    if isinstance(e, Unary):
        return Unary(e.op, expand_expr(e.operand, library))
    if isinstance(e, Binary):
        return Binary(e.op, expand_expr(e.left, library), expand_expr(e.right, library))
    if isinstance(e, Conditional):
        return Conditional(*(expand_expr(x, library) for x in (e.cond, e.then, e.otherwise)))
    if isinstance(e, Integral):
        closed = closed_form(e)
        return e if closed is None else expand_expr(closed, library)
    if isinstance(e, Call):
        args = tuple(expand_expr(a, library) for a in e.args)
        if e.func in library:
            return _inline(library[e.func], args)
        return Call(e.func, args)
    return e


def _inline(fn: LibraryFunction, args: tuple[Expr, ...]) -> Expr:
    definition = _definition(fn.source)
    params = tuple(definition.params or ()) + fn.attributes
    if len(args) > len(params):
        args = args[: len(params)]
    mapping = dict(zip(params, args, strict=False))
    assert not isinstance(definition.value, Piecewise), "library functions are expressions"
    return substitute(definition.value, mapping)


@functools.cache
def _definition(source: str) -> Assign:
    return parse(source).main


def substitute(e: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """``e`` with every free ``Name`` in ``mapping`` replaced."""
    if isinstance(e, Name):
        return mapping.get(e.id, e)
    if isinstance(e, Unary):
        return Unary(e.op, substitute(e.operand, mapping))
    if isinstance(e, Binary):
        return Binary(e.op, substitute(e.left, mapping), substitute(e.right, mapping))
    if isinstance(e, Conditional):
        return Conditional(*(substitute(x, mapping) for x in (e.cond, e.then, e.otherwise)))
    if isinstance(e, Call):
        return Call(e.func, tuple(substitute(a, mapping) for a in e.args))
    if isinstance(e, Integral):
        inner = {k: v for k, v in mapping.items() if k != e.var}
        return Integral(e.var, substitute(e.lower, inner), substitute(e.upper, inner), substitute(e.body, inner))
    return e


def closed_form(node: Integral) -> Expr | None:
    """The one integral the docs use: integrate(t = 0 to u, exp(-(t^2))) is
    sqrt(pi) / 2 * erf(u).  Other integrals have no closed form here."""
    t = Name(node.var)
    square = Binary("^", t, Num("2"))
    body_ok = node.body in (Call("exp", (Unary("-", square),)), Call("exp", (Unary("-", Binary("*", t, t)),)))
    if node.lower == Num("0") and body_ok and node.var not in _free(node.upper):
        half_root_pi = Binary("/", Call("sqrt", (Name("pi"),)), Num("2"))
        return Binary("*", half_root_pi, Call("erf", (node.upper,)))
    return None


def _free(e: Expr) -> frozenset[str]:
    return names(e)
