"""CONVOLUTION's FusedActivation on onnxruntime: the Conv (or ConvTranspose)
node followed by the activation as ONNX nodes, the unfused pair (the
``rounded`` reading of ``fused-activation-rounding``: the Conv's output is
rounded to its type first).  Each activation of the fused-activation page
has an exact ONNX form: one node (Relu, Sigmoid, HardSigmoid, Selu for
SCALED_ELU, Shrink, Gelu, Clip...) or a scale around one (LINEAR,
SCALED_TANH, SOFTPLUS's Steepness, PARAMETRIC_SOFTPLUS), whose extra
roundings the activation's own ULP budget holds.  Opset 20 (Gelu's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dmlconform.families.contraction.cases import Activation

OPSET = 20


def _steps(act: Activation) -> list[tuple[str, dict[str, float], tuple[float, ...]]]:
    """``act`` as ONNX steps: (op type, attributes, constant second inputs)."""
    s = dict(act.attributes)
    alpha, beta = s.get("Alpha", 1.0), s.get("Beta", 0.0)
    table: dict[str, list[tuple[str, dict[str, float], tuple[float, ...]]]] = {
        "ACTIVATION_IDENTITY": [("Identity", {}, ())], "ACTIVATION_RELU": [("Relu", {}, ())],
        "ACTIVATION_SIGMOID": [("Sigmoid", {}, ())], "ACTIVATION_TANH": [("Tanh", {}, ())],
        "ACTIVATION_SOFTSIGN": [("Softsign", {}, ())], "ACTIVATION_GELU": [("Gelu", {}, ())],
        "ACTIVATION_LINEAR": [("Mul", {}, (alpha,)), ("Add", {}, (beta,))],
        "ACTIVATION_HARD_SIGMOID": [("HardSigmoid", {"alpha": alpha, "beta": beta}, ())],
        "ACTIVATION_SCALED_TANH": [("Mul", {}, (beta,)), ("Tanh", {}, ()), ("Mul", {}, (alpha,))],
        "ACTIVATION_LEAKY_RELU": [("LeakyRelu", {"alpha": alpha}, ())],
        "ACTIVATION_THRESHOLDED_RELU": [("ThresholdedRelu", {"alpha": alpha}, ())],
        "ACTIVATION_ELU": [("Elu", {"alpha": alpha}, ())], "ACTIVATION_CELU": [("Celu", {"alpha": alpha}, ())],
        "ACTIVATION_SCALED_ELU": [("Selu", {"alpha": alpha, "gamma": s.get("Gamma", 1.0)}, ())],
        "ACTIVATION_SOFTPLUS": [("Mul", {}, (s.get("Steepness", 1.0),)), ("Softplus", {}, ()),
                                ("Div", {}, (s.get("Steepness", 1.0),))],
        "ACTIVATION_PARAMETRIC_SOFTPLUS": [("Mul", {}, (beta,)), ("Softplus", {}, ()), ("Mul", {}, (alpha,))],
        "ACTIVATION_SHRINK": [("Shrink", {"bias": s.get("Bias", 0.0), "lambd": s.get("Threshold", 0.5)}, ())],
        "ELEMENT_WISE_CLIP": [("Clip", {}, (s.get("Min", -np.inf), s.get("Max", np.inf)))]}
    return table[act.operator]


def appended(source: str, act: Activation, dtype: np.dtype) -> tuple[list[Any], list[Any]]:
    """The nodes that take ``source`` through ``act`` into ``y``, and their constants (initializers)."""
    from onnx import helper, numpy_helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    nodes: list[Any] = []
    constants: list[Any] = []
    steps = _steps(act)
    for j, (op, attrs, values) in enumerate(steps):
        names = [f"k{j}_{i}" for i in range(len(values))]
        constants += [numpy_helper.from_array(np.array(v, dtype), n) for n, v in zip(names, values)]
        out = "y" if j == len(steps) - 1 else f"a{j}"
        settings: dict[str, Any] = dict(attrs)
        nodes.append(helper.make_node(op, [source, *names], [out], **settings))
        source = out
    return nodes, constants
