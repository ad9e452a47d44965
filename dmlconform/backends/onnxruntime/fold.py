"""FOLD on onnxruntime as ONNX Col2Im (opset 18), one node (issue #35 item 5).

Col2Im takes the block tensor {N, C x prod(block_shape), L}, the image's
spatial sizes ``image_shape`` and the window ``block_shape`` as int64
inputs, and ``strides``, ``dilations`` and ``pads`` [starts..., ends...] as
attributes: DirectML's FOLD exactly (a column channel-major then the window
row-major, blocks row-major, overlapping values added, padding dropped).
UNFOLD has no ONNX operator (no Im2Col): NOT_SUPPORTED with that reason.
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
from dmlconform.families.window.fold import geometry
from dmlconform.spec.model import Spec

#: Col2Im came with opset 18.
OPSET = 18


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through one Col2Im node, written into the output buffer."""
    sem = semantics_of(spec)
    try:
        geo = geometry(sem, case.attribute_map())
    except ValueError as exc:
        raise NotSupportedError(str(exc)) from exc
    if len(geo.window) > 6:  # a negative case: the doc allows 1 to 6
        raise NotSupportedError(f"DimensionCount {len(geo.window)}: the doc allows 1 to 6")
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    feeds = {"x": x, "image": np.array(case.outputs[0].sizes[2:], np.int64), "block": np.array(geo.window, np.int64)}
    attrs: dict[str, Any] = {"strides": list(geo.strides), "dilations": list(geo.dilations),
                             "pads": [*geo.start, *geo.end]}
    rank = len(geo.window) + 2
    key = ("fold", "Col2Im", rank, case.dtype.name, tuple(sorted((k, str(v)) for k, v in attrs.items())))
    session = sessions.get(key, lambda: _model(x.dtype, len(geo.window), attrs), "Col2Im")
    (y,) = session.run(None, feeds)
    write_output(case.outputs[0], buffers, y)


def _model(dtype: np.dtype, spatial: int, attrs: dict[str, Any]) -> Any:
    """One Col2Im node over a block tensor of ``dtype``, any sizes."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(dtype)
    inputs = [helper.make_tensor_value_info("x", elem, ["n", "ck", "l"]),
              helper.make_tensor_value_info("image", TensorProto.INT64, [spatial]),
              helper.make_tensor_value_info("block", TensorProto.INT64, [spatial])]
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    output = helper.make_tensor_value_info("y", elem, [f"y{i}" for i in range(spatial + 2)])
    graph = helper.make_graph([node], "fold", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


def _no_unfold(spec: Spec, case: Case) -> None:
    raise NotSupportedError("UNFOLD: ONNX has no Im2Col/Unfold operator (only Col2Im, FOLD's)")


#: The operators this adapter maps (merged into the window family's `MAPPINGS`).
MAPPINGS: Mapping[str, OnnxMapping] = {
    "FOLD": OnnxMapping("Col2Im", attrs=every_attribute, integer=False, runner=run, opset=OPSET,
                        note="Col2Im (opset 18): the same map and sums"),
    "UNFOLD": OnnxMapping("Col2Im", attrs=every_attribute, integer=False, runner=run, check=_no_unfold,
                          note="no ONNX operator (Im2Col): NOT_SUPPORTED"),
}
