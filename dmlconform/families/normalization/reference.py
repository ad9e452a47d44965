"""The CPU reference of the normalization family (MEAN_VARIANCE_NORMALIZATION1):
plain numpy in the tensor's own type, float32 for FLOAT16 (as a GPU
computes it).

Issue #36 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written as the doc's formula reads: the mean over Axes, the
population variance as the mean of the squared deviations (two passes),
``Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias``.  It shares
nothing with the oracle but the shape rules of
`families.normalization.cases` (the attributes read, the operands).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.contraction.cases import Activation
from dmlconform.families.elementwise.reference import OPS, Call
from dmlconform.families.normalization.cases import (
    Operands,
    activation_of,
    axes_of,
    centres,
    divides,
    epsilon_of,
    lrn_of,
    operands,
    order_of,
    semantics_of,
    window_offsets,
)
from dmlconform.spec.model import DataType, Spec, numpy_dtype

#: The type each tensor type computes in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}
#: The element-wise reference's type for a working type (a fused activation's call).
_CALL_TYPE = {np.dtype(np.float32): DataType.FLOAT32, np.dtype(np.float64): DataType.FLOAT64}


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)
    out = case.outputs[0]
    if sem.operation == "lrn":
        x = case.input(sem.input).view(buffers[sem.input])
        return {sem.output: lrn(x, axes_of(sem, case), *lrn_of(sem, case), out.dtype)}
    if sem.operation == "lp":
        x = case.input(sem.input).view(buffers[sem.input])
        return {sem.output: lp(x, axes_of(sem, case)[0], order_of(sem, case), epsilon_of(sem, case), out.dtype)}
    ops, axes = operands(sem, case, buffers), axes_of(sem, case)
    y = mean_variance(ops, axes, epsilon_of(sem, case), divides(sem, case), out.dtype, centre=centres(sem, case),
                      fused=activation_of(sem, case))
    if sem.output_mean is None or sem.output_variance is None:
        return {sem.output: y}
    mean, variance = moments(ops.x, axes, out.dtype)
    return {sem.output: y, sem.output_mean: mean, sem.output_variance: variance}


def moments(x: np.ndarray, axes: tuple[int, ...], dtype: DataType, *, ddof: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """BATCH_NORMALIZATION_TRAINING's mean and variance outputs: over ``axes`` (kept, size 1: the scale's sizes),
    two passes in the type's working type, each rounded once to ``dtype``.  ``ddof`` 1 is the planted fault's."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    w = x.astype(work)
    with np.errstate(all="ignore"):
        mean = w.mean(axis=axes, keepdims=True, dtype=work)
        centred = w - mean
        n = int(np.prod([x.shape[a] for a in axes]))
        variance = (centred * centred).sum(axis=axes, keepdims=True, dtype=work) / work.type(n - ddof)
        return mean.astype(numpy_dtype(dtype)), variance.astype(numpy_dtype(dtype))


