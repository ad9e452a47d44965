"""The CPU reference of the contraction family (GEMM, and the quantized
MATRIX_MULTIPLY_INTEGER and _TO_FLOAT): plain numpy in the tensor's own
type, float32 accumulation for FLOAT16 (as a GPU does).

Issue #24 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written like the ONNX reference implementation of Gemm
(``np.dot(a, b) * alpha + c * beta``): it shares nothing with the oracle
but the shape rules (`families.contraction.cases.operands`: which tensor is which
matrix, the transposes, strides).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.contraction.cases import Activation, activation, operands, scales, semantics_of
from dmlconform.families.contraction.cases_integer import QuantizedOperands, quantized_operands
from dmlconform.families.elementwise.reference import OPS, Call
from dmlconform.spec.model import DataType, Spec, numpy_dtype

#: The type each tensor type computes in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)  # the cpu backend dispatches here only for such specs
    if sem.quantized:
        return {sem.output: quantized(quantized_operands(sem, case, dict(buffers)), case.outputs[0].dtype)}
    ops = operands(sem, case, dict(buffers))
    alpha, beta = scales(sem, case)
    return {sem.output: gemm(ops.a, ops.b, ops.c, alpha, beta, case.dtype, activation(sem, case))}


def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, alpha: float, beta: float,
         dtype: DataType, fused: Activation | None = None) -> np.ndarray:
    """``activation(alpha * a @ b + beta * c)`` computed in ``dtype``'s working
    type, rounded once to ``dtype``: the activation (the CPU reference's own
    element-wise function, `cpu_ops`) reads the unrounded sum, the primary
    reading of ``fused-activation-rounding``."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    with np.errstate(all="ignore"):
        y = np.matmul(a.astype(work, copy=False), b.astype(work, copy=False))
        y *= work.type(alpha)
        if c is not None:
            y += c.astype(work, copy=False) * work.type(beta)
        if fused is not None:
            y = activate(y, fused, work)
    return y.astype(numpy_dtype(dtype), copy=False)


def activate(y: np.ndarray, fused: Activation, work: np.dtype) -> np.ndarray:
    """``fused`` applied to ``y`` in the working type ``work`` by the CPU
    reference's own element-wise function (`families.elementwise.reference`):
    what GEMM's and CONVOLUTION's references do with a FusedActivation."""
    work_type = DataType.FLOAT64 if work == np.float64 else DataType.FLOAT32
    return np.asarray(OPS[fused.operator](Call({"InputTensor": y}, dict(fused.attributes), work_type,
                                               {"OutputTensor": work})))


def quantized(q: QuantizedOperands, out: DataType) -> np.ndarray:
    """MATRIX_MULTIPLY_INTEGER as ONNX's reference MatMulInteger computes it
    (the differences and their products summed in INT32, wrapping), and the
    _TO_FLOAT variant as ONNX Runtime's MatMulIntegerToFloat reads it: each
    operand dequantized to float32 ((A - AZeroPoint) * AScale), a float32
    matmul, Bias added, rounded once to the output type."""
    wide = np.dtype(np.int32 if not out.is_float else np.int64)  # 32-bit operands' differences need 33 bits

    def shifted(x: np.ndarray, zero: np.ndarray | None) -> np.ndarray:
        return np.subtract(x.astype(wide), zero.astype(wide) if zero is not None else 0, dtype=wide)

    a, b = shifted(q.a, q.a_zero), shifted(q.b, q.b_zero)
    if not out.is_float:
        with np.errstate(over="ignore"):
            return np.matmul(a, b).astype(numpy_dtype(out))
    f32 = np.float32
    a_scale = q.a_scale.astype(f32) if q.a_scale is not None else f32(1)
    b_scale = q.b_scale.astype(f32) if q.b_scale is not None else f32(1)
    with np.errstate(all="ignore"):
        y = np.matmul(a.astype(f32) * a_scale, b.astype(f32) * b_scale)
        if q.bias is not None:
            y += q.bias.astype(f32)
    return y.astype(numpy_dtype(out), copy=False)
