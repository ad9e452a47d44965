"""ULP distance and the element-wise comparator: expected vs actual, one verdict
per element.

DESIGN.md, "Comparison, verdicts and reports".  Floats are compared on the
integer ordering of their bit patterns (the view is chosen by item size, so
FLOAT16, bfloat16, FLOAT32, FLOAT64 and the float8 types share one code path),
plus an absolute per-element bound from the oracle for cancellation points.
Any NaN matches any NaN; -0 and +0 are one value unless the policy says the
sign of zero matters; subnormal flushing is accepted only when the backend
declares it.  Two tiers: within the strict tolerance PASS, within the relaxed
one QUALITY_WARNING, else FAIL.  Everything is vectorised: no Python loop over
elements.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from dmlconform.errors import InputError

#: Signed integer view of a float, by item size.
_BITS: dict[int, type[np.signedinteger]] = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
_NAN_DISTANCE = np.iinfo(np.uint64).max

#: Default ratio of the relaxed tier to the strict one (ULPs and bounds alike).
RELAXED_FACTOR = 4.0


class Verdict(enum.IntEnum):
    """Per element and overall; ordered so that the worst is the maximum."""

    PASS = 0
    QUALITY_WARNING = 1
    FAIL = 2


class Tier(enum.Enum):
    """When an alternative expected value is accepted.

    STRICT: as good as the literal value (IEEE maxNum/minNum for NaN operands).
    RELAXED: only as a quality warning (the limit where the literal formula
    gives NaN).  FLUSH: only from a backend that declares subnormal flushing.
    """

    STRICT = "strict"
    RELAXED = "relaxed"
    FLUSH = "flush"


@dataclass(frozen=True, slots=True, eq=False)
class Alternative:
    """Another acceptable value at some elements (flat indices into the output)."""

    name: str
    index: np.ndarray
    values: np.ndarray
    tier: Tier
    reason: str


@dataclass(frozen=True, slots=True)
class Policy:
    """How to compare.  ``ulp`` is the strict budget in ULPs of the compared
    type; the relaxed tier allows ``relaxed_factor`` times budget and bound."""

    ulp: int = 0
    relaxed_factor: float = RELAXED_FACTOR
    signed_zero: bool = False
    flush_subnormals: bool = False

    def __post_init__(self) -> None:
        if self.ulp < 0:
            raise InputError(f"ulp={self.ulp} is negative; give a budget of 0 or more")
        if not self.relaxed_factor >= 1:
            raise InputError(f"relaxed_factor={self.relaxed_factor} must be at least 1")


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One element that is not PASS, with everything needed to show it."""

    index: tuple[int, ...]
    expected: float
    actual: float
    ulp: int
    abs_error: float
    bound: float
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class AlternativeUse:
    """How often the backend matched an alternative rather than the literal value."""

    name: str
    tier: Tier
    elements: int
    matched_literal: int
    matched_alternative: int


@dataclass(frozen=True, slots=True, eq=False)
class Comparison:
    """The outcome: per-element ``status`` (a `Verdict` code) and ``ulp``
    (read-only arrays in the output's shape), the overall verdict, counts, the
    worst elements and the alternatives used."""

    status: np.ndarray
    ulp: np.ndarray
    verdict: Verdict
    counts: tuple[int, int, int]
    worst: tuple[Mismatch, ...]
    alternatives: tuple[AlternativeUse, ...] = field(default=())

    def summary(self) -> str:
        """``Mismatched elements: n / N (w quality warnings)``, as numpy writes it."""
        total = int(self.status.size)
        return f"Mismatched elements: {self.counts[2]} / {total} ({self.counts[1]} quality warnings)"


def finfo(dtype: np.dtype | type) -> ml_dtypes.finfo:
    """Facts of a float type, numpy's and ml_dtypes' alike."""
    return ml_dtypes.finfo(np.dtype(dtype))


