"""Exact integer semantics of the formula language, for integer tensors.

DESIGN.md, "The oracle": integer results are exact.  Values are Python integers
in numpy object arrays (a FLOAT attribute on integer tensors stays an exact
fraction), so products of 64-bit values never overflow before the explicit
saturate/wrap step of the oracle.  numpy's ufunc loops call the Python
operators from C; there is no Python loop over elements.

Semantics the docs state, and the choices where they say nothing:

* ``a / b`` truncates toward zero (the divide page); a division by zero has no
  value and gives 0.  ``floor(a / b)``, ``ceil(a / b)``, ``round(a / b)`` and
  ``trunc(a / b)`` round the *exact* quotient (`rounded_division`): the
  modulus-floor page's ``a - b * floor(a / b)`` is floor modulo (Python's
  ``%``: 49 mod -200 = -151), not the truncated remainder.
* ``a << b`` and ``a >> b`` are *logical* shifts of the element's native
  encoding, ``bits`` wide (the bit-shift pages: "a logical left/right shift
  ... the tensor data type is ignored except for determining the width of
  each element"): a right shift fills with zeros (-8 >> 1 on int8 is 124), a
  count of ``bits`` or more, or a negative count (a huge one in its native
  unsigned encoding), gives 0.  The count is capped before shifting, so a
  huge count costs nothing.
* ``pow(a, n)`` with a negative ``n`` truncates the exact result toward zero
  (1 / a**n is 0 unless |a| == 1; 0**-n gives 0 like a division by zero).  A
  result wider than `HUGE_BITS` bits is never built: it is represented by
  ``sign * 2**HUGE_BITS + (a**n mod 2**64)``, which is congruent to the exact
  value modulo 2**64 (so it wraps to the same value in every type up to 64
  bits) and has the exact value's sign and an out-of-range magnitude (so it
  saturates to the same bound).  Modular exponentiation makes it cheap.
* ``popcount(a)`` counts the set bits of the element's ``bits``-wide encoding
  (two's complement for signed types: popcount(-1) on int16 is 16), the
  width being the input's (the bit-count page: "the tensor data type is
  ignored except for determining the width of each element").
* ``roundaway(a)`` rounds halves away from zero (DML_ROUNDING_MODE_TOWARD_INFINITY).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.errors import FormulaError

BITWISE = frozenset({"&", "|", "<<", ">>", "%"})
#: Results of ``pow`` wider than this are kept modulo 2**64 (module docstring).
HUGE_BITS = 4096
_WRAP = 1 << 64
#: Width of the shifted encoding when the target type does not say (64-bit).
DEFAULT_BITS = 64


def _div(a: Any, b: Any) -> Any:
    """Truncated division (C semantics, the divide page)."""
    if b == 0:
        return 0
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    return math.trunc(Fraction(a) / Fraction(b))


def _mod(a: Any, b: Any) -> Any:
    """C remainder: a - b * trunc(a / b)."""
    return 0 if b == 0 else a - b * _div(a, b)


def _pow(a: Any, b: Any) -> Any:
    n = int(b)
    if n < 0:
        if a == 1:
            return a
        if a == -1:
            return -1 if n % 2 else 1
        return 0
    if a in (0, 1) or n <= 1:
        return Fraction(a) ** n if isinstance(a, Fraction) else a ** n
    if a == -1:
        return -1 if n % 2 else 1
    if isinstance(a, Fraction):
        if abs(a) < 1 and n > HUGE_BITS:
            return Fraction(0)
        if n * max(abs(a.numerator).bit_length(), a.denominator.bit_length()) > HUGE_BITS:
            return (-1 if a < 0 and n % 2 else 1) * (1 << HUGE_BITS)
        return a ** n
    if n * abs(a).bit_length() <= HUGE_BITS:
        return a ** n
    sign = -1 if a < 0 and n % 2 else 1
    return sign * (1 << HUGE_BITS) + pow(a, n, _WRAP)


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
    "roundaway": np.frompyfunc(_rounder(lambda x: (1 if x >= 0 else -1) * math.floor(abs(x) + Fraction(1, 2))), 1, 1),
}
_ROUND_QUOTIENT = np.frompyfunc(lambda a, b: round(Fraction(a) / Fraction(b)), 2, 1)
ROUNDING = frozenset(_ROUND)


def _shift(left: bool, a: Any, n: Any, bits: int) -> Any:
    """Logical shift of the ``bits``-wide encoding of ``a`` by ``n``; 0 for a
    count out of [0, bits)."""
    out_of_range = (n < 0) | (n >= bits)
    count = np.where(out_of_range, 0, n)
    if left:
        shifted = np.left_shift(a, count)
    else:
        shifted = np.right_shift(np.mod(a, 1 << bits), count)  # the unsigned encoding: zeros shift in
    return np.where(out_of_range, 0, shifted)


def popcount(x: Any, bits: int) -> Any:
    """The number of set bits of the ``bits``-wide encoding of each exact integer."""
    return np.frompyfunc(lambda v: (int(v) % (1 << bits)).bit_count(), 1, 1)(np.asarray(x, dtype=object))


def binary(op: str, x: Any, y: Any, bits: int | None = None) -> Any:
    """``x op y`` on object arrays of exact integers; ``bits`` is the width of
    the element encoding the shifts work on."""
    x, y = np.asarray(x, dtype=object), np.asarray(y, dtype=object)
    if op in ("<<", ">>"):
        return _shift(op == "<<", x, y, bits or DEFAULT_BITS)
    return _BINARY[op](x, y)


def rounded_division(name: str, a: Any, b: Any) -> Any:
    """``name(a / b)`` (floor, ceil, trunc, round) of the exact quotient; a
    division by zero gives 0, as ``a / b`` does."""
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    zero = b == 0
    safe = np.where(zero, 1, b) if np.any(zero) else b
    if name == "floor":
        q = np.floor_divide(a, safe)
    elif name == "ceil":
        q = np.negative(np.floor_divide(np.negative(a), safe))
    elif name == "trunc":
        q = _DIV(a, safe)
    elif name == "roundaway":
        q = _ROUND["roundaway"](np.frompyfunc(Fraction, 2, 1)(a, safe))
    else:
        q = _ROUND_QUOTIENT(a, safe)
    return np.where(zero, 0, q) if np.any(zero) else q


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": _DIV, "^": _POW, "%": _MOD,
    "&": np.bitwise_and, "|": np.bitwise_or,
}


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
