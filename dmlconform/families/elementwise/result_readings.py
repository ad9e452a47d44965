"""Readings that replace a result only where it is special: an integer
divisor of 0, a float modulus by +-inf, pow at IEEE 754's special values,
and how a float out of an integer type's range converts
(docs/ambiguities.md; `families.elementwise.readings` offers them as alternatives).

Issue #22 item 5: these cost no evaluation of the formula.  Each takes the
values of an evaluation the oracle already made (the primary one, or a
float-arithmetic reading's float values) and changes only the elements of
a mask that numpy computes from the inputs (``b == 0``, ``isinf(b)``, the
special values of pow), so a batch without such elements costs a
comparison, and one with them a few vectorised operations.

What each reading gives was measured (x86-64, this repository's pinned
onnxruntime, torch 2.13 and numpy) or is documented where it was not:

* integer ``a / 0`` and ``a % 0``: numpy gives 0; onnxruntime and torch on
  the CPU refuse ("Integer division by zero", ZeroDivisionError); torch on
  CUDA gives -1 (every bit set, docs/results/README.md); AArch64's SDIV and
  UDIV give a quotient of 0 (Arm ARM, "SDIV"), so ``a - b * (a / b)`` is a;
* ``fmod(a, +-inf)`` is a (C11 7.12.10.1, F.10.7.1); numpy's and torch's
  ``remainder`` add b where a and b differ in sign (1 % -inf = -inf);
* pow: IEEE 754-2019 9.2.1 (C11 F.10.4.4), which numpy, torch and
  onnxruntime follow: pow(-inf, 0.5) = +inf, pow(-0, -3) = -inf,
  pow(-1, +-inf) = 1, pow(NaN, 0) = pow(1, NaN) = 1, pow(-2, 0.5) = NaN;
* float -> integer out of range: C leaves it undefined (C11 6.3.1.4).
  x86's cvttss2si/cvttsd2si give the "integer indefinite" (INT32_MIN, or
  INT64_MIN for 64-bit types); narrower types go through int32 and keep its
  low bits: onnxruntime's Cast, torch's ``to`` and numpy's ``astype`` give
  0 for 3e38 and NaN in INT8/INT16/UINT8 and INT32_MIN in INT32 (measured).
  ARM's FCVTZS and CUDA's ``cvt.rzi`` saturate (NaN to 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.families.elementwise.formula_oracle import integer_from_float, target_dtype
from dmlconform.formula.rounding import float32_attribute
from dmlconform.formula.tree import FormulaTree
from dmlconform.spec import model as m
from dmlconform.spec.ambiguity import Modulus, integer_dividend, integer_divisors, modulus, pow_arguments


@dataclass(frozen=True, slots=True)
class ResultShape:
    """What of a formula's result the readings here need: its divisors (input
    names), its modulus form and its pow arguments, each empty or None
    where the formula has none."""

    divisors: tuple[str, ...]
    modulus: Modulus | None
    pow_args: tuple[str, str] | None
    #: The dividend (an input's name) where the formula divides once by an input.
    dividend: str | None = None

    @classmethod
    def of(cls, tree: FormulaTree, inputs: frozenset[str]) -> ResultShape:
        return cls(integer_divisors(tree, inputs), modulus(tree), pow_arguments(tree), integer_dividend(tree, inputs))


def zero_divisors(shape: ResultShape, chunk: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """Where a divisor of ``chunk`` is 0; None where nothing divides."""
    found = [np.asarray(chunk[name]) == 0 for name in shape.divisors if name in chunk]
    return np.logical_or.reduce(found) if found else None


def infinite_divisors(shape: ResultShape, chunk: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """Where a modulus's divisor is +-inf and its dividend finite; None where
    the formula is no modulus or its inputs are not float."""
    mod = shape.modulus
    if mod is None or mod.divisor not in chunk or chunk[mod.divisor].dtype.kind != "f":
        return None
    return np.isinf(chunk[mod.divisor]) & np.isfinite(chunk[mod.dividend])


def pow_specials(shape: ResultShape, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray | None:
    """Where pow's arguments are one of IEEE 754's special cases (a NaN,
    an infinity, a zero, a base of +-1, a negative base to a non-integer
    power); None where the result is no pow of float values."""
    args = _pow_values(shape, chunk, attrs)
    if args is None:
        return None
    x, y = args
    with np.errstate(invalid="ignore"):
        return (np.isnan(x) | np.isnan(y) | np.isinf(x) | np.isinf(y) | (x == 0) | (y == 0) | (np.abs(x) == 1)
                | ((x < 0) & (np.trunc(y) != y)))


def ieee_pow(shape: ResultShape, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any],
             values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``values`` with IEEE 754's pow at ``where`` (exact there: each special
    value is 0, +-1, +-inf or NaN, or the sign of a power of zero)."""
    args = _pow_values(shape, chunk, attrs)
    assert args is not None  # `pow_specials` found the mask
    x, y = args
    out = values.copy()
    with np.errstate(all="ignore"):
        out[where] = np.power(x[where], y[where]).astype(values.dtype)
    return out


