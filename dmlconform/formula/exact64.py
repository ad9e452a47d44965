"""Is a float64 result exact?  Error-free transformations, vectorised.

DESIGN.md, "The oracle" (extra precision only where float64 is not enough).
A float64 result that equals the exact value needs no second look, even when it
sits exactly halfway between two values of the target type: numpy's cast then
rounds the tie to even, as the exact value would.  Sums and products of float32
inputs are often exact in float64, so without this check every tie of
``a + b`` would go to mpmath.  The classic transformations (Knuth's TwoSum,
Dekker's TwoProduct with Veltkamp splitting; Muller et al., "Handbook of
Floating-Point Arithmetic", ch. 4) give the rounding error of one operation
exactly, so "exact" means that error is zero.  Overflow makes them NaN, which
reads as "not exact": the safe side.
"""

from __future__ import annotations

from typing import Any

Array = Any
_SPLIT = float(2 ** 27 + 1)


def sum_exact(a: Array, b: Array, s: Array) -> Array:
    """s == fl(a + b) is the exact sum (TwoSum error is zero)."""
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return err == 0


def _split(a: Array) -> tuple[Array, Array]:
    c = _SPLIT * a
    high = c - (c - a)
    return high, a - high


def product_error(a: Array, b: Array, p: Array) -> Array:
    """The exact rounding error a*b - p of p == fl(a * b) (Dekker)."""
    ah, al = _split(a)
    bh, bl = _split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def product_exact(a: Array, b: Array, p: Array) -> Array:
    return product_error(a, b, p) == 0


def quotient_exact(a: Array, b: Array, q: Array) -> Array:
    """q == fl(a / b) is exact: a - q*b is zero, computed exactly."""
    p = q * b
    return (a - p) == product_error(q, b, p)  # a - p is exact: p is within a factor 2 of a


def root_exact(a: Array, r: Array) -> Array:
    """r == fl(sqrt(a)) is exact: r*r == a exactly."""
    p = r * r
    return (p == a) & (product_error(r, r, p) == 0)
