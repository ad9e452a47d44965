"""From what a backend computed and what the oracle expects to one
`CaseResult` per case: the one place a verdict is built.

DESIGN.md "Comparison, verdicts and reports".  The runner hands over a
*batch*: cases of one operator with the same tensors, data types and
attributes that the backend ran (`Ran`).  A single case is a batch of one.
`judge` asks the operator's oracle (`oracles`) for each output's expected
values over the batch's cases end to end, compares a range of elements at a
time (`plan.COMPARE_ELEMENTS`, fewer where the oracle asks:
`oracles.base.compare_elements`) and takes the comparison apart per case:
counts, the largest ULP distance, the worst elements with the inputs beside
them, and the alternatives that elements matched.  Only the elements that
differ from the expected value are looked at one by one
(`compare.SparseComparison`); a case whose every element equals its expected
value costs a share of one vectorised pass.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dmlconform import bias
from dmlconform.backends.base import declares_float16
from dmlconform.cases.model import Case, Planned, flat_view, joined
from dmlconform.compare import AlternativeTrace, Policy, SparseComparison, Verdict, compare_sparse, is_float, summary
from dmlconform.oracles.base import PREFIX as READING
from dmlconform.oracles.base import BatchExpectation, Expectation, FamilyOracle, compare_elements, sorted_unique
from dmlconform.plan import COMPARE_ELEMENTS
from dmlconform.results import CaseResult, ElementDiff, Outcome, ToleranceOverride
from dmlconform.spec import model as m

#: Elements a case's result shows at most per output (those with the largest ULP distance).
WORST = 10
#: The message of a negative case computed correctly.
ALLOWED = "computed correctly a configuration outside the table (allowed)"
#: The message of a case with attributes outside the doc's domain computed correctly.
ALLOWED_DOMAIN = "computed the formula correctly for {names} outside the doc's range (allowed)"


@dataclass(frozen=True, slots=True, eq=False)
class Ran:
    """A case the backend ran: ``buffers`` as it left them, ``seconds``
    spent on it so far (support query, binding, its share of the call), and
    its ``position`` in the run's input order."""

    position: int
    spec: m.Spec
    case: Case
    buffers: Mapping[str, np.ndarray]
    seconds: float


@dataclass(frozen=True, slots=True)
class Judging:
    """How a run compares: whether the backend flushes subnormals (then
    flushed results pass), and the run's tolerance overrides by (operator,
    data type name) (``--tolerances``), and the operators whose FLOAT16
    sums the backend declares it accumulates in FLOAT16
    (`BackendInfo.float16_accumulation`: True for all, a frozenset of
    operator names for some), whose oracles then bound them with FLOAT16's
    unit roundoff."""

    flush_subnormals: bool = False
    overrides: Mapping[tuple[str, str], ToleranceOverride] = field(default_factory=dict)
    float16_accumulation: bool | frozenset[str] = False

    def accumulates_float16(self, operator: str, attributes: tuple[tuple[str, object], ...] = ()) -> bool:
        """Whether the backend declared FLOAT16 accumulation for ``operator``
        (with ``attributes``: `backends.base.declares_float16`)."""
        return declares_float16(self.float16_accumulation, operator, attributes)


def verdict(case: Case | Planned, outcome: Outcome, message: str, *, seconds: float = 0.0,
            **more: object) -> CaseResult:
    """The result of ``case`` (or of a `Planned` one not made: the facts it
    has): its facts and the outcome (``run`` adds the repro line, which needs
    the run's options: `invocation`)."""
    return CaseResult(
        case_id=case.id, operator=case.operator, dtype=case.dtype.name, level=case.level.short,
        dims=len(case.outputs[0].sizes) if case.outputs else 0, layout=case.layout.value, outcome=outcome,
        message=message, expect_supported=case.expect_supported, edges=case.edges, seconds=round(seconds, 6),
        **more,  # type: ignore[arg-type]  # the optional CaseResult fields by name, each of its own type
    )


