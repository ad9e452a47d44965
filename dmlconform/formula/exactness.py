"""What a batch's values and attributes settle about the readings of an
ambiguity, so that those readings cost no evaluation (`families.elementwise.readings`,
issue #22 item 5): whether a formula on integer tensors computes exactly
in a float type (`exact_range`: then float32 and float64 give the exact
result), and whether two branches can hold at one element (`may_overlap`:
else their order changes nothing).

A FLOAT attribute is a float32 value, an integer input an integer: both are
exact in float64, and in float32 below 2^24.  Rounding enters only where an
operation's result is not representable, so it suffices that every value
the formula computes is.  Each node gets a `Span`: an interval holding its
values on the batch and a power of two that divides them all (its grain,
the lowest bit: 1 for integers, 2^-20 for an attribute of 2^-20).  A value
is representable with ``p`` bits of mantissa when its magnitude over the
grain is below 2^p.  Sums, differences, products, negation, abs, min, max,
clamp and comparisons are followed; anything else (a division, pow, a
rounding function, a transcendental one, a decimal literal such as 0.1)
proves nothing, and the caller evaluates.  Conservative: an interval over
the branches' values ignores their conditions, so an unproven batch is
simply evaluated as before.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.formula.boundaries import linear
from dmlconform.formula.tree import (
    Binary,
    Call,
    Conditional,
    FormulaTree,
    Name,
    Node,
    Num,
    Piecewise,
    Unary,
    names,
    walk,
)

_COMPARISONS = frozenset({"<", ">", "<=", ">=", "==", "!="})
_MINMAX = frozenset({"min", "max", "clamp"})


@dataclass(frozen=True, slots=True)
class Span:
    """Where a node's values lie: within [lo, hi], each a multiple of
    ``grain`` (None: every value is 0)."""

    lo: Fraction
    hi: Fraction
    grain: Fraction | None

    def fits(self, bits: int) -> bool:
        """Whether every value is representable with ``bits`` of mantissa."""
        return self.grain is None or max(abs(self.lo), abs(self.hi)) < self.grain * 2 ** bits


def exact_range(tree: FormulaTree, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any],
                bits: int) -> Span | None:
    """The `Span` of the result of a one-statement ``tree`` on integer
    ``chunk`` and ``attrs`` when every value it computes fits ``bits`` of
    mantissa (24: float32, 53: float64); None when that is not proven."""
    if len(tree.statements) != 1 or len(tree.assignments) != 1:
        return None
    if not all(a.dtype.kind in "iu" for a in chunk.values()):
        return None
    return _span(tree.assignments[0].value, chunk, attrs, bits)


def _span(node: Node, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any], bits: int) -> Span | None:
    """`exact_range` of one node (None: not proven), each child checked to fit."""
    found = _node(node, chunk, attrs, bits)
    return found if found is not None and found.fits(bits) else None


def _node(node: Node, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any], bits: int) -> Span | None:
    if isinstance(node, Name):
        return _leaf(node.id, chunk, attrs)
    if isinstance(node, Num):
        return _constant(node.value)
    if isinstance(node, (Piecewise, Conditional)):
        return _choice(node, chunk, attrs, bits)
    parts = [_span(c, chunk, attrs, bits) for c in _operands(node)]
    if any(p is None for p in parts) or not parts:
        return None
    spans = [p for p in parts if p is not None]
    if isinstance(node, Unary) and node.op == "-":
        return Span(-spans[0].hi, -spans[0].lo, spans[0].grain)
    if isinstance(node, Binary) and node.op in _COMPARISONS:
        return Span(Fraction(0), Fraction(1), Fraction(1))
    if isinstance(node, Binary) and node.op in ("+", "-"):
        a, b = spans
        lo, hi = (a.lo + b.lo, a.hi + b.hi) if node.op == "+" else (a.lo - b.hi, a.hi - b.lo)
        return Span(lo, hi, _finest(a.grain, b.grain))
    if isinstance(node, Binary) and node.op == "*":
        a, b = spans
        corners = (a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)
        grain = None if a.grain is None or b.grain is None else a.grain * b.grain
        return Span(min(corners), max(corners), grain)
    if isinstance(node, Call) and (node.func in _MINMAX or node.func == "abs"):
        return _hull(spans, absolute=node.func == "abs")
    return None


def _operands(node: Node) -> tuple[Node, ...]:
    """The operands of the nodes `_node` follows (none for the others)."""
    if isinstance(node, Unary) and node.op == "-":
        return (node.operand,)
    if isinstance(node, Binary) and (node.op in _COMPARISONS or node.op in ("+", "-", "*")):
        return (node.left, node.right)
    if isinstance(node, Call) and (node.func in _MINMAX or node.func == "abs"):
        return node.args
    return ()


def _choice(node: Piecewise | Conditional, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any],
            bits: int) -> Span | None:
    """Every condition exact, the values' hull (conditions aside)."""
    if isinstance(node, Piecewise):
        conds = [b.cond for b in node.branches if b.cond is not None]
        values = [b.value for b in node.branches]
    else:
        conds, values = [node.cond], [node.then, node.otherwise]
    if any(_span(c, chunk, attrs, bits) is None for c in conds):
        return None
    spans = [_span(v, chunk, attrs, bits) for v in values]
    if any(s is None for s in spans):
        return None
    return _hull([s for s in spans if s is not None], absolute=False)


