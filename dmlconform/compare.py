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
import functools
import math
from dataclasses import dataclass, field, replace
from types import ModuleType

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
    """Another acceptable value at some elements (flat indices into the output).
    ``bound``, where given, is the absolute error an honest implementation
    of that reading may make at each of them (a reading whose own roundings
    are not the primary's: the literal Lp pooling of docs/window.md);
    without it a value is matched within the ULP budget alone."""

    name: str
    index: np.ndarray
    values: np.ndarray
    tier: Tier
    reason: str
    bound: np.ndarray | None = None

    def part(self, keep: np.ndarray | slice, shift: int) -> Alternative:
        """The elements ``keep`` (a mask or indices of ``index``), their indices moved by ``shift``."""
        if isinstance(keep, slice) and keep == slice(None) and not shift:
            return self
        return Alternative(self.name, self.index[keep] + shift, self.values[keep], self.tier, self.reason,
                           None if self.bound is None else self.bound[keep])


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
    (read-only arrays in the output's shape; the distance is 0 where an
    element is within its strict bound: none is needed there), the overall
    verdict, counts, the worst elements and the alternatives used."""

    status: np.ndarray
    ulp: np.ndarray
    verdict: Verdict
    counts: tuple[int, int, int]
    worst: tuple[Mismatch, ...]
    alternatives: tuple[AlternativeUse, ...] = field(default=())

    def summary(self) -> str:
        """``Mismatched elements: n / N (w quality warnings)``, as numpy writes it."""
        return summary(self.counts, int(self.status.size))


def summary(counts: tuple[int, int, int], total: int) -> str:
    """``Mismatched elements: n / N (w quality warnings)`` from PASS,
    QUALITY_WARNING and FAIL ``counts`` of ``total`` elements."""
    return f"Mismatched elements: {counts[2]} / {total} ({counts[1]} quality warnings)"


def finfo(dtype: np.dtype | type) -> np.finfo:
    """Facts of a float type, numpy's and ml_dtypes' alike (computed once
    per type: ml_dtypes builds them afresh on every call)."""
    return _finfo(np.dtype(dtype))


@functools.cache
def _finfo(dtype: np.dtype) -> np.finfo:
    if dtype.isbuiltin != 2:  # numpy's own type (2: one a package registered, as ml_dtypes does)
        return np.finfo(dtype)
    return ml_dtypes_module().finfo(dtype)


def ml_dtypes_module() -> ModuleType:
    """The ml_dtypes module (bfloat16, the float8 and 4-bit types), imported
    on first need: its import is 6x numpy's (0.63 s; issue #31, item 6),
    paid by the run's process and every worker, and the only DirectML types
    numpy lacks are INT4 and UINT4, which the default suite does not use.
    A value of one of its types exists only once it is imported, so asking
    about that value here costs nothing more."""
    import ml_dtypes  # noqa: PLC0415 - 6x numpy's import, for types few runs hold (see above)

    return ml_dtypes


def ordered_bits(x: np.ndarray, *, signed_zero: bool = False) -> np.ndarray:
    """Int64 keys that order floats like their values: consecutive floats get
    consecutive keys.  -0 and +0 share the key 0 unless ``signed_zero``, where
    -0 sits one below +0.  NaN keys are meaningless (callers mask NaN)."""
    x = np.ascontiguousarray(x)
    view = _BITS.get(x.dtype.itemsize)
    if view is None or not is_float(x.dtype):
        raise InputError(f"dtype={x.dtype} is not a float type; ordered_bits needs 1, 2, 4 or 8-byte floats")
    # built in place: a large tensor's keys cost one int64 array, not four (`bench/bench_gemm.py`)
    keys = x.view(view).astype(np.int64)
    negative = keys < 0
    keys &= np.int64((1 << (8 * x.dtype.itemsize - 1)) - 1)  # the magnitude
    keys *= 1 - 2 * negative.astype(np.int8)  # negated where negative
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
    # the larger key less the smaller, in place; int64 wraps where uint64 would not, so read it as uint64
    high = np.maximum(ka, kb)
    high -= np.minimum(ka, kb, out=ka)
    dist = high.view(np.uint64)
    nan_a, nan_b = nan_mask(a), nan_mask(b)
    dist[nan_a != nan_b] = _NAN_DISTANCE
    dist[nan_a & nan_b] = 0
    return dist


def nan_mask(x: np.ndarray) -> np.ndarray:
    """Where ``x`` is NaN, silently.  ml_dtypes' bfloat16 answers isnan by
    comparing the value with itself as a float32, which raises the invalid
    flag (a RuntimeWarning) on a signalling NaN such as 0xFF8D (quiet bit
    clear); numpy's types and ml_dtypes' float8 types read the bits and stay
    silent.  The answer is right for every pattern: only the flag is noise."""
    with np.errstate(invalid="ignore"):
        return np.isnan(x)


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
        return _is_float(np.dtype(dtype))
    except TypeError:
        return False


@functools.cache
def _is_float(dtype: np.dtype) -> bool:
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
    alternative; otherwise it FAILs.  The full-size arrays of the result are
    built from `compare_sparse`, which judges only the elements that differ."""
    expected, actual = _check(expected, actual)
    sparse = compare_sparse(expected, actual, policy=policy, bound_strict=bound_strict,
                            bound_relaxed=bound_relaxed, alternatives=alternatives)
    status = np.zeros(expected.shape, np.uint8)
    dist = np.zeros(expected.shape, np.uint64)
    status.reshape(-1)[sparse.index] = sparse.status
    dist.reshape(-1)[sparse.index] = sparse.ulp
    status.flags.writeable = False
    dist.flags.writeable = False
    worst_of = tuple(sparse.mismatch(k, expected.shape) for k in sparse.worst(worst))
    uses = tuple(t.use() for t in sparse.traces)
    verdict = Verdict(int(sparse.status.max())) if sparse.status.size else Verdict.PASS
    return Comparison(status, dist, verdict, sparse.counts(), worst_of, uses)


