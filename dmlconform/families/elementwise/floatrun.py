"""The oracle for float inputs: one tracked float64 evaluation, the one
rounding, the bound, the exactness check and the alternatives.

DESIGN.md, "The oracle".  Kept apart from `families.elementwise.formula_oracle` (the public API) so
each stays readable.  The array path is written for throughput: whole-array
numpy operations, reductions instead of masks where a mask is usually empty
(NaN inputs, infinite inputs), float32 bounds for narrow targets, and the
float64-is-not-enough check done on the bit pattern of the float64 result
(`_candidates`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dmlconform.compare import Alternative, Tier, finfo, is_float
from dmlconform.families.elementwise import flushing
from dmlconform.formula.bounds import Err
from dmlconform.formula.evaluate import Evaluator, Settings, Val, any_true, certain_nan
from dmlconform.formula.refine import refine as exact
from dmlconform.formula.rounding import NATIVE, midpoints, to_float
from dmlconform.formula.tree import Binary, Call, FormulaTree, Name, Unary, walk
from dmlconform.oracles.base import range_lost
from dmlconform.plan import ORACLE_BLOCK

#: Safety factor on the float64 error bound when deciding where float64 is not
#: enough (the bound is first order).
FLOAT64_SAFETY = 4.0
#: A relative bound (in u) beyond which an element is checked one by one
#: rather than through the bit window.
WIDE_WINDOW = 4096.0
#: An intermediate this close to the target's largest value may overflow in an
#: implementation whose own rounding errors (attributes rounded to the type,
#: an exp argument off by a few ULPs) push it over.
OVERFLOW_MARGIN = 1 / 16
_NONE = np.zeros(0, dtype=np.intp)
#: Elements up to which the second looks of one kind of evaluation, of every
#: output and step, share one pass (`SharedPass.plan`): where its fixed cost
#: outweighs evaluating elements that only some of them ask about.
PREFETCH_LIMIT = 4096
#: Probes standing in for an infinite input when looking for a limit.
LIMIT_PROBES = (((2.0 ** 1000, 2.0 ** 1020), np.float64), ((2.0 ** 10, 2.0 ** 11), np.longdouble))


@dataclass(frozen=True, slots=True)
class Outcome:
    expected: np.ndarray
    bound: np.ndarray
    ambiguous: np.ndarray
    alternatives: tuple[Alternative, ...]
    uncertain: np.ndarray | None
    refined: int
    left_out: int = 0  # elements past the exact evaluation's budget, in ``uncertain``


@dataclass(frozen=True, slots=True)
class AltSpec:
    """Name, tier and reason of one kind of alternative."""

    name: str
    tier: Tier
    reason: str


MINMAX = AltSpec("ieee_minmax", Tier.STRICT, "IEEE maxNum/minNum: a NaN operand of min/max yields the other operand")
LEFT_OUT = AltSpec("past_exact_budget", Tier.RELAXED,
                   "past the exact evaluation's budget (limits.MAX_EXACT_ROWS distinct rows of operands): "
                   "no value is known there, any is accepted as a quality warning")
LIMIT = AltSpec("limit", Tier.RELAXED,
                "the literal formula gives NaN for an infinite input; its limit is accepted as a quality warning")
LITERAL = AltSpec("target_literal", Tier.RELAXED,
                  "an intermediate overflows, underflows or cancels in the target type (the exact result does "
                  "not); the formula computed step by step in that type is accepted as a quality warning where "
                  "it keeps the result's range (never +-inf, NaN or +-0 for a finite normal result)")
LITERAL32 = AltSpec("float32_literal", Tier.RELAXED,
                    "an intermediate overflows, underflows or cancels; the formula computed step by step in "
                    "float32 and rounded to the narrower target type is accepted as a quality warning where it "
                    "keeps the result's range (never +-inf, NaN or +-0 for a finite normal result)")
FLUSH = AltSpec("flushed_inputs", Tier.FLUSH, "subnormal inputs flushed to zero (the backend declares flushing)")
ROUNDED_INTO_DOMAIN = AltSpec(
    "rounded_into_domain", Tier.STRICT,
    "the exact value is NaN by an argument outside a function's domain by less than its rounding "
    "(Adam's 1 - pow(Beta2, T) for a tiny T < 0); the float64 evaluation, rounded into the domain, is honest")


#: np.max and np.min without their Python-level dispatch (the same reductions).
_MAX, _MIN = np.maximum.reduce, np.minimum.reduce


@dataclass(frozen=True, slots=True)
class _Indices:
    """Flat indices that need a second look, over the whole array."""

    nan: np.ndarray
    limit: np.ndarray
    uncertain: np.ndarray
    risky: np.ndarray
    overflow: np.ndarray
    #: of ``overflow``, where a divisor or a square root's argument cancelled (`Evaluator.check_divisor`)
    cancelled: np.ndarray
    range: np.ndarray
    wild: np.ndarray
    #: overflow, range and wild together, sorted: where the literal variants look (`FloatRun.plan`,
    #: `FloatRun.alternatives`; one array, so a look finds it planned as it is)
    literal: np.ndarray


@dataclass(slots=True)
class _Found:
    """Per-block findings, joined at the end."""

    nan: list = field(default_factory=list)
    limit: list = field(default_factory=list)
    uncertain: list = field(default_factory=list)
    risky: list = field(default_factory=list)
    overflow: list = field(default_factory=list)
    cancelled: list = field(default_factory=list)
    range: list = field(default_factory=list)
    wild: list = field(default_factory=list)
    certain_nan: list = field(default_factory=list)  # NaN in exact arithmetic too (no need for mpmath)

    def done(self) -> _Indices:
        overflow, range_, wild, limit = _join(self.overflow), _join(self.range), _join(self.wild), _join(self.limit)
        # the limit's elements too: an infinite input whose exact result is NaN may be a number step by step
        parts = [i for i in (overflow, range_, wild, limit) if i.size]
        literal = parts[0] if len(parts) == 1 else _sorted_union(parts) if parts else _NONE
        return _Indices(_join(self.nan), limit, _join(self.uncertain), _join(self.risky),
                        overflow, _join(self.cancelled), range_, wild, literal)


def _where(mask: np.ndarray, lo: int) -> np.ndarray:
    """The flat indices where a block's ``mask`` (of any shape) holds, as
    indices of the whole array (the block starts at ``lo``)."""
    found = mask.reshape(-1).nonzero()[0]
    return found + lo if lo else found


def _sorted_union(parts: list[np.ndarray]) -> np.ndarray:
    """The sorted union of sorted index arrays.  A stable sort of sorted runs
    is a merge; np.unique hashes every element first (0.48 s of the 0.84 s
    of a 2^24-element swish with SigmoidInputScale 1.7, whose exp overflows
    at a third of the elements: bench/bench_oracle.py)."""
    joined = np.concatenate(parts)
    joined.sort(kind="stable")
    return joined[np.concatenate(([True], joined[1:] != joined[:-1]))] if joined.size else joined


def _join(parts: list[np.ndarray]) -> np.ndarray:
    """Per-block index arrays end to end (most evaluations are one block)."""
    if not parts:
        return _NONE
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


@dataclass(frozen=True, slots=True)
class _Scan:
    """What whole-array reductions tell about the float inputs."""

    has_nan: bool
    has_inf: bool


class SharedPass:
    """The tracked evaluation of each block shared by the `FloatRun`s of
    several outputs of one tree on the same inputs, attributes and target
    type (`oracle.evaluate_many`): every statement runs for any output, so
    one evaluation gives each output's value and the evaluator's marks that
    its own evaluation would give.  A block's entry is dropped once every
    output has taken its part."""

    def __init__(self, outputs: tuple[str | None, ...]) -> None:
        self.outputs = outputs
        self.blocks: dict[int, tuple[dict[str | None, tuple[np.ndarray, Val]], Evaluator]] = {}
        #: per look (evaluation settings, probes), the last (sorted) set of elements evaluated and each
        #: output's arrays there: one entry per kind of look, so bounded
        self.subsets: dict[tuple[Any, ...], tuple[np.ndarray, dict[str | None, tuple[np.ndarray, ...]]]] = {}
        #: per evaluation settings, per probes (None: the inputs themselves), the sorted elements any
        #: output may ask about (`plan`)
        self.plans: dict[tuple[Any, ...], dict[Any, np.ndarray]] = {}

    def plan(self, settings: tuple[str, bool, Any], index: np.ndarray,
             probes: tuple[float, ...] | None = None) -> None:
        """Note that a second look with evaluation ``settings`` (minmax,
        exact64, work) may ask about ``index`` (with ``probes``: its
        infinite inputs replaced by each, `FloatRun.probe`).  The first look
        with those settings then evaluates every element noted for them, by
        every output and for every probe, in one pass (`look`): what the
        outputs and the successive steps ask (the exactness look of `widen`
        and `risky`, long double in `widen` and in the limit probes, the
        literal variants) is known once every output's tracked pass is done
        (`oracle.evaluate_many`), and a pass costs about the same for a
        hundred elements as for one."""
        if index.size:
            parts = self.plans.setdefault(settings, {})
            held = parts.get(probes)
            parts[probes] = _sorted_set(index) if held is None else np.union1d(held, index)

    def look(self, run: FloatRun, index: np.ndarray, settings: tuple[str, bool, Any],
             probes: tuple[float, ...] | None = None) -> tuple[np.ndarray, ...]:
        """`evaluate`'s arrays for ``run``'s output at ``index``: taken from
        the kept evaluation of this look where it holds ``index``, else from
        one pass over everything planned with these settings where that
        holds it and is at most `PREFETCH_LIMIT` elements (more would cost
        more than the passes saved), else from a pass at ``index`` itself.
        The evaluation is element-wise, so a value taken from a larger set is
        the one its own set gives.  For the very set kept, the kept arrays
        themselves come back: callers only read them."""
        key = (settings, probes)
        held = self.subsets.get(key)
        if held is not None and held[0] is index:  # the very set evaluated: its arrays as they are
            return held[1][run.output]
        pos = None if held is None else _positions(held[0], index)
        if held is None or pos is None:
            parts = self.plans.get(settings, {})
            planned = parts.get(probes)
            if (planned is not None and _positions(planned, index) is not None
                    and _planned_size(parts) <= PREFETCH_LIMIT):
                self.prefetch(run, settings)
            else:
                [per] = self.evaluate(run, settings, ((probes, index),))
                if index.size > 1 and _increasing(index):  # sorted: found by a binary search
                    self.subsets[key] = (index, per)
                else:
                    return per[run.output]
            held = self.subsets[key]
            if held[0] is index:
                return held[1][run.output]
            pos = _positions(held[0], index)
        return tuple(a[pos] for a in held[1][run.output])

    def prefetch(self, run: FloatRun, settings: tuple[str, bool, Any]) -> None:
        """Evaluate everything planned with ``settings`` in one pass, and
        keep it (`subsets`).  A float64 evaluation telling exactness
        (``exact64``) computes the very values of one that does not (the
        same operations; the flags come beside them), and only the values of
        the plain one are read (long double in `widen`, the literal
        variants, the limit probes): where both are planned and fit in
        `PREFETCH_LIMIT`, one exactness pass serves both."""
        minmax, exact64, work = settings
        groups = [(settings, self.plans.pop(settings))]
        partner = (minmax, not exact64, work)
        if work is np.float64 and partner in self.plans \
                and _planned_size(groups[0][1]) + _planned_size(self.plans[partner]) <= PREFETCH_LIMIT:
            groups.append((partner, self.plans.pop(partner)))
            settings = (minmax, True, work)
        keyed = [(kind, p, i) for kind, parts in groups for p, i in parts.items()]
        for (kind, p, i), per in zip(keyed, self.evaluate(run, settings, tuple((p, i) for _, p, i in keyed))):
            self.subsets[(kind, p)] = (i, per)

    def evaluate(self, run: FloatRun, settings: tuple[str, bool, Any],
                 parts: tuple[tuple[tuple[float, ...] | None, np.ndarray], ...]
                 ) -> list[dict[str | None, tuple[np.ndarray, ...]]]:
        """One untracked evaluation of the flat indices of every part, one
        after another (with probes: the elements repeated once per probe,
        their infinite inputs replaced): per part, per output, the values,
        where they are exact and where the exact value is NaN (`Val.nan`),
        or with probes the values in the target type, a row per element and
        a column per probe."""
        minmax, exact64, work = settings
        inputs = [run.subset(i) if p is None else run.subset(np.tile(i, len(p)), _stand_in(p, i.size))
                  for p, i in parts]
        arrays = inputs[0] if len(inputs) == 1 else {n: np.concatenate([x[n] for x in inputs]) for n in inputs[0]}
        sizes = [i.size * (1 if p is None else len(p)) for p, i in parts]
        results, _ = run.run_many(arrays, self.outputs, track=False, minmax=minmax, exact64=exact64, work=work)
        total = (sum(sizes),)
        spans = list(zip(itertools.accumulate(sizes, initial=0), itertools.accumulate(sizes)))
        out: list[dict[str | None, tuple[np.ndarray, ...]]] = [{} for _ in parts]
        for o, (v, val) in zip(self.outputs, results):
            v = _shaped(v, total)
            flags = None  # where exact, where NaN exactly: read by looks at the inputs themselves only
            for found, (p, _), (lo, hi) in zip(out, parts, spans):
                if p is not None:  # probes: the values in the target type, a row per element
                    found[o] = (to_float(v[lo:hi], run.dtype).reshape(len(p), -1).T,)
                    continue
                if flags is None:
                    flags = (_shaped(val.exact, total), _shaped(val.nan, total))
                found[o] = (v[lo:hi], flags[0][lo:hi], flags[1][lo:hi])
        return out

    def take(self, run: FloatRun, lo: int, part: Mapping[str, np.ndarray],
             spans: Mapping[str, tuple[float, float]]) -> tuple[np.ndarray, Val, Evaluator]:
        entry = self.blocks.get(lo)
        if entry is None:
            results, ev = run.run_many(part, self.outputs, track=True, spans=spans)
            entry = self.blocks[lo] = (dict(zip(self.outputs, results)), ev)
        pending, ev = entry
        values, val = pending.pop(run.output)
        if not pending:
            del self.blocks[lo]
        return values, val, ev

    def at(self, run: FloatRun, index: np.ndarray,
           settings: tuple[str, bool, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`FloatRun.at` for every output at once (`look`): the outputs'
        second looks (literal variants, exactness checks, long double) are
        mostly at the same elements, so one evaluation gives every output's
        values."""
        values, exact, nan = self.look(run, index, settings)
        return values, exact, nan

    def probe(self, run: FloatRun, index: np.ndarray, probes: tuple[float, ...], work: Any) -> list[np.ndarray]:
        """`FloatRun.probe` for every output at once (`look`)."""
        [rows] = self.look(run, index, ("propagate", False, work), probes)
        return list(rows.T)


