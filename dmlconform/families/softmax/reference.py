"""The CPU reference of the softmax family: plain numpy in the tensor's own
type, float32 for FLOAT16 (as a GPU does), rounded once at the end.

Issue #24 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written like the ONNX reference implementations of Softmax,
LogSoftmax and Hardmax (the maximum subtracted, ``np.argmax`` for the first
maximum); it shares nothing with the oracle but the shape rule
(`families.softmax.cases.axes_of`: which dimensions a case reduces).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.softmax.cases import axes_of, semantics_of
from dmlconform.families.softmax.semantics import Function
from dmlconform.spec.model import DataType, Spec, numpy_dtype

#: The type each tensor type computes in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)  # the cpu backend dispatches here only for such specs
    tensor = case.input(sem.input)
    x = tensor.view(buffers.get(sem.input))
    work = _WORK.get(case.dtype, numpy_dtype(case.dtype))
    axes = tuple(sorted(axes_of(sem, case)))
    with np.errstate(all="ignore"):
        y = FUNCTIONS[sem.function](x.astype(work), axes)
    return {sem.output: y.astype(numpy_dtype(case.outputs[0].dtype))}


def softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) over ``axes``."""
    tmp = np.exp(x - np.max(x, axis=axes, keepdims=True))
    return tmp / np.sum(tmp, axis=axes, keepdims=True)


def log_softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """x - max - log(sum(exp(x - max))) over ``axes``."""
    shifted = x - np.max(x, axis=axes, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axes, keepdims=True))


def hardmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """1 at the first largest element over ``axes`` (row-major over them), 0 elsewhere."""
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + list(axes))
    rows = moved.reshape(-1, int(np.prod([x.shape[a] for a in axes])))
    out = np.zeros_like(rows)
    out[np.arange(rows.shape[0]), np.argmax(rows, axis=1)] = 1
    return np.transpose(out.reshape(moved.shape), np.argsort(kept + list(axes)))


FUNCTIONS = {Function.SOFTMAX: softmax, Function.LOG_SOFTMAX: log_softmax, Function.HARDMAX: hardmax}
