"""Where a formula changes branch or has a kink, from the tree alone, and which
piecewise branches can hold at once.

DESIGN.md, "Cases" (the points where the formula changes branch: the boundary
value itself and its float neighbours, from the formula, not from a hand list
per operator) and issue 4's trap "first match wins".

Critical expressions come from the tree: every comparison in a condition
(``x > Threshold`` gives ``x - Threshold``), every pair of linear pieces of a
min/max/clamp (``max(0, min(Alpha * x + Beta, 1))`` gives ``0 - (Alpha*x + Beta)``
and ``Alpha*x + Beta - 1``), the argument of abs/sign, a divisor, the argument
of sqrt/log.  Each is solved for an input: exactly, with rationals, when it is
linear in that input (attribute values are their float32 values, exact), else
by inverting one function at a time (exp, log, tanh...) at high precision.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.compare import ordered_bits
from dmlconform.errors import FormulaError
from dmlconform.formula.evaluate import Evaluator, Settings, Val
from dmlconform.formula.expand import expand
from dmlconform.formula.functions import mp_context
from dmlconform.formula.printer import expr_text
from dmlconform.formula.refine import _Scalar
from dmlconform.formula.rounding import fraction_to_float, neighbours
from dmlconform.formula.tree import (
    Assign,
    Binary,
    Call,
    Conditional,
    Expr,
    FormulaTree,
    Name,
    Num,
    Piecewise,
    Unary,
    names,
    walk,
)

_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
_LOGIC = frozenset({"&&", "||"})
_MAX_PIECES = 64


@dataclass(frozen=True, slots=True)
class Boundary:
    """``var`` = ``value`` is where ``cond`` changes (``kind``: "branch",
    "kink" or "domain").  ``exact`` is the exact rational value where the
    equation was linear; ``value`` its nearest float64."""

    var: str
    value: float
    cond: str
    kind: str
    exact: Fraction | None = None

    def points(self, dtype: Any) -> np.ndarray:
        """The boundary in ``dtype`` and its neighbours: the nearest values on
        both sides of the exact boundary and the next value beyond each, in
        increasing order; a boundary at zero gives -0 and +0 both."""
        dtype = np.dtype(dtype)
        exact = self.exact if self.exact is not None else Fraction(self.value)
        near = np.asarray([fraction_to_float(exact, dtype)]).astype(dtype)
        low = near if Fraction(float(near[0])) <= exact else _step(near, -1)
        high = near if Fraction(float(near[0])) >= exact else _step(near, 1)
        pts = np.concatenate([_step(low, -1), low, high, _step(high, 1)])
        if exact == 0:
            pts = np.concatenate([pts, -pts[np.float64(0) == pts.astype(np.float64)]])
        pts = pts[np.isfinite(pts.astype(np.float64))]
        _, first = np.unique(ordered_bits(pts, signed_zero=True), return_index=True)
        return pts[np.sort(first)][np.argsort(ordered_bits(pts[np.sort(first)], signed_zero=True), kind="stable")]


def _step(a: np.ndarray, direction: int) -> np.ndarray:
    """Next value toward +inf or -inf, stepping over the other zero."""
    out = neighbours(a, direction)
    zero_hop = (out.astype(np.float64) == 0) & (a.astype(np.float64) == 0)
    return np.where(zero_hop, neighbours(out, direction), out)


@dataclass(frozen=True, slots=True)
class _Critical:
    expr: Expr      # zero where the behaviour changes
    text: str
    kind: str


@dataclass(frozen=True, slots=True)
class Criticals:
    """What `find` reads of a tree whatever the attribute values: the tree
    expanded, and its critical expressions, each with the names it reads.
    The case generator finds the boundaries of one formula for several
    attribute sets; it makes this once for all of them."""

    tree: FormulaTree
    items: tuple[tuple[_Critical, frozenset[str]], ...]


def criticals(tree: FormulaTree) -> Criticals:
    """`Criticals` of ``tree``, for `find`'s ``prepared``."""
    expanded = expand(tree)
    return Criticals(expanded, tuple((crit, names(crit.expr)) for crit in critical(expanded)))


