"""Cases of the interpolation family (RESAMPLE, RESAMPLE1, RESAMPLE2,
RESAMPLE3, UPSAMPLE_2D), and its shape rules.

Issue #36 item 3; DESIGN.md "Cases".  Per data type of the table, each
mode (NEAREST_NEIGHBOR, LINEAR) with the pixel offsets of the half-pixel
(0.5, -0.5) and the asymmetric (0, 0) maps (RESAMPLE has only the first)
and every direction of ties (RESAMPLE2/3), over the scale sets of
`SCALES`: integer and fractional upsampling, downsampling, scale 1, a
scale across channels, an output larger than the scaled input (its edges
clamped) and a smaller one (cropped), ``ties`` (coordinates landing
exactly halfway between two input elements); ``exact`` (small integers)
and ``random`` values; the other dimension counts of the table; a padded
layout; with ``large``, the issue's 4x bilinear upsample of 1x32x256x256;
negative cases: a data type and a dimension count outside the table.
UPSAMPLE_2D has its own scale pairs (`UPSAMPLE_SCALES`).

Ids: ``RESAMPLE1/FLOAT32/4d/linear/half-pixel/up2/random``.  A case's
values depend on the seed and its id alone, and ``keep`` is applied before
any value is drawn.  The shape rules (`geometry`) are what the oracle and
the CPU reference share.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout
from dmlconform.families.interpolation.semantics import DECREASING, INCREASING, LINEAR, NEAREST, Resample
from dmlconform.limits import MAX_CASE_WORK
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType, FeatureLevel, Spec, numpy_dtype

# -- the shape rules ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Geometry:
    """A resample's attributes, read: the mode, and per dimension the scale
    and the two pixel offsets, each the float32 value the attribute holds
    (as Python floats); the direction of ties (None: the operator has no
    RoundingDirection) and whether Antialiased is set."""

    mode: str
    scales: tuple[float, ...]
    input_offsets: tuple[float, ...]
    output_offsets: tuple[float, ...]
    rounding: str | None = None
    antialiased: bool = False


def semantics_of(spec: Spec) -> Resample:
    """``spec``'s interpolation semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, Resample, "interpolation")


_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_floats(value: object, *, name: str, count: int) -> tuple[float, ...]:
    """A FLOAT array attribute as a case holds it (text, ``"1,1,2,1.5"``, or
    one number) -> its float32 values; ValueError naming the attribute, the
    value and the fix where it is not ``count`` finite decimal numbers."""
    parts = [p.strip() for p in str(value).split(",")]
    if isinstance(value, bool) or not all(_NUMBER.fullmatch(p) for p in parts):
        raise ValueError(f"{name}={value!r} is not a list of numbers; write them comma-separated, e.g. \"1,1,2,2\"")
    values = tuple(float(np.float32(float(p))) for p in parts)
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise ValueError(f"{name}={value!r} gives {len(values)} finite values for {count} dimensions: give {count}")
    return values


def geometry(sem: Resample, case: Case) -> Geometry:
    """The attributes of ``case`` as a `Geometry` (RESAMPLE's fixed offsets
    where the operator has no offset arrays); ValueError naming the
    attribute where one does not parse or a scale is not positive."""
    attrs = case.attribute_map()
    rank = case.inputs[0].dimension_count

    def array(name: str | None, fixed: float) -> tuple[float, ...]:
        if name is None:
            return (fixed,) * rank
        if name not in attrs:
            raise ValueError(f"attribute {name} is missing: give {rank} numbers, comma-separated")
        return parse_floats(attrs[name], name=name, count=rank)

    scales = array(sem.scales, 1.0) if sem.scale_size is None else scale_size(attrs, sem.scale_size, rank)
    if min(scales) <= 0:
        raise ValueError(f"{sem.scales}={attrs.get(sem.scales or '')!r}: every scale must be above 0")
    rounding = str(attrs.get(sem.rounding, INCREASING)) if sem.rounding else None
    return Geometry(str(attrs.get(sem.mode, NEAREST)), scales, array(sem.input_offsets, sem.input_offset),
                    array(sem.output_offsets, sem.output_offset), rounding,
                    bool(attrs.get(sem.antialiased, False)) if sem.antialiased else False)


