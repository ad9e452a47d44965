"""Two honest implementations besides the cpu reference, for the bound audit
(`bench_bounds.py`, issue #32 item 1).  Not shipped: they exist to measure
how much of each FAIL bound real, honest arithmetic uses.

* `F64Once`: every float tensor widened to FLOAT64, the cpu reference run
  on that case (its work type is the tensor's own: float64), each output
  rounded once to its type.  Any family, including one added later, is
  covered with no work of its own.
* `F32Sequential`: float32 arithmetic, accumulations summed (or multiplied)
  one term after the other in index order, the order in which rounding
  errors grow most regularly (Higham, section 4.2), where numpy's ``sum``
  and BLAS's ``matmul`` sum pairwise or in blocks.  For the families that
  accumulate (REDUCE, the softmax family, GEMM) the sums are written here;
  everything else is the cpu reference already (element-wise operators and
  VALUE_SCALE_2D evaluate in float32 for FLOAT16 and FLOAT32, the
  cumulative operators tally sequentially in float32): `same_as_cpu` says
  which, so the audit need not run it twice.
* `F32OnePass`: MEAN_VARIANCE_NORMALIZATION1's variance in one pass,
  ``E[x^2] - E[x]^2`` (clamped at 0), both means summed in order in
  float32 (issue #36: the kernel that large means with small variances
  tell apart from the two-pass one, which `F32Sequential` computes);
  every other operator is the cpu reference's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.cpu import CpuBackend, compute
from dmlconform.cases.model import Case, TensorData, writable_view
from dmlconform.families.contraction import reference as contraction
from dmlconform.families.contraction.cases import Activation, activation, operands, scales
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.families.elementwise.reference import OPS, Call
from dmlconform.families.normalization import cases as normalization
from dmlconform.families.normalization.semantics import Normalization
from dmlconform.families.reduction import reference as reduction
from dmlconform.families.reduction.cases import axes_of, function_of
from dmlconform.families.reduction.semantics import Reduction
from dmlconform.families.softmax import reference as softmax
from dmlconform.families.softmax.cases import axes_of as softmax_axes
from dmlconform.families.softmax.semantics import Function, Softmax
from dmlconform.spec.model import DataType, Spec, numpy_dtype

F32 = np.dtype(np.float32)
Results = dict[str, np.ndarray]


def widened(case: Case, to: DataType) -> Case:
    """``case`` with every float tensor narrower than ``to`` made ``to`` (its
    buffer converted exactly, strides kept: they count elements)."""
    def wide(t: TensorData) -> TensorData:
        if not t.dtype.is_float or numpy_dtype(t.dtype).itemsize >= numpy_dtype(to).itemsize:
            return t
        return replace(t, dtype=to, buffer=t.buffer.astype(numpy_dtype(to)))
    dtype = to if case.dtype.is_float and numpy_dtype(case.dtype).itemsize < numpy_dtype(to).itemsize else case.dtype
    return replace(case, dtype=dtype, inputs=tuple(map(wide, case.inputs)), outputs=tuple(map(wide, case.outputs)))


class _Honest(CpuBackend):
    """A cpu backend (same validation) whose arithmetic is ``_compute``'s."""

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        verdict = self.supports(spec, case)
        if not verdict.supported:
            raise NotSupportedError(verdict.reason)
        with np.errstate(all="ignore"):
            own = not self.same_as_cpu(spec)
            results = self._compute(spec, case, buffers) if own else compute(spec, case, buffers)
            for out in case.outputs:  # every result computed before any output is written (in place)
                writable_view(out, buffers[out.name])[...] = results[out.name].astype(numpy_dtype(out.dtype))

    def _compute(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> Results:
        raise NotImplementedError

    def same_as_cpu(self, spec: Spec) -> bool:
        """Whether this implementation is the cpu reference's for ``spec``."""
        return False


class F64Once(_Honest):
    """The cpu reference on the case widened to FLOAT64, rounded once; an
    operator whose formula reads bits (``&``, ``|``, ``~``, shifts,
    popcount) is the cpu reference itself: a float64's bits are another
    value, not a wider evaluation."""

    def same_as_cpu(self, spec: Spec) -> bool:
        return reads_bits(spec)

    def _compute(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> Results:
        wide = widened(case, DataType.FLOAT64)
        return compute(spec, wide, {t.name: buffers[t.name].astype(numpy_dtype(t.dtype)) for t in wide.inputs})


#: A formula operator on bits: ``&`` and ``|`` (not ``&&``, ``||``), ``~``, shifts, popcount.
_BIT_OPERATORS = re.compile(r"(?<![&|])[&|](?![&|])|~|<<|>>|popcount")


def reads_bits(spec: Spec) -> bool:
    return bool(_BIT_OPERATORS.search(spec.formula.parsed or spec.formula.text or ""))


class F32Sequential(_Honest):
    """float32 arithmetic, sums and products in index order."""

    def _compute(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> Results:
        return _SEQUENTIAL[type(spec.semantics)](spec, case, buffers)

    def same_as_cpu(self, spec: Spec) -> bool:
        return type(spec.semantics) not in _SEQUENTIAL


# -- sequential accumulation ----------------------------------------------------------------

#: The tensor types whose sums are float32's (FLOAT64 ones stay the reference's, in float64).
_FLOAT32_WORK = frozenset({DataType.FLOAT16, DataType.FLOAT32})

def _lined(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``x`` with ``axes`` moved last and merged into one, in row-major order."""
    kept = tuple(d for d in range(x.ndim) if d not in axes)
    return np.transpose(x, kept + axes).reshape(tuple(x.shape[d] for d in kept) + (-1,))


def _kept(x: np.ndarray, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if d in axes else s for d, s in enumerate(x.shape))


def in_order(x: np.ndarray, axes: tuple[int, ...], ufunc: np.ufunc = np.add) -> np.ndarray:
    """``ufunc`` over ``axes`` of float32 ``x`` one term after the other
    (``ufunc.accumulate`` is sequential), the rank kept."""
    lined = _lined(x, axes)
    if lined.shape[-1] == 0:
        return np.full(_kept(x, axes), ufunc.identity, F32)
    return ufunc.accumulate(lined, axis=-1, dtype=F32)[..., -1].reshape(_kept(x, axes))


def _log_sum_exp(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    top = np.max(x, axis=axes, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0).astype(F32)
    return np.log(in_order(np.exp(x - shift), axes)) + shift


_REDUCE: dict[str, Callable[[np.ndarray, tuple[int, ...]], np.ndarray]] = {
    "SUM": in_order,
    "AVERAGE": lambda x, a: in_order(x, a) / F32.type(_lined(x, a).shape[-1]),
    "L1": lambda x, a: in_order(np.abs(x), a),
    "L2": lambda x, a: np.sqrt(in_order(x * x, a)),
    "SUM_SQUARE": lambda x, a: in_order(x * x, a),
    "LOG_SUM": lambda x, a: np.log(in_order(x, a)),
    "LOG_SUM_EXP": _log_sum_exp,
    "MULTIPLY": lambda x, a: in_order(x, a, np.multiply),
}


def _reduce(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> Results:
    sem = spec.semantics
    assert isinstance(sem, Reduction)
    function, axes = function_of(sem, case), tuple(sorted(axes_of(sem, case)))
    if function not in _REDUCE or case.dtype not in _FLOAT32_WORK:
        return reduction.compute(spec, case, buffers)
    x = case.inputs[0].view(buffers[case.inputs[0].name]).astype(F32)
    out = case.outputs[0]
    return {out.name: _REDUCE[function](x, axes).reshape(out.sizes)}


def _softmax(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> Results:
    sem = spec.semantics
    assert isinstance(sem, Softmax)
    if sem.function is Function.HARDMAX or case.dtype not in _FLOAT32_WORK:
        return softmax.compute(spec, case, buffers)
    axes = tuple(sorted(softmax_axes(sem, case)))
    x = case.input(sem.input).view(buffers[sem.input]).astype(F32)
    shifted = x - np.max(x, axis=axes, keepdims=True)
    if sem.function is Function.SOFTMAX:
        tmp = np.exp(shifted)
        return {sem.output: tmp / in_order(tmp, axes)}
    return {sem.output: shifted - np.log(in_order(np.exp(shifted), axes))}


def matmul_in_order(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in float32, each dot product summed over k in index order
    (vectorised over the rows and columns, one step per k)."""
    y = np.zeros(np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1])), F32)
    for k in range(a.shape[-1]):
        y += a[..., :, k:k + 1].astype(F32) * b[..., k:k + 1, :].astype(F32)
    return y


def _gemm(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> Results:
    """`contraction.reference.gemm` with the product summed in order: the
    same scaling, bias and fused activation on the unrounded float32 sum."""
    sem = spec.semantics
    assert isinstance(sem, Contraction)
    if sem.quantized or case.dtype not in _FLOAT32_WORK:
        return contraction.compute(spec, case, buffers)
    ops = operands(sem, case, dict(buffers))
    alpha, beta = scales(sem, case)
    y = matmul_in_order(ops.a, ops.b) * F32.type(alpha)
    if ops.c is not None:
        y += ops.c.astype(F32) * F32.type(beta)
    return {sem.output: _activated(y, activation(sem, case))}


def _activated(y: np.ndarray, fused: Activation | None) -> np.ndarray:
    """``y`` (float32) through a fused activation (None: itself), the element-wise reference's function."""
    if fused is None:
        return y
    return np.asarray(OPS[fused.operator](Call({"InputTensor": y}, dict(fused.attributes), DataType.FLOAT32,
                                               {"OutputTensor": F32})))


def normalized(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], *, one_pass: bool) -> Results:
    """MEAN_VARIANCE_NORMALIZATION1 in float32, the means summed in order:
    the variance as the mean of squared deviations (two passes) or as
    ``E[x^2] - E[x]^2`` clamped at 0 (``one_pass``; UseMean FALSE: no mean,
    the variance ``E[x^2]``); then ``(x - mean) *
    rsqrt(var + eps)`` (a reciprocal root and a product, as GPU kernels),
    the scale, the bias, the fused addend and the fused activation;
    BATCH_NORMALIZATION_TRAINING's mean and variance outputs as computed."""
    sem = spec.semantics
    assert isinstance(sem, Normalization)
    ops = normalization.operands(sem, case, buffers)
    axes = normalization.axes_of(sem, case)
    x = ops.x.astype(F32)
    n = F32.type(normalization.group_count(x.shape, axes))
    centred = normalization.centres(sem, case)
    mean = in_order(x, axes) / n if centred else F32.type(0)
    y = x - mean
    variance = F32.type(0)
    if normalization.divides(sem, case):
        if one_pass or not centred:
            variance = np.maximum(in_order(x * x, axes) / n - mean * mean, F32.type(0))
        else:
            variance = in_order(y * y, axes) / n
        y = y * (F32.type(1) / np.sqrt(variance + F32.type(normalization.epsilon_of(sem, case))))
    if ops.scale is not None:
        y = y * ops.scale.astype(F32)
    for term in (ops.bias, ops.add):
        if term is not None:
            y = y + term.astype(F32)
    y = _activated(y, normalization.activation_of(sem, case))
    if sem.output_mean is None or sem.output_variance is None:
        return {sem.output: y}
    return {sem.output: y, sem.output_mean: mean, sem.output_variance: variance}


class F32OnePass(_Honest):
    """The normalization family's variance in one pass (`normalized`); any other operator is the cpu reference's."""

    def _compute(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> Results:
        return _normalization(spec, case, buffers, one_pass=True)

    def same_as_cpu(self, spec: Spec) -> bool:
        return not isinstance(spec.semantics, Normalization)


def _normalization(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], one_pass: bool = False) -> Results:
    """The mean-variance operators' float32 kernels; LP_NORMALIZATION and FLOAT64 are the cpu reference's."""
    sem = spec.semantics
    if case.dtype not in _FLOAT32_WORK or not isinstance(sem, Normalization) or \
            sem.operation not in ("mean_variance", "batch_training"):
        return compute(spec, case, buffers)
    return normalized(spec, case, buffers, one_pass=one_pass)


_SEQUENTIAL: dict[type, Callable[[Spec, Case, Mapping[str, np.ndarray]], Results]] = {
    Reduction: _reduce, Softmax: _softmax, Contraction: _gemm, Normalization: _normalization,
}

#: The honest implementations the audit measures, by name.
VARIANTS: dict[str, Callable[[], CpuBackend]] = {"cpu": CpuBackend, "f64-once": F64Once,
                                                 "f32-sequential": F32Sequential, "f32-one-pass": F32OnePass}
