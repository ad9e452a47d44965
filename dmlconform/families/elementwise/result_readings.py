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
* float -> integer out of range: C leaves it undefined (C11 6.3.1.4).  Each
  reading is what one platform's instruction sequence gives, element by
  element (`to_integer`; docs/ambiguities.md has the table and the
  measurements, tests/ambiguity/conversions/ the programs and their output):
  x86's scalar cvttss2si/cvttsd2si (``indefinite``), its vectorised
  cvttps2dq/cvttpd2dq loops (``x86-vector``: gcc -O3, numpy's contiguous
  casts), AVX-512's unsigned conversions (``unsigned-indefinite``), ARM's
  scalar FCVTZS (``wide-saturate``, as torch on CUDA) and FCVTZU
  (``arm-unsigned``), its NEON loops (``arm-vector``); CUDA's ``cvt.rzi``
  saturates to the type itself (``as-overflow`` with saturation).
"""

from __future__ import annotations

import functools
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


def to_integer(values: np.ndarray, dtype: Any, overflow: m.Overflow, how: m.FloatToInteger, *,
               source: Any = np.float64) -> np.ndarray:
    """Float ``values`` (computed in ``source``, float32 or float64)
    converted toward zero into an integer ``dtype``, a value out of range
    (or NaN, or an infinity) as ``how`` says: as ``overflow`` (saturating,
    an infinity gives the bound, NaN 0), or as one platform's instructions
    give it (`_PLATFORMS`)."""
    out = target_dtype(dtype)
    v = np.asarray(values, dtype=np.float64)
    if how is m.FloatToInteger.AS_OVERFLOW and overflow is m.Overflow.WRAP:
        return integer_from_float(v, out, m.Overflow.WRAP)
    if how is m.FloatToInteger.AS_OVERFLOW:
        return _saturated(v, out)
    with np.errstate(invalid="ignore"):
        return _PLATFORMS[how](v, out, np.dtype(source))


def _x86_scalar(v: np.ndarray, out: np.dtype, source: np.dtype) -> np.ndarray:
    """x86's scalar code (gcc and clang at -O2, numpy's scalar tail):
    cvttss2si/cvttsd2si into a 32-bit register (64-bit for 64-bit types and
    UINT32), its low bits kept; UINT64 by the sign-bias sequence
    (`_biased`): no instruction converts to it before AVX-512."""
    if out == np.uint64:
        return _biased(v, out)
    return _indefinite(v, np.dtype(np.int64 if out.itemsize == 8 or out == np.uint32 else np.int32)).astype(out)


def _x86_vector(v: np.ndarray, out: np.dtype, source: np.dtype) -> np.ndarray:
    """x86's SSE2/AVX2 loops (gcc -O3, numpy's contiguous casts): UINT32 by
    the sign-bias sequence over cvttps2dq/cvttpd2dq (`_biased`); every other
    type as the scalar code gives it (measured: gcc 12, numpy 2.4)."""
    return _biased(v, out) if out == np.uint32 else _x86_scalar(v, out, source)


def _x86_avx512(v: np.ndarray, out: np.dtype, source: np.dtype) -> np.ndarray:
    """AVX-512's unsigned conversions (vcvttss2usi/vcvttsd2usi,
    vcvttps2udq/vcvttpd2udq; gcc -mavx512f emits them for UINT32 and UINT64):
    a value out of range or NaN gives 2^bits - 1, "the unsigned integer
    indefinite" (Intel SDM vol. 2, VCVTTSD2USI); 8- and 16-bit types still
    go through the signed 32-bit conversions."""
    if out not in (np.dtype(np.uint32), np.dtype(np.uint64)):
        return _x86_scalar(v, out, source)
    t = np.trunc(v)
    inside = np.isfinite(v) & (t >= 0) & (t < 2.0 ** (8 * out.itemsize))
    found = integer_from_float(np.where(inside, v, 0.0), out, m.Overflow.WRAP)
    return np.where(inside, found, np.iinfo(out).max).astype(out)


def _wide_saturate(v: np.ndarray, out: np.dtype, source: np.dtype) -> np.ndarray:
    """ARM's scalar FCVTZS (gcc for signed types) and torch on CUDA:
    saturated to int32 (int64 for 64-bit types and UINT32), NaN 0, the low
    bits kept."""
    return _saturated(v, np.dtype(np.int64 if out.itemsize == 8 or out == np.uint32 else np.int32)).astype(out)


def _arm_unsigned(v: np.ndarray, out: np.dtype, source: np.dtype) -> np.ndarray:
    """ARM's scalar code for unsigned types (gcc emits FCVTZU into a w or x
    register): saturated to uint32 (uint64), NaN 0, the low bits kept;
    signed types as `_wide_saturate` (FCVTZS)."""
    if out.kind != "u":
        return _wide_saturate(v, out, source)
    return _saturated(v, np.dtype(np.uint64 if out.itemsize == 8 else np.uint32)).astype(out)


def _arm_vector(v: np.ndarray, out: np.dtype, source: np.dtype) -> np.ndarray:
    """ARM's NEON loops (gcc -O2 and -O3 on AArch64): FCVTZS on lanes of the
    wider of the source and the target (v.4s for float, v.2d for double),
    FCVTZU where the target is unsigned of that width, then narrowed (XTN:
    the low bits kept).  double -> INT32 gives 3e9's low bits, -1294967296."""
    bits = 8 * max(source.itemsize, out.itemsize)
    kind = "u" if out.kind == "u" and 8 * out.itemsize == bits else "i"
    return _saturated(v, np.dtype(f"{kind}{bits // 8}")).astype(out)


