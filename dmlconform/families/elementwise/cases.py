"""The element-wise family's cases: a spec with a formula and a feature
level in, cases out.

DESIGN.md, "Cases".  Everything comes from the spec alone: the tensors and
their roles (``fields``), the data types and dimension counts of the support
table in force at the level, the ``same DataType`` constraints (which tensors
share the case's data type), ``in_place`` (aliasing), the attribute defaults,
and the formula, whose branch boundaries (`formula.boundaries.find`) become
input values.  Every case's random values depend on the seed and the case's
id alone (counter-based draws, `cases.draws`, for all the cases of a spec at
once), so a case is reproducible alone and the suite is identical for a seed.

Per operator and data type the suite holds (at the representative dimension
count: 4 where allowed, else the largest allowed):

* ``edges`` at every allowed dimension count: the edge values of the type
  (`cases.edges`), every boundary point and random values, shuffled;
* ``pairs`` (two or more inputs read by the formula): the cross product of the
  edge values of the first two inputs, so NaN meets every value and inf meets inf;
* ``boundary(cond)``: one per boundary of the default attributes, the input
  holding the boundary and its neighbours in the target type;
* ``edges`` once per attribute variant: 0, negative, tiny, huge for every FLOAT
  attribute the formula reads, and each one set above each other one
  (``Bias > Threshold``), enum constants the formula names, both booleans;
  two FLOAT attributes that meet in one branch or one term varied together
  (each negative, zero, positive: ``Threshold < 0`` with ``Bias != 0``);
* ``ambiguity(<id>)``: per ambiguity of the spec the data type can show,
  attributes and inputs on which its readings give different results
  (docs/ambiguities.md);
* layouts ``padded`` (all tensors, input gaps hold NaN or the type's max),
  ``broadcast`` (the last input with stride 0 on all but its innermost
  dimension; a single input on its outermost one), ``in_place`` (where
  ``in_place`` allows it and the data types match), ``large`` (with
  ``large=True``: one >= 2^22-element case per operator);
* negative cases (``negative=True``): a data type and a dimension count outside
  the table, with ``expect_supported=False``; and ``invalid`` cases: each
  attribute with a numeric ``domain`` set just outside each bound and further
  out (``out_of_domain`` names it: the backend must reject it cleanly or
  compute the formula correctly).

Attributes stay inside their ``domain`` (issue #22 item 4) in every other
case: the typical value is the default, else the doc's ``typical`` value,
else a plain value moved inside the domain; the edge variants that fall
outside it are dropped and the domain's bounds and their float32 neighbours
inside are added.

Case ids: ``OPERATOR/DTYPE/<N>d/<what>[/<attrs>][/<layout>]``, e.g.
``ACTIVATION_SHRINK/FLOAT16/4d/boundary(x>Threshold)/Bias=0,Threshold=0.5`` or
``ELEMENT_WISE_ADD/INT8/4d/edges/broadcast``; attributes in struct order,
FLOAT values as the shortest text of their float32 value.

Attributes the generator cannot choose make a spec not runnable (`is_runnable`
says why): an array attribute, an integer without a default, an enum without a
default whose constants the formula does not name.  Pointer attributes
(``ScaleBias``, ``FusedActivation``) are left null.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.cases import draws
from dmlconform.cases import edges as ev
from dmlconform.cases.model import Case, Layout, TensorData, buffer_elements, packed_strides
from dmlconform.errors import FormulaError, InputError
from dmlconform.families.elementwise.binding import Binding, bind, common_ranks, enum_constants, is_runnable
from dmlconform.formula import boundaries
from dmlconform.formula.boundaries import Boundary
from dmlconform.formula.refine import rounds_to_integer
from dmlconform.limits import MAX_EXACT_ROWS
from dmlconform.plan import DRAW_ELEMENTS, pack
from dmlconform.spec.ambiguity import meeting_groups, value_names
from dmlconform.spec.model import (
    DATA_TYPE_ORDER,
    AmbiguityKind,
    ConstraintKind,
    DataType,
    Domain,
    FeatureLevel,
    Field,
    FieldKind,
    Spec,
    SupportTable,
)

Attrs = tuple[tuple[str, Any], ...]
_SHAPES: dict[int, tuple[int, ...]] = {
    1: (67,), 2: (5, 13), 3: (3, 1, 23), 4: (2, 3, 1, 11), 5: (1, 3, 2, 11, 1), 6: (2, 1, 3, 1, 11, 1),
    7: (1, 2, 3, 1, 1, 11, 1), 8: (1, 2, 1, 3, 1, 11, 1, 1), 9: (1, 1, 1, 1, 1, 1, 2, 3, 11),
}
_LARGE = (2, 2049, 1025)  # 4,200,450 >= 2**22 elements
#: The distinct rows of operands of a large case (`draws.Request.period`): a
#: large case tests size (chunks, offsets past 2**31 bytes), the small cases
#: test values.  Drawn freely, TANH's 4.2 million values held 84,393 whose
#: float64 value is not enough (tiny x: 1 - exp(-2x) cancels) and over 4,096
#: beyond long double's range, which took mpmath more than 600 s; with at
#: most `MAX_EXACT_ROWS` distinct rows each is evaluated once, within its budget.
LARGE_DISTINCT = MAX_EXACT_ROWS
_TYPICAL = (0.5, 2.0, 0.25, 1.5)  # FLOAT attributes without a default, by position
_F32 = np.finfo(np.float32)


# -- data types ------------------------------------------------------------------------
def _groups(spec: Spec, tensors: tuple[str, ...]) -> list[list[str]]:
    """Tensors tied by ``same DataType`` constraints, in struct order."""
    parent = {t: t for t in tensors}

    def root(t: str) -> str:
        while parent[t] != t:
            t = parent[t]
        return t

    for c in spec.constraints:
        if c.kind is ConstraintKind.SAME and "DataType" in c.properties:
            members = [t for t in c.tensors if t in parent]
            for t in members[1:]:
                parent[root(t)] = root(members[0])
    groups: dict[str, list[str]] = {}
    for t in tensors:
        groups.setdefault(root(t), []).append(t)
    return list(groups.values())


def _dtype_plan(spec: Spec, table: SupportTable, bound: Binding) -> tuple[list[str], list[list[str]]]:
    """The primary group (whose data types the cases iterate) and the others.
    A lone tensor with the primary's exact type list joins it."""
    tensors = bound.inputs + bound.outputs
    groups = _groups(spec, tensors)
    allowed = {t: tuple(r.dtypes) if (r := table.row(t)) else () for t in tensors}
    inputs = [g for g in groups if any(t in bound.inputs for t in g)] or groups
    primary = max(inputs, key=lambda g: (len(_common(g, allowed)), -groups.index(g)))
    rest = []
    for g in groups:
        if g is primary:
            continue
        if len(g) == 1 and allowed[g[0]] == _common(primary, allowed):
            primary = primary + g
        else:
            rest.append(g)
    return primary, rest


