"""Random values for many cases at once, each case's still its own.

A case's random values must depend on the suite seed and the case's id alone,
so that a case is reproducible by itself and adding a case to a suite changes
no other case.  A seeded ``numpy.random.Generator`` per case gives that, but
costs tens of microseconds per case to create and to draw from, more than
everything else the generator does for a small case.  So the draws are
counter based (the scheme of Philox and of JAX's keys): every tensor of every
case has a 64-bit key (blake2b of the seed, the case id and the tensor name),
and element ``i`` of it takes the bits ``mix(key + (2i + 1) * GOLDEN)`` for its
value and ``mix(key + (2i + 2) * GOLDEN)`` for its place in the shuffle,
``mix`` being splitmix64's finaliser.  Those are whole-array integer
operations over every tensor of a spec at once.

What the values look like (the edge values and boundaries come from the
pools the generator passes in; these are the rest):

* float types: two in five elements spread over the whole exponent range of
  the type (random sign, exponent and mantissa), the others uniform in
  [-4, 4) or [-1, 1) (where activations and domain-limited functions are
  interesting);
* integer types: every other element uniform over the whole range, the others
  uniform in [-100, 100] clipped to the range.

Each tensor's values are the pool's first elements (as many as fit) followed
by random values, then shuffled.

A request with a ``period`` (the large cases) draws only that many values so,
and each element picks one of them by its place: bits of ``picker``, which
every tensor of the case shares, so that element ``i`` of each tensor takes
the same pick and the case has at most ``period`` distinct rows of operands.
The oracle then evaluates each distinct row once where float64 is not enough
(`formula.refine`), whatever the tensor's size.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.edges import np_dtype
from dmlconform.compare import finfo
from dmlconform.plan import DRAW_CHUNK
from dmlconform.spec.model import DataType

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SMALL = 100  # integers: the half-width of the small-value range


def stream_key(seed: int, case_id: str, tensor: str) -> int:
    """The 64-bit key of one tensor of one case."""
    text = f"{seed}\0{case_id}\0{tensor}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place on a uint64 array (wrapping)."""
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


@dataclass(frozen=True, slots=True)
class Request:
    """One tensor to fill: ``count`` values of ``dtype``, the ``pool`` first
    (cut to ``count``), the rest random, all shuffled; or ``fixed`` values
    as they are.  With a ``period``, only that many values are drawn so and
    each element is one of them, picked by ``picker``'s bits (module
    docstring)."""

    key: int
    dtype: DataType
    count: int
    pool: np.ndarray | None = None
    fixed: np.ndarray | None = None
    period: int = 0
    picker: int = 0


def fill(requests: Sequence[Request]) -> list[np.ndarray]:
    """The values of every request (1-D arrays of its dtype, in order; the
    random ones read-only, the fixed ones as `numpy.asarray` gives them), drawn
    in one pass over every data type: the random bits and the shuffle of all
    the requests are whole-array operations, only the conversion to values is
    per data type (a request's values depend on its key and count alone, so
    the grouping changes none)."""
    out: list[np.ndarray | None] = [None] * len(requests)
    by_dtype: dict[DataType, list[int]] = {}
    for k, r in enumerate(requests):
        if r.fixed is not None:
            out[k] = np.asarray(r.fixed, dtype=np_dtype(r.dtype))
        elif 0 < r.period < r.count:
            out[k] = _picked(r)
        else:
            by_dtype.setdefault(r.dtype, []).append(k)
    if by_dtype:
        order = [k for members in by_dtype.values() for k in members]  # each data type's requests together
        for k, values in zip(order, _fill_all([requests[k] for k in order])):
            out[k] = values
    return out  # type: ignore[return-value]  # every slot is filled above: fixed, or drawn by data type


