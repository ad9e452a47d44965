"""Exact integer semantics of the formula language, for integer tensors.

DESIGN.md, "The oracle": integer results are exact.  Values are Python integers
in numpy object arrays (a FLOAT attribute on integer tensors stays an exact
fraction), so products of 64-bit values never overflow before the explicit
saturate/wrap step of the oracle.  numpy's ufunc loops call the Python
operators from C; there is no Python loop over elements.

Semantics the docs state: integer division truncates toward zero (the divide
page).  ``pow`` with a negative exponent truncates the exact result toward zero
(1 / a**n is 0 unless |a| == 1); a division by zero has no value and gives 0,
which the oracle marks ambiguous.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from dmlconform.errors import FormulaError

BITWISE = frozenset({"&", "|", "<<", ">>", "%"})


def _div(a: Any, b: Any) -> Any:
    """Truncated division (C semantics, the divide page)."""
    return 0 if b == 0 else math.trunc(Fraction(a) / Fraction(b))


def _mod(a: Any, b: Any) -> Any:
    """C remainder: a - b * trunc(a / b)."""
    return 0 if b == 0 else a - b * _div(a, b)


def _pow(a: Any, b: Any) -> Any:
    if b >= 0:
        return Fraction(a) ** int(b) if isinstance(a, Fraction) else a ** int(b)
    if a in (1, -1):
        return a ** (-int(b))
    return 0


def _rounder(fn: Callable[[Any], int]) -> Callable[[Any], Any]:
    return lambda x: x if isinstance(x, int) else fn(x)


_DIV = np.frompyfunc(_div, 2, 1)
_MOD = np.frompyfunc(_mod, 2, 1)
_POW = np.frompyfunc(_pow, 2, 1)
_ROUND = {
    "floor": np.frompyfunc(_rounder(math.floor), 1, 1),
    "ceil": np.frompyfunc(_rounder(math.ceil), 1, 1),
    "trunc": np.frompyfunc(_rounder(math.trunc), 1, 1),
    "round": np.frompyfunc(_rounder(round), 1, 1),  # Python round: half to even
}
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": _DIV, "^": _POW, "%": _MOD,
    "&": np.bitwise_and, "|": np.bitwise_or, "<<": np.left_shift, ">>": np.right_shift,
}


def binary(op: str, x: Any, y: Any) -> Any:
    """``x op y`` on object arrays of exact integers."""
    return _BINARY[op](np.asarray(x, dtype=object), np.asarray(y, dtype=object))


def call(name: str, xs: list[Any], display: str) -> Any:
    """A primitive on exact integers; transcendental functions are refused."""
    xs = [np.asarray(x, dtype=object) for x in xs]
    if name == "abs":
        return np.abs(xs[0])
    if name in ("min", "max"):
        fn = np.minimum if name == "min" else np.maximum
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return out
    if name == "clamp":
        return np.minimum(np.maximum(xs[0], xs[1]), xs[2])
    if name in _ROUND:
        return _ROUND[name](xs[0])
    if name == "pow":
        return _POW(xs[0], xs[1])
    if name == "sign":
        return np.sign(xs[0])
    raise FormulaError(f"{display} is not defined on integer tensors; give float inputs", path="<formula>")
