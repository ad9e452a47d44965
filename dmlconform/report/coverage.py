"""What every report shows besides the cases themselves: per-group outcome
counts, totals, coverage per operator, and the shared number format.

The terminal, JSON, JUnit and HTML writers all take their summaries from here,
so no two reports can disagree on a count or an order.  Pure functions from a
`RunResult` to plain frozen records (DESIGN.md "Comparison, verdicts and
reports"; STYLE.md "sort all output").
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import TypeVar

from dmlconform.results import OUTCOME_ORDER, CaseResult, ElementDiff, Outcome, RunResult
from dmlconform.spec.model import DATA_TYPE_ORDER, FeatureLevel

K = TypeVar("K", int, str)

#: Outcomes from the least to the most alarming; a group is shown by its worst.
SEVERITY: tuple[Outcome, ...] = (
    Outcome.PASS, Outcome.NOT_SUPPORTED, Outcome.XFAIL, Outcome.QUALITY_WARNING, Outcome.XPASS,
    Outcome.FAIL, Outcome.TIMEOUT, Outcome.CRASH, Outcome.ERROR,
)

#: Outcomes always shown as columns; XFAIL/XPASS only when a run has any.
BASE_OUTCOMES: tuple[Outcome, ...] = tuple(o for o in OUTCOME_ORDER if o not in (Outcome.XFAIL, Outcome.XPASS))

#: Outcomes that make a group "skipped" when it has nothing else (JUnit).
SKIP_OUTCOMES = frozenset({Outcome.NOT_SUPPORTED, Outcome.XFAIL})


def plot_ulp(ulp: int | None, ceiling: int = 2 ** 32) -> int:
    """The distance drawn in plots: none (NaN against a number) is drawn at the top."""
    return ceiling if ulp is None else min(ulp, ceiling)


def fmt_float(x: float) -> str:
    """A float as a person reads it: 9 significant digits (enough for float32),
    ``nan``, ``inf``, ``-inf`` and ``-0`` spelled out."""
    return format(float(x), ".9g")


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def visible(text: str) -> str:
    """``text`` with control characters (escape sequences included, tab and
    newline excepted) written as ``\\xNN``, so data cannot drive a terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@functools.cache
def dtype_key(dtype: str) -> tuple[int, str]:
    """Canonical data type order (DATA_TYPE_ORDER); unknown names last, by name."""
    names = [t.name for t in DATA_TYPE_ORDER]
    return (names.index(dtype), "") if dtype in names else (len(names), dtype)


@functools.cache
def level_key(level: str) -> tuple[int, str]:
    """Feature levels oldest first; unknown texts last, by text."""
    try:
        return FeatureLevel.parse(level).value, ""
    except ValueError:
        return 1 << 30, level


def group_key(case: CaseResult) -> tuple[str, tuple[int, str], tuple[int, str]]:
    return case.operator, dtype_key(case.dtype), level_key(case.level)


def worst_outcome(outcomes: Iterable[Outcome]) -> Outcome:
    """The most alarming of ``outcomes`` (PASS for none)."""
    return max(outcomes, key=SEVERITY.index, default=Outcome.PASS)


def outcome_columns(run: RunResult) -> tuple[Outcome, ...]:
    """The outcome columns of a table: the base ones, plus XFAIL/XPASS if the run has any."""
    present = {c.outcome for c in run.cases}
    return tuple(o for o in OUTCOME_ORDER if o in BASE_OUTCOMES or o in present)


@dataclass(frozen=True, slots=True)
class GroupRow:
    """The cases of one operator x data type x feature level."""

    operator: str
    dtype: str
    level: str
    counts: tuple[tuple[Outcome, int], ...]   # every outcome in OUTCOME_ORDER
    cases: tuple[CaseResult, ...]
    seconds: float

    @property
    def name(self) -> str:
        """``FLOAT16 @ 6_4``: the JUnit test case name."""
        return f"{self.dtype} @ {self.level}"

    def count(self, outcome: Outcome) -> int:
        return dict(self.counts)[outcome]

    @property
    def worst(self) -> Outcome:
        return worst_outcome(c.outcome for c in self.cases)

    @property
    def failed(self) -> tuple[CaseResult, ...]:
        return tuple(c for c in self.cases if c.outcome.failed)

    @property
    def skipped(self) -> bool:
        """Only NOT_SUPPORTED / XFAIL cases: nothing was checked."""
        return all(c.outcome in SKIP_OUTCOMES for c in self.cases)


def count_outcomes(cases: Iterable[CaseResult]) -> tuple[tuple[Outcome, int], ...]:
    counter = Counter(c.outcome for c in cases)
    return tuple((o, counter.get(o, 0)) for o in OUTCOME_ORDER)