def _common(group: list[str], allowed: dict[str, tuple[DataType, ...]]) -> tuple[DataType, ...]:
    first = [d for d in allowed[group[0]] if d not in (DataType.INT4, DataType.UINT4)]
    return tuple(d for d in first if all(d in allowed[t] for t in group))


def _assign(primary: list[str], rest: list[list[str]], allowed: dict[str, tuple[DataType, ...]],
            dtype: DataType, index: int) -> dict[str, DataType]:
    """Each tensor's data type: the primary group gets ``dtype``, every other
    group cycles through its own allowed types with ``index``."""
    out = {t: dtype for t in primary}
    for g in rest:
        common = _common(g, allowed) or (dtype,)
        out.update({t: common[index % len(common)] for t in g})
    return out


# -- attributes ------------------------------------------------------------------------
def _f32(x: float) -> float:
    return float(np.float32(x))


def _is_floatlike(f: Field) -> bool:
    return (f.kind is FieldKind.SCALAR and f.c_type == "FLOAT") or f.c_type == "DML_SCALAR_UNION"


def _typical(spec: Spec, dtype: DataType) -> Attrs:
    """The attributes' typical values: the doc's default (its exact text such
    as ``"1/6"`` where it gives one), else a plain value by position."""
    out: list[tuple[str, Any]] = []
    position = 0
    for f in spec.attributes:
        if f.kind is FieldKind.STRUCT_PTR:
            continue
        if f.default_exact is not None and _allowed(f, f.default_exact):
            value: Any = f.default_exact
        elif _is_floatlike(f):
            value = f.default if f.default is not None else f.typical
            if value is None or (isinstance(value, float) and not math.isfinite(value)):
                value = _TYPICAL[position % len(_TYPICAL)]
                position += 1
            value = _in_domain(spec, f, float(value), dtype)
        elif f.kind is FieldKind.ENUM:
            value = f.default if f.default is not None else enum_constants(spec, f)[0]
            value = value + dtype.name if value == "DML_TENSOR_DATA_TYPE_" else value
        elif f.c_type == "BOOL":
            value = bool(f.default) if f.default is not None else False
        else:
            value = int(f.default)  # type: ignore[arg-type]  # an integer field's default is an int (the schema)
        out.append((f.name, value))
    return tuple(out)


def _in_type(f: Field, value: float, dtype: DataType) -> float | int:
    """A FLOAT member is float32; a scalar union holds the case's data type."""
    if f.c_type == "DML_SCALAR_UNION" and not dtype.is_float:
        info = np.iinfo(ev.np_dtype(dtype))
        return int(np.clip(round(value), info.min, info.max))
    if f.c_type == "DML_SCALAR_UNION":
        with np.errstate(over="ignore"):
            return float(np.asarray(value).astype(ev.np_dtype(dtype)))
    return _f32(value)


def _number(value: Any) -> float:
    if isinstance(value, str):
        return float(Fraction(value))
    return float(value)


def _variants(spec: Spec, bound: Binding, dtype: DataType) -> list[Attrs]:
    """The typical attributes first, then one change each (DESIGN.md: the
    defaults and edge values: 0, negative, tiny, huge, one above another)."""
    base = _typical(spec, dtype)
    current = dict(base)
    read = [f for f in spec.attributes if f.name in bound.attributes or f.name in current]
    changes: list[tuple[str, Any]] = []
    floats = [f for f in read if _is_floatlike(f) and f.name in bound.attributes]
    for f in floats:
        t = _number(current[f.name])
        fi = _F32 if f.c_type == "FLOAT" or not dtype.is_float else ev.finfo(ev.np_dtype(dtype))
        for v in (0.0, -abs(t) if t else -1.0, float(fi.smallest_normal), float(fi.max), *_domain_edges(f.domain)):
            changes.append((f.name, _in_type(f, v, dtype)))
    for p, q in itertools.permutations(floats, 2):
        changes.append((p.name, _in_type(p, _number(current[q.name]) + 1, dtype)))
    fields = {f.name: f for f in floats}
    changes = [(n, v) for n, v in changes if n not in fields or _allowed(fields[n], v)]
    for f in read:
        if f.kind is FieldKind.ENUM and f.default is None and f.c_type != "DML_TENSOR_DATA_TYPE":
            changes.extend((f.name, c) for c in enum_constants(spec, f))
        elif f.c_type == "BOOL":
            changes.append((f.name, not current[f.name]))
    out, seen = [base], {base}
    singles = [tuple((n, value if n == name else v) for n, v in base) for name, value in changes]
    pairs = [attrs for attrs in _pair_variants(bound, base, floats, dtype) if _all_allowed(spec, attrs)]
    for attrs in singles + pairs:
        if attrs not in seen:
            seen.add(attrs)
            out.append(attrs)
    return out


def _allowed(f: Field, value: Any) -> bool:
    """Whether ``value`` lies in ``f``'s domain (always, without one)."""
    return f.domain is None or f.domain.contains(_number(value))


