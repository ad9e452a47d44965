"""The index-map family's depth/space moves as ONNX nodes for the
onnxruntime backend (issue #34 item 5), merged into
`backends.onnxruntime.index_map.MAPPINGS`.

* DEPTH_TO_SPACE, DEPTH_TO_SPACE1: ``DepthToSpace`` (opset 13) with
  ``blocksize`` and ``mode`` DCR or CRD, the pages' orders by the same names.
* SPACE_TO_DEPTH, SPACE_TO_DEPTH1: ``SpaceToDepth`` (opset 13), which has
  DCR alone: a CRD case is NOT_SUPPORTED.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.index_map.blocks import BlockCall, block_call
from dmlconform.families.index_map.cases import semantics_of
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 13
NOTE = "DepthToSpace (DCR, CRD), SpaceToDepth (DCR alone: CRD refused)"


def plan(spec: Spec, case: Case) -> BlockCall:
    """The call of ``case``; NotSupportedError where ONNX has no such node (SpaceToDepth's CRD)."""
    call = block_call(semantics_of(spec), case.attribute_map())
    if not call.to_space and call.order == "CRD":
        raise NotSupportedError("Order COLUMN_ROW_DEPTH: ONNX SpaceToDepth has the DCR order alone")
    return call


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session, written into the output buffer."""
    sem = semantics_of(spec)
    call = plan(spec, case)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    op = "DepthToSpace" if call.to_space else "SpaceToDepth"
    key = (spec.operator, op, case.dtype.name, x.shape, call)
    (y,) = sessions.get(key, lambda: model(op, call, case, x.shape), op).run(None, {"x": x})
    write_output(case.outputs[0], buffers, y)


def model(op: str, call: BlockCall, case: Case, shape: tuple[int, ...]) -> Any:
    """The one-node model: input ``x`` of ``shape``, output ``y``."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional and slow to import

    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.dtype))
    attributes: dict[str, Any] = {"blocksize": call.block}
    if call.to_space:
        attributes["mode"] = call.order
    node = helper.make_node(op, ["x"], ["y"], **attributes)
    graph = helper.make_graph([node], case.operator.lower(), [helper.make_tensor_value_info("x", elem, shape)],
                              [helper.make_tensor_value_info("y", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (merged into `backends.onnxruntime.index_map.MAPPINGS`).
MAPPINGS: Mapping[str, OnnxMapping] = {
    op: OnnxMapping(op_type, inputs=("InputTensor",), attrs=every_attribute, runner=run, check=plan, note=NOTE)
    for op, op_type in (("DEPTH_TO_SPACE", "DepthToSpace"), ("DEPTH_TO_SPACE1", "DepthToSpace"),
                        ("SPACE_TO_DEPTH", "SpaceToDepth"), ("SPACE_TO_DEPTH1", "SpaceToDepth"))}
