"""One rounding from float64 (or an exact rational) to the target type,
round-to-nearest-even, and the neighbours of a value in that type.

DESIGN.md, "The oracle": the oracle computes in float64 and rounds once.  numpy's
float64 -> float32 and float64 -> float16 casts round correctly; ml_dtypes'
float64 -> bfloat16 cast goes through float32 and can round twice, so every
other float type goes through `round_exact`, which works from `finfo` alone
(STYLE.md: per-type facts from finfo, no per-type tables).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.compare import finfo, ordered_bits

#: Types whose float64 cast numpy performs with a single correct rounding.
NATIVE = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16))


def to_float(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``values`` (float64, or long double) rounded to the float type
    ``dtype``, RNE, with overflow to infinity.  NaN stays NaN, signs of zero
    are kept."""
    dtype = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.asarray(values).dtype == np.longdouble and dtype != np.longdouble:
            return round_exact(values, dtype).astype(dtype)
        if dtype in NATIVE:
            return np.asarray(values, dtype=np.float64).astype(dtype)
        return round_exact(np.asarray(values, dtype=np.float64), dtype).astype(dtype)


def round_exact(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float64 (or long double) values rounded to the grid of ``dtype``, still
    in their own type: scale each value so its last kept bit is the units
    place, ``rint`` (RNE), scale back.  All steps are exact for types narrower
    than the values' type."""
    info = finfo(dtype)
    v = np.asarray(values)
    if v.dtype not in (np.float64, np.longdouble):
        v = v.astype(np.float64)
    _, exp = np.frexp(v)  # v = m * 2**exp, 0.5 <= |m| < 1
    quantum = np.maximum(exp - 1, info.minexp) - info.nmant
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.ldexp(np.rint(np.ldexp(v, -quantum)), quantum)
        limit = float(info.max)
        over = np.abs(out) > limit
        if over.any():
            out = np.where(over, np.copysign(np.inf, v), out)
    return np.where(np.isfinite(v), np.copysign(out, v), v)


def float32_attribute(value: Any) -> float:
    """A FLOAT attribute as its struct member holds it: a number rounded to
    float32, an exact text such as "1/6" rounded once from its exact value
    (`fraction_to_float`, as the oracle rounds it)."""
    if isinstance(value, str):
        return fraction_to_float(Fraction(value), np.float32)
    return float(np.float32(value))


def fraction_to_float(value: Fraction, dtype: Any) -> float:
    """The exact rational ``value`` rounded once to ``dtype`` (RNE), returned as
    a Python float; for attributes written exactly, such as ``1/6``."""
    dtype = np.dtype(dtype)
    info = finfo(dtype)
    half_top_ulp = Fraction(2) ** (info.maxexp - 1 - info.nmant) / 2
    if abs(value) >= Fraction(float(info.max)) + half_top_ulp:
        return math.copysign(math.inf, value)
    guess = to_float(np.asarray([float(value)]), dtype)
    candidates = np.concatenate([guess, neighbours(guess, -1), neighbours(guess, 1)]).astype(np.float64)
    finite = [float(c) for c in candidates if math.isfinite(float(c))]
    return min(finite, key=lambda c: (abs(Fraction(c) - value), _odd(c, dtype)))


def _odd(c: float, dtype: np.dtype) -> bool:
    bits = int(ordered_bits(np.asarray([c]).astype(dtype))[0])
    return bool(bits & 1)


def neighbours(values: np.ndarray, direction: int) -> np.ndarray:
    """The next representable value of the same type toward +inf
    (``direction`` 1) or -inf (-1): nextafter for every float type, through
    the ordered bit keys.  NaN and the infinity in that direction stay."""
    values = np.asarray(values)
    keys = ordered_bits(values, signed_zero=True) + direction
    out = _from_keys(keys, values.dtype)
    with np.errstate(invalid="ignore"):  # NaN compares false (ml_dtypes' types warn for it)
        stuck = np.isnan(values) | (np.isinf(values) & ((values > 0) == (direction > 0)))
    return np.where(stuck, values, out)


def _from_keys(keys: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Inverse of ``ordered_bits(..., signed_zero=True)``."""
    bits = 8 * dtype.itemsize
    negative = keys < 0
    magnitude = np.where(negative, -(keys + 1), keys).astype(np.uint64)
    raw = magnitude | np.where(negative, np.uint64(1) << np.uint64(bits - 1), np.uint64(0))
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    return raw.astype(unsigned).view(dtype)


def midpoints(rounded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For values of a float type, the float64 points halfway to the next value
    below and above: the rounding boundaries around each value."""
    r = rounded.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        below = (neighbours(rounded, -1).astype(np.float64) + r) / 2
        above = (neighbours(rounded, 1).astype(np.float64) + r) / 2
    return below, above
