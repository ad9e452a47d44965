"""The published results page: third-party backends on the default suite.

Issue 8, part 3.  From report.json files (or the trimmed summaries this
module writes, small enough to commit) it renders one markdown page: per
backend its device and totals; one row per operator x data type x backend
with PASS / QUALITY_WARNING / FAIL counts, the configurations the backend
rejected although the table supports them ("rejected": a coverage gap, not a
wrong number) and the largest ULP distance seen; and for every FAIL class
the minimal repro case, its worst element and the analysis, taken from a
small YAML file of notes keyed by case-id pattern.  A FAIL no note matches
is listed as "not analysed", never dropped.  Then, per backend, operator and
ambiguity of the doc that its cases told apart, which reading the backend
took (issue #22: a backend that takes another reading than the primary one
PASSes, and the page says so).  The same inputs always give the same bytes
(sorted everywhere, no dates).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dmlconform.errors import InputError
from dmlconform.report.distance import distance_text, ulp_count
from dmlconform.report.json_report import from_data, to_json
from dmlconform.report.readings import ReadingTaken
from dmlconform.report.readings import summarize as summarize_readings
from dmlconform.results import REFUSED_PREFIX, CaseResult, Outcome, RunResult
from dmlconform.userfiles import loads_json

SUMMARY_FORMAT = "dmlconform-results-summary"
SUMMARY_VERSION = 1
CLASSES = {"bug": "real bug in the implementation", "doc": "doc ambiguity or semantic difference",
           "harness": "harness error", "mapping": "mapping limit (NOT an implementation bug)"}


@dataclass(frozen=True, slots=True)
class Row:
    """One operator x data type on one backend."""

    backend: str
    operator: str
    dtype: str
    passed: int = 0
    warned: int = 0
    failed: int = 0
    rejected: int = 0
    not_supported: int = 0
    max_ulp: int = 0
    reason: str = ""          # the first rejection's reason

    @property
    def computed(self) -> int:
        return self.passed + self.warned + self.failed


@dataclass(frozen=True, slots=True)
class Note:
    """An analysis for the FAILs whose case id matches ``match`` (a glob) on
    a backend whose label matches ``backend``."""

    match: str
    backend: str
    kind: str                 # a key of CLASSES
    text: str

    def applies(self, label: str, case_id: str) -> bool:
        return fnmatch.fnmatchcase(label, self.backend) and fnmatch.fnmatchcase(case_id, self.match)


@dataclass(frozen=True, slots=True)
class Summary:
    """What the page needs from one run: its rows, its numeric FAILs and the
    readings it took of each ambiguity its cases told apart."""

    label: str
    run: RunResult            # the run's facts; ``cases`` holds only the numeric FAILs
    readings: tuple[ReadingTaken, ...] = ()


def label_of(run: RunResult) -> str:
    """``backend-device``: ``torch-cuda``, ``onnxruntime-cpu``."""
    return f"{run.backend}-{'cuda' if 'cuda' in run.device.lower() else 'cpu'}"


def is_rejected(case: CaseResult) -> bool:
    """The backend refused a configuration the table supports (`CaseResult.refused`: NOT_SUPPORTED from a
    backend that implements a subset of the tables, FAIL from one that claims them; a report written
    before the flag says so in a FAIL's message)."""
    return case.refused or (case.outcome is Outcome.FAIL and case.message.startswith(REFUSED_PREFIX))


def summarise(run: RunResult) -> tuple[Summary, tuple[Row, ...]]:
    """A run's rows and its numeric FAILs (each keeping its worst element)."""
    label = label_of(run)
    rows: dict[tuple[str, str], Row] = {}
    for c in run.cases:
        row = rows.get((c.operator, c.dtype)) or Row(label, c.operator, c.dtype)
        rows[(c.operator, c.dtype)] = _count(row, c)
    fails = tuple(dataclasses.replace(c, worst=c.worst[:1], edges=())
                  for c in run.cases if c.outcome.failed and not is_rejected(c))
    readings = tuple(t for t in summarize_readings(run.cases) if t.elements)
    return Summary(label, dataclasses.replace(run, cases=fails, started="", finished=""), readings), \
        tuple(rows[k] for k in sorted(rows))


def _count(row: Row, c: CaseResult) -> Row:
    if is_rejected(c):
        reason = row.reason or (c.message.split(": ", 1)[-1] if c.outcome is Outcome.FAIL else c.message)
        return dataclasses.replace(row, rejected=row.rejected + 1, reason=reason)
    field = {Outcome.PASS: "passed", Outcome.QUALITY_WARNING: "warned",
             Outcome.NOT_SUPPORTED: "not_supported"}.get(c.outcome, "failed")
    row = dataclasses.replace(row, **{field: getattr(row, field) + 1})
    return dataclasses.replace(row, max_ulp=max(row.max_ulp, c.max_ulp))


# -- the summary file ----------------------------------------------------------
def summary_json(summary: Summary, rows: Sequence[Row]) -> str:
    data = {"format": SUMMARY_FORMAT, "version": SUMMARY_VERSION, "label": summary.label,
            "rows": [dataclasses.asdict(r) for r in rows], "failures": to_json(summary.run),
            "readings": [t.to_json() for t in summary.readings]}
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def read_input(text: str, *, path: str) -> tuple[Summary, tuple[Row, ...]]:
    """A report.json or a summary written by `summary_json`; a file that is
    neither is an error naming ``path`` (and the place in it)."""

    data = loads_json(text, path=path, strict=True)
    if not (isinstance(data, dict) and data.get("format") == SUMMARY_FORMAT):
        return summarise(from_data(data, path=path))
    if data.get("version") != SUMMARY_VERSION:
        raise InputError(f"{path}: summary version {data.get('version')!r}; this dmlconform reads "
                         f"{SUMMARY_VERSION}")
    run = from_data(data.get("failures"), path=f"{path} (failures)")
    readings = _readings(data.get("readings", []), path=path)  # summaries written before readings have none
    return Summary(str(data.get("label")), run, readings), _rows(data.get("rows"), path=path)


def _readings(value: Any, *, path: str) -> tuple[ReadingTaken, ...]:
    """The readings of a summary, as `ReadingTaken.to_json` wrote them."""
    if not isinstance(value, list):
        raise InputError(f"{path}: bad summary: readings: expected an array")
    out = []
    for i, item in enumerate(value):
        taken = ReadingTaken.from_json(item)
        if taken is None:
            raise InputError(f"{path}: bad summary: readings[{i}]: expected an object of operator, ambiguity, "
                             "primary, elements and took ([[reading, count], ...])")
        out.append(taken)
    return tuple(out)


def _rows(value: Any, *, path: str) -> tuple[Row, ...]:
    """The rows of a summary, each member of the type `Row` declares."""

    if not isinstance(value, list):
        raise InputError(f"{path}: bad summary: rows: expected an array")
    rows = []
    for i, item in enumerate(value):
        fields = {f.name: f.type for f in dataclasses.fields(Row)}
        bad = [k for k, v in item.items() if fields.get(k) != type(v).__name__] if isinstance(item, dict) else ["?"]
        if bad or not {"backend", "operator", "dtype"} <= set(item):
            raise InputError(f"{path}: bad summary: rows[{i}]: expected an object of {', '.join(fields)} "
                             "(strings and integers)")
        rows.append(Row(**item))
    return tuple(rows)


def load_notes(data: Any, *, path: str) -> tuple[Note, ...]:
    """Notes from parsed YAML: a list of {match, backend?, class, note}."""

    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of notes, got {type(data).__name__}")
    notes = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not {"match", "class", "note"} <= set(item):
            raise InputError(f"{path}: note {i}: give match, class and note (and optionally backend)")
        if item["class"] not in CLASSES:
            raise InputError(f"{path}: note {i}: class={item['class']!r}; use one of {', '.join(CLASSES)}")
        notes.append(Note(str(item["match"]), str(item.get("backend", "*")), str(item["class"]),
                          " ".join(str(item["note"]).split())))
    return tuple(notes)


# -- rendering -------------------------------------------------------------------
def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(value: float) -> str:
    return repr(float(value))


def render(inputs: Sequence[tuple[Summary, tuple[Row, ...]]], notes: Sequence[Note], *,
           command: str = "") -> str:
    """The page, deterministic for the same inputs."""
    inputs = sorted(inputs, key=lambda s: s[0].label)
    lines = ["# Results: third-party implementations on the default suite", "",
             "Generated by `dmlconform results` (see README, *Third-party backends*); do not edit by hand.",
             *([f"Regenerate: `{command}`", ""] if command else [""]),
             "PASS / QW (quality warning) / FAIL count cases the backend computed; *rejected* counts configurations",
             "the doc's table supports but the backend (or its mapping) refused: a coverage gap, not a wrong number.",
             "`max ULP` is the largest ULP distance among elements that were not a clean PASS (2 significant",
             "digits from 100000 on; a NaN against a number has no ULP distance and is not counted).", ""]
    lines += _backends(inputs)
    lines += _table(inputs)
    lines += _findings(inputs, notes)
    lines += _readings_taken(inputs)
    lines += _gaps(inputs)
    return "\n".join(lines).rstrip() + "\n"


def _backends(inputs: Sequence[tuple[Summary, tuple[Row, ...]]]) -> list[str]:
    out = ["## Backends", "", "| backend | device | version | level | seed | PASS | QW | FAIL | rejected | "
           "NOT_SUPPORTED |", "| --- | --- | --- | --- | --- | --: | --: | --: | --: | --: |"]
    for s, rows in inputs:
        t = [sum(getattr(r, f) for r in rows) for f in ("passed", "warned", "failed", "rejected", "not_supported")]
        out.append(f"| {s.label} | {_cell(s.run.device)} | {_cell(s.run.backend_version)} | {s.run.feature_level} | "
                   f"{s.run.seed} | " + " | ".join(str(n) for n in t) + " |")
    return out + [""]


def _table(inputs: Sequence[tuple[Summary, tuple[Row, ...]]]) -> list[str]:
    out = ["## Per operator x data type", "",
           "Rows where the backend computed at least one case.", "",
           "| operator | data type | backend | PASS | QW | FAIL | rejected | NOT_SUPPORTED | max ULP |",
           "| --- | --- | --- | --: | --: | --: | --: | --: | --: |"]
    rows = sorted((r for _, rs in inputs for r in rs if r.computed),
                  key=lambda r: (r.operator, r.dtype, r.backend))
    for r in rows:
        out.append(f"| {r.operator} | {r.dtype} | {r.backend} | {r.passed} | {r.warned} | {r.failed} | "
                   f"{r.rejected} | {r.not_supported} | {ulp_count(r.max_ulp)} |")
    return out + [""]


def _findings(inputs: Sequence[tuple[Summary, tuple[Row, ...]]], notes: Sequence[Note]) -> list[str]:
    """One line per (backend, operator, data type, note): the minimal repro."""
    groups: dict[tuple[str, str, str, int], list[CaseResult]] = {}
    for s, _ in inputs:
        for c in s.run.cases:
            k = next((i for i, n in enumerate(notes) if n.applies(s.label, c.case_id)), len(notes))
            groups.setdefault((s.label, c.operator, c.dtype, k), []).append(c)
    out = ["## Every FAIL, with its analysis", "",
           "Minimal repro: the failing case with the fewest elements; its worst element as inputs -> expected vs "
           "actual (the distance: `3 ULP`, `2.1e9 ULP`, `sign differs`, or the two values where one is NaN or "
           "infinite).", "",
           "| backend | operator | data type | FAIL cases | minimal repro | worst element | class | analysis |",
           "| --- | --- | --- | --: | --- | --- | --- | --- |"]
    for (label, op, dtype, k), cases in sorted(groups.items()):
        c = min(cases, key=lambda c: (c.elements, c.case_id))
        kind, text = (CLASSES[notes[k].kind], notes[k].text) if k < len(notes) else ("not analysed", "")
        out.append(f"| {label} | {op} | {dtype} | {len(cases)} | `{_cell(c.repro)}` | {_cell(_worst(c))} | {kind} | "
                   f"{_cell(text)} |")
    return out + [""]


def _readings_taken(inputs: Sequence[tuple[Summary, tuple[Row, ...]]]) -> list[str]:
    """Per backend, operator and ambiguity its cases told apart: the reading
    it took (docs/ambiguities.md).  A result that matches a reading other
    than the primary one is a PASS, so this is where the page says which."""
    out = ["## Readings taken of the doc's ambiguities", "",
           "Where the doc leaves a choice open, every reading is accepted (docs/ambiguities.md); this is the "
           "reading each backend took, counted over the elements where the readings give different values.", "",
           "| backend | operator | ambiguity | took | elements | per reading (the primary first) |",
           "| --- | --- | --- | --- | --: | --- |"]
    for s, _ in inputs:
        for t in s.readings:
            counts = ", ".join(f"{r} {n}" for r, n in t.took)
            out.append(f"| {s.label} | {t.operator} | {_cell(t.ambiguity)} | {_cell(t.status)} | {t.elements} | "
                       f"{_cell(counts)} |")
    return out + [""]


def _worst(c: CaseResult) -> str:
    if not c.worst:
        return _cell(c.message)
    w = c.worst[0]
    args = ", ".join(f"{n}={_num(v)}" for n, v in w.inputs)
    return f"{args} -> {_num(w.expected)} vs {_num(w.actual)} ({distance_text(w.expected, w.actual, w.ulp)})"


def _gaps(inputs: Sequence[tuple[Summary, tuple[Row, ...]]]) -> list[str]:
    out = ["## Rejected configurations (coverage gaps)", "",
           "Per backend and operator: the data types with in-table cases the backend refused, and the first reason.",
           "", "| backend | operator | data types | rejected | first reason |", "| --- | --- | --- | --: | --- |"]
    by_op: dict[tuple[str, str], list[Row]] = {}
    for _, rows in inputs:
        for r in rows:
            if r.rejected:
                by_op.setdefault((r.backend, r.operator), []).append(r)
    for (label, op), refused in sorted(by_op.items()):
        reason = next(r.reason for r in refused if r.reason)
        out.append(f"| {label} | {op} | {', '.join(r.dtype for r in refused)} | {sum(r.rejected for r in refused)} | "
                   f"{_cell(reason[:160])} |")
    return out


def unmatched(inputs: Iterable[tuple[Summary, tuple[Row, ...]]], notes: Sequence[Note]) -> list[str]:
    """Ids of FAIL cases no note explains (the command warns about them)."""
    return sorted(f"{s.label}: {c.case_id}" for s, _ in inputs for c in s.run.cases
                  if not any(n.applies(s.label, c.case_id) for n in notes))