def harness_error(case: Case | Planned, exc: Exception, seconds: float, *, doing: str = "") -> CaseResult:
    """ERROR: the harness itself failed on this case (never the backend's
    fault), ``doing`` something (``making the case``).  A MemoryError says
    so in words: its own text is mostly empty."""
    if isinstance(exc, MemoryError):
        what = f"ran out of memory{f' {doing}' if doing else ''} (MemoryError{f': {exc}' if str(exc) else ''})"
    else:
        what = f"{doing + ': ' if doing else ''}{type(exc).__name__}: {exc}"
    return verdict(case, Outcome.ERROR, f"harness error: {what}", seconds=seconds)


def judge(batch: Sequence[Ran], oracle: FamilyOracle, judging: Judging) -> list[CaseResult]:
    """One result per case of ``batch``, in its order.  When the oracle or
    the comparison fails on a batch, each case is judged alone, so that the
    error is reported by the cases it belongs to (a harness ERROR)."""
    began = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            compared = _compare(batch, oracle, judging)
    except Exception as exc:  # noqa: BLE001 - the harness itself: reported per case
        if len(batch) > 1:
            return [result for ran in batch for result in judge([ran], oracle, judging)]
        return [harness_error(batch[0].case, exc, batch[0].seconds + time.perf_counter() - began)]
    share = (time.perf_counter() - began) / len(batch)
    return compared.results(share)


def _policy(spec: m.Spec, dtype: m.DataType, exp: Expectation,
            judging: Judging) -> tuple[Policy, np.ndarray | None, np.ndarray | None]:
    """The comparator's policy and bounds for one output: the family's
    budget unless the spec's ``tolerance`` names the type, then the run's
    override of the pair (a ULP budget, a factor on the bounds)."""
    ulp = {t.dtype: t.ulp for t in spec.tolerance}.get(dtype, exp.ulp)
    strict, relaxed = exp.bound_strict, exp.bound_relaxed
    override = judging.overrides.get((spec.operator, dtype.name))
    if override is not None:
        ulp = ulp if override.ulp is None else override.ulp
        if override.bound_factor is not None:
            strict = None if strict is None else strict * override.bound_factor
            relaxed = None if relaxed is None else relaxed * override.bound_factor
    policy = Policy(ulp=ulp, relaxed_factor=exp.relaxed_factor, signed_zero=exp.signed_zero,
                    flush_subnormals=judging.flush_subnormals)
    return policy, strict, relaxed


def _compare(batch: Sequence[Ran], oracle: FamilyOracle, judging: Judging) -> _Compared:
    """Every output of the batch compared with the oracle, end to end."""
    first = batch[0]
    bound = oracle.bind([ran.case for ran in batch], flush_subnormals=judging.flush_subnormals,
                        float16_accumulation=judging.accumulates_float16(first.spec.operator, first.case.attributes))
    actuals = [joined([flat_view(ran.case.outputs[j], ran.buffers[out.name], ran.case.outputs[j].sizes)
                       for ran in batch]) for j, out in enumerate(first.case.outputs)]
    parts: list[list[SparseComparison]] = [[] for _ in actuals]
    leaning: list[bias.Moments | None] = [None for _ in actuals]
    total = max((a.size for a in actuals), default=0)
    ends = [_offsets([ran.case.outputs[j].sizes for ran in batch]) for j in range(len(actuals))]
    step = compare_elements(bound, COMPARE_ELEMENTS)
    for lo in range(0, total, step):
        hi = min(lo + step, total)
        for j, (exp, actual) in enumerate(zip(bound.expect(lo, hi), actuals)):
            start, stop = min(lo, actual.size), min(hi, actual.size)
            if exp.bias_scale is not None and stop > start:  # before the comparison: its temporaries are gone then
                chunk = bias.moments(exp.expected, actual[start:stop], exp.bias_scale,
                                     np.diff(np.clip(ends[j], start, stop)))
                leaning[j] = chunk if leaning[j] is None else leaning[j] + chunk  # type: ignore[operator]
            policy, strict, relaxed = _policy(first.spec, first.case.outputs[j].dtype, exp, judging)
            parts[j].append(compare_sparse(exp.expected, actual[start:stop], policy=policy, bound_strict=strict,
                                           bound_relaxed=relaxed, alternatives=exp.alternatives).shifted(start))
    sparse = [SparseComparison.join(p) if p else _empty() for p in parts]
    return _Compared(batch, sparse, bound, leaning)


