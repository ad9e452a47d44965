"""onnxruntime mappings of the reduction family (REDUCE, ARGMAX, ARGMIN):
one shaped node per case (issue #24 item 5; docs/reduction.md).

The element-wise mappings of `backends.onnxruntime.backend` flatten every
tensor to 1-D; a reduction needs the input's shape and its axes, so each
case here gets a model of its own shapes (the mapping's ``runner``: `run`,
`backends.onnxruntime.shaped`),
cached per (operator, types, shape, axes, attributes) in the backend's
session cache.  Where ONNX means what the doc means the case
runs: ``Reduce*`` (opset 18: axes as an input, ``keepdims=1``,
``noop_with_empty_axes=1``, the doc's ``AxisCount`` 0 read as the identity),
``ArgMax``/``ArgMin`` (``keepdims=1``, ``select_last_index`` for
``DECREASING``; one axis: several reduced axes map only where all but one
have length 1).  Everything else raises `NotSupportedError` with why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.reduction.cases import axes_of, function_of, last_wins
from dmlconform.families.reduction.semantics import ARG_FUNCTIONS, Reduction
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 18
#: The spec operators mapped here, with the ONNX operator the backend's table names (REDUCE's stands for
#: its family: each function has its own node, `OPERATORS`, which onnxruntime's own errors name).
MAPPED = {"REDUCE": "ReduceSum", "ARGMAX": "ArgMax", "ARGMIN": "ArgMin"}
NOTE = ("a model of the case's shapes; Reduce* at opset 18 (keepdims=1, noop_with_empty_axes=1), ArgMax/ArgMin "
        "with select_last_index after a Transpose and Reshape merging the reduced axes")
#: DML_REDUCE_FUNCTION -> the ONNX operator that computes it.
OPERATORS = {"SUM": "ReduceSum", "AVERAGE": "ReduceMean", "L1": "ReduceL1", "L2": "ReduceL2",
             "LOG_SUM": "ReduceLogSum", "LOG_SUM_EXP": "ReduceLogSumExp", "MAX": "ReduceMax", "MIN": "ReduceMin",
             "MULTIPLY": "ReduceProd", "SUM_SQUARE": "ReduceSumSquare", "ARGMAX": "ArgMax", "ARGMIN": "ArgMin"}


@dataclass(frozen=True, slots=True)
class ReducePlan:
    """One case as an ONNX node: its operator, attributes, the reduced axes
    and the session key."""

    op_type: str
    attrs: tuple[tuple[str, int], ...]
    axes: tuple[int, ...] | None
    key: tuple[Any, ...]


def plan(spec: Spec, case: Case) -> ReducePlan:
    """The node of ``case``, or NotSupportedError saying why ONNX has none."""
    sem = spec.semantics
    if not isinstance(sem, Reduction):
        raise NotSupportedError(f"{spec.operator}: no reduction semantics")
    function, axes = function_of(sem, case), tuple(sorted(axes_of(sem, case)))
    op_type = OPERATORS.get(function)
    if op_type is None:
        raise NotSupportedError(f"{spec.operator}: no ONNX operator computes {function}")
    sizes = case.inputs[0].sizes
    if function in ARG_FUNCTIONS:
        if not axes:
            raise NotSupportedError(f"ONNX {op_type} reduces one axis; Axes is empty")
        attrs: tuple[tuple[str, int], ...] = (("axis", -1), ("keepdims", 1),
                                              ("select_last_index", int(last_wins(sem, case))))
        found = ReducePlan(op_type, attrs, axes, ())
    else:
        found = ReducePlan(op_type, (("keepdims", 1), ("noop_with_empty_axes", 1)), axes, ())
    types = (case.inputs[0].dtype.name, case.outputs[0].dtype.name)
    return ReducePlan(found.op_type, found.attrs, found.axes, (op_type, types, sizes, found.axes, found.attrs))


def model(p: ReducePlan, case: Case) -> Any:
    """The model of ``p``: input ``x`` of the case's sizes, output ``y``.
    Reduce*: one node, the axes an int64 initializer.  ArgMax/ArgMin reduce
    one axis: the reduced axes are transposed to the end and merged into
    one (row-major in increasing axis order, as the doc's Example 3
    counts) before the node; its int64 indices are the output's."""
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415 - optional and slow to import

    x_type = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.inputs[0].dtype))
    axes, attrs = p.axes or (), dict[str, Any](p.attrs)
    if p.op_type in ("ArgMax", "ArgMin"):
        sizes = case.inputs[0].sizes
        kept = [i for i in range(len(sizes)) if i not in axes]
        merged = np.array([sizes[i] for i in kept] + [-1], dtype=np.int64)
        nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=kept + list(axes)),
                 helper.make_node("Reshape", ["t", "merged"], ["r"]),
                 helper.make_node(p.op_type, ["r"], ["y"], **attrs)]
        initializers, y_type = [numpy_helper.from_array(merged, "merged")], TensorProto.INT64
    else:
        nodes = [helper.make_node(p.op_type, ["x", "axes"], ["y"], **attrs)]
        initializers, y_type = [numpy_helper.from_array(np.array(axes, dtype=np.int64), "axes")], x_type
    graph = helper.make_graph(nodes, case.operator.lower(),
                              [helper.make_tensor_value_info("x", x_type, list(case.inputs[0].sizes))],
                              [helper.make_tensor_value_info("y", y_type, None)], initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its model (its session from ``sessions``, the
    backend's cache), the result written through the output's strides."""
    p = plan(spec, case)
    session = sessions.get(p.key, lambda: model(p, case), p.op_type)
    source, out = case.inputs[0], case.outputs[0]
    x = np.ascontiguousarray(source.view(buffers[source.name]))
    (y,) = session.run(None, {"x": x})
    if y.size != math.prod(out.sizes):
        raise NotSupportedError(f"onnxruntime gave {y.size} elements for an output of {math.prod(out.sizes)}")
    write_output(out, buffers, y)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {op: OnnxMapping(t, attrs=every_attribute, runner=run, check=plan, note=NOTE)
                                        for op, t in MAPPED.items()}
