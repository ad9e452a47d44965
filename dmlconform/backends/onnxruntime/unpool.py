"""MAX_UNPOOLING on onnxruntime: ONNX MaxUnpool (opset 11) with its
``output_shape`` input the case's output sizes (issue #35 item 5).

ONNX's indices are flat over the whole output tensor in C order (int64),
as the DirectML page's; onnxruntime's CPU kernel stores the values one
after the other (the ``last`` reading of ``repeated-index``).  Its
attributes only bound the output's sizes from below (the shape a pooling
of that window would have come from): per spatial dimension a window of 1
(output at least the input) or of ``in - out + 1`` with that padding less
one on both sides (smaller), which gives exactly the output.  What it
refuses is NOT_SUPPORTED before it runs: integer types (ONNX's T1 is
float), an index past the output's end (INVALID_ARGUMENT), another batch
or channel count than the input's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.window.cases import semantics_of
from dmlconform.families.window.unpool import operands
from dmlconform.spec.model import Spec

OPSET = 11
NOTE = "MaxUnpool with output_shape (flat indices over the tensor: the doc's; repeated: the last stays)"


def check(spec: Spec, case: Case) -> None:
    """NotSupportedError for what MaxUnpool does not take: integer types, other batch or channel counts."""
    if not case.dtype.is_float:
        raise NotSupportedError(f"{case.dtype.name}: ONNX MaxUnpool's T1 is a float type")
    x, out = case.inputs[0], case.outputs[0]
    if x.sizes[:2] != out.sizes[:2]:
        raise NotSupportedError(f"output {list(out.sizes)} and input {list(x.sizes)} differ in batch or channels: "
                                "MaxUnpool keeps them")


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through one MaxUnpool node, written into the output buffer."""
    check(spec, case)
    sem = semantics_of(spec)
    ops = operands(sem, case, buffers)
    if (ops.indices >= ops.size).any():
        raise NotSupportedError("an index at or past the output's element count: onnxruntime's MaxUnpool refuses "
                                "it (INVALID_ARGUMENT)")
    sizes = case.input(sem.input).sizes
    kernel = [1 if o >= i else i - o + 1 for i, o in zip(sizes[2:], ops.sizes[2:])]
    attrs: dict[str, Any] = {"kernel_shape": kernel, "pads": [k - 1 for k in kernel] * 2}
    x = np.ascontiguousarray(ops.x.reshape(sizes))
    feeds = {"x": x, "i": ops.indices.reshape(sizes), "s": np.array(ops.sizes, np.int64)}
    key = ("unpool", x.ndim, case.dtype.name, tuple(kernel))
    session = sessions.get(key, lambda: _model(x.ndim, x.dtype, attrs), "MaxUnpool")
    (y,) = session.run(None, feeds)
    write_output(case.outputs[0], buffers, y)


def _model(rank: int, dtype: np.dtype, attrs: dict[str, Any]) -> Any:
    """One MaxUnpool node over tensors of ``rank`` dimensions of any size."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(dtype)
    inputs = [helper.make_tensor_value_info("x", elem, [f"x{i}" for i in range(rank)]),
              helper.make_tensor_value_info("i", TensorProto.INT64, [f"x{i}" for i in range(rank)]),
              helper.make_tensor_value_info("s", TensorProto.INT64, [rank])]
    node = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], **attrs)
    graph = helper.make_graph([node], "unpool", inputs,
                              [helper.make_tensor_value_info("y", elem, [f"y{i}" for i in range(rank)])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operator this adapter maps (merged into `backends.onnxruntime.window.MAPPINGS`).
MAPPINGS: Mapping[str, OnnxMapping] = {
    "MAX_UNPOOLING": OnnxMapping("MaxUnpool", inputs=("InputTensor", "IndicesTensor"), attrs=every_attribute,
                                 integer=False, runner=run, check=check, opset=OPSET, note=NOTE)}
