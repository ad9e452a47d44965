"""Cases of the reduction family (REDUCE, ARGMAX, ARGMIN), and its shape rules.

Issue #24 item 3; docs/reduction.md has the table of cases.  A reduction is
described by the reviewed semantics of its spec (`families.reduction.semantics`)
and by the support tables of its function (REDUCE's tables are split by
``Function``), so the cases come from those and the level alone.  Per
function and input type, with ids like ``REDUCE/FLOAT32/4d/axes=1,3/sum/random``:

* axis sets: every subset at 2 and 3 dimensions, a sample at 4 and 8
  (every subset where the table allows 4 dimensions only), and one given
  out of order (``axes=3,1``: the flattening of arg indices is ambiguous);
* axis lengths 1, 2, 7, 33, 257, 1000 (``n<N>``), integer-valued data
  whose every partial result is exact in any order (``exact``: 0 ULP
  required) and random data;
* adversarial data: one NaN, infinities, cancellation, a wide range, all
  terms equal, ties and +-0 (arg, max, min), exps that overflow or
  underflow (LOG_SUM_EXP), integer overflow; a padded input (NaN in its
  gaps); the doc's worked examples (``example<k>``);
* every integer type the table allows, every output type of ARGMAX/ARGMIN;
* negative cases: a type outside the tables, a dimension count outside
  them, and REDUCE over no axis at all (``axes=none``, ambiguous);
* with ``large``: one case per operator, its first float type's random data
  reduced over one axis of `LARGE_LENGTH` (SUM for REDUCE), id
  ``REDUCE/FLOAT32/2d/axes=1/sum/random/large``; for REDUCE also
  ``.../sum/exact-nonzero/large``, whole numbers without 0 whose sum is
  exact (0 ULP: a dropped or doubled term FAILs for certain).

A case's values depend on the seed and its id alone, and ``keep`` is
applied before any value is drawn.  The shape rules (`axes_of`,
`reduced_sizes`, `semantics_of`, `function_of`) are the one thing the
oracle and the CPU reference share.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData, buffer_elements, packed_strides
from dmlconform.errors import InputError
from dmlconform.families.reduction.semantics import (
    ARG_FUNCTIONS,
    DECREASING,
    FUNCTION_PREFIX,
    INCREASING,
    Example,
    Reduction,
)
from dmlconform.spec.model import DataType, FeatureLevel, Spec, SupportTable, numpy_dtype

#: Lengths of the reduced axis in the ``n<N>`` cases (1, 2, not a multiple of common tiles, 1000+).
LENGTHS = (1, 2, 7, 33, 257, 1000)
#: The usual sizes by dimension count.
SIZES = {1: (7,), 2: (3, 5), 3: (2, 3, 4), 4: (2, 3, 4, 5), 8: (2, 1, 2, 1, 2, 1, 2, 3)}
#: Axis sets sampled where every subset would be too many.
SAMPLE = {4: ((3,), (0, 2), (0, 1, 2, 3)), 8: ((7,), (0, 2, 4, 6))}
#: The length of the one reduced axis of the ``large`` case (2^22 elements: `plan.LARGE_ELEMENTS`).
LARGE_LENGTH = 1 << 22
#: The functions whose integer results can leave the type's range.
OVERFLOWING = ("SUM", "MULTIPLY", "SUM_SQUARE", "L1")
_VALUED = ("SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "MAX", "MIN", "ARGMAX", "ARGMIN")


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values."""

    function: str
    dtype: DataType
    out: DataType
    sizes: tuple[int, ...]
    axes: tuple[int, ...]
    data: str
    direction: str | None = None
    variant: str = ""
    padded: bool = False
    supported: bool = True
    example: Example | None = None

    def case_id(self, operator: str) -> str:
        axes = ",".join(str(a) for a in self.axes) or "none"
        how = self.direction.removeprefix("DML_AXIS_DIRECTION_").lower() if self.direction and \
            operator not in ("REDUCE",) else self.function.lower()
        parts = [operator, self.dtype.name, f"{len(self.sizes)}d", f"axes={axes}", how, self.data]
        return "/".join(parts + ([self.variant] if self.variant else []))


