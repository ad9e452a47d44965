"""What a run produces: one `CaseResult` per case and a `RunResult` around
them.  Plain records of Python scalars and tuples (no arrays), so every report
writer (terminal, JSON, JUnit, HTML) renders the same data, and a report.json
can be read back into the same records.

DESIGN.md, "Comparison, verdicts and reports".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(enum.Enum):
    """The verdict of one case."""

    PASS = "PASS"
    QUALITY_WARNING = "QUALITY_WARNING"   # only within the relaxed bound
    FAIL = "FAIL"
    NOT_SUPPORTED = "NOT_SUPPORTED"       # the backend rejected the configuration cleanly
    XFAIL = "XFAIL"                       # a known failure (baseline)
    XPASS = "XPASS"                       # a known failure that passed (baseline)
    CRASH = "CRASH"
    TIMEOUT = "TIMEOUT"
    ERROR = "ERROR"                       # the harness itself failed

    @property
    def failed(self) -> bool:
        """Whether this outcome makes the run fail (exit 1)."""
        return self in (Outcome.FAIL, Outcome.CRASH, Outcome.TIMEOUT, Outcome.ERROR)


#: Display and column order.
OUTCOME_ORDER: tuple[Outcome, ...] = tuple(Outcome)


@dataclass(frozen=True, slots=True)
class ElementDiff:
    """One element that did not PASS: where, from what, expected vs actual.
    ``ulp`` is their ULP distance, None where there is none: one of them is
    NaN and the other a number (reports say why: `report.distance`)."""

    output: str
    index: tuple[int, ...]
    inputs: tuple[tuple[str, float], ...]
    expected: float
    actual: float
    ulp: int | None
    bound: float
    verdict: str          # QUALITY_WARNING or FAIL


@dataclass(frozen=True, slots=True)
class ToleranceOverride:
    """A team's loosening of the comparison for one operator x data type
    (``--tolerances FILE``): ``ulp`` replaces the ULP budget, ``bound_factor``
    multiplies the oracle's error bound.  Shown in every report."""

    operator: str
    dtype: str
    ulp: int | None = None
    bound_factor: float | None = None
    reason: str = ""

    def describe(self) -> str:
        """``ulp=4, bound_factor=2``: what the override changes."""
        parts = ([f"ulp={self.ulp}"] if self.ulp is not None else []) + \
            ([f"bound_factor={self.bound_factor:g}"] if self.bound_factor is not None else [])
        return ", ".join(parts)


#: How the message of a refusal that FAILs begins (a backend that claims the tables: `CaseResult.refused`).
REFUSED_PREFIX = "rejected a configuration"

#: Outcomes a baseline entry can turn into XFAIL (a harness ERROR never is: fix it).
BASELINE_OUTCOMES: tuple[Outcome, ...] = (Outcome.FAIL, Outcome.CRASH, Outcome.TIMEOUT)


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """One known failure (``--baseline FILE``, docs/baseline.md): a case id,
    or with ``pattern`` True a glob over case ids; ``outcomes`` are the
    verdicts it covers (empty: all of `BASELINE_OUTCOMES`)."""

    key: str
    reason: str
    pattern: bool = False
    issue: str = ""
    outcomes: tuple[Outcome, ...] = ()

    def covers(self, outcome: Outcome) -> bool:
        return outcome in (self.outcomes or BASELINE_OUTCOMES)


