"""The five seed operators computed another way: closed forms written directly
in mpmath at 200 bits and rounded once, independently of the oracle's code.

Attribute values are their float32 values (the struct's FLOAT), as the oracle
must use them.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import mpmath
import numpy as np

mp = mpmath.mp.clone()
mp.prec = 200


def f32(x: float) -> float:
    return float(np.float32(x))


def rounded(value: mpmath.mpf, dtype: type) -> float:
    """``value`` rounded to nearest-even in ``dtype`` (subnormals and overflow
    included), from the type's finfo and mpmath only."""
    info = ml_dtypes.finfo(dtype)
    if mp.isnan(value):
        return float("nan")
    if mp.isinf(value) or value == 0:
        return float(value)
    quantum = _quantum(value, info)
    r = mp.ldexp(mp.nint(mp.ldexp(value, -quantum)), quantum)
    if abs(r) > mp.mpf(float(info.max)):
        return float(mp.sign(value)) * float("inf")
    return float(r)


def softsign(x: mpmath.mpf) -> mpmath.mpf:
    return x / (1 + abs(x))


def shrink(bias: float, threshold: float) -> Callable[[mpmath.mpf], mpmath.mpf]:
    b, t = mp.mpf(f32(bias)), mp.mpf(f32(threshold))

    def f(x: mpmath.mpf) -> mpmath.mpf:
        if x > t:
            return x - b
        if x < -t:
            return x + b
        return mp.mpf(0)
    return f


def sign(x: mpmath.mpf) -> mpmath.mpf:
    return mp.mpf(-1 if x < 0 else 1 if x > 0 else 0)


def hard_sigmoid(alpha: float, beta: float) -> Callable[[mpmath.mpf], mpmath.mpf]:
    a, b = mp.mpf(f32(alpha)), mp.mpf(f32(beta))
    return lambda x: max(mp.mpf(0), min(a * x + b, mp.mpf(1)))


def swish(scale: float) -> Callable[[mpmath.mpf], mpmath.mpf]:
    s = mp.mpf(f32(scale))
    return lambda x: x / (1 + mp.exp(-s * x))


def expected(fn: Callable[[mpmath.mpf], mpmath.mpf], xs: np.ndarray, dtype: type) -> np.ndarray:
    """``fn`` at every element (test sizes only), rounded once to ``dtype``."""
    out = [_rounded_value(fn, mp.mpf(float(x)), dtype) for x in xs.astype(np.float64)]
    return np.asarray(out, dtype=np.float64).astype(dtype)


#: Precision of a second look at a value that lands on a rounding tie at
#: ``mp.prec``: swish's x / (1 + exp(-s * x)) for x = 2**-149 and s = 1.8e-21
#: is x / 2 * (1 + 1e-66), above the tie by less than 200 bits can show.
TIE_PRECISION = 4000


def _rounded_value(fn: Callable[[mpmath.mpf], mpmath.mpf], x: mpmath.mpf, dtype: type) -> float:
    value = fn(x)
    if _on_tie(value, dtype):
        with mp.workprec(TIE_PRECISION):
            value = fn(x)
    return rounded(value, dtype)


def _on_tie(value: mpmath.mpf, dtype: type) -> bool:
    """Whether ``value`` lies exactly halfway between two values of ``dtype``."""
    if mp.isnan(value) or mp.isinf(value) or value == 0:
        return False
    scaled = mp.ldexp(value, -_quantum(value, ml_dtypes.finfo(dtype)))
    return scaled - mp.floor(scaled) == mp.mpf(0.5)


def _quantum(value: mpmath.mpf, info: ml_dtypes.finfo) -> int:
    """The exponent of the spacing of ``info``'s type at nonzero finite
    ``value`` (subnormals included)."""
    _, e = mp.frexp(value)  # value = m * 2**e with 0.5 <= |m| < 1
    return max(int(e) - 1, int(info.minexp)) - int(info.nmant)