@dataclass(frozen=True, slots=True, eq=False)
class AlternativeTrace:
    """How one alternative fared, per element of its index: ``before``, the
    element already passed strictly; ``gained``, it passes only through the
    alternative.  `AlternativeUse` is its total."""

    name: str
    tier: Tier
    index: np.ndarray
    before: np.ndarray
    gained: np.ndarray
    #: Per element of ``index``: the backend gave the alternative's value
    #: (within the ULP budget), whatever else it matched too.
    matched: np.ndarray | None = None
    #: The flat [start, stop) of the block of a batch it was offered in
    #: (None: the whole output).  A batch compared a block at a time
    #: (`plan.COMPARE_ELEMENTS`) offers each block the alternatives in play
    #: there (a NaN reading where the block has a NaN): what one says holds
    #: in its own block (`judge._reading_blocks`, `SparseComparison.join`).
    block: tuple[int, int] | None = None

    def use(self) -> AlternativeUse:
        return AlternativeUse(self.name, self.tier, int(self.index.size), int(np.count_nonzero(self.before)),
                              int(np.count_nonzero(self.gained)))

    def shifted(self, offset: int, index: np.ndarray | None = None) -> AlternativeTrace:
        """The trace moved by ``offset`` (``index``: its elements moved already)."""
        block = None if self.block is None else (self.block[0] + offset, self.block[1] + offset)
        return AlternativeTrace(self.name, self.tier, self.index + offset if index is None else index, self.before,
                                self.gained, self.matched, block)


