"""The window family on onnxruntime: CONVOLUTION as ONNX Conv (FORWARD) or
ConvTranspose (BACKWARD), AVERAGE_POOLING(1) as AveragePool, the
MAX_POOLINGs as MaxPool, one node
(issue #35 item 5).

ONNX's Conv is a cross-correlation with asymmetric ``pads`` [starts...,
ends...], ``strides``, ``dilations`` and ``group``, its weight {M, C/G,
K...}: DirectML's FORWARD CROSS_CORRELATION exactly.  ConvTranspose, the
adjoint of Conv, takes the weight {C, M/G, K...}, the same ``pads`` (the
full output cropped) and ``output_padding``: DirectML's BACKWARD
CROSS_CORRELATION, the primary reading of ``output-padding`` (computed).
CONVOLUTION mode feeds the filter reversed along every spatial dimension
(a data rearrangement, exact; the ``every-spatial`` reading of
``flip-axes``).  A fused activation follows as ONNX nodes (`activations`:
the ``rounded`` reading of ``fused-activation-rounding``).  One
session per direction, data type, rank and attribute set; the backend's
``run_batch`` hands each case to `run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.activations import OPSET as ACTIVATION_OPSET
from dmlconform.backends.onnxruntime.activations import appended
from dmlconform.backends.onnxruntime.fold import MAPPINGS as FOLD_MAPPINGS
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.backends.onnxruntime.unpool import MAPPINGS as UNPOOL_MAPPINGS
from dmlconform.cases.model import Case
from dmlconform.families.contraction.cases import Activation
from dmlconform.families.window.activation import activation
from dmlconform.families.window.cases import geometry, integer_operands, operands, power, semantics_of, window
from dmlconform.spec.model import Spec

OPSET = 13
#: AveragePool's dilations came with opset 19.
AVERAGE_OPSET = 19
#: MaxPool's dilations and integer types came with opset 12.
MAX_OPSET = 12
#: LpPool's dilations came with opset 18.
LP_OPSET = 18
_POOLS = {"average_pooling": ("AveragePool", AVERAGE_OPSET), "max_pooling": ("MaxPool", MAX_OPSET),
          "lp_pooling": ("LpPool", LP_OPSET)}
NOTE = ("FORWARD: Conv; BACKWARD: ConvTranspose (pads crop the full output, output_padding computed); "
        "CONVOLUTION mode: the filter fed reversed; FusedActivation as nodes after it")


def check(spec: Spec, case: Case) -> None:
    """Nothing CONVOLUTION's cases ask for is beyond these nodes (a fused activation: `activations`)."""


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its Conv, ConvTranspose or AveragePool node, written into the output buffer."""
    sem = semantics_of(spec)
    if sem.operation == "convolution_integer":
        _integer(spec, case, buffers, sessions)
        return
    if sem.operation != "convolution":
        _pool(spec, case, buffers, sessions)
        return
    ops, geo = operands(sem, case, buffers), geometry(sem, case)
    x = np.ascontiguousarray(ops.x)
    w = ops.w[(slice(None), slice(None)) + (slice(None, None, -1),) * (ops.w.ndim - 2)] if geo.flipped else ops.w
    attrs: dict[str, Any] = {"strides": list(geo.strides), "dilations": list(geo.dilations),
                             "pads": [*geo.start, *geo.end], "group": geo.groups}
    if geo.transposed:
        attrs["output_padding"] = list(geo.output_padding)
    op_type = "ConvTranspose" if geo.transposed else "Conv"
    feeds = {"x": x, "w": np.ascontiguousarray(w)}
    if ops.bias is not None:
        feeds["b"] = np.ascontiguousarray(ops.bias)
    act = activation(sem, case)
    key = ("window", op_type, x.ndim, case.dtype.name, ops.bias is not None, tuple(sorted((k, str(v)) for k, v in
                                                                                          attrs.items())), act)
    session = sessions.get(key, lambda: _model(op_type, x.ndim, x.dtype, ops.bias is not None, attrs, act=act),
                           op_type)
    (y,) = session.run(None, feeds)
    write_output(case.outputs[0], buffers, y)


def _integer(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """CONVOLUTION_INTEGER as ConvInteger (opset 10): zero points as scalars (onnxruntime refuses a per-channel
    one); ONNX pads after subtracting the zero point (the ``zero-point`` reading of ``padding-value``)."""
    sem = semantics_of(spec)
    ops, geo = integer_operands(sem, case, buffers), geometry(sem, case)
    if ops.w_zero is not None and ops.w_zero.size > 1:
        raise NotSupportedError("a per-channel FilterZeroPointTensor: onnxruntime's ConvInteger takes one zero point")
    attrs: dict[str, Any] = {"strides": list(geo.strides), "dilations": list(geo.dilations),
                             "pads": [*geo.start, *geo.end], "group": geo.groups}
    feeds = {"x": np.ascontiguousarray(ops.x), "w": np.ascontiguousarray(ops.w)}
    types = {"x": ops.x.dtype, "w": ops.w.dtype}
    if ops.x_zero is not None or ops.w_zero is not None:  # ONNX's zero points are positional: give both
        feeds["xz"] = np.array(0 if ops.x_zero is None else ops.x_zero[0], ops.x.dtype)
        feeds["wz"] = np.array(0 if ops.w_zero is None else ops.w_zero[0], ops.w.dtype)
        types.update(xz=ops.x.dtype, wz=ops.w.dtype)
    key = ("window", "ConvInteger", ops.x.ndim, tuple((n, str(t), np.ndim(feeds[n])) for n, t in types.items()),
           tuple(sorted((k, str(v)) for k, v in attrs.items())))
    session = sessions.get(key, lambda: _integer_model(feeds, attrs), "ConvInteger")
    (y,) = session.run(None, feeds)
    write_output(case.outputs[0], buffers, y)


def _integer_model(feeds: Mapping[str, np.ndarray], attrs: dict[str, Any]) -> Any:
    """One ConvInteger node over ``feeds``' types and ranks (sizes free), an INT32 output."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                            [f"{n}{i}" for i in range(a.ndim)]) for n, a in feeds.items()]
    rank = feeds["x"].ndim
    node = helper.make_node("ConvInteger", list(feeds), ["y"], **attrs)
    graph = helper.make_graph([node], "window", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [f"y{i}" for i in range(rank)])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)], ir_version=9)


