"""NONZERO_COORDINATES as an ONNX ``NonZero`` node for the onnxruntime
backend (issue #34 item 5), merged into `backends.onnxruntime.index_map.MAPPINGS`.

``NonZero`` gives the coordinates as a [rank, count] int64 tensor in C
order (row-major, as the page orders them; -0 is zero to it, as to the
page): the count is its second size, the rows its transpose, of which the
last N columns are written; the rows past the count are left as they were
(the page: undefined).  onnxruntime registers NonZero for a few input
types only; the others are NOT_SUPPORTED naming the node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case, writable_view
from dmlconform.families.index_map.cases import semantics_of
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 13
NOTE = "NonZero, transposed; its count the second size; input types onnxruntime lacks refused"


def _key(spec: Spec, case: Case) -> tuple[Any, ...]:
    return spec.operator, case.dtype.name, case.inputs[0].sizes


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session, written into both outputs."""
    sem = semantics_of(spec)
    session = sessions.get(_key(spec, case), lambda: model(case), "NonZero")
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    (found,) = session.run(None, {"x": x})
    outs = {t.name: t for t in case.outputs}
    count, coords = outs[sem.count or "OutputCountTensor"], outs[sem.output]
    n = coords.sizes[-1]
    rows = np.zeros((x.size, n), dtype=np.uint32)
    rows[:found.shape[1]] = found.T[:, x.ndim - n:]
    write_output(count, buffers, np.array(found.shape[1]))
    writable_view(coords, buffers[coords.name])[...] = rows.reshape(coords.sizes)


def model(case: Case) -> Any:
    """The one-node model: input ``x``, output ``y`` ([rank, count], int64)."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional and slow to import

    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.dtype))
    node = helper.make_node("NonZero", ["x"], ["y"])
    graph = helper.make_graph([node], "nonzero", [helper.make_tensor_value_info("x", elem, case.inputs[0].sizes)],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operator this adapter maps (merged into `backends.onnxruntime.index_map.MAPPINGS`).
MAPPINGS: Mapping[str, OnnxMapping] = {
    "NONZERO_COORDINATES": OnnxMapping("NonZero", attrs=every_attribute, runner=run, check=_key, note=NOTE,
                                       outputs=2)}
