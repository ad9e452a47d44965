"""The CPU reference of the window family (CONVOLUTION): plain numpy in the
tensor's own type, float32 accumulation for FLOAT16 (as a GPU does).

Issue #35 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written like the textbook definitions, not through the oracle's
window map: forward, the input zero-padded and a strided slice per filter
tap multiplied into the sum (sliding windows); backward (transposed), a
scatter-add of every input element times the filter into a full output,
then cropped by the start padding.  It shares nothing with the oracle but
the shape rules of `families.window.cases` (the attributes read, the sizes).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.contraction.cases import Activation
from dmlconform.families.contraction.reference import activate
from dmlconform.families.window import fold_reference
from dmlconform.families.window.activation import activation
from dmlconform.families.window.cases import (
    Geometry,
    IntegerOperands,
    Operands,
    geometry,
    integer_operands,
    operands,
    power,
    semantics_of,
    window,
)
from dmlconform.families.window.fold import FOLDS
from dmlconform.families.window.unpool_reference import unpool
from dmlconform.spec.model import DataType, Spec, numpy_dtype

#: The type each tensor type computes in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)
    out = case.outputs[0]
    if sem.operation == "max_unpooling":
        return {sem.output: unpool(sem, case, buffers)}
    if sem.operation in FOLDS:
        return fold_reference.compute(sem, case, buffers)
    if sem.operation == "max_pooling":
        x = case.input(sem.input).view(buffers[sem.input])
        value, index = maximum(x, window(sem, case), geometry(sem, case), out.sizes)
        found = {sem.output: value.astype(numpy_dtype(out.dtype))}
        if len(case.outputs) > 1:
            found[case.outputs[1].name] = index.astype(numpy_dtype(case.outputs[1].dtype))
        return found
    if sem.operation == "average_pooling":
        x = case.input(sem.input).view(buffers[sem.input])
        return {sem.output: average(x, window(sem, case), geometry(sem, case), out.sizes, out.dtype)}
    if sem.operation == "convolution_integer":
        return {sem.output: integer_convolution(integer_operands(sem, case, buffers), geometry(sem, case), out.sizes)}
    if sem.operation == "lp_pooling":
        x = case.input(sem.input).view(buffers[sem.input])
        return {sem.output: lp_norm(x, window(sem, case), geometry(sem, case), out.sizes, out.dtype,
                                    power(sem, case))}
    return {sem.output: convolution(operands(sem, case, buffers), geometry(sem, case), out.sizes, out.dtype,
                                    fused=activation(sem, case))}


def average(x: np.ndarray, kernel: tuple[int, ...], geo: Geometry, out_sizes: tuple[int, ...],
            dtype: DataType) -> np.ndarray:
    """Average pooling as sliding windows: the input zero-padded, a strided
    slice per window tap added up, divided by the window's size
    (IncludePadding) or by the same sum over a padded array of ones (the
    taps inside the input; 0/0 is NaN)."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    out_spatial = out_sizes[2:]
    pads = [(0, 0), (0, 0)] + [(a, max(0, (o - 1) * s + (k - 1) * d + 1 - i - a)) for i, o, k, s, d, a in
                               zip(x.shape[2:], out_spatial, kernel, geo.strides, geo.dilations, geo.start)]
    xp, ones = np.pad(x.astype(work), pads), np.pad(np.ones(x.shape, work), pads)
    total, count = np.zeros(out_sizes, work), np.zeros(out_sizes, work)
    for tap in itertools.product(*(range(k) for k in kernel)):
        at = _at(slice(None), slice(None), *(slice(k * d, k * d + (o - 1) * s + 1, s) for k, d, s, o in
                                             zip(tap, geo.dilations, geo.strides, out_spatial)))
        total += xp[at]
        count += ones[at]
    with np.errstate(all="ignore"):
        y = total / (work.type(np.prod(kernel)) if geo.include_padding else count)
    return y.astype(numpy_dtype(dtype))