def _sorted_set(index: np.ndarray) -> np.ndarray:
    """np.unique of ``index``; most plans are one kind's flat indices,
    sorted and distinct already (`_Found.done`), which one comparison tells."""
    return index if _increasing(index) else np.unique(index)


def _increasing(index: np.ndarray) -> bool:
    """Whether ``index`` is strictly increasing (sorted and distinct)."""
    return bool((index[1:] > index[:-1]).all())


def _planned_size(parts: Mapping[Any, np.ndarray]) -> int:
    """Elements one pass over planned ``parts`` evaluates: each part's,
    once per probe (`SharedPass.plan`)."""
    return sum(i.size * len(p or (0,)) for p, i in parts.items())


def _stand_in(probes: tuple[float, ...], size: int) -> Callable[[str, np.ndarray], np.ndarray]:
    """The transform (`FloatRun.subset`) of ``size`` elements repeated once
    per probe: each infinite input replaced by the probe, its sign kept."""
    stand = np.repeat(np.asarray(probes, dtype=np.float64), size)

    def swap(name: str, x: np.ndarray) -> np.ndarray:
        return np.where(np.isinf(x), np.copysign(stand, x), x)

    return swap


class FloatRun:
    """One float-mode evaluation of an expanded tree and what follows from it.

    The evaluation runs block by block (`plan.ORACLE_BLOCK` elements): every temporary
    stays in cache and no large array is allocated but the results, which is
    what makes the oracle with its bound and checks cost about as much as the
    bare float64 expression.  Blocks are a loop over chunks, not elements."""

    def __init__(self, formula: Prepared, arrays: dict[str, np.ndarray], attrs: dict[str, Val],
                 shape: tuple[int, ...], dtype: np.dtype, *, output: str | None, propagate_nan: bool,
                 shared: SharedPass | None = None) -> None:
        self.formula, self.tree = formula, formula.expanded
        self.arrays, self.attrs, self.shape = arrays, attrs, shape
        self.shared = shared
        self.looks = shared if shared is not None else SharedPass((output,))  # second looks, kept (`at`)
        self.dtype, self.output, self.propagate_nan = dtype, output, propagate_nan
        facts = _type_facts(dtype)
        self.float_target, self.info, self.unit = facts.float_target, facts.info, facts.unit
        self.floats = {n: a for n, a in arrays.items() if is_float(a.dtype)}
        self.has_minmax = formula.has_minmax
        self.decides = formula.decides
        self.size = math.prod(shape)
        self.flat = {n: frozen(a.reshape(-1) if a.shape == shape else np.broadcast_to(a, shape).reshape(-1))
                     for n, a in arrays.items()}  # read-only: the inputs are never written
        self.rel = 0.0  # relative part of the bound (in u), known after the first block
        self.fixed: dict[Any, dict[str, Val]] = {}  # attributes and pi per work type
        self.literal_type = facts.literal_type
        self.integer_rounding = formula.integer_rounding
        self.certain: np.ndarray = _NONE  # flat indices whose exact value is NaN (`evaluate.certain_nan`)
        self.left_out: list[np.ndarray] = []  # flat indices past the exact evaluation's budget (`exactly`)

    # -- evaluation ------------------------------------------------------
    def run(self, arrays: Mapping[str, np.ndarray], *, track: bool, minmax: str = "propagate",
            exact64: bool = False, work: Any = np.float64,
            spans: Mapping[str, tuple[float, float]] | None = None,
            evaluator: Callable[[dict[str, Val], Settings], Evaluator] = Evaluator,
            ) -> tuple[np.ndarray, Val, Evaluator]:
        """Evaluate on ``arrays`` (any common broadcast shape), computing in
        ``work`` (float64; the target type for a literal evaluation; long
        double for range); the values come back as a fresh contiguous array of
        that type and shape.  With ``exact64`` the value also says where it is
        exact (`formula.exact64`).  ``evaluator`` makes the evaluator (one
        that flushes subnormals per operation: `flushing`)."""
        [(values, val)], ev = self.run_many(arrays, (self.output,), track=track, minmax=minmax, exact64=exact64,
                                            work=work, spans=spans, evaluator=evaluator)
        return values, val, ev

    def run_many(self, arrays: Mapping[str, np.ndarray], outputs: tuple[str | None, ...], *, track: bool,
                 minmax: str = "propagate", exact64: bool = False, work: Any = np.float64,
                 spans: Mapping[str, tuple[float, float]] | None = None,
                 evaluator: Callable[[dict[str, Val], Settings], Evaluator] = Evaluator,
                 ) -> tuple[list[tuple[np.ndarray, Val]], Evaluator]:
        """`run` for several outputs in one evaluation: per output its values
        (each its own array) and value."""
        spans = spans or {}
        env = {n: Val(np.asarray(a, dtype=work), exact=True, span=spans.get(n)) for n, a in arrays.items()}
        fixed = self.fixed.get(work)
        if fixed is None:
            fixed = self.fixed[work] = {
                n: replace(v, v=v.v if isinstance(v.v, str) else work(v.v), exact=not isinstance(v.v, str))
                for n, v in self.attrs.items()}
            fixed["pi"] = _pi(work)
        env.update(fixed)
        settings = _settings(self.dtype, track, minmax, exact64, work)
        ev = evaluator(env, settings)
        with np.errstate(all="ignore"):
            vals = ev.run_many(self.tree, outputs, finals=self.formula.finals)
        out: list[tuple[np.ndarray, Val]] = []
        given = _common_shape([np.shape(a) for a in arrays.values()])
        for val in vals:
            values = np.asarray(ev.num(val.v), dtype=work)
            shape = given if values.shape == given else np.broadcast_shapes(values.shape, given)
            if (values.shape != shape or not values.flags.c_contiguous or not val.owned
                    or any(values is seen for seen, _ in out)):
                values = np.array(np.broadcast_to(values, shape), dtype=work, order="C")
            out.append((values, val))
        return out, ev

    def at(self, index: np.ndarray, *, minmax: str = "propagate", exact64: bool = False,
           work: Any = np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The untracked values at the flat ``index`` (in ``work``), where
        they are exact and where the exact value is NaN (with ``exact64``;
        `Val.nan`), each of ``index``'s shape; shared
        with the other outputs of the same inputs and kept for a later look
        within the same elements (`SharedPass.at`)."""
        return self.looks.at(self, index, (minmax, exact64, work))

    def scan(self) -> _Scan:
        nan = inf = False
        for a in self.floats.values():
            lo, hi = _MIN(a, axis=None), _MAX(a, axis=None)
            if np.isnan(lo) or np.isnan(hi):
                nan = True
                inf = inf or bool(np.isinf(a).any())
            else:
                inf = inf or bool(np.isinf(lo) or np.isinf(hi))
        return _Scan(nan, inf)

    def mask(self, test: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        out = np.zeros(self.shape, dtype=bool)
        for a in self.floats.values():
            out |= np.broadcast_to(test(a), self.shape)
        return out

    # -- the whole oracle ------------------------------------------------
    def scan_blocks(self, *, refine: bool) -> tuple[np.ndarray, np.ndarray, _Indices]:
        """The tracked pass, block by block: the values, their bound and the
        elements that need a second look."""
        expected = np.empty(self.size, dtype=self.dtype)
        bound = np.empty(self.size, dtype=np.float64 if self.dtype == np.float64 else np.float32)
        acc = _Found()
        for lo in range(0, self.size, ORACLE_BLOCK):
            self.block(lo, min(lo + ORACLE_BLOCK, self.size), expected, bound, acc, refine=refine and self.dtype != np.float64)
        found = acc.done()
        self.certain = np.concatenate(acc.certain_nan) if acc.certain_nan else _NONE
        return expected, bound, found

    def plan(self, found: _Indices) -> None:
        """Tell the second looks (`SharedPass.plan`) every element this
        output's `finish` may ask about, per kind: where float64 is exact
        (`exact_nan` within the range, `risky`, `infinite`, `nan_exactly`), long double (`widen`), the
        literal variants, the limit probes, IEEE min/max."""
        looks = self.looks
        exact = [i for i in (found.range, found.risky, found.cancelled) if i.size]
        if exact:  # usually none: no plan costs nothing (`infinite`, `nan_exactly` look at the last two)
            looks.plan(("propagate", True, np.float64), np.concatenate(exact))
        looks.plan(("propagate", False, np.longdouble), found.range)
        if found.literal.size:
            looks.plan(("propagate", False, self.literal_type), found.literal)
            if self.dtype.itemsize < 4 and self.literal_type is not np.float32:
                looks.plan(("propagate", False, np.float32), found.literal)
        for probes, work in LIMIT_PROBES:
            looks.plan(("propagate", False, work), found.limit, probes)
        if self.has_minmax:
            looks.plan(("number", False, np.float64), found.nan)

    def finish(self, expected: np.ndarray, bound: np.ndarray, found: _Indices, *, flush: bool) -> Outcome:
        """What follows the tracked pass (`scan_blocks`): the second looks,
        the alternatives."""
        refined = self.widen(found.range, expected, bound, found.cancelled) if found.range.size else 0
        refined += self.refine(found.risky, expected, bound) if found.risky.size else 0
        if found.cancelled.size:  # Adam's 1 - pow(Beta1, T) at a tiny T, sqrt(1 - pow(Beta2, T)) at T < 0
            refined += self.infinite(found.limit[np.isin(found.limit, found.cancelled)], expected, bound)
            refined += self.nan_exactly(found.cancelled, expected)
        ambiguous = np.zeros(self.size, dtype=bool)
        alternatives = self.alternatives(found, expected, ambiguous, flush)
        uncertain = None
        left_out = np.unique(_join(self.left_out)) if self.left_out else _NONE
        if left_out.size:  # any value accepted (relaxed): a finite one within the relaxed bound, NaN as an alternative
            unknown = left_out[~np.isfinite(expected[left_out].astype(np.float64))]
            expected[unknown] = 0
            alternatives += (Alternative(LEFT_OUT.name, left_out, np.full(left_out.size, np.nan, dtype=self.dtype),
                                         LEFT_OUT.tier, LEFT_OUT.reason),)
        if found.uncertain.size or left_out.size:
            uncertain = np.zeros(self.size, dtype=bool)
            uncertain[found.uncertain] = True
            uncertain[left_out] = True
            ambiguous |= uncertain
            uncertain = uncertain.reshape(self.shape)
        return Outcome(expected.reshape(self.shape), bound.reshape(self.shape), ambiguous.reshape(self.shape),
                       alternatives, uncertain, refined, int(left_out.size))

    def block(self, lo: int, hi: int, expected: np.ndarray, bound: np.ndarray, acc: _Found, *, refine: bool) -> None:
        """Evaluate elements [lo, hi) and note what needs a second look."""
        part = {n: a[lo:hi] for n, a in self.flat.items()}
        spans: dict[str, tuple[float, float]] = {}
        nan_in, inf_in = self.special_inputs(part, spans)
        if self.shared is None:
            values, val, ev = self.run(part, track=True, spans=spans)
        else:
            values, val, ev = self.shared.take(self, lo, part, spans)
        if nan_in is not None and self.propagate_nan:
            values[nan_in] = np.nan
        span = val.span  # interval arithmetic on the inputs: a bounded result cannot have left the range
        self.note_specials(values, nan_in, inf_in, ev, acc, lo,
                           bounded=span is not None and max(-span[0], span[1]) < 1e300)
        if any_true(val.nan):
            acc.certain_nan.append(np.flatnonzero(certain_nan(val, ev, values.shape, decides=self.decides)) + lo)
        out = expected[lo:hi]
        if self.dtype in NATIVE:  # the cast straight into the result (the same RNE cast as to_float's)
            with np.errstate(over="ignore", invalid="ignore"):
                np.copyto(out, values, casting="unsafe")
        else:
            out[...] = to_float(values, self.dtype)
        small, loose = self.block_bound(values, val.err, out, bound[lo:hi], has_inf=inf_in is not None)
        self.rel = max(self.rel, val.err.rel + 1)
        self.note_wild(out, bound[lo:hi], small, loose, acc, lo)
        if refine:
            self.note_candidates(values, small, loose, bound[lo:hi], acc, lo)

    def special_inputs(self, part: Mapping[str, np.ndarray],
                       spans: dict[str, tuple[float, float]]) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Masks of the elements with a NaN and with an infinite float input,
        None where there is none (one min and one max per input tell); the
        [min, max] of each input that has neither goes into ``spans``."""
        nan = inf = None
        for n in self.floats:
            a = part[n]
            if not a.size:
                continue
            low, high = _MIN(a, axis=None), _MAX(a, axis=None)
            if np.isfinite(low) and np.isfinite(high):  # usually neither NaN nor infinity
                spans[n] = (float(low), float(high))
                continue
            if np.isnan(low) or np.isnan(high):
                nan = np.isnan(a) if nan is None else (nan | np.isnan(a))
                m = np.isinf(a)
                inf = (m if inf is None else (inf | m)) if m.any() else inf
            elif np.isinf(low) or np.isinf(high):
                inf = np.isinf(a) if inf is None else (inf | np.isinf(a))
        return nan, inf

    def note_specials(self, values: np.ndarray, nan_in: np.ndarray | None, inf_in: np.ndarray | None,
                      ev: Evaluator, acc: _Found, lo: int, *, bounded: bool = False) -> None:
        """Collect the block's NaN inputs, literal NaNs of infinite inputs,
        uncertain discontinuities, overflowing intermediates and results that
        left float64's range."""
        if nan_in is not None:
            acc.nan.append(_where(nan_in, lo))
        if inf_in is not None:
            limit = np.isnan(values) & inf_in
            if nan_in is not None:
                limit &= ~nan_in
            acc.limit.append(_where(limit, lo))
        for mask, into in ((ev.uncertain, acc.uncertain), (ev.overflow, acc.overflow), (ev.cancelled, acc.cancelled)):
            if mask is not None:
                into.append(_where(mask if np.shape(mask) == values.shape else np.broadcast_to(mask, values.shape),
                                   lo))
        if not bounded and not np.isfinite(np.sum(values)):  # a reduction first: usually all finite
            lost = ~np.isfinite(values)
            for m in (nan_in, inf_in):
                if m is not None:
                    lost &= ~m
            acc.range.append(_where(lost, lo))

    def note_wild(self, out: np.ndarray, bound: np.ndarray, small: np.ndarray, loose: np.ndarray,
                  acc: _Found, lo: int) -> None:
        """Collect the block's elements whose bound reaches the value itself:
        an intermediate cancels (``1 - pow(Beta1, T)`` for a tiny T), so the
        target type may not even get the sign, or get 0 and divide by it.
        Only the elements the bound window cannot judge can be such."""
        parts = [p for p in (small, loose) if p.size]
        if not parts:
            return
        at = _join(parts)
        b, e = bound[at].astype(np.float64), np.abs(out[at].astype(np.float64))
        with np.errstate(invalid="ignore"):
            wild = ~(b < e) & ~(b == 0)
        if wild.any():
            acc.wild.append(at[wild] + lo)

    def note_candidates(self, values: np.ndarray, small: np.ndarray, loose: np.ndarray, bound: np.ndarray,
                        acc: _Found, lo: int) -> None:
        """Collect the block's elements that may need exact rounding."""
        if small.size:  # most are far from the evenly spaced subnormal midpoints
            small = small[self.near_subnormal_midpoint(values[small], bound[small])]
        window = FLOAT64_SAFETY * (self.rel + WIDE_WINDOW)
        parts = [p for p in (_candidates(values, window, self.info), small, loose) if p.size]
        if parts:
            acc.risky.append((np.unique(np.concatenate(parts)) if len(parts) > 1 else parts[0]) + lo)

    def block_bound(self, values: np.ndarray, err: Err, expected: np.ndarray, bound: np.ndarray, *,
                    has_inf: bool) -> tuple[np.ndarray, np.ndarray]:
        """Fill ``bound`` with ``u * ((rel + 1) * |v| + abs)``, the +1 being the
        final rounding (FLOAT64 counts the oracle's own error twice).  Returns
        the block indices the bit window cannot judge: results below the
        target's smallest normal, and where the absolute part dominates (a
        relative bound over `WIDE_WINDOW` u)."""
        kind = bound.dtype.type
        scale = self.unit * (2.0 if self.dtype == np.float64 else 1.0)
        loose = _NONE
        with np.errstate(invalid="ignore", over="ignore"):
            np.abs(values, out=bound, casting="unsafe")  # |v|: also right where the result underflows
            tiny = kind(self.info.smallest_normal)
            small = _NONE if _MIN(bound, axis=None) >= tiny else np.flatnonzero(bound < tiny)  # a reduction: usually none
            if err.abs is not None:
                part = np.broadcast_to(err.abs, values.shape) * scale
                if has_inf:
                    part[~np.isfinite(part)] = 0.0
                dominant = (part > bound * (WIDE_WINDOW * scale)) & (bound >= kind(self.info.smallest_normal))
                loose = np.flatnonzero(dominant)
            bound *= kind((err.rel + 1) * scale)
            if err.abs is not None:
                bound += part
        return small, loose

    # -- float64 is not always enough ---------------------------------------
    def risky(self, index: np.ndarray, expected: np.ndarray, bound: np.ndarray) -> np.ndarray:
        """Of the candidate flat ``index``, those whose float64 value is not
        exact and lies within its own error of a rounding boundary of the
        target type.  The candidates are evaluated again, telling exactness."""
        v, exact, _ = self.at(index, exact64=True)
        keep = ~exact
        index, v = index[keep], v[keep]
        if index.size == 0:
            return index
        e, b = expected[index], bound[index]
        small = np.abs(e.astype(np.float64)) < float(self.info.smallest_normal)
        near = np.where(small, self.near_subnormal_midpoint(v, b), self.near_midpoint(v, e, b))
        return index[near]

    def float64_error(self, v: np.ndarray, bound: np.ndarray) -> np.ndarray:
        """The float64 evaluation's own error bound: the target bound scaled
        to float64's unit roundoff, plus its relative part taken on the
        float64 value itself (the target bound uses the rounded value, which
        is 0 or infinite where the result underflows or overflows)."""
        b = bound.astype(np.float64)
        with np.errstate(invalid="ignore"):
            b = np.where(np.isfinite(b), b / self.unit, 0.0) + self.rel * np.abs(v)
        return b * (2.0 ** -53 * FLOAT64_SAFETY)

    def near_midpoint(self, v: np.ndarray, expected: np.ndarray, bound: np.ndarray) -> np.ndarray:
        err64 = self.float64_error(v, bound)
        below, above = midpoints(expected)
        with np.errstate(invalid="ignore"):
            return (err64 > 0) & np.isfinite(v) & ((v - err64 <= below) | (v + err64 >= above))

    def near_subnormal_midpoint(self, v: np.ndarray, bound: np.ndarray) -> np.ndarray:
        """Below the smallest normal the grid is evenly spaced: scale it to
        the integers and look at the distance from a half."""
        step = float(self.info.smallest_subnormal)
        w = v / step
        err = self.float64_error(v, bound) / step
        with np.errstate(invalid="ignore"):
            return (err > 0) & (np.abs(w - np.floor(w) - 0.5) <= err)

    def widen(self, index: np.ndarray, expected: np.ndarray, bound: np.ndarray, cancelled: np.ndarray) -> int:
        """Finite inputs, yet a float64 result that is not finite: an
        intermediate left float64's range (tanh written with exp(-2x), for
        x < -355) or cancelled to 0 and was divided by.  Recompute in long
        double (wider range, 11 more bits); where that is still not finite,
        where float64 gave NaN (an inf/inf, 0/0 or 0*inf: a cancellation long
        double may only half resolve), or where a divisor cancelled
        (``cancelled``: Adam's ``1 - pow(Beta1, T)`` at Beta1 = 1.0000001,
        T = 8.3e-10 keeps 3 digits in long double), exactly (mpmath), for up
        to `limits.MAX_EXACT_ROWS` distinct rows.
        Returns how many changed."""
        nan64 = np.isnan(expected[index].astype(np.float64))
        # NaN exactly (the tracked evaluation knows, or the exact one), whatever long double makes of it:
        # Adam's sqrt(1 - pow(Beta2, T)) / (1 - pow(Beta1, T)) at T < 0 is NaN, not 0 / -1e-19 = -0
        nan = np.isin(index, self.certain) if self.certain.size else np.zeros(index.size, dtype=bool)
        nan[~nan] = self.exact_nan(index[~nan])
        values, _, _ = self.at(index, work=np.longdouble)
        finite = np.isfinite(values) & ~nan
        # long double's 64 bits cannot hold trunc(a / b) of a huge quotient
        wider = np.finfo(np.longdouble).maxexp > np.finfo(np.float64).maxexp and not self.integer_rounding
        changed = 0
        if wider and finite.any():
            at = index[finite]
            expected[at] = to_float(values[finite], self.dtype)
            scale = self.unit * (2.0 if self.dtype == np.float64 else 1.0)
            bound[at] = np.abs(expected[at].astype(np.float64)) * (self.rel * scale)
            changed = int(finite.sum())
        again = ~finite | nan64 | np.isin(index, cancelled) if wider else True
        rest = index[again & ~nan]
        if rest.size:
            fixed = self.exactly(rest, expected, zeros=True)
            changed += fixed
            at = rest[np.isfinite(expected[rest].astype(np.float64))]
            scale = self.unit * (2.0 if self.dtype == np.float64 else 1.0)
            bound[at] = np.abs(expected[at].astype(np.float64)) * (self.rel * scale)
        return changed

    def nan_exactly(self, index: np.ndarray, expected: np.ndarray) -> int:
        """Where an intermediate cancelled (``index``: `_Indices.cancelled`)
        and float64 gives a number although the exact value is NaN: the
        square root of a float64 0 that is negative exactly, divided by an
        infinity (Adam's ``sqrt(1 - pow(Beta2, T)) / (1 - pow(Beta1, T))`` at
        T < 0, Beta1 = 0).  Only in a tree that decides nothing, where `Val.nan`
        holds on the one path.  Returns how many became NaN."""
        if self.decides:
            return 0
        index = index[np.isfinite(expected[index].astype(np.float64))]
        if not index.size:
            return 0
        _, _, nan = self.at(index, exact64=True)
        at = index[np.broadcast_to(nan, index.shape)]
        expected[at] = np.nan
        return int(at.size)

    def infinite(self, index: np.ndarray, expected: np.ndarray, bound: np.ndarray) -> int:
        """An infinite input, a float64 NaN and a divisor that cancelled
        (``index``): the formula's own NaN (inf - inf, 0 * inf), or one the
        cancelled divisor made (Adam's ``1 - pow(Beta1, T)`` at a tiny T, 0 /
        0, beside an infinite X: the value is X).  Evaluated exactly
        (mpmath's infinities follow IEEE), for up to `limits.MAX_EXACT_ROWS` distinct rows;
        returns how many became a number."""
        index = index[~self.exact_nan(index)]
        if not index.size:
            return 0
        self.exactly(index, expected, zeros=True)
        at = index[~np.isnan(expected[index].astype(np.float64))]
        finite = at[np.isfinite(expected[at].astype(np.float64))]
        scale = self.unit * (2.0 if self.dtype == np.float64 else 1.0)
        bound[finite] = np.abs(expected[finite].astype(np.float64)) * (self.rel * scale)
        bound[at[~np.isin(at, finite)]] = 0
        return int(at.size)

    def exact_nan(self, index: np.ndarray) -> np.ndarray:
        """Where float64 gives NaN because a function's exact finite argument
        is outside its real domain (acosh(0.5), log(-1)), or an operation
        meets such a NaN: the exact value is NaN, and mpmath has nothing to
        add."""
        if index.size == 0:
            return np.zeros(0, dtype=bool)
        values, exact, nan = self.at(index, exact64=True)
        if not self.decides:  # a choice may go another way in exact arithmetic: `Val.nan` holds on one path
            exact = exact | nan
        return np.isnan(values) & exact

    def exactly(self, index: np.ndarray, expected: np.ndarray, *, zeros: bool = False) -> int:
        env: dict[str, Any] = dict(self.arrays)
        env.update({n: v.v for n, v in self.attrs.items()})
        fixed, done, left_out = exact(self.tree, env, index, self.shape, self.dtype, minmax="propagate",
                                      output=self.output, zeros=zeros)
        expected[index[done]] = fixed[done]
        if left_out.any():
            self.left_out.append(index[left_out])
        return int(done.sum())

    def refine(self, index: np.ndarray, expected: np.ndarray, bound: np.ndarray) -> int:
        """Recompute the risky ones among ``index`` exactly (mpmath); returns
        how many were fixed."""
        index = self.risky(index, expected, bound)
        return self.exactly(index, expected) if index.size else 0

    # -- ambiguity -----------------------------------------------------------
    def alternatives(
        self, found: _Indices, expected: np.ndarray, ambiguous: np.ndarray, flush: bool
    ) -> tuple[Alternative, ...]:
        alts: list[Alternative] = []
        if self.has_minmax and found.nan.size:
            alts += self.variant(self.minmax_open(found.nan), expected, ambiguous, MINMAX, minmax="number")
        if found.limit.size:
            ambiguous[found.limit] = True
            alts += self.limit(found.limit)
        index = found.literal
        if index.size:
            alts += self.variant(index, expected, ambiguous, LITERAL, literal=True)
            if self.dtype.itemsize < 4 and self.literal_type is not np.float32:
                # a half tensor computed in float32 (the attributes are float32 already)
                alts += self.variant(index, expected, ambiguous, LITERAL32, literal=True, work=np.float32)
        hidden = self.exact_nan_of_finite_inputs(expected)
        if hidden.size:
            alts += self.variant(hidden, expected, ambiguous, ROUNDED_INTO_DOMAIN)
        if flush:
            alts += self.flushed(expected)
        return tuple(alts)

    def exact_nan_of_finite_inputs(self, expected: np.ndarray) -> np.ndarray:
        """Flat elements whose expected value is NaN although every input is
        finite: the exact value is NaN (a domain), and where the float64
        evaluation is finite its rounding moved an argument into the domain
        (`ROUNDED_INTO_DOMAIN`; issue #32's bound audit, docs/bounds.md: an
        honest float64 implementation FAILed two Adam cases).  A NaN or
        infinite input is never among them (NaN propagation, limits)."""
        if not self.float_target:
            return _NONE
        index = np.flatnonzero(np.isnan(expected))
        for name in self.floats:
            if not index.size:
                break
            index = index[np.isfinite(self.flat[name][index])]
        return index

    def minmax_open(self, index: np.ndarray) -> np.ndarray:
        """Of the NaN-input elements ``index``, those where IEEE min/max may
        change the value: not where an input is NaN that reaches the output
        through arithmetic alone (`_nan_strict`), as HardSwish's x in
        ``x * max(0, min(1, a * x + b))``: the value is NaN either way, and
        the variant would not differ there."""
        strict = [self.flat[n] for n in _nan_strict(self.tree).get(self.output, ()) if n in self.floats]
        if not strict:
            return index
        nan = np.isnan(strict[0][index])
        for a in strict[1:]:
            nan |= np.isnan(a[index])
        return index[~nan]

    def subset(
        self, index: np.ndarray, transform: Callable[[str, np.ndarray], np.ndarray] | None = None
    ) -> dict[str, np.ndarray]:
        out = {}
        for n, a in self.flat.items():
            picked = a[index].astype(np.float64, copy=False)  # indexing copies already
            out[n] = transform(n, picked) if transform else picked
        return out

    def values_at(self, index: np.ndarray, transform: Any = None, minmax: str = "propagate",
                  literal: bool = False, work: Any = None) -> np.ndarray:
        work = work if work is not None else (self.literal_type if literal else np.float64)
        if transform is None:
            values, _, _ = self.at(index, minmax=minmax, work=work)
        else:
            values, _, _ = self.run(self.subset(index, transform), track=False, minmax=minmax, work=work)
            values = np.broadcast_to(values, index.shape)
        return to_float(values.astype(np.float64), self.dtype)

    def variant(self, index: np.ndarray, expected: np.ndarray, ambiguous: np.ndarray, spec: AltSpec,
                *, minmax: str = "propagate", transform: Any = None, literal: bool = False,
                work: Any = None) -> list[Alternative]:
        if index.size == 0:
            return []
        alt = self.values_at(index, transform, minmax, literal, work)
        differs = _differs(alt, expected[index])
        if literal:  # a step-by-step evaluation, never a loss of range (`oracles.base.range_lost`)
            differs &= ~range_lost(alt, expected[index])
        if not differs.any():
            return []
        ambiguous[index[differs]] = True
        return [Alternative(spec.name, frozen(index[differs]), frozen(alt[differs]), spec.tier, spec.reason)]

    def limit(self, index: np.ndarray) -> list[Alternative]:
        """Where the literal formula gives NaN for an infinite input (and no
        NaN input), the limit: the value at two huge finite stand-ins, when
        both round to the same value.  Stand-ins near float64's range first,
        then moderate ones in long double (where exp(-2x) must not overflow)."""
        values = np.zeros(index.size, dtype=self.dtype)
        found = np.zeros(index.size, dtype=bool)
        todo = np.arange(index.size)  # positions in ``index`` without a limit yet
        for probes, work in LIMIT_PROBES:
            got = self.probe(index if todo.size == index.size else index[todo], probes, work)
            agree = got[0] == got[1]  # the same number: NaN agrees with nothing
            values[todo[agree]] = got[0][agree]
            found[todo[agree]] = True
            todo = todo[~agree]
            if not todo.size:
                break
        if not found.any():
            return []
        return [Alternative(LIMIT.name, frozen(index[found]), frozen(values[found]), LIMIT.tier, LIMIT.reason)]

    def probe(self, index: np.ndarray, probes: tuple[float, ...], work: Any) -> list[np.ndarray]:
        """The values at ``index`` with every infinite input replaced by each
        of ``probes`` (its sign kept): one evaluation of the elements repeated
        once per probe (the evaluation is element-wise), shared with the
        other outputs (`SharedPass.probe`)."""
        return self.looks.probe(self, index, probes, work)

    def flushed(self, expected: np.ndarray) -> list[Alternative]:
        """The value with subnormal inputs flushed to zero, and the one
        flushed per operation (`flushing`), for a backend that declares
        flushing."""
        def subnormal(a: np.ndarray) -> np.ndarray:
            x = np.abs(a.astype(np.float64))
            return (x > 0) & (x < float(finfo(a.dtype).smallest_normal))

        index = np.flatnonzero(self.mask(subnormal).reshape(-1))

        def flush(name: str, x: np.ndarray) -> np.ndarray:
            a = self.arrays[name]
            if not is_float(a.dtype):
                return x
            return np.where(np.abs(x) < float(finfo(a.dtype).smallest_normal), np.copysign(0.0, x), x)

        inputs = self.variant(index, expected, np.zeros(self.size, dtype=bool), FLUSH, transform=flush)
        return inputs + self.flushed_per_operation(expected, inputs)

    def flushed_each(self, *, minmax: str) -> flushing.FlushedValues:
        """The formula flushed per operation (`flushing.FlushingEvaluator`),
        block by block (`plan.ORACLE_BLOCK`), where it flushed something."""
        tiny = flushing.threshold(self.dtype, [a.dtype for a in self.floats.values()])
        found: list[np.ndarray] = [_NONE]
        values: list[np.ndarray] = [np.zeros(0)]
        for lo in range(0, self.size, ORACLE_BLOCK):
            block = np.arange(lo, min(lo + ORACLE_BLOCK, self.size))
            got, _, ev = self.run(self.subset(block), track=False, minmax=minmax,
                                  evaluator=functools.partial(flushing.FlushingEvaluator, tiny=tiny))
            assert isinstance(ev, flushing.FlushingEvaluator)
            touched = np.broadcast_to(ev.touched, block.shape)
            found.append(block[touched])
            values.append(np.broadcast_to(got, block.shape)[touched].astype(np.float64))
        return flushing.FlushedValues(np.concatenate(found), np.concatenate(values))

    def flushed_per_operation(self, expected: np.ndarray, inputs: list[Alternative]) -> list[Alternative]:
        """`flushing`'s reading where it gives another value than the
        primary one and than the flushed inputs (``inputs``), with min and
        max as the oracle reads them and, where the formula has them, as IEEE
        maxNum/minNum (`MINMAX`: ``max(1e-39, NaN)`` flushed is 0)."""
        alts: list[Alternative] = []
        for minmax, name in (("propagate", flushing.NAME), ("number", f"{flushing.NAME}+{MINMAX.name}")):
            if minmax == "number" and not self.has_minmax:
                break
            got = self.flushed_each(minmax=minmax)
            values = to_float(got.values, self.dtype)
            keep = _differs(values, expected[got.index])
            for alt in inputs:  # sorted indices: `variant`'s
                pos = np.minimum(np.searchsorted(alt.index, got.index), alt.index.size - 1)
                keep &= ~((alt.index[pos] == got.index) & ~_differs(alt.values[pos], values))
            if keep.any():
                alts.append(Alternative(name, frozen(got.index[keep]), frozen(values[keep]), flushing.TIER,
                                        flushing.REASON))
        return alts


@dataclass(frozen=True)
class _TypeFacts:
    """What an evaluation into a target type reads of the type, found once
    per type (`FloatRun` is made per evaluation, and numpy's type queries
    cost microseconds each)."""

    float_target: bool
    info: Any
    unit: float
    info_dtype: np.dtype
    literal_type: Any
    #: whether a literal is exact in the type (`Evaluator.constant`)
    representable: Callable[[float], bool]


@functools.cache
def _type_facts(dtype: np.dtype) -> _TypeFacts:
    float_target = is_float(dtype)
    info_dtype = dtype if float_target else np.dtype(np.float32)
    info = finfo(info_dtype)
    native = dtype if dtype in (np.float16, np.float32, np.float64) else np.dtype(np.float32)
    return _TypeFacts(float_target, info, float(info.eps) / 2, info_dtype, native.type,
                      lambda x: float(to_float(np.asarray([x]), info_dtype)[0]) == x)


@functools.cache
def _settings(dtype: np.dtype, track: bool, minmax: str, exact64: bool, work: Any) -> Settings:
    """The evaluator's settings of one kind of evaluation into ``dtype``:
    the same for every evaluation of that kind."""
    facts = _type_facts(dtype)
    info = facts.info
    limit = float(info.max) * OVERFLOW_MARGIN if track and facts.float_target else None
    return Settings(track=track, minmax=minmax, unit=facts.unit, representable=facts.representable,
                    exact64=exact64, work=work, range_limit=limit,
                    tiny=float(info.smallest_normal) if track and facts.float_target else 0.0)


@functools.cache
def _pi(work: Any) -> Val:
    """pi in ``work``, with the rounding of its one conversion."""
    return Val(work(np.pi), Err(1.0), 1)


def has_minmax(tree: FormulaTree) -> bool:
    """Whether ``tree`` calls min, max or clamp (`Prepared.has_minmax`)."""
    return any(isinstance(n, Call) and n.func.lower() in ("min", "max", "clamp")
               for s in tree.assignments for n in walk(s.value))


def _nan_strict(tree: FormulaTree) -> dict[str | None, frozenset[str]]:
    """Per output (None: the main statement), the names whose NaN makes it
    NaN under any min/max semantics: those reaching it through + - * / and
    negation alone (NaN op x is NaN in IEEE arithmetic; a function, power,
    comparison, choice or min/max may drop a NaN, so nothing passes them)."""
    bound: dict[str, frozenset[str]] = {}
    out: dict[str | None, frozenset[str]] = {}
    main = tree.main
    for s in tree.assignments:
        names = _strict_names(s.value, bound)
        if s.op != "=":
            names = names | bound.get(s.target, frozenset({s.target})) if s.op[0] in _STRICT_OPS else frozenset()
        if s.params is None:
            bound[s.target] = names
        out[s.target] = names
        if s is main:
            out[None] = names
    return out


_STRICT_OPS = frozenset("+-*/")


def _strict_names(e: Any, bound: Mapping[str, frozenset[str]]) -> frozenset[str]:
    if isinstance(e, Name):
        return bound.get(e.id, frozenset({e.id}))
    if isinstance(e, Unary) and e.op == "-":
        return _strict_names(e.operand, bound)
    if isinstance(e, Binary) and e.op in _STRICT_OPS:
        return _strict_names(e.left, bound) | _strict_names(e.right, bound)
    return frozenset()


def _candidates(values: np.ndarray, window: float, info: Any) -> np.ndarray:
    """Flat indices where the float64 result may sit within ``window`` float64
    ULPs of a rounding boundary of the target type (halfway between two of its
    values), read from the bits the target drops.  Valid where the target
    result is normal; the caller adds the others."""
    dropped = 52 - int(info.nmant)
    flat = values.reshape(-1)
    word: Any = np.uint64
    bits: np.ndarray = flat.view(np.uint64)
    if dropped <= 32 and np.little_endian:  # the low word holds every dropped bit
        word, bits = np.uint32, flat.view(np.uint32)[::2]
    width = word(int(np.ceil(window)) + 1)
    low = bits & word((1 << dropped) - 1)
    low -= word(1 << (dropped - 1)) - width  # wraps below zero: unsigned
    return np.flatnonzero(low <= 2 * width)




def _common_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The broadcast shape of ``shapes``: most often they are one shape (a
    block's or a look's flat inputs), which needs no np.broadcast_shapes
    (microseconds, several times per pass)."""
    if shapes and all(s == shapes[0] for s in shapes):
        return shapes[0]
    return np.broadcast_shapes(*shapes)


def _shaped(a: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` broadcast to ``shape`` (np.broadcast_to costs microseconds, which
    count at the sizes of most second looks)."""
    if isinstance(a, np.ndarray) and a.shape == shape:
        return a
    if isinstance(a, (bool, np.bool_)):
        return np.full(shape, bool(a))
    return np.broadcast_to(a, shape)


def _positions(held: np.ndarray, index: np.ndarray) -> np.ndarray | None:
    """Where each of ``index`` is in the sorted ``held``, or None when one is
    not there."""
    pos = held.searchsorted(index)
    if not pos.size:
        return pos
    if _MAX(pos, axis=None) >= held.size or not _MIN(held[pos] == index, axis=None):  # np.array_equal, less its checks
        return None
    return pos


def _differs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two arrays of one float type hold different numbers, -0 and +0
    one number, any NaN the same as any NaN: where their ULP distance is
    not 0 (`compare.ulp_distance`), in three operations."""
    return ~((a == b) | (np.isnan(a) & np.isnan(b)))


def frozen(a: np.ndarray) -> np.ndarray:
    """``a`` contiguous (a copy where it is not) and read-only."""
    a = a if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(a.shape)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, slots=True, eq=False)
class Prepared:
    """A formula ready to evaluate: its tree with every library call inlined
    and every known integral in closed form (`formula.expand`), and what
    every evaluation reads of it, worked out by walking the tree.

    `evaluate` prepares the tree it is given at each call; an oracle that
    evaluates one formula batch after batch (a run's
    `families.elementwise.oracle.FormulaOracle`) prepares it once and passes this
    instead: walking the tree at each of the ~1200 evaluations of a whole
    default run would cost about 6% of it (expansion 0.8%, free names 0.7%,
    tolerance 2.4%, final statements 0.9%, the others 0.8%)."""

    expanded: FormulaTree
    #: The names the formula reads from outside: inputs and attributes (not
    #: let-bound names, constants or enum constants).
    free: frozenset[str]
    #: The default ULP budget of a float target (`tolerance.default_ulp`).
    ulp: int
    #: Whether the doc speaks of the sign of zero (`tolerance.signed_zero`).
    signed_zero: bool
    #: Whether a path depends on values (`evaluate.decides`).
    decides: bool
    #: Whether it calls min, max or clamp (`floatrun.has_minmax`).
    has_minmax: bool
    #: Whether it calls floor, ceil, round or trunc (`refine.rounds_to_integer`).
    integer_rounding: bool
    #: The statements whose last step is the result's own rounding (`evaluate.final_statements`).
    finals: frozenset[int]
    #: Whether every operation is bitwise (`on_encodings`): float tensors are then read as their encodings.
    bitwise: bool = False
