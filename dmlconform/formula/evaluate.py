"""Vectorised evaluation of an expanded tree, with a running error bound.

DESIGN.md, "The oracle".  Two modes:

* float mode: every value is float64 (numpy) and carries a bound (see
  `formula.bounds`) on how far an honest implementation in the *target* type
  may be from the exact value.  A formula of exact terms pays nothing for its
  bound; intermediate arrays are reused in place when no one else holds them.
* integer mode: exact Python integers (or fractions, for a FLOAT attribute on
  integer tensors) in numpy object arrays: numpy's C loops call Python's
  arithmetic, so there is no Python loop over elements.

``minmax`` picks the NaN semantics of min/max/clamp: ``"propagate"`` (numpy:
NaN wins) or ``"number"`` (IEEE maxNum/minNum: the number wins).  A comparison
or a floor whose operands carry an error marks the elements where the error
reaches the discontinuity in ``uncertain``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.errors import FormulaError
from dmlconform.formula import bounds as B
from dmlconform.formula import exact64 as E
from dmlconform.formula import integers
from dmlconform.formula.bounds import EXACT, Err
from dmlconform.formula.functions import TRANSCENDENTAL_ERROR as K
from dmlconform.formula.functions import is_enum_constant, primitive
from dmlconform.formula.printer import expr_text
from dmlconform.formula.tree import (
    Binary,
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
    walk,
)

Array = Any  # np.ndarray or a numpy scalar


@dataclass(frozen=True, slots=True)
class Val:
    """A value, its error bound, its known sign (+1 >= 0, -1 <= 0, 0 unknown)
    and whether its arrays may be overwritten (no one else holds them)."""

    v: Array
    err: Err = EXACT
    sign: int = 0
    owned: bool = False
    exact: Array = False   # float64 value == exact value (``Settings.exact64`` only)
    span: tuple[float, float] | None = None  # every element lies within [lo, hi] (None: unknown)
    nan: Array = False     # NaN in exact arithmetic too (``Settings.track``; `certain_nan`; and ``exact64``)
    above: Array = False   # the exact value is above the float64 one (``exact64`` only, where known)
    below: Array = False   # the exact value is below the float64 one (``exact64`` only, where known)
    huge: Array = False    # float64 overflowed to +-inf; the exact value has its sign and exceeds 2**1022 (`_overflowed`)


@dataclass(frozen=True, slots=True)
class Settings:
    integer: bool = False
    track: bool = True
    minmax: str = "propagate"
    unit: float = 2.0 ** -24   # unit roundoff of the target type
    representable: Callable[[float], bool] = lambda x: True
    exact64: bool = False      # also tell where the float64 result is exact
    work: Any = np.float64     # the float type computed in (the target type for a literal evaluation)
    range_limit: float | None = None  # flag elements where a transcendental result exceeds this
    bits: int | None = None    # integer mode: width of the element encoding (shifts)
    tiny: float = 0.0          # smallest normal of the target type: below it rounding is absolute


#: np.max and np.min without their Python-level dispatch (the same reductions).
_MAX, _MIN = np.maximum.reduce, np.minimum.reduce
#: The same, NaN-ignoring (NaN only where every element is NaN).
_FMAX, _FMIN = np.fmax.reduce, np.fmin.reduce
_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
            ">": np.greater, ">=": np.greater_equal}


def _real_power(x: Array, y: Array, out: np.ndarray | None = None) -> Array:
    """The real ``x ^ y``: numpy's (IEEE 754's) pow, except that a base of
    -inf to a finite non-integer power is NaN like every other negative base
    there (IEEE gives +inf or +0, its own special values: the ``ieee-754``
    reading of the ``ieee-pow`` ambiguity, `result_readings.ieee_pow`)."""
    with np.errstate(invalid="ignore"):
        v = np.power(x, y, out=out)
        negative_infinite = (np.asarray(x) == -np.inf) & np.isfinite(y) & (np.trunc(y) != y)
    if not negative_infinite.any():
        return v
    if isinstance(v, np.ndarray) and v.shape == negative_infinite.shape:
        v[negative_infinite] = np.nan
        return v
    return np.where(negative_infinite, np.nan, v)


_ARITH: dict[str, Callable[..., Array]] = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide,
                                           "^": _real_power}
_ALIASES = {"ln": "log"}
_NONNEGATIVE = frozenset({"abs", "exp", "sqrt", "cosh", "acos"})


class Evaluator:
    """Walks one expanded tree over arrays."""

    def __init__(self, env: Mapping[str, Val], settings: Settings) -> None:
        self.env = {n: replace(v, owned=False) if v.owned else v for n, v in env.items()}
        self.s = settings
        self.uncertain: Array | None = None
        self.final: Value | None = None  # the root of a statement whose value nothing reads (`final_statements`)
        self.conditions_exact: Array = True  # every comparison so far had exact operands
        self.overflow: Array | None = None    # elements where an intermediate exceeds ``range_limit``
        self.cancelled: Array | None = None   # of those, where a divisor or a root's argument cancelled

    # -- statements ----------------------------------------------------
    def run(self, tree: FormulaTree, output: str | None = None) -> Val:
        """Execute the assignments in order; return the value of ``output``
        (a statement target) or of the main statement."""
        return self.run_many(tree, (output,))[0]

    def run_many(self, tree: FormulaTree, outputs: tuple[str | None, ...], *,
                 finals: frozenset[int] | None = None) -> list[Val]:
        """`run` for several outputs at once: every statement runs whichever
        is asked, so each value is the one `run` gives for it alone.
        ``finals``: `final_statements` of the tree, when the caller has them
        (`oracle.Prepared`)."""
        main = tree.main
        results: dict[str | None, Val] = {}
        finals = final_statements(tree) if finals is None else finals
        for k, s in enumerate(tree.assignments):
            self.final = s.value if k in finals else None
            val = self.value(s.value)
            self.final = None
            if s.op != "=":
                val = self.binary(s.op[0], self.lookup(s.target), val)
            if s.params is None:
                self.env[s.target] = replace(val, owned=False) if val.owned else val
            if s.target in outputs:
                results[s.target] = val
            if s is main:
                results[None] = val
        missing = [o for o in outputs if o not in results]
        if missing:
            raise FormulaError(f"no statement assigns {missing[0]!r}", path="<formula>")
        return [results[o] for o in outputs]

    def value(self, node: Value) -> Val:
        if isinstance(node, Piecewise):
            tests = [None if b.cond is None else self.expr(b.cond) for b in node.branches]
            vals = [self.expr(b.value) for b in node.branches]
            return self.select([None if t is None else self.truth(t) for t in tests], vals)
        return self.expr(node)

    def expr(self, e: Expr) -> Val:
        if isinstance(e, Num):
            return self.constant(e.value)
        if isinstance(e, Name):
            return self.lookup(e.id)
        if isinstance(e, Unary):
            return self.unary(e.op, self.expr(e.operand))
        if isinstance(e, Binary):
            if e is self.final:  # the statement's last step: its rounding is the result's own
                return self.arith(e.op, self.expr(e.left), self.expr(e.right), final=True) \
                    if e.op in _ARITH and not self.s.integer else self.binary(e.op, self.expr(e.left), self.expr(e.right))
            return self.binary(e.op, self.expr(e.left), self.expr(e.right))
        if isinstance(e, Conditional):
            test = self.expr(e.cond)
            vals = [self.expr(e.then), self.expr(e.otherwise)]
            return self.select([self.truth(test), None], vals)
        if isinstance(e, Call):
            if self.s.integer and _rounded_quotient(e):
                q = e.args[0]
                assert isinstance(q, Binary)
                name = _ALIASES.get(e.func.lower(), e.func.lower())
                a, b = self.expr(q.left), self.expr(q.right)
                return Val(integers.rounded_division(name, self.num(a.v), self.num(b.v)))
            return self.call(e, [self.expr(a) for a in e.args])
        assert isinstance(e, Integral)
        raise FormulaError(f"cannot evaluate {expr_text(e)}: no closed form", path="<formula>")

    def lookup(self, name: str) -> Val:
        if name in self.env:
            return self.env[name]
        if is_enum_constant(name):
            return Val(name)
        raise FormulaError(f"name {name!r} has no value; give it as an input or attribute", path="<formula>")

    def constant(self, value: Any) -> Val:
        """An exact value (a literal's) as the evaluation starts from it: as it
        is in integer mode; else rounded to ``work``, exact only where the
        target type holds it too."""
        if self.s.integer:
            return Val(int(value) if value.denominator == 1 else value)
        f = float(value)
        exact = f == value
        err = EXACT if (exact and self.s.representable(f)) else Err(1.0)
        return Val(self.s.work(f), err, 1 if f >= 0 else -1, exact=exact)

    # -- helpers -------------------------------------------------------
    def num(self, x: Array) -> Array:
        """Booleans used as numbers become 0/1."""
        if isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype == bool):
            return np.asarray(x, dtype=object if self.s.integer else self.s.work) * 1
        return x

    def truth(self, val: Val) -> Array:
        v = val.v
        if isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == bool):
            return v
        return np.not_equal(v, 0)

    # -- integer mode ----------------------------------------------------
    def whole_bound(self, op: str, a: Val, b: Val) -> tuple[Val, Val]:
        """``a op b`` (an ordering) of a tensor of Python ints and a
        fraction (a FLOAT attribute on integer tensors): the fraction
        replaced by the integer that orders the same against every integer
        (x > t as x > floor(t), x < t as x < ceil(t)), so that numpy
        compares ints, not a Fraction per element.  The same truth values;
        anything else as it is."""
        if op not in ("<", "<=", ">", ">="):
            return a, b
        for tensor, other, left in ((a, b, True), (b, a, False)):
            if not np.ndim(other.v) and isinstance(other.v, Fraction) and self.python_ints(tensor):
                rounding = math.floor if (op in (">", "<=")) == left else math.ceil
                whole = replace(other, v=rounding(other.v))
                return (tensor, whole) if left else (whole, tensor)
        return a, b

    @staticmethod
    def python_ints(val: Val) -> bool:
        """Whether ``val`` is a tensor of Python ints alone (integer mode's
        object arrays)."""
        v = val.v
        if not isinstance(v, np.ndarray) or v.dtype != object or not v.ndim:
            return False
        return all(type(x) is int for x in v.ravel().tolist())

    def mark_uncertain(self, mask: Array) -> None:
        if any_true(mask):
            self.uncertain = mask if self.uncertain is None else (self.uncertain | mask)

    def bound(self, val: Val) -> Array:
        """``rel*|v| + abs`` in units of u: a fresh array, or a scalar."""
        e = val.err
        out = B.scaled(val.v, val.sign, e.rel)
        if out is None:
            return 0.0 if e.abs is None else (e.abs.copy() if isinstance(e.abs, np.ndarray) else e.abs)
        return B.add(out, e.abs, owned=True)

    def buffer(self, val: Val, shape: tuple[int, ...]) -> np.ndarray | None:
        """``val``'s array when it may be overwritten by a result of ``shape``."""
        v = val.v
        if val.owned and isinstance(v, np.ndarray) and v.dtype == self.s.work and v.shape == shape:
            return v
        return None

    def within_range(self, span: tuple[float, float] | None) -> bool:
        """Whether a value known to lie in ``span`` is surely within
        ``range_limit`` (its range check would find nothing: interval
        bounds of the block's inputs, computed once, stand in for two
        reductions per step).  The margin covers float64's own rounding."""
        limit = self.s.range_limit
        return limit is not None and span is not None and max(-span[0], span[1]) < limit * _SPAN_MARGIN

    def check_range(self, v: Array) -> None:
        """Note the elements where ``v`` is beyond ``range_limit``: an
        implementation in the target type overflows there."""
        limit = self.s.range_limit
        if limit is None or not np.ndim(v) or not np.size(v):
            return
        hi, lo = _FMAX(v, axis=None), _FMIN(v, axis=None)  # NaN elements are never beyond: fmax/fmin skip them
        if not (hi > limit or lo < -limit):
            return
        with np.errstate(invalid="ignore"):
            mask = np.abs(v) > limit
        if not mask.any():
            return
        self.overflow = mask if self.overflow is None else (self.overflow | mask)

    def check_divisor(self, y: Array, err_abs: Array) -> None:
        """Note the elements where a divisor's (or a square root's argument's)
        absolute error reaches the value itself: it cancels in the target
        type, which may divide by
        0 (``1 - pow(Beta1, T)`` for a tiny T in Adam), or, of a known sign,
        underflows to 0 (``sqrt(V) + Epsilon`` with ``G * G`` underflowing
        and Epsilon 0: float32 gives inf, and ``0 * inf`` NaN).  ``err_abs``: the
        divisor's absolute error bound (`Err.abs`, not None)."""
        if not np.ndim(y) and not np.ndim(err_abs):
            return
        with np.errstate(invalid="ignore"):
            mask = np.broadcast_to(err_abs, np.shape(y)) * self.s.unit >= np.abs(y)
        if mask.any():
            self.overflow = mask if self.overflow is None else (self.overflow | mask)
            self.cancelled = mask if self.cancelled is None else (self.cancelled | mask)

    def select(self, conds: list[Array | None], vals: list[Val]) -> Val:
        """First true condition wins; None is ``otherwise``.  Unmatched: NaN."""
        values = [self.num(v.v) for v in vals]
        shape = np.broadcast_shapes(*(np.shape(c) for c in conds if c is not None), *(np.shape(v) for v in values))
        cl = [np.broadcast_to(True if c is None else c, shape) for c in conds]
        out = np.select(cl, values, 0 if self.s.integer else np.nan)
        if self.s.integer:
            return Val(out.astype(object))
        if self.s.exact64:
            picked = np.select(cl, [np.broadcast_to(v.exact, shape) for v in vals], False)
            return Val(out, exact=picked & self.conditions_exact)
        if not self.s.track:
            return Val(out, owned=True)
        rel = max(v.err.rel for v in vals)
        parts = [v.err.abs for v in vals]
        absv = None if all(p is None for p in parts) else np.select(cl, [0.0 if p is None else p for p in parts], 0.0)
        sign = vals[0].sign if all(v.sign == vals[0].sign for v in vals) else 0
        nan: Array = False
        if any(any_true(v.nan) for v in vals):  # the picked branch's; `certain_nan` drops uncertain choices
            nan = np.select(cl, [np.broadcast_to(v.nan, shape) for v in vals], False)
        return Val(out, Err(rel, absv), sign, True, nan=nan)

    # -- operators -----------------------------------------------------
    def unary(self, op: str, a: Val) -> Val:
        if op == "+":
            return a
        if self.s.integer:
            if op == "-":
                return Val(np.negative(self.num(a.v)))
            if op == "!":
                return Val(np.logical_not(self.truth(a)))
            return Val(np.invert(a.v))
        if op == "-":
            x = self.num(a.v)
            shape = np.shape(x)
            lo_hi = _span(a)
            return Val(np.negative(x, out=self.buffer(a, shape)), a.err, -a.sign, a.owned or np.ndim(x) == 0, a.exact,
                       None if lo_hi is None else (-lo_hi[1], -lo_hi[0]), a.nan, a.below, a.above, a.huge)
        if op == "!":
            return Val(np.logical_not(self.truth(a)), exact=a.exact)
        raise FormulaError("bitwise '~' needs integer tensors", path="<formula>")

    def binary(self, op: str, a: Val, b: Val) -> Val:
        if op in _COMPARE:
            return self.compare(op, a, b)
        if op in ("&&", "||"):
            fn = np.logical_and if op == "&&" else np.logical_or
            if self.s.integer:
                return Val(fn(self.truth(a), self.truth(b)))
            return Val(fn(self.truth(a), self.truth(b)), exact=a.exact & b.exact)
        if self.s.integer:
            return Val(integers.binary(op, self.num(a.v), self.num(b.v), self.s.bits))
        if op in integers.BITWISE:
            raise FormulaError(f"operator {op!r} needs integer tensors", path="<formula>")
        return self.arith(op, a, b)

    def arith(self, op: str, a: Val, b: Val, *, final: bool = False) -> Val:
        """``a op b`` with its error.  ``final``: the last step of a value
        nothing else reads, whose underflow is the final rounding the bound
        and the comparison already allow for (`underflow_error` is for an
        underflow that a later step may scale up)."""
        x, y = self.num(a.v), self.num(b.v)
        shape = _broadcast(x, y)
        err = self.arith_error(op, a, b) if self.s.track and op in "+-*" else EXACT
        out = self.buffer(a, shape) if op != "^" else None
        relative_only = a.err.abs is None and b.err.abs is None
        if out is None and (op in "+-*" or (op == "/" and relative_only)):
            out = self.buffer(b, shape)  # "/" needs the divisor afterwards for absolute parts (`div_error`)
        if self.s.exact64:
            v = _ARITH[op](x, y)
            val = Val(v, sign=B.sign_of(op, a.sign, b.sign), exact=_exact_op(op, a, b, x, y, v))
            return _exact_sides(op, a, b, x, y, val) if op in "+-*/" else val
        v = _ARITH[op](x, y, out=out)
        sign = B.sign_of(op, a.sign, b.sign)
        array = isinstance(v, np.ndarray)
        if op == "/" and self.s.range_limit is not None and array and b.err.abs is not None:
            # before `div_error`, which scales the divisor's error in place: cancellation, or an
            # underflow to 0 of a divisor of known sign
            self.check_divisor(y, b.err.abs)
        if self.s.track and op in "/^":
            err = self.div_error(a, b, v, sign) if op == "/" else self.pow_error(a, b, v)
        if self.s.track and self.s.tiny and op in "*/" and not final and array:
            err = self.underflow_error(v, err)
        span = None  # the interval serves the range check alone (and `FloatRun.block`, from a pass with one)
        if self.s.range_limit is not None and array:
            span = _arith_span(op, a, b)
            if not self.within_range(span):
                self.check_range(v)  # a product or sum the target type cannot hold (G * G in Adam)
        nan = _propagated(v, a, b) if op in "+-*/" else False
        return Val(v, err, sign, array, span=span, nan=nan)

    def arith_error(self, op: str, a: Val, b: Val) -> Err:
        ea, eb = a.err, b.err
        if op == "*":
            parts = B.add(B.times(ea.abs, B.magnitude(b.v, b.sign), owned=a.owned),
                          B.times(eb.abs, B.magnitude(a.v, a.sign), owned=b.owned), owned=True)
            scaling = _power_of_two(a) or _power_of_two(b)  # scaling by 2**k rounds nothing
            return Err(ea.rel + eb.rel + (0 if scaling else 1), parts)
        same = a.sign != 0 and a.sign * b.sign == (1 if op == "+" else -1)
        if same or (ea.rel == 0 and eb.rel == 0):
            return Err(max(ea.rel, eb.rel) + 1, B.add(ea.abs, eb.abs, owned=a.owned))
        total = None
        for part in (B.scaled(a.v, a.sign, ea.rel), B.scaled(b.v, b.sign, eb.rel), ea.abs, eb.abs):
            total = B.add(total, part, owned=True)
        return Err(1.0, total)

    def underflow_error(self, v: Array, err: Err) -> Err:
        """A product or quotient below the target's smallest normal rounds to
        the subnormal grid: an absolute error of half its spacing (``tiny``
        in units of u), which a later factor may scale up (Alpha * tanh(Beta
        * x) with Beta * x underflowing and Alpha near the largest float;
        Scale * ((x - Mean) / sqrt(Variance + Epsilon)) with the quotient
        underflowing; Adam's ``(1 - Beta2) * G * G`` underflowing under a
        square root that then divides).  Checked on every product and
        quotient: computed operands underflow as well as exact ones."""
        tiny = self.s.tiny
        with np.errstate(invalid="ignore"):
            small = np.abs(v) < tiny
            if not small.any():
                return err
            small &= v != 0
        return Err(err.rel, B.add(err.abs, np.where(small, tiny, 0.0)))

    def div_error(self, a: Val, b: Val, v: Array, sign: int) -> Err:
        rel = a.err.rel + b.err.rel + (0 if _power_of_two(b) else 1)  # dividing by 2**k rounds nothing
        if a.err.abs is None and b.err.abs is None:
            return Err(rel)
        num = B.add(a.err.abs, B.times(b.err.abs, B.magnitude(v, sign), owned=b.owned), owned=a.owned)
        if isinstance(num, np.ndarray) and num.shape == np.shape(v) and (a.owned or a.err.abs is None):
            np.divide(num, B.magnitude(b.v, b.sign), out=num)
        else:
            num = num / B.magnitude(b.v, b.sign)
        return Err(rel, num)

    def pow_error(self, a: Val, b: Val, v: Array) -> Err:
        a_exact, b_exact = a.err.exact, b.err.exact
        if a_exact and b_exact:
            return Err(K)
        av, parts = np.abs(v), None
        if not a_exact:
            parts = B.add(parts, av * np.abs(b.v) * self.bound(a) / np.abs(a.v), owned=True)
        if not b_exact:
            parts = B.add(parts, av * np.abs(np.log(np.abs(a.v))) * self.bound(b), owned=True)
        return Err(K, parts)

    def compare(self, op: str, a: Val, b: Val) -> Val:
        if isinstance(a.v, str) or isinstance(b.v, str):  # enum constants compare by name
            return Val(np.bool_((a.v == b.v) == (op == "==")))
        if self.s.integer:
            a, b = self.whole_bound(op, a, b)
            return Val(_COMPARE[op](self.num(a.v), self.num(b.v)))
        x, y = self.num(a.v), self.num(b.v)
        if self.s.exact64:
            self.conditions_exact = self.conditions_exact & a.exact & b.exact
        if self.s.track and not (a.err.exact and b.err.exact):
            slack = (self.bound(a) + self.bound(b)) * self.s.unit
            self.mark_uncertain(np.abs(x - y) <= slack)
        return Val(_COMPARE[op](x, y), exact=a.exact & b.exact)

    # -- calls ---------------------------------------------------------
    def call(self, node: Call, args: list[Val]) -> Val:
        name = _ALIASES.get(node.func.lower(), node.func.lower())
        p = primitive(name)
        if p is None:
            raise FormulaError(f"unknown function {node.func}; expand library calls first", path="<formula>")
        if self.s.integer and name == "popcount":
            return Val(integers.popcount(self.num(args[0].v), self.s.bits or integers.DEFAULT_BITS))
        if self.s.integer:
            return Val(integers.call(name, [self.num(a.v) for a in args], node.func))
        if name == "popcount":
            raise FormulaError("popcount needs integer tensors (float ones are read as their encoding only in a "
                               "formula of bitwise operations alone)", path="<formula>")
        if name in ("min", "max", "clamp"):
            return self.minmax(name, args)
        if name in ("floor", "ceil", "round", "roundaway", "trunc"):
            return self.rounding(name, args[0])
        if name in ("isinf", "isnan"):
            return Val((np.isinf if name == "isinf" else np.isnan)(args[0].v), exact=args[0].exact)
        if self.s.exact64:
            return self.exact_call(name, args)
        with np.errstate(all="ignore"):
            val = self.transcendental(name, args, p.error)
            if self.s.track and isinstance(val.v, np.ndarray):
                nan = self.domain_nan(name, args, val.v)
                if nan is not False:
                    val = replace(val, nan=nan)
        if name == "abs" and self.s.range_limit is not None and isinstance(val.v, np.ndarray) \
                and (span := _span(args[0])) is not None:  # a span serves the range check alone (`arith`)
            lo, hi = span
            val = replace(val, span=(0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi))))
        if not self.within_range(val.span):
            self.check_range(val.v)
        return val

    def domain_nan(self, name: str, args: list[Val], v: np.ndarray) -> Array:
        """Where ``name(args)`` is NaN in exact arithmetic too: an argument
        that is (`Val.nan`), or one outside the function's real domain by
        more than (a generous multiple of) its error bound."""
        nan: Array = False
        for a in args:
            if any_true(a.nan):
                nan = nan | a.nan
        if name in _DOMAIN and len(args) == 1 and np.isnan(_MIN(v, axis=None)):
            at = np.flatnonzero(np.isnan(v))
            x = np.broadcast_to(self.num(args[0].v), v.shape).reshape(-1)[at]
            bound = self.bound(args[0])
            e = np.broadcast_to(bound, v.shape).reshape(-1)[at] * (_DOMAIN_MARGIN * self.s.unit)
            e = e + np.abs(x) * (_DOMAIN_MARGIN * 2.0 ** -53)
            outside = _DOMAIN[name](x, e)
            if outside.any():
                mask = np.zeros(v.size, dtype=bool)
                mask[at[outside]] = True
                nan = nan | mask.reshape(v.shape)
        return nan if nan is False else (np.broadcast_to(nan, v.shape) & np.isnan(v))

    def transcendental(self, name: str, args: list[Val], own: float) -> Val:
        xs = [self.num(a.v) for a in args]
        sign = 1 if name in _NONNEGATIVE else 0
        if not self.s.track or all(a.err.exact for a in args):
            out = self.buffer(args[0], np.shape(xs[0])) if len(xs) == 1 else None
            return Val(_call(name, xs, out), Err(own) if self.s.track else EXACT, sign, True)
        if len(args) == 2:
            v = _call(name, xs, None)
            if name == "pow":
                return Val(v, self.pow_error(args[0], args[1], v), 0, True)
            y, x = args  # atan2
            return Val(v, Err(own, (self.bound(y) + self.bound(x)) / np.hypot(y.v, x.v)), 0, True)
        a = args[0]
        if name == "sqrt":
            v = _call(name, xs, None)
            extra = None if a.err.abs is None else _sqrt_error(a.err.abs, v, self.s.unit)
            if extra is not None and self.s.range_limit is not None and isinstance(v, np.ndarray):
                # an argument within its error of 0 may be negative exactly: NaN where float64 says 0
                # (Adam's sqrt(1 - pow(Beta2, T)) at T < 0), a second look for `FloatRun`
                self.check_divisor(xs[0], a.err.abs)
            return Val(v, Err(own + a.err.rel / 2, extra), 1, True)
        arg_bound = self.bound(a)
        if name in B.SLOPE_FROM_VALUE:
            v = _call(name, xs, self.buffer(a, np.shape(xs[0])))
            return Val(v, Err(own, B.times(arg_bound, B.SLOPE_FROM_VALUE[name](v), owned=True)), sign, True)
        slope = B.SLOPE_FROM_ARGUMENT[name](xs[0])
        return Val(_call(name, xs, None), Err(own, B.times(arg_bound, slope, owned=True)), sign, True)

    def exact_call(self, name: str, args: list[Val]) -> Val:
        """Value and float64 exactness of a function call: abs and sqrt can
        be exact, the transcendental functions are taken as never exact but
        where they give NaN for exact finite arguments (outside their real
        domain: the exact value is NaN too)."""

        xs = [self.num(a.v) for a in args]
        with np.errstate(all="ignore"):
            v = _call(name, xs, None)
            nan = _nan_through(*args)  # every function of the table gives NaN for a NaN argument
            if name == "abs":
                return Val(v, exact=args[0].exact, nan=nan)
            domain = np.isnan(v)
            for a, x in zip(args, xs):
                domain = domain & a.exact & np.isfinite(x)
            nan = _outside(name, args, xs, nan | domain)
            if name == "sqrt":
                return Val(v, exact=(args[0].exact & E.root_exact(xs[0], v)) | domain, nan=nan)
            if name in ("pow", "exp"):
                return _near_one(name, args, xs, Val(v, exact=domain, nan=nan, huge=_overflowed(name, args, xs, v)))
        return Val(v, exact=domain, nan=nan)

    def minmax(self, name: str, args: list[Val]) -> Val:
        if name == "clamp":
            x, lo, hi = args
            return self.minmax("min", [self.minmax("max", [x, lo]), hi])
        number = self.s.minmax == "number"
        fn = (np.fmax if number else np.maximum) if name == "max" else (np.fmin if number else np.minimum)
        out = args[0]
        for nxt in args[1:]:
            pos = (name == "max" and 1 in (out.sign, nxt.sign)) or out.sign == nxt.sign == 1
            out = self.pick(fn, out, nxt, 1 if pos else 0)
        return out

    def pick(self, fn: Any, a: Val, b: Val, sign: int) -> Val:
        """min/max of two values.  Its error is the selected operand's; where
        the operands are closer than their errors, the implementation may
        select the other one, which costs both errors more."""
        x, y = self.num(a.v), self.num(b.v)
        shape = _broadcast(x, y)
        if self.s.exact64:
            return Val(fn(x, y), sign=sign, exact=a.exact & b.exact)
        if not self.s.track or (a.err.abs is None and b.err.abs is None):
            buf = self.buffer(a, shape) if self.buffer(a, shape) is not None else self.buffer(b, shape)
            err = Err(max(a.err.rel, b.err.rel)) if self.s.track else EXACT
            v = fn(x, y, out=buf)
            return Val(v, err, sign, isinstance(v, np.ndarray))
        bx, by = self.bound(a), self.bound(b)
        both = bx + by
        near = np.abs(x - y) <= both * self.s.unit
        v = fn(x, y)
        chosen = np.where(v == x, bx, by)
        return Val(v, Err(0.0, np.where(near, chosen + both, chosen)), sign, True)

    def rounding(self, name: str, a: Val) -> Val:
        x = self.num(a.v)
        v = _round_away(x) if name == "roundaway" else \
            {"floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc}[name](x)
        if self.s.track and not a.err.exact:
            jump = np.floor(x) + (0.5 if name in ("round", "roundaway") else 0.0)
            near = np.minimum(np.abs(x - jump), np.abs(jump + 1 - x))
            self.mark_uncertain(near <= self.bound(a) * self.s.unit)
        return Val(v, EXACT, a.sign if name not in ("round", "roundaway") else 0, True, a.exact)


def _round_away(x: Array) -> Array:
    """Halves away from zero, exactly: the fraction ``x - trunc(x)`` is exact
    in binary floating point (``floor(x + 0.5)`` is not: 0.49999997 + 0.5
    rounds up in float32, and so does 2**52 + 1 + 0.5 in float64)."""
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


def _rounded_quotient(e: Call) -> bool:
    """``floor(a / b)`` and the like: on integers the exact quotient is
    rounded, not the truncated one (`formula.integers`)."""
    return (e.func.lower() in integers.ROUNDING and len(e.args) == 1 and isinstance(e.args[0], Binary)
            and e.args[0].op == "/")


#: Functions with a real domain, and where an argument ``x`` with error
#: ``e`` surely lies outside it (the exact value is NaN, as in float64).
_DOMAIN: dict[str, Callable[[Array, Array], Array]] = {
    **{f: (lambda x, e: x + e < 0) for f in ("sqrt", "log", "log2", "log10")},
    "acosh": lambda x, e: x + e < 1,
    **{f: (lambda x, e: np.abs(x) - e > 1) for f in ("asin", "acos", "atanh")},
}
#: The error bound is first order: this multiple of it, and of float64's
#: own rounding, must separate the argument from the domain's edge.
_DOMAIN_MARGIN = 16.0


def final_statements(tree: FormulaTree) -> frozenset[int]:
    """Positions in ``tree.assignments`` of the plain statements (``t = e``,
    ``f(x) = e``, ``e`` an operation) whose target no later statement reads:
    their value goes nowhere but out, so their last step's rounding is the
    result's own."""

    out = set()
    statements = tree.assignments
    for k, s in enumerate(statements):
        if s.op != "=" or not isinstance(s.value, Binary):
            continue
        later = statements[k + 1:]
        if any(s.target in names(t.value) or t.target == s.target for t in later):
            continue
        out.add(k)
    return frozenset(out)


def certain_nan(val: Val, ev: Evaluator, shape: tuple[int, ...], *, decides: bool = True) -> np.ndarray:
    """Where a tracked evaluation's NaN is the exact value too: `Val.nan`,
    except where a comparison was uncertain (the exact evaluation may take
    another branch) or, when the tree ``decides`` anything (`decides`), an
    intermediate overflowed (a comparison of infinities may differ).  A tree
    that compares nothing takes one path whatever the values: its NaN comes
    from a function's argument outside its domain by more than its error
    (`Evaluator.domain_nan`) and propagates through arithmetic as it does in
    exact arithmetic, overflow or not."""
    mask = np.broadcast_to(val.nan, shape).copy()
    for other in (ev.uncertain, ev.overflow if decides else None):
        if other is not None:
            mask &= ~np.broadcast_to(other, shape)
    return mask


def decides(tree: FormulaTree) -> bool:
    """Whether ``tree`` takes a path that depends on values: a comparison, a
    logical operator, a conditional or piecewise value, min/max/clamp or a
    test (isinf, isnan) whose answer an overflowed intermediate may change."""

    for s in tree.assignments:
        if isinstance(s.value, Piecewise):
            return True
        for n in walk(s.value):
            if isinstance(n, Conditional) or (isinstance(n, Binary) and n.op in _DECIDING_OPS):
                return True
            if isinstance(n, Call) and n.func.lower() in _DECIDING_CALLS:
                return True
    return False


_DECIDING_OPS = frozenset({*_COMPARE, "&&", "||"})
_DECIDING_CALLS = frozenset({"min", "max", "clamp", "isinf", "isnan", "sign"})


def any_true(x: Array) -> bool:
    """``np.any``, free for the Python booleans most flags (`Val.nan`,
    `Val.exact`) are."""
    if x is False or x is True:
        return x
    return bool(np.any(x))


def _broadcast(x: Array, y: Array) -> tuple[int, ...]:
    """The broadcast shape of two operands; no numpy call in the usual case
    of equal shapes or a scalar."""
    sx, sy = np.shape(x), np.shape(y)
    if sx == sy or not sy:
        return sx
    if not sx:
        return sy
    return np.broadcast_shapes(sx, sy)


def _propagated(v: Array, a: Val, b: Val) -> Array:
    """Where ``a op b`` (+ - * /) is NaN because an operand certainly is."""
    if not (any_true(a.nan) or any_true(b.nan)):
        return False
    return np.broadcast_to(a.nan | b.nan, np.shape(v)) & np.isnan(v)


#: A span this far inside the range limit needs no check (float64 rounding
#: of the interval arithmetic is relatively 2**-52 per step).
_SPAN_MARGIN = 0.5


def _span(val: Val) -> tuple[float, float] | None:
    """The interval of ``val``: its own, or a finite scalar's value."""
    if val.span is not None:
        return val.span
    v = val.v
    if isinstance(v, (float, np.floating)) and np.isfinite(v):
        return (float(v), float(v))
    return None


def _arith_span(op: str, a: Val, b: Val) -> tuple[float, float] | None:
    """Interval arithmetic for + - * / (None where unknown, unbounded or
    not finite)."""
    sa, sb = _span(a), _span(b)
    if sa is None or sb is None:
        return None
    (alo, ahi), (blo, bhi) = sa, sb
    if op == "+":
        lo, hi = alo + blo, ahi + bhi
    elif op == "-":
        lo, hi = alo - bhi, ahi - blo
    elif op == "*":
        ends = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
        lo, hi = min(ends), max(ends)
    elif op == "/" and (blo > 0 or bhi < 0):
        ends = (alo / blo, alo / bhi, ahi / blo, ahi / bhi)
        lo, hi = min(ends), max(ends)
    else:
        return None
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None


def _nan_through(*args: Val) -> Array:
    """Where an argument's exact value is NaN (`Val.nan` in ``exact64``
    mode), so is the result of arithmetic or of any function on it: mpmath's
    NaN propagates through each, pow(NaN, 0) included (or the division
    raises, and the float64 value stands)."""
    nan: Array = False
    for a in args:
        if any_true(a.nan):
            nan = nan | a.nan
    return nan


def _near_one(name: str, args: list[Val], xs: list[Array], val: Val) -> Val:
    """pow(b, t) or exp(t) of exact operands: exactly 1 for t == 0 (b
    finite); where the float64 value is 1 otherwise, the exact value is
    above 1 where t's sign agrees with ln(b)'s (b > 0, b != 1, t != 0 and
    finite), below it otherwise: Adam's ``pow(Beta2, T)`` for a tiny T,
    whose ``1 - pow(Beta2, T)`` cancels to 0 in float64."""
    t = xs[-1]
    exact = args[0].exact & args[-1].exact if name == "pow" else args[0].exact
    if not any_true(exact):
        return val
    zero = exact & (t == 0) & (np.isfinite(xs[0]) if name == "pow" else True)
    if any_true(zero):  # b ** 0 and exp(0) are exactly 1, in float64 and in mpmath
        val = replace(val, exact=val.exact | zero)
    known = exact & (val.v == 1) & (t != 0) & np.isfinite(t)
    if not any_true(known):
        return val
    if name == "pow":
        b = xs[0]
        known = known & (b > 0) & (b != 1) & np.isfinite(b)
        up = known & ((b > 1) == (t > 0))
    else:
        up = known & (t > 0)
    return replace(val, above=up, below=known & ~up)


#: An overflowed pow or exp exceeds 2**1023 (it rounded beyond float64's
#: largest value, about 2**1024, by a libm off by an ULP or so); `Val.huge`
#: claims 2**1022, so an exact operand of at most this magnitude may be added
#: to or subtracted from it 2**22 times (more steps than any formula has)
#: without the exact value falling below the claim or changing sign.
_HUGE_SLACK = 2.0 ** 1000
#: Functions whose exact value is NaN (complex, in mpmath) for a negative
#: argument, and those for an argument of any sign beyond 1 in magnitude.
def _sqrt_error(err_abs: Array, v: Array, unit: float) -> Array:
    """The absolute error (in units of ``unit``) of sqrt(a) = ``v`` from a's
    absolute error ``err_abs``: the slope bound err_abs / (2 v), but never
    more than sqrt(err_abs / unit), since |sqrt(a + d) - sqrt(a)| <= sqrt(|d|).
    The slope alone is infinite where a cancelled to 0 (``sqrt(1 - pow(Beta2,
    T))`` for a tiny T, ADAM_OPTIMIZER) and the bound was lost further on,
    so the oracle took a value float32 cannot give for exact (issue #22)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.minimum(err_abs / (2 * v), np.sqrt(err_abs / unit))
    return np.where(err_abs == 0, 0.0, bound)  # an exact 0 under the root: 0 / 0 would be a NaN bound


_NEGATIVE_DOMAIN = frozenset({"sqrt", "log", "log2", "log10", "acosh"})
_UNIT_DOMAIN = frozenset({"asin", "acos", "atanh"})


def _overflowed(name: str, args: list[Val], xs: list[Array], v: Array) -> Array:
    """Where pow(b, t) (b > 0) or exp(t) of exact finite operands overflowed
    float64 to +inf: the exact value is finite, positive and beyond 2**1023
    (`Val.huge`).  Adam's ``pow(Beta2, T)`` for a huge |T|, whose ``1 -
    pow(Beta2, T)`` is -inf in float64 and exactly negative, so its square
    root is NaN exactly."""
    if not isinstance(v, np.ndarray) or v.dtype != np.float64 or not np.isinf(_MAX(v, axis=None)):
        return False
    huge = v == np.inf
    for a, x in zip(args, xs):
        huge = huge & a.exact & np.isfinite(x)
    if name == "pow":
        huge = huge & (xs[0] > 0)
    return huge if any_true(huge) else False


def _outside(name: str, args: list[Val], xs: list[Array], nan: Array) -> Array:
    """``nan`` (a NaN argument, or exact finite arguments outside the real
    domain) and where the exact argument lies outside the domain although
    float64 does not show it: a float64 0 whose exact value lies below it
    under sqrt (`Val.below`) or an overflowed value of known sign
    (`Val.huge`).  Not pow(0, t < 0): mpmath raises for some t and gives
    +inf for others (-0.25, tiny ones)."""
    a, x = args[0], xs[0]
    if name == "sqrt" and any_true(a.below):
        nan = nan | (a.below & (x == 0))
    if any_true(a.huge) and (name in _NEGATIVE_DOMAIN or name in _UNIT_DOMAIN):
        nan = nan | (a.huge & (x < 0 if name in _NEGATIVE_DOMAIN else True))
    return nan


def _huge_sum(a: Val, b: Val, x: Array, y: Array, v: Array) -> Array:
    """Where ``x + y`` or ``x - y`` keeps `Val.huge`: one operand is huge,
    the other exact and at most `_HUGE_SLACK` in magnitude, so the exact
    result has the huge operand's sign (as the float64 infinity has)."""
    out: Array = False
    for big, other, o in ((a, b, y), (b, a, x)):
        if any_true(big.huge):
            out = out | (big.huge & other.exact & (np.abs(o) <= _HUGE_SLACK))
    return (out & np.isinf(v)) if any_true(out) else False


def _exact_sides(op: str, a: Val, b: Val, x: Array, y: Array, val: Val) -> Val:
    """NaN-ness and, for a float64 0 of ``x - y`` (x == y) or ``x + y``
    (x == -y), on which side of it the exact value lies, from the operands'
    sides (`Val.above`, `Val.below`; exact operands lie on neither).  A
    division by an exact 0 makes mpmath raise, which fails the whole row
    (the float64 value stands): as good as NaN for `FloatRun.exact_nan`."""
    nan = _nan_through(a, b)
    if op in "+-" and (any_true(a.huge) or any_true(b.huge)):
        val = replace(val, huge=_huge_sum(a, b, x, y, val.v))
    if op == "/" and any_true(b.exact):
        zero_divisor = b.exact & (y == 0)
        if any_true(zero_divisor):
            nan = nan | zero_divisor
    if not (any_true(a.above) or any_true(a.below) or any_true(b.above) or any_true(b.below)) or op in "*/":
        return val if nan is False else replace(val, nan=nan)
    # the exact result is (x + dx) -/+ (y + dy) = dx -/+ dy where the float64 result is 0
    b_up, b_down = (b.above, b.below) if op == "-" else (b.below, b.above)
    zero = (val.v == 0) & np.isfinite(x)
    down = zero & ((a.below & (b_up | b.exact)) | (a.exact & b_up))
    up = zero & ((a.above & (b_down | b.exact)) | (a.exact & b_down))
    return replace(val, nan=nan, above=up, below=down)


def _exact_op(op: str, a: Val, b: Val, x: Array, y: Array, v: Array) -> Array:
    """Where ``v = x op y`` in float64 is the exact value (operands exact too)."""

    both = a.exact & b.exact
    if not any_true(both):
        return False
    nan = both & (np.isnan(x) | np.isnan(y))  # an exact NaN operand: the exact value is NaN too
    if op in "+-":
        return (both & E.sum_exact(x, y if op == "+" else -y, v)) | nan
    if op == "*":
        return (both & E.product_exact(x, y, v)) | nan
    if op == "/":
        return (both & E.quotient_exact(x, y, v)) | nan
    return nan


def _power_of_two(val: Val) -> bool:
    """A scalar +-2**k: multiplying or dividing by it is exact (barring
    overflow and underflow)."""
    v = val.v
    if np.ndim(v) or isinstance(v, str):
        return False
    m, _ = np.frexp(float(v))
    return abs(float(m)) == 0.5


def _call(name: str, xs: list[Array], out: np.ndarray | None) -> Array:
    fn = _FUNCS[name]
    if out is not None and isinstance(fn, np.ufunc):
        return fn(*xs, out=out)
    return fn(*xs)


#: numpy has no erf; CPython's math.erf is accurate to about an ULP.  The ufunc
#: loop calls it from C for each element (no Python-level loop).
_ERF = np.frompyfunc(__import__("math").erf, 1, 1)


def _erf(x: Array) -> Array:
    return np.asarray(_ERF(np.asarray(x, dtype=np.float64)), dtype=np.float64)


_FUNCS: dict[str, Callable[..., Array]] = {
    "abs": np.abs, "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
    "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2, "pow": _real_power, "sign": np.sign,
    "erf": _erf,
}
