"""BATCH_NORMALIZATION_TRAINING on onnxruntime, and the fused activations of
the normalization family as ONNX nodes (issue #36 item 5).

BatchNormalization (opset 15) with ``training_mode`` 1 and ``momentum`` 0
gives ``Y`` and ``running_mean = current_mean`` and ``running_var =
current_var``: the mean and the population variance over every dimension
but the channel, the ``population`` readings of ``variance`` and
``variance-output``.  A case maps where its statistics are taken over every
dimension but dimension 1 (the scale's sizes 1 except there; a dimension of
size 1 may be either): the input is viewed as (N, C, rest).  FusedAdd is an
Add node after it and FusedActivation the activation's node after that
(the unfused pair: the ``rounded`` reading of ``fused-activation-rounding``).
ACTIVATION_LINEAR has no ONNX node (a Mul and an Add would round twice):
NOT_SUPPORTED, as are other axis sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.contraction.cases import Activation
from dmlconform.families.normalization.cases import activation_of, axes_of, epsilon_of, semantics_of
from dmlconform.spec.model import Spec

OPSET = 15
#: The ONNX nodes of the fused activations ONNX has (their FLOAT attributes by ONNX's names).
NODES = {"ACTIVATION_IDENTITY": "Identity", "ACTIVATION_RELU": "Relu", "ACTIVATION_SIGMOID": "Sigmoid",
         "ACTIVATION_TANH": "Tanh", "ACTIVATION_LEAKY_RELU": "LeakyRelu"}
NOTE = ("BatchNormalization (training_mode 1, momentum 0: running_mean and running_var are the batch's), then Add "
        "and the activation's node; statistics over all but dimension 1 only")


def activation_node(fused: Activation, source: str, target: str) -> Any:
    """The ONNX node computing ``target`` = ``fused(source)``; NotSupportedError where ONNX has none."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    if fused.operator not in NODES:
        raise NotSupportedError(f"FusedActivation {fused.operator}: ONNX has no such node")
    attributes: dict[str, Any] = {k.lower(): v for k, v in fused.attributes}  # LeakyRelu's alpha
    return helper.make_node(NODES[fused.operator], [source], [target], **attributes)


def _channels(spec: Spec, case: Case) -> tuple[int, int, int]:
    """The input as (N, C, rest) for BatchNormalization; NotSupportedError where its statistics are not over
    every dimension but dimension 1."""
    sem = semantics_of(spec)
    sizes, axes = case.input(sem.input).sizes, axes_of(sem, case)
    if not all((d in axes) != (d == 1) or sizes[d] == 1 for d in range(len(sizes))):
        raise NotSupportedError(f"statistics over dimensions {list(axes)} of sizes {list(sizes)}: "
                                "BatchNormalization takes them over every dimension but dimension 1")
    fused = activation_of(sem, case)
    if fused is not None and fused.operator not in NODES:
        raise NotSupportedError(f"FusedActivation {fused.operator}: ONNX has no such node")
    channels = sizes[1] if len(sizes) > 1 else 1
    return sizes[0], channels, int(np.prod(sizes)) // (sizes[0] * channels)


def check(spec: Spec, case: Case) -> None:
    _channels(spec, case)


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through BatchNormalization (training), its Add and its activation."""
    sem = semantics_of(spec)
    shape = _channels(spec, case)
    given = {t.name: t for t in case.inputs}
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input])).reshape(shape)
    feeds = {"x": x, **{fed: np.ascontiguousarray(given[name].view(buffers[name])).reshape(-1)
                        for fed, name in (("scale", sem.scale), ("bias", sem.bias)) if name is not None},
             "mean": np.zeros(shape[1], x.dtype), "var": np.ones(shape[1], x.dtype)}
    if sem.fused_add is not None and sem.fused_add in given:
        feeds["add"] = np.ascontiguousarray(given[sem.fused_add].view(buffers[sem.fused_add])).reshape(shape)
    fused, eps = activation_of(sem, case), epsilon_of(sem, case)
    key = ("normalization", "BatchNormalization", case.dtype.name, eps, "add" in feeds, str(fused))
    session = sessions.get(key, lambda: _model(feeds, eps, fused), "BatchNormalization")
    for out, y in zip(case.outputs, session.run(None, feeds)):
        write_output(out, buffers, y)


def _model(feeds: Mapping[str, np.ndarray], eps: float, fused: Activation | None) -> Any:
    """BatchNormalization over (N, C, rest), then Add with ``add`` where fed, then ``fused``'s node."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(feeds["x"].dtype)
    inputs = [helper.make_tensor_value_info(n, elem, [f"{n}{i}" for i in range(feeds[n].ndim)]) for n in feeds]
    last = "normalized"
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], [last, "m", "v"],
                              epsilon=eps, momentum=0.0, training_mode=1)]
    if "add" in feeds:
        nodes.append(helper.make_node("Add", [last, "add"], ["summed"]))
        last = "summed"
    if fused is not None:
        nodes.append(activation_node(fused, last, "activated"))
        last = "activated"
    nodes.append(helper.make_node("Identity", [last], ["y"]))
    outputs = [helper.make_tensor_value_info(n, elem, None) for n in ("y", "m", "v")]
    graph = helper.make_graph(nodes, "batch_normalization_training", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operator this adapter maps (`normalization.MAPPINGS` merges it).
MAPPINGS: Mapping[str, OnnxMapping] = {
    "BATCH_NORMALIZATION_TRAINING": OnnxMapping(
        "BatchNormalization", inputs=("InputTensor", "ScaleTensor", "BiasTensor", "FusedAddTensor"),
        attrs=every_attribute, integer=False, runner=run, check=check, opset=OPSET, note=NOTE, outputs=3)}
