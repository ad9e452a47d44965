"""High-precision evaluation for the few elements where float64 is not enough.

DESIGN.md, "The oracle" (mpmath where float64 is not enough).  The float64
evaluation carries an error bound; where that bound reaches a rounding boundary
of the target type, the one rounding could go either way, and only those
elements are recomputed here with mpmath at 256 bits and rounded exactly.  They
are rare (a few per 2**28 random values), so a scalar loop over them is cheap;
the array path never comes here.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from dmlconform.formula.printer import expr_text
from dmlconform.formula.rounding import neighbours
from dmlconform.formula.tree import (
    Binary, Call, Conditional, Expr, FormulaTree, Name, Num, Piecewise, Unary, Value, per_tree, walk,
)

PRECISION = 256
#: Functions that round to an integer: ``trunc(a / b)`` of float64 operands
#: has up to 1024 + 1074 bits before the point (1.8e308 / 5e-324), and the
#: remainder ``a - b * trunc(a / b)`` needs every one of them.
INTEGER_ROUNDING = frozenset({"floor", "ceil", "round", "trunc"})
#: Enough bits for the integer part of any quotient of float64 values, plus
#: `PRECISION` after the point.
WIDE_PRECISION = PRECISION + 1024 + 1074 + 64


@per_tree
def rounds_to_integer(tree: FormulaTree) -> bool:
    """Whether ``tree`` calls floor, ceil, round or trunc."""
    return any(isinstance(n, Call) and n.func.lower() in INTEGER_ROUNDING
               for s in tree.assignments for n in walk(s.value))


def precision(tree: FormulaTree) -> int:
    """The working precision of the exact evaluation of ``tree``."""
    return WIDE_PRECISION if rounds_to_integer(tree) else PRECISION


def refine(tree: FormulaTree, env: Mapping[str, Any], index: np.ndarray, shape: tuple[int, ...],
           dtype: np.dtype, *, minmax: str, output: str | None = None,
           zeros: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Exactly rounded values of ``tree`` at the flat ``index`` positions.
    ``env`` maps names to float64 arrays (broadcastable to ``shape``) or
    scalars.  Returns (values in ``dtype``, mask of positions refined; a
    position whose exact evaluation fails keeps its float64 value).  An exact
    zero keeps the float64 result's IEEE sign, unless ``zeros`` (the float64
    result is not finite, so it has none): then it is +0."""
    from dmlconform.formula.functions import mp_context

    ctx = mp_context(precision(tree))
    coords = np.unravel_index(index, shape)
    picked = {n: np.broadcast_to(v, shape)[coords] if isinstance(v, np.ndarray) and v.ndim else v
              for n, v in env.items()}  # every element's operands at once
    out = np.zeros(index.size, dtype=dtype)
    done = np.zeros(index.size, dtype=bool)
    rows, inverse = _distinct(picked, index.size)
    exacts = _exact_values(ctx, tree, picked, rows, minmax, output)
    kept: list[int] = []
    for r, exact in enumerate(exacts):  # distinct rare elements only (module docstring)
        if exact is _FAILED:
            continue
        if not isinstance(exact, str) and not ctx.isnan(exact) and exact == 0:
            if zeros:
                at = inverse == r
                out[at], done[at] = 0, True
            continue  # an exact zero: the float64 result has the IEEE sign
        kept.append(r)
    if kept:
        rounded = np.zeros(len(exacts), dtype=dtype)
        rounded[kept] = _round(ctx, [exacts[r] for r in kept], dtype)
        hit = np.zeros(len(exacts), dtype=bool)
        hit[kept] = True
        at = hit[inverse]
        out[at] = rounded[inverse[at]]
        done[at] = True
    return out, done


#: A failed exact evaluation (division by zero, a domain error).
_FAILED = object()
_MISSING = object()
#: Exact values already computed, per formula tree (held, so its id stays
#: unique): identical operands recur across the cases of a group (edge values
#: such as +-max, +-inf and subnormals are in every case).  Bounded.
_MEMO: dict[int, tuple[FormulaTree, dict[tuple[Any, ...], Any]]] = {}
MEMO_LIMIT = 1 << 16