def _all_allowed(spec: Spec, attrs: Attrs) -> bool:
    """Whether every FLOAT-like attribute of ``attrs`` lies in its domain:
    a positive case never sets one outside (those are `_invalid` cases)."""
    fields = {f.name: f for f in spec.attributes if _is_floatlike(f)}
    return all(_allowed(fields[n], v) for n, v in attrs if n in fields)


def _inside(domain: Domain | None, value: float) -> float:
    """``value``, or where it lies outside ``domain`` a plain value inside:
    the middle of two numeric bounds, else ``value``'s size away from the
    one bound (1 away where that is 0)."""
    if domain is None or domain.contains(value):
        return value
    step = abs(value) or 1.0
    if domain.min is not None and domain.max is not None:
        return (domain.min + domain.max) / 2
    if domain.min is not None:
        return domain.min + step
    assert domain.max is not None  # contains() is False only with a numeric bound
    return domain.max - step


def _in_domain(spec: Spec, f: Field, value: float, dtype: DataType) -> float | int:
    """``value`` in ``f``'s type, inside its domain (`_inside`; where the
    type's rounding takes that outside, the first of `_domain_edges` that
    stays inside).  A domain with no value of the type is an `InputError`."""
    moved = _in_type(f, _inside(f.domain, value), dtype)
    if _allowed(f, moved) and math.isfinite(moved):
        return moved
    fits = [v for v in (_in_type(f, e, dtype) for e in _domain_edges(f.domain)) if _allowed(f, v) and math.isfinite(v)]
    if not fits:
        assert f.domain is not None  # without one every value is allowed
        raise InputError(f"{spec.operator}: attribute {f.name}'s domain {f.domain.render()} holds no "
                         f"{'float32' if f.c_type == 'FLOAT' else dtype.name} value; fix it in the spec (lint DML124)")
    return fits[0]


def _domain_edges(domain: Domain | None) -> tuple[float, ...]:
    """The float32 values nearest each numeric bound inside ``domain`` (the
    bound itself where it is inclusive) and their neighbours further in."""
    out: list[float] = []
    for bound, inclusive, inward in _sides(domain):
        first = np.float32(bound) if inclusive else np.nextafter(np.float32(bound), np.float32(inward))
        out += [float(first), float(np.nextafter(first, np.float32(inward)))]
    return tuple(out)


def _outside(domain: Domain | None) -> tuple[float, ...]:
    """A few values outside ``domain``: per numeric bound, the float32 value
    just outside it (the bound itself where it is exclusive) and one further
    out (the bound's size, at least 1, away); finite float32 values only."""
    out: list[float] = []
    for bound, inclusive, inward in _sides(domain):
        first = np.nextafter(np.float32(bound), np.float32(-inward)) if inclusive else np.float32(bound)
        out += [float(first), bound - np.sign(inward) * max(1.0, abs(bound))]
    return tuple(v for v in out if abs(v) <= _F32.max)


def _sides(domain: Domain | None) -> list[tuple[float, bool, float]]:
    """(bound, inclusive, the direction into the domain) per numeric bound."""
    if domain is None:
        return []
    sides = [(domain.min, domain.min_inclusive, math.inf), (domain.max, domain.max_inclusive, -math.inf)]
    return [(float(b), inclusive, inward) for b, inclusive, inward in sides if b is not None]


def _pair_variants(bound: Binding, base: Attrs, floats: list[Field], dtype: DataType) -> list[Attrs]:
    """Two FLOAT attributes that meet in one branch or one term
    (`spec.ambiguity.meeting_groups`) varied together: each negative, zero
    and positive (its typical magnitude, 1 where that is 0), so that sign
    combinations such as ``Threshold < 0`` with ``Bias != 0`` are cases."""
    groups = meeting_groups(bound.tree)
    current = dict(base)
    out = []
    for p, q in itertools.combinations(floats, 2):
        if not any(p.name in g and q.name in g for g in groups):
            continue
        signs = [(f, abs(_number(current[f.name])) or 1.0) for f in (p, q)]
        for a, b in itertools.product((-1.0, 0.0, 1.0), repeat=2):
            values = {f.name: _in_type(f, sign * size, dtype) for (f, size), sign in zip(signs, (a, b))}
            out.append(tuple((n, values.get(n, v)) for n, v in base))
    return out


#: FLOAT attribute values next to a rounding edge of integer arithmetic: a
#: half (exact, float and attribute-cast-first readings part), its negative,
#: and a fraction float32 loses next to an integer of 100 (float32 and
#: float64 part).
_ROUNDING_EDGES = (1.5, -1.5, 2.0 ** -20)
#: Kinds whose cases are the inputs' edge values against each other (an
#: integer b = 0, a float b = +-inf), per whether the type is float.
_PAIRED = {False: (AmbiguityKind.DIVISION_BY_ZERO,), True: (AmbiguityKind.INFINITE_DIVISOR,)}
#: Exponents at which IEEE 754's pow has special values for the edge inputs
#: (-inf, -0, -1, negative finite): 0.5, a negative odd integer, -0.5 (an
#: infinite attribute is no FLOAT value the oracle takes).
_POW_EXPONENTS = (0.5, -3.0, -0.5)
#: FLOAT attribute values whose float result leaves every integer type
#: (FLT_MAX: wrap 0, saturate the bound, x86 INT_MIN) or only int32 (3e9).
_FLOAT_OUT_OF_RANGE = (_f32(3.4028234663852886e38), _f32(3e9))


