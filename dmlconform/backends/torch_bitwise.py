"""torch mappings of the reviewed-formula operators (docs/bitwise.md),
merged into `torch_backend.TORCH_OPS` (each entry is the keyword arguments
of a `TorchOp`; this module does not import the backend, which imports it).

torch's bitwise_* take integer tensors: a float tensor (or an unsigned one
wider than a byte, whose kernels torch lacks) is viewed as the signed
integer type of its width and the result viewed back, which is exactly the
doc's "native encoding".  ``torch.round`` rounds halves to even and
``torch.trunc`` toward zero; torch has no halves-away rounding (TOWARD_INFINITY
is NOT_SUPPORTED) and no population count (BIT_COUNT is not mapped).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dmlconform.backends.base import NotSupportedError

if TYPE_CHECKING:
    from dmlconform.backends.onnxruntime_backend import Attrs

_AB = ("ATensor", "BTensor")
HALVES_TO_EVEN = "DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"
TOWARD_ZERO = "DML_ROUNDING_MODE_TOWARD_ZERO"


def _bits(t: Any, x: Any) -> Any:
    """``x`` as the signed integer type of its width (uint8 and signed types as they are)."""
    if x.dtype in (t.uint8, t.int8, t.int16, t.int32, t.int64):
        return x
    return x.view({2: t.int16, 4: t.int32, 8: t.int64}[x.element_size()])


def _binary(name: str) -> dict[str, Any]:
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
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "ELEMENT_WISE_BIT_AND": _binary("bitwise_and"),
    "ELEMENT_WISE_BIT_OR": _binary("bitwise_or"),
    "ELEMENT_WISE_BIT_XOR": _binary("bitwise_xor"),
    "ELEMENT_WISE_BIT_NOT": {"fn": lambda t, xs, a: t.bitwise_not(_bits(t, xs[0])).view(xs[0].dtype),
                             "note": "bitwise_not on the encoding (as BIT_AND)"},
    "ELEMENT_WISE_IS_NAN": {"fn": lambda t, xs, a: t.isnan(xs[0])},
    "ELEMENT_WISE_ROUND": {"fn": _round, "inplace": _round_in_place, "check": _round_check,
                           "note": "round (halves to even) and trunc; TOWARD_INFINITY is NOT_SUPPORTED"},
}