def fmod_values(shape: ResultShape, chunk: Mapping[str, np.ndarray], values: np.ndarray,
                where: np.ndarray) -> np.ndarray:
    """``values`` with C's fmod at ``where`` (b infinite, a finite): a; the
    floor modulus gives b instead where a is not 0 and the signs differ."""
    mod = shape.modulus
    assert mod is not None  # `infinite_divisors` found the mask
    a, b = chunk[mod.dividend], chunk[mod.divisor]
    result = a
    if mod.rounding == "floor":
        result = np.where((a != 0) & (np.signbit(a) != np.signbit(b)), b, a)
    out = values.copy()
    out[where] = np.asarray(result, dtype=values.dtype)[where]
    return out


def division_by_zero(shape: ResultShape, chunk: Mapping[str, np.ndarray], values: np.ndarray, where: np.ndarray,
                     how: m.DivisionByZero) -> np.ndarray:
    """``values`` (an integer type) with ``how``'s result where a divisor is
    0 (``QUOTIENT_ZERO`` is the formula's own: unchanged).  Every bit set
    is -1 in the type; in a 64-bit type, 2^32 - 1 where the dividend is in
    [0, 2^32): CUDA divides such operands in 32 bits (measured, torch 2.11
    on an H200: 7 // 0 is 4294967295 in int64, -5 // 0 and 2^32 // 0 are -1)."""
    if how is m.DivisionByZero.QUOTIENT_ZERO:
        return values
    out = values.copy()
    if how is m.DivisionByZero.ZERO:
        out[where] = 0
        return out
    ones = np.full(values.shape, -1).astype(values.dtype)  # integer astype: every bit set
    dividend = chunk.get(shape.dividend) if shape.dividend is not None else None
    if values.dtype.itemsize == 8 and dividend is not None:
        small = (dividend >= 0) & (dividend <= 0xFFFFFFFF)
        ones = np.where(small, np.array(0xFFFFFFFF, dtype=values.dtype), ones)
    out[where] = ones[where]
    return out


def to_integer(values: np.ndarray, dtype: Any, overflow: m.Overflow, how: m.FloatToInteger) -> np.ndarray:
    """Float ``values`` converted toward zero into an integer ``dtype``, a
    value out of range (or NaN, or an infinity) as ``how`` says: as
    ``overflow`` (saturating, an infinity gives the bound), or x86's
    integer indefinite (module docstring)."""
    out = target_dtype(dtype)
    v = np.asarray(values, dtype=np.float64)
    if how is m.FloatToInteger.AS_OVERFLOW and overflow is m.Overflow.WRAP:
        return integer_from_float(v, out, m.Overflow.WRAP)
    if how is m.FloatToInteger.AS_OVERFLOW:
        return _saturated(v, out)
    wide = np.dtype(np.int64) if out.itemsize == 8 or out == np.uint32 else np.dtype(np.int32)
    if how is m.FloatToInteger.WIDE_SATURATE:
        return _saturated(v, wide).astype(out)  # integer astype keeps the low bits
    info = np.iinfo(wide)
    with np.errstate(invalid="ignore"):
        outside = ~np.isfinite(v) | (np.trunc(v) < float(info.min)) | (np.trunc(v) >= -float(info.min))
    through = integer_from_float(np.where(outside, 0.0, v), wide, m.Overflow.WRAP)
    return np.where(outside, info.min, through).astype(wide).astype(out)  # integer astype keeps the low bits


def _saturated(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float64 ``values`` toward zero, saturated to ``dtype`` (an infinity
    to its bound, NaN to 0)."""
    info = np.iinfo(dtype)
    found = integer_from_float(values, dtype, m.Overflow.SATURATE)
    return np.where(values == np.inf, info.max, np.where(values == -np.inf, info.min, found)).astype(dtype)


def _pow_values(shape: ResultShape, chunk: Mapping[str, np.ndarray],
                attrs: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """pow's base and exponent as float64 arrays of the chunk's length (an
    attribute is a FLOAT member: its float32 value); None where they are
    not float values."""
    if shape.pow_args is None or not chunk:
        return None
    size = len(next(iter(chunk.values())))
    found = []
    for name in shape.pow_args:
        if name in chunk:
            if chunk[name].dtype.kind != "f":
                return None
            found.append(np.asarray(chunk[name], dtype=np.float64))
        elif name in attrs:
            found.append(np.full(size, float32_attribute(attrs[name])))
        else:
            return None
    return found[0], found[1]
