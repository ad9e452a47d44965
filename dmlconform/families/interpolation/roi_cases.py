"""Cases of the ROI operators (ROI_ALIGN, ROI_ALIGN1; ROI_POOLING's are
`roi_pooling`'s), and their shape rules.

Issue #36 item 3; DESIGN.md "Cases".  Per data type of the table, each
interpolation mode and reduction (AVERAGE, MAX) with the pixel offsets of
the half-pixel (0.5, -0.5) and the output-half-pixel (0, -0.5) maps
(ROI_ALIGN has only the first), over the region sets of `REGION_SETS`:
regions inside the input, partly and wholly outside it (OutOfBoundsInputValue
0 and -2.5), of one pixel and empty, inverted, with the sample count at
MinimumSamplesPerOutput and at MaximumSamplesPerOutput, and a spatial scale;
AlignRegionsToCorners TRUE (ROI_ALIGN1) with the corner map (0, 0); the
ROITensor's 3-D and 4-D forms and the BatchIndicesTensor's other types and
dimension counts; negative cases: a data type and an ROITensor dimension
count outside the table.

Ids: ``ROI_ALIGN1/FLOAT32/linear/average/half-pixel/inside/random``.  A
case's values depend on the seed and its id alone.  The shape rules
(`geometry`, `regions`) are what the oracle and the CPU reference share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case
from dmlconform.families.interpolation import roi_pooling
from dmlconform.families.interpolation.cases import DATA
from dmlconform.families.interpolation.roi_semantics import AVERAGE, MAX, Roi
from dmlconform.families.interpolation.semantics import LINEAR, NEAREST
from dmlconform.limits import MAX_CASE_WORK
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType, FeatureLevel, Spec, numpy_dtype

# -- the shape rules ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoiGeometry:
    """An ROI align's attributes, read (floats as the float32 values they hold)."""

    reduction: str
    mode: str
    scale_x: float
    scale_y: float
    input_offset: float
    output_offset: float
    out_of_bounds: float
    min_samples: int
    max_samples: int
    align_corners: bool


def semantics_of(spec: Spec) -> Roi:
    """``spec``'s ROI semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, Roi, "roi")


def _f32(value: object) -> float:
    return float(np.float32(float(value)))  # type: ignore[arg-type]


def geometry(sem: Roi, case: Case) -> RoiGeometry:
    """The attributes of ``case`` as a `RoiGeometry` (ROI_ALIGN's fixed
    offsets and AlignRegionsToCorners FALSE); ValueError naming the
    attribute where one is missing or out of range."""
    attrs = case.attribute_map()

    def get(name: str | None, default: object) -> object:
        if name is None:
            return default
        if name not in attrs:
            raise ValueError(f"attribute {name} is missing: give it")
        return attrs[name]

    geo = RoiGeometry(str(get(sem.reduction, AVERAGE)), str(get(sem.mode, LINEAR)), _f32(get(sem.scale_x, 1.0)),
                      _f32(get(sem.scale_y, get(sem.scale_x, 1.0))),
                      _f32(get(sem.input_offset_field, sem.input_offset)),
                      _f32(get(sem.output_offset_field, sem.output_offset)), _f32(get(sem.out_of_bounds, 0.0)),
                      int(get(sem.min_samples, 1)), int(get(sem.max_samples, 1)),  # type: ignore[call-overload]
                      bool(get(sem.align_corners, False)))
    if not 1 <= geo.min_samples <= geo.max_samples:
        raise ValueError(f"{sem.min_samples}={geo.min_samples}, {sem.max_samples}={geo.max_samples}: give "
                         "1 <= MinimumSamplesPerOutput <= MaximumSamplesPerOutput")
    return geo


def regions(sem: Roi, case: Case, buffers: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The regions ``[x1, y1, x2, y2]`` (R x 4, float64 of the tensor's
    values) and their batch indices (R, int64)."""
    rois = case.input(sem.rois).view(None if buffers is None else buffers[sem.rois])
    rois = np.asarray(rois, np.float64).reshape(-1, 4)
    if sem.batch_indices is None:
        return rois, np.zeros(rois.shape[0], np.int64)
    batch = case.input(sem.batch_indices).view(None if buffers is None else buffers[sem.batch_indices])
    return rois, np.asarray(batch).reshape(-1).astype(np.int64)


