"""The CPU reference of the contraction family (GEMM): plain numpy in the
tensor's own type, float32 accumulation for FLOAT16 (as a GPU does).

Issue #24 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written like the ONNX reference implementation of Gemm
(``np.dot(a, b) * alpha + c * beta``): it shares nothing with the oracle
but the shape rules (`cases.contraction.operands`: which tensor is which
matrix, the transposes, strides).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.contraction import operands, scales, semantics_of
from dmlconform.cases.model import Case, numpy_dtype
from dmlconform.spec.model import DataType, Spec

#: The type each tensor type computes in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)  # the cpu backend dispatches here only for such specs
    ops = operands(sem, case, dict(buffers))
    alpha, beta = scales(sem, case)
    return {sem.output: gemm(ops.a, ops.b, ops.c, alpha, beta, case.dtype)}


def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, alpha: float, beta: float,
         dtype: DataType) -> np.ndarray:
    """``alpha * a @ b + beta * c`` computed in ``dtype``'s working type, rounded once to ``dtype``."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    with np.errstate(all="ignore"):
        y = np.matmul(a.astype(work, copy=False), b.astype(work, copy=False))
        y *= work.type(alpha)
        if c is not None:
            y += c.astype(work, copy=False) * work.type(beta)
    return y.astype(numpy_dtype(dtype), copy=False)
