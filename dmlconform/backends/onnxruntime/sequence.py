"""The sequence family's operators as ONNX nodes for the onnxruntime backend
(issue #24 item 5).  These need what the element-wise mappings lack (their
models are flat and one-output): the tensor's shape, the axis, and for
TOP_K two outputs.  So each case is one node over its own static shapes:

* TOP_K, TOP_K1: ``TopK`` (opset 11+, ``largest`` from AxisDirection,
  ``sorted=1``); ONNX orders ties by index ("the element with the lower
  index will appear first") as the doc does.  Its int64 indices are cast to
  the doc's index type.
* CUMULATIVE_SUMMATION: ``CumSum`` (``exclusive``, ``reverse`` for
  DECREASING, the axis an int64 input).
* CUMULATIVE_PRODUCT: ``CumProd`` (opset 26), the same way: ``exclusive``
  is the doc's HasExclusiveProduct (the first tally 1), ``reverse`` its
  DECREASING (with both, out[i] = product of x[j], j > i, as the doc).
  Its node alone is at opset 26 (`OPSETS`); an onnx package older than
  that opset makes its cases NOT_SUPPORTED, with the versions.  onnxruntime
  1.32.0 implements it on every type of the 6_4 table (FLOAT32, FLOAT16,
  INT32, UINT32, INT64, UINT64) and FLOAT64.

`OnnxRuntimeBackend` maps these operators (`MAPPED`) like any other, with
`plan` as the mapping's ``check`` and `run` as its ``runner``
(`backends.onnxruntime.shaped`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.sequence.semantics import INCREASING
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 18
#: The ONNX operators newer than `OPSET`, at the opset that brought them.
OPSETS = {"CumProd": 26}
#: The spec operators mapped here: (the ONNX operator, the outputs its node gives).
MAPPED = {"TOP_K": ("TopK", 2), "TOP_K1": ("TopK", 2), "CUMULATIVE_SUMMATION": ("CumSum", 1),
          "CUMULATIVE_PRODUCT": ("CumProd", 1)}
NOTE = "a node over the case's static shapes; TopK's int64 indices cast to the doc's index type"


@dataclass(frozen=True, slots=True)
class ShapedPlan:
    """One case as one ONNX node: its type, attributes, constant inputs
    (name -> array, after the tensor input) and the session key."""

    op_type: str
    attrs: tuple[tuple[str, int], ...]
    constants: tuple[tuple[str, tuple[int, ...]], ...]
    key: tuple[Any, ...]


def _top_k(case: Case, attrs: Mapping[str, Any]) -> tuple[str, dict[str, int], dict[str, tuple[int, ...]]]:
    largest = 0 if attrs.get("AxisDirection") == INCREASING else 1
    return "TopK", {"axis": int(attrs["Axis"]), "largest": largest, "sorted": 1}, {"K": (int(attrs["K"]),)}


def _cumsum(case: Case, attrs: Mapping[str, Any]) -> tuple[str, dict[str, int], dict[str, tuple[int, ...]]]:
    reverse = 0 if attrs.get("AxisDirection") == INCREASING else 1
    return "CumSum", {"exclusive": int(bool(attrs["HasExclusiveSum"])), "reverse": reverse}, \
        {"axis": (int(attrs["Axis"]),)}


def _cumprod(case: Case, attrs: Mapping[str, Any]) -> tuple[str, dict[str, int], dict[str, tuple[int, ...]]]:
    reverse = 0 if attrs.get("AxisDirection") == INCREASING else 1
    return "CumProd", {"exclusive": int(bool(attrs["HasExclusiveProduct"])), "reverse": reverse}, \
        {"axis": (int(attrs["Axis"]),)}


#: operator -> (case, attributes) -> (ONNX op, ONNX attributes, int64 constant inputs)
_NODES: Mapping[str, Callable[[Case, Mapping[str, Any]], tuple[str, dict[str, int], dict[str, tuple[int, ...]]]]] = {
    "TOP_K": _top_k, "TOP_K1": _top_k, "CUMULATIVE_SUMMATION": _cumsum, "CUMULATIVE_PRODUCT": _cumprod}


def plan(spec: Spec, case: Case) -> ShapedPlan:
    """The node of ``case``; NotSupportedError where ONNX cannot express it."""
    make = _NODES.get(spec.operator)
    if make is None:
        raise NotSupportedError(f"ONNX has no one-node equivalent of {spec.operator} (not mapped)")
    op, attrs, constants = make(case, case.attribute_map())
    _check_opset(op)
    types = tuple((t.name, t.dtype.name, t.sizes) for t in (*case.inputs, *case.outputs))
    return ShapedPlan(op, tuple(sorted(attrs.items())), tuple(sorted(constants.items())),
                      (spec.operator, op, types, tuple(sorted(attrs.items())), tuple(sorted(constants.items()))))


def _check_opset(op_type: str) -> None:
    """NotSupportedError where ``op_type`` is newer than the installed onnx
    package's opsets (`OPSETS`): its node could not be checked or built."""
    need = OPSETS.get(op_type)
    if need is None:
        return
    import onnx  # noqa: PLC0415 - onnx is optional and slow to import

    have = onnx.defs.onnx_opset_version()
    if have < need:
        raise NotSupportedError(f"ONNX {op_type} needs opset {need}; the installed onnx {onnx.__version__} goes "
                                f"to opset {have}: upgrade onnx (and onnxruntime) to map it")


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session (cached by the backend), its
    outputs written into ``buffers`` once the run is over (in place: the
    input was copied before)."""
    p = plan(spec, case)
    session = sessions.get(p.key, lambda: model(p, case), p.op_type)
    x = case.inputs[0]
    results = session.run(None, {"x": np.ascontiguousarray(x.view(buffers[x.name]))})
    for out, y in zip(case.outputs, results):
        write_output(out, buffers, y)


def model(p: ShapedPlan, case: Case) -> Any:
    """The one-node model of ``p``: input ``x`` of the case's input shape
    and type, the constants as int64 initializers, outputs ``y0..``
    (TopK's indices in int64)."""
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415 - onnx is optional and slow to import

    x = case.inputs[0]
    inputs = [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(numpy_dtype(x.dtype)), x.sizes)]
    constants = [numpy_helper.from_array(np.array(v if name == "K" else v[0], np.int64), name)
                 for name, v in p.constants]
    outputs = [helper.make_tensor_value_info(f"y{j}", TensorProto.INT64 if j == 1 else
                                             helper.np_dtype_to_tensor_dtype(numpy_dtype(o.dtype)), o.sizes)
               for j, o in enumerate(case.outputs)]
    attrs: dict[str, Any] = dict(p.attrs)
    node = helper.make_node(p.op_type, ["x", *(c.name for c in constants)], [o.name for o in outputs], **attrs)
    graph = helper.make_graph([node], case.operator.lower(), inputs, outputs, initializer=constants)
    opset = OPSETS.get(p.op_type, OPSET)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {op: OnnxMapping(t, attrs=every_attribute, runner=run, check=plan, outputs=n, note=NOTE)
                                        for op, (t, n) in MAPPED.items()}