def lp_norm(x: np.ndarray, kernel: tuple[int, ...], geo: Geometry, out_sizes: tuple[int, ...], dtype: DataType,
            p: int, *, reading: str = "absolute", root: bool = True) -> np.ndarray:
    """Lp pooling as sliding windows: ``|x|^p`` of the zero-padded input (a
    padding tap adds 0), a strided slice per window tap added up, then
    ``** (1/p)``.  ``reading`` ``signed-root`` or ``signed-nan`` takes
    ``x^p`` as printed and the real root of a negative sum, or ``**``'s NaN
    (the ``lp-sign`` readings); without ``root`` the sum is left unrooted (a fault's)."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    out_spatial = out_sizes[2:]
    pads = [(0, 0), (0, 0)] + [(a, max(0, (o - 1) * s + (k - 1) * d + 1 - i - a)) for i, o, k, s, d, a in
                               zip(x.shape[2:], out_spatial, kernel, geo.strides, geo.dilations, geo.start)]
    with np.errstate(all="ignore"):
        xp = np.pad((np.abs(x.astype(work)) if reading == "absolute" else x.astype(work)) ** p, pads)
        total = np.zeros(out_sizes, work)
        for tap in itertools.product(*(range(k) for k in kernel)):
            total += xp[_at(slice(None), slice(None), *(slice(k * d, k * d + (o - 1) * s + 1, s) for k, d, s, o in
                                                         zip(tap, geo.dilations, geo.strides, out_spatial)))]
        if reading == "signed-root":
            y = np.sign(total) * np.abs(total) ** (work.type(1) / work.type(p))
        else:
            y = total ** (work.type(1) / work.type(p)) if root and p > 1 else total
    return y.astype(numpy_dtype(dtype))


def integer_convolution(ops: IntegerOperands, geo: Geometry, out_sizes: tuple[int, ...], *,
                        ignore_input_zero: bool = False, filter_zero_of_first: bool = False) -> np.ndarray:
    """CONVOLUTION_INTEGER in int64: the zero points subtracted (the
    filter's per output channel where given so), then `forward` over the
    differences (its zero padding pads after the subtraction), as INT32.
    The keywords are faults': the input zero point ignored, a per-channel
    filter zero point read as its first value."""
    x = ops.x.astype(np.int64)
    if ops.x_zero is not None and not ignore_input_zero:
        x = x - np.int64(ops.x_zero[0])
    w = ops.w.astype(np.int64)
    if ops.w_zero is not None:
        zero = ops.w_zero[:1] if filter_zero_of_first else ops.w_zero
        w = w - zero.astype(np.int64).reshape((-1,) + (1,) * (w.ndim - 1))
    return forward(x, w, geo, out_sizes).astype(np.int32)


def convolution(ops: Operands, geo: Geometry, out_sizes: tuple[int, ...], dtype: DataType,
                work: np.dtype | None = None, *, fused: Activation | None = None,
                activation_first: bool = False) -> np.ndarray:
    """The convolution of ``ops`` computed in ``work`` (the type's working
    type where None), rounded once to ``dtype``: the filter reversed in
    CONVOLUTION mode, the bias added, then the ``fused`` activation on the
    unrounded sum (the ``unrounded`` reading of ``fused-activation-rounding``;
    before the bias where ``activation_first``: a planted fault)."""
    work = work if work is not None else _WORK.get(dtype, numpy_dtype(dtype))
    x, w = ops.x.astype(work), ops.w.astype(work)
    if geo.flipped:
        w = w[(slice(None), slice(None)) + (slice(None, None, -1),) * (w.ndim - 2)]
    with np.errstate(all="ignore"):
        y = backward(x, w, geo, out_sizes) if geo.transposed else forward(x, w, geo, out_sizes)
        if fused is not None and activation_first:
            y = activate(y, fused, work)
        if ops.bias is not None:
            y += ops.bias.astype(work).reshape((1, -1) + (1,) * (y.ndim - 2))
        if fused is not None and not activation_first:
            y = activate(y, fused, work)
    return y.astype(numpy_dtype(dtype))


def forward(x: np.ndarray, w: np.ndarray, geo: Geometry, out_sizes: tuple[int, ...]) -> np.ndarray:
    """Sliding windows: ``y[n, m, o] += x_pad[n, c, o S + k D] w[m, c, k]``, one filter tap at a time."""
    out_spatial = out_sizes[2:]
    pads = [(a, max(0, (o - 1) * s + (k - 1) * d + 1 - i - a))
            for i, o, k, s, d, a in zip(x.shape[2:], out_spatial, w.shape[2:], geo.strides, geo.dilations, geo.start)]
    xp = np.pad(x, [(0, 0), (0, 0), *pads])
    g, cg, mg = geo.groups, w.shape[1], w.shape[0] // geo.groups
    y = np.zeros(out_sizes, x.dtype)
    for tap in itertools.product(*(range(k) for k in w.shape[2:])):
        window = tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
                       for k, d, s, o in zip(tap, geo.dilations, geo.strides, out_spatial))
        for group in range(g):
            xs = xp[_at(slice(None), slice(group * cg, (group + 1) * cg), *window)]
            ws = w[_at(slice(group * mg, (group + 1) * mg), slice(None), *tap)]
            y[:, group * mg:(group + 1) * mg] += np.tensordot(ws, xs, axes=([1], [1])).swapaxes(0, 1)
    return y


def backward(x: np.ndarray, w: np.ndarray, geo: Geometry, out_sizes: tuple[int, ...]) -> np.ndarray:
    """Scatter-add: each input element times the filter, added at
    ``i S + k D`` of a full output, which the start padding then crops
    (a full output shorter than asked for is zero beyond its end)."""
    out_spatial = out_sizes[2:]
    full = [max((i - 1) * s + (k - 1) * d + 1, a + o)
            for i, k, s, d, a, o in zip(x.shape[2:], w.shape[2:], geo.strides, geo.dilations, geo.start, out_spatial)]
    g, cg, mg = geo.groups, x.shape[1] // geo.groups, w.shape[1]
    y = np.zeros((x.shape[0], mg * g, *full), x.dtype)
    for tap in itertools.product(*(range(k) for k in w.shape[2:])):
        window = tuple(slice(k * d, k * d + (i - 1) * s + 1, s)
                       for k, d, s, i in zip(tap, geo.dilations, geo.strides, x.shape[2:]))
        for group in range(g):
            xs = x[:, group * cg:(group + 1) * cg]
            ws = w[_at(slice(group * cg, (group + 1) * cg), slice(None), *tap)]
            y[_at(slice(None), slice(group * mg, (group + 1) * mg), *window)] += \
                np.tensordot(ws, xs, axes=([0], [1])).swapaxes(0, 1)
    crop = tuple(slice(a, a + o) for a, o in zip(geo.start, out_spatial))
    return np.ascontiguousarray(y[_at(slice(None), slice(None), *crop)])


def _at(*index: slice | int) -> tuple[Any, ...]:
    """A basic index of slices and taps."""
    return index


def maximum(x: np.ndarray, kernel: tuple[int, ...], geo: Geometry, out_sizes: tuple[int, ...], *,
            last_tie: bool = False, padding: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Max pooling as sliding windows, taps in row-major order: a tap
    replaces the best so far where it is larger (``last_tie``: or equal, a
    fault's) or NaN over a number (NaN propagates; the first NaN stays);
    taps in the padding never count (``padding``: a fault's value for them).
    The flat index of the input element kept comes along."""
    out_spatial = out_sizes[2:]
    pads = [(0, 0), (0, 0)] + [(a, max(0, (o - 1) * s + (k - 1) * d + 1 - i - a)) for i, o, k, s, d, a in
                               zip(x.shape[2:], out_spatial, kernel, geo.strides, geo.dilations, geo.start)]
    xp = np.pad(x, pads)
    inside = np.pad(np.ones(x.shape, bool), pads)
    flat = np.pad(np.arange(x.size, dtype=np.int64).reshape(x.shape), pads, constant_values=-1)
    best, best_index = np.zeros(out_sizes, x.dtype), np.full(out_sizes, -1, np.int64)
    for tap in itertools.product(*(range(k) for k in kernel)):
        at = _at(slice(None), slice(None), *(slice(k * d, k * d + (o - 1) * s + 1, s) for k, d, s, o in
                                             zip(tap, geo.dilations, geo.strides, out_spatial)))
        value, ok = xp[at], inside[at]
        if padding is not None:
            value, ok = np.where(ok, value, np.array(padding).astype(x.dtype)), np.ones(ok.shape, bool)
        with np.errstate(invalid="ignore"):
            larger = (value >= best) if last_tie else (value > best)
            if x.dtype.kind == "f":
                larger |= np.isnan(value) & ~np.isnan(best)
                larger &= ~(np.isnan(best) & (best_index >= 0))
        take = ok & ((best_index < 0) | larger)
        best = np.where(take, value, best)
        best_index = np.where(take, flat[at], best_index)
    return best, best_index
