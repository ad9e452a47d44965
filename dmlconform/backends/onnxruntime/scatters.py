"""The index-map family's scatters as ONNX nodes for the onnxruntime backend
(issue #34 item 5), merged into `backends.onnxruntime.index_map.MAPPINGS`.

* SCATTER: ``ScatterElements(axis)`` (opset 13: no reduction), the same
  function: the input with each update written where GATHER_ELEMENTS would
  read it, negative indices from the end.
* SCATTER_ND: ``ScatterND`` over the dimensions that count
  (InputDimensionCount, IndicesDimensionCount); ONNX's updates' shape is
  the page's before right alignment.

ScatterElements takes int32 and int64 indices, ScatterND int64 alone;
every other index type is made int64 (every value inside a dimension kept).
An index outside its dimension is an error to ONNX: such a case (outside
the pages' domain, they are silent) is NOT_SUPPORTED with that reason,
never run.  Where several updates write one element ONNX gives no winner
either; its CPU kernels loop over the updates in order (the last wins), a
reading the oracle accepts and reports (``duplicate-index``).
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
from dmlconform.families.index_map.cases import semantics_of
from dmlconform.families.index_map.scatters import last, scatter_call
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 13
NOTE = "one node over the case's static shapes; indices made int64 but ScatterElements' int32; an index outside " \
       "its dimension refused"
MAPPED = {"SCATTER": "ScatterElements", "SCATTER_ND": "ScatterND"}
_NAMES = ("InputTensor", "IndicesTensor", "UpdatesTensor")


@dataclass(frozen=True, slots=True)
class ScatterPlan:
    """One case as one node: its ONNX operator, the shapes of the data, the
    indices and the updates, the index type given, and the session key."""

    op_type: str
    axis: int | None
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    int32: bool
    key: tuple[Any, ...]


def plan(spec: Spec, case: Case) -> ScatterPlan:
    """The node of ``case``; NotSupportedError where an index lies outside its dimension."""
    sem = semantics_of(spec)
    call = scatter_call(sem, case.attribute_map())
    x, idx, upd = (case.input(n or d) for n, d in zip((sem.input, sem.indices, sem.updates), _NAMES))
    values = np.ascontiguousarray(idx.view()).astype(np.float64)
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    if call.nd:
        shapes = (last(x.sizes, call.input_rank), last(idx.sizes, call.indices_rank), ())
        q = shapes[1][-1]
        shapes = (shapes[0], shapes[1], shapes[1][:-1] + shapes[0][q:])
        bounds: Any = np.array(shapes[0][:q], dtype=np.float64)
        values = values.reshape(shapes[1])
    else:
        shapes, bounds = (x.sizes, idx.sizes, upd.sizes), float(x.sizes[call.axis])
    low = -bounds if idx.dtype.is_signed else 0
    if not bool(((values >= low) & (values < bounds)).all()):
        raise NotSupportedError("an index outside its dimension: ONNX Scatter* calls it an error (the scatter pages "
                                "are silent)")
    op = MAPPED[spec.operator]
    int32 = idx.dtype.name == "INT32" and op == "ScatterElements"
    return ScatterPlan(op, None if call.nd else call.axis, shapes, int32,
                       (spec.operator, op, x.dtype.name, int32, shapes, call))


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session, written into the output buffer."""
    sem = semantics_of(spec)
    p = plan(spec, case)
    session = sessions.get(p.key, lambda: model(p, case), p.op_type)
    x, idx, upd = (np.ascontiguousarray(case.input(n or d).view(buffers[n or d])).reshape(s)
                   for n, d, s in zip((sem.input, sem.indices, sem.updates), _NAMES, p.shapes))
    (y,) = session.run(None, {"x": x, "indices": idx.astype(np.int32 if p.int32 else np.int64), "updates": upd})
    write_output(case.outputs[0], buffers, y)


def model(p: ScatterPlan, case: Case) -> Any:
    """The one-node model of ``p``: inputs ``x``, ``indices`` and ``updates``, output ``y``."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional and slow to import

    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.dtype))
    index_type = TensorProto.INT32 if p.int32 else TensorProto.INT64
    inputs = [helper.make_tensor_value_info("x", elem, p.shapes[0]),
              helper.make_tensor_value_info("indices", index_type, p.shapes[1]),
              helper.make_tensor_value_info("updates", elem, p.shapes[2])]
    attributes: dict[str, Any] = {} if p.axis is None else {"axis": p.axis}
    node = helper.make_node(p.op_type, ["x", "indices", "updates"], ["y"], **attributes)
    graph = helper.make_graph([node], case.operator.lower(), inputs, [helper.make_tensor_value_info("y", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (merged into `backends.onnxruntime.index_map.MAPPINGS`).
MAPPINGS: Mapping[str, OnnxMapping] = {
    op: OnnxMapping(t, inputs=_NAMES, attrs=every_attribute, runner=run, check=plan, note=NOTE)
    for op, t in MAPPED.items()}