def scale_size(attrs: dict[str, float | int | bool | str], name: str, rank: int) -> tuple[float, ...]:
    """UPSAMPLE_2D's scales: 1 but for height and width, whose whole scales
    the DML_SIZE_2D ``name`` gives as text in struct order (``"Width,Height"``);
    ValueError naming it otherwise."""
    if name not in attrs:
        raise ValueError(f"attribute {name} is missing: give the width and height scales, e.g. \"2,3\"")
    sizes = family.parse_axes(attrs[name], name=name)
    if len(sizes) != 2 or min(sizes) < 1 or rank < 2:
        raise ValueError(f"{name}={attrs[name]!r}: give two whole scales of 1 or more, width first, e.g. \"2,3\"")
    return (1.0,) * (rank - 2) + (float(sizes[1]), float(sizes[0]))


def antialias_applies(geo: Geometry) -> bool:
    """Whether RESAMPLE3's antialiasing filter is in play: Antialiased set,
    LINEAR, and some 1/scale above 2 (the page's conditions)."""
    return geo.antialiased and geo.mode == LINEAR and min(geo.scales) < 0.5


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no resample its semantics describe (a case
    folder's fault): input and output of different dimension counts,
    attributes that do not parse, an antialiasing filter in play (the page
    gives none to check), more work than one case may ask for."""
    sem = semantics_of(spec)
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    x, out = tensors.get(sem.input), tensors.get(sem.output)
    if x is None or out is None:
        return
    if x.dimension_count != out.dimension_count:
        yield (f"{x.name} {list(x.sizes)} and {out.name} {list(out.sizes)} differ in dimension count: give both "
               "the same")
        return
    try:
        geo = geometry(sem, case)
    except ValueError as exc:
        yield str(exc)
        return
    if geo.mode not in (NEAREST, LINEAR) or (geo.rounding not in (None, INCREASING, DECREASING)):
        yield f"{sem.mode}={geo.mode} / {sem.rounding}={geo.rounding}: give one of the enum's names"
    if sem.scale_size is not None and out.sizes != tuple(int(n * f) for n, f in zip(x.sizes, geo.scales)):
        wanted = [int(n * f) for n, f in zip(x.sizes, geo.scales)]
        yield f"{out.name} sizes {list(out.sizes)} are not the input's scaled by {sem.scale_size}: give {wanted}"
    if antialias_applies(geo):
        yield (f"{sem.antialiased} with a scale below 0.5: the page gives no filter formula to check "
               "(docs/interpolation.md): give scales of 0.5 or more, or Antialiased FALSE")
    work = math.prod(out.sizes) * 2 ** x.dimension_count
    if work > MAX_CASE_WORK:
        yield (f"{work:,} weighted terms are over the {MAX_CASE_WORK:,} one case may ask for (limits.MAX_CASE_WORK): "
               "give smaller tensors")


# -- which cases ------------------------------------------------------------------------------------

#: The scale sets, per dimension of a 4D case {N, C, H, W} (the last ``rank`` used), with the input's
#: sizes and an output size change (``extra``: added to floor(size x scale) on the last dimension;
#: positive, the output's edge clamped; negative, the scaled input cropped).
SCALES: tuple[dict[str, object], ...] = (
    {"name": "up2", "scales": ("1", "1", "2", "2")},
    {"name": "up3", "scales": ("1", "1", "3", "3")},
    {"name": "up1.5", "scales": ("1", "1", "1.5", "2.5")},
    {"name": "down2", "scales": ("1", "1", "0.5", "0.5"), "size": (2, 3, 8, 8)},
    {"name": "down0.6", "scales": ("1", "1", "0.6", "0.75"), "size": (2, 3, 10, 8)},
    {"name": "scale1", "scales": ("1", "1", "1", "1")},
    {"name": "channels2", "scales": ("1", "2", "1", "0.5"), "size": (2, 3, 4, 8)},
    {"name": "clamped", "scales": ("1", "1", "2", "2"), "extra": 3},
    {"name": "cropped", "scales": ("1", "1", "2", "2"), "extra": -3},
)
#: The offset pairs (input, output): the half-pixel map (RESAMPLE's) and the asymmetric one.
OFFSETS = {"half-pixel": ("0.5", "-0.5"), "asymmetric": ("0", "0"), "quarter": ("0.25", "-0.25")}
#: The scale sets of the other dimension counts, and the dimension kinds each case draws.
OTHER_RANKS = ("up2", "down0.6")
DATA = ("exact", "random")


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values."""

    dtype: DataType
    rank: int
    mode: str
    offsets: str
    name: str
    scales: tuple[str, ...]
    size: tuple[int, ...] = (2, 3, 5, 6)
    extra: int = 0
    rounding: str | None = None
    antialiased: bool = False
    data: str = "random"
    padded: bool = False
    supported: bool = True
    tags: tuple[str, ...] = field(default=())

    def case_id(self, operator: str) -> str:
        mode = "nearest" if self.mode == NEAREST else "linear"
        head = [operator, self.dtype.name, f"{self.rank}d", mode] + ([self.offsets] if self.offsets else [])
        if self.rounding is not None:
            head.append("ties-up" if self.rounding == INCREASING else "ties-down")
        if self.antialiased:
            head.append("antialiased")
        return "/".join([*head, self.name, self.data, *self.tags])

    def sizes(self) -> tuple[int, ...]:
        return self.size[len(self.size) - self.rank:]

    def scale_values(self) -> tuple[str, ...]:
        return self.scales[len(self.scales) - self.rank:]

    def output_sizes(self) -> tuple[int, ...]:
        out = [max(1, math.floor(n * float(np.float32(float(s))))) for n, s in zip(self.sizes(), self.scale_values())]
        out[-1] = max(1, out[-1] + self.extra)
        return tuple(out)


def shapes(spec: Spec, level: FeatureLevel, *, large: bool) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    ranks = tuple(sem.dims_at(level))
    (row,) = family.rows_at(spec, level, ranks, sem.output)
    rep = 4 if 4 in ranks else max(ranks)
    if sem.scale_size is not None:
        out = [s for t in row.dtypes for s in _upsample_per_dtype(t, ranks)]
        return out + _negatives(sem, row.dtypes[0], rep, ranks, row.dtypes)
    out = [s for i, t in enumerate(row.dtypes) for s in _per_dtype(sem, t, rep, ranks, large and i == 0)]
    return out + _negatives(sem, row.dtypes[0], rep, ranks, row.dtypes)


#: The scale sets each variant runs: the half-pixel map all of them; the others those where it shows.
_SETS = {"half-pixel": None, "asymmetric": ("up2", "up1.5", "down2", "down0.6", "clamped"),
         "quarter": ("up2", "down0.6")}
#: The scale sets of ties rounded down (RESAMPLE2/3 NEAREST_NEIGHBOR) and of Antialiased TRUE (RESAMPLE3).
_DOWN_SETS = ("up2", "down2", "up1.5", "clamped")
_ANTIALIASED_SETS = ("up2", "down2")


def _variants(sem: Resample, mode: str) -> Iterator[tuple[str, str | None, bool, tuple[str, ...] | None]]:
    """(offsets, direction of ties, antialiased, the scale sets: None, all) of ``mode``'s cases."""
    direction = INCREASING if sem.rounding else None
    for offsets in (OFFSETS if sem.input_offsets is not None else ("half-pixel",)):
        yield offsets, direction, False, _SETS[offsets]
        if sem.rounding and mode == NEAREST and offsets != "quarter":
            yield offsets, DECREASING, False, _DOWN_SETS
    if sem.antialiased:
        yield "half-pixel", direction, True, _ANTIALIASED_SETS


def _per_dtype(sem: Resample, dtype: DataType, rep: int, ranks: tuple[int, ...], large: bool) -> Iterator[Shape]:
    data = DATA if dtype.is_float else ("random",)
    for mode in (NEAREST, LINEAR):
        for offsets, direction, flag, sets in _variants(sem, mode):
            for given in SCALES:
                if sets is not None and given["name"] not in sets:
                    continue
                base = replace(Shape(dtype, rep, mode, offsets, "", ("1",) * 4, rounding=direction,
                                     antialiased=flag), **given)  # type: ignore[arg-type]
                yield from (replace(base, data=d) for d in data)
                if base.name in OTHER_RANKS and offsets == "half-pixel" and not flag:
                    yield from (replace(base, rank=r, data=d) for r in ranks if r != rep for d in data)
    base = Shape(dtype, rep, LINEAR, "half-pixel", "up1.5", ("1", "1", "1.5", "2.5"),
                 rounding=INCREASING if sem.rounding else None)
    yield replace(base, padded=True, tags=("padded",))
    if large:
        yield replace(base, name="up4", scales=("1", "1", "4", "4"), size=(1, 32, 256, 256), tags=("large",))


#: UPSAMPLE_2D's whole scales (height, width): NEAREST_NEIGHBOR all of them, LINEAR the powers of two, whose
#: weights are dyadic (exact values, where the ``upsample-map`` readings can be told apart: `oracle`).
UPSAMPLE_SCALES = {"2x2": ("2", "2"), "3x2": ("3", "2"), "1x4": ("1", "4"), "4x4": ("4", "4")}
UPSAMPLE_LINEAR = ("2x2", "1x4", "4x4")


def _upsample_per_dtype(dtype: DataType, ranks: tuple[int, ...]) -> Iterator[Shape]:
    """UPSAMPLE_2D: NEAREST_NEIGHBOR over every scale pair with exact and
    random data, LINEAR over the powers of two with exact data (the
    readings of its map differ there, and are offered only on exact
    values), the 5D case of each mode, a padded layout."""
    for name, (h, w) in UPSAMPLE_SCALES.items():
        base = Shape(dtype, 4, NEAREST, "", name, ("1", "1", "1", h, w), size=(2, 2, 3, 4, 5))
        yield from (replace(base, data=d) for d in DATA)
        if name in UPSAMPLE_LINEAR:
            yield replace(base, mode=LINEAR, data="exact")
    for rank in (r for r in ranks if r != 4):
        base = Shape(dtype, rank, NEAREST, "", "2x2", ("1", "1", "1", "2", "2"), size=(2, 2, 3, 4, 5))
        yield from (replace(base, data="random"), replace(base, mode=LINEAR, data="exact"))
    yield Shape(dtype, 4, NEAREST, "", "3x2", ("1", "1", "1", "3", "2"), size=(2, 2, 3, 4, 5), padded=True,
                tags=("padded",))


def _negatives(sem: Resample, first: DataType, rep: int, ranks: tuple[int, ...],
               allowed: tuple[DataType, ...]) -> list[Shape]:
    """One data type and one dimension count outside the table."""
    direction = INCREASING if sem.rounding else None
    base = Shape(first, rep, NEAREST, "half-pixel", "up2", ("1", "1", "2", "2"), rounding=direction,
                 supported=False, tags=("unsupported",))
    if sem.scale_size is not None:
        base = replace(base, offsets="", name="2x2", scales=("1", "1", "1", "2", "2"), size=(2, 2, 3, 4, 5))
    out = []
    bad_type = next((t for t in DATA_TYPE_ORDER if t not in allowed and t.is_float), None)
    if bad_type is not None:
        out.append(replace(base, dtype=bad_type))
    bad_rank = next(r for r in (5, 3) if r not in ranks)
    out.append(replace(base, dtype=first, rank=bad_rank, size=(2, 2, 3, 4, 5), scales=("1", "1", "1", "2", "2")))
    return out


# -- values and tensors ---------------------------------------------------------------------------


def _draw(shape: Shape, sizes: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    nt = numpy_dtype(shape.dtype)
    if not shape.dtype.is_float:
        info = np.iinfo(nt)
        return rng.integers(info.min, info.max, size=sizes, dtype=nt, endpoint=True)
    if shape.data == "exact":
        return rng.integers(-8, 9, size=sizes).astype(nt)
    return rng.uniform(-1.0, 1.0, size=sizes).astype(nt)


def _case(spec: Spec, sem: Resample, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    x = _draw(shape, shape.sizes(), np.random.default_rng(stream_key(seed, case_id, "X")))
    with np.errstate(invalid="ignore"):  # input_tensor fills a buffer with NaN first, which an integer type casts to junk
        inputs = (family.input_tensor(sem.input, shape.dtype, x, padded=shape.padded and shape.dtype.is_float),)
    outputs = (family.output_tensor(sem.output, shape.dtype, shape.output_sizes(), padded=shape.padded),)
    layout = Layout.PADDED if shape.padded else Layout.PACKED
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=inputs, outputs=outputs,
                attributes=_attributes(spec, sem, shape), layout=layout, expect_supported=shape.supported,
                edges=(shape.data,), seed=seed)


def _attributes(spec: Spec, sem: Resample, shape: Shape) -> tuple[tuple[str, float | int | bool | str], ...]:
    """The attributes in struct order; arrays as comma-separated text (``"1,1,2,2"``)."""
    io, oo = OFFSETS.get(shape.offsets, ("0.5", "-0.5"))
    h, w = shape.scales[-2:]
    given: dict[str | None, int | str | bool] = {sem.scale_size: f"{w},{h}",
        sem.mode: shape.mode, sem.dimension_count: shape.rank, sem.scales: ",".join(shape.scale_values()),
        sem.input_offsets: ",".join((io,) * shape.rank), sem.output_offsets: ",".join((oo,) * shape.rank),
        sem.rounding: shape.rounding or INCREASING, sem.antialiased: shape.antialiased}
    return tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return family.generable(lambda: shapes(spec, level, large=False))


def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level``, only those ``keep(id, data
    type)`` accepts, without the negative ones where not ``negative``;
    identical for a ``seed``."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    for case_id, shape in family.selected(shapes(spec, level, large=large), lambda s: s.case_id(spec.operator),
                                          keep, negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)
