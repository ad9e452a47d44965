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
    Binary, Call, Conditional, Expr, FormulaTree, Name, Num, Piecewise, Unary, Value,
)

PRECISION = 256


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

    ctx = mp_context(PRECISION)
    coords = np.unravel_index(index, shape)
    picked = {n: np.broadcast_to(v, shape)[coords] if isinstance(v, np.ndarray) and v.ndim else v
              for n, v in env.items()}  # every element's operands at once
    out = np.zeros(index.size, dtype=dtype)
    done = np.zeros(index.size, dtype=bool)
    exacts: list[tuple[int, Any]] = []
    for k in range(index.size):  # rare elements only (module docstring)
        scalars = {n: v[k] if isinstance(v, np.ndarray) and v.ndim else v for n, v in picked.items()}
        try:
            exact = _Scalar(ctx, scalars, minmax).run(tree, output)
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
        if not isinstance(exact, str) and not ctx.isnan(exact) and exact == 0:
            if zeros:
                out[k], done[k] = 0, True
            continue  # an exact zero: the float64 result has the IEEE sign
        exacts.append((k, exact))
    if exacts:
        at = np.asarray([k for k, _ in exacts])
        out[at] = _round(ctx, [e for _, e in exacts], dtype)
        done[at] = True
    return out, done


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


class _Scalar:
    """The tree on mpmath scalars: the same semantics as `formula.evaluate`."""

    def __init__(self, ctx: Any, env: Mapping[str, Any], minmax: str) -> None:
        self.ctx = ctx
        self.env = {n: self.lift(v) for n, v in env.items()}
        self.minmax = minmax

    def lift(self, v: Any) -> Any:
        if isinstance(v, str):
            return v
        if isinstance(v, Fraction):
            return self.ctx.mpf(v.numerator) / v.denominator
        return self.ctx.mpf(float(v)) if not isinstance(v, (bool, np.bool_)) else bool(v)

    def run(self, tree: FormulaTree, output: str | None) -> Any:
        result = None
        for s in tree.assignments:
            val = self.value(s.value)
            if s.op != "=":
                val = self.binary(s.op[0], self.env[s.target], val)
            if s.params is None:
                self.env[s.target] = val
            if (s.target == output) if output is not None else (s is tree.main):
                result = val
        return result

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
            return self.lift(e.value)
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
