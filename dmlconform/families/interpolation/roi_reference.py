"""The CPU reference of the ROI operators (ROI_ALIGN, ROI_ALIGN1, and
ROI_POOLING's maximum over its bins, `roi_pool`); of the align operators:
plain numpy in float32, as a GPU kernel computes them, the overlay's
primary readings.

Issue #36 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  One region at a time, as the page's pseudocode loops: the scaled
corners, the sample counts (the quotient rounded up, clamped), each
sample's coordinates in float32, a bilinear value (or the nearest element,
ties up) or OutOfBoundsInputValue where the coordinate lies outside the
input, and the average or maximum over the output element's samples.  It
shares only the shape rules of `families.interpolation.roi_cases` with the
oracle.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.interpolation.roi_cases import RoiGeometry, geometry, regions, semantics_of
from dmlconform.families.interpolation.roi_pooling import pooled_size, spatial_scale
from dmlconform.families.interpolation.roi_semantics import MAX
from dmlconform.families.interpolation.semantics import NEAREST
from dmlconform.spec.model import Spec, numpy_dtype

_F32 = np.float32


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)
    x = case.input(sem.input).view(buffers[sem.input])
    out = case.outputs[0]
    if sem.pooled_size is not None:
        given = case.input(sem.rois).view(buffers[sem.rois]).reshape(-1, 5)
        return {sem.output: roi_pool(x, given, spatial_scale(sem, case), pooled_size(sem, case))}
    rois, batch = regions(sem, case, buffers)
    return {sem.output: roi_align(x, rois, batch, geometry(sem, case), out.sizes[2:], out.dtype)}


def roi_align(x: np.ndarray, rois: np.ndarray, batch: np.ndarray, geo: RoiGeometry, pooled: tuple[int, ...],
              dtype: object, *, extra_samples: int = 0, align: bool | None = None,
              read_outside: bool = True) -> np.ndarray:
    """Every region of ``x`` pooled to ``pooled`` (height, width).  The
    keywords plant faults: ``extra_samples`` added to each count,
    ``align`` overriding AlignRegionsToCorners, ``read_outside`` False
    clamping an outside coordinate to the edge instead of reading
    OutOfBoundsInputValue."""
    oh, ow = pooled
    xf = x.astype(_F32)
    out = np.empty((rois.shape[0], x.shape[1], oh, ow), _F32)
    corners = geo.align_corners if align is None else align
    for r in range(rois.shape[0]):
        box = rois[r].astype(_F32) * np.array([geo.scale_x, geo.scale_y, geo.scale_x, geo.scale_y], _F32)
        ys = _samples(box[1], box[3], oh, geo, corners, extra_samples)
        xs = _samples(box[0], box[2], ow, geo, corners, extra_samples)
        plane = xf[batch[r]]
        values = _interpolate(plane, ys, xs, geo, read_outside)  # C x OH x Sy x OW x Sx
        out[r] = values.max(axis=(2, 4)) if geo.reduction == MAX else values.mean(axis=(2, 4), dtype=_F32)
    return out.astype(numpy_dtype(dtype))  # type: ignore[arg-type]


def _samples(start: np.float32, end: np.float32, size_out: int, geo: RoiGeometry, corners: bool,
             extra: int) -> np.ndarray:
    """The float32 input coordinates of each output index's samples (size_out x S)."""
    size = end - start
    count = int(np.clip(np.ceil(size / _F32(size_out)), geo.min_samples, geo.max_samples)) + extra
    total = size_out * count
    if corners:
        step = size / _F32(total - 1) if total > 1 else _F32(0)
    else:
        step = size / _F32(total)
    index = (np.arange(size_out)[:, None] * count + np.arange(count)[None, :]).astype(_F32)
    return (index - _F32(geo.output_offset)) * step + start - _F32(geo.input_offset)


def _interpolate(plane: np.ndarray, ys: np.ndarray, xs: np.ndarray, geo: RoiGeometry, read_outside: bool) -> np.ndarray:
    """The sample values at the outer product of ``ys`` and ``xs``."""
    h, w = plane.shape[1:]
    out_y = (ys < 0) | (ys > h - 1)
    out_x = (xs < 0) | (xs > w - 1)
    yc, xc = np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)
    if geo.mode == NEAREST:
        iy = np.floor(yc + _F32(0.5)).astype(np.int64)
        ix = np.floor(xc + _F32(0.5)).astype(np.int64)
        values = plane[:, iy[:, :, None, None], ix[None, None, :, :]]
    else:
        y0 = np.minimum(np.floor(yc).astype(np.int64), max(h - 2, 0))
        x0 = np.minimum(np.floor(xc).astype(np.int64), max(w - 2, 0))
        y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
        fy = (yc - y0.astype(_F32))[:, :, None, None]
        fx = (xc - x0.astype(_F32))[None, None, :, :]
        a, b = y0[:, :, None, None], y1[:, :, None, None]
        c, d = x0[None, None, :, :], x1[None, None, :, :]
        top = plane[:, a, c] + fx * (plane[:, a, d] - plane[:, a, c])
        bottom = plane[:, b, c] + fx * (plane[:, b, d] - plane[:, b, c])
        values = top + fy * (bottom - top)
    if read_outside:
        outside = out_y[:, :, None, None] | out_x[None, None, :, :]
        values = np.where(outside, _F32(geo.out_of_bounds), values)
    return values.astype(_F32)


def roi_pool(x: np.ndarray, rois: np.ndarray, scale: float, pooled: tuple[int, int], *,
             bins_inward: bool = False) -> np.ndarray:
    """ROI_POOLING as the page's formula reads, in x's type: each region's
    corners rounded half away from zero, bins from floor(o size / pooled) to
    ceil((o + 1) size / pooled) (exclusive) clamped to the input, the
    maximum of each bin, 0 for an empty one.  ``bins_inward`` rounds the
    bins' bounds the other way (a planted fault)."""
    out = np.zeros((rois.shape[0], x.shape[1], *pooled), x.dtype)
    h, w = x.shape[2:]
    for r in range(rois.shape[0]):
        scaled = rois[r, 1:].astype(_F32) * _F32(scale)
        x1, y1, x2, y2 = (int(v) for v in np.sign(scaled) * np.floor(np.abs(scaled) + _F32(0.5)))
        starts_y, ends_y = _bin_bounds(y1, y2 - y1 + 1, pooled[0], bins_inward)
        starts_x, ends_x = _bin_bounds(x1, x2 - x1 + 1, pooled[1], bins_inward)
        plane = x[int(rois[r, 0])]
        for oy in range(pooled[0]):
            for ox in range(pooled[1]):
                ys, ye = np.clip([starts_y[oy], ends_y[oy]], 0, h)
                xs, xe = np.clip([starts_x[ox], ends_x[ox]], 0, w)
                if ye > ys and xe > xs:
                    out[r, :, oy, ox] = plane[:, ys:ye, xs:xe].max(axis=(1, 2))
    return out


def _bin_bounds(start: int, size: int, bins: int, inward: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each bin's first index and the one past its last: floor and ceiling of o size / bins (swapped ``inward``)."""
    edges = np.arange(bins + 1) * size / bins
    low, high = (np.ceil, np.floor) if inward else (np.floor, np.ceil)
    return low(edges[:-1]).astype(np.int64) + start, high(edges[1:]).astype(np.int64) + start
