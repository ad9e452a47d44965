"""Running error bounds: how far an honest implementation may be from the exact
value, propagated through the tree to first order.

DESIGN.md, "Comparison" (a per-element error bound that the oracle derives from
the formula).  A bound is ``u * (rel * |v| + abs)`` with ``u`` the target type's
unit roundoff: ``rel`` (a scalar) covers relative error, ``abs`` (an array,
or None for zero) what relative error cannot describe: the magnitudes of the
terms of a sum of unknown sign (``Alpha*x + Beta`` near 0), an inexact
argument of a transcendental function scaled by its slope.  The rules are the textbook ones
(Higham, "Accuracy and Stability of Numerical Algorithms", ch. 2-3):

    a + b: rel_a|a| + rel_b|b| + |a + b|       (one rounding)
    a * b, a / b: rel_a + rel_b + 1            (relative errors add)
    f(a): |f'(a)| * bound(a) + own error of f * |f(a)|

Arrays are modified in place only when the caller says they are owned, which
keeps the bound cheap enough to compute on every oracle call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Array = Any
_TWO_OVER_ROOT_PI = 2 / math.sqrt(math.pi)


@dataclass(frozen=True, slots=True)
class Err:
    """Error bound in units of u: ``rel * |value| + abs`` (abs None = 0)."""

    rel: float = 0.0
    abs: Array | None = None

    @property
    def exact(self) -> bool:
        return self.rel == 0 and self.abs is None


EXACT = Err()


def magnitude(v: Array, sign: int) -> Array:
    """|v|, free when the sign is known."""
    if sign > 0:
        return v
    return np.abs(v)


def add(x: Array | None, y: Array | None, *, owned: bool = False) -> Array | None:
    """x + y where None is zero; in place into ``x`` when it is owned."""
    if x is None:
        return y
    if y is None:
        return x
    if owned and isinstance(x, np.ndarray) and x.shape == np.broadcast_shapes(x.shape, np.shape(y)):
        x += y
        return x
    return x + y


def maximum(x: Array | None, y: Array | None) -> Array | None:
    if x is None:
        return y
    return x if y is None else np.maximum(x, y)


def times(err_abs: Array | None, factor: Array, *, owned: bool = False) -> Array | None:
    """err_abs * factor (factor already non-negative)."""
    if err_abs is None:
        return None
    fits = isinstance(err_abs, np.ndarray) and err_abs.shape == np.broadcast_shapes(err_abs.shape, np.shape(factor))
    if owned and fits:
        err_abs *= factor
        return err_abs
    return err_abs * factor


def scaled(v: Array, sign: int, rel: float) -> Array | None:
    """rel * |v|, or None when rel is 0."""
    if rel == 0:
        return None
    m = magnitude(v, sign)
    return m * rel if rel != 1 else (m if m is not v else np.abs(v))


#: |f'(x)| from the argument x and the value v = f(x), for the functions whose
#: slope is cheapest from the value (the argument's buffer may be reused).
SLOPE_FROM_VALUE: dict[str, Callable[[Array], Array]] = {
    "exp": lambda v: v,  # exp >= 0
    "tanh": lambda v: 1 - v * v,
    "tan": lambda v: 1 + v * v,
}


def _one(x: Array) -> float:
    return 1.0


#: |f'(x)| bounds from the argument; 1 for sin/cos-like functions.
SLOPE_FROM_ARGUMENT: dict[str, Callable[[Array], Array]] = {
    "abs": _one, "sin": _one, "cos": _one, "sign": lambda x: 0.0,
    "log": lambda x: 1 / np.abs(x),
    "log2": lambda x: 1 / (np.abs(x) * math.log(2)),
    "log10": lambda x: 1 / (np.abs(x) * math.log(10)),
    "sinh": np.cosh, "cosh": lambda x: np.abs(np.sinh(x)),
    "asinh": lambda x: 1 / np.sqrt(1 + x * x), "acosh": lambda x: 1 / np.sqrt(x * x - 1),
    "atanh": lambda x: 1 / np.abs(1 - x * x),
    "asin": lambda x: 1 / np.sqrt(1 - x * x), "acos": lambda x: 1 / np.sqrt(1 - x * x),
    "atan": lambda x: 1 / (1 + x * x),
    "erf": lambda x: _TWO_OVER_ROOT_PI * np.exp(-x * x),
}


def sign_of(op: str, sa: int, sb: int) -> int:
    """Known sign (+1 >= 0, -1 <= 0, 0 unknown) of ``a op b``."""
    if op in "*/":
        return sa * sb
    if op == "+" and sa == sb:
        return sa
    if op == "-" and sa == -sb:
        return sa
    return 0
