"""The CPU reference of the reduction family (REDUCE, ARGMAX, ARGMIN):
plain numpy in the tensor's own type, float32 accumulation for FLOAT16 (as
a GPU does), integers wrapping as they do on GPUs.

Issue #24 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written like the ONNX reference implementation of the Reduce*
and ArgMax/ArgMin operators (``np.sum(x, axis=axes, keepdims=True)``,
LogSumExp with the maximum subtracted): it shares nothing with the oracle
but the shape rules (`families.reduction.cases`: which function, which axes, the
tie rule).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.reduction.cases import axes_of, function_of, last_wins, semantics_of
from dmlconform.spec.model import DataType, Spec, numpy_dtype

#: The type each tensor type computes in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)
    source = case.inputs[0]
    x = source.view(buffers.get(source.name))
    function, axes = function_of(sem, case), tuple(sorted(axes_of(sem, case)))
    out = case.outputs[0]
    if function in ("ARGMAX", "ARGMIN"):
        y = arg(x, axes, function, last=last_wins(sem, case))
    else:
        y = reduce(x.astype(_WORK.get(case.dtype, x.dtype)), axes, function)
    return {out.name: y.astype(numpy_dtype(out.dtype)).reshape(out.sizes)}


def reduce(x: np.ndarray, axes: tuple[int, ...], function: str) -> np.ndarray:
    """``function`` over ``axes`` of ``x`` in x's type (integers wrap), keeping the rank."""
    with np.errstate(all="ignore"):
        return _FUNCTIONS[function](x, axes)


def _log_sum_exp(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """log(sum(exp(x - max))) + max, the maximum of infinite rows left as it is."""
    top = np.max(x, axis=axes, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0).astype(x.dtype)
    return np.log(np.sum(np.exp(x - shift), axis=axes, keepdims=True)) + shift


_FUNCTIONS: dict[str, Callable[[np.ndarray, tuple[int, ...]], np.ndarray]] = {
    "SUM": lambda x, a: np.sum(x, axis=a, keepdims=True, dtype=x.dtype),
    "AVERAGE": lambda x, a: np.mean(x, axis=a, keepdims=True, dtype=x.dtype),
    "L1": lambda x, a: np.sum(np.abs(x), axis=a, keepdims=True, dtype=x.dtype),
    "L2": lambda x, a: np.sqrt(np.sum(x * x, axis=a, keepdims=True, dtype=x.dtype)),
    "SUM_SQUARE": lambda x, a: np.sum(x * x, axis=a, keepdims=True, dtype=x.dtype),
    "LOG_SUM": lambda x, a: np.log(np.sum(x, axis=a, keepdims=True, dtype=x.dtype)),
    "LOG_SUM_EXP": _log_sum_exp,
    "MULTIPLY": lambda x, a: np.prod(x, axis=a, keepdims=True, dtype=x.dtype),
    "MAX": lambda x, a: np.max(x, axis=a, keepdims=True),
    "MIN": lambda x, a: np.min(x, axis=a, keepdims=True),
}


def arg(x: np.ndarray, axes: tuple[int, ...], function: str, *, last: bool) -> np.ndarray:
    """The index of the first (``last``: the last) extreme element over
    ``axes``, row-major over them; a NaN counts as the extreme."""
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    lined = np.transpose(x, kept + axes).reshape(tuple(x.shape[i] for i in kept) + (-1,))
    if last:
        lined = lined[..., ::-1]
    index = np.argmax(lined, axis=-1) if function == "ARGMAX" else np.argmin(lined, axis=-1)
    return (lined.shape[-1] - 1 - index) if last else index