def _indefinite(v: np.ndarray, wide: np.dtype) -> np.ndarray:
    """cvtt*2si into signed ``wide``: out of its range, an infinity or NaN
    gives its minimum, "the integer indefinite"."""
    info = np.iinfo(wide)
    t = np.trunc(v)
    outside = ~np.isfinite(v) | (t < float(info.min)) | (t >= -float(info.min))
    through = integer_from_float(np.where(outside, 0.0, v), wide, m.Overflow.WRAP)
    return np.where(outside, info.min, through).astype(wide)


def _biased(v: np.ndarray, out: np.dtype) -> np.ndarray:
    """x86's conversion to an unsigned type of b bits through signed b-bit
    cvtt*2si: a value >= 2^(b-1) has 2^(b-1) subtracted before and its top
    bit flipped after.  So t mod 2^b for t in [-2^(b-1), 2^b); 2^(b-1)
    below, at -inf and NaN (the indefinite, unflipped); 0 from 2^b and at
    +inf (the indefinite, flipped)."""
    signed = np.dtype(f"i{out.itemsize}")
    half = 2.0 ** (8 * out.itemsize - 1)
    big = v >= half
    found = _indefinite(np.where(big, v - half, v), signed)
    return np.where(big, found ^ np.iinfo(signed).min, found).astype(signed).astype(out)


#: How each platform's reading converts (`to_integer`); ``as-overflow`` is the integer-overflow reading's.
_PLATFORMS = {
    m.FloatToInteger.INDEFINITE: _x86_scalar, m.FloatToInteger.X86_VECTOR: _x86_vector,
    m.FloatToInteger.UNSIGNED_INDEFINITE: _x86_avx512, m.FloatToInteger.WIDE_SATURATE: _wide_saturate,
    m.FloatToInteger.ARM_UNSIGNED: _arm_unsigned, m.FloatToInteger.ARM_VECTOR: _arm_vector,
}


#: Values on both sides of every bound where a conversion reading changes
#: rule (the types' ranges, 2^31, 2^32, 2^63, 2^64), between them, and NaN.
_PROBES = (np.nan, np.inf, -np.inf, -0.5, -1.0, -1.5, 255.5, 300.0, -300.0, 70000.0, -70000.0, 2147483647.0,
           -2147483648.0, -2147483649.0, 2147483648.0, 3e9, -3e9, 4294967295.0, 4294967296.0, 5e9, -5e9, 1e19, -1e19,
           2.0 ** 63, 1.5 * 2.0 ** 63, 2.0 ** 64, 3.4e38, -3.4e38)


@functools.cache
def distinct_conversions(dtype: m.DataType) -> frozenset[m.FloatToInteger]:
    """The platform readings that give ``dtype`` values of their own: a
    reading that gives what ``as-overflow`` (either overflow) or an earlier
    reading (in `m.FloatToInteger`'s order) gives, from float32 and float64,
    at every one of `_PROBES`, is the same function there (each changes
    rule only at the bounds the probes straddle) and is not offered again:
    x86-vector is indefinite except on UINT32."""
    if np.dtype(target_dtype(dtype)).kind not in "iu":  # INT4, UINT4: numpy has no such type to probe
        return frozenset(how for how in m.FloatToInteger if how is not m.FloatToInteger.AS_OVERFLOW)
    found = {_probed(dtype, m.FloatToInteger.AS_OVERFLOW, overflow) for overflow in m.Overflow}
    kept = set()
    for how in m.FloatToInteger:
        values = _probed(dtype, how, m.Overflow.WRAP)
        if values not in found:
            kept.add(how)
            found.add(values)
    return frozenset(kept)


def _probed(dtype: m.DataType, how: m.FloatToInteger, overflow: m.Overflow) -> tuple[int, ...]:
    """``how``'s values at `_PROBES` from float32 and from float64."""
    return tuple(int(x) for source in (np.float32, np.float64)
                 for x in to_integer(np.array(_PROBES, dtype=source), dtype, overflow, how, source=source))


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