def _ambiguity_cases(ctx: _Ctx, base: Attrs, dtype: DataType) -> Iterator[tuple[str, Attrs, bool]]:
    """Per ambiguity of the spec that ``dtype`` can show (docs/ambiguities.md):
    (what, attributes, whether the inputs are the pairs' cross product) of
    the cases whose readings give different results."""
    floats = [f for f in ctx.spec.attributes if f.c_type == "FLOAT" and f.name in ctx.bound.attributes]
    for a in ctx.spec.ambiguities:
        what = f"ambiguity({a.id})"
        if a.kind is AmbiguityKind.NAN and dtype.is_float:
            yield what, base, False
        elif a.kind is AmbiguityKind.BRANCH_OVERLAP:
            yield from ((what, attrs, False) for attrs in _overlap_attrs(ctx, base, floats, dtype))
        elif a.kind is AmbiguityKind.INTEGER_FLOAT_ATTRIBUTE and not dtype.is_float and not floats:
            yield what, base, len(ctx.bound.names) >= 2  # an integer pow: C computes it in double
        elif a.kind is AmbiguityKind.INTEGER_FLOAT_ATTRIBUTE and not dtype.is_float:
            for value in _ROUNDING_EDGES:
                yield what, _set(base, {f.name: _f32(value) for f in floats}), False
        elif a.kind is AmbiguityKind.INTEGER_OVERFLOW and not dtype.is_float:
            in_values = value_names(ctx.bound.tree)
            big = -float(np.iinfo(ev.np_dtype(dtype)).max)
            yield what, _set(base, {f.name: _f32(big) for f in floats if f.name in in_values}), \
                len(ctx.bound.names) >= 2
        elif a.kind in _PAIRED.get(dtype.is_float, ()):
            yield what, base, len(ctx.bound.names) >= 2
        elif a.kind is AmbiguityKind.IEEE_POW and dtype.is_float and not floats:
            yield what, base, len(ctx.bound.names) >= 2  # pow of two tensors: their edges against each other
        elif a.kind is AmbiguityKind.IEEE_POW and dtype.is_float:
            for value in _POW_EXPONENTS:
                yield what, _set(base, {f.name: value for f in floats}), False
        elif a.kind is AmbiguityKind.FLOAT_TO_INTEGER and not dtype.is_float:
            read = [f.name for f in floats if f.name in value_names(ctx.bound.tree)]
            if not read:
                yield what, base, len(ctx.bound.names) >= 2
            for value in _FLOAT_OUT_OF_RANGE if read else ():
                yield what, _set(base, {name: value for name in read}), False


def _overlap_attrs(ctx: _Ctx, base: Attrs, floats: list[Field], dtype: DataType) -> list[Attrs]:
    """Attributes at which two branches with different values both hold
    (the witness `boundaries.overlaps` found), every other FLOAT attribute
    the formula reads set to 1 where it is 0 (so the values differ)."""
    found = [o for o in boundaries.overlaps(ctx.bound.tree) if not o.same_value]
    out = []
    for o in found[:1]:
        witness = dict(o.attrs)
        values = {f.name: _f32(witness[f.name]) if f.name in witness else (_number(dict(base)[f.name]) or 1.0)
                  for f in floats}
        out.append(_set(base, {n: _in_type(ctx.spec.field(n) or floats[0], v, dtype) for n, v in values.items()}))
    return out


def _set(base: Attrs, values: dict[str, Any]) -> Attrs:
    """``base`` with ``values`` in place of some attributes."""
    return tuple((n, values.get(n, v)) for n, v in base)


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = str(np.float32(value)) if value == _f32(value) else repr(value)
        return text.removesuffix(".0")
    return str(value)


def attrs_text(attrs: Attrs) -> str:
    """``Bias=0,Threshold=0.5``: the attribute segment of a case id."""
    return ",".join(f"{n}={_fmt(v)}" for n, v in attrs)


# -- values ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Pool:
    """Values an input must hold, and the edge classes they cover; of
    those, the ``plain`` ones (the type's edge values: they come first, so
    they always fit in the small shapes) and the boundaries'."""

    values: np.ndarray
    edges: tuple[str, ...]
    plain: tuple[str, ...]

    def covered(self, count: int) -> tuple[str, ...]:
        """The edge classes whose values fit in ``count`` elements."""
        return self.edges if count >= self.values.size else self.plain


#: What `boundaries.find` may raise: attribute values for which the formula
#: has no solvable boundary, or a formula it cannot expand.
_NO_BOUNDARY = (FormulaError, ValueError, TypeError, ZeroDivisionError, OverflowError)


def _criticals(bound: Binding) -> Any:
    """The formula's `boundaries.Criticals` (the same for every attribute
    set: made once per generate() call), or None where it has none."""

    try:
        return boundaries.criticals(bound.tree)
    except _NO_BOUNDARY:
        return None


def _boundaries(ctx: _Ctx, attrs: Attrs) -> tuple[Any, ...]:
    if ctx.criticals is None:
        return ()
    names = [n for _, n in ctx.bound.names]
    try:
        return boundaries.find(ctx.bound.tree, dict(attrs), inputs=names, prepared=ctx.criticals)
    except _NO_BOUNDARY:
        return ()


def _found(ctx: _Ctx, attrs: Attrs) -> tuple[Any, ...]:
    """`_boundaries` of ``attrs``, once per generate() call."""
    if attrs not in ctx.found:
        ctx.found[attrs] = _boundaries(ctx, attrs)
    return ctx.found[attrs]


def _cond(b: Any) -> str:
    return b.cond.split("; ")[0].replace(" ", "")


def _boundary_pool(b: Any, dtype: DataType) -> np.ndarray:
    """The boundary's points in ``dtype`` (read-only); none where it lies
    beyond the type's range (``Boundary.points`` overflows there).  They
    depend on the boundary's value alone: many operators share a few values
    (0, 1, -1...), so they are computed once per value and type."""
    return _value_pool(b.value, b.exact, dtype)


@functools.lru_cache(maxsize=4096)
def _value_pool(value: float, exact: Any, dtype: DataType) -> np.ndarray:
    points = _boundary_points(Boundary("x", value, "", "", exact), dtype)
    points.flags.writeable = False
    return points