def find(tree: FormulaTree, attrs: Mapping[str, Any] | None = None, *,
         inputs: Sequence[str] | None = None, prepared: Criticals | None = None) -> tuple[Boundary, ...]:
    """Every boundary of ``tree`` (expanded first) for these attribute values,
    sorted by input and value.  ``inputs`` are the varying names (default:
    the main statement's parameters, else every name not in ``attrs``).
    ``prepared``: `criticals` of ``tree``, made once for several calls."""
    prepared = criticals(tree) if prepared is None else prepared
    consts = {n: _exact(v) for n, v in (attrs or {}).items()}
    varying = _inputs(prepared.tree, consts, inputs)
    found: dict[tuple[str, float], Boundary] = {}
    for crit, read in prepared.items:
        for var in sorted(read & varying):
            if len(read & varying) > 1:
                continue  # a relation between inputs, not a point
            for b in _solve_all(crit, var, consts):
                seen = found.get((b.var, b.value))
                if seen is None:
                    found[(b.var, b.value)] = b
                elif b.cond not in seen.cond.split("; "):
                    found[(b.var, b.value)] = replace(seen, cond=f"{seen.cond}; {b.cond}")
    return tuple(sorted(found.values(), key=lambda b: (b.var, b.value, b.cond)))


def _inputs(tree: FormulaTree, consts: Mapping[str, Any], inputs: Sequence[str] | None) -> frozenset[str]:
    if inputs is not None:
        return frozenset(inputs)
    if tree.main.params is not None:
        return frozenset(tree.main.params)
    free = set().union(*(names(s.value) for s in tree.assignments))
    return frozenset(free - set(consts) - {s.target for s in tree.assignments})


def _exact(value: Any) -> Any:
    """An attribute's value as the implementation sees it, exactly."""
    if isinstance(value, str) and value.startswith("DML_"):
        return value
    if isinstance(value, float):
        return Fraction(float(np.float32(value)))
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, np.generic):
        return Fraction(float(value))
    return Fraction(fraction_to_float(Fraction(value), np.float32))


# -- critical expressions -------------------------------------------------------
def critical(tree: FormulaTree) -> Iterator[_Critical]:
    """The expressions whose zeros are boundaries, in tree order."""
    for s in tree.assignments:
        value = s.value
        parts: list[Expr] = []
        if isinstance(value, Piecewise):
            for b in value.branches:
                parts.extend([b.cond, b.value] if b.cond is not None else [b.value])
        else:
            parts.append(value)
        for part in parts:
            yield from _inner(part)


def _inner(e: Expr) -> Iterator[_Critical]:
    for node in walk(e):
        if isinstance(node, Binary) and node.op in _COMPARISONS:
            yield _Critical(Binary("-", node.left, node.right), expr_text(node), "branch")
        elif isinstance(node, Call):
            yield from _call(node)
        elif isinstance(node, Binary) and node.op == "/":
            yield _Critical(node.right, f"{expr_text(node.right)} == 0", "domain")


def _call(node: Call) -> Iterator[_Critical]:
    name = node.func.lower()
    if name in ("max", "min", "clamp"):
        args = node.args if name != "clamp" else (node.args[0], node.args[1], node.args[2])
        for a, b in itertools.combinations(args, 2):
            for pa, pb in itertools.islice(itertools.product(pieces(a), pieces(b)), _MAX_PIECES):
                yield _Critical(Binary("-", pa, pb), f"{expr_text(pa)} == {expr_text(pb)}", "kink")
    elif name in ("abs", "sign", "sqrt", "log", "ln") and node.args:
        kind = "kink" if name in ("abs", "sign") else "domain"
        yield _Critical(node.args[0], f"{expr_text(node.args[0])} == 0", kind)


def pieces(e: Expr) -> tuple[Expr, ...]:
    """The smooth pieces of ``e`` through min/max/clamp/?: (a few at most)."""
    if isinstance(e, Call) and e.func.lower() in ("max", "min", "clamp"):
        out: list[Expr] = []
        for a in e.args:
            out.extend(pieces(a))
        return tuple(dict.fromkeys(out))[:_MAX_PIECES]
    if isinstance(e, Conditional):
        return tuple(dict.fromkeys(pieces(e.then) + pieces(e.otherwise)))
    if isinstance(e, Binary) and e.op in "+-*/":
        combos = itertools.islice(itertools.product(pieces(e.left), pieces(e.right)), _MAX_PIECES)
        return tuple(Binary(e.op, a, b) for a, b in combos)
    if isinstance(e, Unary) and e.op in "-+":
        return tuple(Unary(e.op, p) for p in pieces(e.operand))
    return (e,)


# -- solving ----------------------------------------------------------------------
def _solve_all(crit: _Critical, var: str, consts: Mapping[str, Any]) -> Iterator[Boundary]:
    lin = linear(crit.expr, var, consts)
    if lin is not None:
        c1, c0 = lin
        if c1 != 0:
            root = -c0 / c1
            yield Boundary(var, float(root), crit.text, crit.kind, root)
        return
    approx = _isolate(crit.expr, var, consts)
    if approx is not None and np.isfinite(approx):
        yield Boundary(var, approx, crit.text, crit.kind)


