"""The CPU reference of the interpolation family (RESAMPLE, RESAMPLE1,
RESAMPLE2, RESAMPLE3): plain numpy, coordinates in float32 as a GPU
computes them, values in float32 (FLOAT16 and the integer types too, the
integers rounded to nearest at the end).

Issue #36 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written as the page reads, one dimension at a time: each output
index mapped to ``(o - OutputPixelOffset) / Scale - InputPixelOffset``;
NEAREST_NEIGHBOR rounds it (ties up, or as RoundingDirection says) and
gathers, LINEAR interpolates between the two neighbours, the coordinate
clamped to the input's edges; a 4D LINEAR resample is four 1-D passes.
The oracle instead sums the 2^d corners at once in float64; the two share
only the shape rules of `families.interpolation.cases`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.interpolation.cases import Geometry, geometry, semantics_of
from dmlconform.families.interpolation.semantics import DECREASING, LINEAR
from dmlconform.spec.model import DataType, Spec, numpy_dtype

_F32 = np.float32


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)
    x = case.input(sem.input).view(buffers[sem.input])
    out = case.outputs[0]
    return {sem.output: resample(x, geometry(sem, case), out.sizes, out.dtype)}


def source_coordinates(size_out: int, scale: float, input_offset: float, output_offset: float) -> np.ndarray:
    """``(o - OutputPixelOffset) / Scale - InputPixelOffset`` for o = 0 .. size_out - 1, in float32."""
    o = np.arange(size_out, dtype=_F32)
    return (o - _F32(output_offset)) / _F32(scale) - _F32(input_offset)


def resample(x: np.ndarray, geo: Geometry, out_sizes: tuple[int, ...], dtype: DataType, *,
             ties_up: bool | None = None, clamp: bool = True) -> np.ndarray:
    """The resampled ``x``, one dimension at a time.  ``ties_up`` overrides
    the direction of ties (None: RoundingDirection's, up without one);
    ``clamp`` False extrapolates LINEAR past the edges (a planted fault)."""
    up = geo.rounding != DECREASING if ties_up is None else ties_up
    y = x.astype(_F32)
    for axis, size_out in enumerate(out_sizes):
        c = source_coordinates(size_out, geo.scales[axis], geo.input_offsets[axis], geo.output_offsets[axis])
        y = _linear(y, axis, c, clamp) if geo.mode == LINEAR else _nearest(y, axis, c, up)
    if dtype.is_float:
        return y.astype(numpy_dtype(dtype))
    info = np.iinfo(numpy_dtype(dtype))
    return np.clip(np.rint(y), info.min, info.max).astype(numpy_dtype(dtype))


def _nearest(y: np.ndarray, axis: int, c: np.ndarray, up: bool) -> np.ndarray:
    """The element nearest to each coordinate, halfway ties up (floor(c + 0.5)) or down (ceil(c - 0.5))."""
    index = np.floor(c + _F32(0.5)) if up else np.ceil(c - _F32(0.5))
    index = np.clip(index, 0, y.shape[axis] - 1).astype(np.int64)
    return np.take(y, index, axis=axis)


def _linear(y: np.ndarray, axis: int, c: np.ndarray, clamp: bool) -> np.ndarray:
    """(1 - w) a + w b between the two neighbours of each coordinate, clamped to the edges."""
    n = y.shape[axis]
    if clamp:
        c = np.clip(c, _F32(0), _F32(n - 1))
    low = np.clip(np.floor(c), 0, max(n - 2, 0)).astype(np.int64)
    high = np.minimum(low + 1, n - 1)
    w = (c - low.astype(_F32)).astype(_F32)
    shape = [1] * y.ndim
    shape[axis] = -1
    w = w.reshape(shape)
    return (_F32(1) - w) * np.take(y, low, axis=axis) + w * np.take(y, high, axis=axis)
