"""Cases of the sequence family (TOP_K, TOP_K1, CUMULATIVE_SUMMATION,
CUMULATIVE_PRODUCT), and its shape rules.

Issue #24 item 3; docs/sequence.md lists every case.  The cases come from
the reviewed semantics (`families.sequence.semantics.SequenceOp`), the support
tables and the level alone.  Per data type of the table: the data kinds of
the operation (`_KINDS`) along the last axis of a 4-d tensor, in both
directions where the operator has AxisDirection and with and without the
exclusive tally; for FLOAT32 besides: axis sizes 1, 2, 7, 33, 257 and 1000
(K at 1 and at the size less one), every axis, every dimension count of the
table, padded strides, the doc's worked examples (``example1`` ...), the
UINT64 index type where the table has it; and negative cases: K equal to
the axis size (outside the doc's "less than": a clean rejection passes, so
does the sorted sequence; ambiguity ``k-equal-axis-size``), a data type and
an index type outside the tables.

Ids: ``TOP_K1/FLOAT32/4d/axis=3/n=33/k=5/increasing/ties``,
``CUMULATIVE_SUMMATION/FLOAT16/4d/axis=3/n=7/decreasing/exclusive/exact``.
A case's values depend on the seed and its id alone (`draws.stream_key`),
and ``keep`` is applied before any value is drawn.

The shape rules (`sequences`, `placed`, `attributes_of`) are the one thing
the oracle and the CPU reference share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData, buffer_elements, packed_strides
from dmlconform.compare import finfo
from dmlconform.families.sequence.semantics import DECREASING, INCREASING, Operation, SequenceOp
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

#: Axis sizes of the FLOAT32 sweep (1, 2, not a multiple of common tiles, 1000+).
AXIS_SIZES = (1, 2, 7, 33, 257, 1000)
#: The sizes of the other dimensions, in order (a tensor of rank r takes r - 1 of them).
_OTHERS = (2, 3, 2, 1, 2, 1, 1)
_N, _K = 33, 5
#: The doc's worked examples: input rows (Sizes {1,1,3,4}), Axis, K, AxisDirection.
_EXAMPLE_ROWS = {"ordered": ((0, 1, 10, 11), (3, 2, 9, 8), (4, 5, 6, 7)),
                 "tied": ((1, 2, 2, 3), (3, 4, 5, 5), (6, 6, 6, 6)),
                 "scan": ((2, 1, 3, 5), (3, 8, 7, 3), (9, 6, 2, 4))}


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values."""

    dtype: DataType
    rank: int
    axis: int
    n: int
    data: str
    k: int = 0
    direction: str | None = None
    exclusive: bool | None = None
    index_dtype: DataType = DataType.UINT32
    padded: bool = False
    in_place: bool = False
    supported: bool = True
    out_of_domain: tuple[str, ...] = ()
    variant: str = ""

    def sizes(self) -> tuple[int, ...]:
        if self.data.startswith("example"):
            return (1, 1, 3, 4)
        others = list(_OTHERS[:self.rank - 1])
        return tuple(others[:self.axis] + [self.n] + others[self.axis:])

    def case_id(self, operator: str) -> str:
        parts = [operator, self.dtype.name, f"{self.rank}d", f"axis={self.axis}", f"n={self.n}"]
        parts += [f"k={self.k}"] if self.k else []
        parts += [self.direction.rsplit("_", 1)[-1].lower()] if self.direction else []
        parts += [] if self.exclusive is None else ["exclusive" if self.exclusive else "inclusive"]
        parts += [self.data]
        parts += [self.index_dtype.name] if self.index_dtype is not DataType.UINT32 else []
        return "/".join(parts + ([self.variant] if self.variant else []))


# -- the shape rules --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Attributes:
    """A case's attributes as the operation reads them."""

    axis: int
    k: int
    increasing: bool
    exclusive: bool


def attributes_of(sem: SequenceOp, case: Case) -> Attributes:
    """Axis, K, the direction (TOP_K: decreasing) and the exclusive flag of ``case``."""
    attrs = case.attribute_map()
    direction = attrs.get(sem.direction, DECREASING if sem.operation is Operation.TOP_K else INCREASING) \
        if sem.direction else DECREASING
    return Attributes(int(attrs.get(sem.axis, 0)), int(attrs.get(sem.k, 0)) if sem.k else 0,
                      direction == INCREASING, bool(attrs.get(sem.exclusive, False)) if sem.exclusive else False)


