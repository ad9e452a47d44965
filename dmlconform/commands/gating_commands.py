"""CI gating on the command line: the commands ``baseline update`` and
``merge`` (the ``run`` options are `gating_options`).  DESIGN.md "Who uses it, and for what".
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path

import click

from dmlconform.atomic import write_atomic
from dmlconform.commands.options import console, existing_paths
from dmlconform.commands.view_options import view_options
from dmlconform.errors import EXIT_CODES_HELP, ExitCode
from dmlconform.gating.baseline import dumps_baseline, read_baseline
from dmlconform.gating.baseline import update as make_update
from dmlconform.gating.merge import merge_runs
from dmlconform.report.folder import write_reports
from dmlconform.report.json_report import read
from dmlconform.report.terminal import render
from dmlconform.report.view import View
from dmlconform.results import RunResult

# --------------------------------------------------------------------------- baseline update


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@click.group(epilog=EXIT_CODES_HELP)
def baseline() -> None:
    """Baselines of known failures (docs/baseline.md)."""


def _read_report(path: str) -> RunResult:
    file = existing_paths((path,), "report")[0]
    if file.is_dir():
        file = file / "report.json"
    return read(file)  # a regular file within limits.REPORT, valid JSON, not too deep


@baseline.command(epilog=EXIT_CODES_HELP)
@click.argument("report", metavar="REPORT.json")
@click.option("-o", "--output", metavar="FILE", help="Baseline to write (default: --baseline OLD, else baseline.yaml).")
@click.option("--baseline", "old_path", metavar="OLD", help="Baseline whose reasons and issue links to keep "
              "(default: the one the report's run used).")
def update(report: str, output: str | None, old_path: str | None) -> None:
    """Write the baseline of a run: every FAIL, CRASH, TIMEOUT and XFAIL case
    of REPORT.json (a report.json, or the folder holding one).

    An old entry (from --baseline OLD, else from the baseline the run was
    checked against) that still covers a failing case is kept with its
    reason, issue link and pattern; an old entry that covers none is dropped
    and named.  New failures get an exact entry whose reason says where they
    were first seen: replace it with the cause.  Run it on a whole run's
    report (or a merged one): entries of cases outside the report are dropped.
    """

    run = _read_report(report)
    old = read_baseline(Path(old_path)) if old_path else run.baseline
    made = make_update(run, old)
    target = Path(output or old_path or "baseline.yaml")
    write_atomic(target, dumps_baseline(made.entries))
    for line in made.dropped:
        click.echo(f"dropped {line}", err=True)
    if made.skipped:
        click.echo(f"not baselined: {len(made.skipped)} ERROR case(s), harness errors to report, not to baseline "
                   f"(first: {made.skipped[0]})", err=True)
    click.echo(f"wrote {target}: {plural(len(made.entries), 'entry', 'entries')} ({len(made.kept)} kept, "
               f"{len(made.added)} new, "
               f"{len(made.dropped)} dropped)", err=True)


# --------------------------------------------------------------------------- merge


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("reports", nargs=-1, required=True, metavar="REPORT.json...")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False), help="Folder of the merged reports.")
@view_options
def merge(reports: tuple[str, ...], output: str, view: View) -> None:
    """Merge the report.json files of the shards of one run (``run --shard
    K/N``) into the report of the whole run: report.json, junit.xml and
    report.html in OUTPUT, and the summary.  Exits 2 when shards overlap, one
    is missing or the reports are of different runs; otherwise as ``run``
    would have (1 when a case failed)."""


    runs = [(r, _read_report(r)) for r in reports]
    command = "dmlconform " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    merged = merge_runs(runs, command=command)
    written = write_reports(merged, Path(output))
    render(merged, console(), replace(view, html=str(written["html"])))
    click.echo(f"reports: {', '.join(str(p) for p in sorted(written.values()))}", err=True)
    sys.exit(ExitCode.FINDINGS if merged.failed else ExitCode.OK)
