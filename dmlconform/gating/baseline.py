"""Baselines of known failures (``run --baseline FILE``, docs/baseline.md).

A baseline lists case ids (``cases:``) and globs over case ids
(``patterns:``), each with a reason.  After a run, a failing case an entry
covers becomes XFAIL and a passing case an entry names becomes XPASS; an
entry that matches no case of the run is *stale*.  `update` writes the
baseline of a run's report, keeping the reasons of the entries that still
apply.  DESIGN.md "Who uses it, and for what" (only new failures break the build).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dmlconform.gating.files import Problems, check_version, dump_yaml, read_document
from dmlconform.results import BASELINE_OUTCOMES, Baseline, BaselineEntry, CaseResult, Outcome, RunResult

#: Outcomes a baseline entry does not turn into XPASS or XFAIL.
_UNTOUCHED = frozenset({Outcome.ERROR, Outcome.XFAIL, Outcome.XPASS})

HEADER = ("dmlconform baseline: known failures (docs/baseline.md).\n"
          "cases: exact case ids; patterns: globs over case ids (* ? [..]), first match wins.")

_ENTRY_KEYS = ("reason", "issue", "outcomes")


# --------------------------------------------------------------------------- reading


def _entry(problems: Problems, at: tuple[Any, ...], key: str, value: Any, *, pattern: bool) -> BaselineEntry | None:
    if not problems.typed(at, value, dict, "a mapping with reason (and issue, outcomes)"):
        return None
    problems.keys(at, value, allowed=_ENTRY_KEYS, required=("reason",))
    reason = problems.text(at + ("reason",), value.get("reason", "x"), required=True)
    issue = problems.text(at + ("issue",), value.get("issue", ""), required=False)
    outcomes: list[Outcome] = []
    raw = value.get("outcomes", [])
    if problems.typed(at + ("outcomes",), raw, list, "a list of outcomes"):
        known = [o.value for o in BASELINE_OUTCOMES]
        for i, name in enumerate(raw):
            if problems.name(at + ("outcomes", i), name, known, "outcome"):
                outcomes.append(Outcome(name))
    return BaselineEntry(key=key, reason=reason, pattern=pattern, issue=issue,
                         outcomes=tuple(o for o in BASELINE_OUTCOMES if o in outcomes))


def read_baseline(path: Path) -> Baseline:
    """The baseline in ``path``; `SpecError` (exit 2) lists every problem at file:line:col."""
    doc = read_document(path, what="a baseline")
    problems = Problems(doc)
    problems.keys((), doc.data, allowed=("version", "cases", "patterns"))
    check_version(problems, doc.data)
    entries: list[BaselineEntry] = []
    for section, pattern in (("cases", False), ("patterns", True)):
        table = doc.data.get(section, {})
        if table is None or not problems.typed((section,), table, dict, "a mapping of case ids to entries"):
            continue
        for key, value in table.items():
            if pattern and not key.strip():
                problems.add((section, key), "an empty pattern", at_key=True)
            entry = _entry(problems, (section, key), str(key), value, pattern=pattern)
            if entry is not None:
                entries.append(entry)
    problems.raise_if_any()
    return Baseline(path=str(path), entries=tuple(entries))


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True, slots=True)
class Matcher:
    """Finds the entries naming a case id: the exact entry first, then the
    patterns in file order."""

    exact: dict[str, BaselineEntry]
    patterns: tuple[tuple[re.Pattern[str], BaselineEntry], ...]

    @classmethod
    def of(cls, entries: Iterable[BaselineEntry]) -> Matcher:
        entries = tuple(entries)
        return cls({e.key: e for e in entries if not e.pattern},
                   tuple((re.compile(fnmatch.translate(e.key)), e) for e in entries if e.pattern))

    def matches(self, case_id: str) -> list[BaselineEntry]:
        found = [self.exact[case_id]] if case_id in self.exact else []
        return found + [e for rx, e in self.patterns if rx.match(case_id)]

    def covering(self, case_id: str, outcome: Outcome) -> BaselineEntry | None:
        """The first entry that names ``case_id`` and covers ``outcome``."""
        return next((e for e in self.matches(case_id) if e.covers(outcome)), None)


def _note(entry: BaselineEntry) -> str:
    return f"(baseline: {entry.reason}" + (f", {entry.issue}" if entry.issue else "") + ")"


def _mark(case: CaseResult, matcher: Matcher) -> CaseResult:
    if case.outcome in _UNTOUCHED:
        return case
    if case.outcome.failed:
        entry = matcher.covering(case.case_id, case.outcome)
        if entry is None:
            return case
        return replace(case, outcome=Outcome.XFAIL,
                       message=f"{case.outcome.value}: {case.message or 'failed'} {_note(entry)}")
    named = matcher.matches(case.case_id)
    if not named:
        return case
    said = f": {case.message}" if case.message else ""
    return replace(case, outcome=Outcome.XPASS,
                   message=f"{case.outcome.value}{said}; expected to fail {_note(named[0])}")


def stale_keys(entries: Sequence[BaselineEntry], case_ids: Iterable[str]) -> tuple[str, ...]:
    """Keys of the entries that name none of ``case_ids``, in file order."""
    ids = set(case_ids)
    matcher = Matcher.of(entries)
    hit = {e.key for e in matcher.exact.values() if e.key in ids}
    for rx, e in matcher.patterns:
        if any(rx.match(i) for i in ids):
            hit.add(e.key)
    return tuple(e.key for e in entries if e.key not in hit)


def apply_baseline(run: RunResult, baseline: Baseline) -> RunResult:
    """``run`` with known failures as XFAIL, baselined passes as XPASS, and
    ``baseline`` (its stale entries found) recorded.  An interrupted run
    finds no stale entry: the cases it never reached may be what they name."""
    matcher = Matcher.of(baseline.entries)
    cases = tuple(_mark(c, matcher) for c in run.cases)
    stale = () if run.interrupted else stale_keys(baseline.entries, (c.case_id for c in run.cases))
    return replace(run, cases=cases, baseline=replace(baseline, stale=stale))


_PREFIX = re.compile(r"^([A-Z_]+)(?::|;|$)")


def original_outcome(case: CaseResult) -> Outcome | None:
    """The verdict an XFAIL/XPASS case had before the baseline (its message starts with it)."""
    m = _PREFIX.match(case.message)
    try:
        return Outcome(m.group(1)) if m else None
    except ValueError:
        return None


# --------------------------------------------------------------------------- update


@dataclass(frozen=True, slots=True)
class Update:
    """What `update` made: the new entries and, for the person, what changed."""

    entries: tuple[BaselineEntry, ...]
    kept: tuple[str, ...]
    added: tuple[str, ...]
    dropped: tuple[str, ...]          # ``KEY: why``
    skipped: tuple[str, ...]          # ERROR cases, never baselined


def _known(case: CaseResult) -> tuple[Outcome, str] | None:
    """(the failing outcome, its message) of a case a baseline should list."""
    if case.outcome in BASELINE_OUTCOMES:
        return case.outcome, case.message
    if case.outcome is Outcome.XFAIL:
        before = original_outcome(case)
        text = case.message.split(": ", 1)[1].rsplit(" (baseline: ", 1)[0] if ": " in case.message else ""
        return (before if before in BASELINE_OUTCOMES else Outcome.FAIL), text
    return None


def _why_dropped(entry: BaselineEntry, report: RunResult, stale: set[str]) -> str:
    if entry.key in stale:
        return f"{entry.key}: matches no case in the report (stale)"
    matcher = Matcher.of((entry,))
    n = sum(1 for c in report.cases if matcher.matches(c.case_id))
    return f"{entry.key}: its {n} case{'s' if n != 1 else ''} no longer fail{'s' if n == 1 else ''}"


def update(report: RunResult, old: Baseline | None) -> Update:
    """The baseline of ``report``: every FAIL, CRASH, TIMEOUT and XFAIL case,
    covered by the old entry that covered it (reason, issue and pattern kept)
    or by a new exact entry; old entries that cover nothing are dropped."""
    old_entries = old.entries if old else ()
    matcher = Matcher.of(old_entries)
    used: dict[str, BaselineEntry] = {}
    added: dict[str, BaselineEntry] = {}
    for case in report.cases:
        known = _known(case)
        if known is None:
            continue
        outcome, message = known
        entry = matcher.covering(case.case_id, outcome)
        if entry is not None:
            used[entry.key] = entry
        else:
            reason = f"{outcome.value} since run {report.run_id}" + (f": {message}" if message else "")
            added[case.case_id] = BaselineEntry(case.case_id, reason, outcomes=(outcome,))
    stale = set(stale_keys(old_entries, (c.case_id for c in report.cases)))
    exact = sorted([e for e in used.values() if not e.pattern] + list(added.values()), key=lambda e: e.key)
    patterns = [e for e in old_entries if e.pattern and e.key in used]
    return Update(
        entries=tuple(exact + patterns), kept=tuple(sorted(used)), added=tuple(sorted(added)),
        dropped=tuple(_why_dropped(e, report, stale) for e in old_entries if e.key not in used),
        skipped=tuple(c.case_id for c in report.cases if c.outcome is Outcome.ERROR),
    )


def _entry_data(entry: BaselineEntry) -> dict[str, Any]:
    data: dict[str, Any] = {"reason": entry.reason}
    if entry.issue:
        data["issue"] = entry.issue
    if entry.outcomes:
        data["outcomes"] = tuple(o.value for o in entry.outcomes)
    return data


def dumps_baseline(entries: Sequence[BaselineEntry]) -> str:
    """Baseline file text: ``cases`` sorted by id, ``patterns`` in the order given."""
    data: dict[str, Any] = {"version": 1}
    for section, pattern in (("cases", False), ("patterns", True)):
        data[section] = {e.key: _entry_data(e) for e in entries if e.pattern is pattern}
    return dump_yaml(data, header=HEADER)