@dataclass(frozen=True, slots=True, eq=False)
class SparseComparison:
    """`compare`'s verdicts where they can be other than a clean PASS: at the
    flat, sorted ``index`` of the elements whose value differs from the
    expected one and, given a strict bound on a float type, lies beyond it
    (every other element is at distance 0 or within its bound: PASS).  Per such
    element: ``status`` (a `Verdict` code), ``ulp`` distance, absolute
    ``error``, the strict ``bound`` there (None without one), and the
    ``expected`` and ``actual`` values; ``traces`` say how each alternative
    fared.  No array of the output's size: what the runner keeps of a large
    case."""

    size: int
    index: np.ndarray
    status: np.ndarray
    ulp: np.ndarray
    error: np.ndarray
    bound: np.ndarray | None
    expected: np.ndarray
    actual: np.ndarray
    traces: tuple[AlternativeTrace, ...] = ()

    def counts(self) -> tuple[int, int, int]:
        """PASS, QUALITY_WARNING and FAIL counts of all ``size`` elements."""
        warned = int(np.count_nonzero(self.status == Verdict.QUALITY_WARNING))
        failed = int(np.count_nonzero(self.status == Verdict.FAIL))
        return self.size - warned - failed, warned, failed

    def worst(self, limit: int) -> np.ndarray:
        """Positions of the at most ``limit`` non-PASS elements with the
        largest ULP distance, first index first among equals."""
        bad = np.flatnonzero(self.status != Verdict.PASS)
        return bad[np.argsort(-self.ulp[bad].astype(np.float64), kind="stable")][:limit]

    def mismatch(self, k: int, shape: tuple[int, ...]) -> Mismatch:
        """The element at position ``k``, its flat index taken in ``shape``."""
        index = tuple(int(i) for i in np.unravel_index(int(self.index[k]), shape))
        return Mismatch(index, float(self.expected[k]), float(self.actual[k]), int(self.ulp[k]),
                        float(self.error[k]), float(self.bound[k]) if self.bound is not None else 0.0,
                        Verdict(int(self.status[k])))

    def shifted(self, offset: int) -> SparseComparison:
        """The same comparison for a block that starts at flat ``offset``."""
        if not offset:
            return self
        moved: dict[int, np.ndarray] = {}  # traces that share their elements (a marker and its reading) still do

        def move(index: np.ndarray) -> np.ndarray:
            if id(index) not in moved:
                moved[id(index)] = index + offset
            return moved[id(index)]

        traces = tuple(t.shifted(offset, move(t.index)) for t in self.traces)
        return SparseComparison(self.size, self.index + offset, self.status, self.ulp, self.error, self.bound,
                                self.expected, self.actual, traces)

    @staticmethod
    def join(parts: list[SparseComparison]) -> SparseComparison:
        """Comparisons of consecutive blocks (already shifted) as one."""
        if len(parts) == 1:
            return parts[0]
        cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0)  # noqa: E731
        bounds = [p.bound for p in parts]
        bound = None if all(b is None for b in bounds) else cat(
            [np.zeros(p.index.size) if b is None else b for p, b in zip(parts, bounds)])
        return SparseComparison(sum(p.size for p in parts), cat([p.index for p in parts]),
                                cat([p.status for p in parts]), cat([p.ulp for p in parts]),
                                cat([p.error for p in parts]), bound, cat([p.expected for p in parts]),
                                cat([p.actual for p in parts]), _joined_traces(parts))


def _joined_traces(parts: list[SparseComparison]) -> tuple[AlternativeTrace, ...]:
    """The traces of consecutive blocks (the first from 0), each with its
    block (`AlternativeTrace.block`)."""
    traces: list[AlternativeTrace] = []
    start = 0
    for p in parts:
        traces.extend(t if t.block is not None else replace(t, block=(start, start + p.size)) for t in p.traces)
        start += p.size
    return tuple(traces)