def linear(e: Expr, var: str, consts: Mapping[str, Any]) -> tuple[Fraction, Fraction] | None:
    """(c1, c0) with ``e == c1 * var + c0`` exactly, or None if ``e`` is not
    linear in ``var`` (or reads another varying name)."""
    if isinstance(e, Num):
        return Fraction(0), e.value
    if isinstance(e, Name):
        if e.id == var:
            return Fraction(1), Fraction(0)
        value = consts.get(e.id)
        return (Fraction(0), value) if isinstance(value, Fraction) else None
    if isinstance(e, Unary) and e.op in "-+":
        inner = linear(e.operand, var, consts)
        return None if inner is None else ((-inner[0], -inner[1]) if e.op == "-" else inner)
    if isinstance(e, Binary) and e.op in "+-*/":
        a, b = linear(e.left, var, consts), linear(e.right, var, consts)
        if a is None or b is None:
            return None
        return _combine(e.op, a, b)
    return None


def _combine(op: str, a: tuple[Fraction, Fraction], b: tuple[Fraction, Fraction]) -> tuple[Fraction, Fraction] | None:
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[0], a[1] - b[1]
    if op == "*":
        if a[0] != 0 and b[0] != 0:
            return None
        return a[0] * b[1] + b[0] * a[1], a[1] * b[1]
    if b[0] != 0 or b[1] == 0:  # division by the variable, or by zero
        return None
    return a[0] / b[1], a[1] / b[1]


def _isolate(e: Expr, var: str, consts: Mapping[str, Any]) -> float | None:
    """Solve ``e == 0`` for ``var`` when it occurs once, inverting one step at
    a time at high precision; None when there is no real solution."""

    ctx = mp_context(128)
    try:
        root = _peel(ctx, e, ctx.mpf(0), var, consts)
    except (ValueError, ZeroDivisionError, TypeError):
        return None
    return None if root is None else float(root)


_INVERSES = {
    "exp": "log", "ln": "exp", "log": "exp", "sqrt": "square", "tanh": "atanh", "sinh": "asinh",
    "atanh": "tanh", "asinh": "sinh", "atan": "tan", "erf": "erfinv",
}


def _peel(ctx: Any, e: Expr, target: Any, var: str, consts: Mapping[str, Any]) -> Any:
    if isinstance(e, Name) and e.id == var:
        return target
    if var not in names(e):
        return None
    if isinstance(e, Unary) and e.op in "-+":
        return _peel(ctx, e.operand, -target if e.op == "-" else target, var, consts)
    if isinstance(e, Binary) and e.op in "+-*/":
        left_has = var in names(e.left)
        if left_has == (var in names(e.right)):
            return None  # on both sides: not a single occurrence
        other = _const(ctx, e.right if left_has else e.left, consts)
        inner = e.left if left_has else e.right
        return _peel(ctx, inner, _undo(ctx, e.op, left_has, target, other), var, consts)
    if isinstance(e, Call) and len(e.args) == 1 and e.func.lower() in _INVERSES:
        return _peel(ctx, e.args[0], _invert(ctx, e.func.lower(), target), var, consts)
    return None


def _undo(ctx: Any, op: str, var_on_left: bool, target: Any, other: Any) -> Any:
    if op == "+":
        return target - other
    if op == "-":
        return target + other if var_on_left else other - target
    if op == "*":
        return target / other
    return target * other if var_on_left else other / target


def _invert(ctx: Any, name: str, target: Any) -> Any:
    inverse = _INVERSES[name]
    if inverse == "square":
        if target < 0:
            raise ValueError("sqrt is never negative")
        return target * target
    fn = {"log": ctx.log, "exp": ctx.exp, "atanh": ctx.atanh, "asinh": ctx.asinh, "tanh": ctx.tanh,
          "sinh": ctx.sinh, "tan": ctx.tan, "erfinv": ctx.erfinv}[inverse]
    value = fn(target)
    if ctx.im(value) != 0 or ctx.isnan(value) or ctx.isinf(value):
        raise ValueError("no real inverse")
    return value


def _const(ctx: Any, e: Expr, consts: Mapping[str, Any]) -> Any:
    """A subexpression without the variable, at high precision."""

    env = {n: v for n, v in consts.items() if n in names(e)}
    missing = names(e) - set(env) - {"pi"}
    if missing:
        raise TypeError(f"names {sorted(missing)} have no value")
    return _Scalar(ctx, env, "propagate").run(FormulaTree((Assign("_", (), "=", e),)), None)