def _hull(spans: list[Span], *, absolute: bool) -> Span:
    """The interval holding every span (of their magnitudes for abs), the finest grain."""
    lo, hi = min(s.lo for s in spans), max(s.hi for s in spans)
    if absolute:
        lo, hi = (Fraction(0) if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))
    grain = None
    for s in spans:
        grain = _finest(grain, s.grain)
    return Span(lo, hi, grain)


def _leaf(name: str, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any]) -> Span | None:
    """An integer input's range (grain 1) or an attribute's float32 value."""
    if name in chunk:
        values = chunk[name]
        if not values.size:
            return None
        return Span(Fraction(int(values.min())), Fraction(int(values.max())), Fraction(1))
    value = attrs.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Fraction, np.number)):
        return None
    try:
        as_float = float(Fraction(value)) if isinstance(value, str) else float(value)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if not np.isfinite(np.float32(as_float)):
        return None
    whole = isinstance(value, (int, np.integer, Fraction))  # an exact value, as the oracle takes it
    return _constant(Fraction(value) if isinstance(value, Fraction) else Fraction(int(value)) if whole
                     else Fraction(float(np.float32(as_float))))


def _constant(value: Fraction) -> Span | None:
    """A number's span: its lowest set bit as the grain (None for a decimal
    that no float holds, such as 0.1)."""
    if value == 0:
        return Span(value, value, None)
    denominator = value.denominator
    if denominator & (denominator - 1):
        return None
    numerator = abs(value.numerator)
    return Span(value, value, Fraction(numerator & -numerator, denominator))  # n & -n: n's lowest set bit


def _finest(a: Fraction | None, b: Fraction | None) -> Fraction | None:
    """The grain of a sum: the smaller power of two (None is 0's: no constraint)."""
    if a is None or b is None:
        return a if b is None else b
    return min(a, b)


def may_overlap(tree: FormulaTree, inputs: frozenset[str], attrs: Mapping[str, Any]) -> bool:
    """Whether two conditional branches of a piecewise definition can hold
    at one element with these ``attrs`` (then the order they are tested in
    decides).  Proven impossible only where every condition compares two
    sides linear in one and the same input (`boundaries.linear`): each is
    then a half-line of the real numbers, and two half-lines meet unless
    they point apart with a gap (Shrink: x > Threshold and x < -Threshold
    meet only for Threshold < 0).  Anything else may overlap."""
    consts = {}
    for name in attrs:
        span = _leaf(name, {}, attrs)
        if span is not None and span.lo == span.hi:
            consts[name] = span.lo
    for assign in tree.assignments:
        for node in walk(assign.value):
            if isinstance(node, Piecewise):
                lines = [_half_line(b.cond, inputs, consts) for b in node.branches if b.cond is not None]
                if any(line is None for line in lines) or len({line[0] for line in lines if line}) > 1:
                    return True
                if any(_meet(a, b) for a, b in itertools.combinations([x for x in lines if x], 2)):
                    return True
    return False


#: A condition as the set of inputs it holds for: (input, which side: +1 above
#: the bound, -1 below, 0 everywhere or nowhere, the bound, whether it is closed).
_HalfLine = tuple[str, int, Fraction, bool]


def _half_line(cond: Node, inputs: frozenset[str], consts: Mapping[str, Fraction]) -> _HalfLine | None:
    """``cond`` as a `_HalfLine`, or None where it is not ``linear cmp linear`` in one input."""
    if not (isinstance(cond, Binary) and cond.op in ("<", ">", "<=", ">=")):
        return None
    used = names(cond) & inputs
    if len(used) != 1:
        return None
    (var,) = used
    form = linear(Binary("-", cond.left, cond.right), var, consts)
    if form is None:
        return None
    slope, offset = form
    above = cond.op in (">", ">=")
    if slope == 0:  # holds everywhere or nowhere: everywhere meets everything
        return var, 0, Fraction(0), bool(offset > 0 if above else offset < 0) or (cond.op in ("<=", ">=")
                                                                                  and offset == 0)
    side = 1 if above == (slope > 0) else -1
    return var, side, -offset / slope, cond.op in ("<=", ">=")


def _meet(a: _HalfLine, b: _HalfLine) -> bool:
    """Whether two half-lines (of one input) share a point."""
    if a[1] == 0 or b[1] == 0:
        return (a[3] if a[1] == 0 else True) and (b[3] if b[1] == 0 else True)
    if a[1] == b[1]:
        return True
    low, high = (a, b) if a[1] == 1 else (b, a)  # low: x above its bound; high: x below its bound
    return low[2] < high[2] or (low[2] == high[2] and low[3] and high[3])
