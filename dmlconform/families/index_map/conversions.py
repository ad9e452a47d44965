"""The oracle's conversions of the generated index-map operations (CAST,
the fills' and diagonals' Values): each element's exact value rounded once
to the target type, and each reading's value (docs/index-map.md, "CAST").

A value is held exactly as a sign, an integer magnitude (up to 64 bits)
and a power of two; `to_float` rounds it to a float type from that (no
float arithmetic of numpy rounds it), `to_integer_exact` truncates or
wraps it into an integer type.  Readings:

* ``float-rounding``: ``nearest-even`` (IEEE 754's default), ``toward-zero``,
  ``through-float32`` (rounded to float32 first, then to FLOAT16: a
  double rounding), ``through-float64`` (a 64-bit integer rounded to
  float64 first);
* ``float-overflow``: ``infinity`` (IEEE) or ``saturate`` (the largest
  finite value; an infinity stays one);
* ``integer-overflow``: ``wrap`` (modulo 2^bits) or ``saturate``;
* ``float-to-integer-conversion``: the element-wise family's readings
  (`families.elementwise.result_readings.to_integer`), reused.
"""

from __future__ import annotations

import numpy as np

from dmlconform.families.elementwise.result_readings import distinct_conversions, to_integer
from dmlconform.spec import model as m
from dmlconform.spec.model import DataType, numpy_dtype

#: (precision in bits, least normal exponent) of each float type.
_FORMATS = {DataType.FLOAT16: (11, -14), DataType.FLOAT32: (24, -126), DataType.FLOAT64: (53, -1022)}
_U64 = np.uint64


def _bit_length(mag: np.ndarray) -> np.ndarray:
    """The bit length of each uint64 (0 for 0), by halving."""
    length = np.zeros(mag.shape, dtype=np.int64)
    rest = mag.copy()
    for step in (32, 16, 8, 4, 2, 1):
        big = rest >= (_U64(1) << _U64(step))
        length += np.where(big, step, 0)
        rest = np.where(big, rest >> _U64(step), rest)
    return length + (rest > 0)


