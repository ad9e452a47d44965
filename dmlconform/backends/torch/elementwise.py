"""torch mappings of the element-wise operators: the formula ones and the
reviewed-formula ones (docs/bitwise.md), merged into `backend.TORCH_OPS`.

torch's bitwise_* take integer tensors: a float tensor (or an unsigned one
wider than a byte, whose kernels torch lacks) is viewed as the signed
integer type of its width and the result viewed back, which is exactly the
doc's "native encoding".  ``torch.round`` rounds halves to even and
``torch.trunc`` toward zero; torch has no halves-away rounding (TOWARD_INFINITY
is NOT_SUPPORTED) and no population count (BIT_COUNT is not mapped).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs, clip_bounds, require
from dmlconform.backends.torch.ops import TorchOp, torch_module

_AB = ("ATensor", "BTensor")
HALVES_TO_EVEN = "DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"
TOWARD_ZERO = "DML_ROUNDING_MODE_TOWARD_ZERO"


def _bits(t: Any, x: Any) -> Any:
    """``x`` as the signed integer type of its width (uint8 and signed types as they are)."""
    if x.dtype in (t.uint8, t.int8, t.int16, t.int32, t.int64):
        return x
    return x.view({2: t.int16, 4: t.int32, 8: t.int64}[x.element_size()])


def _on_encodings(name: str) -> dict[str, Any]:
    return {"fn": lambda t, xs, a: getattr(t, name)(_bits(t, xs[0]), _bits(t, xs[1])).view(xs[0].dtype),
            "inputs": _AB, "note": f"{name} on each tensor's encoding (float and wide unsigned tensors viewed as "
                                   "signed integers of their width)"}


def _mode(a: Attrs) -> str:
    return str(a.raw("RoundingMode") or HALVES_TO_EVEN)


def _round_check(a: Attrs) -> None:
    if _mode(a) not in (HALVES_TO_EVEN, TOWARD_ZERO):
        raise NotSupportedError(f"RoundingMode={_mode(a)}: torch has no rounding of halves away from zero")


def _round(t: Any, xs: list[Any], a: Attrs) -> Any:
    return t.round(xs[0]) if _mode(a) == HALVES_TO_EVEN else t.trunc(xs[0])


def _round_in_place(x: Any, a: Attrs) -> None:
    x.round_() if _mode(a) == HALVES_TO_EVEN else x.trunc_()


#: Spec operator -> the keyword arguments of its `TorchOp`.
_BITWISE: Mapping[str, dict[str, Any]] = {
    "ELEMENT_WISE_BIT_AND": _on_encodings("bitwise_and"),
    "ELEMENT_WISE_BIT_OR": _on_encodings("bitwise_or"),
    "ELEMENT_WISE_BIT_XOR": _on_encodings("bitwise_xor"),
    "ELEMENT_WISE_BIT_NOT": {"fn": lambda t, xs, a: t.bitwise_not(_bits(t, xs[0])).view(xs[0].dtype),
                             "note": "bitwise_not on the encoding (as BIT_AND)"},
    "ELEMENT_WISE_IS_NAN": {"fn": lambda t, xs, a: t.isnan(xs[0])},
    "ELEMENT_WISE_ROUND": {"fn": _round, "inplace": _round_in_place, "check": _round_check,
                           "note": "round (halves to even) and trunc; TOWARD_INFINITY is NOT_SUPPORTED"},
}


def _method(name: str, *args: Callable[[Attrs], Any]) -> TorchOp:
    """A Tensor method with an in-place twin (``x.abs()`` / ``x.abs_()``)."""
    return TorchOp(lambda t, xs, a: getattr(xs[0], name)(*(f(a) for f in args)),
                   inplace=lambda x, a: getattr(x, name + "_")(*(f(a) for f in args)))

def _functional(name: str, **kwargs: Callable[[Attrs], Any]) -> TorchOp:
    """A torch.nn.functional activation with ``inplace=True``."""
    def call(t: Any, x: Any, a: Attrs, inplace: bool) -> Any:
        return getattr(t.nn.functional, name)(x, **{k: f(a) for k, f in kwargs.items()}, inplace=inplace)
    return TorchOp(lambda t, xs, a: call(t, xs[0], a, False), inplace=lambda x, a: call(torch_module(), x, a, True))

def _binary(name: str, **kwargs: Any) -> TorchOp:
    return TorchOp(lambda t, xs, a: getattr(t, name)(xs[0], xs[1], **kwargs), inputs=("ATensor", "BTensor"))

def _fixed(function: str, **values: Fraction | float) -> Callable[[Attrs], None]:
    """A check that the case holds the values ``function`` fixes."""
    def check(a: Attrs) -> None:
        for name, want in values.items():
            require(a, name, want, function)
    return check

def _shrink_check(a: Attrs) -> None:
    threshold, bias = a.f32("Threshold"), a.f32("Bias")
    if threshold < 0:
        raise NotSupportedError(f"Threshold={threshold} < 0: torch's shrinks need lambd >= 0")
    if bias not in (0.0, threshold):
        raise NotSupportedError(f"Bias={bias}: torch has hardshrink (Bias = 0) and softshrink (Bias = Threshold) only")

def _shrink(t: Any, xs: list[Any], a: Attrs) -> Any:
    threshold, bias = a.f32("Threshold"), a.f32("Bias")
    f = t.nn.functional
    return f.hardshrink(xs[0], threshold) if bias == 0.0 else f.softshrink(xs[0], threshold)

def _swish(t: Any, xs: list[Any], a: Attrs) -> Any:
    scale = a.f32("SigmoidInputScale")
    x = xs[0]
    return t.nn.functional.silu(x) if scale == 1.0 else x * t.sigmoid(x * scale)

def _softplus_threshold(a: Attrs) -> float:
    # torch returns x itself where beta * x > threshold; that is exact in the
    # target type only if exp(-threshold) is below its rounding: 20 for
    # float16/float32 (exp(-20) ~ 2e-9), 40 for float64 (exp(-40) ~ 4e-18).
    return 40.0 if a.dtype == np.float64 else 20.0

_SELU_ALPHA, _SELU_GAMMA = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

#: Clip as clamp(x, Min, Max), the bounds resolved as for onnxruntime (Min >
#: Max is NOT_SUPPORTED: torch gives Max there, the doc Min).
_CLAMP = TorchOp(lambda t, xs, a: t.clamp(xs[0], *clip_bounds(a)[1]), check=lambda a: None if clip_bounds(a) else None,
                 note="clamp(x, Min, Max); Min > Max is NOT_SUPPORTED (torch gives Max, the doc Min)")

def _divide(t: Any, a: Any, b: Any) -> Any:
    return t.div(a, b, rounding_mode="trunc") if not a.is_floating_point() else t.div(a, b)

def _float_only(a: Attrs, what: str) -> None:
    if a.dtype.kind in "iu":
        raise NotSupportedError(f"{what} on {a.dtype}: the doc truncates and fits the FLOAT attribute, torch promotes")

def _is_inf(t: Any, x: Any, a: Attrs) -> Any:
    mode = str(a.raw("InfinityMode") or "EITHER").upper()
    mode = {"0": "EITHER", "1": "POSITIVE", "2": "NEGATIVE"}.get(mode, mode)
    if mode.endswith("POSITIVE"):
        return t.isposinf(x)
    return t.isneginf(x) if mode.endswith("NEGATIVE") else t.isinf(x)


#: The element-wise operators this backend maps (`backend.TORCH_OPS` merges them).
TORCH_OPS: Mapping[str, TorchOp] = {
    **{op: _method(name) for op, name in {
        "ELEMENT_WISE_ABS": "abs", "ELEMENT_WISE_ACOS": "acos", "ELEMENT_WISE_ACOSH": "acosh",
        "ELEMENT_WISE_ASIN": "asin", "ELEMENT_WISE_ASINH": "asinh", "ELEMENT_WISE_ATAN": "atan",
        "ELEMENT_WISE_ATANH": "atanh", "ELEMENT_WISE_CEIL": "ceil", "ELEMENT_WISE_COS": "cos",
        "ELEMENT_WISE_COSH": "cosh", "ELEMENT_WISE_ERF": "erf", "ELEMENT_WISE_EXP": "exp",
        "ELEMENT_WISE_FLOOR": "floor", "ELEMENT_WISE_LOG": "log", "ELEMENT_WISE_NEGATE": "neg",
        "ELEMENT_WISE_RECIP": "reciprocal", "ELEMENT_WISE_SIGN": "sign", "ELEMENT_WISE_SIN": "sin",
        "ELEMENT_WISE_SINH": "sinh", "ELEMENT_WISE_SQRT": "sqrt", "ELEMENT_WISE_TAN": "tan",
        "ELEMENT_WISE_TANH": "tanh", "ACTIVATION_SIGMOID": "sigmoid", "ACTIVATION_TANH": "tanh",
    }.items()},
    "ELEMENT_WISE_IDENTITY": TorchOp(lambda t, xs, a: xs[0].clone(), inplace=lambda x, a: None),
    "ACTIVATION_IDENTITY": TorchOp(lambda t, xs, a: xs[0].clone(), inplace=lambda x, a: None),
    "ACTIVATION_RELU": _functional("relu"),
    "ACTIVATION_ELU": _functional("elu", alpha=lambda a: a.f32("Alpha")),
    "ACTIVATION_CELU": _functional("celu", alpha=lambda a: a.f32("Alpha")),
    "ACTIVATION_LEAKY_RELU": _functional("leaky_relu", negative_slope=lambda a: a.f32("Alpha")),
    "ACTIVATION_THRESHOLDED_RELU": _functional("threshold", threshold=lambda a: a.f32("Alpha"), value=lambda a: 0.0),
    "ACTIVATION_SCALED_ELU": TorchOp(
        _functional("selu").fn, inplace=_functional("selu").inplace,
        check=_fixed("torch.selu", Alpha=_SELU_ALPHA, Gamma=_SELU_GAMMA),
        note="torch.selu fixes alpha and gamma: only the doc's default values map"),
    "ACTIVATION_HARD_SIGMOID": TorchOp(
        _functional("hardsigmoid").fn, inplace=_functional("hardsigmoid").inplace,
        check=_fixed("torch.hardsigmoid", Alpha=Fraction(1, 6), Beta=0.5),
        note="torch.hardsigmoid is relu6(x + 3) / 6: only Alpha = 1/6, Beta = 0.5 map (the doc's default is 0.2)"),
    "ACTIVATION_HARD_SWISH": TorchOp(
        _functional("hardswish").fn, inplace=_functional("hardswish").inplace,
        check=_fixed("torch.hardswish", Alpha=Fraction(1, 6), Beta=0.5),
        note="torch.hardswish is x * relu6(x + 3) / 6: only Alpha = 1/6, Beta = 0.5 map"),
    "ACTIVATION_SHRINK": TorchOp(_shrink, check=_shrink_check,
                                 note="hardshrink where Bias = 0, softshrink where Bias = Threshold; else NOT_SUPPORTED"),
    "ACTIVATION_SOFTSIGN": TorchOp(lambda t, xs, a: t.nn.functional.softsign(xs[0])),
    "ACTIVATION_SWISH": TorchOp(_swish, note="silu where SigmoidInputScale = 1, else x * sigmoid(scale * x)"),
    "ACTIVATION_SOFTPLUS": TorchOp(
        lambda t, xs, a: t.nn.functional.softplus(xs[0], beta=a.f32("Steepness"), threshold=_softplus_threshold(a)),
        note="beta = Steepness; threshold chosen so that torch's linear tail is exact in the type"),
    "ACTIVATION_GELU": TorchOp(lambda t, xs, a: t.nn.functional.gelu(xs[0])),
    "ELEMENT_WISE_ADD": _binary("add"), "ELEMENT_WISE_ADD1": _binary("add"),
    "ELEMENT_WISE_SUBTRACT": _binary("sub"), "ELEMENT_WISE_MULTIPLY": _binary("mul"),
    "ELEMENT_WISE_MAX": _binary("maximum"), "ELEMENT_WISE_MIN": _binary("minimum"),
    "ELEMENT_WISE_MODULUS_TRUNCATE": _binary("fmod"), "ELEMENT_WISE_MODULUS_FLOOR": _binary("remainder"),
    "ELEMENT_WISE_DIVIDE": TorchOp(lambda t, xs, a: _divide(t, xs[0], xs[1]), inputs=("ATensor", "BTensor"),
                                   divisor="BTensor", note="integer tensors: div(rounding_mode='trunc')"),
    "ELEMENT_WISE_CLIP": _CLAMP,
    "ELEMENT_WISE_CLIP1": _CLAMP,
    "ELEMENT_WISE_LOGICAL_EQUALS": _binary("eq"), "ELEMENT_WISE_LOGICAL_GREATER_THAN": _binary("gt"),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _binary("ge"), "ELEMENT_WISE_LOGICAL_LESS_THAN": _binary("lt"),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _binary("le"),
    "ELEMENT_WISE_LOGICAL_AND": _binary("logical_and"), "ELEMENT_WISE_LOGICAL_OR": _binary("logical_or"),
    "ELEMENT_WISE_LOGICAL_XOR": _binary("logical_xor"),
    "ELEMENT_WISE_LOGICAL_NOT": TorchOp(lambda t, xs, a: t.logical_not(xs[0])),
    "ELEMENT_WISE_POW": TorchOp(lambda t, xs, a: t.pow(xs[0], xs[1]), inputs=("InputTensor", "ExponentTensor")),
    "ELEMENT_WISE_CONSTANT_POW": TorchOp(lambda t, xs, a: t.pow(xs[0], a.f32("Exponent")),
                                         check=lambda a: _float_only(a, "pow with a FLOAT exponent")),
    "ELEMENT_WISE_IF": TorchOp(lambda t, xs, a: t.where(xs[0] != 0, xs[1], xs[2]),
                               inputs=("ConditionTensor", "ATensor", "BTensor")),
    "ELEMENT_WISE_IS_INFINITY": TorchOp(lambda t, xs, a: _is_inf(t, xs[0], a)),
    "ELEMENT_WISE_THRESHOLD": TorchOp(lambda t, xs, a: t.clamp(xs[0], min=a.f32("Min")),
                                      check=lambda a: _float_only(a, "clamp with a FLOAT bound"),
                                      note="max(x, Min) as clamp(x, min=Min); integer tensors are NOT_SUPPORTED"),
    **{op: TorchOp(**kwargs) for op, kwargs in _BITWISE.items()},
}
