"""junit.xml for CI: one <testsuite> per operator, one <testcase> per data
type x feature level (``FLOAT16 @ 6_4``, classname the operator).

A group with any FAIL/CRASH/TIMEOUT/ERROR case (with ``--strict`` also
QUALITY_WARNING/XPASS) has a <failure> whose message
gives the counts and whose text lists each failing case id, its message and
the command that reproduces it; a group with only NOT_SUPPORTED/XFAIL cases is
<skipped>.  ElementTree escapes the text; characters XML 1.0 cannot hold at
all are written as ``\\xNN``.  Attributes keep insertion order, so the output
is deterministic.  DESIGN.md "Comparison, verdicts and reports".
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from dmlconform.report.coverage import GroupRow, gating_facts, group_rows, stale_entries
from dmlconform.results import CaseResult, Outcome, RunResult

#: Characters XML 1.0 forbids in a document, even escaped.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(text: str) -> str:
    """``text`` with characters XML cannot hold replaced by ``\\xNN`` / ``\\uNNNN``."""
    return _ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def _el(parent: ET.Element | None, tag: str, attrs: dict[str, str], text: str | None = None) -> ET.Element:
    el = ET.Element(tag) if parent is None else ET.SubElement(parent, tag)
    for key, value in attrs.items():
        el.set(key, xml_text(value))
    if text is not None:
        el.text = xml_text(text)
    return el


def counts_text(counts: tuple[tuple[Outcome, int], ...]) -> str:
    """``2 FAIL, 1 CRASH, 3 PASS of 6 cases``: failing outcomes first."""
    total = sum(n for _, n in counts)
    ordered = sorted(counts, key=lambda on: not on[0].failed)
    return ", ".join(f"{n} {o.value}" for o, n in ordered if n) + f" of {total} case{'' if total == 1 else 's'}"


def _case_text(case: CaseResult) -> str:
    lines = [f"{case.case_id}: {case.outcome.value}" + (f": {case.message}" if case.message else "")]
    if case.repro:
        lines.append(f"  repro: {case.repro}")
    return "\n".join(lines)


def _testcase(suite: ET.Element, run: RunResult, row: GroupRow) -> tuple[bool, bool]:
    """Adds the <testcase> of ``row``; returns (failed, skipped).  With
    ``--strict`` QUALITY_WARNING and XPASS cases fail it too; otherwise an
    XPASS case is listed in <system-out>."""
    case = _el(suite, "testcase", {"classname": row.operator, "name": row.name, "time": f"{row.seconds:.3f}"})
    failing = [c for c in row.cases if run.fails(c)]
    warned = [c for c in row.cases if c.outcome is Outcome.XPASS and not run.fails(c)]
    if failing:
        _el(case, "failure", {"message": counts_text(row.counts), "type": row.worst.value},
            "\n".join(_case_text(c) for c in failing) + "\n")
    elif row.skipped:
        _el(case, "skipped", {"message": counts_text(row.counts)})
    if warned:  # after <failure>/<skipped>, as the JUnit schema orders them
        _el(case, "system-out", {}, "\n".join(_case_text(c) for c in warned) + "\n")
    return bool(failing), not failing and row.skipped


def properties(run: RunResult) -> list[tuple[str, str]]:
    """(name, value) of the run's facts: who ran, and the gating settings
    (``tolerance_override`` and ``stale_baseline_entry`` once per item)."""
    props = [("backend", run.backend), ("backend_version", run.backend_version),
             ("device", run.device), ("feature_level", run.feature_level),
             ("flush_subnormals", str(run.flush_subnormals).lower()),
             ("seed", str(run.seed)), ("run_id", run.run_id), ("command", run.command)]
    props += [(name.replace(" ", "_"), value) for name, value in gating_facts(run)]
    props += [("tolerance_override", f"{o.operator} {o.dtype} {o.describe()}: {o.reason}") for o in run.overrides]
    props += [("stale_baseline_entry", f"{key}: {reason}") for key, reason in stale_entries(run)]
    return props


def _properties(suite: ET.Element, run: RunResult) -> None:
    props = _el(suite, "properties", {})
    for name, value in properties(run):
        _el(props, "property", {"name": name, "value": value})


def _suite(root: ET.Element, run: RunResult, operator: str, rows: list[GroupRow]) -> tuple[int, int, int]:
    suite = _el(root, "testsuite", {"name": operator, "tests": str(len(rows)), "failures": "0", "errors": "0",
                                    "skipped": "0", "time": f"{sum(r.seconds for r in rows):.3f}",
                                    "timestamp": run.started})
    _properties(suite, run)
    results = [_testcase(suite, run, row) for row in rows]
    failures, skipped = sum(f for f, _ in results), sum(s for _, s in results)
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    return len(rows), failures, skipped


def to_element(run: RunResult) -> ET.Element:
    """The <testsuites> element of ``run``."""
    root = _el(None, "testsuites", {"name": "dmlconform", "tests": "0", "failures": "0", "errors": "0",
                                    "skipped": "0", "time": f"{sum(c.seconds for c in run.cases):.3f}"})
    by_op: dict[str, list[GroupRow]] = {}
    for row in group_rows(run):
        by_op.setdefault(row.operator, []).append(row)
    sums = [_suite(root, run, op, rows) for op, rows in by_op.items()]
    root.set("tests", str(sum(s[0] for s in sums)))
    root.set("failures", str(sum(s[1] for s in sums)))
    root.set("skipped", str(sum(s[2] for s in sums)))
    return root


def dumps(run: RunResult) -> str:
    """junit.xml text, indented, with an XML declaration and a final newline."""
    root = to_element(run)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
