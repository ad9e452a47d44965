"""The whole-tensor bias check (TOSA's statistical test of dot products).

Issue #24 item 2 ("QUALITY_WARNING ... when a whole tensor's errors show a
systematic bias"); docs/contraction.md "The bias check".  Each element's
bound allows an honest implementation's worst case, so an implementation
that rounds every partial sum the same way (toward zero, or down) can stay
within every bound while its errors all lean one way.  Rounding to nearest
leaves errors that average out; a directed rounding does not.  So over one
output of one case, with ``z_i = (actual_i - expected_i) / scale_i`` (the
family's ``bias_scale``: the size of an honest error at that element,
the strict bound for a contraction: only the signs and the relative sizes
matter) over its N finite elements with a scale:

* in two directions, the errors as they are (``signed``: rounding down or
  up) and times the sign of the expected value (``toward zero``: truncation
  shrinks magnitudes whatever their sign);
* the mean ``m`` of each, its standard error ``sqrt(var / N)``, and
  ``t = m / standard error``;
* QUALITY_WARNING where N >= `MIN_ELEMENTS` and ``|t| > T_LIMIT``: for
  independent zero-mean errors ``|t|`` exceeds 6 with probability about
  2e-9 (normal tail), and a directed rounding over a few hundred elements
  reaches hundreds.

Nothing here knows a family: `oracles.base.Expectation.bias_scale` says
where the check applies (None: not at all), `judge` accumulates `Moments`
over its chunks and asks `verdict` once per case and output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dmlconform.plan import SUM_BLOCK

#: Fewest elements with a scale that make a mean meaningful.
MIN_ELEMENTS = 256
#: How many standard errors from 0 a mean must be to be a bias.
T_LIMIT = 6.0


@dataclass(frozen=True, slots=True)
class Moments:
    """Per case of a batch: element count, and the sums of z and z^2 in both
    directions (``signed`` and ``toward`` zero)."""

    count: np.ndarray
    signed: np.ndarray
    toward: np.ndarray
    square: np.ndarray

    @classmethod
    def zero(cls, cases: int) -> Moments:
        return cls(np.zeros(cases), np.zeros(cases), np.zeros(cases), np.zeros(cases))

    def __add__(self, other: Moments) -> Moments:
        return Moments(self.count + other.count, self.signed + other.signed, self.toward + other.toward,
                       self.square + other.square)


def moments(expected: np.ndarray, actual: np.ndarray, scale: np.ndarray, sizes: np.ndarray) -> Moments:
    """The sums of one chunk of elements end to end, ``sizes`` how many of
    them each case of the batch has (in order, 0 for a case outside the
    chunk).  Elements without a finite expected value, a finite actual one
    or a positive scale are left out (the per-element check judges them).
    Summed a block of `plan.SUM_BLOCK` elements at a time: the float64
    temporaries stay in the cache, and memory the allocator has at hand."""
    ends = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
    total = Moments.zero(len(sizes))
    for lo in range(0, expected.size, SUM_BLOCK):
        hi = min(lo + SUM_BLOCK, expected.size)
        total += _block(expected[lo:hi], actual[lo:hi], scale[lo:hi], np.diff(np.clip(ends, lo, hi)))
    return total


def _block(expected: np.ndarray, actual: np.ndarray, scale: np.ndarray, sizes: np.ndarray) -> Moments:
    """`moments` of one block."""
    e, z = expected.astype(np.float64), actual.astype(np.float64)
    with np.errstate(all="ignore"):
        z -= e
        z /= scale
    unused = ~np.isfinite(z)  # an infinite or NaN expected value, or a scale of 0, gives no finite z
    unused |= ~(scale > 0)
    np.copyto(z, 0.0, where=unused)
    zero = e == 0  # no way toward zero from 0
    toward = np.copysign(1.0, e, out=e)  # e's sign, branch-free (np.sign takes 6 times as long on random signs)
    toward *= z
    np.copyto(toward, 0.0, where=zero)
    present = np.flatnonzero(sizes)
    starts = (np.cumsum(sizes) - sizes)[present]  # each case's first element

    def total(values: np.ndarray) -> np.ndarray:
        """Per case, by runs (a tenth of a weighted bincount's time on a large case)."""
        sums = np.zeros(sizes.size)
        if present.size:
            sums[present] = np.add.reduceat(values, starts, dtype=np.float64)
        return sums

    count = sizes - total(unused)
    signed, leaning = total(z), total(toward)
    return Moments(count.astype(np.float64), signed, leaning, total(np.square(z, out=toward)))  # toward's buffer


def verdict(count: float, signed: float, toward: float, square: float) -> str | None:
    """Why one output of one case is biased (None: it is not, or too small to tell)."""
    if count < MIN_ELEMENTS:
        return None
    for name, total in (("signed", signed), ("toward zero", toward)):
        mean = total / count
        variance = max(square / count - mean * mean, 0.0)
        if variance == 0.0:
            continue
        t = mean / math.sqrt(variance / count)
        if abs(t) > T_LIMIT:
            return (f"errors biased {name}: mean {mean:.3g} of the bound over {int(count)} elements, "
                    f"{abs(t):.1f} standard errors from 0 (limit {T_LIMIT:g})")
    return None