def _boundary_points(b: Any, dtype: DataType) -> np.ndarray:
    if not np.isfinite(b.value):
        return np.empty(0, ev.np_dtype(dtype))
    try:
        points = b.points(ev.np_dtype(dtype)) if dtype.is_float else None
    except OverflowError:
        return np.empty(0, ev.np_dtype(dtype))
    return ev.boundary_points(b.exact, b.value, dtype, points)


def _pools(ctx: _Ctx, found: tuple[Any, ...], dtypes: dict[str, DataType]) -> dict[str, _Pool]:
    """Per input read by the formula: its type's edge values and every
    boundary point among ``found``; each input's pool made once per
    boundaries, formula name and data type (held in ``ctx.pools``: the data
    types of the other tensors change none of it)."""
    out = {}
    for tensor, name in ctx.bound.names:
        dtype = dtypes[tensor]
        pool = ctx.pools.get((found, name, dtype))
        if pool is None:
            pool = ctx.pools[found, name, dtype] = _pool(found, name, dtype, rounds_to_integer(ctx.bound.tree))
        out[tensor] = pool
    return out


def _pool(found: tuple[Any, ...], name: str, dtype: DataType, rounds: bool = False) -> _Pool:
    """The edge values of ``dtype`` and the points of the boundaries of
    formula name ``name`` among ``found``; with ``rounds`` (the formula
    rounds to an integer) the halves and their neighbours too (`_ties`)."""
    parts = [_edge_array(dtype)]
    labels = [e.name for e in ev.edge_values(dtype)]
    if rounds and dtype.is_float:
        parts.append(_ties(dtype))
        labels.append("ties")
    for b in found:
        if b.var == name:
            parts.append(_boundary_pool(b, dtype))
            labels.append(f"boundary:{_cond(b)}")
    edges = tuple(dict.fromkeys(labels))
    plain = tuple(e for e in edges if not e.startswith("boundary:"))
    return _Pool(np.concatenate(parts), edges, plain)


@functools.cache
def _ties(dtype: DataType) -> np.ndarray:
    """Where rounding to an integer jumps: the halves +-0.5, 1.5, 2.5, the
    largest half of the type (2**(p-1) - 0.5) and each one's float
    neighbours (0.49999997 must not round up), and the integers around
    2**p, where every value is one (read-only; one per type)."""
    nt = ev.np_dtype(dtype)
    top = float(2 ** (ev.finfo(nt).nmant + 1))  # 2**p: the first float whose neighbours are 2 apart
    halves = np.asarray([0.5, 1.5, 2.5, top / 2 - 0.5], dtype=nt)
    near = np.concatenate([halves, np.nextafter(halves, nt.type(0)), np.nextafter(halves, nt.type(np.inf)),
                           np.asarray([top - 1, top, top + 2], dtype=nt)])
    values = np.concatenate([near, -near])
    values.flags.writeable = False
    return values


@functools.cache
def _edge_array(dtype: DataType) -> np.ndarray:
    """The edge values of ``dtype`` as an array of it (read-only; one per type)."""
    values = np.asarray([e.value for e in ev.edge_values(dtype)], dtype=ev.np_dtype(dtype))
    values.flags.writeable = False
    return values


# -- tensors ---------------------------------------------------------------------------
def _padded_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Strides with a gap of two elements after every row of every dimension."""
    out, step = [], 1
    for size in reversed(sizes):
        out.append(step)
        step = step * size + 2
    return tuple(reversed(out))


def _canary(dtype: DataType) -> Any:
    return np.nan if dtype.is_float else np.iinfo(ev.np_dtype(dtype)).max


def _tensor(name: str, dtype: DataType, sizes: tuple[int, ...], strides: tuple[int, ...],
            logical: np.ndarray) -> TensorData:
    """A read-only buffer holding ``logical`` (broadcastable to ``sizes``) at
    ``strides``; gaps hold a canary (NaN or the type's max)."""
    nt = ev.np_dtype(dtype)
    count = buffer_elements(sizes, strides)
    if logical.shape == sizes and count == logical.size and strides == packed_strides(sizes):
        # packed: the values in order, no gap to fill (the drawn values are fresh arrays: no copy)
        buf = logical.reshape(-1) if logical.dtype == nt else logical.astype(nt).reshape(-1)
    else:
        buf = np.full(count, _canary(dtype), dtype=nt)
        # the logical view by the ndarray constructor (twice as fast as as_strided); assignment broadcasts
        view = np.ndarray(sizes, nt, buf, 0, tuple(s * nt.itemsize for s in strides))
        view[...] = logical.astype(nt, copy=False)
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)


def _broadcast_dims(sizes: tuple[int, ...], multi: bool) -> tuple[int, ...]:
    """Dimensions an input is broadcast on (stride 0): all but the innermost for
    the last of several inputs, the outermost non-1 one for a single input."""
    if multi:
        return tuple(range(len(sizes) - 1))
    return next(((i,) for i, s in enumerate(sizes) if s > 1), ())


# -- cases -----------------------------------------------------------------------------
#: Per input read by a filler: (pool, fixed) -- a pool to put first among random
#: values, or values taken as they are; (None, None): random values only.
Recipe = dict[str, tuple[np.ndarray | None, np.ndarray | None]]
Filler = Callable[["_Types", int], tuple[Recipe, tuple[str, ...]]]  # -> (recipe per input, edge classes sorted)
TypesKey = tuple[tuple[str, DataType], ...]  # (tensor, data type) pairs, sorted


@dataclass(frozen=True, slots=True)
class _Types:
    """Each tensor's data type in the cases of one (data type, index), made
    once for all of them; ``key``: the same, hashable (a recipe's key)."""

    dtypes: dict[str, DataType]
    key: TypesKey