def _fill_all(requests: list[Request]) -> list[np.ndarray]:
    """The values of ``requests``, those of one data type adjacent.  Elements
    are numbered request after request; a request's shuffle sorts its own
    elements by (request, a random 32-bit key), stably, so a sort of all of
    them at once keeps every request, and every data type, in its place."""
    n = len(requests)
    counts = np.fromiter((r.count for r in requests), dtype=np.int64, count=n)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    total = int(starts[-1])
    keys = np.fromiter((r.key for r in requests), dtype=np.uint64, count=n)
    bounds = starts.tolist()
    ranges = _runs(requests)  # adjacent requests of one data type
    runs = [(requests[k].dtype, bounds[k], bounds[e]) for k, e in ranges]  # (dtype, elements) per type
    values = [np.empty(b - a, dtype=np_dtype(dtype)) for dtype, a, b in runs]
    order_key = np.empty(total, dtype=np.uint64)
    numbers = np.arange(n, dtype=np.int64)
    for lo in range(0, total, DRAW_CHUNK):
        hi = min(lo + DRAW_CHUNK, total)
        within: np.ndarray = np.diff(np.clip(starts, lo, hi))  # each request's elements in this chunk
        segment = np.repeat(numbers, within)  # the request of each element
        position = np.arange(lo, hi, dtype=np.int64) - np.repeat(starts[:-1], within)
        key = np.repeat(keys, within)
        step = position.astype(np.uint64) * np.uint64(2)
        words = mix(key + (step + np.uint64(1)) * GOLDEN)
        for (dtype, a, b), into in zip(runs, values):
            x, y = max(a, lo), min(b, hi)
            if x < y:  # this data type's part of the chunk
                into[x - a:y - a] = _values(dtype, into.dtype, words[x - lo:y - lo], position[x - lo:y - lo])
        shuffle = mix(key + (step + np.uint64(2)) * GOLDEN) >> np.uint64(32)
        shuffle |= segment.astype(np.uint64) << np.uint64(32)
        order_key[lo:hi] = shuffle
    for (_, a, _), into, (k0, k1) in zip(runs, values, ranges):  # the pools first, then random values
        for start, r in zip(bounds[k0:k1], requests[k0:k1]):
            if r.pool is not None and r.pool.size:
                head = r.pool[:r.count]
                into[start - a:start - a + head.size] = head
    perm = np.argsort(order_key, kind="stable")
    out: list[np.ndarray] = []
    for (_, a, b), into, (k0, k1) in zip(runs, values, ranges):
        shuffled = into[perm[a:b] - a]
        shuffled.setflags(write=False)  # once for all its requests (each is a slice of it)
        out.extend(shuffled[s - a:e - a] for s, e in zip(bounds[k0:k1], bounds[k0 + 1:k1 + 1]))
    return out


def _picked(r: Request) -> np.ndarray:
    """The values of a request with a period: ``period`` values drawn as a
    request of that count, each element one of them by ``picker``'s bits."""
    base = _fill_all([Request(r.key, r.dtype, r.period, r.pool)])[0]
    picks = mix(np.uint64(r.picker) + np.arange(1, r.count + 1, dtype=np.uint64) * GOLDEN)
    picks %= np.uint64(r.period)
    out = base[picks]
    out.setflags(write=False)
    return out


def _runs(requests: list[Request]) -> list[tuple[int, int]]:
    """The ranges of adjacent requests of one data type."""
    cuts = [k for k in range(1, len(requests)) if requests[k].dtype is not requests[k - 1].dtype]
    return list(zip([0] + cuts, cuts + [len(requests)]))


@functools.lru_cache(maxsize=64)
def _heads(lo: int, hi: int) -> np.ndarray:
    """Per value of a word's low 12 bits, the sign and exponent bits of the
    float64 ``±(1 + mantissa) * 2**e`` they pick: bit 0 the sign, bits 1-11
    ``e`` (modulo the ``hi - lo`` exponents from ``lo``).  With the word's
    upper 52 bits as the mantissa this is the spread value, built from its
    bits in one pass (always a normal float64: the exponents of every type
    we draw lie within float64's)."""
    low = np.arange(4096, dtype=np.uint64)
    exps = ((low >> np.uint64(1)) & np.uint64(0x7FF)).astype(np.int64) % (hi - lo) + lo
    heads = ((low & np.uint64(1)) << np.uint64(63)) | ((exps + 1023).astype(np.uint64) << np.uint64(52))
    heads.setflags(write=False)
    return heads


def _values(dtype: DataType, nt: np.dtype, words: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Random values of ``dtype`` from 64 random bits each; ``position`` (in
    its tensor) picks the kind of value."""
    if dtype.is_float:
        fi = finfo(nt)
        low = (words & np.uint64(0xFFF)).astype(np.intp)       # bit 0: sign; bits 1-11: exponent
        mantissa = words >> np.uint64(12)                        # bits 12-63
        spread = (_heads(int(fi.minexp), int(fi.maxexp))[low] | mantissa).view(np.float64)
        unit = mantissa.astype(np.float64) * 2.0 ** -52          # [0, 1)
        mixed = (2.0 * unit - 1.0) * np.where(low & 2, 4.0, 1.0)  # bit 1: [-4, 4) or [-1, 1)
        with np.errstate(over="ignore"):
            return np.where(position % 5 < 2, spread, mixed).astype(nt)
    info = np.iinfo(nt)
    bits = nt.itemsize * 8
    whole = (words >> np.uint64(64 - bits)).astype(np.dtype(f"u{nt.itemsize}")).view(nt)
    lo, hi = max(int(info.min), -_SMALL), min(int(info.max), _SMALL)
    small = ((words >> np.uint64(12)) % np.uint64(hi - lo + 1)).astype(np.int64) + lo
    return np.where(position % 2 == 0, whole, small.astype(nt))