def semantics_of(spec: Spec) -> Reduction:
    """``spec``'s reduction semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, Reduction, "reduction")


def function_of(sem: Reduction, case: Case) -> str:
    """The function ``case`` computes (its Function attribute's suffix, or the operator's fixed one)."""
    if sem.fixed is not None:
        return sem.fixed
    value = str(case.attribute_map().get(sem.function or "", ""))
    return value.removeprefix(FUNCTION_PREFIX)


def axes_of(sem: Reduction, case: Case) -> tuple[int, ...]:
    """The Axes of ``case`` in the order given (the case format holds the
    array as text, ``"3,1"``; `family.parse_axes`, ``""`` for no axis)."""
    return family.parse_axes(case.attribute_map().get(sem.axes, ""), name=sem.axes, empty=True)


def last_wins(sem: Reduction, case: Case) -> bool:
    """Whether tied indices go to the last (AxisDirection DECREASING)."""
    return sem.direction is not None and case.attribute_map().get(sem.direction) == DECREASING


def reduced_sizes(sizes: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """The output's sizes: the input's, every reduced axis at 1."""
    return tuple(1 if i in axes else s for i, s in enumerate(sizes))


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return family.generable(lambda: shapes(spec, level))


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no reduction its semantics describe: a function
    or axes it does not know, or an output whose sizes are not the input's
    with the reduced axes at 1.  Texts are ``problem: fix``."""
    sem = semantics_of(spec)
    if function_of(sem, case) not in sem.functions:
        yield f"function {function_of(sem, case)!r} is no DML_REDUCE_FUNCTION: give one of {', '.join(sem.functions)}"
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    x, y = tensors.get(sem.input), tensors.get(sem.output)
    if x is None or y is None:
        return
    attrs = case.attribute_map()
    problem = family.axes_problem(attrs, sem.axes, tensor=x.name, rank=len(x.sizes), empty=True)
    if problem is not None:
        yield problem
        return
    axes = axes_of(sem, case)
    if y.sizes != reduced_sizes(x.sizes, axes):
        yield (f"{y.name}'s sizes {list(y.sizes)} are not {list(reduced_sizes(x.sizes, axes))}, {x.name}'s with the "
               f"reduced axes at 1: give those")
    counted = family.count_problem(attrs, sem.axis_count, axes, axes_name=sem.axes)
    if counted is not None:
        yield counted


# -- which cases ------------------------------------------------------------------------------
def table_of(spec: Spec, function: str, level: FeatureLevel) -> SupportTable | None:
    """The support table in force for ``function`` at ``level`` (REDUCE's are split by Function)."""
    conditions = {t.condition for t in spec.support}
    condition = next((c for c in conditions if c is not None and function in c.values), None)
    return spec.table_at(level, condition=condition)


def shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    out: list[Shape] = []
    for function in sem.functions:
        table = table_of(spec, function, level)
        rows = (table.row(sem.input), table.row(sem.output)) if table is not None else (None, None)
        if rows[0] is None or rows[1] is None:
            continue
        out.extend(_per_function(sem, function, rows[0].dims, rows[0].dtypes, rows[1].dtypes))
    if not out:
        raise InputError(f"{spec.operator}: no cases at {level.short}: no support table there")
    return out


def _per_function(sem: Reduction, function: str, ranks: tuple[int, ...], types: tuple[DataType, ...],
                  outs: tuple[DataType, ...]) -> Iterator[Shape]:
    arg = function in ARG_FUNCTIONS
    out_of = (lambda t: DataType.UINT32 if DataType.UINT32 in outs else outs[0]) if arg else (lambda t: t)
    directions = (INCREASING, DECREASING) if sem.direction is not None else (None,)
    rep = 4 if 4 in ranks else ranks[-1]
    floats = [t for t in types if t.is_float]
    for i, dtype in enumerate(floats):
        base = Shape(function, dtype, out_of(dtype), SIZES.get(rep, (2,) * rep), (rep - 1,), "random",
                     directions[0])
        yield from (_float_cases(sem, base, ranks, rep) if i == 0 else _half_cases(base, rep))
    for dtype in (t for t in types if not t.is_float):
        if arg or out_of(dtype) in outs:
            yield from _integer_cases(Shape(function, dtype, out_of(dtype), SIZES.get(rep, (2,) * rep), (1, rep - 1),
                                            "random", directions[0]))
    first = floats[0] if floats else types[0]
    if arg:
        yield from (Shape(function, first, t, SIZES[4] if rep == 4 else (2,) * rep, (rep - 1,), "random",
                          directions[0], variant=t.name.lower()) for t in outs if t is not out_of(first))
        for d in directions:
            yield from (Shape(function, first, out_of(first), _line(rep, 33), (rep - 1,), data, d)
                        for data in ("ties", "zeros"))
    yield from _negatives(sem, function, first, out_of(first), ranks, types, rep)


