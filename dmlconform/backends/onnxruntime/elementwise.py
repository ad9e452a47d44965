"""onnxruntime mappings of the element-wise operators: the formula ones and
the reviewed-formula ones (docs/bitwise.md), merged into `backend.MAPPINGS`.

ONNX's BitwiseAnd/Or/Xor/Not (opset 18) take integer tensors only: the
doc's float tensors (their encodings, 4_1 and above) are NOT_SUPPORTED.
ONNX Round rounds halves to even, the doc's HALVES_TO_NEAREST_EVEN; ONNX has
no truncation nor halves-away rounding, so the two other modes are
NOT_SUPPORTED.  ONNX has no population count: BIT_COUNT is not mapped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs, clip_bounds, in_type, int_bound, require
from dmlconform.backends.onnxruntime.node import KERNEL_OPSET, OnnxMapping

_AB = ("ATensor", "BTensor")
HALVES_TO_EVEN = "DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"


def _integers_only(a: Attrs) -> tuple[dict[str, Any], tuple]:
    if a.dtype.kind == "f":
        raise NotSupportedError(f"ONNX bitwise operators take integer tensors only, not {a.dtype} (the doc reads "
                                "a float tensor's encoding)")
    return {}, ()


def _halves_to_even(a: Attrs) -> tuple[dict[str, Any], tuple]:
    mode = str(a.raw("RoundingMode") or HALVES_TO_EVEN)
    if mode != HALVES_TO_EVEN:
        raise NotSupportedError(f"RoundingMode={mode}: ONNX Round rounds halves to even only")
    return {}, ()


_BITWISE_NOTE = "integer tensors only: float ones (read as their encoding by the doc) are NOT_SUPPORTED"

#: Spec operator -> the keyword arguments of its `OnnxMapping`.
_BITWISE: Mapping[str, dict[str, Any]] = {
    "ELEMENT_WISE_BIT_AND": {"op_type": "BitwiseAnd", "inputs": _AB, "attrs": _integers_only, "note": _BITWISE_NOTE},
    "ELEMENT_WISE_BIT_OR": {"op_type": "BitwiseOr", "inputs": _AB, "attrs": _integers_only, "note": _BITWISE_NOTE},
    "ELEMENT_WISE_BIT_XOR": {"op_type": "BitwiseXor", "inputs": _AB, "attrs": _integers_only, "note": _BITWISE_NOTE},
    "ELEMENT_WISE_BIT_NOT": {"op_type": "BitwiseNot", "attrs": _integers_only, "note": _BITWISE_NOTE},
    "ELEMENT_WISE_IS_NAN": {"op_type": "IsNaN", "note": "bool output, written as 0/1"},
    "ELEMENT_WISE_ROUND": {"op_type": "Round", "attrs": _halves_to_even,
                           "note": "halves to even only: TOWARD_ZERO and TOWARD_INFINITY are NOT_SUPPORTED"},
}


def _named(**pairs: str) -> Callable[[Attrs], tuple[dict[str, Any], tuple[float | int, ...]]]:
    """ONNX float attribute <- doc FLOAT member, by name."""
    return lambda a: ({onnx: a.f32(doc) for onnx, doc in pairs.items()}, ())

def _shrink(a: Attrs) -> tuple[dict[str, Any], tuple[float | int, ...]]:
    threshold = a.f32("Threshold")
    if threshold < 0:
        raise NotSupportedError(f"Threshold={threshold} < 0: the doc's branches overlap and its first one "
                                "(x > Threshold) wins; ONNX Shrink tests x < -lambd first")
    return {"lambd": threshold, "bias": a.f32("Bias")}, ()

def _only(name: str, want: Fraction | float, onnx_form: str) -> Callable[[Attrs], tuple[dict[str, Any], tuple]]:
    def attrs(a: Attrs) -> tuple[dict[str, Any], tuple]:
        require(a, name, want, f"ONNX {onnx_form}")
        return {}, ()
    return attrs

def _hard_swish(a: Attrs) -> tuple[dict[str, Any], tuple]:
    _only("Alpha", Fraction(1, 6), "HardSwish")(a)
    return _only("Beta", 0.5, "HardSwish")(a)

def _threshold(a: Attrs) -> tuple[dict[str, Any], tuple[float | int, ...]]:
    if a.dtype.kind in "iu":
        lo = int_bound(a.raw("Min"), a.dtype, lower=True)
        if lo is None:
            raise NotSupportedError(f"Min={a.raw('Min')!r} lies above {a.dtype}'s range")
        return {}, (lo,)
    return {}, (in_type(a, a.f32("Min")),)

def _is_infinity(a: Attrs) -> tuple[dict[str, Any], tuple]:
    mode = str(a.raw("InfinityMode") or "EITHER").upper()
    mode = {"0": "EITHER", "1": "POSITIVE", "2": "NEGATIVE"}.get(mode, mode)
    return {"detect_positive": int(not mode.endswith("NEGATIVE")),
            "detect_negative": int(not mode.endswith("POSITIVE"))}, ()

def _softplus(a: Attrs) -> tuple[dict[str, Any], tuple]:
    return _only("Steepness", 1.0, "Softplus (no steepness)")(a)

def _mod(fmod: int) -> Callable[[Attrs], tuple[dict[str, Any], tuple]]:
    def attrs(a: Attrs) -> tuple[dict[str, Any], tuple]:
        if fmod == 0 and a.dtype.kind == "f":
            raise NotSupportedError("ONNX Mod with fmod=0 (floor modulus) is defined for integers only")
        return {"fmod": fmod}, ()
    return attrs

def _constant(attrs: dict[str, Any]) -> Callable[[Attrs], tuple[dict[str, Any], tuple]]:
    return lambda a: (dict(attrs), ())

_CLIP_NOTE = ("Min/Max become the min/max inputs in the tensor type (integer tensors: truncated toward zero); "
              "Min > Max is NOT_SUPPORTED (ONNX gives Max, the doc Min)")

_UNARY = {
    "ELEMENT_WISE_ABS": "Abs", "ELEMENT_WISE_ACOS": "Acos", "ELEMENT_WISE_ACOSH": "Acosh",
    "ELEMENT_WISE_ASIN": "Asin", "ELEMENT_WISE_ASINH": "Asinh", "ELEMENT_WISE_ATAN": "Atan",
    "ELEMENT_WISE_ATANH": "Atanh", "ELEMENT_WISE_CEIL": "Ceil", "ELEMENT_WISE_COS": "Cos",
    "ELEMENT_WISE_COSH": "Cosh", "ELEMENT_WISE_ERF": "Erf", "ELEMENT_WISE_EXP": "Exp",
    "ELEMENT_WISE_FLOOR": "Floor", "ELEMENT_WISE_IDENTITY": "Identity", "ELEMENT_WISE_LOG": "Log",
    "ELEMENT_WISE_NEGATE": "Neg", "ELEMENT_WISE_RECIP": "Reciprocal", "ELEMENT_WISE_SIGN": "Sign",
    "ELEMENT_WISE_SIN": "Sin", "ELEMENT_WISE_SINH": "Sinh", "ELEMENT_WISE_SQRT": "Sqrt",
    "ELEMENT_WISE_TAN": "Tan", "ELEMENT_WISE_TANH": "Tanh", "ACTIVATION_IDENTITY": "Identity",
    "ACTIVATION_RELU": "Relu", "ACTIVATION_SIGMOID": "Sigmoid", "ACTIVATION_SOFTSIGN": "Softsign",
    "ACTIVATION_TANH": "Tanh",
}

_BINARY = {
    "ELEMENT_WISE_ADD": "Add", "ELEMENT_WISE_ADD1": "Add", "ELEMENT_WISE_SUBTRACT": "Sub",
    "ELEMENT_WISE_MULTIPLY": "Mul", "ELEMENT_WISE_MAX": "Max", "ELEMENT_WISE_MIN": "Min",
    "ELEMENT_WISE_POW": "Pow", "ELEMENT_WISE_LOGICAL_EQUALS": "Equal",
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": "Greater", "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": "GreaterOrEqual",
    "ELEMENT_WISE_LOGICAL_LESS_THAN": "Less", "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": "LessOrEqual",
}

_LOGICAL = {"ELEMENT_WISE_LOGICAL_AND": "And", "ELEMENT_WISE_LOGICAL_OR": "Or", "ELEMENT_WISE_LOGICAL_XOR": "Xor"}


#: The element-wise operators this backend maps (`backend.MAPPINGS` merges them), with how ONNX differs from the doc.
MAPPINGS: Mapping[str, OnnxMapping] = {
    **{op: OnnxMapping(onnx) for op, onnx in _UNARY.items()},
    **{op: OnnxMapping(onnx, _AB) for op, onnx in _BINARY.items()},
    **{op: OnnxMapping(onnx, _AB, bool_inputs=_AB, note="ONNX takes bool; the doc's nonzero is true (x != 0)")
       for op, onnx in _LOGICAL.items()},
    "ELEMENT_WISE_LOGICAL_NOT": OnnxMapping("Not", bool_inputs=("InputTensor",),
                                         note="ONNX takes bool; the doc's nonzero is true (x != 0)"),
    "ELEMENT_WISE_DIVIDE": OnnxMapping("Div", _AB, divisor="BTensor",
                                    note="integer division by zero is undefined in ONNX (a crash): such cases are "
                                         "NOT_SUPPORTED"),
    "ELEMENT_WISE_MODULUS_FLOOR": OnnxMapping("Mod", _AB, _mod(0), divisor="BTensor",
                                           note="Mod fmod=0 is integer-only in ONNX: float cases are NOT_SUPPORTED"),
    "ELEMENT_WISE_MODULUS_TRUNCATE": OnnxMapping("Mod", _AB, _mod(1), divisor="BTensor", note="Mod with fmod=1"),
    "ELEMENT_WISE_MEAN": OnnxMapping("Mean", _AB),
    "ELEMENT_WISE_BIT_SHIFT_LEFT": OnnxMapping("BitShift", _AB, _constant({"direction": "LEFT"}),
                                            note="ONNX leaves shifts by >= the bit width undefined"),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": OnnxMapping("BitShift", _AB, _constant({"direction": "RIGHT"}),
                                             note="ONNX leaves shifts by >= the bit width undefined"),
    "ELEMENT_WISE_IF": OnnxMapping("Where", ("ConditionTensor", *_AB), bool_inputs=("ConditionTensor",),
                                note="Where takes a bool condition; the doc's nonzero is true"),
    "ELEMENT_WISE_IS_INFINITY": OnnxMapping("IsInf", attrs=_is_infinity,
                                         note="InfinityMode -> detect_positive/detect_negative; bool output"),
    "ELEMENT_WISE_CLIP": OnnxMapping("Clip", attrs=clip_bounds, note=_CLIP_NOTE),
    "ELEMENT_WISE_CLIP1": OnnxMapping("Clip", attrs=clip_bounds, note=_CLIP_NOTE),
    "ELEMENT_WISE_THRESHOLD": OnnxMapping("Max", attrs=_threshold, note="max(x, Min) as Max with a scalar Min input"),
    "ELEMENT_WISE_CONSTANT_POW": OnnxMapping(
        "Pow", attrs=lambda a: ({}, (in_type(a, a.f32("Exponent")),)), integer=False,
        note="Exponent becomes a scalar input in the tensor type"),
    "ACTIVATION_CELU": OnnxMapping("Celu", attrs=_named(alpha="Alpha")),
    "ACTIVATION_ELU": OnnxMapping("Elu", attrs=_named(alpha="Alpha")),
    "ACTIVATION_GELU": OnnxMapping("Gelu", attrs=_constant({"approximate": "none"}), opset=20),
    "ACTIVATION_HARD_SIGMOID": OnnxMapping("HardSigmoid", attrs=_named(alpha="Alpha", beta="Beta"),
                                        opset=KERNEL_OPSET,
                                        note="alpha/beta always passed (ONNX defaults 0.2/0.5 equal the doc's)"),
    "ACTIVATION_HARD_SWISH": OnnxMapping("HardSwish", attrs=_hard_swish, opset=18,
                                      note="ONNX fixes alpha=1/6, beta=0.5: other Alpha/Beta are NOT_SUPPORTED"),
    "ACTIVATION_LEAKY_RELU": OnnxMapping("LeakyRelu", attrs=_named(alpha="Alpha")),
    "ACTIVATION_PARAMETERIZED_RELU": OnnxMapping("PRelu", ("InputTensor", "SlopeTensor")),
    "ACTIVATION_SCALED_ELU": OnnxMapping("Selu", attrs=_named(alpha="Alpha", gamma="Gamma"),
                                      note="ONNX Selu: gamma * (alpha * exp(x) - alpha) for x <= 0 (the doc: x > 0 "
                                           "branch first; same at 0)"),
    "ACTIVATION_SHRINK": OnnxMapping("Shrink", attrs=_shrink,
                                  note="Threshold -> lambd, Bias -> bias; Threshold < 0 is NOT_SUPPORTED (branch order)"),
    "ACTIVATION_SOFTPLUS": OnnxMapping("Softplus", attrs=_softplus,
                                    note="ONNX Softplus has no steepness: only Steepness = 1 maps"),
    "ACTIVATION_SWISH": OnnxMapping("Swish", attrs=_named(alpha="SigmoidInputScale"), opset=24,
                                 note="x * sigmoid(alpha * x), alpha = SigmoidInputScale (opset 24)"),
    "ACTIVATION_THRESHOLDED_RELU": OnnxMapping("ThresholdedRelu", attrs=_named(alpha="Alpha")),
    **{op: OnnxMapping(**kwargs) for op, kwargs in _BITWISE.items()},
}