def compare_sparse(
    expected: np.ndarray,
    actual: np.ndarray,
    *,
    policy: Policy = Policy(),
    bound_strict: np.ndarray | None = None,
    bound_relaxed: np.ndarray | None = None,
    alternatives: tuple[Alternative, ...] = (),
) -> SparseComparison:
    """`compare`'s judgement at the elements that differ (beyond the strict
    bound, where one is given) only (see `SparseComparison`): distances and
    the relaxed tier are computed there and nowhere else, so a result equal
    to the expected one, or within its bound, costs a few vectorised passes
    over the arrays."""
    expected, actual = _check(expected, actual)
    relaxed_ulp = math.ceil(policy.ulp * policy.relaxed_factor)
    differ = _differing(expected, actual, bound_strict, signed_zero=policy.signed_zero)
    if not differ.size and (expected.dtype.kind in "iub" or is_float(expected.dtype)):
        return _identical(expected, actual, differ, bound_strict, alternatives, policy)
    flat_e, flat_a = expected.reshape(-1)[differ], actual.reshape(-1)[differ]
    dist = ulp_distance(flat_e, flat_a, signed_zero=policy.signed_zero)
    strict, relaxed = dist <= policy.ulp, dist <= relaxed_ulp
    error = _abs_error(flat_e, flat_a)
    strict_at = None
    if bound_strict is not None:
        strict_at = _at(bound_strict, expected.shape, differ)
        strict |= error <= strict_at
    if bound_relaxed is not None:
        relaxed |= error <= _at(bound_relaxed, expected.shape, differ)
    elif strict_at is not None:
        relaxed |= error <= strict_at * policy.relaxed_factor
    if policy.flush_subnormals and is_float(expected.dtype):
        strict |= _flushed_output(flat_e, flat_a)
    taken = _Taken(actual)
    traces = tuple(_apply(alt, actual, differ, strict, relaxed, policy, taken) for alt in alternatives)
    relaxed |= strict
    codes = np.uint8(Verdict.PASS), np.uint8(Verdict.QUALITY_WARNING), np.uint8(Verdict.FAIL)
    status = np.where(strict, codes[0], np.where(relaxed, codes[1], codes[2]))
    bound = None if bound_strict is None else np.asarray(strict_at, dtype=np.float64)
    return SparseComparison(int(expected.size), differ, status, dist, error, bound, flat_e, flat_a, traces)


def _identical(expected: np.ndarray, actual: np.ndarray, differ: np.ndarray, bound_strict: np.ndarray | None,
               alternatives: tuple[Alternative, ...], policy: Policy) -> SparseComparison:
    """`compare_sparse` where no element differs (an honest result, the
    common case) of a type it takes distances of: the same empty arrays, of
    the same types, and traces in which every element of an alternative
    passed already (``before``) and none gained from it, without computing
    a distance of the whole output (only at the alternatives' elements)."""
    codes, uint64, float64 = np.zeros(0, np.uint8), np.zeros(0, np.uint64), np.zeros(0, np.float64)
    taken = _Taken(actual)
    traces = tuple(AlternativeTrace(alt.name, alt.tier, alt.index, np.ones(alt.index.shape, bool),
                                    np.zeros(alt.index.shape, bool), _matched(alt, actual, policy, taken))
                   for alt in alternatives)
    return SparseComparison(int(expected.size), differ, codes, uint64, float64,
                            None if bound_strict is None else float64, expected.reshape(-1)[differ],
                            actual.reshape(-1)[differ], traces)


def _differing(expected: np.ndarray, actual: np.ndarray, bound: np.ndarray | None, *,
               signed_zero: bool) -> np.ndarray:
    """Flat indices of the elements that may be other than PASS: not at ULP
    distance 0 and, where a strict ``bound`` is given on a float type, beyond
    it (an element within it PASSes whatever its distance).  Equal bit
    patterns are the same value, so the value test (`_same`) runs only where
    the bits differ; the bound is tested on the whole arrays at once, as a
    contraction's result differs from the correctly rounded value almost
    everywhere (`bench/bench_gemm.py`).  On an honest result, a few passes
    over the arrays."""
    flat_e, flat_a = expected.reshape(-1), actual.reshape(-1)
    view = _BITS.get(expected.dtype.itemsize) if expected.dtype.kind != "b" else None
    if view is None:
        return np.flatnonzero(~_same(flat_e, flat_a, signed_zero=signed_zero))
    maybe = flat_e.view(view) != flat_a.view(view)
    if bound is not None and is_float(expected.dtype) and maybe.any():
        maybe &= ~(_abs_error(expected, actual) <= bound).reshape(-1)
    at = np.flatnonzero(maybe)
    return at[~_same(flat_e[at], flat_a[at], signed_zero=signed_zero)] if at.size else at


def _same(expected: np.ndarray, actual: np.ndarray, *, signed_zero: bool) -> np.ndarray:
    """Elements at ULP distance 0: equal values (with equal signs of zero where
    that counts), or NaN on both sides (a bfloat16 signalling NaN compared
    without a warning, as in `nan_mask`)."""
    with np.errstate(invalid="ignore"):
        same = expected == actual
    if expected.dtype.kind not in "iub":
        if signed_zero:
            same &= np.signbit(expected) == np.signbit(actual)
        nan = nan_mask(expected)
        if nan.any():  # the other side's NaNs only where this side has one (two passes fewer where none)
            same |= nan & nan_mask(actual)
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
    with np.errstate(invalid="ignore", over="ignore"):  # invalid: a bfloat16 signalling NaN's cast (`nan_mask`)
        error = actual.astype(np.float64)  # the one float64 array: a large output's temporaries stay small
        error -= expected
    return np.abs(error, out=error)


