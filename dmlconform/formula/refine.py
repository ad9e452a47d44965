"""High-precision evaluation for the few elements where float64 is not enough.

DESIGN.md, "The oracle" (mpmath where float64 is not enough).  The float64
evaluation carries an error bound; where that bound reaches a rounding boundary
of the target type, the one rounding could go either way, and only those
elements are recomputed here with mpmath at 256 bits and rounded exactly.  They
are rare (a few per 2**28 random values) where float64 holds the formula well,
and each distinct row of operands is evaluated once, so a scalar loop over
them is cheap; the array path never comes here.  Where a formula cancels or
overflows (TANH's 1 - exp(-2x) for tiny x) they are not rare: at most
`limits.MAX_EXACT_ROWS` distinct rows are evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.compare import finfo, ordered_bits
from dmlconform.formula.functions import mp_context
from dmlconform.formula.printer import expr_text
from dmlconform.formula.rounding import midpoints, neighbours, to_float
from dmlconform.formula.tree import (
    Binary,
    Call,
    Conditional,
    Expr,
    FormulaTree,
    Name,
    Num,
    Piecewise,
    Unary,
    Value,
    walk,
)
from dmlconform.limits import MAX_EXACT_MAGNITUDE, MAX_EXACT_ROWS

PRECISION = 256
#: Functions that round to an integer: ``trunc(a / b)`` of float64 operands
#: has up to 1024 + 1074 bits before the point (1.8e308 / 5e-324), and the
#: remainder ``a - b * trunc(a / b)`` needs every one of them.
INTEGER_ROUNDING = frozenset({"floor", "ceil", "round", "roundaway", "trunc"})
#: Enough bits for the integer part of any quotient of float64 values, plus
#: `PRECISION` after the point.
WIDE_PRECISION = PRECISION + 1024 + 1074 + 64


def rounds_to_integer(tree: FormulaTree) -> bool:
    """Whether ``tree`` calls floor, ceil, round or trunc."""
    return any(isinstance(n, Call) and n.func.lower() in INTEGER_ROUNDING
               for s in tree.assignments for n in walk(s.value))


def precision(tree: FormulaTree) -> int:
    """The working precision of the exact evaluation of ``tree``."""
    return WIDE_PRECISION if rounds_to_integer(tree) else PRECISION


def refine(tree: FormulaTree, env: Mapping[str, Any], index: np.ndarray, shape: tuple[int, ...],
           dtype: np.dtype, *, minmax: str, output: str | None = None,
           zeros: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exactly rounded values of ``tree`` at the flat ``index`` positions.
    ``env`` maps names to float64 arrays (broadcastable to ``shape``) or
    scalars.  Returns (values in ``dtype``, mask of positions refined, mask
    of positions left out); a position whose exact evaluation fails keeps
    its float64 value.  An exact zero keeps the float64 result's IEEE sign,
    unless ``zeros`` (the float64 result is not finite, so it has none):
    then it is +0.  Only the first `MAX_EXACT_ROWS` distinct rows of
    operands are evaluated (bounded time); the positions of the others are
    left out, for the caller to accept any value there."""

    ctx = mp_context(precision(tree))
    coords = np.unravel_index(index, shape)
    picked = {n: np.broadcast_to(v, shape)[coords] if isinstance(v, np.ndarray) and v.ndim else v
              for n, v in env.items()}  # every element's operands at once
    out = np.zeros(index.size, dtype=dtype)
    done = np.zeros(index.size, dtype=bool)
    rows, inverse = _distinct(picked, index.size)
    left_out = inverse >= MAX_EXACT_ROWS
    if left_out.any():
        rows, inverse = rows[:MAX_EXACT_ROWS], np.where(left_out, 0, inverse)
    exacts = _exact_values(ctx, tree, picked, rows, minmax, output)
    kept: list[int] = []
    for r, exact in enumerate(exacts):  # distinct rare elements only (module docstring)
        if exact is _FAILED:
            continue
        if not isinstance(exact, str) and not ctx.isnan(exact) and exact == 0:
            if zeros:
                at = (inverse == r) & ~left_out
                out[at], done[at] = 0, True
            continue  # an exact zero: the float64 result has the IEEE sign
        kept.append(r)
    if kept:
        rounded = np.zeros(len(exacts), dtype=dtype)
        rounded[kept] = _round(ctx, [exacts[r] for r in kept], dtype)
        if ctx.prec < WIDE_PRECISION:
            _untie(ctx, tree, picked, rows, kept, exacts, rounded, dtype, minmax, output)
        hit = np.zeros(len(exacts), dtype=bool)
        hit[kept] = True
        at = hit[inverse] & ~left_out
        out[at] = rounded[inverse[at]]
        done[at] = True
    return out, done, left_out