@dataclass(frozen=True, slots=True)
class _Ctx:
    spec: Spec
    bound: Binding
    table: SupportTable
    level: FeatureLevel
    seed: int
    primary: tuple[str, ...]
    rest: tuple[tuple[str, ...], ...]
    allowed: dict[str, tuple[DataType, ...]]
    show_attrs: bool
    criticals: Any  # `_criticals`
    #: Per generate() call: the formula's boundaries per attribute values (they
    #: do not depend on the data type), the value pools per boundaries,
    #: formula name and data type, and the fillers' recipes per attribute
    #: values, data types (`_Types.key`) and count, computed once.
    found: dict[Attrs, tuple[Any, ...]] = dataclass_field(default_factory=dict)
    pools: dict[tuple[tuple[Any, ...], str, DataType], _Pool] = dataclass_field(default_factory=dict)
    recipes: dict[tuple[Attrs, TypesKey, int], tuple[Recipe, tuple[str, ...]]] = dataclass_field(default_factory=dict)
    texts: dict[Attrs, str] = dataclass_field(default_factory=dict)  # `attrs_text` per attribute values
    types: dict[tuple[DataType, int], _Types] = dataclass_field(default_factory=dict)  # `_types`
    zeros: dict[tuple[DataType, int], np.ndarray] = dataclass_field(default_factory=dict)  # `_output`


@dataclass(frozen=True, slots=True)
class _Shape:
    """What one case looks like, apart from its values."""

    dtype: DataType
    index: int
    sizes: tuple[int, ...]
    what: str
    attrs: Attrs
    layout: Layout = Layout.PACKED
    tag: str | None = None
    supported: bool = True
    invalid: tuple[str, ...] = ()   # attributes outside their domain (`Case.out_of_domain`)


@dataclass(frozen=True, slots=True)
class _Draft:
    """One case's id and shape, and what makes its values' recipe: all
    `generate` needs to keep or drop the case.  Only a kept one becomes a
    `_Plan` (the recipes are most of a plan: --shard 1/16 planned every
    case of the suite to keep a sixteenth, 0.8 s; issue #31, item 6)."""

    id: str
    shape: _Shape
    fill: Filler


@dataclass(frozen=True, slots=True)
class _Plan:
    """One case before its values are drawn: the values of every case of a
    spec are drawn together (`draws.fill`)."""

    id: str
    shape: _Shape
    dtypes: dict[str, DataType]
    requests: tuple[draws.Request, ...]  # one per input, in ``bound.inputs`` order
    edges: tuple[str, ...]


def _types(ctx: _Ctx, dtype: DataType, index: int) -> _Types:
    """`_assign` of ``dtype`` and ``index``, once per generate() call."""
    found = ctx.types.get((dtype, index))
    if found is None:
        dtypes = _assign(list(ctx.primary), [list(g) for g in ctx.rest], ctx.allowed, dtype, index)
        found = ctx.types[dtype, index] = _Types(dtypes, tuple(sorted(dtypes.items())))
    return found


def _draft(ctx: _Ctx, shape: _Shape, fill: Filler) -> _Draft:
    parts = [ctx.spec.operator, shape.dtype.name, f"{len(shape.sizes)}d", shape.what]
    if ctx.show_attrs:
        text = ctx.texts.get(shape.attrs)
        parts.append(text if text is not None else ctx.texts.setdefault(shape.attrs, attrs_text(shape.attrs)))
    parts += [shape.tag or shape.layout.value] if shape.tag or shape.layout is not Layout.PACKED else []
    return _Draft("/".join(parts), shape, fill)


def _plan(ctx: _Ctx, draft: _Draft) -> _Plan:
    shape, case_id = draft.shape, draft.id
    types = _types(ctx, shape.dtype, shape.index)
    dtypes = types.dtypes
    count = math.prod(shape.sizes)
    recipe, edges = draft.fill(types, count)
    period, picker = (LARGE_DISTINCT, draws.stream_key(ctx.seed, case_id, "")) if shape.tag == "large" else (0, 0)
    requests = tuple([draws.Request(draws.stream_key(ctx.seed, case_id, name), dtypes[name], count,
                                    *recipe.get(name, (None, None)), period=period, picker=picker)
                      for name in ctx.bound.inputs])
    return _Plan(case_id, shape, dtypes, requests, edges)


def _build(ctx: _Ctx, plan: _Plan, values: list[np.ndarray]) -> Case:
    """The case of ``plan`` with its inputs' drawn ``values``."""
    shape, dtypes = plan.shape, plan.dtypes
    packed = packed_strides(shape.sizes)
    inputs = tuple([_input(ctx, name, dtypes[name], shape, packed, flat)
                    for name, flat in zip(ctx.bound.inputs, values)])
    pair = _alias(ctx, dtypes) if shape.layout is Layout.IN_PLACE else None
    outputs = []
    for name in ctx.bound.outputs:
        if pair is not None and pair[0] == name:
            src = next(t for t in inputs if t.name == pair[1])
            outputs.append(_output(ctx, name, dtypes[name], src.sizes, src.strides))
        else:
            strides = _padded_strides(shape.sizes) if shape.layout is Layout.PADDED else packed
            outputs.append(_output(ctx, name, dtypes[name], shape.sizes, strides))
    return Case(id=plan.id, operator=ctx.spec.operator, level=ctx.level, dtype=shape.dtype,
                inputs=inputs, outputs=tuple(outputs), attributes=shape.attrs, layout=shape.layout,
                aliases=(pair,) if pair else (), expect_supported=shape.supported,
                edges=plan.edges, seed=ctx.seed, out_of_domain=shape.invalid)


