"""JOIN and SPLIT as ONNX nodes for the onnxruntime backend (issue #34 item
5), merged into `backends.onnxruntime.index_map.MAPPINGS`.

* JOIN: ``Concat`` (opset 13) of the inputs ``x0``, ``x1``, ... in the
  array's order along ``axis``.
* SPLIT: ``Split`` (opset 13) of ``x`` along ``axis`` with the outputs'
  sizes on it as the ``split`` input, one output per tensor of the array.

A case's array tensors are ``InputTensors[k]`` / ``OutputTensors[k]``
(`spec.model.element_name`), bound in index order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case, array_tensors
from dmlconform.families.index_map.cases import semantics_of
from dmlconform.families.index_map.joins import JoinCall, array_name, join_call, join_problem
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 13
NOTE = "Concat (JOIN), Split with the outputs' sizes (SPLIT)"


def plan(spec: Spec, case: Case) -> JoinCall:
    """The call of ``case``; NotSupportedError where its sizes are no join (no node expresses it)."""
    call = join_call(semantics_of(spec), case)
    problem = join_problem(call)
    if problem is not None:
        raise NotSupportedError(problem)
    return call


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session, written into the output buffers."""
    sem = semantics_of(spec)
    call = plan(spec, case)
    op = "Concat" if call.join else "Split"
    key = (spec.operator, op, case.dtype.name, call)
    session = sessions.get(key, lambda: model(op, call, case), op)
    if call.join:
        feeds = {f"x{k}": np.ascontiguousarray(t.view(buffers[t.name]))
                 for k, t in enumerate(array_tensors(case.inputs, array_name(sem)))}
        (y,) = session.run(None, feeds)
        write_output(case.outputs[0], buffers, y)
        return
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    ys = session.run(None, {"x": x, "split": np.array([p[call.axis] for p in call.parts], dtype=np.int64)})
    for t, y in zip(array_tensors(case.outputs, array_name(sem)), ys):
        write_output(t, buffers, y)


def model(op: str, call: JoinCall, case: Case) -> Any:
    """The one-node model: Concat of ``x0``.. into ``y``, or Split of ``x`` into ``y0``.."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional and slow to import

    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.dtype))
    names = [f"{'x' if call.join else 'y'}{k}" for k in range(len(call.parts))]
    parts = [helper.make_tensor_value_info(n, elem, p) for n, p in zip(names, call.parts)]
    whole = helper.make_tensor_value_info("y" if call.join else "x", elem, call.whole)
    if call.join:
        node = helper.make_node(op, names, ["y"], axis=call.axis)
        inputs, outputs = parts, [whole]
    else:
        node = helper.make_node(op, ["x", "split"], names, axis=call.axis)
        inputs = [whole, helper.make_tensor_value_info("split", TensorProto.INT64, [len(names)])]
        outputs = parts
    graph = helper.make_graph([node], case.operator.lower(), inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (merged into `backends.onnxruntime.index_map.MAPPINGS`).
MAPPINGS: Mapping[str, OnnxMapping] = {
    "JOIN": OnnxMapping("Concat", inputs=("InputTensors",), attrs=every_attribute, runner=run, check=plan, note=NOTE),
    "SPLIT": OnnxMapping("Split", inputs=("InputTensor",), attrs=every_attribute, runner=run, check=plan, note=NOTE),
}
