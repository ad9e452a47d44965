"""The CPU reference of VALUE_SCALE_2D: plain numpy in the tensor's own
type, float32 for FLOAT16 (as a GPU does), rounded once at the end.

Issue #24 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written like the ONNX reference of the ImageScaler operator it
mirrors (``x * scale + bias.reshape(1, C, 1, 1)``); it shares nothing with
the oracle but the shape rule (`families.value_scale.cases.operands`: Scale, Bias
and the channel dimension of a case).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.value_scale.cases import operands, semantics_of
from dmlconform.spec.model import DataType, Spec, numpy_dtype

#: The type each tensor type computes in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)  # the cpu backend dispatches here only for such specs
    ops = operands(sem, case)
    x = case.input(sem.input).view(buffers.get(sem.input))
    work = _WORK.get(case.dtype, numpy_dtype(case.dtype))
    shape = [1] * x.ndim
    shape[ops.axis] = ops.bias.size
    with np.errstate(all="ignore"):
        y = x.astype(work) * work.type(ops.scale) + ops.bias.astype(work).reshape(shape)
        return {sem.output: y.astype(numpy_dtype(case.outputs[0].dtype))}
