"""The normalization family on onnxruntime: MEAN_VARIANCE_NORMALIZATION(1, 2) as
ONNX LayerNormalization or InstanceNormalization, one node (issue #36 item 5).

Both compute the population variance with Epsilon inside the square root:
the doc's formula with the primary reading of ``variance``.
LayerNormalization (opset 17, ``stash_type`` 1: float32 statistics for
FLOAT16) normalizes the trailing dimensions from ``axis`` on: Axes
``{k, ..., r-1}`` with a scale and bias constant over the other dimensions
(fed over the normalized ones; none given: ones and zeros, exact).
InstanceNormalization normalizes dimensions 2 and up with one scale and
bias per channel: Axes ``{2, ..., r-1}`` with a scale and bias constant
over all but dimension 1.  Anything else (other axis sets, NormalizeVariance
FALSE, a scale or bias that varies where ONNX's cannot) is NOT_SUPPORTED
with the reason.  A fused activation is its ONNX node after the
normalization (`batch_normalization.activation_node`; ACTIVATION_LINEAR has
none).  BATCH_NORMALIZATION_TRAINING: `batch_normalization`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.batch_normalization import MAPPINGS as BATCH_MAPPINGS
from dmlconform.backends.onnxruntime.batch_normalization import NODES, activation_node
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case, TensorData
from dmlconform.families.contraction.cases import Activation
from dmlconform.families.normalization.cases import (
    activation_of,
    axes_of,
    centres,
    divides,
    epsilon_of,
    lrn_of,
    order_of,
    semantics_of,
)
from dmlconform.spec.model import Spec

OPSET = 17
NOTE = ("LayerNormalization (Axes a trailing run) or InstanceNormalization (Axes {2..}, per-channel scale); "
        "NormalizeVariance FALSE and other axis sets not mapped")


def _node(spec: Spec, case: Case) -> tuple[str, int]:
    """The node that computes ``case`` and the first normalized dimension; NotSupportedError where none does."""
    sem = semantics_of(spec)
    if sem.operation == "lp":
        return "LpNormalization", axes_of(sem, case)[0]
    if sem.operation == "lrn":
        size = lrn_of(sem, case)[0]
        if axes_of(sem, case) != (1,) or size < 1 or len(case.input(sem.input).sizes) != 4:
            raise NotSupportedError("LRN sums across channels only, over a size of at least 1, of a 4-D tensor here")
        return "LRN", 1
    fused = activation_of(sem, case)
    if fused is not None and fused.operator not in NODES:
        raise NotSupportedError(f"FusedActivation {fused.operator}: ONNX has no such node")
    if not divides(sem, case):
        raise NotSupportedError("NormalizeVariance (UseVariance) FALSE: ONNX's normalization nodes always divide")
    if not centres(sem, case):
        raise NotSupportedError("UseMean FALSE: RMSNormalization came with opset 23, not mapped")
    x = case.input(sem.input)
    rank, axes = len(x.sizes), axes_of(sem, case)
    affine = [t for t in case.inputs if t.name in (sem.scale, sem.bias)]
    if axes == tuple(range(axes[0], rank)) and all(_constant(t, set(range(axes[0]))) for t in affine):
        return "LayerNormalization", axes[0]
    if rank >= 3 and axes == tuple(range(2, rank)) and all(_constant(t, {0, *range(2, rank)}) for t in affine):
        return "InstanceNormalization", 2
    raise NotSupportedError(f"Axes {list(axes)} with this scale and bias: neither LayerNormalization (a trailing run "
                            "of axes, the scale constant elsewhere) nor InstanceNormalization (axes 2 and up, one "
                            "scale per channel)")


def _constant(t: TensorData, dims: set[int]) -> bool:
    """Whether ``t`` holds the same value along every dimension of ``dims`` (size 1 or stride 0)."""
    return all(t.sizes[d] == 1 or t.strides[d] == 0 for d in dims)


def check(spec: Spec, case: Case) -> None:
    _node(spec, case)


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its LayerNormalization, InstanceNormalization or LpNormalization node."""
    sem = semantics_of(spec)
    if sem.operation == "lp":
        _lp(spec, case, buffers, sessions)
        return
    if sem.operation == "lrn":
        _lrn(spec, case, buffers, sessions)
        return
    op_type, first = _node(spec, case)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    given = {t.name: t for t in case.inputs}
    kept: tuple[Any, ...] = (0,) * first if op_type == "LayerNormalization" else (0, slice(None),
                                                                                   *(0,) * (x.ndim - 2))
    feeds = {"x": x}
    for fed, name, fill in (("scale", sem.scale, 1), ("bias", sem.bias, 0)):
        t = given.get(name or "")
        full = np.broadcast_to(t.view(buffers[t.name]), x.shape) if t is not None else np.full(x.shape, fill, x.dtype)
        feeds[fed] = np.ascontiguousarray(full[kept])
    attrs: dict[str, Any] = {"epsilon": epsilon_of(sem, case)}
    if op_type == "LayerNormalization":
        attrs.update(axis=first, stash_type=1)
    fused = activation_of(sem, case)
    key = ("normalization", op_type, x.ndim, first, case.dtype.name, attrs["epsilon"], str(fused))
    session = sessions.get(key, lambda: _model(op_type, x.ndim, feeds, attrs, fused), op_type)
    (y,) = session.run(None, feeds)
    write_output(case.outputs[0], buffers, y)


