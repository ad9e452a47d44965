"""The five seed operators computed another way: closed forms written directly
in mpmath at 200 bits and rounded once, independently of the oracle's code.

Attribute values are their float32 values (the struct's FLOAT), as the oracle
must use them.
"""

from __future__ import annotations

from typing import Callable

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
    _, e = mp.frexp(value)  # value = m * 2**e with 0.5 <= |m| < 1
    quantum = max(int(e) - 1, int(info.minexp)) - int(info.nmant)
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
    out = [rounded(fn(mp.mpf(float(x))), dtype) for x in xs.astype(np.float64)]
    return np.asarray(out, dtype=np.float64).astype(dtype)
