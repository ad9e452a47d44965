"""CI gating on the command line: the ``run`` options ``--baseline``,
``--tolerances``, ``--shard`` and ``--strict`` (`gating_options`), and the
commands ``baseline update`` and ``merge``.  DESIGN.md "Who uses it, and for what".
"""

from __future__ import annotations

import functools
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from dmlconform.atomic import write_atomic
from dmlconform.commands.options import console, existing_paths, specs_folder
from dmlconform.commands.view_options import view_options
from dmlconform.errors import EXIT_CODES_HELP, ExitCode, InputError
from dmlconform.gating.baseline import apply_baseline, dumps_baseline, read_baseline
from dmlconform.gating.baseline import update as make_update
from dmlconform.gating.merge import merge_runs
from dmlconform.gating.overrides import by_pair, read_overrides
from dmlconform.gating.shard import Shard, parse_shard
from dmlconform.report import write_reports
from dmlconform.report.json_report import read
from dmlconform.report.terminal import View, render
from dmlconform.results import Baseline, RunResult, ToleranceOverride
from dmlconform.spec.load import spec_files


@dataclass(frozen=True, slots=True)
class Gate:
    """The gating settings of one ``run``, files already read and checked."""

    strict: bool = False
    shard: Shard | None = None
    tolerances: str = ""
    overrides: tuple[ToleranceOverride, ...] = ()
    baseline: Baseline | None = None

    def keep(self, case_id: str) -> bool:
        """Whether the case belongs to this run's shard."""
        return self.shard is None or self.shard.holds(case_id)

    @property
    def override_map(self) -> Mapping[tuple[str, str], ToleranceOverride]:
        """What ``run_cases(overrides=)`` takes."""

        return by_pair(self.overrides)

    @property
    def run_id_suffix(self) -> str:
        """``-shard3of8`` for a shard, else empty."""
        return f"-shard{self.shard.index}of{self.shard.count}" if self.shard else ""

    def finish(self, run: RunResult) -> RunResult:
        """``run`` with the settings recorded and the baseline applied."""

        run = replace(run, strict=self.strict, shard=str(self.shard or ""), tolerances=self.tolerances,
                      overrides=self.overrides)
        return apply_baseline(run, self.baseline) if self.baseline is not None else run


def _shard(text: str | None) -> Shard | None:
    if text is None:
        return None
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise InputError(f"--shard {exc}") from None


def load_gate(*, specs_dir: str, baseline: str | None, tolerances: str | None, shard: str | None,
              strict: bool) -> Gate:
    """Reads and checks the files before anything runs, so a typo costs seconds, not a suite."""

    overrides: tuple[ToleranceOverride, ...] = ()
    if tolerances is not None:
        operators = {p.stem for p in spec_files(existing_paths((specs_dir,), "spec folder"))}
        overrides = read_overrides(Path(tolerances), operators=operators)
    return Gate(strict=strict, shard=_shard(shard), tolerances=tolerances or "", overrides=overrides,
                baseline=read_baseline(Path(baseline)) if baseline is not None else None)


def gating_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``--baseline``, ``--tolerances``, ``--shard`` and ``--strict`` to
    ``command``, which receives them read and checked as one ``gate: Gate``."""
    @functools.wraps(command)
    def wrapper(*args: Any, baseline: str | None, tolerances: str | None, shard: str | None, strict: bool,
                **kwargs: Any) -> Any:
        gate = load_gate(specs_dir=specs_folder(kwargs.get("specs_dir")), baseline=baseline, tolerances=tolerances,
                         shard=shard, strict=strict)
        return command(*args, gate=gate, **kwargs)

    for option in reversed((
        click.option("--baseline", metavar="FILE", help="Known failures (docs/baseline.md): they report as XFAIL; "
                     "a baselined case that passes is XPASS."),
        click.option("--tolerances", metavar="FILE", help="Tolerance overrides per operator x data type "
                     "(docs/baseline.md); shown in every report."),
        click.option("--shard", metavar="K/N", help="Run only shard K of N (split by a stable hash of the case "
                     "id); combine the reports with `dmlconform merge`."),
        click.option("--strict", is_flag=True, help="QUALITY_WARNING and XPASS fail the run too (exit 1)."),
    )):
        wrapper = option(wrapper)
    return wrapper


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