def _empty() -> SparseComparison:
    """The comparison of an output with no elements."""
    none = np.zeros(0, np.int64)
    return SparseComparison(0, none, none.astype(np.uint8), none.astype(np.uint64), none.astype(np.float64), None,
                            none.astype(np.float64), none.astype(np.float64))


@dataclass(frozen=True, slots=True, eq=False)
class _OutputFacts:
    """One output of one case, from the batch's comparison: (PASS,
    QUALITY_WARNING, FAIL) counts, the largest comparable ULP distance among
    the elements that are not PASS, and its worst elements."""

    counts: tuple[int, int, int]
    largest: int = 0
    worst: tuple[ElementDiff, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class _Compared:
    """A batch's comparison, output by output (``sparse[j]``: output j of
    every case end to end), taken apart per case by `results`."""

    batch: Sequence[Ran]
    sparse: list[SparseComparison]
    bound: BatchExpectation
    leaning: list[bias.Moments | None]  # per output: the bias check's sums per case (None: no check)

    def results(self, share: float) -> list[CaseResult]:
        """The result of each case, its time plus ``share`` of the comparison."""
        offsets = [_offsets([ran.case.outputs[j].sizes for ran in self.batch]) for j in range(len(self.sparse))]
        facts = [self._facts(j, sp, off) for j, (sp, off) in enumerate(zip(self.sparse, offsets))]
        matched = _alternatives(self.sparse, offsets, len(self.batch))
        readings = _readings(self.sparse, offsets, len(self.batch))
        return [_case_result(ran, [f[k] for f in facts], matched[k], ran.seconds + share, readings[k],
                             self._biased(k)) for k, ran in enumerate(self.batch)]

    def _biased(self, k: int) -> str:
        """Why case ``k``'s errors lean one way (`bias`), "" where none do."""
        for j, sums in enumerate(self.leaning):
            why = None if sums is None else bias.verdict(float(sums.count[k]), float(sums.signed[k]),
                                                         float(sums.toward[k]), float(sums.square[k]))
            if why is not None:
                return f"{self.batch[k].case.outputs[j].name}: {why}"
        return ""

    def _facts(self, j: int, sp: SparseComparison, offsets: np.ndarray) -> list[_OutputFacts]:
        """Per case, output j's counts, largest ULP distance and its `WORST`
        elements by ULP distance (first index first among equals)."""
        count = len(self.batch)
        sizes = np.diff(offsets).tolist()
        if not sp.index.size or not np.any(sp.status != Verdict.PASS):
            return [_OutputFacts((size, 0, 0)) for size in sizes]
        owner = np.searchsorted(offsets, sp.index, side="right") - 1
        warned = np.bincount(owner[sp.status == Verdict.QUALITY_WARNING], minlength=count).tolist()
        failed = np.bincount(owner[sp.status == Verdict.FAIL], minlength=count).tolist()
        bad = np.flatnonzero(sp.status != Verdict.PASS)
        comparable = bad[has_distance(sp.expected[bad], sp.actual[bad])]
        largest = np.zeros(count, sp.ulp.dtype)
        np.maximum.at(largest, owner[comparable], sp.ulp[comparable])
        order = bad[np.lexsort((bad, -sp.ulp[bad].astype(np.float64), owner[bad]))]
        who = owner[order]
        kept = order[np.arange(order.size) - np.searchsorted(who, who) < WORST]
        diffs = self._diffs(j, sp, kept, owner[kept], offsets)
        starts = np.searchsorted(owner[kept], np.arange(count + 1)).tolist()
        return [_OutputFacts((sizes[k] - warned[k] - failed[k], warned[k], failed[k]), int(largest[k]),
                             tuple(diffs[starts[k]:starts[k + 1]])) for k in range(count)]

    def _diffs(self, j: int, sp: SparseComparison, kept: np.ndarray, owner: np.ndarray,
               offsets: np.ndarray) -> list[ElementDiff]:
        """The `ElementDiff` of each position ``kept`` of ``sp`` (case
        ``owner`` of each): its index in its case's output, the inputs there,
        its values and verdict."""
        verdicts = [v.name for v in sorted(Verdict)]
        local = (sp.index[kept] - offsets[owner]).tolist()
        index = [tuple(int(i) for i in np.unravel_index(at, self.batch[k].case.outputs[j].sizes))
                 for at, k in zip(local, owner.tolist())]
        inputs = self.bound.inputs_at(j, sp.index[kept])
        bounds = sp.bound[kept].tolist() if sp.bound is not None else [0.0] * kept.size
        name = self.batch[0].case.outputs[j].name
        return [_element_diff(name, index[n], tuple((i, values[n]) for i, values in inputs), e, a, u, b, verdicts[s])
                for n, (e, a, u, b, s) in enumerate(zip(sp.expected[kept].tolist(), sp.actual[kept].tolist(),
                                                        sp.ulp[kept].tolist(), bounds, sp.status[kept].tolist()))]


def _nan(values: np.ndarray) -> np.ndarray:
    """Where ``values`` are NaN (nowhere, for an integer type)."""
    return np.isnan(values) if is_float(values.dtype) else np.zeros(values.shape, bool)


def has_distance(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Where a ULP distance means something: NaN on both sides or on
    neither.  `compare.ulp_distance` gives NaN against a number the largest
    uint64, but the values decide, never the distance: INT64_MIN and
    INT64_MAX are that far apart too, and float64 values 2**62 apart (0 and
    2) are as real a distance as 1."""
    return _nan(expected) == _nan(actual)


def _offsets(sizes: list[tuple[int, ...]]) -> np.ndarray:
    """Where each case's elements start end to end, and the total last."""
    return np.concatenate(([0], np.cumsum([int(np.prod(s, dtype=np.int64)) for s in sizes], dtype=np.int64)))


def _element_diff(output: str, index: tuple[int, ...], inputs: tuple[tuple[str, float], ...], expected: object,
                  actual: object, ulp: int, bound: object, verdict_name: str) -> ElementDiff:
    """An `ElementDiff` as results show it: values as floats, no distance
    (None, never a number that could be read as one) for NaN against a number."""
    e, a = _number(expected), _number(actual)
    return ElementDiff(output=output, index=index, inputs=inputs, expected=e, actual=a,
                       ulp=ulp if math.isnan(e) == math.isnan(a) else None, bound=_number(bound),
                       verdict=verdict_name)


def _number(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]  # any object: one float() refuses is the NaN case
    except (TypeError, ValueError):
        return float("nan")


def _alternatives(sparse: list[SparseComparison], offsets: list[np.ndarray],
                  count: int) -> list[tuple[tuple[str, int], ...]]:
    """Per case, each alternative with an element in it and the elements
    that passed only through it, sorted by name."""
    present: dict[str, np.ndarray] = {}
    gained: dict[str, np.ndarray] = {}
    for sp, off in zip(sparse, offsets):
        for trace in sp.traces:
            if trace.name.startswith(READING):
                continue  # reported by `_readings`
            owner = np.searchsorted(off, trace.index, side="right") - 1
            mine = np.bincount(owner, minlength=count)[:count] > 0
            won = np.bincount(owner[trace.gained], minlength=count)[:count]
            known = trace.name in present
            present[trace.name] = present[trace.name] | mine if known else mine
            gained[trace.name] = gained[trace.name] + won if known else won
    if not present:
        return [()] * count
    columns = [(name, present[name].tolist(), gained[name].tolist()) for name in sorted(present)]
    return [tuple((name, won[k]) for name, mine, won in columns if mine[k]) for k in range(count)]


def _readings(sparse: list[SparseComparison], offsets: list[np.ndarray],
              count: int) -> list[tuple[tuple[str, int, int], ...]]:
    """Per case, (name, elements, consistent) of each ambiguity and reading
    in play (`families.elementwise.readings`), sorted by name: the elements where some
    reading of the ambiguity gives another value than the primary one, and
    of those the ones whose result that reading explains
    (`_reading_blocks`).  The marker ``reading:<ambiguity>=<primary>``
    stands for the primary reading, ``reading:<ambiguity>:<reading>`` for
    each other (docs/ambiguities.md).  Counted block by block: joined, the
    elements of a ``--large`` CAST's readings were about 32 million indices
    (2.7x its tensors' bytes), copied in 1.4 of its 6.1 s (issue #34)."""
    totals: dict[str, np.ndarray] = {}
    for sp, off in zip(sparse, offsets):
        for block in _reading_blocks(sp):
            held: dict[int, np.ndarray] = {}  # a marker's and its readings' elements are one array: counted once
            for key, (where, base, took) in block.items():  # block by block: a large case's 2^24 are never joined
                if id(where) not in held:  # ``base is where``: sorted already (`sorted_unique` found it so)
                    held[id(where)] = _per_case(where, off, count, ordered=base is where)
                counts = np.stack([held[id(where)], _per_case_mask(base, took, off, count)])
                totals[key] = totals[key] + counts if key in totals else counts
    return [tuple((name, int(totals[name][0, k]), int(totals[name][1, k])) for name in sorted(totals)
                  if totals[name][0, k]) for k in range(count)]


def _reading_blocks(sp: SparseComparison) -> Iterator[dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Of one output's reading alternatives, per block of a batch compared
    in blocks, per ambiguity (its marker) and reading: the flat elements
    where the ambiguity's readings differ, and those whose result the
    reading explains as a mask over the first's sorted, unique elements
    (`_block_readings`): a block's alternatives are those in play there,
    and say nothing of another block's elements."""
    blocks: dict[tuple[int, int] | None, list[AlternativeTrace]] = {}
    for t in sp.traces:
        if t.name.startswith(READING):
            blocks.setdefault(t.block, []).append(t)
    for traces in blocks.values():
        yield _block_readings(traces)


def _per_case(at: np.ndarray, offsets: np.ndarray, count: int, *, ordered: bool = False) -> np.ndarray:
    """How many of the flat elements ``at`` each of ``count`` cases holds
    (case k's elements start at ``offsets[k]``): where ``at`` is sorted (a
    marker's and its readings' elements are; ``ordered``: known to be), a
    search of each case's start in it; else each element's case counted.
    The large MVN1 case's 2^24 elements per reading: 1.4 s of its run for
    the count by element."""
    if ordered or at.size < 2 or bool(np.all(at[1:] >= at[:-1])):
        return np.diff(np.searchsorted(at, offsets))[:count]
    return np.bincount(np.searchsorted(offsets, at, side="right") - 1, minlength=count)[:count]


def _per_case_mask(base: np.ndarray, mask: np.ndarray, offsets: np.ndarray, count: int) -> np.ndarray:
    """`_per_case` of ``base[mask]`` (``base`` sorted): each case's span of
    ``base`` found by a search, the mask's elements counted over it, without
    gathering them."""
    bounds = np.searchsorted(base, offsets).tolist()
    counts = np.zeros(count, np.int64)
    for k in range(count):
        if bounds[k + 1] > bounds[k]:
            counts[k] = np.count_nonzero(mask[bounds[k]:bounds[k + 1]])
    return counts


def _block_readings(traces: list[AlternativeTrace]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """`_reading_blocks` of one block's reading traces: per key, the
    marker's elements, them sorted and unique (``base``), and a mask over
    ``base``.  The primary reading explains an element that took the
    primary value, or the value of an alternative that leaves this
    ambiguity at its primary reading; another reading, one that took the
    value of an alternative that picks it, or the primary value where that
    alternative does not differ from it."""
    markers: dict[str, tuple[str, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]] = {}
    others: list[tuple[np.ndarray, list[tuple[str, str]], np.ndarray]] = []
    for name, (index, before, hit) in _by_name(traces).items():
        body = name.removeprefix(READING)
        if "=" in body and ":" not in body:
            markers[body.split("=", 1)[0]] = (name, index, [(index, before)])
        else:
            others.append((index, [(a, r) for a, _, r in (p.partition(":") for p in body.split("+"))], hit))
    for index, picks, hit in others:
        for ambiguity, (_, _, primary) in markers.items():
            if all(a != ambiguity for a, _ in picks):
                primary.append((index, hit))
    out: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for ambiguity, (name, where, parts) in markers.items():
        base = sorted_unique(where)  # the elements as a mask over ``where``: set operations cost a pass of it
        took = functools.reduce(np.logical_or, (_holds_where(base, i, m) for i, m in parts))
        out[name] = (where, base, took)
        explained: dict[str, np.ndarray] = {}
        for index, picks, hit in others:
            for a, r in picks:
                if a == ambiguity:
                    mine = _holds_where(base, index, hit) | (took & ~_holds_where(base, index, None))
                    key = f"{READING}{a}:{r}"
                    explained[key] = explained[key] | mine if key in explained else mine
        for key, found in explained.items():
            out[key] = (where, base, found)
    return out


def _by_name(traces: list[AlternativeTrace]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per alternative name: its elements, and two masks over them: those
    that passed before it, and those whose value it matched
    (`AlternativeTrace.gained` where it says nothing of matching), over every
    case of the batch.  Each case offers its own alternative of a name (its
    oracle's, shifted to its place), and one case's alternative says
    nothing of another's elements: taken one by one, the alternative of a
    case where a reading differs "explained" every element of the others
    that took the primary value (issue #32: REDUCE's ``log_sum_exp/small``
    counted as literal beside ``big``, not alone)."""
    found: dict[str, list[AlternativeTrace]] = {}
    for t in traces:
        found.setdefault(t.name, []).append(t)
    return {name: (joined([t.index for t in same]), joined([t.before for t in same]),
                   joined([t.matched if t.matched is not None else t.gained for t in same]))
            for name, same in found.items()}


def _holds_where(base: np.ndarray, index: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Per element of ``base`` (sorted, unique): whether ``index[mask]``
    (``index`` itself where ``mask`` is None) holds it.  Where ``index`` is
    ``base`` (a marker's own elements, or a reading's that differs wherever
    the ambiguity does: the large MVN1 case's 2^24), the mask itself,
    without a table (`_holds`)."""
    if index is base or (index.size == base.size and np.array_equal(index, base)):
        return np.ones(base.size, dtype=bool) if mask is None else mask
    return _holds(base, index if mask is None else index[mask])


def _holds(base: np.ndarray, elements: np.ndarray) -> np.ndarray:
    """Per element of ``base`` (sorted, unique): whether ``elements`` holds
    it.  Masks over the marker's elements replace numpy's sorting set
    operations: `_readings` took 0.064 -> 0.030 s of the seed operators'
    pipeline (7% of it) and 0.14 -> 0.07 s of the default suite's (thread
    time).  The mask is dense over ``base``'s span, which lies in one block
    of the comparison (`plan.COMPARE_ELEMENTS` elements at most): binary
    searches of millions of elements were a fifth of a ``--large`` CAST's
    run (0.94 of 4.3 s, issue #34)."""
    if not base.size:
        return np.zeros(0, dtype=bool)
    first, last = base[0], base[-1]
    mask = np.zeros(int(last - first) + 1, dtype=bool)
    mask[elements[(elements >= first) & (elements <= last)] - first] = True
    return mask[base - first]


def _case_result(ran: Ran, outputs: list[_OutputFacts], alternatives: tuple[tuple[str, int], ...],
                 seconds: float, readings: tuple[tuple[str, int, int], ...] = (), biased: str = "") -> CaseResult:
    """One case's result from its outputs' facts: FAIL if an output has a
    FAIL element (the message names the last such output), else
    QUALITY_WARNING if one has a warning (the first such) or its errors
    are ``biased`` (the whole-tensor check, `bias`), else PASS."""
    total, outcome, message = [0, 0, 0], Outcome.PASS, ""
    for out, facts in zip(ran.case.outputs, outputs):
        total = [a + b for a, b in zip(total, facts.counts)]
        size = sum(facts.counts)
        if facts.counts[2]:
            outcome, message = Outcome.FAIL, f"{out.name}: {summary(facts.counts, size)}"
        elif facts.counts[1] and outcome is Outcome.PASS:
            outcome, message = Outcome.QUALITY_WARNING, f"{out.name}: {summary(facts.counts, size)}"
    if outcome is Outcome.PASS and biased:
        outcome, message = Outcome.QUALITY_WARNING, biased
    if outcome is Outcome.PASS and not ran.case.expect_supported:
        names = ran.case.out_of_domain
        message = ALLOWED_DOMAIN.format(names=", ".join(names)) if names else ALLOWED
    return verdict(ran.case, outcome, message, seconds=seconds, elements=sum(total), counts=tuple(total),
                   max_ulp=max((f.largest for f in outputs), default=0),
                   worst=tuple(d for f in outputs for d in f.worst), alternatives=alternatives, readings=readings)