def _distinct(picked: Mapping[str, Any], size: int) -> tuple[np.ndarray, np.ndarray]:
    """The first position of each distinct row of operands (by bit pattern,
    as `_Scalar.lift` sees them) and, per position, the index of its row."""
    columns = [np.asarray(v).astype(np.float64).view(np.uint64)
               for v in picked.values() if isinstance(v, np.ndarray) and v.ndim]
    if not columns or size <= 1:
        return np.arange(size), np.arange(size)
    matrix = np.stack(columns, axis=1)
    _, first, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _exact_values(ctx: Any, tree: FormulaTree, picked: Mapping[str, Any], rows: np.ndarray, minmax: str,
                  output: str | None) -> list[Any]:
    """The exact value (or `_FAILED`) at each of ``rows``, memoised."""
    arrays = {n for n, v in picked.items() if isinstance(v, np.ndarray) and v.ndim}
    fixed = tuple(sorted((n, _key(v)) for n, v in picked.items() if n not in arrays))
    entry = _MEMO.get(id(tree))
    if entry is None or entry[0] is not tree:
        if len(_MEMO) > 64:
            _MEMO.clear()
        entry = _MEMO[id(tree)] = (tree, {})
    memo = entry[1]
    names = sorted(arrays)
    lifted = {n: _lift(ctx, v) for n, v in picked.items() if n not in arrays}  # the same for every row
    values = []
    for k in rows.tolist():
        scalars = {n: picked[n][k] for n in names}
        key = (minmax, fixed, tuple(_key(scalars[n]) for n in names))
        results = memo.get(key)
        if results is None:  # every output of the tree at once: a case with several asks for each
            try:
                results = _Scalar(ctx, scalars, minmax, lifted).run_all(tree)
            except (ZeroDivisionError, ValueError, OverflowError):
                results = {}
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[key] = results
        values.append(results.get(output, _FAILED) if results else _FAILED)
    return values


def _key(v: Any) -> Any:
    """A hashable key telling apart every value `_Scalar.lift` tells apart."""
    if isinstance(v, (str, Fraction)):
        return (type(v).__name__, v)
    if isinstance(v, (bool, np.bool_)):
        return ("bool", bool(v))
    return ("float", np.float64(v).view(np.uint64).item())


def _round(ctx: Any, exacts: list[Any], dtype: np.dtype) -> np.ndarray:
    """Nearest values of ``dtype`` to each of ``exacts``; ties to even.  The
    float64 guess and its two neighbours are found for all at once; mpmath
    picks the nearest of the three per value."""
    from dmlconform.compare import finfo, ordered_bits
    from dmlconform.formula.rounding import to_float

    info = finfo(dtype)
    largest = ctx.mpf(float(info.max))
    half_top = ctx.ldexp(1, int(info.maxexp) - 2 - int(info.nmant))  # max + half its ULP overflows
    guess = to_float(np.asarray([float(e) for e in exacts], dtype=np.float64), dtype)
    candidates = (guess, neighbours(guess, -1), neighbours(guess, 1))
    odd = [(ordered_bits(c) & 1).astype(bool) for c in candidates]
    out = guess.copy()
    for k, exact in enumerate(exacts):
        if ctx.isnan(exact) or ctx.isinf(exact):
            out[k] = np.asarray([float(exact)]).astype(dtype)[0]
        elif abs(exact) >= largest + half_top:
            out[k] = np.asarray([math.copysign(math.inf, float(ctx.sign(exact)))]).astype(dtype)[0]
        else:
            finite = [j for j, c in enumerate(candidates) if math.isfinite(float(c[k]))]
            best = min(finite, key=lambda j: (abs(ctx.mpf(float(candidates[j][k])) - exact), bool(odd[j][k])))
            out[k] = candidates[best][k]
    return out


#: Literal numbers lifted to mpmath, per working precision (immutable values).
_LITERALS: dict[tuple[int, Any], Any] = {}


def _lift(ctx: Any, v: Any) -> Any:
    """``v`` as `_Scalar` computes with it: texts and booleans as they are,
    a Fraction to ``ctx``'s precision, a number as its float64 value."""
    if isinstance(v, str):
        return v
    if isinstance(v, Fraction):
        return ctx.mpf(v.numerator) / v.denominator
    return ctx.mpf(float(v)) if not isinstance(v, (bool, np.bool_)) else bool(v)