def _pool(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """AVERAGE_POOLING(1) as AveragePool (opset 19: dilations; ``count_include_pad`` is IncludePadding), the
    MAX_POOLINGs as MaxPool (opset 12: dilations; its Indices flat over the whole tensor, row-major, as the doc's),
    LP_POOLING(1) as LpPool (opset 18: dilations; ``p``; |x|^p, the ``absolute`` reading of ``lp-sign``).
    ONNX asks for pads below the kernel: a window wholly in padding is NOT_SUPPORTED."""
    sem = semantics_of(spec)
    geo, kernel = geometry(sem, case), window(sem, case)
    op_type, opset = _POOLS[sem.operation]
    if len(kernel) > 3:
        raise NotSupportedError(f"{len(kernel)} spatial dimensions: onnxruntime's {op_type} has 1 to 3")
    if any(p >= k for p, k in zip((*geo.start, *geo.end), (*kernel, *kernel))):
        raise NotSupportedError(f"pads {[*geo.start, *geo.end]} reach the kernel {list(kernel)}: ONNX {op_type} "
                                "needs pads below it")
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    attrs: dict[str, Any] = {"kernel_shape": list(kernel), "strides": list(geo.strides), "dilations": list(geo.dilations),
                             "pads": [*geo.start, *geo.end]}
    if op_type == "AveragePool":
        attrs["count_include_pad"] = int(geo.include_padding)
    if op_type == "LpPool":
        attrs["p"] = power(sem, case)
    outputs = ("y", "i")[:len(case.outputs)]
    key = ("window", op_type, x.ndim, case.dtype.name, outputs, tuple(sorted((k, str(v)) for k, v in attrs.items())))
    session = sessions.get(key, lambda: _model(op_type, x.ndim, x.dtype, False, attrs, fed=("x",), opset=opset,
                                               outputs=outputs), op_type)
    for out, y in zip(case.outputs, session.run(None, {"x": x})):
        write_output(out, buffers, y)


def _model(op_type: str, rank: int, dtype: np.dtype, bias: bool, attrs: dict[str, Any],
           fed: tuple[str, ...] = ("x", "w"), opset: int = OPSET, outputs: tuple[str, ...] = ("y",),
           act: Activation | None = None) -> Any:
    """One ``op_type`` node over tensors of ``rank`` dimensions of any size (then ``act``'s nodes)."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(dtype)
    names = [*fed, "b"] if bias else list(fed)
    inputs = [helper.make_tensor_value_info(n, elem, [f"{n}{i}" for i in range(rank if n != "b" else 1)])
              for n in names]
    nodes = [helper.make_node(op_type, names, ["c"] if act else list(outputs), **attrs)]
    constants: list[Any] = []
    if act is not None:
        more, constants = appended("c", act, dtype)
        nodes += more
        opset = max(opset, ACTIVATION_OPSET)
    results = [helper.make_tensor_value_info(o, elem if o == "y" else helper.np_dtype_to_tensor_dtype(np.dtype(np.int64)),
                                             [f"y{i}" for i in range(rank)]) for o in outputs]
    graph = helper.make_graph(nodes, "window", inputs, results, initializer=constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {
    "CONVOLUTION": OnnxMapping("Conv", inputs=("InputTensor", "FilterTensor", "BiasTensor"), attrs=every_attribute,
                               integer=False, runner=run, check=check, note=NOTE),
    **{op: OnnxMapping("AveragePool", attrs=every_attribute, integer=False, runner=run, opset=AVERAGE_OPSET,
                       note="AveragePool, count_include_pad = IncludePadding; pads must stay below the kernel")
       for op in ("AVERAGE_POOLING", "AVERAGE_POOLING1")},
    **{op: OnnxMapping("MaxPool", attrs=every_attribute, integer=True, runner=run, opset=MAX_OPSET,
                       outputs=1 if op == "MAX_POOLING" else 2, note="MaxPool (Indices flat over the tensor, int64, cast); pads must stay below the kernel; "
                            "NaN ignored where a number is in the window (the ignore reading)")
       for op in ("MAX_POOLING", "MAX_POOLING1", "MAX_POOLING2")},
    "CONVOLUTION_INTEGER": OnnxMapping("ConvInteger", attrs=every_attribute, integer=True, runner=run, opset=10,
                                       note="ConvInteger (pads after the zero point: the zero-point reading)"),
    **{op: OnnxMapping("LpPool", attrs=every_attribute, integer=False, runner=run, opset=LP_OPSET,
                       note="LpPool (|x|^p: the absolute reading); pads must stay below the kernel")
       for op in ("LP_POOLING", "LP_POOLING1")},
    **UNPOOL_MAPPINGS,
    **FOLD_MAPPINGS}