def _flushed_output(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    tiny = float(finfo(expected.dtype).smallest_normal)
    with np.errstate(invalid="ignore"):  # a bfloat16 signalling NaN's cast (`nan_mask`)
        e = np.abs(expected.astype(np.float64))
        return (e < tiny) & (actual.astype(np.float64) == 0)


class _Taken:
    """The actual values at an alternative's indices, gathered once per index
    array: a reading's marker shares its reading's indices (`oracles.base.marker`),
    so the gather of the large MVN1 case's 2^24 elements is not done twice."""

    def __init__(self, actual: np.ndarray) -> None:
        self.actual = actual
        self._found: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(index) -> (index, values): kept alive

    def at(self, index: np.ndarray) -> np.ndarray:
        found = self._found.get(id(index))
        if found is None or found[0] is not index:
            found = self._found[id(index)] = (index, np.take(self.actual.reshape(-1), index))  # half the time of [index]
        return found[1]


def _apply(alt: Alternative, actual: np.ndarray, differ: np.ndarray, strict: np.ndarray, relaxed: np.ndarray,
           policy: Policy, taken: _Taken) -> AlternativeTrace:
    """Accept ``alt`` where the backend matched it: ``strict`` and ``relaxed``
    are the verdicts at the flat indices ``differ`` (every other element
    passes already)."""
    pos = np.minimum(np.searchsorted(differ, alt.index), max(differ.size - 1, 0))
    inside = (differ[pos] == alt.index) if differ.size else np.zeros(alt.index.shape, bool)
    at = pos[inside]
    before = np.ones(alt.index.shape, bool)
    before[inside] = strict[at]
    ok = _matched(alt, actual, policy, taken)
    if alt.tier is Tier.STRICT or (alt.tier is Tier.FLUSH and policy.flush_subnormals):
        strict[at] |= ok[inside]
    elif alt.tier is Tier.RELAXED:
        relaxed[at] |= ok[inside]
    return AlternativeTrace(alt.name, alt.tier, alt.index, before, ok & ~before, ok)


def _matched(alt: Alternative, actual: np.ndarray, policy: Policy, taken: _Taken | None = None) -> np.ndarray:
    """Per element of ``alt``: whether ``actual`` holds its value (within the
    ULP budget, or within its bound).  Where it has a bound, that is tested
    first and the distance taken only where the bound does not hold (a
    reading with its own bound holds at nearly every element where the
    backend took it), over all elements at once where it fails at many (the
    large MVN1 case's reading, none of whose 2^24 values the population
    variance's reference gives): no gather of them.  A budget of 0 asks only
    for the same value (`_same`), not for the distance.  ``taken``: the
    comparison's gathers so far (`_Taken`)."""
    got = (_Taken(actual) if taken is None else taken).at(alt.index)
    values = alt.values.astype(got.dtype, copy=False)
    if alt.bound is None:
        return _within_budget(values, got, policy)
    ok = _abs_error(values, got) <= alt.bound
    left = ok.size - int(np.count_nonzero(ok))
    if left > ok.size // 8:
        ok |= _within_budget(values, got, policy)
    elif left:
        rest = np.flatnonzero(~ok)
        ok[rest] = _within_budget(values[rest], got[rest], policy)
    return ok


def _within_budget(values: np.ndarray, got: np.ndarray, policy: Policy) -> np.ndarray:
    """Per element: ``got`` within ``policy.ulp`` ULPs of ``values`` (of one
    type); for a budget of 0, the same value (`_same`: distance 0 is that,
    with any NaN matching any NaN and the sign of zero as the policy says)."""
    if policy.ulp == 0 and (values.dtype.kind in "iub" or is_float(values.dtype)):
        return _same(values, got, signed_zero=policy.signed_zero)
    return ulp_distance(values, got, signed_zero=policy.signed_zero) <= policy.ulp