def group_rows(run: RunResult) -> tuple[GroupRow, ...]:
    """One row per operator x data type x feature level, sorted; cases keep run order."""
    groups: dict[tuple[str, str, str], list[CaseResult]] = {}
    for case in sorted(run.cases, key=group_key):
        groups.setdefault((case.operator, case.dtype, case.level), []).append(case)
    return tuple(
        GroupRow(op, dtype, level, count_outcomes(cases), tuple(cases), sum(c.seconds for c in cases))
        for (op, dtype, level), cases in groups.items()
    )


@dataclass(frozen=True, slots=True)
class OperatorRow:
    """The cases of one operator, all data types and levels together."""

    operator: str
    dtypes: tuple[str, ...]                   # canonical order (`dtype_key`)
    levels: tuple[str, ...]                   # oldest first
    counts: tuple[tuple[Outcome, int], ...]   # every outcome in OUTCOME_ORDER
    failed: bool                              # a case of it fails the run (`RunResult.fails`)


def operator_rows(run: RunResult) -> tuple[OperatorRow, ...]:
    """One row per operator, sorted by name (the order of `group_rows`)."""
    by_op: dict[str, list[CaseResult]] = {}
    for row in group_rows(run):
        by_op.setdefault(row.operator, []).extend(row.cases)
    return tuple(
        OperatorRow(op, tuple(sorted({c.dtype for c in cases}, key=dtype_key)),
                    tuple(sorted({c.level for c in cases}, key=level_key)), count_outcomes(cases),
                    any(run.fails(c) for c in cases))
        for op, cases in by_op.items()
    )


def spread_failures(run: RunResult) -> tuple[CaseResult, ...]:
    """`failed_cases` reordered so that every operator x data type x level
    shows its first failing case before any shows a second (then the
    seconds, and so on; group order within each round): the first ten of a
    run where one group fails a thousand times still show ten different
    problems where there are ten.  Refusals (`CaseResult.refused`: a
    configuration the table supports, rejected) come after every other
    failing case: a wrong value is never shown after a refusal."""
    rank: dict[tuple[bool, str], int] = {}
    ranked: list[tuple[bool, int, int, CaseResult]] = []
    for case in failed_cases(run):
        key = (case.refused, case.group)
        rank[key] = rank.get(key, -1) + 1
        ranked.append((case.refused, rank[key], len(ranked), case))
    return tuple(r[-1] for r in sorted(ranked, key=lambda r: r[:3]))


def worst_element(case: CaseResult) -> ElementDiff | None:
    """The element of ``case.worst`` farthest from its expected value: one
    with no ULP distance (NaN against a number) first, then the largest
    distance; the first among equals; None when the case has none."""
    return max(case.worst, key=lambda d: math.inf if d.ulp is None else d.ulp, default=None)


def failed_cases(run: RunResult) -> tuple[CaseResult, ...]:
    """Cases that make the run fail (`RunResult.fails`: with ``--strict``
    QUALITY_WARNING and XPASS too), in group order, then run order."""
    return tuple(c for row in group_rows(run) for c in row.cases if run.fails(c))


def unexpected_passes(run: RunResult) -> tuple[CaseResult, ...]:
    """XPASS cases that do not fail the run (no ``--strict``): warnings every report shows."""
    return tuple(c for row in group_rows(run) for c in row.cases
                 if c.outcome is Outcome.XPASS and not run.fails(c))


def gating_facts(run: RunResult) -> tuple[tuple[str, str], ...]:
    """(name, value) of the settings of ``run`` that change verdicts and are
    in use: the backend's FLOAT16 accumulation declaration (wider bounds for
    those operators), then the CI gating settings: shard, merged shards,
    strictness, tolerance file, baseline.  Every report shows these, in this
    order."""
    facts: list[tuple[str, str]] = []
    declared = run.float16_accumulation
    if declared:  # True, or the operators named (none: nothing to show)
        facts.append(("float16 accumulation", ", ".join(declared) if isinstance(declared, tuple) else "every operator"))
    if run.shard:
        facts.append(("shard", run.shard))
    if run.merged_from:
        facts.append(("merged from", f"{len(run.merged_from)} shards: {', '.join(run.merged_from)}"))
    if run.strict:
        facts.append(("strict", "QUALITY_WARNING and XPASS fail the run"))
    if run.tolerances or run.overrides:
        n = len(run.overrides)
        facts.append(("tolerances", f"{run.tolerances or '-'} ({n} override{'' if n == 1 else 's'})"))
    if run.baseline is not None:
        b = run.baseline
        facts.append(("baseline", f"{b.path} ({len(b.entries)} entr{'y' if len(b.entries) == 1 else 'ies'}: "
                                  f"{run.count(Outcome.XFAIL)} XFAIL, {run.count(Outcome.XPASS)} XPASS, "
                                  f"{len(b.stale)} stale)"))
    return tuple(facts)