def _input(ctx: _Ctx, name: str, dtype: DataType, shape: _Shape, packed: tuple[int, ...],
           flat: np.ndarray) -> TensorData:
    """Input ``name`` of the case of ``shape`` holding the drawn values
    ``flat`` (``packed``: the strides of a packed tensor of its sizes)."""
    sizes = shape.sizes
    if shape.layout is Layout.PADDED:
        return _tensor(name, dtype, sizes, _padded_strides(sizes), flat.reshape(sizes))
    if shape.layout is Layout.BROADCAST and name == ctx.bound.inputs[-1]:
        dims = _broadcast_dims(sizes, len(ctx.bound.inputs) > 1)
        compact = tuple(1 if i in dims else s for i, s in enumerate(sizes))
        strides = tuple(0 if i in dims else s for i, s in enumerate(packed_strides(compact)))
        logical = flat[:int(np.prod(compact))].reshape(compact)
        return _tensor(name, dtype, sizes, strides, logical)
    # packed: the drawn values in order (`draws.fill`: ``count`` values of the type each), no copy;
    # as they are when read-only (random values), else a read-only view
    buf = flat
    if buf.flags.writeable:
        buf = flat.view()
        buf.setflags(write=False)  # (``flags.writeable = False`` makes a flags object first: slower)
    return TensorData(name, dtype, sizes, packed, buf)


def _output(ctx: _Ctx, name: str, dtype: DataType, sizes: tuple[int, ...], strides: tuple[int, ...]) -> TensorData:
    """An output: a zero-filled read-only buffer addressing ``sizes`` at
    ``strides``, one per data type and length for the cases of a
    generate() call (read-only: nothing writes into it, a backend gets
    fresh buffers from the runner)."""
    count = buffer_elements(sizes, strides)
    buf = ctx.zeros.get((dtype, count))
    if buf is None:
        buf = ctx.zeros[dtype, count] = np.zeros(count, dtype=ev.np_dtype(dtype))
        buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)


def _alias(ctx: _Ctx, dtypes: dict[str, DataType]) -> tuple[str, str] | None:
    """The first (output, input) pair ``in_place`` allows whose data types match."""
    for p in ctx.spec.in_place:
        if p.output in ctx.bound.outputs and p.input in ctx.bound.inputs and dtypes[p.output] == dtypes[p.input]:
            return (p.output, p.input)
    return None


def _edges_fill(ctx: _Ctx, attrs: Attrs) -> Filler:
    """Every input read by the formula holds its pool (for the formula with
    ``attrs``); others random values.  The recipes are shared: read-only."""
    def fill(types: _Types, count: int) -> tuple[Recipe, tuple[str, ...]]:
        made = ctx.recipes.get((attrs, types.key, count))
        if made is None:
            pools = _pools(ctx, _found(ctx, attrs), types.dtypes)
            edges = [e for p in pools.values() for e in p.covered(count)] + ["random"]
            made = ctx.recipes[attrs, types.key, count] = (
                {t: (p.values, None) for t, p in pools.items()}, tuple(sorted(set(edges))))
        return made
    return fill


def _pairs_fill(ctx: _Ctx) -> Filler:
    """The cross product of the first two inputs' edge values."""
    a, b = (t for t, _ in ctx.bound.names[:2])

    def fill(types: _Types, count: int) -> tuple[Recipe, tuple[str, ...]]:
        dtypes = types.dtypes
        ea, eb = ev.edge_values(dtypes[a]), ev.edge_values(dtypes[b])
        va = np.asarray([e.value for e in ea], dtype=ev.np_dtype(dtypes[a]))
        vb = np.asarray([e.value for e in eb], dtype=ev.np_dtype(dtypes[b]))
        recipe: Recipe = {a: (None, np.repeat(va, vb.size)), b: (None, np.tile(vb, va.size))}
        return recipe, tuple(sorted({e.name for e in ea + eb}))
    return fill


def _boundary_fill(ctx: _Ctx, attrs: Attrs, target: Any) -> Filler:
    """One input holds one boundary and its neighbours, repeated; the other
    inputs hold their pools (for the formula with ``attrs``)."""
    tensor = next(t for t, n in ctx.bound.names if n == target.var)
    base = _edges_fill(ctx, attrs)

    def fill(types: _Types, count: int) -> tuple[Recipe, tuple[str, ...]]:
        recipe = dict(base(types, count)[0])  # the shared recipe stays as it is
        points = _boundary_pool(target, types.dtypes[tensor])
        if points.size:
            recipe[tensor] = (None, np.resize(points, count))
        return recipe, (f"boundary:{_cond(target)}",) if points.size else ()
    return fill


def _pairs_sizes(ctx: _Ctx, dtype: DataType, index: int, rank: int) -> tuple[int, ...]:
    dtypes = _types(ctx, dtype, index).dtypes
    a, b = (len(ev.edge_values(dtypes[t])) for t, _ in ctx.bound.names[:2])
    return (a * b,) if rank == 1 else (1,) * (rank - 2) + (a, b)


def _large_sizes(rank: int) -> tuple[int, ...]:
    if rank >= 3:
        return (1,) * (rank - 3) + _LARGE
    return (_LARGE[0] * _LARGE[1], _LARGE[2]) if rank == 2 else (int(np.prod(_LARGE)),)