def ordered_bits(x: np.ndarray, *, signed_zero: bool = False) -> np.ndarray:
    """Int64 keys that order floats like their values: consecutive floats get
    consecutive keys.  -0 and +0 share the key 0 unless ``signed_zero``, where
    -0 sits one below +0.  NaN keys are meaningless (callers mask NaN)."""
    x = np.ascontiguousarray(x)
    view = _BITS.get(x.dtype.itemsize)
    if view is None or not is_float(x.dtype):
        raise InputError(f"dtype={x.dtype} is not a float type; ordered_bits needs 1, 2, 4 or 8-byte floats")
    bits = x.view(view).astype(np.int64)
    magnitude = bits & np.int64((1 << (8 * x.dtype.itemsize - 1)) - 1)
    negative = bits < 0
    keys = np.where(negative, -magnitude, magnitude)
    if signed_zero:
        keys -= negative
    return keys


def ulp_distance(a: np.ndarray, b: np.ndarray, *, signed_zero: bool = False) -> np.ndarray:
    """Distance in ULPs between same-typed arrays, as uint64: how many
    representable values lie between them.  Any NaN matches any NaN (0); NaN
    against a number is the largest uint64.  Integer arrays give |a - b|."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        raise InputError(f"dtypes differ: a is {a.dtype}, b is {b.dtype}; compare values of one type")
    if a.dtype.kind in "iub":
        return _integer_distance(a, b)
    ka, kb = ordered_bits(a, signed_zero=signed_zero), ordered_bits(b, signed_zero=signed_zero)
    diff = ka.astype(np.uint64) - kb.astype(np.uint64)
    dist = np.where(ka >= kb, diff, np.negative(diff))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    dist[nan_a != nan_b] = _NAN_DISTANCE
    dist[nan_a & nan_b] = 0
    return dist


def _integer_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "u" or a.dtype.kind == "b":
        ua, ub = a.astype(np.uint64), b.astype(np.uint64)
        return np.where(ua >= ub, ua - ub, ub - ua)
    ia, ib = a.astype(np.int64), b.astype(np.int64)
    diff = ia.astype(np.uint64) - ib.astype(np.uint64)
    return np.where(ia >= ib, diff, np.negative(diff))


def is_float(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is a floating type numpy or ml_dtypes knows."""
    try:
        finfo(dtype)
    except (TypeError, ValueError):
        return False
    return True


def compare(
    expected: np.ndarray,
    actual: np.ndarray,
    *,
    policy: Policy = Policy(),
    bound_strict: np.ndarray | None = None,
    bound_relaxed: np.ndarray | None = None,
    alternatives: tuple[Alternative, ...] = (),
    worst: int = 10,
) -> Comparison:
    """Compare ``actual`` with ``expected`` element by element.

    An element PASSes when NaN-ness matches, or it is within ``policy.ulp``
    ULPs, or within ``bound_strict`` (absolute), or matches a STRICT
    alternative (FLUSH ones too, when ``policy.flush_subnormals``).  It is a
    QUALITY_WARNING within the relaxed budget, ``bound_relaxed`` or a RELAXED
    alternative; otherwise it FAILs."""
    expected, actual = _check(expected, actual)
    relaxed_ulp = math.ceil(policy.ulp * policy.relaxed_factor)
    # Fast path: most elements of an honest result equal the expected value;
    # distances and errors are computed only where they differ.
    differ = np.flatnonzero(~_same(expected, actual, signed_zero=policy.signed_zero))
    flat_e, flat_a = expected.reshape(-1)[differ], actual.reshape(-1)[differ]
    dist = np.zeros(expected.shape, np.uint64)
    dist.reshape(-1)[differ] = ulp_distance(flat_e, flat_a, signed_zero=policy.signed_zero)
    strict, relaxed = dist <= policy.ulp, dist <= relaxed_ulp
    error = None
    if bound_strict is not None or bound_relaxed is not None:
        error = np.zeros(expected.shape, np.float64)
        error.reshape(-1)[differ] = _abs_error(flat_e, flat_a)
        if bound_strict is not None:
            strict_at = _at(bound_strict, expected.shape, differ)
            strict.reshape(-1)[differ] |= error.reshape(-1)[differ] <= strict_at
        relaxed_at = (_at(bound_relaxed, expected.shape, differ) if bound_relaxed is not None
                      else strict_at * policy.relaxed_factor)
        relaxed.reshape(-1)[differ] |= error.reshape(-1)[differ] <= relaxed_at
    if policy.flush_subnormals and is_float(expected.dtype):
        strict |= _flushed_output(expected, actual)
    uses = tuple(_apply(alt, actual, strict, relaxed, policy) for alt in alternatives)
    relaxed |= strict
    codes = np.uint8(Verdict.PASS), np.uint8(Verdict.QUALITY_WARNING), np.uint8(Verdict.FAIL)
    status = np.where(strict, codes[0], np.where(relaxed, codes[1], codes[2]))
    return _result(expected, actual, status, dist, error, bound_strict, uses, worst)