def large_shapes(sem: Reduction, shapes: list[Shape]) -> list[Shape]:
    """The ``large`` cases: SUM (or the operator's one function) of the first
    float type's random data over the last axis, of `LARGE_LENGTH`, the
    others of 1, at the dimension count of that function's first supported
    shape; for SUM also ``exact-nonzero`` data, whole numbers without 0
    whose every partial sum is exact (0 ULP required), so a term dropped
    or counted twice changes the result for certain (the random data's
    bound, about 7e5 ULP at this length, hides one term)."""
    function = "SUM" if "SUM" in sem.functions else sem.functions[0]
    base = next(s for s in shapes if s.function == function and s.supported)
    rank = len(base.sizes)
    large = replace(base, sizes=(1,) * (rank - 1) + (LARGE_LENGTH,), axes=(rank - 1,), data="random",
                    variant="large", padded=False, example=None)
    return [large] + ([replace(large, data="exact-nonzero")] if function == "SUM" else [])


def _line(rank: int, n: int) -> tuple[int, ...]:
    """Sizes of ``rank`` dimensions holding 3 rows of ``n``: (1, ..., 3, n)."""
    return (1,) * max(rank - 2, 0) + ((3, n) if rank >= 2 else (n,))


def _subsets(rank: int, only: bool) -> Iterator[tuple[int, ...]]:
    """Every non-empty axis subset at small ranks (at the only rank the table allows too), else a sample."""
    if rank <= 3 or only:
        for k in range(1, rank + 1):
            yield from itertools.combinations(range(rank), k)
    else:
        yield from SAMPLE.get(rank, ((rank - 1,), tuple(range(rank))))


def _float_cases(sem: Reduction, base: Shape, ranks: tuple[int, ...], rep: int) -> Iterator[Shape]:
    f = base.function
    for rank in sorted({r for r in ranks if r in (2, 3, 4, 8)}):
        for axes in _subsets(rank, len(ranks) == 1):
            yield replace(base, sizes=SIZES[rank], axes=axes)
    last = (rep - 1,)
    for n in LENGTHS:
        yield from (replace(base, sizes=_line(rep, n), axes=last, data=d, variant=f"n{n}") for d in ("exact", "random"))
    if rep >= 2:
        yield replace(base, axes=(rep - 1, rep - 3 if rep >= 3 else 0))  # out of order
        yield replace(base, axes=(1, rep - 1) if rep > 2 else last, variant="padded", padded=True)
        yield replace(base, sizes=(1,) * (rep - 2) + (5, 5), axes=(rep - 2,), variant="square")
    two = (1, rep - 1) if rep > 2 else last
    yield from (replace(base, axes=two, data=d) for d in ("nan", "inf"))
    yield from (replace(base, sizes=_line(rep, n), axes=last, data=d) for d, n in _ADVERSARIAL_LINES.get(f, ()))
    yield from _examples(sem, base, rep, ranks)


#: Adversarial data along one axis of N, by function: (data, N).
_ADVERSARIAL_LINES = {
    **{f: (("cancel", 257), ("range", 33), ("equal", 1000)) for f in ("SUM", "AVERAGE")},
    **{f: (("range", 33), ("equal", 1000)) for f in ("L1", "L2", "SUM_SQUARE", "MAX", "MIN", "ARGMAX", "ARGMIN")},
    "LOG_SUM": (("range", 33), ("equal", 1000)),
    "LOG_SUM_EXP": (("big", 33), ("small", 33), ("range", 33), ("equal", 1000)),
    "MULTIPLY": (("equal", 33),),
    **{f: (("ties", 33), ("zeros", 33)) for f in ("MAX", "MIN")},
}


