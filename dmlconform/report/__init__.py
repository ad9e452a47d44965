"""Reports of a run: terminal (rich), report.json, junit.xml and report.html.

Each writer is a pure function from a `RunResult` to text; `write_reports` is
the one place that writes them to disk, atomically.  DESIGN.md "Comparison,
verdicts and reports".
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from dmlconform.report import html, json_report, junit
from dmlconform.report.folder import FILE_NAMES, ReportFolder, reserve
from dmlconform.results import RunResult

__all__ = ["FILE_NAMES", "commit_reports", "write_reports"]


def commit_reports(run: RunResult, folder: ReportFolder) -> dict[str, Path]:
    """report.json, junit.xml and report.html of ``run`` into the reserved
    ``folder``, as one set (`report.folder`); the path of each by kind."""
    writers = {"html": html.dumps, "json": json_report.dumps, "junit": junit.dumps}
    return folder.commit({kind: partial(w, run) for kind, w in writers.items()})


def write_reports(run: RunResult, folder: Path) -> dict[str, Path]:
    """The three reports of ``run`` into ``folder`` (created if missing; if it
    exists it must be empty or hold a report set, which is replaced whole)."""
    reserved = reserve(Path(folder), run.run_id)
    try:
        return commit_reports(run, reserved)
    finally:
        reserved.abandon()