@dataclass(frozen=True, slots=True)
class Baseline:
    """The baseline a run was checked against: its file, its entries (in file
    order: cases first, then patterns) and those that matched no case of the
    run (``stale``, as keys)."""

    path: str
    entries: tuple[BaselineEntry, ...]
    stale: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AmbiguityWords:
    """What one of an operator's ambiguous docs leaves open and what each
    reading of it says, in the spec's words (`spec.model.Ambiguity.question`,
    `Reading.says`): what the reports say a reading in (`report.readings`)."""

    operator: str
    ambiguity: str
    question: str
    readings: tuple[tuple[str, str], ...]   # reading id -> what it says, in the spec's order


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case, with what a person needs to see and redo it."""

    case_id: str
    operator: str
    dtype: str
    level: str
    dims: int
    layout: str
    outcome: Outcome
    message: str = ""
    expect_supported: bool = True
    elements: int = 0
    counts: tuple[int, int, int] = (0, 0, 0)   # PASS, QUALITY_WARNING, FAIL elements
    max_ulp: int = 0
    worst: tuple[ElementDiff, ...] = ()
    alternatives: tuple[tuple[str, int], ...] = ()   # alternative name -> elements that matched it
    #: The readings of ambiguous docs in play (docs/ambiguities.md): (``reading:<ambiguity>=<primary>``,
    #: elements where a reading differs, elements that took the primary value) and
    #: (``reading:<ambiguity>:<reading>``, elements where it differs, elements that took it).
    readings: tuple[tuple[str, int, int], ...] = ()
    edges: tuple[str, ...] = ()
    seconds: float = 0.0
    repro: str = ""
    #: The backend refused a configuration of an operator it implements that its level's table supports
    #: (`runner`; an operator it does not implement at all, or a device's limit, is plain NOT_SUPPORTED):
    #: NOT_SUPPORTED from a backend that implements a subset of the tables (`BackendInfo.subset`), FAIL
    #: from one that claims them.  Never a wrong value.
    refused: bool = False

    @property
    def group(self) -> str:
        return f"{self.operator}/{self.dtype}/{self.level}"

    @property
    def wrong(self) -> bool:
        """A FAIL that is not a refusal: a wrong value (or the backend raised on a case it took)."""
        return self.outcome is Outcome.FAIL and not self.refused


@dataclass(frozen=True, slots=True)
class RunResult:
    """A whole run.  ``started``/``finished``/``seconds`` (and case times)
    are the only fields that differ between two runs with the same seed
    (DESIGN.md: deterministic reports)."""

    run_id: str
    backend: str
    device: str
    backend_version: str
    feature_level: str
    flush_subnormals: bool
    seed: int
    command: str
    started: str
    finished: str
    cases: tuple[CaseResult, ...]
    #: ``--strict``: QUALITY_WARNING and XPASS fail the run too.
    strict: bool = False
    #: ``--shard K/N`` as ``"K/N"``; empty for a whole run.
    shard: str = ""
    #: run ids of the shard reports a `merge` made this report from.
    merged_from: tuple[str, ...] = ()
    #: ``--tolerances FILE`` and the overrides it held, sorted by (operator, dtype).
    tolerances: str = ""
    overrides: tuple[ToleranceOverride, ...] = ()
    #: ``--baseline FILE`` as applied, or None.
    baseline: Baseline | None = None
    #: Ctrl-C stopped the run: ``cases`` holds only the cases that finished.
    interrupted: bool = False
    #: Wall time of the run in seconds, from the command's start (loading
    #: specs, making cases) to its last result; 0.0 where unknown.
    seconds: float = 0.0
    #: The operators the backend declared FLOAT16 accumulation for
    #: (`BackendInfo.float16_accumulation`), sorted; True: every operator.
    float16_accumulation: bool | tuple[str, ...] = ()
    #: The backend implements a subset of DirectML's tables (`BackendInfo.subset`): its refusals of
    #: configurations the tables support are NOT_SUPPORTED (``refused``), not FAIL.
    subset: bool = False
    #: The words of each ambiguity the cases told readings apart on, sorted by operator and ambiguity.
    ambiguities: tuple[AmbiguityWords, ...] = ()

    def count(self, outcome: Outcome) -> int:
        return sum(1 for c in self.cases if c.outcome is outcome)

    @property
    def wrong_values(self) -> int:
        """FAIL cases that are not refusals (`CaseResult.wrong`)."""
        return sum(1 for c in self.cases if c.wrong)

    @property
    def refused(self) -> int:
        """Cases whose configuration the table supports and the backend refused (`CaseResult.refused`)."""
        return sum(1 for c in self.cases if c.refused)

    def fails(self, case: CaseResult) -> bool:
        """Whether ``case`` makes this run fail (exit 1)."""
        return case.outcome.failed or (self.strict and case.outcome in STRICT_OUTCOMES)

    @property
    def failed(self) -> bool:
        return any(self.fails(c) for c in self.cases)


#: Outcomes that fail a run only with ``--strict``.
STRICT_OUTCOMES = frozenset({Outcome.QUALITY_WARNING, Outcome.XPASS})
