"""VALUE_SCALE_2D on onnxruntime: ``Add(Mul(x, scale), bias)``, two nodes.

Issue #24 item 5.  ONNX's ImageScaler (``scale * x + bias`` per channel)
was removed from the standard (opset 10 deprecated it); the same function
is a Mul by a 0-d scale and an Add of a (1, C, 1, 1) bias, both graph
inputs in the tensor's type (FLOAT16 tensors get Scale and Bias rounded to
FLOAT16: the ``float16-working-type`` reading), each node rounding once
(the ``separate`` reading).  One session per data type and rank serves
every case; the backend's ``run_batch`` hands each case to `run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.value_scale.cases import operands, semantics_of
from dmlconform.spec.model import Spec

OPSET = 13
NOTE = "Mul by Scale then Add of Bias (1, C, 1, 1): two nodes, ImageScaler being removed from ONNX"
#: The spec operator mapped here -> its last node (`OnnxMapping.op_type` names one ONNX operator; NOTE says Mul+Add).
OPERATORS = {"VALUE_SCALE_2D": "Add"}


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through the two-node model, written into the output buffer."""
    sem = semantics_of(spec)
    ops = operands(sem, case)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    shape = [1] * x.ndim
    shape[ops.axis] = ops.bias.size
    session = sessions.get(("value-scale", x.ndim, case.dtype.name), lambda: _model(x.ndim, x.dtype), "Mul+Add")
    (y,) = session.run(None, {"x": x, "scale": np.array(ops.scale, dtype=x.dtype),
                              "bias": ops.bias.astype(x.dtype).reshape(shape)})
    write_output(case.outputs[0], buffers, y)


def _model(rank: int, dtype: np.dtype) -> Any:
    """``y = x * scale + bias`` over an input of ``rank`` dimensions of any size."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(dtype)
    shape = [f"d{i}" for i in range(rank)]
    nodes = [helper.make_node("Mul", ["x", "scale"], ["scaled"]), helper.make_node("Add", ["scaled", "bias"], ["y"])]
    graph = helper.make_graph(nodes, "value_scale_2d",
                              [helper.make_tensor_value_info("x", elem, shape),
                               helper.make_tensor_value_info("scale", elem, []),
                               helper.make_tensor_value_info("bias", elem, [f"b{i}" for i in range(rank)])],
                              [helper.make_tensor_value_info("y", elem, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {op: OnnxMapping(t, attrs=every_attribute, integer=False, runner=run, note=NOTE)
                                        for op, t in OPERATORS.items()}
