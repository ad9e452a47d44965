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
    """One element that did not PASS: where, from what, expected vs actual."""

    output: str
    index: tuple[int, ...]
    inputs: tuple[tuple[str, float], ...]
    expected: float
    actual: float
    ulp: int
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
    edges: tuple[str, ...] = ()
    seconds: float = 0.0
    repro: str = ""

    @property
    def group(self) -> str:
        return f"{self.operator}/{self.dtype}/{self.level}"


@dataclass(frozen=True, slots=True)
class RunResult:
    """A whole run.  ``started``/``finished`` are the only fields that differ
    between two runs with the same seed (DESIGN.md: deterministic reports)."""

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

    def count(self, outcome: Outcome) -> int:
        return sum(1 for c in self.cases if c.outcome is outcome)

    @property
    def failed(self) -> bool:
        return any(c.outcome.failed for c in self.cases)