def _half_cases(base: Shape, rep: int) -> Iterator[Shape]:
    """FLOAT16: a sample of axes, long sums (the accumulator shows there) and one NaN."""
    yield replace(base, axes=tuple(range(rep)))
    yield from (replace(base, sizes=_line(rep, n), axes=(rep - 1,), variant=f"n{n}") for n in (7, 257, 1000))
    yield replace(base, sizes=_line(rep, 1000), axes=(rep - 1,), data="exact", variant="n1000")
    yield replace(base, sizes=_line(rep, 1000), axes=(rep - 1,), data="equal")
    yield replace(base, axes=(rep - 1,), data="nan")


def _integer_cases(base: Shape) -> Iterator[Shape]:
    yield base
    yield replace(base, sizes=_line(len(base.sizes), 257), axes=(len(base.sizes) - 1,), variant="n257")
    if base.function in OVERFLOWING:
        yield replace(base, data="overflow")
    if base.function in ("MAX", "MIN", *ARG_FUNCTIONS):
        yield replace(base, sizes=_line(len(base.sizes), 33), axes=(len(base.sizes) - 1,), data="ties")


def _examples(sem: Reduction, base: Shape, rep: int, ranks: tuple[int, ...]) -> Iterator[Shape]:
    """The doc's worked examples of this function, at the rank they have or
    (where the table allows only ``rep`` dimensions) with leading 1s."""
    for e in sem.examples:
        if e.function != base.function or base.dtype is not DataType.FLOAT32:
            continue
        pad = 0 if len(e.sizes) in ranks else rep - len(e.sizes)
        yield replace(base, sizes=(1,) * pad + e.sizes, axes=tuple(a + pad for a in e.axes), data=e.name,
                      direction=e.direction or base.direction, example=e)


def _negatives(sem: Reduction, function: str, first: DataType, out: DataType, ranks: tuple[int, ...],
               types: tuple[DataType, ...], rep: int) -> Iterator[Shape]:
    """A type outside the table, a dimension count outside it, and REDUCE over no axis."""
    base = Shape(function, first, out, SIZES.get(rep, (2,) * rep), (rep - 1,), "random", variant="unsupported",
                 supported=False)
    if DataType.FLOAT64 not in types:
        yield replace(base, dtype=DataType.FLOAT64, out=out if function in ARG_FUNCTIONS else DataType.FLOAT64)
    bad_rank = next((r for r in (5, 3, 2) if r not in ranks), None)
    if bad_rank is not None:
        yield replace(base, sizes=(2,) * bad_rank, axes=(bad_rank - 1,))
    if sem.function is not None:
        yield replace(base, axes=(), variant="ambiguity(empty-axis-set)")


# -- values and tensors -----------------------------------------------------------------------
def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (the module docstring), only those
    ``keep(id, data type)`` accepts, without the negative ones where not
    ``negative``; identical for a ``seed``.  ``large`` adds `large_shapes`."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    seen: set[str] = set()
    every = shapes(spec, level)
    for case_id, shape in family.selected(every + (large_shapes(sem, every) if large else []),
                                          lambda s: s.case_id(spec.operator), keep, negative=negative):
        if case_id not in seen:  # a large shape may be one of the suite's
            seen.add(case_id)
            yield _case(spec, sem, level, seed, case_id, shape)