def exact_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x`` (finite floats or integers) as (negative, magnitude uint64,
    exponent): x = -+ magnitude * 2^exponent exactly."""
    if x.dtype.kind == "f":
        v = x.astype(np.float64)
        fraction, exponent = np.frexp(np.where(np.isfinite(v), v, 0.0))
        mag = np.abs(np.ldexp(fraction, 53)).astype(_U64)  # 53 bits hold every float64 significand exactly
        return np.signbit(v), mag, exponent.astype(np.int64) - 53
    if x.dtype.kind == "u":
        return np.zeros(x.shape, dtype=bool), x.astype(_U64), np.zeros(x.shape, dtype=np.int64)
    wide = x.astype(np.int64)
    negative = wide < 0
    bits = wide.view(_U64) if wide.flags.c_contiguous else np.ascontiguousarray(wide).view(_U64)
    mag = np.where(negative, ~bits + _U64(1), bits)  # two's complement: -(-2^63) is 2^63 as uint64
    return negative, mag, np.zeros(x.shape, dtype=np.int64)


def round_parts(negative: np.ndarray, mag: np.ndarray, exponent: np.ndarray, target: DataType, *,
                nearest: bool) -> np.ndarray:
    """-+ mag * 2^exponent rounded to ``target``'s precision and least
    exponent (ties to even where ``nearest``, else toward zero), as float64
    (exact: at most 53 bits); its range is not checked (`to_float` does)."""
    precision, emin = _FORMATS[target]
    top = _bit_length(mag) - 1 + exponent  # the exponent of the leading bit
    quantum = np.maximum(top - (precision - 1), emin - (precision - 1))
    shift = np.clip(quantum - exponent, 0, 64)
    s = shift.astype(_U64)
    inside = shift < 64
    kept = np.where(inside, mag >> np.where(inside, s, _U64(0)), _U64(0))
    low_mask = np.where(inside, (_U64(1) << np.where(inside, s, _U64(0))) - _U64(1), ~_U64(0))
    rest = mag & low_mask
    half = np.where(shift > 0, _U64(1) << np.where(shift > 0, s - _U64(1), _U64(0)), _U64(0))
    if nearest:
        up = (shift > 0) & ((rest > half) | ((rest == half) & (kept & _U64(1) == 1)))
        kept = kept + up.astype(_U64)
    scale = np.where(shift > 0, quantum, exponent)
    value = np.ldexp(kept.astype(np.float64), scale.astype(np.int64))
    return np.where(negative, -value, value)


def to_float(x: np.ndarray, target: DataType, *, nearest: bool = True, saturate: bool = False,
             through: DataType | None = None) -> np.ndarray:
    """``x`` (any type) converted to the float type ``target``: rounded once
    (``nearest`` or toward zero), or first to ``through`` and then to
    ``target``; beyond the largest finite value an infinity, or that value
    where ``saturate`` or rounding toward zero (IEEE's rule); NaN and
    infinities kept."""
    if through is not None and through is not target:
        return to_float(to_float(x, through, nearest=nearest, saturate=saturate), target, nearest=nearest,
                        saturate=saturate)
    return _ranged(x, round_parts(*exact_parts(x), target, nearest=nearest), target, nearest=nearest,
                   saturate=saturate)


def _ranged(x: np.ndarray, value: np.ndarray, target: DataType, *, nearest: bool, saturate: bool) -> np.ndarray:
    """`to_float`'s last step: ``x`` rounded to ``value`` (float64), beyond
    ``target``'s range an infinity or its largest value, NaN and
    infinities kept, in ``target``."""
    nt = numpy_dtype(target)
    largest = float(np.finfo(nt).max)
    over = np.abs(value) > largest
    bound = largest if (saturate or not nearest) else np.inf
    value = np.where(over, np.copysign(bound, value), value)
    if x.dtype.kind == "f":
        v = x.astype(np.float64)
        value = np.where(np.isfinite(v), value, v)
    return value.astype(nt)


def to_integer_exact(x: np.ndarray, target: DataType, overflow: m.Overflow) -> np.ndarray:
    """An integer ``x`` in the integer type ``target``: wrapped modulo 2^bits or saturated."""
    nt = numpy_dtype(target)
    negative, mag, _ = exact_parts(x)
    if overflow is m.Overflow.WRAP:
        bits = np.where(negative, ~mag + _U64(1), mag)  # two's complement of the exact value, low 64 bits
        return bits.astype(np.dtype(f"u{nt.itemsize}")).view(nt)  # the low bits of the type's width
    info = np.iinfo(nt)
    low = _U64(-int(info.min))
    high = _U64(int(info.max))
    zero, least, most = nt.type(0), nt.type(info.min), nt.type(info.max)  # typed: 2^64 - 1 is no int64
    out = np.where(negative, np.where(mag > low, least, zero), np.where(mag > high, most, zero))
    fits = np.where(negative, mag <= low, mag <= high)
    inside = np.where(fits, np.where(negative, ~mag + _U64(1), mag), _U64(0))
    return np.where(fits, inside.astype(np.dtype(f"u{nt.itemsize}")).view(nt), out)


#: The float narrowings numpy's ``astype`` rounds exactly as `to_float` does
#: (once, ties to even, an infinity from the largest value's half spacing on,
#: subnormals kept), held bit for bit against `to_float` over every class of
#: bit patterns by tests/families/index_map/test_cast_large.py.
NARROWING = frozenset({(DataType.FLOAT32, DataType.FLOAT16), (DataType.FLOAT64, DataType.FLOAT32)})


def narrowed(x: np.ndarray, target: DataType) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """`readings` of a float ``x`` narrowed to ``target`` (a `NARROWING`
    pair) from numpy's one rounding.  Toward zero: the nearest value, or
    where it is the larger in magnitude its neighbour toward zero, which is
    its bit pattern less one (sign and magnitude; it is no zero and no NaN
    there, and an infinity's is the largest finite value).  Saturation: that
    neighbour where a finite ``x`` became an infinity.  A few array passes
    where the exact path's integer rounding takes about 60: a ``--large``
    CAST's oracle (issue #34)."""
    nt = numpy_dtype(target)
    with np.errstate(over="ignore", invalid="ignore"):
        nearest = x.astype(nt)
    back = nearest.astype(x.dtype)  # exact: x's type holds every value of the target's
    bits = nearest.view(f"u{nt.itemsize}")
    overshot = np.abs(back) > np.abs(x)
    overflowed = np.isinf(back) & np.isfinite(x)
    return nearest, {"float-rounding:toward-zero": (bits - overshot).view(nt),
                     "float-overflow:saturate": (bits - overflowed).view(nt)}


def float_source(dtype: DataType) -> type[np.floating]:
    """The register a float of ``dtype`` is converted from (FLOAT16 goes through float32)."""
    return np.float64 if dtype is DataType.FLOAT64 else np.float32


def readings(x: np.ndarray, source: DataType, target: DataType) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``x`` (of ``source``) converted to ``target``: the primary value
    (nearest-even, an infinity beyond the range, truncation toward zero,
    wrap) and every other reading's, keyed ``"<ambiguity>:<reading>"``."""
    out: dict[str, np.ndarray] = {}
    if (source, target) in NARROWING:
        return narrowed(x, target)
    if target.is_float:
        nearest = round_parts(*exact_parts(x), target, nearest=True)  # once for both overflow readings
        primary = _ranged(x, nearest, target, nearest=True, saturate=False)
        out["float-rounding:toward-zero"] = to_float(x, target, nearest=False)
        out["float-overflow:saturate"] = _ranged(x, nearest, target, nearest=True, saturate=True)
        if target is DataType.FLOAT16 and source not in (DataType.FLOAT16, DataType.FLOAT32):
            out["float-rounding:through-float32"] = to_float(x, target, through=DataType.FLOAT32)
        if source in (DataType.INT64, DataType.UINT64) and target is not DataType.FLOAT64:
            out["float-rounding:through-float64"] = to_float(x, target, through=DataType.FLOAT64)
        return primary, out
    if not source.is_float:
        return to_integer_exact(x, target, m.Overflow.WRAP), {
            "integer-overflow:saturate": to_integer_exact(x, target, m.Overflow.SATURATE)}
    v = x.astype(np.float64)
    register = float_source(source)
    primary = to_integer(v, target, m.Overflow.WRAP, m.FloatToInteger.AS_OVERFLOW, source=register)
    out["integer-overflow:saturate"] = to_integer(v, target, m.Overflow.SATURATE, m.FloatToInteger.AS_OVERFLOW,
                                                  source=register)
    for how in sorted(distinct_conversions(target), key=lambda h: h.value):
        out[f"float-to-integer-conversion:{how.value}"] = to_integer(v, target, m.Overflow.WRAP, how,
                                                                     source=register)
    return primary, out
