"""ONE_HOT as an ONNX ``OneHot`` node for the onnxruntime backend (issue #34
item 5), merged into `backends.onnxruntime.index_map.MAPPINGS`.

``OneHot(axis=Axis+1)`` over the indices as they are (ONNX inserts the
one-hot axis after DirectML's size-1 Axis; the result, reshaped to the
output's sizes, is the page's; a scalar of indices is no ONNX input, so the
size-1 dimension stays), the depth as an
int64 input and the values as ``[OffValue, OnValue]`` (the values tensor's
C-order elements 0 and 1, the page's).  ONNX, like the page, counts
negative indices from the end and leaves a sequence whose index lies
outside [-depth, depth - 1] all OffValue.  Indices become int64 (an
unsigned one past 2^63 - 1 is past the axis either way: it becomes the
int64 greatest).  onnxruntime registers OneHot for a few value types only;
the others are NOT_SUPPORTED naming the node (its session fails to build).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.index_map.cases import semantics_of
from dmlconform.families.index_map.onehot import OFF, ON
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 13
NOTE = "OneHot at Axis + 1, after the indices' size-1 Axis; indices made int64; value types onnxruntime lacks refused"


def _key(spec: Spec, case: Case) -> tuple[Any, ...]:
    sem = semantics_of(spec)
    axis = int(case.attribute_map().get(sem.axis or "Axis", 0))
    return spec.operator, case.dtype.name, axis, case.outputs[0].sizes


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session, written into the output buffer."""
    sem = semantics_of(spec)
    key = _key(spec, case)
    axis, sizes = key[2], key[3]
    session = sessions.get(key, lambda: model(case, axis, sizes), "OneHot")
    idx = case.input(sem.indices or "IndicesTensor").view(buffers[sem.indices or "IndicesTensor"])
    squeezed = np.ascontiguousarray(idx)
    wide = np.minimum(squeezed, np.uint64(np.iinfo(np.int64).max)).astype(np.int64) if squeezed.dtype.kind == "u" \
        else squeezed.astype(np.int64)
    values = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input])).reshape(-1)[[OFF, ON]]
    (y,) = session.run(None, {"indices": wide, "depth": np.array([sizes[axis]], dtype=np.int64), "values": values})
    write_output(case.outputs[0], buffers, y)


def model(case: Case, axis: int, sizes: tuple[int, ...]) -> Any:
    """The one-node model: inputs ``indices`` (int64), ``depth`` and ``values``, output ``y``."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional and slow to import

    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.dtype))
    shape = [1 if d == axis else s for d, s in enumerate(sizes)]
    inputs = [helper.make_tensor_value_info("indices", TensorProto.INT64, shape),
              helper.make_tensor_value_info("depth", TensorProto.INT64, [1]),
              helper.make_tensor_value_info("values", elem, [2])]
    node = helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], axis=axis + 1)
    graph = helper.make_graph([node], "one_hot", inputs, [helper.make_tensor_value_info("y", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operator this adapter maps (merged into `backends.onnxruntime.index_map.MAPPINGS`).
MAPPINGS: Mapping[str, OnnxMapping] = {
    "ONE_HOT": OnnxMapping("OneHot", inputs=("IndicesTensor", "ValuesTensor"), attrs=every_attribute, runner=run,
                           check=_key, note=NOTE)}
