"""Planted faults of the contraction family for the ``faulty`` backend
(issue #24 item 7): each recomputes a GEMM (or quantized matrix multiply) output the way a plausible bug
would, after the reference computed it.  `FAULTS` names
them; tests/test_mutants.py checks that each is caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, packed_strides, writable_view
from dmlconform.families.contraction.cases import Operands, activation, operands, scales, semantics_of, transposed
from dmlconform.families.contraction.cases_integer import QuantizedOperands, quantized_operands
from dmlconform.families.contraction.reference import gemm, quantized
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.spec import model as m


def _contraction(spec: m.Spec) -> Contraction | None:
    """``spec``'s contraction semantics (None: a fault here leaves it alone)."""
    return spec.semantics if isinstance(spec.semantics, Contraction) else None


def _write(spec: m.Spec, case: Case, buffers: Buffers, ops: Operands) -> None:
    """``ops`` computed by the reference and written into the output."""
    sem = semantics_of(spec)
    out = next(t for t in case.outputs if t.name == sem.output)
    alpha, beta = scales(sem, case)
    buf = buffers[out.name]
    view = writable_view(out, buf)
    view[...] = gemm(ops.a, ops.b, ops.c, alpha, beta, case.dtype, activation(sem, case))


def dropped_term(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """The last of the K products left out of every sum (a loop bound off by one)."""
    sem = _contraction(spec)
    if sem is not None:
        ops = operands(sem, case, dict(buffers))
        _write(spec, case, buffers, Operands(ops.a[..., :-1], ops.b[..., :-1, :], ops.c))


def c_strides_ignored(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """CTensor read as if packed, whatever its strides: a broadcast C read as
    a full matrix, past its buffer's end (where this reads zeros)."""
    sem = _contraction(spec)
    c = next((t for t in case.inputs if sem is not None and t.name == sem.c), None)
    if sem is None or c is None or c.strides == packed_strides(c.sizes):
        return
    ops = operands(sem, case, dict(buffers))
    flat = np.zeros(int(np.prod(c.sizes)), buffers[c.name].dtype)
    held = buffers[c.name][:flat.size]
    flat[:held.size] = held
    _write(spec, case, buffers, Operands(ops.a, ops.b, flat.reshape(c.sizes)))


def transa_ignored(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """TransA ignored: A's memory read as an M x K matrix although it holds K x M."""
    sem = _contraction(spec)
    if sem is None or not transposed(case, sem.a.transform):
        return
    ops = operands(sem, case, dict(buffers))
    stored = np.ascontiguousarray(np.swapaxes(ops.a, -1, -2))  # A as the buffer holds it, K x M
    _write(spec, case, buffers, Operands(stored.reshape(ops.a.shape), ops.b, ops.c))


def float16_accumulation(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """FLOAT16 products summed in FLOAT16, one term at a time, while the backend declares float32."""
    sem = _contraction(spec)
    if sem is None or case.dtype is not m.DataType.FLOAT16 or activation(sem, case) is not None:
        return
    ops = operands(sem, case, dict(buffers))
    alpha, beta = scales(sem, case)
    half = np.float16
    total = np.zeros(np.broadcast_shapes(ops.a.shape[:-1] + (1,), ops.b.shape[:-2] + (1, ops.b.shape[-1])), half)
    for k in range(ops.a.shape[-1]):
        total = (total + ops.a[..., :, k:k + 1] * ops.b[..., k:k + 1, :]).astype(half)
    total = (total * half(alpha)).astype(half)
    if ops.c is not None:
        total = (total + ops.c * half(beta)).astype(half)
    out = next(t for t in case.outputs if t.name == sem.output)
    buf = buffers[out.name]
    writable_view(out, buf)[...] = total


def _requantized(spec: m.Spec, case: Case, buffers: Buffers,
                 change: Callable[[QuantizedOperands], QuantizedOperands]) -> None:
    """A quantized contraction's output recomputed by the reference from ``change(operands)``."""
    sem = _contraction(spec)
    if sem is None or not sem.quantized:
        return
    q = change(quantized_operands(sem, case, dict(buffers)))
    out = next(t for t in case.outputs if t.name == sem.output)
    buf = buffers[out.name]
    view = writable_view(out, buf)
    view[...] = quantized(q, out.dtype)


def zero_point_ignored(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """MATRIX_MULTIPLY_INTEGER(_TO_FLOAT) without subtracting the zero points."""
    _requantized(spec, case, buffers, lambda q: replace(q, a_zero=None, b_zero=None))


def narrow_difference(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """A - AZeroPoint computed in A's own 8-bit type (wrapping: 0 - 255 gives 1 in UINT8)."""
    def narrow(q: QuantizedOperands) -> QuantizedOperands:
        if q.a_zero is None or q.a.dtype.itemsize != 1:
            return q
        with np.errstate(over="ignore"):
            return replace(q, a=(q.a - q.a_zero).astype(q.a.dtype), a_zero=None)
    _requantized(spec, case, buffers, narrow)


def bias_ignored(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """MATRIX_MULTIPLY_INTEGER_TO_FLOAT without its BiasTensor."""
    _requantized(spec, case, buffers, lambda q: replace(q, bias=None))


def _toward_zero(x: np.ndarray) -> np.ndarray:
    """float64 values rounded to float32 toward zero (truncated)."""
    y = x.astype(np.float32)
    over = np.abs(y.astype(np.float64)) > np.abs(x)
    y[over] = np.nextafter(y[over], np.float32(0))
    return y


def truncated_sum(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """FLOAT32 GEMM whose every partial sum is truncated instead of rounded
    to nearest: each element stays within its bound, the errors all shrink
    magnitudes (the whole-tensor bias check warns of it)."""
    sem = _contraction(spec)
    if sem is None or sem.quantized or case.dtype is not m.DataType.FLOAT32:
        return
    ops = operands(sem, case, dict(buffers))
    alpha, beta = scales(sem, case)
    shape = np.broadcast_shapes(ops.a.shape[:-1] + (1,), ops.b.shape[:-2] + (1, ops.b.shape[-1]))
    total = np.zeros(shape, np.float32)
    with np.errstate(all="ignore"):
        for k in range(ops.a.shape[-1]):
            products = ops.a[..., :, k:k + 1].astype(np.float64) * ops.b[..., k:k + 1, :].astype(np.float64)
            total = _toward_zero(total.astype(np.float64) + products)
        total = _toward_zero(total.astype(np.float64) * alpha)
        if ops.c is not None:
            total = _toward_zero(total.astype(np.float64) + ops.c.astype(np.float64) * beta)
    out = next(t for t in case.outputs if t.name == sem.output)
    buf = buffers[out.name]
    writable_view(out, buf)[...] = total


def activation_before_addend(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """FusedActivation applied to Alpha * A x B before Beta * C is added (instead of after)."""
    sem = _contraction(spec)
    fused = activation(sem, case) if sem is not None else None
    if sem is None or fused is None:
        return
    ops = operands(sem, case, dict(buffers))
    alpha, beta = scales(sem, case)
    y = gemm(ops.a, ops.b, None, alpha, beta, case.dtype, fused).astype(np.float32)
    if ops.c is not None:
        y += ops.c.astype(np.float32) * np.float32(beta)
    out = next(t for t in case.outputs if t.name == sem.output)
    buf = buffers[out.name]
    writable_view(out, buf)[...] = y


def to_tf32(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to TF32 (10 explicit significand bits, to
    nearest, ties to even), as tensor cores read FLOAT32 operands with TF32
    on; NaN and infinities as they are."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    rounded = ((bits + np.uint32(0x0FFF) + ((bits >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000))
    return np.where(np.isfinite(x), rounded.view(np.float32), x)


def tf32_products(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """FLOAT32 GEMM with TF32 products (``allow_tf32`` on a GPU): A and B
    rounded to TF32 before the product, float32 accumulation, while the
    backend claims float32."""
    sem = _contraction(spec)
    if sem is None or sem.quantized or case.dtype is not m.DataType.FLOAT32:
        return
    ops = operands(sem, case, dict(buffers))
    _write(spec, case, buffers, Operands(to_tf32(ops.a), to_tf32(ops.b), ops.c))


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "gemm-dropped-term": dropped_term,
    "gemm-c-strides-ignored": c_strides_ignored,
    "gemm-transa-ignored": transa_ignored,
    "gemm-float16-accumulation": float16_accumulation,
    "gemm-truncated-sum": truncated_sum,
    "gemm-activation-before-addend": activation_before_addend,
    "gemm-tf32": tf32_products,
    "mmi-zero-point-ignored": zero_point_ignored,
    "mmi-narrow-difference": narrow_difference,
    "mmi-bias-ignored": bias_ignored,
}
