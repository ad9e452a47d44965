"""onnxruntime mappings of the reviewed-formula operators (docs/bitwise.md),
merged into `onnxruntime_backend.MAPPINGS` (each entry is the keyword
arguments of an `OnnxMapping`; this module does not import the backend, which
imports it).

ONNX's BitwiseAnd/Or/Xor/Not (opset 18) take integer tensors only: the
doc's float tensors (their encodings, 4_1 and above) are NOT_SUPPORTED.
ONNX Round rounds halves to even, the doc's HALVES_TO_NEAREST_EVEN; ONNX has
no truncation nor halves-away rounding, so the two other modes are
NOT_SUPPORTED.  ONNX has no population count: BIT_COUNT is not mapped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dmlconform.backends.base import NotSupportedError

if TYPE_CHECKING:
    from dmlconform.backends.onnxruntime_backend import Attrs

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
MAPPINGS: Mapping[str, dict[str, Any]] = {
    "ELEMENT_WISE_BIT_AND": {"op_type": "BitwiseAnd", "inputs": _AB, "attrs": _integers_only, "note": _BITWISE_NOTE},
    "ELEMENT_WISE_BIT_OR": {"op_type": "BitwiseOr", "inputs": _AB, "attrs": _integers_only, "note": _BITWISE_NOTE},
    "ELEMENT_WISE_BIT_XOR": {"op_type": "BitwiseXor", "inputs": _AB, "attrs": _integers_only, "note": _BITWISE_NOTE},
    "ELEMENT_WISE_BIT_NOT": {"op_type": "BitwiseNot", "attrs": _integers_only, "note": _BITWISE_NOTE},
    "ELEMENT_WISE_IS_NAN": {"op_type": "IsNaN", "note": "bool output, written as 0/1"},
    "ELEMENT_WISE_ROUND": {"op_type": "Round", "attrs": _halves_to_even,
                           "note": "halves to even only: TOWARD_ZERO and TOWARD_INFINITY are NOT_SUPPORTED"},
}