def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (see the module docstring), in a
    fixed order, identical for a ``seed``; with ``keep``, only the cases
    whose id and data type it accepts (the others' values are never drawn,
    and a kept case's values are the same as in the whole suite: `draws`).
    Raises `InputError` for a spec `is_runnable` refuses (with its reason)
    or a negative seed."""
    if not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed={seed!r} must be an integer >= 0")
    ok, reason = is_runnable(spec, level)
    if not ok:
        raise InputError(f"{spec.operator}: no cases at {level.short}: {reason}")
    ctx = _context(spec, level, seed)
    ranks = common_ranks(ctx.table, ctx.bound)
    rep = 4 if 4 in ranks else ranks[-1]
    drafts = list(itertools.chain(
        *(_per_dtype(ctx, dtype, i, ranks, rep, large and i == 0)
          for i, dtype in enumerate(_common(list(ctx.primary), ctx.allowed))),
        _negatives(ctx, ranks, rep) if negative else (),
        _invalid(ctx, rep) if negative else ()))
    if len({d.id for d in drafts}) != len(drafts):
        raise AssertionError(f"duplicate case ids in {spec.operator}")  # a generator bug, never input
    plans = [_plan(ctx, d) for d in drafts if keep is None or keep(d.id, d.shape.dtype)]
    # the values of a group are drawn in one pass (they do not depend on the grouping: `draws`)
    for part in pack([sum(r.count for r in p.requests) for p in plans], most=DRAW_ELEMENTS):
        group = [plans[i] for i in part]
        values = iter(draws.fill([r for p in group for r in p.requests]))
        yield from [_build(ctx, p, [next(values) for _ in p.requests]) for p in group]


def _context(spec: Spec, level: FeatureLevel, seed: int) -> _Ctx:
    bound = bind(spec)  # the same binding is_runnable made (cached)
    assert isinstance(bound, Binding)
    table = spec.table_at(level)
    assert table is not None
    primary, rest = _dtype_plan(spec, table, bound)
    tensors = bound.inputs + bound.outputs
    allowed = {t: tuple(r.dtypes) if (r := table.row(t)) else () for t in tensors}
    show = any(f.kind is not FieldKind.STRUCT_PTR for f in spec.attributes)
    return _Ctx(spec, bound, table, level, seed, tuple(primary), tuple(tuple(g) for g in rest), allowed, show,
                _criticals(bound))


def _per_dtype(ctx: _Ctx, dtype: DataType, index: int, ranks: tuple[int, ...], rep: int,
               large: bool) -> Iterator[_Draft]:
    variants = _variants(ctx.spec, ctx.bound, dtype)
    base = variants[0]
    found = _found(ctx, base)
    edges = _edges_fill(ctx, base)
    for rank in ranks:
        yield _draft(ctx, _Shape(dtype, index, _SHAPES[rank], "edges", base), edges)
    if len(ctx.bound.names) >= 2:
        yield _draft(ctx, _Shape(dtype, index, _pairs_sizes(ctx, dtype, index, rep), "pairs", base), _pairs_fill(ctx))
    counts: dict[str, int] = {}
    for b in found:
        what = f"boundary({_cond(b).replace('/', '÷')})"
        counts[what] = counts.get(what, 0) + 1
        what += f"#{counts[what]}" if counts[what] > 1 else ""
        yield _draft(ctx, _Shape(dtype, index, _SHAPES[rep], what, base), _boundary_fill(ctx, base, b))
    for attrs in variants[1:]:
        yield _draft(ctx, _Shape(dtype, index, _SHAPES[rep], "edges", attrs),
                     _edges_fill(ctx, attrs))
    for what, attrs, pairs in _ambiguity_cases(ctx, base, dtype):
        if not _all_allowed(ctx.spec, attrs):
            continue  # the readings part only where the doc forbids the attributes
        if pairs:
            yield _draft(ctx, _Shape(dtype, index, _pairs_sizes(ctx, dtype, index, rep), what, attrs), _pairs_fill(ctx))
        else:
            yield _draft(ctx, _Shape(dtype, index, _SHAPES[rep], what, attrs), _edges_fill(ctx, attrs))
    yield _draft(ctx, _Shape(dtype, index, _SHAPES[rep], "edges", base, Layout.PADDED), edges)
    if ctx.bound.inputs:
        yield _draft(ctx, _Shape(dtype, index, _SHAPES[rep], "edges", base, Layout.BROADCAST), edges)
    if _alias(ctx, _types(ctx, dtype, index).dtypes):
        yield _draft(ctx, _Shape(dtype, index, _SHAPES[rep], "edges", base, Layout.IN_PLACE), edges)
    if large:
        yield _draft(ctx, _Shape(dtype, index, _large_sizes(rep), "edges", base, tag="large"), edges)


def _negatives(ctx: _Ctx, ranks: tuple[int, ...], rep: int) -> Iterator[_Draft]:
    """A data type and a dimension count outside the table, preferring ones a
    newer table allows (the likeliest mistakes)."""
    allowed = _common(list(ctx.primary), ctx.allowed)
    newer = [t for t in ctx.spec.support if t.level > ctx.table.level]
    later_types = [d for t in newer for r in t.rows if r.tensor == ctx.primary[0] for d in r.dtypes]
    usable = [d for d in DATA_TYPE_ORDER if d not in (DataType.INT4, DataType.UINT4)]
    bad_types = [d for d in later_types + usable if d not in allowed and d in usable]
    if bad_types:
        dtype = bad_types[0]
        base = _typical(ctx.spec, dtype)
        yield _draft(ctx, _Shape(dtype, 0, _SHAPES[rep], "unsupported", base, supported=False),
                     _edges_fill(ctx, base))
    later_ranks = [d for t in newer for r in t.rows if r.tensor == ctx.primary[0] for d in r.dims]
    bad_ranks = [d for d in later_ranks + list(range(1, 10)) if d not in ranks and d in _SHAPES]
    first = allowed[0]
    base = _typical(ctx.spec, first)
    yield _draft(ctx, _Shape(first, 0, _SHAPES[bad_ranks[0]], "unsupported", base, supported=False),
                 _edges_fill(ctx, base))


def _invalid(ctx: _Ctx, rep: int) -> Iterator[_Draft]:
    """Per FLOAT attribute the formula reads that has a numeric domain, the
    typical attributes with it set to each of `_outside` (in the first data
    type): ``OP/DTYPE/4d/invalid/<attrs>``, expect_supported False."""
    dtype = _common(list(ctx.primary), ctx.allowed)[0]
    base = _typical(ctx.spec, dtype)
    seen = set()
    for f in ctx.spec.attributes:
        if not _is_floatlike(f) or f.name not in ctx.bound.attributes:
            continue
        for value in _outside(f.domain):
            v = _in_type(f, value, dtype)
            attrs = tuple((n, v if n == f.name else x) for n, x in base)
            if _allowed(f, v) or attrs in seen:
                continue  # the type's rounding brought it back inside, or made it another's
            seen.add(attrs)
            yield _draft(ctx, _Shape(dtype, 0, _SHAPES[rep], "invalid", attrs, supported=False, invalid=(f.name,)),
                         _edges_fill(ctx, attrs))