# -- overlapping branches -------------------------------------------------------
#: Attribute values tried when looking for overlapping branches.
SAMPLES: tuple[float, ...] = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
_MAX_COMBOS = 4096
_FIXED_INPUTS = (-3.0, -1.0, -0.25, 0.0, 0.25, 1.0, 3.0)


@dataclass(frozen=True, slots=True)
class Overlap:
    """Branches ``first`` and ``second`` (0-based, doc order) of the piecewise
    definition of ``target`` both hold at the witness: doc order decides, so
    the linter reports it."""

    target: str
    first: int
    second: int
    first_cond: str
    second_cond: str
    attrs: tuple[tuple[str, float], ...]
    inputs: tuple[tuple[str, float], ...]
    same_value: bool

    def message(self) -> str:
        at = ", ".join(f"{k}={v:g}" for k, v in self.attrs + self.inputs)
        effect = "both give the same value" if self.same_value else "the first one listed wins"
        return (f"branches {self.first + 1} ({self.first_cond}) and {self.second + 1} ({self.second_cond}) "
                f"of {self.target} both hold at {at}; {effect}")


def overlaps(tree: FormulaTree, *, inputs: Sequence[str] | None = None,
             samples: Mapping[str, Sequence[float]] | None = None) -> tuple[Overlap, ...]:
    """Pairs of piecewise branches whose conditions hold together for some
    attribute values (tried from ``samples``, default `SAMPLES` for every
    attribute) and inputs (around every boundary those values give)."""
    expanded = expand(tree)
    varying = _inputs(expanded, {}, inputs)
    out: list[Overlap] = []
    for s in expanded.assignments:
        if not isinstance(s.value, Piecewise):
            continue
        conds = [(i, b.cond) for i, b in enumerate(s.value.branches) if b.cond is not None]
        pairs = list(itertools.combinations(conds, 2))
        if pairs:
            found = _witnesses(expanded, s.target, pairs, varying, samples or {})
            values = s.value.branches
            out.extend(replace(o, same_value=values[o.first].value == values[o.second].value) for o in found)
    return tuple(out)


def _witnesses(tree: FormulaTree, target: str, pairs: list[Any], varying: frozenset[str],
               samples: Mapping[str, Sequence[float]]) -> Iterator[Overlap]:
    used = set().union(*(names(c) for pair in pairs for _, c in pair))
    attrs = sorted(n for n in used - varying if not n.startswith("DML_") and n != "pi")
    ins = sorted(used & varying)
    pending = list(pairs)
    grid = itertools.islice(itertools.product(*(samples.get(a, SAMPLES) for a in attrs)), _MAX_COMBOS)
    for combo in grid:
        values = dict(zip(attrs, combo, strict=True))
        truth = _truths(tree, [c for pair in pending for _, c in pair], values, ins)
        if truth is None:
            continue
        grid_inputs, results = truth
        for pair in list(pending):
            (i, ci), (j, cj) = pair
            both = results[expr_text(ci)] & results[expr_text(cj)]
            if both.any():
                k = int(np.flatnonzero(both)[0])
                pending.remove(pair)
                yield Overlap(target, i, j, expr_text(ci), expr_text(cj), tuple(values.items()),
                              tuple((n, float(grid_inputs[n][k])) for n in ins), False)
        if not pending:
            return


def _truths(tree: FormulaTree, conds: list[Expr], attrs: Mapping[str, float], ins: list[str]
            ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    points: dict[str, set[float]] = {n: set(_FIXED_INPUTS) for n in ins}
    for b in find(tree, attrs, inputs=ins):
        step = abs(b.value) * 1e-3 + 1e-3
        points[b.var].update((b.value - step, b.value, b.value + step))
    axes = [np.asarray(sorted(points[n])) for n in ins]
    mesh = np.meshgrid(*axes, indexing="ij") if axes else []
    grid = {n: m.reshape(-1) for n, m in zip(ins, mesh, strict=True)}
    env = {n: Val(v) for n, v in grid.items()}
    env.update({n: Val(np.float64(np.float32(v))) for n, v in attrs.items()})
    ev = Evaluator(env, Settings(track=False))
    try:
        with np.errstate(all="ignore"):
            return grid, {expr_text(c): np.asarray(ev.truth(ev.expr(c)), dtype=bool).reshape(-1) for c in conds}
    except (FormulaError, ValueError, TypeError):  # a condition this grid cannot evaluate
        return None