def _case(spec: Spec, sem: Reduction, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    x = values(shape, np.random.default_rng(stream_key(seed, case_id, sem.input)))
    strides = family.padded_strides(shape.sizes) if shape.padded else packed_strides(shape.sizes)
    out_sizes = reduced_sizes(shape.sizes, shape.axes)
    given: dict[str | None, int | str] = {
        sem.function: FUNCTION_PREFIX + shape.function, sem.axis_count: len(shape.axes),
        sem.axes: ",".join(str(a) for a in shape.axes), sem.direction: shape.direction or INCREASING}
    attrs = tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)
    out = np.zeros(math.prod(out_sizes), dtype=numpy_dtype(shape.out))
    out.setflags(write=False)
    edges = tuple(sorted({shape.data} | ({"nan"} if shape.data == "nan" else set())))
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype,
                inputs=(_strided(sem.input, shape.dtype, shape.sizes, strides, x),),
                outputs=(TensorData(sem.output, shape.out, out_sizes, packed_strides(out_sizes), out),),
                attributes=attrs, layout=Layout.PADDED if shape.padded else Layout.PACKED,
                expect_supported=shape.supported, edges=edges, seed=seed)


def values(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """The input (logical, in the case's type) by the case's ``data`` kind."""
    nt = numpy_dtype(shape.dtype)
    if shape.example is not None:
        return np.array(shape.example.values, dtype=nt).reshape(shape.sizes)
    if not shape.dtype.is_float:
        return _integers(shape, rng).astype(nt)
    draw = _DRAWS.get(shape.data, _random)
    with np.errstate(over="ignore"):
        return draw(shape, rng).astype(nt)


def _n(shape: Shape) -> int:
    return math.prod(shape.sizes[a] for a in shape.axes) if shape.axes else 1


def _digits(dtype: DataType) -> int:
    return {DataType.FLOAT16: 11, DataType.FLOAT32: 24}.get(dtype, 53)


def _random(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Uniform data where the function is defined and well-conditioned:
    positive for LOG_SUM, magnitudes near 1 for MULTIPLY (no partial
    product leaves the normal range), [-4, 4) for LOG_SUM_EXP."""
    f, s = shape.function, shape.sizes
    if f == "LOG_SUM":
        return rng.uniform(0.0, 1.0, s) + 2.0 ** -10
    if f == "MULTIPLY":
        return rng.choice([-1.0, 1.0], s) * rng.uniform(0.75, 1.25, s)
    if f == "LOG_SUM_EXP":
        return rng.uniform(-4.0, 4.0, s)
    return rng.uniform(-1.0, 1.0, s)


def _exact(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Integers whose every partial sum (product, sum of squares) is exact in any order in
    the accumulator and the output: |values| <= r with N r^2 within the significand."""
    digits, n, s = _digits(shape.out), _n(shape), shape.sizes
    if shape.function == "MULTIPLY":
        x = rng.choice([-1.0, 1.0], s)
        twos = rng.random(s) < min(1.0, (digits - 2) / (2 * n))  # about digits/2 factors of 2 per product
        return np.where(twos, 2 * x, x)
    r = max(1, min(8, math.isqrt(2 ** digits // n) if shape.function in ("SUM_SQUARE", "L2") else 2 ** digits // n))
    low = 1 if shape.function == "LOG_SUM" else -r
    return rng.integers(low, r + 1, s).astype(np.float64)


def _exact_nonzero(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """`_exact`'s whole numbers without 0 (SUM: |values| <= r, N r within the
    significand): every term changes every partial sum."""
    r = max(1, min(8, 2 ** _digits(shape.out) // _n(shape)))
    return (rng.integers(1, r + 1, shape.sizes) * rng.choice([-1, 1], shape.sizes)).astype(np.float64)


def _along(shape: Shape, x: np.ndarray, k: int, value: float) -> np.ndarray:
    """``x`` with ``value`` at element ``k`` of the first group (its first
    output element) and of the last one (the reduced axes flattened)."""
    moved = np.moveaxis(x, shape.axes, tuple(range(-len(shape.axes), 0))).copy()
    flat = moved.reshape(-1, _n(shape))
    flat[0, k % flat.shape[1]] = value
    flat[-1, (k + 1) % flat.shape[1]] = value
    return np.moveaxis(flat.reshape(moved.shape), tuple(range(-len(shape.axes), 0)), shape.axes)


def _nan(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """One NaN in the first and in the last group, the others clean."""
    return _along(shape, _random(shape, rng), _n(shape) // 2, np.nan)


def _inf(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """+inf in the first group, -inf in the last."""
    x = _along(shape, _random(shape, rng), 0, np.inf)
    moved = np.moveaxis(x, shape.axes, tuple(range(-len(shape.axes), 0)))
    moved.reshape(-1, _n(shape))[-1, :] = np.where(np.isinf(moved.reshape(-1, _n(shape))[-1, :]), -np.inf,
                                                   moved.reshape(-1, _n(shape))[-1, :])
    return x


def _cancel(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Pairs x, -x of magnitudes up to 2^10 (2^6 in FLOAT16), one small term left (N odd)."""
    big = 2.0 ** (6 if shape.dtype is DataType.FLOAT16 else 10)
    x = rng.uniform(-1, 1, shape.sizes) * big
    x[..., 1::2] = -x[..., 0:-1:2]
    x[..., -1] = 2.0 ** -4
    return x


def _range(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Magnitudes over 2^-e .. 2^e (e = 20, 6 for FLOAT16, 3 for the exponential), random signs (positive for LOG_SUM)."""
    e = 3 if shape.function == "LOG_SUM_EXP" else 6 if shape.dtype is DataType.FLOAT16 else 20
    sign = 1.0 if shape.function == "LOG_SUM" else rng.choice([-1.0, 1.0], shape.sizes)
    return sign * 2.0 ** rng.uniform(-e, e, shape.sizes)


def _ties(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Values from {0, 1, 2}: every group has ties at its extremes."""
    return rng.integers(0, 3, shape.sizes).astype(np.float64)


def _zeros(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """-0 and +0 among negative (ARGMAX, MAX) or positive (ARGMIN, MIN) numbers: the extreme is a zero, tied."""
    x = rng.uniform(0.5, 1.0, shape.sizes) * (1 if shape.function in ("ARGMIN", "MIN") else -1)
    zero = rng.random(shape.sizes) < 0.3
    x[..., 0] = -0.0
    x[..., 1] = 0.0
    return np.where(zero, np.where(rng.random(shape.sizes) < 0.5, -0.0, 0.0), x)


_DRAWS: dict[str, Callable[[Shape, np.random.Generator], np.ndarray]] = {
    "random": _random, "exact": _exact, "exact-nonzero": _exact_nonzero, "nan": _nan, "inf": _inf, "cancel": _cancel, "range": _range,
    "ties": _ties, "zeros": _zeros,
    "equal": lambda shape, rng: np.full(shape.sizes, 1.0 if shape.function == "MULTIPLY" else 0.1),
    "big": lambda shape, rng: rng.uniform(100.0, 101.0, shape.sizes),
    "small": lambda shape, rng: rng.uniform(-121.0, -120.0, shape.sizes),
}


def _integers(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Integer data: small values whose results fit (``random``), the
    type's extremes (``overflow``), or ties."""
    info = np.iinfo(numpy_dtype(shape.dtype))
    if shape.data == "ties":
        return rng.integers(0, 3, shape.sizes)
    if shape.data == "overflow":
        return rng.integers(int(info.max) // 2, int(info.max), shape.sizes, dtype=np.int64 if info.min < 0 else
                            np.uint64, endpoint=True)
    if shape.function in ("MAX", "MIN", *ARG_FUNCTIONS):
        return rng.integers(int(info.min), int(info.max), shape.sizes, dtype=numpy_dtype(shape.dtype), endpoint=True)
    if shape.function == "MULTIPLY":
        return rng.integers(1 if info.min == 0 else -2, 3, shape.sizes)
    return rng.integers(0 if info.min == 0 else -8, 9, shape.sizes)


def _strided(name: str, dtype: DataType, sizes: tuple[int, ...], strides: tuple[int, ...],
             logical: np.ndarray) -> TensorData:
    """A read-only tensor holding ``logical`` through ``strides`` (gaps hold NaN, or 0 for integers)."""
    nt = numpy_dtype(dtype)
    buf = np.full(buffer_elements(sizes, strides), np.nan if dtype.is_float else 0, dtype=nt)
    view = np.lib.stride_tricks.as_strided(buf, sizes, tuple(s * nt.itemsize for s in strides), writeable=True)
    view[...] = logical
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)