def stale_entries(run: RunResult) -> tuple[tuple[str, str], ...]:
    """(key, reason) of each baseline entry that matched no case of the run, in file order."""
    if run.baseline is None:
        return ()
    reasons = {e.key: e.reason for e in run.baseline.entries}
    return tuple((key, reasons.get(key, "")) for key in run.baseline.stale)


def totals_line(run: RunResult) -> str:
    """``12 cases: 5 PASS, 2 FAIL, 1 CRASH in 3.25 s`` (zero counts left
    out): the run's wall time, generation and loading included (a report of
    an older version without it: the cases' own times added up)."""
    parts = [f"{n} {o.value}" for o, n in count_outcomes(run.cases) if n]
    seconds = run.seconds or sum(c.seconds for c in run.cases)
    noun = "case" if len(run.cases) == 1 else "cases"
    stopped = " (interrupted: the cases after these did not run)" if run.interrupted else ""
    return f"{len(run.cases)} {noun}: {', '.join(parts) or 'none'} in {seconds:.2f} s{stopped}"


def refusals_line(run: RunResult) -> str:
    """``17 wrong values, 1,419 refused: ...``: the FAIL cases that are wrong
    values counted apart from the configurations the table supports that
    the backend refused, and what a refusal means for this backend (it
    implements a subset of DirectML's tables: NOT_SUPPORTED; it claims
    them: FAIL); "" for a run with neither."""
    wrong, refused = run.wrong_values, run.refused
    if not wrong and not refused:
        return ""
    counts = f"{wrong:,} wrong value{'' if wrong == 1 else 's'}, {refused:,} refused"
    if not refused:
        return counts
    if run.subset:
        return (f"{counts}: {run.backend} implements a subset of DirectML's tables, so its refusal of a "
                "configuration the table supports is NOT_SUPPORTED and does not fail the run")
    return (f"{counts}: {run.backend} claims DirectML's tables, so its refusal of a configuration the table "
            "supports is a FAIL")


@dataclass(frozen=True, slots=True)
class OperatorCoverage:
    """What the cases of one operator reached."""

    operator: str
    cases: int
    dtypes: tuple[str, ...]
    levels: tuple[str, ...]
    dims: tuple[tuple[int, int], ...]       # rank -> cases
    layouts: tuple[tuple[str, int], ...]    # layout -> cases
    edges: tuple[tuple[str, int], ...]      # edge class / branch -> cases that hit it
    combinations: int                       # distinct (dims, dtype, level) hit

    @property
    def possible(self) -> int:
        """dims x data types x levels seen at all: the grid ``combinations`` lies in."""
        return len(self.dims) * len(self.dtypes) * len(self.levels)


@dataclass(frozen=True, slots=True)
class Coverage:
    """Coverage of a run, one record per operator, sorted by operator."""

    operators: tuple[OperatorCoverage, ...]

    @property
    def edges_hit(self) -> int:
        return sum(len(o.edges) for o in self.operators)


def _counted(values: Iterable[K]) -> tuple[tuple[K, int], ...]:
    """Each distinct value with how often it occurs, sorted by value."""
    return tuple(sorted(Counter(values).items()))


def _operator_coverage(operator: str, cases: list[CaseResult]) -> OperatorCoverage:
    # each case counts an edge class once: a count per distinct class of each case (in any order), by C loops
    return OperatorCoverage(
        operator=operator,
        cases=len(cases),
        dtypes=tuple(sorted(set(map(attrgetter("dtype"), cases)), key=dtype_key)),
        levels=tuple(sorted(set(map(attrgetter("level"), cases)), key=level_key)),
        dims=_counted(map(attrgetter("dims"), cases)),
        layouts=_counted(map(attrgetter("layout"), cases)),
        edges=_counted(chain.from_iterable(map(set, map(attrgetter("edges"), cases)))),
        combinations=len(set(map(attrgetter("dims", "dtype", "level"), cases))),
    )


def summarise(run: RunResult) -> Coverage:
    """Per operator: data types, feature levels, ranks, layouts and edge classes
    (``CaseResult.edges``) the run reached."""
    by_op: dict[str, list[CaseResult]] = {}
    for case in run.cases:
        by_op.setdefault(case.operator, []).append(case)
    return Coverage(tuple(_operator_coverage(op, by_op[op]) for op in sorted(by_op)))
