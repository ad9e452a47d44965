"""The oracle of the ROI operators (ROI_POOLING's exact maximum is
`roi_pooling.pool_part`'s); of ROI_ALIGN and ROI_ALIGN1: the
page's pseudocode in float64, with the bound of a weighted sum with
positive weights per sample and of the reduction over the samples.

Issue #36 items 1 and 2; docs/interpolation.md "ROI_ALIGN1" transcribes the
pseudocode and derives the bound.  Per region (scaled corners ``X1 = x1 *
SpatialScaleX`` ..., sizes ``X2 - X1``) and dimension: ``S`` samples per
output element, the quotient size / OutputSize rounded up (``sample-count``)
and clamped to [MinimumSamplesPerOutput, MaximumSamplesPerOutput]; sample
``s = o S + i`` (i < S: ``sample-loop``) at ``c = (s - OutputPixelOffset)
size / (OutputSize S) + X1 - InputPixelOffset`` (``OutputSize S - 1``
with AlignRegionsToCorners); the sample is the bilinear value there (or
the nearest element), OutOfBoundsInputValue where ``c`` lies outside [0,
size - 1] (``out-of-bounds``); the output the average or the maximum of
its S_y x S_x samples.

Bound: an implementation evaluates ``c`` in float32, within ``delta =
u (4|t| + q (|X1| + |X2| + |X2 - X1|) + 2|X1| + |t + X1| + 2|c| +
|InputPixelOffset|)`` of it, ``t = (s - OutputPixelOffset) scale`` and ``q =
(s - OutputPixelOffset) / (out S)`` (each rounding of the corners, the size, the scale, the product
and the sums at its magnitude, in any order; 0 where every step is exact); a LINEAR sample is within
``gamma_7(u) M + delta_x D_x + delta_y D_y`` (M its largest corner
magnitude, D the difference across its cell along that dimension, or 2P
where ``delta`` reaches the next cell, P the largest magnitude of the plane
and the out-of-bounds value), a NEAREST one exact but
where ``c`` lies within ``delta`` of a rounding or bounds boundary (then
within 2P).  AVERAGE adds ``gamma_{N+9}(u)`` times the mean of the samples'
M (the sum, the division, a 1/N folded into the weights) to the mean of
their coordinate terms; MAX takes the largest of its samples' bounds.  The
readings are whole evaluations (alternatives with their own bounds); where
the float32 quotient rounds to another sample count than the float64 one,
that count is an alternative too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import Alternative, Tier
from dmlconform.families.interpolation.oracle import InterpolationBatch, Part, batch_of
from dmlconform.families.interpolation.roi_cases import RoiGeometry, geometry, regions, semantics_of
from dmlconform.families.interpolation.roi_pooling import pool_part
from dmlconform.families.interpolation.roi_semantics import MAX, Roi
from dmlconform.families.interpolation.semantics import NEAREST
from dmlconform.oracles.base import (
    gamma,
    reading_alternatives,
    spacing_above,
    unit_roundoff,
)
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["Reading", "RoiOracle", "evaluate"]

_U32 = 2.0 ** -24


@dataclass(frozen=True, slots=True)
class Reading:
    """The choices the page leaves open (the overlay's ambiguities), and
    ``count_f32``: the sample count from the float32 quotient."""

    count: str = "ceil"
    inclusive: bool = False
    y_literal: bool = False
    out_of_bounds: str = "sample"
    ties_up: bool = True
    corners_centre: bool = False
    count_f32: bool = False


#: Each reading other than the primary, by ``ambiguity:reading``.
READINGS = {
    "sample-count:floor": Reading(count="floor"),
    "sample-loop:inclusive": Reading(inclusive=True),
    "y-scale:literal": Reading(y_literal=True),
    "out-of-bounds:band": Reading(out_of_bounds="band"),
    "out-of-bounds:neighbour": Reading(out_of_bounds="neighbour"),
    "ties:down": Reading(ties_up=False),
    "corners-one-sample:centre": Reading(corners_centre=True),
}


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One reading's output (R, C, OH, OW): value, bound before the output's rounding, largest magnitude."""

    value: np.ndarray
    bound: np.ndarray
    magnitude: np.ndarray


def sample_count(size: float, out: int, geo: RoiGeometry, reading: Reading) -> int:
    """S of one dimension: size / out rounded (``sample-count``) and clamped."""
    ratio = float(np.float32(np.float32(size) / np.float32(out))) if reading.count_f32 else size / out
    whole = np.ceil(ratio) if reading.count == "ceil" else np.floor(ratio)
    return int(np.clip(whole, geo.min_samples, geo.max_samples))


@dataclass(frozen=True, slots=True)
class _Axis:
    """One dimension's samples (O x n): the two neighbours, the upper one's
    weight, whether each is inside, whether the whole sample is outside, the
    coordinate's float32 error and whether the value may jump within it."""

    low: np.ndarray
    high: np.ndarray
    w1: np.ndarray
    low_in: np.ndarray
    high_in: np.ndarray
    outside: np.ndarray
    delta: np.ndarray
    jumps: np.ndarray
    crosses: np.ndarray


def sample_scale(size: float, out: int, count: int, geo: RoiGeometry) -> float:
    """outputSampleToInputScale: size / (out S), or size / (out S - 1) with AlignRegionsToCorners (0 at one sample)."""
    total = out * count
    if geo.align_corners:
        return size / (total - 1) if total > 1 else 0.0
    return size / total


def coordinates(lo: float, hi: float, out: int, count: int, scale: float, geo: RoiGeometry,
                reading: Reading) -> tuple[np.ndarray, np.ndarray]:
    """The sample coordinates (out x n) of one dimension of one region and their float32 error bound."""
    n = count + (1 if reading.inclusive else 0)
    s = (np.arange(out)[:, None] * count + np.arange(n)[None, :]).astype(np.float64)
    t = (s - geo.output_offset) * scale
    c = t + lo - geo.input_offset
    if geo.align_corners and out * count == 1 and reading.corners_centre:
        c = np.full(s.shape, (lo + hi) / 2 - geo.input_offset)
    f32 = np.float32
    steps = [np.float64(v) for v in (lo, hi, hi - lo, scale, (hi - lo) / out)]
    exact = all(f32(v) == v for v in steps) and np.all(t.astype(f32) == t) and np.all((t + lo).astype(f32) == t + lo) \
        and np.all(c.astype(f32) == c)
    q = np.abs(s - geo.output_offset) / max(out * count - (1 if geo.align_corners else 0), 1)  # the size's share
    # each rounding of any order (the corners, the size, the scale and its product, the sums) at its magnitude
    first = 4 * np.abs(t) + q * (abs(lo) + abs(hi) + abs(hi - lo)) + 2 * abs(lo) + np.abs(t + lo) + 2 * np.abs(c) \
        + abs(geo.input_offset)
    # (and half a subnormal spacing per rounding where a tiny region's steps underflow, the scale's (s - offset) times)
    tiny = (np.abs(s - geo.output_offset) + 8) * 2.0 ** -150
    delta = np.zeros(c.shape) if exact else _U32 * first * (1 + 2.0 ** -10) + tiny
    return c, delta


def _axis(c: np.ndarray, delta: np.ndarray, size: int, geo: RoiGeometry, reading: Reading) -> _Axis:
    rule = reading.out_of_bounds
    if rule == "neighbour":
        outside = np.zeros(c.shape, bool)
        near = np.zeros(c.shape, bool)
    else:
        edge = (0.0, size - 1.0) if rule == "sample" else (-1.0, float(size))
        outside = (c < edge[0]) | (c > edge[1])
        near = (np.abs(c - edge[0]) <= delta) | (np.abs(c - edge[1]) <= delta)
    if geo.mode == NEAREST:
        index = np.floor(c + 0.5) if reading.ties_up else np.ceil(c - 0.5)
        frac = np.abs(c - np.floor(c) - 0.5)
        near = near | (frac <= delta)
        # "sample" and "band" decide on c whether a sample is outside; within the band (-1 < c < 0, or
        # size - 1 < c < size) the sample is the edge element, as LINEAR's clamped coordinate reads it
        # (DirectML's kernels, issue #37); "neighbour" gives the out-of-bounds value to a missing index
        inside = (index >= 0) & (index <= size - 1) if rule == "neighbour" else np.ones(c.shape, bool)
        index = np.clip(index, 0, size - 1).astype(np.int64)
        return _Axis(index, index, np.zeros(c.shape), inside, inside, outside, delta, near & (delta > 0),
                     np.zeros(c.shape, bool))
    if rule == "neighbour":
        low = np.floor(c)
        w1 = c - low
        low_in, high_in = (low >= 0) & (low <= size - 1), (low + 1 >= 0) & (low + 1 <= size - 1)
        near = near | ((np.abs(c) <= delta) | (np.abs(c - (size - 1)) <= delta))
        low_i = np.clip(low, 0, size - 1).astype(np.int64)
        high_i = np.clip(low + 1, 0, size - 1).astype(np.int64)
        return _Axis(low_i, high_i, w1, low_in, high_in, outside, delta, near & (delta > 0), _crosses(w1, delta))
    cc = np.clip(c, 0, size - 1)
    low_i = np.clip(np.floor(cc), 0, max(size - 2, 0)).astype(np.int64)
    high_i = np.minimum(low_i + 1, size - 1)
    every = np.ones(c.shape, bool)
    w1 = cc - low_i
    return _Axis(low_i, high_i, w1, every, every, outside, delta, near & (delta > 0), _crosses(w1, delta))


def _crosses(w1: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Where the coordinate lies within its error of a cell boundary (its slope may be the next cell's)."""
    return (delta > 0) & ((w1 <= delta) | (w1 >= 1 - delta))


def evaluate(x: np.ndarray, rois: np.ndarray, batch: np.ndarray, geo: RoiGeometry, pooled: tuple[int, int],
             reading: Reading, u: float) -> Evaluation:
    """The output under ``reading`` (float64), its bound and magnitudes."""
    oh, ow = pooled
    count_r, channels = rois.shape[0], x.shape[1]
    value, bound, magnitude = (np.zeros((count_r, channels, oh, ow)) for _ in range(3))
    oob = geo.out_of_bounds
    for r in range(count_r):
        x1, x2 = rois[r, 0] * geo.scale_x, rois[r, 2] * geo.scale_x
        y1, y2 = rois[r, 1] * geo.scale_y, rois[r, 3] * geo.scale_y
        sx, sy = sample_count(x2 - x1, ow, geo, reading), sample_count(y2 - y1, oh, geo, reading)
        scale_x = sample_scale(x2 - x1, ow, sx, geo)
        scale_y = scale_x if reading.y_literal else sample_scale(y2 - y1, oh, sy, geo)  # the page's line, as written
        cx, dx = coordinates(x1, x2, ow, sx, scale_x, geo, reading)
        cy, dy = coordinates(y1, y2, oh, sy, scale_y, geo, reading)
        ax = _axis(cx, dx, x.shape[3], geo, reading)
        ay = _axis(cy, dy, x.shape[2], geo, reading)
        plane = x[batch[r]]
        big = np.maximum(np.abs(plane).reshape(channels, -1).max(axis=1), abs(oob))[:, None, None, None, None]
        sample = np.zeros((channels, *cy.shape, *cx.shape))
        corner = np.zeros(sample.shape)
        v = {}
        for ky, (iy, wy, in_y) in enumerate(((ay.low, 1 - ay.w1, ay.low_in), (ay.high, ay.w1, ay.high_in))):
            for kx, (ix, wx, in_x) in enumerate(((ax.low, 1 - ax.w1, ax.low_in), (ax.high, ax.w1, ax.high_in))):
                got = plane[:, iy[:, :, None, None], ix[None, None, :, :]]
                v[ky, kx] = got = np.where(in_y[:, :, None, None] & in_x[None, None, :, :], got, oob)
                w = wy[:, :, None, None] * wx[None, None, :, :]
                sample += w * got
                corner = np.maximum(corner, np.where(w > 0, np.abs(got), 0))
        outside = ay.outside[:, :, None, None] | ax.outside[None, None, :, :]
        sample = np.where(outside, oob, sample)
        corner = np.where(outside, abs(oob), corner)
        # the slope along each dimension: across the cell, or anything (2P) where delta reaches the next cell
        slope_x = np.where(ax.crosses[None, None, :, :], 2 * big,
                           np.maximum(np.abs(v[0, 1] - v[0, 0]), np.abs(v[1, 1] - v[1, 0])))
        slope_y = np.where(ay.crosses[:, :, None, None], 2 * big,
                           np.maximum(np.abs(v[1, 0] - v[0, 0]), np.abs(v[1, 1] - v[0, 1])))
        coord = dy[:, :, None, None] * slope_y + dx[None, None, :, :] * slope_x if geo.mode != NEAREST else \
            np.zeros(sample.shape)
        coord = np.where(outside, 0.0, coord)  # the constant: no coordinate moves it, but across a boundary
        jumps = ay.jumps[:, :, None, None] | ax.jumps[None, None, :, :]
        coord = np.where(jumps, 2 * big, coord)
        arith = gamma(np.array(7.0), u) * np.where(outside, 0.0, corner) if geo.mode != NEAREST else \
            np.zeros(sample.shape)
        if geo.reduction == MAX:
            value[r] = sample.max(axis=(2, 4))
            bound[r] = (arith + coord).max(axis=(2, 4))
        else:
            n = sample.shape[2] * sample.shape[4]
            value[r] = sample.mean(axis=(2, 4))
            bound[r] = coord.mean(axis=(2, 4)) + gamma(np.array(n + 9.0), u) * corner.mean(axis=(2, 4))
        magnitude[r] = corner.max(axis=(2, 4))
    return Evaluation(value, bound, magnitude)


@dataclass(frozen=True, slots=True, eq=False)
class RoiOracle:
    """The oracle of one ROI align operator (its reviewed semantics)."""

    spec: m.Spec
    semantics: Roi

    @classmethod
    def of(cls, spec: m.Spec) -> RoiOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> InterpolationBatch:
        """Each case's values, bounds and alternatives end to end (the resample oracle's batch).
        ``flush_subnormals`` changes nothing: a flushed subnormal is within one spacing of the output."""
        return batch_of([_part(self.spec, self.semantics, c, float16_accumulation) for c in cases])


def _strict(ev: Evaluation, nt: np.dtype) -> np.ndarray:
    """The bound with the output's rounding; 0 where the value is exact and representable."""
    flat, bound = ev.value.reshape(-1), ev.bound.reshape(-1)
    strict = bound + spacing_above(np.abs(flat) + bound, nt)
    strict[(bound == 0) & (flat.astype(nt).astype(np.float64) == flat)] = 0.0
    return strict


def _part(spec: m.Spec, sem: Roi, case: Case, float16_accumulation: bool) -> Part:
    if sem.pooled_size is not None:
        return Part(*pool_part(spec, sem, case))
    geo, out = geometry(sem, case), case.outputs[0]
    x = case.input(sem.input).view().astype(np.float64)
    rois, batch = regions(sem, case)
    nt = numpy_dtype(out.dtype)
    u = unit_roundoff(m.DataType.FLOAT16) if float16_accumulation and out.dtype is m.DataType.FLOAT16 else _U32
    pooled = (out.sizes[2], out.sizes[3])
    primary = evaluate(x, rois, batch, geo, pooled, Reading(), u)
    expected = primary.value.reshape(-1).astype(nt)
    values, bounds = {}, {}
    for key, reading in READINGS.items():
        ev = evaluate(x, rois, batch, geo, pooled, reading, u)
        values[key], bounds[key] = ev.value.reshape(-1), _strict(ev, nt)
    alternatives = reading_alternatives(spec, values, expected, bounds=bounds)
    rounded = evaluate(x, rois, batch, geo, pooled, replace(Reading(), count_f32=True), u)
    where = np.flatnonzero(rounded.value.reshape(-1).astype(nt) != expected)
    if where.size:
        alternatives += (Alternative("sample-count-rounding", where, rounded.value.reshape(-1)[where].astype(nt),
                                     Tier.STRICT, "the float32 quotient size / OutputSize rounds to another count",
                                     _strict(rounded, nt)[where]),)
    return Part(expected, _strict(primary, nt), primary.magnitude.reshape(-1), alternatives)