def sequences(sem: SequenceOp, case: Case, buffers: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """The input viewed with its axis last (over ``buffers`` where given), read-only."""
    tensor = case.input(sem.input)
    view = tensor.view(None if buffers is None else buffers.get(sem.input))
    return np.moveaxis(view, attributes_of(sem, case).axis, -1)


def placed(sem: SequenceOp, case: Case, result: np.ndarray) -> np.ndarray:
    """A result with the axis last, moved back to the output's layout."""
    return np.moveaxis(result, -1, attributes_of(sem, case).axis)


def semantics_of(spec: Spec) -> SequenceOp:
    """``spec``'s sequence semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, SequenceOp, "sequence")


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return family.generable(lambda: shapes(spec, level))


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no call ``spec``'s semantics describe (a case
    folder's fault, `case_folders`): Axis outside the input's dimensions,
    K outside 1..the axis size, outputs of other sizes.  ``problem: fix``."""
    sem = semantics_of(spec)
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    x = tensors.get(sem.input)
    if x is None or not _typed(sem, case):
        return  # a missing tensor, or an attribute of the wrong type, is reported as such (`case_folders`)
    a = attributes_of(sem, case)
    if not 0 <= a.axis < len(x.sizes):
        yield f"{sem.axis}={a.axis} is not a dimension of {x.name} (sizes {list(x.sizes)}): give 0..{len(x.sizes) - 1}"
        return
    wanted = x.sizes
    if sem.operation is Operation.TOP_K:
        if not 1 <= a.k <= x.sizes[a.axis]:
            yield f"{sem.k}={a.k} is outside 1..{x.sizes[a.axis]} (the size of axis {a.axis}): give one inside"
            return
        wanted = x.sizes[:a.axis] + (a.k,) + x.sizes[a.axis + 1:]
    for name in (sem.output, sem.indices):
        out = tensors.get(name) if name else None
        if out is not None and out.sizes != wanted:
            yield f"{name}'s sizes {list(out.sizes)} are not {list(wanted)}: give it those"


def _typed(sem: SequenceOp, case: Case) -> bool:
    """Whether Axis and K are integers, AxisDirection a name and the exclusive flag a bool, where given."""
    attrs = case.attribute_map()
    def whole(name: str | None) -> bool:
        value = attrs.get(name) if name else 0
        return value is None or (isinstance(value, int) and not isinstance(value, bool))
    flag = attrs.get(sem.exclusive) if sem.exclusive else None
    direction = attrs.get(sem.direction) if sem.direction else None
    return whole(sem.axis) and whole(sem.k) and isinstance(flag, (bool, type(None))) and \
        isinstance(direction, (str, type(None)))


# -- which cases ------------------------------------------------------------------------------
#: Data kinds per operation and kind of type (float or integer).
_KINDS = {
    (Operation.TOP_K, True): ("random", "ties", "zeros", "nan", "equal"),
    (Operation.TOP_K, False): ("random", "ties", "extremes"),
    (Operation.CUMULATIVE_SUM, True): ("random", "cancel", "range", "nan", "inf", "equal"),
    (Operation.CUMULATIVE_SUM, False): ("overflow",),
    (Operation.CUMULATIVE_PRODUCT, True): ("random", "zeros", "nan", "inf"),
    (Operation.CUMULATIVE_PRODUCT, False): ("overflow",),
}


def shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    ranks = sem.dims_at(level)
    (row,) = family.rows_at(spec, level, ranks, sem.output)
    table = spec.table_at(level)
    index_row = table.row(sem.indices) if table is not None and sem.indices else None
    rep = 4 if 4 in ranks else ranks[-1]
    out = [s for t in row.dtypes for s in _per_dtype(sem, t, rep)]
    first = DataType.FLOAT32 if DataType.FLOAT32 in row.dtypes else row.dtypes[0]
    out += _sweeps(sem, first, rep, ranks, index_row.dtypes if index_row else ())
    out += _negatives(sem, first, rep, row.dtypes, index_row.dtypes if index_row else ())
    return list(dict.fromkeys(out))  # a variant can repeat a sweep's case: each once, first place


def _variants(sem: SequenceOp, base: Shape) -> Iterator[Shape]:
    """``base`` in each direction (where the operator has AxisDirection) and
    with and without the exclusive tally (where it has one)."""
    directions = (DECREASING, INCREASING) if sem.direction else (None,)
    flags = (False, True) if sem.exclusive else (None,)
    for direction in directions:
        for flag in flags:
            yield replace(base, direction=direction, exclusive=flag)


def _first(sem: SequenceOp, base: Shape) -> Shape:
    """``base`` in the default variant: increasing and inclusive for a scan, decreasing for TOP_K1."""
    default = (INCREASING if sem.operation.is_scan else DECREASING) if sem.direction else None
    return replace(base, direction=default, exclusive=False if sem.exclusive else None)


def _per_dtype(sem: SequenceOp, dtype: DataType, rep: int) -> Iterator[Shape]:
    top = sem.operation is Operation.TOP_K
    base = Shape(dtype, rep, rep - 1, _N, "exact", k=_K if top else 0)
    if not top:
        yield from (_first(sem, replace(base, n=n)) for n in AXIS_SIZES)
        yield from _variants(sem, replace(base, n=7))
    for data in _KINDS[(sem.operation, dtype.is_float)]:
        yield from _variants(sem, replace(base, data=data))


def _sweeps(sem: SequenceOp, dtype: DataType, rep: int, ranks: tuple[int, ...],
            index_types: tuple[DataType, ...]) -> Iterator[Shape]:
    top = sem.operation is Operation.TOP_K
    data = "random" if dtype.is_float else "exact"
    base = _first(sem, Shape(dtype, rep, rep - 1, _N, data, k=_K if top else 0))
    if top:
        for n in AXIS_SIZES:
            yield from (replace(base, n=n, k=k) for k in sorted({1, n - 1}) if 1 <= k < n)
    yield from (replace(base, axis=a) for a in range(rep - 1))
    yield from (replace(base, rank=r, axis=r // 2) for r in ranks if r != rep)
    yield replace(base, padded=True, variant="padded")
    if not top:  # the pages allow in place: the output bound to the input's buffer, both directions
        yield replace(base, in_place=True, variant="in-place")
        yield replace(base, in_place=True, variant="in-place", direction=DECREASING, exclusive=True)
    if top and DataType.UINT64 in index_types:
        yield replace(base, index_dtype=DataType.UINT64)
    if rep == 4:
        yield from _examples(sem, dtype)


def _examples(sem: SequenceOp, dtype: DataType) -> Iterator[Shape]:
    """The doc's worked examples (docs/sequence.md "Examples")."""
    if sem.operation is Operation.TOP_K:
        base = _first(sem, Shape(dtype, 4, 3, 4, "example1", k=2))
        yield from (base, replace(base, axis=2, n=3, data="example2"), replace(base, k=3, data="example3"))
        if sem.direction:
            yield replace(base, k=3, data="example4", direction=INCREASING)
        return
    base = _first(sem, Shape(dtype, 4, 3, 4, "example1"))
    yield from (base, replace(base, exclusive=True, data="example2"), replace(base, direction=DECREASING, data="example3"),
                replace(base, axis=2, n=3, data="example4"))


def _negatives(sem: SequenceOp, dtype: DataType, rep: int, allowed: tuple[DataType, ...],
               index_types: tuple[DataType, ...]) -> list[Shape]:
    """K equal to the axis size (outside the doc's range), a data type and an index type outside the tables."""
    top = sem.operation is Operation.TOP_K
    base = _first(sem, Shape(dtype, rep, rep - 1, 7, "random" if dtype.is_float else "exact", k=3 if top else 0))
    out = []
    if top:
        out.append(replace(base, k=7, supported=False, out_of_domain=(sem.k or "K",)))
    bad = next((t for t in (DataType.FLOAT64, DataType.INT16, DataType.INT8) if t not in allowed), None)
    if bad is not None:
        out.append(replace(base, dtype=bad, data="random" if bad.is_float else "exact", supported=False,
                           variant="unsupported"))
    if top and DataType.INT64 not in index_types:
        out.append(replace(base, index_dtype=DataType.INT64, supported=False, variant="unsupported"))
    return out


# -- values and tensors -----------------------------------------------------------------------
def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (the module docstring), only those
    ``keep(id, data type)`` accepts, without the negative ones where not
    ``negative``; identical for a ``seed``.  ``large`` adds nothing: the
    largest case (1000 per axis) is in the default suite."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    for case_id, shape in family.selected(shapes(spec, level), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)


def _case(spec: Spec, sem: SequenceOp, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    sizes = shape.sizes()
    rng = np.random.default_rng(stream_key(seed, case_id, sem.input))
    x = values(shape, sizes, rng, sem.operation)
    out_sizes = sizes[:shape.axis] + (shape.k,) + sizes[shape.axis + 1:] if shape.k else sizes
    outputs = [_tensor(sem.output, shape.dtype, out_sizes, None, shape.padded)]
    if sem.indices:
        outputs.append(_tensor(sem.indices, shape.index_dtype, out_sizes, None, shape.padded))
    aliases = ((sem.output, sem.input),) if shape.in_place else ()
    layout = Layout.IN_PLACE if shape.in_place else Layout.PADDED if shape.padded else Layout.PACKED
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype,
                inputs=(_tensor(sem.input, shape.dtype, sizes, x, shape.padded),), outputs=tuple(outputs),
                attributes=_attributes(spec, sem, shape), layout=layout, aliases=aliases,
                expect_supported=shape.supported, edges=(shape.data,), seed=seed, out_of_domain=shape.out_of_domain)


def _attributes(spec: Spec, sem: SequenceOp, shape: Shape) -> tuple[tuple[str, float | int | bool | str], ...]:
    """The attributes in struct order."""
    given: dict[str | None, int | bool | str | None] = {
        sem.axis: shape.axis, sem.k: shape.k, sem.direction: shape.direction, sem.exclusive: shape.exclusive}
    return tuple((f.name, v) for f in spec.attributes if (v := given.get(f.name)) is not None)


def values(shape: Shape, sizes: tuple[int, ...], rng: np.random.Generator, operation: Operation) -> np.ndarray:
    """The input in the case's type, by its ``data`` kind (`_DRAWS`),
    drawn one sequence per row and moved to the case's axis."""
    nt = numpy_dtype(shape.dtype)
    if shape.data.startswith("example"):
        rows = "scan" if operation.is_scan else "tied" if shape.data in ("example3", "example4") else "ordered"
        return np.array(_EXAMPLE_ROWS[rows], dtype=nt).reshape(sizes)
    count = int(np.prod(sizes)) // shape.n
    flat = _DRAWS[shape.data](shape.dtype, (count, shape.n), rng, operation)
    moved = sizes[:shape.axis] + sizes[shape.axis + 1:] + (shape.n,)
    return np.moveaxis(flat.reshape(moved), -1, shape.axis).astype(nt)


#: A draw: (data type, (sequences, axis size), generator, operation) -> the values (float64, or the
#: type itself for integers at its limits), one sequence per row.
_Draw = Callable[[DataType, tuple[int, int], np.random.Generator, Operation], np.ndarray]


def _exact(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Small integers in [-r, r], r at most 8 and such that n r fits the
    significand (FLOAT16: 2^11): every partial sum exact in any order; for
    a product, factors 1 (mostly), +-2 and +-1/2 (2 for integers): every
    running product a power of two, exact."""
    signed = dtype.is_signed or dtype.is_float
    r = max(1, min(8, 2 ** (int(finfo(numpy_dtype(dtype)).nmant) + 1) // shape[1])) if dtype.is_float else 8
    if op is Operation.CUMULATIVE_PRODUCT:
        pick = rng.random(shape)
        factor = np.where(pick < 0.02, 2.0, np.where(pick < 0.04, 0.5 if dtype.is_float else 2.0, 1.0))
        return factor * (np.where(rng.random(shape) < 0.5, -1.0, 1.0) if signed else 1.0)
    return rng.integers(-r if signed else 0, r + 1, size=shape).astype(np.float64)


def _random(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Floats uniform in [-1, 1) (a product's factors +-2^u, u in [-1/4,
    1/4): running products stay far from overflow and underflow); integers
    in [-1000, 1000] within the type."""
    if not dtype.is_float:
        low = max(int(np.iinfo(numpy_dtype(dtype)).min), -1000)
        return rng.integers(low, 1001, size=shape).astype(np.float64)
    if op is Operation.CUMULATIVE_PRODUCT:
        return np.where(rng.random(shape) < 0.5, -1.0, 1.0) * 2.0 ** rng.uniform(-0.25, 0.25, size=shape)
    return rng.uniform(-1.0, 1.0, size=shape)


def _ties(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Integers in [-3, 3] ([0, 3] unsigned): many ties, some across the K-th place."""
    return rng.integers(-3 if dtype.is_signed or dtype.is_float else 0, 4, size=shape).astype(np.float64)


def _zeros(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Top-k: -0 and +0 mostly, a few -1 and 1 (ties of +-0 selected in
    either direction); a product: random factors with +0 or -0 mid-sequence."""
    if op is Operation.CUMULATIVE_PRODUCT:
        x = _random(dtype, shape, rng, op)
        x[:, shape[1] // 2] = np.where(np.arange(shape[0]) % 2 == 0, 0.0, -0.0)
        return x
    return rng.choice(np.array([-0.0, 0.0, -1.0, 1.0]), p=[0.44, 0.44, 0.06, 0.06], size=shape)


def _nan(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Top-k: random values, about 1 in 8 NaN, +inf first and -inf last
    in each sequence; a scan: NaN mid-sequence in every other sequence."""
    x = _random(dtype, shape, rng, op)
    if op.is_scan:
        x[::2, shape[1] // 2] = np.nan
    else:
        x[rng.random(shape) < 0.125] = np.nan
        x[:, 0], x[:, -1] = np.inf, -np.inf
    return x


def _inf(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """+inf mid-sequence in every sequence, and -inf a quarter in every
    third one (inf - inf: NaN from there on in a sum)."""
    x = _random(dtype, shape, rng, op)
    x[:, shape[1] // 2] = np.inf
    x[::3, shape[1] // 4] = -np.inf
    return x


def _equal(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Every value 0.1 (rounded to the type): top-k all ties, a sum of like terms."""
    return np.full(shape, 0.1)


def _cancel(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Pairs x, -x of magnitudes up to 2^10 (2^6 for FLOAT16) among small
    terms: running sums that cancel to far below their terms."""
    x = _random(dtype, shape, rng, op)
    big = 2.0 ** (6 if dtype is DataType.FLOAT16 else 10)
    x[:, 0:-1:4] *= big
    x[:, 1::4] = -x[:, 0:-1:4][:, :x[:, 1::4].shape[1]]
    return x


def _range(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Magnitudes spread over 2^-20 .. 2^20 (2^-6 .. 2^6 for FLOAT16), random signs."""
    e = 6 if dtype is DataType.FLOAT16 else 20
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0) * 2.0 ** rng.uniform(-e, e, size=shape)


def _extremes(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """The type's least and greatest values, 0 and small ones, in the type itself (int64 and uint64 exceed float64)."""
    info = np.iinfo(numpy_dtype(dtype))
    pool = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=numpy_dtype(dtype))
    return rng.choice(pool, size=shape)


def _overflow(dtype: DataType, shape: tuple[int, int], rng: np.random.Generator, op: Operation) -> np.ndarray:
    """Integers whose running tally leaves the type within a few steps: a
    sum of values near a third of the greatest (negative ones among them
    for a signed type), a product of factors 2 .. 1000 (-1000 .. -2 too)."""
    nt = numpy_dtype(dtype)
    info = np.iinfo(nt)
    if op is Operation.CUMULATIVE_PRODUCT:
        x = rng.integers(2, 1001, size=shape)
    else:
        x = rng.integers(int(info.max) // 4, int(info.max) // 3, size=shape, dtype=nt)
    if dtype.is_signed:
        x = np.where(rng.random(shape) < 0.3, -x, x)
    return x.astype(nt)


_DRAWS: dict[str, _Draw] = {
    "exact": _exact, "random": _random, "ties": _ties, "zeros": _zeros, "nan": _nan, "inf": _inf,
    "equal": _equal, "cancel": _cancel, "range": _range, "extremes": _extremes, "overflow": _overflow}


def _tensor(name: str, dtype: DataType, sizes: tuple[int, ...], logical: np.ndarray | None,
            padded: bool) -> TensorData:
    """A read-only tensor: an input holding ``logical`` (the gaps of padded
    rows hold the type's greatest value, or NaN: read, they show), or an
    output's zeroed buffer."""
    nt = numpy_dtype(dtype)
    strides = family.padded_strides(sizes, gap=2) if padded else packed_strides(sizes)
    gap = np.nan if dtype.is_float else np.iinfo(nt).max
    buf = np.full(buffer_elements(sizes, strides), gap if logical is not None else 0, dtype=nt)
    if logical is not None:
        view = np.lib.stride_tricks.as_strided(buf, sizes, tuple(s * nt.itemsize for s in strides), writeable=True)
        view[...] = logical
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)
