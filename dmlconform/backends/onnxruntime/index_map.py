"""The index-map family's gathers as ONNX nodes for the onnxruntime backend
(issue #34 item 5): one node over the case's static shapes.

* GATHER: ``Gather(axis)`` with the indices reshaped to the last
  IndexDimensions sizes (the page's meaningful ones); its output, the
  input's sizes split at Axis with those inserted, is the page's before
  right alignment, reshaped to the output's sizes.
* GATHER_ELEMENTS: ``GatherElements(axis)``, the same function.
* GATHER_ND, GATHER_ND1: ``GatherND(batch_dims)`` over the dimensions that
  count (InputDimensionCount, IndicesDimensionCount); ONNX's output shape
  is the page's before right alignment.

ONNX takes int32 and int64 indices (GatherND int64 alone), negative ones
counted from the end as the pages count them; every other index type is
made int64 (every value inside a dimension kept).  An index outside its dimension
is an error to ONNX (the GATHER page: any value, no failure): such a case
is NOT_SUPPORTED with that reason, never run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.index_map.cases import Call, call_of, relevant, semantics_of
from dmlconform.families.index_map.semantics import IndexMap, Operation
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 13
NOTE = "one node over the case's static shapes; unsigned indices made int64; an index outside its dimension refused"
#: The spec operators mapped here -> the ONNX operator.
MAPPED = {"GATHER": "Gather", "GATHER_ELEMENTS": "GatherElements", "GATHER_ND": "GatherND", "GATHER_ND1": "GatherND"}


@dataclass(frozen=True, slots=True)
class GatherPlan:
    """One case as one node: its ONNX operator and attribute, the shapes the
    input and the indices are given in, and the session key."""

    op_type: str
    attribute: tuple[str, int]
    data_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    key: tuple[Any, ...]


def plan(spec: Spec, case: Case) -> GatherPlan:
    """The node of ``case``; NotSupportedError where ONNX cannot run it (an index outside its dimension)."""
    sem = semantics_of(spec)
    call = call_of(sem, case)
    x, idx = case.input(sem.input), case.input(sem.indices)
    _check_indices(sem, case, call)
    if call.operation is Operation.GATHER:
        shapes, attribute = (x.sizes, relevant(idx.sizes, call.index_dimensions)), ("axis", call.axis)
    elif call.operation is Operation.GATHER_ELEMENTS:
        shapes, attribute = (x.sizes, idx.sizes), ("axis", call.axis)
    else:
        shapes = (relevant(x.sizes, call.input_rank), relevant(idx.sizes, call.indices_rank))
        attribute = ("batch_dims", call.batch)
    op = MAPPED[spec.operator]
    types = (x.dtype.name, idx.dtype.name)
    return GatherPlan(op, attribute, shapes[0], shapes[1], (spec.operator, op, types, shapes, attribute))


def _check_indices(sem: IndexMap, case: Case, call: Call) -> None:
    """NotSupportedError where an index lies outside its dimension (ONNX: an error)."""
    x, idx = case.input(sem.input), case.input(sem.indices)
    values = np.ascontiguousarray(idx.view())
    if call.operation is Operation.GATHER_ND:
        data = relevant(x.sizes, call.input_rank)
        sizes = np.array(data[call.batch:call.batch + values.shape[-1]], dtype=np.int64)
    else:
        sizes = np.array(x.sizes[call.axis], dtype=np.int64)
    wide = values.astype(np.float64)
    inside = (wide >= -sizes if values.dtype.kind == "i" else wide >= 0) & (wide < sizes)
    if not inside.all():
        raise NotSupportedError("an index outside its dimension: ONNX Gather* calls it an error, where the GATHER "
                                "page asks for no failure (and the others are silent)")


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session, written into the output buffer."""
    sem = semantics_of(spec)
    p = plan(spec, case)
    session = sessions.get(p.key, lambda: model(p, case), p.op_type)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input])).reshape(p.data_shape)
    idx = np.ascontiguousarray(case.input(sem.indices).view(buffers[sem.indices])).reshape(p.indices_shape)
    if idx.dtype != np.int32 or p.op_type == "GatherND":  # GatherND takes int64 alone
        idx = idx.astype(np.int64)
    (y,) = session.run(None, {"x": x, "indices": idx})
    write_output(case.outputs[0], buffers, y)


def model(p: GatherPlan, case: Case) -> Any:
    """The one-node model of ``p``: inputs ``x`` and ``indices`` (int32, or
    int64 for every other index type), output ``y`` of any shape."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional and slow to import

    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.dtype))
    index_type = TensorProto.INT32 if p.key[2][1] == "INT32" and p.op_type != "GatherND" else TensorProto.INT64
    inputs = [helper.make_tensor_value_info("x", elem, p.data_shape),
              helper.make_tensor_value_info("indices", index_type, p.indices_shape)]
    output = helper.make_tensor_value_info("y", elem, None)
    attribute: dict[str, Any] = {p.attribute[0]: p.attribute[1]}
    node = helper.make_node(p.op_type, ["x", "indices"], ["y"], **attribute)
    graph = helper.make_graph([node], case.operator.lower(), inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {
    op: OnnxMapping(t, inputs=("InputTensor", "IndicesTensor"), attrs=every_attribute, runner=run, check=plan, note=NOTE)
    for op, t in MAPPED.items()}
