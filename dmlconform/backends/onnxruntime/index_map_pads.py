"""The index-map family's paddings as ONNX nodes for the onnxruntime backend
(issue #34 item 5), merged into `backends.onnxruntime.index_map.MAPPINGS`.

* PADDING, PADDING1: ``Pad`` (opset 13) with the paddings, starts then
  ends, and the constant as inputs.  CONSTANT is ``constant`` with the
  constant in the tensor's type (PADDING's FLOAT converted as the desc
  would be: float32, then truncated toward zero for an integer type, so
  onnxruntime is not what is tested on that conversion); EDGE is ``edge``;
  REFLECTION is ``reflect``, which reflects once: a padding as large as the
  dimension or larger (the page folds it again and again) is
  NOT_SUPPORTED, and so is SYMMETRIC, which ONNX has no mode for.
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
from dmlconform.families.index_map.moves import constant
from dmlconform.families.index_map.pads import pad_call
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 13
NOTE = "Pad (constant, edge, reflect); SYMMETRIC and a reflection folded more than once refused"
_MODES = {"CONSTANT": "constant", "EDGE": "edge", "REFLECTION": "reflect"}


@dataclass(frozen=True, slots=True)
class PadPlan:
    """One case as one Pad node: the ONNX mode, the pads input, the constant, the session key."""

    mode: str
    pads: tuple[int, ...]
    value: Any
    key: tuple[Any, ...]


def plan(spec: Spec, case: Case) -> PadPlan:
    """The Pad node of ``case``; NotSupportedError where ONNX has no mode for it."""
    sem = semantics_of(spec)
    call = pad_call(sem, case.attribute_map())
    x = case.input(sem.input)
    if call.mode not in _MODES:
        raise NotSupportedError(f"PaddingMode {call.mode}: ONNX Pad has no mode that repeats the edge in a mirror")
    if call.mode == "REFLECTION" and any(max(s, e) >= n for n, s, e in zip(x.sizes, call.start, call.end)):
        raise NotSupportedError("a REFLECTION padding as large as its dimension or larger: ONNX Pad's reflect "
                                "reflects once, where the page folds again")
    pads = call.start + call.end
    value = constant(call, x.dtype)
    return PadPlan(_MODES[call.mode], pads, value, (spec.operator, "Pad", x.dtype.name, x.sizes, _MODES[call.mode]))


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its Pad session, written into the output buffer."""
    sem = semantics_of(spec)
    p = plan(spec, case)
    session = sessions.get(p.key, lambda: model(p, case), "Pad")
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    (y,) = session.run(None, {"x": x, "pads": np.array(p.pads, dtype=np.int64), "value": p.value})
    write_output(case.outputs[0], buffers, y)


def model(p: PadPlan, case: Case) -> Any:
    """The one-node model of ``p``: inputs ``x``, ``pads`` and ``value`` (the tensor's type), output ``y``."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional and slow to import

    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.dtype))
    rank = len(case.inputs[0].sizes)
    inputs = [helper.make_tensor_value_info("x", elem, case.inputs[0].sizes),
              helper.make_tensor_value_info("pads", TensorProto.INT64, [2 * rank]),
              helper.make_tensor_value_info("value", elem, [])]
    node = helper.make_node("Pad", ["x", "pads", "value"], ["y"], mode=p.mode)
    graph = helper.make_graph([node], case.operator.lower(), inputs, [helper.make_tensor_value_info("y", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (merged into `backends.onnxruntime.index_map.MAPPINGS`).
MAPPINGS: Mapping[str, OnnxMapping] = {
    op: OnnxMapping("Pad", inputs=("InputTensor",), attrs=every_attribute, runner=run, check=plan, note=NOTE)
    for op in ("PADDING", "PADDING1")}
