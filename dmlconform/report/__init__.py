"""Reports of a run: terminal (rich), report.json, junit.xml and report.html.

Each writer is a pure function from a `RunResult` to text; `write_reports` is
the one place that writes them to disk, atomically.  DESIGN.md "Comparison,
verdicts and reports".
"""

from __future__ import annotations

from pathlib import Path

from dmlconform.atomic import write_atomic
from dmlconform.report import html, json_report, junit
from dmlconform.results import RunResult

#: File name of each report written by `write_reports`.
FILE_NAMES = {"json": "report.json", "junit": "junit.xml", "html": "report.html"}


def write_reports(run: RunResult, folder: Path) -> dict[str, Path]:
    """Write report.json, junit.xml and report.html into ``folder`` (created if
    missing), each atomically; returns the path of each by kind, sorted."""
    writers = {"html": html.dumps, "json": json_report.dumps, "junit": junit.dumps}
    written = {}
    for kind in sorted(writers):
        path = Path(folder) / FILE_NAMES[kind]
        write_atomic(path, writers[kind](run))
        written[kind] = path
    return written