def _lp(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """LP_NORMALIZATION as LpNormalization (``axis``, ``p``; it has no epsilon)."""
    sem = semantics_of(spec)
    p = order_of(sem, case)
    if p not in (1, 2):
        raise NotSupportedError(f"P={p}: LpNormalization takes 1 or 2")
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    axis = axes_of(sem, case)[0]
    wide = x.astype(np.float64)
    norms = np.abs(wide).sum(axis=axis) if p == 1 else np.sqrt((wide * wide).sum(axis=axis))
    if np.any(norms < epsilon_of(sem, case)):
        raise NotSupportedError("a norm below Epsilon: LpNormalization has no epsilon (it divides by the norm)")
    attrs: dict[str, Any] = {"axis": axis, "p": p}
    key = ("normalization", "LpNormalization", x.ndim, case.dtype.name, attrs["axis"], p)
    session = sessions.get(key, lambda: _model("LpNormalization", x.ndim, {"x": x}, attrs), "LpNormalization")
    (y,) = session.run(None, {"x": x})
    write_output(case.outputs[0], buffers, y)


def _lrn(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """LOCAL_RESPONSE_NORMALIZATION with CrossChannel TRUE as LRN (its window floor((size-1)/2) before)."""
    sem = semantics_of(spec)
    _node(spec, case)
    size, alpha, beta, bias = lrn_of(sem, case)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    attrs: dict[str, Any] = {"size": size, "alpha": alpha, "beta": beta, "bias": bias}
    key = ("normalization", "LRN", x.ndim, case.dtype.name, size, alpha, beta, bias)
    session = sessions.get(key, lambda: _model("LRN", x.ndim, {"x": x}, attrs), "LRN")
    (y,) = session.run(None, {"x": x})
    write_output(case.outputs[0], buffers, y)


def _model(op_type: str, rank: int, feeds: Mapping[str, np.ndarray], attrs: dict[str, Any],
           fused: Activation | None = None) -> Any:
    """One ``op_type`` node over tensors of ``rank`` dimensions of any size, then ``fused``'s node where given
    (the unfused pair: the activation reads the result rounded to the type)."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(feeds["x"].dtype)
    inputs = [helper.make_tensor_value_info(n, elem, [f"{n}{i}" for i in range(feeds[n].ndim)]) for n in feeds]
    nodes = [helper.make_node(op_type, list(feeds), ["y" if fused is None else "normalized"], **attrs)]
    if fused is not None:
        nodes.append(activation_node(fused, "normalized", "y"))
    output = helper.make_tensor_value_info("y", elem, [f"y{i}" for i in range(rank)])
    graph = helper.make_graph(nodes, "normalization", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {
    op: OnnxMapping("LayerNormalization", inputs=("InputTensor", "ScaleTensor", "BiasTensor"), attrs=every_attribute,
                    integer=False, runner=run, check=check, opset=OPSET, note=NOTE)
    for op in ("MEAN_VARIANCE_NORMALIZATION", "MEAN_VARIANCE_NORMALIZATION1", "MEAN_VARIANCE_NORMALIZATION2")} | {
    "LP_NORMALIZATION": OnnxMapping("LpNormalization", attrs=every_attribute, integer=False, runner=run, check=check,
                                    note="LpNormalization (axis, p); no epsilon"),
    "LOCAL_RESPONSE_NORMALIZATION": OnnxMapping("LRN", attrs=every_attribute, integer=False, runner=run, check=check,
                                                note="LRN: CrossChannel TRUE only (floor((size-1)/2) before)")} | dict(
    BATCH_MAPPINGS)