class _Scalar:
    """The tree on mpmath scalars: the same semantics as `formula.evaluate`."""

    def __init__(self, ctx: Any, env: Mapping[str, Any], minmax: str, lifted: Mapping[str, Any] | None = None) -> None:
        self.ctx = ctx
        self.env = dict(lifted or {})  # values already lifted
        self.env.update((n, _lift(ctx, v)) for n, v in env.items())
        self.minmax = minmax

    def lift(self, v: Any) -> Any:
        return _lift(self.ctx, v)

    def run(self, tree: FormulaTree, output: str | None) -> Any:
        return self.run_all(tree).get(output)

    def run_all(self, tree: FormulaTree) -> dict[str | None, Any]:
        """The last value assigned to each target, and under None the main
        assignment's value."""
        results: dict[str | None, Any] = {}
        for s in tree.assignments:
            val = self.value(s.value)
            if s.op != "=":
                val = self.binary(s.op[0], self.env[s.target], val)
            if s.params is None:
                self.env[s.target] = val
            results[s.target] = val
            if s is tree.main:
                results[None] = val
        return results

    def value(self, node: Value) -> Any:
        if isinstance(node, Piecewise):
            for b in node.branches:
                if b.cond is None or self.truth(self.expr(b.cond)):
                    return self.expr(b.value)
            return self.ctx.nan
        return self.expr(node)

    def truth(self, v: Any) -> bool:
        return bool(v) if isinstance(v, bool) else bool(v != 0)

    def number(self, v: Any) -> Any:
        return self.ctx.mpf(int(v)) if isinstance(v, bool) else v

    def expr(self, e: Expr) -> Any:
        if isinstance(e, Num):
            key = (self.ctx.prec, e.value)
            found = _LITERALS.get(key)
            if found is None:
                found = _LITERALS[key] = self.lift(e.value)
            return found
        if isinstance(e, Name):
            return self.env.get(e.id, self.ctx.pi if e.id == "pi" else e.id)
        if isinstance(e, Unary):
            v = self.expr(e.operand)
            return (not self.truth(v)) if e.op == "!" else (-self.number(v) if e.op == "-" else v)
        if isinstance(e, Binary):
            return self.binary(e.op, self.expr(e.left), self.expr(e.right))
        if isinstance(e, Conditional):
            return self.expr(e.then) if self.truth(self.expr(e.cond)) else self.expr(e.otherwise)
        if isinstance(e, Call):
            return self.call(e.func.lower(), [self.number(self.expr(a)) for a in e.args])
        raise ValueError(f"cannot evaluate {expr_text(e)} exactly")

    def binary(self, op: str, a: Any, b: Any) -> Any:
        if op in _COMPARE:
            if isinstance(a, str) or isinstance(b, str):
                return (a == b) == (op == "==")
            return bool(_COMPARE[op](a, b)) if not (self.ctx.isnan(a) or self.ctx.isnan(b)) else op == "!="
        if op == "&&":
            return self.truth(a) and self.truth(b)
        if op == "||":
            return self.truth(a) or self.truth(b)
        a, b = self.number(a), self.number(b)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "^":
            return self.real(self.ctx.power(a, b))
        raise ValueError(f"operator {op} has no exact evaluation")

    def call(self, name: str, args: list[Any]) -> Any:
        c = self.ctx
        if name in ("min", "max"):
            return self.pick(name, args)
        if name == "clamp":
            return self.pick("min", [self.pick("max", args[:2]), args[2]])
        table = {
            "abs": abs, "exp": c.exp, "ln": c.log, "log": c.log, "log2": lambda x: c.log(x, 2),
            "log10": c.log10, "sqrt": c.sqrt, "tanh": c.tanh, "sinh": c.sinh, "cosh": c.cosh,
            "asinh": c.asinh, "acosh": c.acosh, "atanh": c.atanh, "sin": c.sin, "cos": c.cos, "tan": c.tan,
            "asin": c.asin, "acos": c.acos, "atan": c.atan, "atan2": c.atan2, "erf": c.erf, "pow": c.power,
            "floor": c.floor, "ceil": c.ceil, "round": c.nint, "trunc": lambda x: c.floor(x) if x >= 0 else c.ceil(x),
            "sign": c.sign, "isinf": c.isinf, "isnan": c.isnan,
        }
        return self.real(table[name](*args))

    def real(self, v: Any) -> Any:
        """A complex result (sqrt or log of a negative number, a negative
        base to a fractional power) is NaN, as in IEEE arithmetic."""
        return self.ctx.nan if isinstance(v, self.ctx.mpc) else v

    def pick(self, name: str, args: list[Any]) -> Any:
        nans = [a for a in args if self.ctx.isnan(a)]
        if nans and self.minmax == "propagate":
            return self.ctx.nan
        rest = [a for a in args if not self.ctx.isnan(a)] or [self.ctx.nan]
        return max(rest) if name == "max" else min(rest)


_COMPARE = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