def _same(expected: np.ndarray, actual: np.ndarray, *, signed_zero: bool) -> np.ndarray:
    """Elements at ULP distance 0: equal values (with equal signs of zero where
    that counts), or NaN on both sides."""
    same = expected == actual
    if expected.dtype.kind not in "iub":
        if signed_zero:
            same &= np.signbit(expected) == np.signbit(actual)
        same |= np.isnan(expected) & np.isnan(actual)
    return same


def _at(bound: np.ndarray, shape: tuple[int, ...], flat: np.ndarray) -> np.ndarray:
    """``bound`` (broadcastable to ``shape``) at the flat indices ``flat``."""
    return np.broadcast_to(bound, shape).reshape(-1)[flat] if np.ndim(bound) else np.full(flat.shape, bound)


def _check(expected: np.ndarray, actual: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.shape != actual.shape:
        raise InputError(f"shapes differ: expected {expected.shape}, actual {actual.shape}")
    if expected.dtype != actual.dtype:
        raise InputError(
            f"dtypes differ: expected {expected.dtype}, actual {actual.dtype}; cast the backend output first"
        )
    return expected, actual


def _abs_error(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(actual.astype(np.float64) - expected.astype(np.float64))


def _flushed_output(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    tiny = float(finfo(expected.dtype).smallest_normal)
    e = np.abs(expected.astype(np.float64))
    return (e < tiny) & (actual.astype(np.float64) == 0)


def _apply(
    alt: Alternative, actual: np.ndarray, strict: np.ndarray, relaxed: np.ndarray, policy: Policy
) -> AlternativeUse:
    flat_strict, flat_relaxed = strict.reshape(-1), relaxed.reshape(-1)
    before = flat_strict[alt.index].copy()
    got = actual.reshape(-1)[alt.index]
    ok = ulp_distance(alt.values.astype(actual.dtype), got, signed_zero=policy.signed_zero) <= policy.ulp
    if alt.tier is Tier.STRICT or (alt.tier is Tier.FLUSH and policy.flush_subnormals):
        flat_strict[alt.index] |= ok
    elif alt.tier is Tier.RELAXED:
        flat_relaxed[alt.index] |= ok
    return AlternativeUse(alt.name, alt.tier, int(alt.index.size), int(before.sum()), int((ok & ~before).sum()))


def _result(
    expected: np.ndarray, actual: np.ndarray, status: np.ndarray, dist: np.ndarray,
    error: np.ndarray | None, bound: np.ndarray | None, uses: tuple[AlternativeUse, ...], limit: int,
) -> Comparison:
    tally = np.bincount(status.reshape(-1), minlength=3)
    counts = (int(tally[0]), int(tally[1]), int(tally[2]))
    bad = np.flatnonzero(status.reshape(-1) != Verdict.PASS)
    order = bad[np.argsort(-dist.reshape(-1)[bad].astype(np.float64), kind="stable")][:limit]
    if error is None:
        error = _abs_error(expected, actual) if order.size else np.zeros(0)
    worst = tuple(
        Mismatch(
            tuple(int(i) for i in np.unravel_index(i, expected.shape)),
            float(expected.reshape(-1)[i]), float(actual.reshape(-1)[i]), int(dist.reshape(-1)[i]),
            float(error.reshape(-1)[i]), float(bound.reshape(-1)[i]) if bound is not None else 0.0,
            Verdict(int(status.reshape(-1)[i])),
        )
        for i in order
    )
    status.flags.writeable = False
    dist.flags.writeable = False
    verdict = Verdict(int(status.max())) if status.size else Verdict.PASS
    return Comparison(status, dist, verdict, counts, worst, uses)