#: A failed exact evaluation (division by zero, a domain error).
_FAILED = object()


def _untie(ctx: Any, tree: FormulaTree, picked: Mapping[str, Any], rows: np.ndarray, kept: list[int],
           exacts: list[Any], rounded: np.ndarray, dtype: np.dtype, minmax: str, output: str | None) -> None:
    """Where a value of ``kept`` lies exactly halfway between two values of
    ``dtype`` at `PRECISION` bits, evaluate its row again at
    `WIDE_PRECISION` and round that (in ``rounded``, in place): a term below
    256 bits may have vanished into the tie (x * Sigmoid(s x) for a
    subnormal x and s x = -2e-79: exp(2e-79) is 1 at 256 bits, and x / 2
    rounded to even went up where the value is just below the half;
    hypothesis found it).  Ties at the wide precision are real ones.
    ``ctx`` is the context ``exacts`` were made in."""
    tied = [r for r in kept if _halfway(ctx, exacts[r], rounded[r])]
    if not tied:
        return
    wide = mp_context(WIDE_PRECISION)
    again = _exact_values(wide, tree, picked, rows[tied], minmax, output)
    for r, exact in zip(tied, again):
        if exact is not _FAILED:
            rounded[r] = _round(wide, [exact], dtype)[0]


def _halfway(ctx: Any, exact: Any, rounded: Any) -> bool:
    """Whether ``exact`` is the midpoint of ``rounded`` and a neighbour."""
    if isinstance(exact, str) or not ctx.isfinite(exact) or not math.isfinite(float(rounded)):
        return False
    here = ctx.mpf(float(rounded))
    sides = (float(neighbours(np.asarray([rounded]), side)[0]) for side in (-1, 1))
    return any(exact == (here + ctx.mpf(other)) / 2 for other in sides if math.isfinite(other))


