"""FOLD and UNFOLD (issue #35): their shape rules and their cases.

UNFOLD copies every sliding window of an image ``{N, C, spatial...}`` into a
column of a block tensor ``{N, C x prod(WindowSizes), BlockCount}``; FOLD
sums such columns back into an image, overlapping values added.  Per
spatial dimension d the page gives ``BlocksPerDimension[d] = (SpatialSize +
StartPadding + EndPadding - Dilations (WindowSizes - 1) - 1) / Strides + 1``;
the blocks are numbered row-major over those counts, a column's rows
channel-major then row-major over the window (the pages' examples).

The shape rules (`geometry`, `blocks`, `Sides`) are the one thing the
oracle and the CPU reference share.  Cases, per data type of the table
(FLOAT32, FLOAT16, the ``data-types`` reading): each geometry of `SHAPES`
(1x1, 3x3 padded, a window larger than the input, asymmetric padding,
stride above the window, dilation, overlapping stride 2, all mixed) on
``exact`` data (small integers: every partial sum of a FOLD exact, so it
must be exact to the bit) and ``random`` data; ``special`` values for
UNFOLD (-0, NaN with payloads, infinities, subnormals: copied bit for bit);
1D, 3D and 6D spatial; padded strides; the pages' worked examples
(``example1``: the page's input, the output computed; lint compares the
printed one, `families.window.fold_oracle.example_problems`);
negatives: INT32 (outside the table) and 7 spatial dimensions (9 in all).
Ids: ``UNFOLD/FLOAT32/4d/k3/exact``.  Nothing here does I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData
from dmlconform.compare import finfo
from dmlconform.families.window.semantics import Window, WindowExample
from dmlconform.limits import MAX_CASE_WORK
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

#: The window operations this module describes.
FOLDS = ("fold", "unfold")


@dataclass(frozen=True, slots=True)
class Geometry:
    """FOLD's or UNFOLD's attributes, per spatial dimension."""

    window: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    start: tuple[int, ...]
    end: tuple[int, ...]


def geometry(sem: Window, attributes: Mapping[str, object]) -> Geometry:
    """The attributes read (``DimensionCount`` values each); ValueError naming
    the one that is no list of that many whole numbers, or a window, stride
    or dilation of 0."""
    count_text = str(attributes.get(sem.spatial_count or "", ""))
    if not count_text.isdigit() or int(count_text) < 1:  # above the doc's 6: a negative case, still a call
        raise ValueError(f"{sem.spatial_count}={count_text!r}: give the spatial dimension count, 1 or more")
    count = int(count_text)

    def array(name: str | None, least: int) -> tuple[int, ...]:
        values = family.parse_axes(attributes.get(name or "", ""), name=name or "")
        if len(values) != count or min(values) < least:
            raise ValueError(f"{name}={attributes.get(name or '')!r}: give {count} whole numbers of {least} or more, "
                             "comma-separated")
        return values

    return Geometry(array(sem.window_size, 1), array(sem.strides, 1), array(sem.dilations, 1),
                    array(sem.start_padding, 0), array(sem.end_padding, 0))


def blocks(geo: Geometry, spatial: tuple[int, ...]) -> tuple[int, ...]:
    """BlocksPerDimension of an image of ``spatial`` sizes; ValueError where a
    window spans more than the padded image (no block at all)."""
    out = []
    for s, k, st, d, a, b in zip(spatial, geo.window, geo.strides, geo.dilations, geo.start, geo.end):
        room = s + a + b - d * (k - 1) - 1
        if room < 0:
            raise ValueError(f"a window spanning {d * (k - 1) + 1} does not fit the padded size {s + a + b}: give "
                             "more padding or a smaller window")
        out.append(room // st + 1)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Sides:
    """Which tensor is the image ``{N, C, spatial...}`` and which the block
    tensor ``{N, C x prod(window), BlockCount}`` (UNFOLD reads the image,
    FOLD writes it), read off a case."""

    image: TensorData
    block: TensorData


def sides(sem: Window, case: Case) -> Sides:
    x, out = case.input(sem.input), case.outputs[0]
    return Sides(x, out) if sem.operation == "unfold" else Sides(out, x)


def case_problems(sem: Window, case: Case) -> Iterator[str]:
    """What makes ``case`` no FOLD or UNFOLD (a case folder's fault), as ``problem: fix``."""
    s = sides(sem, case)
    try:
        geo = geometry(sem, case.attribute_map())
        if s.image.dimension_count != len(geo.window) + 2:
            raise ValueError(f"{s.image.name} has {s.image.dimension_count} dimensions, not DimensionCount + 2 = "
                             f"{len(geo.window) + 2}: give it {{N, C, spatial...}}")
        counts = blocks(geo, s.image.sizes[2:])
    except ValueError as exc:
        yield str(exc)
        return
    n, c = s.image.sizes[:2]
    want = (n, c * math.prod(geo.window), math.prod(counts))
    if s.block.sizes != want:
        yield f"{s.block.name} sizes {list(s.block.sizes)} are not the geometry's: give {list(want)}"
    if math.prod(want) > MAX_CASE_WORK:
        yield f"{math.prod(want):,} block elements are over limits.MAX_CASE_WORK: give smaller tensors"


# -- which cases ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values (geometry given for 3 spatial dimensions, the last ``spatial`` used)."""

    dtype: DataType
    spatial: int
    name: str
    data: str = "random"
    size: tuple[int, ...] = (6, 6, 6)
    window: tuple[int, ...] = (3, 3, 3)
    strides: tuple[int, ...] = (1, 1, 1)
    dilations: tuple[int, ...] = (1, 1, 1)
    start: tuple[int, ...] = (1, 1, 1)
    end: tuple[int, ...] = (1, 1, 1)
    channels: int = 2
    batch: int = 2
    padded: bool = False
    supported: bool = True
    tags: tuple[str, ...] = ()

    def case_id(self, operator: str) -> str:
        return "/".join([operator, self.dtype.name, f"{self.spatial + 2}d", self.name, self.data, *self.tags])

    def pick(self, values: tuple[int, ...]) -> tuple[int, ...]:
        """``values`` (given for 3 dimensions) for this shape's spatial count: the last ones, or the first repeated."""
        return values[3 - self.spatial:] if self.spatial <= 3 else (values[0],) * (self.spatial - 3) + values


def _same(v: int) -> tuple[int, int, int]:
    return (v, v, v)


#: The geometries: 1x1, 3x3 padded, a window larger than the input (padding makes room), asymmetric
#: padding, stride above the window (positions no block covers), dilation, stride 2 (overlaps of one), mixed.
SHAPES: tuple[dict[str, object], ...] = (
    {"name": "k1", "window": _same(1), "start": _same(0), "end": _same(0)},
    {"name": "k3"},
    {"name": "k4-over", "size": _same(2), "window": _same(4), "start": _same(1), "end": _same(1)},
    {"name": "asym-pad", "size": (5, 5, 5), "start": (2, 0, 1), "end": (0, 2, 1)},
    {"name": "stride3-k2", "size": _same(8), "window": _same(2), "strides": _same(3), "start": _same(0),
     "end": _same(0)},
    {"name": "dilation2", "size": _same(7), "dilations": (2, 2, 3), "start": _same(2), "end": (2, 2, 1)},
    {"name": "k3-s2", "size": _same(7), "strides": _same(2)},
    {"name": "mixed", "size": (6, 7, 8), "window": (2, 3, 2), "strides": (2, 1, 3), "dilations": (1, 2, 2),
     "start": (0, 1, 2), "end": (1, 0, 1)},
)
#: The geometries run at the other spatial counts (1D, 3D; 6D small: 8 dimensions, the table's most).
OTHER_SPATIAL = {1: ("k3", "mixed", "stride3-k2"), 3: ("k3", "mixed")}
SIX = {"name": "k2", "size": _same(3), "window": _same(2), "start": (1, 0, 0), "end": (0, 0, 1), "channels": 1,
       "batch": 1}


def shapes(spec: Spec, sem: Window, level: FeatureLevel) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    image = sem.input if sem.operation == "unfold" else sem.output
    ranks = tuple(d for d in sem.dims_at(level) if 3 <= d <= 8)
    (row,) = family.rows_at(spec, level, ranks, image)
    kinds = ("exact", "random", "special") if sem.operation == "unfold" else ("exact", "random")
    out: list[Shape] = []
    for dtype in row.dtypes:
        for given in SHAPES:
            base = replace(Shape(dtype, 2, ""), **given)  # type: ignore[arg-type]
            out += [replace(base, data=d) for d in kinds]
            out += [replace(base, spatial=s, data="exact") for s, names in OTHER_SPATIAL.items()
                    if base.name in names and s + 2 in ranks]
        if 8 in ranks:
            out.append(replace(Shape(dtype, 6, "", data="exact"), **SIX))  # type: ignore[arg-type]
        out.append(Shape(dtype, 2, "k3-s2", size=_same(7), strides=_same(2), padded=True, tags=("padded",)))
    if sem.operation == "fold":  # magnitudes far apart; one NaN (the image elements it lands on are NaN)
        out += [Shape(row.dtypes[-1], 2, "k3", data="range"), Shape(row.dtypes[0], 2, "k3-s2", data="nan")]
    out.append(Shape(DataType.INT32, 2, "k3", data="exact", supported=False, tags=("unsupported",)))
    out.append(replace(Shape(row.dtypes[0], 7, "", data="exact", supported=False, tags=("unsupported",)),
                       **SIX))  # type: ignore[arg-type]
    return out


# -- values and tensors ---------------------------------------------------------------------------


def _exact_range(dtype: DataType, terms: int) -> int:
    """The largest r <= 8 such that ``terms`` integers in [-r, r] and every partial sum fit the type exactly."""
    if not dtype.is_float:
        return 8
    digits = int(finfo(numpy_dtype(dtype)).nmant) + 1
    return max(1, min(8, 2 ** digits // terms))


def _special(rng: np.random.Generator, sizes: tuple[int, ...], dtype: DataType) -> np.ndarray:
    """Values whose bits a copy must keep: -0, NaN of several payloads and signs, infinities, subnormals."""
    nt = numpy_dtype(dtype)
    info = finfo(nt)
    bits = np.dtype(f"u{nt.itemsize}")
    quiet = np.array(np.nan, nt).view(bits)
    picks = np.concatenate([np.array([-0.0, 0.0, np.inf, -np.inf, info.smallest_subnormal, -info.max, 1.5], nt),
                            np.array([quiet | 1, quiet | 5, quiet | (1 << (8 * nt.itemsize - 1))],
                                     bits).view(nt)])
    values = rng.uniform(-1, 1, size=sizes).astype(nt)
    where = rng.random(sizes) < 0.5
    values[where] = picks[rng.integers(0, picks.size, size=int(where.sum()))]
    return values


def _values(shape: Shape, sizes: tuple[int, ...], rng: np.random.Generator, terms: int) -> np.ndarray:
    nt = numpy_dtype(shape.dtype)
    if shape.data == "special":
        return _special(rng, sizes, shape.dtype)
    if shape.data == "exact":
        r = _exact_range(shape.dtype, terms)
        return rng.integers(-r, r + 1, size=sizes).astype(nt)
    if shape.data == "nan":
        values = rng.uniform(-1.0, 1.0, size=sizes)
        values[(0, 4, sizes[2] // 2)] = np.nan  # a tap inside the window of a middle block
        return values.astype(nt)
    if shape.data == "range":
        e = 6 if shape.dtype is DataType.FLOAT16 else 20
        return (np.where(rng.random(sizes) < 0.5, -1.0, 1.0) * 2.0 ** rng.uniform(-e, e, size=sizes)).astype(nt)
    return rng.uniform(-1.0, 1.0, size=sizes).astype(nt)


def _case(spec: Spec, sem: Window, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    geo = Geometry(*(shape.pick(v) for v in (shape.window, shape.strides, shape.dilations, shape.start, shape.end)))
    spatial = shape.pick(shape.size)
    image = (shape.batch, shape.channels, *spatial)
    block = (shape.batch, shape.channels * math.prod(geo.window), math.prod(blocks(geo, spatial)))
    given, made = (image, block) if sem.operation == "unfold" else (block, image)
    terms = math.prod(geo.window)  # the most block elements one position sums: one per tap at most
    x = _values(shape, given, np.random.default_rng(stream_key(seed, case_id, "X")), terms)
    with np.errstate(invalid="ignore"):  # an integer type's gaps: NaN cast to junk, never read
        inputs = (family.input_tensor(sem.input, shape.dtype, x, padded=shape.padded),)
    outputs = (family.output_tensor(sem.output, shape.dtype, made, padded=shape.padded),)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=inputs, outputs=outputs,
                attributes=attributes(spec, sem, geo), layout=Layout.PADDED if shape.padded else Layout.PACKED,
                expect_supported=shape.supported, edges=(shape.data,), seed=seed)


def attributes(spec: Spec, sem: Window, geo: Geometry) -> tuple[tuple[str, int | str], ...]:
    """The attributes in struct order; arrays as comma-separated text (``"2,1"``)."""
    given: dict[str | None, int | str] = {
        sem.spatial_count: len(geo.window), sem.window_size: _text(geo.window), sem.strides: _text(geo.strides),
        sem.dilations: _text(geo.dilations), sem.start_padding: _text(geo.start), sem.end_padding: _text(geo.end)}
    return tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)


def _text(values: tuple[int, ...]) -> str:
    return ",".join(str(v) for v in values)


def generate(spec: Spec, sem: Window, level: FeatureLevel, *, seed: int, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (`shapes`, then the page's worked
    examples), only those ``keep`` accepts; identical for a ``seed``."""
    for case_id, shape in family.selected(shapes(spec, sem, level), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)
    for e in sem.examples:
        case = example_case(spec, sem, e, level=level, seed=seed)
        if keep is None or keep(case.id, e.dtype):
            yield case


def example_case(spec: Spec, sem: Window, e: WindowExample, *, level: FeatureLevel, seed: int = 0) -> Case:
    """A worked example as a case, ``<OP>/<type>/<n>d/<name>`` (its input the page's; its output computed)."""
    attrs = dict(e.attributes)
    geo = geometry(sem, {k: _text(v) if isinstance(v, tuple) else v for k, v in attrs.items()})
    x = np.array(e.input_values, dtype=numpy_dtype(e.dtype)).reshape(e.input_sizes)
    return Case(id=f"{spec.operator}/{e.dtype.name}/{len(e.input_sizes)}d/{e.name}", operator=spec.operator,
                level=level, dtype=e.dtype, inputs=(family.input_tensor(sem.input, e.dtype, x),),
                outputs=(family.output_tensor(sem.output, e.dtype, e.output_sizes),),
                attributes=attributes(spec, sem, geo), edges=("example",), seed=seed)
