"""ROI_POOLING: its shape rules, cases and oracle (the ROI family's
``roi_cases``, ``roi_oracle`` and ``roi_reference`` hand it their ROI_POOLING
specs).

The page's formula (docs/interpolation.md "ROI_POOLING"): each region's
corners ``round(v x SpatialScale)``, its size ``y2 - y1 + 1``, bin ``o``
of it from ``(o RegionHeight) / PooledHeight + y1`` to ``((o + 1)
RegionHeight + PooledHeight - 1) / PooledHeight + y1`` (integer division:
floor and ceiling), clamped to the input; the output the bin's maximum,
exact (bound 0).  Open: ``round``'s ties (``rounding``), whether the end
is exclusive (``bin-end``) and what an empty bin gives (``empty-bin``),
each reading a whole evaluation.

Cases: per data type, regions inside the input, at half coordinates (ties
of ``round``), scaled, partly and wholly outside (empty bins), of one pixel,
smaller and larger than the pooled size; negative cases: a data type and a
dimension count outside the table.  Ids: ``ROI_POOLING/FLOAT32/inside/random``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case
from dmlconform.compare import Alternative
from dmlconform.families.interpolation.roi_semantics import Roi
from dmlconform.oracles.base import reading_alternatives
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType, FeatureLevel, Spec, numpy_dtype

# -- the shape rules ------------------------------------------------------------------------------


def pooled_size(sem: Roi, case: Case) -> tuple[int, int]:
    """PooledSize (height, width) from its text in struct order ``"Width,Height"``; ValueError naming it otherwise."""
    attrs = case.attribute_map()
    name = sem.pooled_size or ""
    if name not in attrs:
        raise ValueError(f"attribute {name} is missing: give the pooled width and height, e.g. \"3,2\"")
    sizes = family.parse_axes(attrs[name], name=name)
    if len(sizes) != 2 or min(sizes) < 1:
        raise ValueError(f"{name}={attrs[name]!r}: give two sizes of 1 or more, width first, e.g. \"3,2\"")
    return sizes[1], sizes[0]


def spatial_scale(sem: Roi, case: Case) -> float:
    return float(np.float32(float(case.attribute_map().get(sem.scale_x, 1.0))))


def pool_regions(sem: Roi, case: Case, buffer: np.ndarray | None = None) -> np.ndarray:
    """The regions ``[batch, x1, y1, x2, y2]`` (R x 5, float64 of the tensor's values)."""
    return np.asarray(case.input(sem.rois).view(buffer), np.float64).reshape(-1, 5)


def case_problems(sem: Roi, case: Case) -> Iterator[str]:
    """What makes ``case`` no ROI pooling the page describes."""
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    x, rois, out = tensors.get(sem.input), tensors.get(sem.rois), tensors.get(sem.output)
    if x is None or rois is None or out is None or x.dimension_count != 4 or out.dimension_count != 4:
        return
    if rois.sizes[-1] != 5 or any(n != 1 for n in rois.sizes[:-2]):
        yield f"{rois.name} sizes {list(rois.sizes)}: give {{1, 1, NumROIs, 5}}"
        return
    try:
        pooled = pooled_size(sem, case)
    except ValueError as exc:
        yield str(exc)
        return
    count = rois.sizes[-2]
    if out.sizes != (count, x.sizes[1], *pooled):
        yield f"{out.name} sizes {list(out.sizes)}: give {[count, x.sizes[1], *pooled]} (PooledSize's height, width)"
    given = pool_regions(sem, case)
    bad = (given[:, 0] != np.floor(given[:, 0])) | (given[:, 0] < 0) | (given[:, 0] >= x.sizes[0])
    if bad.any():
        yield f"{rois.name} region {int(np.flatnonzero(bad)[0])} has batch {given[bad][0, 0]:g}: give a whole " \
              f"index in [0, {x.sizes[0]})"
    if ((given[:, 3] < given[:, 1]) | (given[:, 4] < given[:, 2])).any():
        yield f"{rois.name} holds a region with x2 < x1 or y2 < y1: the page requires x2 >= x1, y2 >= y1"


# -- the oracle -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PoolReading:
    rounding: str = "half-away"
    end: str = "exclusive"
    empty: str = "zero"


#: Each reading other than the primary, by ``ambiguity:reading``.
POOL_READINGS = {
    "rounding:half-even": PoolReading(rounding="half-even"),
    "rounding:half-up": PoolReading(rounding="half-up"),
    "bin-end:inclusive": PoolReading(end="inclusive"),
    "empty-bin:lowest": PoolReading(empty="lowest"),
}


def _round(v: np.ndarray, how: str) -> np.ndarray:
    if how == "half-even":
        return np.rint(v)
    if how == "half-up":
        return np.floor(v + 0.5)
    return np.trunc(v + np.copysign(0.5, v))


def _spans(start: int, size: int, bins: int, limit: int, extra: int) -> list[tuple[int, int]]:
    """Each bin's [Start, End + extra) by the page's integer formula, clamped to [0, limit]."""
    return [(min(max(o * size // bins + start, 0), limit),
             min(max(((o + 1) * size + bins - 1) // bins + start + extra, 0), limit)) for o in range(bins)]


def pool(x: np.ndarray, rois: np.ndarray, scale: float, pooled: tuple[int, int], reading: PoolReading,
         lowest: float) -> np.ndarray:
    """The output under ``reading`` (float64)."""
    ph, pw = pooled
    h, w = x.shape[2:]
    out = np.empty((rois.shape[0], x.shape[1], ph, pw))
    for r, (b, *corners) in enumerate(rois):
        x1, y1, x2, y2 = (int(v) for v in _round(np.array(corners) * scale, reading.rounding))
        extra = 1 if reading.end == "inclusive" else 0
        rows, cols = _spans(y1, y2 - y1 + 1, ph, h, extra), _spans(x1, x2 - x1 + 1, pw, w, extra)
        for oy, (ys, ye) in enumerate(rows):
            for ox, (xs, xe) in enumerate(cols):
                window = x[int(b), :, ys:ye, xs:xe]
                empty = 0.0 if reading.empty == "zero" else lowest
                out[r, :, oy, ox] = window.max(axis=(1, 2)) if window.size else empty
    return out


def pool_part(spec: Spec, sem: Roi, case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[Alternative, ...]]:
    """One case's expected values (exact: bound 0), magnitudes and the readings' alternatives."""
    out = case.outputs[0]
    nt = numpy_dtype(out.dtype)
    x = case.input(sem.input).view().astype(np.float64)
    rois, scale, pooled = pool_regions(sem, case), spatial_scale(sem, case), pooled_size(sem, case)
    lowest = float(np.finfo(nt).min)
    expected = pool(x, rois, scale, pooled, PoolReading(), lowest).reshape(-1).astype(nt)
    readings = {k: pool(x, rois, scale, pooled, r, lowest).reshape(-1) for k, r in POOL_READINGS.items()}
    return expected, np.zeros(expected.size), np.abs(expected.astype(np.float64)), \
        reading_alternatives(spec, readings, expected)


# -- which cases ------------------------------------------------------------------------------------

INPUT = (2, 3, 8, 9)


@dataclass(frozen=True, slots=True)
class PoolSet:
    """Regions ``[batch, x1, y1, x2, y2]`` before the spatial scale, the scale and PooledSize (height, width)."""

    rois: tuple[tuple[float, float, float, float, float], ...]
    scale: float = 1.0
    pooled: tuple[int, int] = (2, 3)


POOL_SETS: dict[str, PoolSet] = {
    "inside": PoolSet(((0, 1, 2, 6, 5), (1, 0, 0, 8, 7), (1, 3, 2, 4, 3))),
    "half-coordinates": PoolSet(((0, 1, 3, 9, 11), (1, 5, 1, 13, 7), (0, -3, -1, 3, 5)), scale=0.5),
    "scaled": PoolSet(((0, 4, 6, 30, 22), (1, 2, 1, 33, 29)), scale=0.25),
    "partly-outside": PoolSet(((0, -3, -2, 4, 3), (1, 6, 5, 12, 10))),
    "outside": PoolSet(((0, 12, 10, 15, 14), (1, -6, -5, -3, -2))),
    "one-pixel": PoolSet(((0, 3, 3, 3, 3), (1, 8, 7, 8, 7))),
    "larger-pooled": PoolSet(((0, 1, 1, 3, 2), (1, 0, 0, 8, 7)), pooled=(4, 5)),
}


@dataclass(frozen=True, slots=True)
class PoolShape:
    dtype: DataType
    regions: str
    rank: int = 4
    supported: bool = True
    tags: tuple[str, ...] = field(default=())

    def case_id(self, operator: str) -> str:
        return "/".join([operator, self.dtype.name, self.regions, "random", *self.tags])


def pool_shapes(spec: Spec, sem: Roi, level: FeatureLevel) -> list[PoolShape]:
    (row, rois_row) = family.rows_at(spec, level, (4,), sem.output, sem.rois)
    out = [PoolShape(t, name) for t in row.dtypes for name in POOL_SETS]
    base = PoolShape(row.dtypes[0], "inside", supported=False, tags=("unsupported",))
    bad_type = next((t for t in DATA_TYPE_ORDER if t not in row.dtypes and t.is_float), None)
    if bad_type is not None:
        out.append(replace(base, dtype=bad_type))
    bad_rank = next(r for r in (3, 5) if r not in rois_row.dims)
    out.append(replace(base, rank=bad_rank, tags=(f"rois-{bad_rank}d", "unsupported")))
    return out


def pool_case(spec: Spec, sem: Roi, level: FeatureLevel, seed: int, case_id: str, shape: PoolShape) -> Case:
    nt = numpy_dtype(shape.dtype)
    x = np.random.default_rng(stream_key(seed, case_id, "X")).uniform(-1.0, 1.0, size=INPUT).astype(nt)
    given = POOL_SETS[shape.regions]
    rois = np.array(given.rois, nt).reshape((1,) * (shape.rank - 2) + (len(given.rois), 5))
    inputs = (family.input_tensor(sem.input, shape.dtype, x), family.input_tensor(sem.rois, shape.dtype, rois))
    outputs = (family.output_tensor(sem.output, shape.dtype, (len(given.rois), INPUT[1], *given.pooled)),)
    values: dict[str | None, float | str] = {sem.scale_x: given.scale,
                                             sem.pooled_size: f"{given.pooled[1]},{given.pooled[0]}"}
    attributes = tuple((f.name, values[f.name]) for f in spec.attributes if f.name in values)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=inputs, outputs=outputs,
                attributes=attributes, expect_supported=shape.supported, edges=("random",), seed=seed)


def pool_generate(spec: Spec, sem: Roi, level: FeatureLevel, *, seed: int, negative: bool,
                  keep: Callable[[str, DataType], bool] | None) -> Iterator[Case]:
    for case_id, shape in family.selected(pool_shapes(spec, sem, level), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield pool_case(spec, sem, level, seed, case_id, shape)