def _distinct(picked: Mapping[str, Any], size: int) -> tuple[np.ndarray, np.ndarray]:
    """The first position of each distinct row of operands (by bit pattern,
    as `_Scalar.lift` sees them) and, per position, the index of its row.
    Rows grouped by one stable sort (np.unique's ``axis=0`` costs several
    times more at these sizes); their order is immaterial, each row's value
    being its own."""
    columns = [np.asarray(v).astype(np.float64).view(np.uint64)
               for v in picked.values() if isinstance(v, np.ndarray) and v.ndim]
    if not columns or size <= 1:
        return np.arange(size), np.arange(size)
    order = np.lexsort(columns[::-1])  # stable: each run of equal rows starts at its first position
    ordered = np.stack(columns, axis=1)[order]
    new = np.empty(size, dtype=bool)  # where a run of equal rows starts
    new[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    inverse = np.empty(size, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def _exact_values(ctx: Any, tree: FormulaTree, picked: Mapping[str, Any], rows: np.ndarray, minmax: str,
                  output: str | None) -> list[Any]:
    """The exact value (or `_FAILED`) at each of ``rows``.

    Not memoised across calls: `_distinct` already evaluates each distinct
    row once per call, and a memo of rows across calls (per tree) saved 47
    of 3128 row evaluations of a whole default run, under 0.1% of its time
    (STYLE.md: an optimisation stays only where it saves 5%)."""
    names = sorted(n for n, v in picked.items() if isinstance(v, np.ndarray) and v.ndim)
    lifted = {n: _lift(ctx, v) for n, v in picked.items() if n not in names}  # the same for every row
    program = _Program(ctx, tree, minmax)
    lift = _lifter(ctx)
    columns = [_column(picked[n][rows]) for n in names]  # each name's rows at once
    values = []
    for row in zip(*columns) if columns else [()] * rows.size:
        env = dict(lifted)
        env.update(zip(names, map(lift, row)))
        try:
            results = program.run(env)  # every output of the tree at once
        except (ZeroDivisionError, ValueError, OverflowError):
            results = {}
        values.append(results.get(output, _FAILED))
    return values


def _lifter(ctx: Any) -> Callable[[Any], Any]:
    """`_lift` for ``ctx``, with Python floats (`_column`'s values) made
    straight from their bits: exact, the same mpf as ``ctx.mpf(v)``."""
    from mpmath.libmp import from_float  # noqa: PLC0415 - mpmath (~20 ms), as in functions.mp_context

    make = ctx.make_mpf
    return lambda v: make(from_float(v)) if type(v) is float else _lift(ctx, v)


def _column(a: np.ndarray) -> list[Any]:
    """The value `_lift` takes of each element of ``a``, for the whole
    column at once: Python booleans, or Python floats for numbers (their
    float64 values, as `_lift` converts them)."""
    return a.tolist() if a.dtype == bool else a.astype(np.float64).tolist()


def _round(ctx: Any, exacts: list[Any], dtype: np.dtype) -> np.ndarray:
    """Nearest values of ``dtype`` to each of ``exacts``; ties to even.

    mpmath's float() is the nearest float64.  For a type narrower than
    float64 every rounding boundary of the type (a midpoint between two of its
    values, the overflow threshold) is a float64 value, so where the nearest
    float64 lies strictly between the boundaries around its own rounding, the
    exact value does too and that rounding is the answer: all at once.  The
    rest (a float64 on a boundary, no finite rounding, a float64 target) take
    the float64 guess and its two neighbours, and mpmath picks the nearest of
    the three per value."""

    info = finfo(dtype)
    largest = ctx.mpf(float(info.max))
    half_top = ctx.ldexp(1, int(info.maxexp) - 2 - int(info.nmant))
    top = largest + half_top  # max + half its ULP overflows
    wide = np.asarray([float(e) for e in exacts], dtype=np.float64)
    guess = to_float(wide, dtype)
    slow: Sequence[int] = range(len(exacts))
    if np.dtype(dtype).itemsize < 8:
        below, above = midpoints(guess)
        threshold = float(top)
        with np.errstate(invalid="ignore"):
            decided = np.isfinite(guess.astype(np.float64)) & (below < wide) & (wide < above) & (abs(wide) < threshold)
        if decided.all():
            return guess
        slow = np.flatnonzero(~decided).tolist()
    candidates = (guess, neighbours(guess, -1), neighbours(guess, 1))
    odd = [(ordered_bits(c) & 1).astype(bool) for c in candidates]
    out = guess.copy()
    overflow = np.asarray([math.inf, -math.inf]).astype(dtype)  # what each sign of an overflow becomes
    for k in slow:
        exact = exacts[k]
        if ctx.isnan(exact) or ctx.isinf(exact):
            out[k] = np.asarray([float(exact)]).astype(dtype)[0]
        elif abs(exact) >= top:
            out[k] = overflow[0] if ctx.sign(exact) > 0 else overflow[1]
        else:
            finite = [j for j, c in enumerate(candidates) if math.isfinite(float(c[k]))]
            best = min(finite, key=lambda j: (abs(ctx.mpf(float(candidates[j][k])) - exact), bool(odd[j][k])))
            out[k] = candidates[best][k]
    return out


def _lift(ctx: Any, v: Any) -> Any:
    """``v`` as `_Scalar` computes with it: texts and booleans as they are,
    a Fraction to ``ctx``'s precision, a number as its float64 value."""
    if isinstance(v, str):
        return v
    if isinstance(v, Fraction):
        return ctx.mpf(v.numerator) / v.denominator
    return ctx.mpf(float(v)) if not isinstance(v, (bool, np.bool_)) else bool(v)


class _Scalar:
    """The tree on mpmath scalars: the same semantics as `formula.evaluate`,
    one environment at a time (`refine` runs one `_Program` over all its
    rows instead)."""

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
        return _Program(self.ctx, tree, self.minmax).run(self.env)


Scalar = Any
Node = Callable[[dict[str, Any]], Any]


class _Program:
    """``tree`` compiled into nested closures over a row's environment (a
    dict of lifted values, updated by the assignments): each node's kind is
    decided once here instead of per row.  The operations, their order and
    the exceptions raised are exactly those of a walk of the tree."""

    def __init__(self, ctx: Any, tree: FormulaTree, minmax: str) -> None:
        self.ctx, self.minmax = ctx, minmax
        self.table = _functions(ctx)
        main = tree.main
        self.steps = [(s.target, s.op, s.params is None, s is main, self.value(s.value)) for s in tree.assignments]

    def run(self, env: dict[str, Any]) -> dict[str | None, Any]:
        results: dict[str | None, Any] = {}
        for target, op, bind, is_main, value in self.steps:
            val = value(env)
            if op != "=":
                val = self.binary_of(op[0])(env[target], val)
            if bind:
                env[target] = val
            results[target] = val
            if is_main:
                results[None] = val
        return results

    # -- values ------------------------------------------------------------
    def value(self, node: Value) -> Node:
        if isinstance(node, Piecewise):
            nan = self.ctx.nan
            branches = [(None if b.cond is None else self.expr(b.cond), self.expr(b.value)) for b in node.branches]

            def piecewise(env: dict[str, Any]) -> Any:
                for cond, value in branches:
                    if cond is None or _truth(cond(env)):
                        return value(env)
                return nan

            return piecewise
        return self.expr(node)

    def expr(self, e: Expr) -> Node:
        ctx = self.ctx
        if isinstance(e, Num):
            found = _lift(ctx, e.value)
            return lambda env: found
        if isinstance(e, Name):
            name, default = e.id, (ctx.pi if e.id == "pi" else e.id)
            return lambda env: env.get(name, default)
        if isinstance(e, Unary):
            operand = self.expr(e.operand)
            if e.op == "!":
                return lambda env: not _truth(operand(env))
            if e.op == "-":
                number = self.number
                return lambda env: -number(operand(env))
            return operand
        if isinstance(e, Binary):
            left, right, fn = self.expr(e.left), self.expr(e.right), self.binary_of(e.op)
            return lambda env: fn(left(env), right(env))
        if isinstance(e, Conditional):
            cond, then, otherwise = self.expr(e.cond), self.expr(e.then), self.expr(e.otherwise)
            return lambda env: then(env) if _truth(cond(env)) else otherwise(env)
        if isinstance(e, Call):
            return self.call(e.func.lower(), [self.expr(a) for a in e.args])
        text = expr_text(e)

        def fail(env: dict[str, Any]) -> Any:
            raise ValueError(f"cannot evaluate {text} exactly")

        return fail

    def number(self, v: Any) -> Any:
        return self.ctx.mpf(int(v)) if isinstance(v, bool) else v

    def real(self, v: Any) -> Any:
        """A complex result (sqrt or log of a negative number, a negative
        base to a fractional power) is NaN, as in IEEE arithmetic."""
        return self.ctx.nan if isinstance(v, self.ctx.mpc) else v

    # -- operators -----------------------------------------------------------
    def binary_of(self, op: str) -> Callable[[Any, Any], Any]:
        ctx, number = self.ctx, self.number
        if op in _COMPARE:
            compare, isnan = _COMPARE[op], ctx.isnan

            def comparison(a: Any, b: Any) -> Any:
                if isinstance(a, str) or isinstance(b, str):
                    return (a == b) == (op == "==")
                return bool(compare(a, b)) if not (isnan(a) or isnan(b)) else op == "!="

            return comparison
        if op == "&&":
            return lambda a, b: _truth(a) and _truth(b)
        if op == "||":
            return lambda a, b: _truth(a) or _truth(b)
        arith = _ARITH.get(op)
        if arith is None:
            def unsupported(a: Any, b: Any) -> Any:
                number(a), number(b)
                raise ValueError(f"operator {op} has no exact evaluation")

            return unsupported
        if op == "^":
            power, real = _bounded_power(ctx), self.real
            return lambda a, b: real(power(number(a), number(b)))
        return lambda a, b: arith(number(a), number(b))

    def call(self, name: str, args: list[Node]) -> Node:
        number = self.number
        if name in ("min", "max", "clamp"):
            pick = self.pick
            if name == "clamp":
                def clamp(env: dict[str, Any]) -> Any:
                    xs = [number(a(env)) for a in args]
                    return pick("min", [pick("max", xs[:2]), xs[2]])

                return clamp
            return lambda env: pick(name, [number(a(env)) for a in args])
        fn, real = self.table.get(name), self.real
        if fn is None:
            def unknown(env: dict[str, Any]) -> Any:
                [number(a(env)) for a in args]
                raise KeyError(name)

            return unknown
        if len(args) == 1:
            (only,) = args
            return lambda env: real(fn(number(only(env))))
        return lambda env: real(fn(*[number(a(env)) for a in args]))

    def pick(self, name: str, args: list[Any]) -> Any:
        isnan = self.ctx.isnan
        nans = [a for a in args if isnan(a)]
        if nans and self.minmax == "propagate":
            return self.ctx.nan
        rest = [a for a in args if not isnan(a)] or [self.ctx.nan]
        return max(rest) if name == "max" else min(rest)


def _truth(v: Any) -> bool:
    return bool(v) if isinstance(v, bool) else bool(v != 0)


def _functions(ctx: Any) -> dict[str, Callable[..., Any]]:
    """The exact functions by (lower-case) name, for ``ctx`` (one per
    precision, `functions.mp_context`); built per `_Program`."""
    c = ctx
    return {
        "abs": abs, "exp": _bounded(c, c.exp), "ln": c.log, "log": c.log, "log2": lambda x: c.log(x, 2),
        "log10": c.log10, "sqrt": c.sqrt, "tanh": _bounded(c, c.tanh), "sinh": _bounded(c, c.sinh),
        "cosh": _bounded(c, c.cosh),
        "asinh": c.asinh, "acosh": c.acosh, "atanh": c.atanh, "sin": c.sin, "cos": c.cos, "tan": c.tan,
        "asin": c.asin, "acos": c.acos, "atan": c.atan, "atan2": c.atan2, "erf": c.erf, "pow": _bounded_power(c),
        "floor": c.floor, "ceil": c.ceil, "round": c.nint,
        "roundaway": lambda x: c.sign(x) * c.floor(abs(x) + c.mpf(0.5)), "trunc": lambda x: c.floor(x) if x >= 0 else c.ceil(x),
        "sign": c.sign, "isinf": c.isinf, "isnan": c.isnan,
    }


def _bounded(ctx: Any, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` (exp and its kin), refusing an argument beyond
    `limits.MAX_EXACT_MAGNITUDE` bits with OverflowError: the element's exact
    evaluation fails and it keeps its float64 value (`_exact_values`)."""
    def guarded(x: Any) -> Any:
        if ctx.isfinite(x) and x != 0 and ctx.mag(x) > MAX_EXACT_MAGNITUDE:
            raise OverflowError(f"argument beyond 2**{MAX_EXACT_MAGNITUDE}")
        return fn(x)
    return guarded


def _bounded_power(ctx: Any) -> Callable[[Any, Any], Any]:
    """``x ^ y`` refusing, like `_bounded`, a power whose logarithm
    (y * ln x, exp's argument) would exceed 2**`limits.MAX_EXACT_MAGNITUDE`:
    log2|y| + log2|log2|x|| beyond it, in whole bits."""
    def power(x: Any, y: Any) -> Any:
        if all(ctx.isfinite(v) and v != 0 for v in (x, y)) and \
                ctx.mag(y) + abs(int(ctx.mag(x))).bit_length() > MAX_EXACT_MAGNITUDE:
            raise OverflowError(f"power beyond 2**2**{MAX_EXACT_MAGNITUDE}")
        return ctx.power(x, y)
    return power


_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
}


_COMPARE = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