def mean_variance(ops: Operands, axes: tuple[int, ...], epsilon: float, divide: bool, dtype: DataType, *,
                  centre: bool = True, ddof: int = 0, outside: bool = False, fused: Activation | None = None,
                  add_after: bool = False) -> np.ndarray:
    """``fused(scale * (x - mean) / sqrt(var + epsilon) + bias + add)`` over
    ``axes`` in the type's working type, rounded once to ``dtype`` (the
    activation, the element-wise family's CPU function, reads the unrounded
    sum); without ``centre`` (UseMean FALSE) no mean is subtracted and the
    variance is the mean of the squares.  ``ddof`` 1 (the sample variance),
    ``outside`` (``sqrt(var) + epsilon``) and ``add_after`` (the addend after
    the activation) are the planted faults' (`families.normalization.faults`)."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    x = ops.x.astype(work, copy=False)  # no copy (nor of the broadcast scale and bias) where the type is already it
    with np.errstate(all="ignore"):
        centred = x - x.mean(axis=axes, keepdims=True, dtype=work) if centre else x
        y = centred
        if divide:
            variance = np.multiply(centred, centred).sum(axis=axes, keepdims=True, dtype=work) / work.type(
                int(np.prod([x.shape[a] for a in axes])) - ddof)
            eps = work.type(epsilon)
            y = np.divide(centred, np.sqrt(variance) + eps if outside else np.sqrt(variance + eps),
                          out=_own(centred, x))
        # each step in place (out=) once y is an array of this call's: the large case's 2^24 elements
        # allocated (and page-faulted) once, not once a step; the same operations in the same order
        if ops.scale is not None:
            y = np.multiply(y, ops.scale.astype(work, copy=False), out=_own(y, x))
        if ops.bias is not None:
            y = np.add(y, ops.bias.astype(work, copy=False), out=_own(y, x))
        if ops.add is not None and not add_after:
            y = np.add(y, ops.add.astype(work, copy=False), out=_own(y, x))
        if fused is not None:
            y = np.asarray(OPS[fused.operator](Call({"InputTensor": y}, dict(fused.attributes), _CALL_TYPE[work],
                                                    {"OutputTensor": work})))
        if ops.add is not None and add_after:
            y = np.add(y, ops.add.astype(work, copy=False), out=_own(y, x))
    return y.astype(numpy_dtype(dtype), copy=np.may_share_memory(y, ops.x))  # a new array, never the input


def _own(y: np.ndarray, x: np.ndarray) -> np.ndarray | None:
    """``y`` as the ``out=`` of the next step where it is this call's own writable array of ``x``'s shape and
    type, None (a new one) where it is not (still the input ``x``)."""
    own = y.flags.writeable and y.shape == x.shape and y.dtype == x.dtype and not np.may_share_memory(y, x)
    return y if own else None


def lp(x: np.ndarray, axis: int, p: int, epsilon: float, dtype: DataType) -> np.ndarray:
    """``x / max(||x||_p, epsilon)`` along ``axis`` in the type's working type, rounded once to ``dtype``."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    w = x.astype(work)
    with np.errstate(all="ignore"):
        if p == 1:
            norm = np.abs(w).sum(axis=axis, keepdims=True, dtype=work)
        elif p == 2:
            norm = np.sqrt((w * w).sum(axis=axis, keepdims=True, dtype=work))
        else:  # outside the page's "either 1 or 2" (a negative case): the P-norm
            norm = (np.abs(w) ** p).sum(axis=axis, keepdims=True, dtype=work) ** work.type(1.0 / p)
        return (w / np.maximum(norm, work.type(epsilon))).astype(numpy_dtype(dtype))


def lrn(x: np.ndarray, dims: tuple[int, ...], size: int, alpha: float, beta: float, bias: float, dtype: DataType, *,
        shift: int = 0) -> np.ndarray:
    """``x / (bias + alpha / size * sum of x^2 over the window)^beta``, the window ``size`` long along each of
    ``dims``, floor((size - 1) / 2) before each element, zeros outside; in the type's working type.  ``shift``
    moves the window (the planted fault's, `families.normalization.faults`)."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    w = x.astype(work)
    before, after = window_offsets(size)
    before, after = before + shift, after - shift
    with np.errstate(all="ignore"):
        squares = np.pad(w * w, [(max(before, 0), max(after, 0)) if d in dims else (0, 0) for d in range(w.ndim)])
        total = np.zeros(w.shape, work)
        for offsets in np.ndindex(*(size for _ in dims)):
            index = [slice(None)] * w.ndim
            for d, k in zip(dims, offsets):
                start = k + max(before, 0) - before
                index[d] = slice(start, start + w.shape[d])
            total += squares[tuple(index)]
        y = w / (work.type(bias) + work.type(alpha) / work.type(size) * total) ** work.type(beta)
    return y.astype(numpy_dtype(dtype))
