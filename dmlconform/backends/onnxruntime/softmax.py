"""The softmax family on onnxruntime: Softmax, LogSoftmax and Hardmax at
opset 13, one axis each.

Issue #24 item 5.  ONNX's operators reduce one ``axis``; DirectML's ``1``
versions reduce several jointly.  Where the reduced dimensions are the
trailing ones, contiguous (the older operators' last dimension, or Axes
{k, ..., DimensionCount - 1} in any order), the input is fed as a 2-D
(groups, n) array and the node reduces axis 1; where one axis is reduced
elsewhere, the input keeps its shape and the node reduces that axis;
anything else is NOT_SUPPORTED (ONNX has no one-node equivalent).  The
backend's ``run_batch`` hands each case of these mappings to `run` (the
mapping's ``runner``, `backends.onnxruntime.shaped`), which builds (and caches,
through the backend) a model of the fed rank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.softmax.cases import axes_of, semantics_of
from dmlconform.families.softmax.semantics import Function
from dmlconform.spec.model import Spec

#: The ONNX operator of each function (opset 13: ``axis`` alone, default -1).
OP_TYPES = {Function.SOFTMAX: "Softmax", Function.LOG_SOFTMAX: "LogSoftmax", Function.HARDMAX: "Hardmax"}
OPSET = 13
NOTE = ("one axis (opset 13); several Axes only where they are the trailing dimensions (fed as 2-D), else "
        "NOT_SUPPORTED")


def fed_axis(spec: Spec, case: Case) -> tuple[int, bool]:
    """(the node's axis, whether the input is fed as 2-D groups), or
    NotSupportedError where no one ONNX node reduces the case's axes."""
    sem = semantics_of(spec)
    axes = sorted(axes_of(sem, case))
    rank = len(case.outputs[0].sizes)
    if axes == list(range(rank - len(axes), rank)):
        return 1, True
    if len(axes) == 1:
        return axes[0], False
    raise NotSupportedError(f"{spec.operator}: Axes {','.join(map(str, axes_of(sem, case)))} are neither one axis "
                            f"nor the trailing dimensions of a {rank}-D tensor; ONNX reduces one axis")


#: The spec operators mapped here, by function.
OPERATORS = {op: OP_TYPES[f] for f, ops in ((Function.SOFTMAX, ("ACTIVATION_SOFTMAX", "ACTIVATION_SOFTMAX1")),
                                           (Function.LOG_SOFTMAX, ("ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1")),
                                           (Function.HARDMAX, ("ACTIVATION_HARDMAX", "ACTIVATION_HARDMAX1")))
             for op in ops}


def attrs(a: Any) -> tuple[dict[str, Any], tuple[float | int, ...]]:
    """The mapping's attributes: Axes and AxisCount are read (by `run`, through `fed_axis`), none is passed."""
    for name in ("AxisCount", "Axes"):
        if name in a.values:
            a.raw(name)
    return {}, ()


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through a one-node model (its session from ``sessions``,
    the backend's cache), written into the output buffer."""
    sem = semantics_of(spec)
    axis, flat = fed_axis(spec, case)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    sizes = case.outputs[0].sizes
    n = math.prod(sizes[a] for a in axes_of(sem, case))
    fed = x.reshape(-1, n) if flat else x
    op_type = OP_TYPES[sem.function]
    key = ("softmax-family", op_type, fed.ndim, axis, case.dtype.name)
    session = sessions.get(key, lambda: _model(op_type, fed.ndim, axis, fed.dtype), op_type)
    (y,) = session.run(None, {"x": fed})
    write_output(case.outputs[0], buffers, y)


def _model(op_type: str, rank: int, axis: int, dtype: np.dtype) -> Any:
    """A model of one ``op_type`` node over an input of ``rank`` dimensions of any size."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(dtype)
    shape = [f"d{i}" for i in range(rank)]
    graph = helper.make_graph([helper.make_node(op_type, ["x"], ["y"], axis=axis)], op_type.lower(),
                              [helper.make_tensor_value_info("x", elem, shape)],
                              [helper.make_tensor_value_info("y", elem, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {op: OnnxMapping(t, attrs=attrs, opset=OPSET, integer=False, note=NOTE, runner=run, check=fed_axis)
                                        for op, t in OPERATORS.items()}