def one_sampling_ratio(geo: RoiGeometry, sizes: np.ndarray, pooled: tuple[int, int]) -> int | None:
    """The ``sampling_ratio`` of onnxruntime's RoiAlign and torchvision's
    roi_align that gives every region (``sizes``: R x 2, width and height)
    DirectML's clamped counts: their one value k, 0 where every count is
    the unclamped ceiling (their adaptive count), None where neither holds."""
    ceiling = np.ceil(sizes / np.array([pooled[1], pooled[0]], np.float64))
    counts = np.clip(ceiling, geo.min_samples, geo.max_samples)
    if counts.size and (counts == counts.flat[0]).all():
        return int(counts.flat[0])
    return 0 if (counts == ceiling).all() else None


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no ROI align its semantics describe: sizes that
    disagree, a batch index outside the input, attributes out of range, more
    work than one case may ask for."""
    sem = semantics_of(spec)
    if sem.pooled_size is not None:
        yield from roi_pooling.case_problems(sem, case)
        return
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    x, rois, out = tensors.get(sem.input), tensors.get(sem.rois), tensors.get(sem.output)
    if x is None or rois is None or out is None or x.dimension_count != 4 or out.dimension_count != 4:
        return
    count = math.prod(rois.sizes[:-1])
    if rois.sizes[-1] != 4 or any(n != 1 for n in rois.sizes[:-2]):
        yield f"{rois.name} sizes {list(rois.sizes)}: give {{NumROIs, 4}}, {{1, NumROIs, 4}} or {{1, 1, NumROIs, 4}}"
        return
    if out.sizes[:2] != (count, x.sizes[1]):
        yield f"{out.name} sizes {list(out.sizes)}: give {{{count}, {x.sizes[1]}, height, width}}"
    try:
        geometry(sem, case)
    except ValueError as exc:
        yield str(exc)
        return
    if sem.batch_indices is not None and sem.batch_indices in tensors:
        batch = tensors[sem.batch_indices]
        if math.prod(batch.sizes) != count:
            yield f"{batch.name} has {math.prod(batch.sizes)} indices for {count} regions: give one per region"
        elif count and not (batch.view() < x.sizes[0]).all():
            yield f"{batch.name} holds an index outside [0, {x.sizes[0]}): the page leaves it undefined"
    work = math.prod(out.sizes) * 4 * geometry(sem, case).max_samples ** 2
    if work > MAX_CASE_WORK:
        yield (f"{work:,} weighted terms are over the {MAX_CASE_WORK:,} one case may ask for (limits.MAX_CASE_WORK): "
               "give smaller tensors or a smaller MaximumSamplesPerOutput")


# -- which cases ------------------------------------------------------------------------------------

#: The input's sizes {N, C, H, W} and the output's height and width.
INPUT = (2, 3, 6, 7)
POOLED = (2, 3)


@dataclass(frozen=True, slots=True)
class RegionSet:
    """Regions ``[x1, y1, x2, y2]`` before the spatial scale, their batch
    indices, the scale, the sample clamps and OutOfBoundsInputValue."""

    rois: tuple[tuple[float, float, float, float], ...]
    batch: tuple[int, ...]
    scale: float = 1.0
    min_samples: int = 1
    max_samples: int = 64
    out_of_bounds: float = 0.0


REGION_SETS: dict[str, RegionSet] = {
    "inside": RegionSet(((0.5, 1.25, 4.75, 4.5), (1, 0, 6, 5.5), (2.25, 2.125, 3.75, 3.875)), (0, 1, 1)),
    "partly-outside": RegionSet(((-1.5, -2, 3, 2.5), (4, 3.5, 9, 8)), (1, 0)),
    "partly-outside-value": RegionSet(((-1.5, -2, 3, 2.5), (4, 3.5, 9, 8)), (1, 0), out_of_bounds=-2.5),
    "outside": RegionSet(((8, 7, 10, 9.5), (-5, -4, -2, -1.5)), (0, 1)),
    "outside-value": RegionSet(((8, 7, 10, 9.5), (-5, -4, -2, -1.5)), (0, 1), out_of_bounds=-2.5),
    "one-pixel": RegionSet(((2, 3, 3, 4), (4, 1, 4, 1)), (0, 1)),
    "inverted": RegionSet(((5, 4, 1, 1.5),), (1,), min_samples=2, max_samples=2),
    "at-minimum": RegionSet(((1, 1, 2, 2.5),), (0,), min_samples=3, max_samples=5),
    "at-maximum": RegionSet(((0, 0, 6.5, 5.5), (0.5, 0.5, 5.5, 4)), (1, 0), min_samples=1, max_samples=1),
    "scaled": RegionSet(((1, 2.5, 9.5, 10), (0, 0, 12, 12)), (0, 1), scale=0.5),
}
#: The offset pairs (input, output).
OFFSETS = {"half-pixel": (0.5, -0.5), "output-half-pixel": (0.0, -0.5), "corner": (0.0, 0.0)}
#: The region sets with exact (small integer) values too, and those of AlignRegionsToCorners TRUE.
EXACT_SETS = ("inside", "one-pixel", "at-minimum")
CORNER_SETS = ("inside", "partly-outside-value", "one-pixel", "inverted")


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values."""

    dtype: DataType
    mode: str
    reduction: str
    offsets: str
    regions: str
    data: str = "random"
    align: bool = False
    roi_rank: int = 2
    batch_rank: int = 1
    batch_dtype: DataType = DataType.UINT32
    supported: bool = True
    tags: tuple[str, ...] = field(default=())

    def case_id(self, operator: str) -> str:
        mode = "nearest" if self.mode == NEAREST else "linear"
        reduction = "max" if self.reduction == MAX else "average"
        head = [operator, self.dtype.name, mode, reduction, self.offsets] + (["aligned"] if self.align else [])
        return "/".join([*head, self.regions, self.data, *self.tags])


def shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    rows = family.rows_at(spec, level, (4,), sem.output, sem.rois, *([sem.batch_indices] if sem.batch_indices else []))
    dtypes, roi_dims = rows[0].dtypes, rows[1].dims
    batch_types = rows[2].dtypes if len(rows) > 2 else (DataType.UINT32,)
    offsets = tuple(OFFSETS)[:2] if sem.input_offset_field else ("half-pixel",)
    out: list[Shape] = []
    for dtype in dtypes:
        for mode in (LINEAR, NEAREST):
            for reduction in (AVERAGE, MAX):
                for name in REGION_SETS:
                    for o in offsets:
                        base = Shape(dtype, mode, reduction, o, name)
                        out.extend(replace(base, data=d) for d in DATA if d == "random" or name in EXACT_SETS)
                if sem.align_corners:
                    out.extend(Shape(dtype, mode, reduction, "corner", name, align=True) for name in CORNER_SETS)
        base = Shape(dtype, LINEAR, AVERAGE, "half-pixel", "inside")
        out.extend(replace(base, roi_rank=r, batch_rank=r, tags=(f"rois-{r}d",)) for r in roi_dims if r != 2)
        out.extend(replace(base, batch_dtype=t, tags=(t.name.lower(),)) for t in batch_types if t != DataType.UINT32)
    base = Shape(dtypes[0], LINEAR, AVERAGE, "half-pixel", "inside", supported=False, tags=("unsupported",))
    bad_type = next((t for t in DATA_TYPE_ORDER if t not in dtypes and t.is_float), None)
    if bad_type is not None:
        out.append(replace(base, dtype=bad_type))
    out.append(replace(base, roi_rank=max(roi_dims) + 1, tags=(f"rois-{max(roi_dims) + 1}d", "unsupported")))
    return out


# -- values and tensors ---------------------------------------------------------------------------


def _case(spec: Spec, sem: Roi, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    rng = np.random.default_rng(stream_key(seed, case_id, "X"))
    nt = numpy_dtype(shape.dtype)
    x = rng.integers(-8, 9, size=INPUT).astype(nt) if shape.data == "exact" else \
        rng.uniform(-1.0, 1.0, size=INPUT).astype(nt)
    given = REGION_SETS[shape.regions]
    count = len(given.rois)
    rois = np.array(given.rois, nt).reshape((1,) * (shape.roi_rank - 2) + (count, 4))
    inputs = [family.input_tensor(sem.input, shape.dtype, x), family.input_tensor(sem.rois, shape.dtype, rois)]
    if sem.batch_indices is not None:
        batch = np.array(given.batch, numpy_dtype(shape.batch_dtype)).reshape((1,) * (shape.batch_rank - 1) + (count,))
        with np.errstate(invalid="ignore"):  # input_tensor fills a buffer with NaN first, which an integer type casts to junk
            inputs.append(family.input_tensor(sem.batch_indices, shape.batch_dtype, batch))
    outputs = (family.output_tensor(sem.output, shape.dtype, (count, INPUT[1], *POOLED)),)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=tuple(inputs),
                outputs=outputs, attributes=_attributes(spec, sem, shape), expect_supported=shape.supported,
                edges=(shape.data,), seed=seed)


def _attributes(spec: Spec, sem: Roi, shape: Shape) -> tuple[tuple[str, float | int | bool | str], ...]:
    """The attributes in struct order."""
    given, (io, oo) = REGION_SETS[shape.regions], OFFSETS[shape.offsets]
    values: dict[str | None, float | int | bool | str] = {
        sem.reduction: shape.reduction, sem.mode: shape.mode, sem.scale_x: given.scale, sem.scale_y: given.scale,
        sem.input_offset_field: io, sem.output_offset_field: oo, sem.out_of_bounds: given.out_of_bounds,
        sem.min_samples: given.min_samples, sem.max_samples: given.max_samples, sem.align_corners: shape.align}
    return tuple((f.name, values[f.name]) for f in spec.attributes if f.name in values)


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    sem = semantics_of(spec)
    if sem.pooled_size is not None:
        return family.generable(lambda: roi_pooling.pool_shapes(spec, sem, level))
    return family.generable(lambda: shapes(spec, level))


def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (``large`` adds none: the regions
    are small by nature), only those ``keep(id, data type)`` accepts,
    without the negative ones where not ``negative``; identical for a ``seed``."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    if sem.pooled_size is not None:
        yield from roi_pooling.pool_generate(spec, sem, level, seed=seed, negative=negative, keep=keep)
        return
    for case_id, shape in family.selected(shapes(spec, level), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)
