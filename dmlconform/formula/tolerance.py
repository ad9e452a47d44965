"""Default tolerances computed from the tree, not from a table per operator.

DESIGN.md, "The spec" (``tolerance``) and "Comparison": the strict ULP budget of
a formula is what an honest implementation in the target type can lose:

* a formula of exact operations only (comparisons, selection, abs, min/max,
  negation, floor...) gets 0: sign, relu, clip, the comparisons are exact;
* otherwise half an ULP for the final rounding plus, for every operation on a
  value that depends on an input, 1 ULP per arithmetic operation (``a*b + c``
  counts once: it may be one fused multiply-add), 1 for sqrt and 2 for a
  transcendental call, rounded up: softsign 3, hard sigmoid 2, swish 7.

Budgets are in ULPs of the target type, FLOAT16 ones for FLOAT16.  Subtrees
without inputs are constants an implementation folds once, at no cost.  Integer
types are always exact.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from dmlconform.formula.functions import Kind, primitive
from dmlconform.formula.tree import Binary, Branch, Call, Expr, FormulaTree, Piecewise, Value, children, names, notes

#: ULPs per operation kind.
ARITHMETIC_ULP = 1.0
ROUNDED_ULP = 1.0
TRANSCENDENTAL_ULP = 2.0
_EXACT_BINARY = frozenset({"==", "!=", "<", "<=", ">", ">=", "&&", "||", "&", "|", "<<", ">>"})
_SIGNED_ZERO = re.compile(r"negative zero|-0\b|signed zero", re.I)


def default_ulp(tree: FormulaTree, dtype: Any = None, *, inputs: Iterable[str] | None = None) -> int:
    """The strict ULP budget of ``tree`` (expanded, see `formula.expand`) for
    the target type ``dtype`` (a numpy dtype, a `DataType` or None for a
    float): 0 for integer types.  ``inputs`` are the names that vary per
    element (default: the main statement's parameters, or every free name)."""
    if dtype is not None and _is_integer(dtype):
        return 0
    varying = _varying(tree, inputs)
    cost = sum(_cost(s.value, varying) for s in tree.assignments)
    return 0 if cost == 0 else math.ceil(0.5 + cost)


def _is_integer(dtype: Any) -> bool:
    kind_of = getattr(dtype, "is_float", None)  # a spec DataType
    if kind_of is not None and not callable(kind_of):
        return not kind_of
    import numpy as np  # noqa: PLC0415 - numpy (~0.1 s): extract imports this module and needs numpy nowhere else

    return np.dtype(dtype).kind in "iub"


def _varying(tree: FormulaTree, inputs: Iterable[str] | None) -> frozenset[str]:
    if inputs is not None:
        base = set(inputs)
    elif tree.main.params is not None:
        base = set(tree.main.params)
    else:
        base = set().union(*(names(s.value) for s in tree.assignments))
    for s in tree.assignments:  # let-bound names that depend on inputs vary too
        if s.params is None and names(s.value) & base:
            base.add(s.target)
    return frozenset(base)


def _cost(node: Value, varying: frozenset[str]) -> float:
    if isinstance(node, Piecewise):
        return max(_cost(b.value, varying) for b in node.branches)
    if not (names(node) & varying):
        return 0.0
    own = _own(node)
    if isinstance(node, Binary) and node.op in ("+", "-"):
        fused = next((c for c in (node.left, node.right) if isinstance(c, Binary) and c.op == "*"), None)
        if fused is not None and names(fused) & varying:
            return own + _cost(fused.left, varying) + _cost(fused.right, varying) + _cost(_other(node, fused), varying)
    return own + sum((_cost(c, varying) for c in children(node) if not isinstance(c, Branch)), 0.0)


def _other(node: Binary, child: Expr) -> Expr:
    return node.right if node.left is child else node.left


def _own(node: Expr) -> float:
    if isinstance(node, Binary):
        return 0.0 if node.op in _EXACT_BINARY else (TRANSCENDENTAL_ULP if node.op == "^" else ARITHMETIC_ULP)
    if isinstance(node, Call):
        p = primitive(node.func)
        if p is None or p.kind is Kind.EXACT:
            return 0.0
        return ROUNDED_ULP if p.kind is Kind.ROUNDED else TRANSCENDENTAL_ULP
    return 0.0


def signed_zero(tree: FormulaTree) -> bool:
    """Whether the doc speaks of the sign of zero (the sign page's "This
    includes negative zero"): only then is the sign of a zero result checked."""
    return any(_SIGNED_ZERO.search(n) for n in notes(tree))
