"""The CPU reference of the operators whose formula is a reviewed one
(`spec.semantics_formula`: the bitwise operators, IS_NAN, ROUND;
docs/bitwise.md), written plainly from the pages, sharing nothing with the
formula engine.

Bitwise operators work on each element's encoding whatever its type (the
pages: "the tensor data type is ignored except for determining the width of
each element"), so every tensor is viewed as the unsigned integer type of
its width.  ROUND works in float64, where ``floor(|x| + 0.5)`` is exact for
every FLOAT32 and FLOAT16 value.  `cpu_ops.OPS` merges `OPS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dmlconform.backends.cpu_ops import Call


def as_bits(a: np.ndarray) -> np.ndarray:
    """``a``'s elements as the unsigned integers of their encoding (a view)."""
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _bitwise(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[Call], np.ndarray]:
    def op(c: Call) -> np.ndarray:
        a, b = c.x("ATensor"), c.x("BTensor")
        return fn(as_bits(a), as_bits(b)).view(a.dtype)
    return op


def _bit_not(c: Call) -> np.ndarray:
    x = c.x()
    return np.invert(as_bits(x)).view(x.dtype)


def _bit_count(c: Call) -> np.ndarray:
    return np.bitwise_count(as_bits(c.x()))


def _is_nan(c: Call) -> np.ndarray:
    return np.isnan(c.x())


def _round(c: Call) -> np.ndarray:
    """The three DML_ROUNDING_MODEs; halves away from zero for TOWARD_INFINITY
    (the ROUND page and DML_ROUNDING_MODE's table: -2.5 -> -3, 2.5 -> 3)."""
    x = c.x().astype(np.float64)
    mode = str(c.raw("RoundingMode", "DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"))
    if mode.endswith("TOWARD_ZERO"):
        y = np.trunc(x)
    elif mode.endswith("TOWARD_INFINITY"):
        y = np.copysign(np.floor(np.abs(x) + 0.5), x)
    else:
        y = np.rint(x)
    return y.astype(c.x().dtype)


OPS: Mapping[str, Callable[[Call], np.ndarray]] = {
    "ELEMENT_WISE_BIT_AND": _bitwise(np.bitwise_and),
    "ELEMENT_WISE_BIT_OR": _bitwise(np.bitwise_or),
    "ELEMENT_WISE_BIT_XOR": _bitwise(np.bitwise_xor),
    "ELEMENT_WISE_BIT_NOT": _bit_not,
    "ELEMENT_WISE_BIT_COUNT": _bit_count,
    "ELEMENT_WISE_IS_NAN": _is_nan,
    "ELEMENT_WISE_ROUND": _round,
}
