"""What `run` does once its workers have started (`run_commands`): read
the specs (or a case folder), make the selected cases, run them on the
engine, and print and write the reports."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from dmlconform import suite, ties
from dmlconform.backends.base import reported_float16
from dmlconform.cases.model import Case
from dmlconform.commands.gating_options import Gate
from dmlconform.commands.options import console as make_console
from dmlconform.commands.options import load_specs, parse_dtypes, parse_level
from dmlconform.errors import ExitCode, InputError
from dmlconform.invocation import Invocation
from dmlconform.parallel import InProcess, Progress, RunOutcome, Workers
from dmlconform.report.folder import FILE_NAMES, commit_reports, reserve, write_reports
from dmlconform.report.readings import ambiguity_words
from dmlconform.report.terminal import render
from dmlconform.report.view import View
from dmlconform.results import CaseResult, RunResult
from dmlconform.spec import model as m

if TYPE_CHECKING:
    from rich.console import Console

    from dmlconform.backends.base import BackendInfo
    from dmlconform.report.folder import ReportFolder


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What a ``run`` was asked on its command line (`run_commands.run`),
    as given, but for ``view`` and ``gate`` (read and checked into their
    records) and ``backend_args`` (``--backend-arg KEY=VALUE`` as pairs, in
    the order given).  ``level_text`` None: the backend's claimed level."""

    specs_dir: str
    backend_name: str
    backend_args: tuple[tuple[str, str], ...]
    level_text: str | None
    seed: int
    ops: tuple[str, ...]
    dtypes: tuple[str, ...]
    patterns: tuple[str, ...]
    ids: tuple[str, ...]
    cases_dir: str | None
    large: bool
    output: str | None
    view: View
    no_progress: bool
    skip_unavailable: bool
    show_skipped: bool
    gate: Gate


def execute(ctx: click.Context, engine: Workers | InProcess, run: RunOptions, *, started: dt.datetime,
            clock: float) -> None:
    """The ``run`` of `run_commands.run` on ``engine`` (started at
    ``started``, ``clock`` by `time.perf_counter`); exits with the run's
    code."""
    console = make_console()
    gate, seed = run.gate, run.seed
    needed, option = _operators(run.ops, run.ids) if not run.cases_dir else (run.ops, "--op")
    specs = load_specs(run.specs_dir, needed, option=option)  # input errors before waiting for the backend
    selection = suite.Selection(frozenset(run.ids), run.patterns, frozenset(parse_dtypes(run.dtypes)), gate.shard)
    cases = (suite.checked_cases(Path(run.cases_dir), [s for _, s in specs], every_operator=not run.ops)
             if run.cases_dir else None)
    suite.prepare(specs, engine.prepare)  # while the backend starts: its feature level decides which cases there are
    info = _available(engine.info(), run.skip_unavailable)
    level = parse_level(run.level_text, "--feature-level") or info.feature_level
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + f"-{info.name}-{level.short}-s{seed}" + gate.run_id_suffix
    folder = reserve(Path(run.output) if run.output else None, run_id)   # before any case: a bad -o costs nothing
    ctx.call_on_close(folder.abandon)
    pairs, skipped = suite.pairs(specs, level, seed=seed, large=run.large, cases=cases, selection=selection)
    if not pairs:
        why = f"; skipped {'; '.join(skipped[:3])}" if skipped else ""
        raise InputError(f"no case matches the selection (--op, --dtype, -k, --case, --shard){why}")
    outcome = _run_with_progress(len(pairs), console, enabled=not run.no_progress and console.is_terminal,
                                 execute=lambda progress: engine.run(pairs, progress=progress))
    made = [(s, c) for s, c in pairs if isinstance(c, Case)]   # a --large case made in its worker ties nothing
    results = _with_repro(suite.with_notes(ties.agreed(made, outcome.results),
                                           Path(run.cases_dir) if run.cases_dir else None),
                          _invocation(ctx, run, level))
    report = gate.finish(RunResult(
        run_id=folder.run_id, backend=info.name, device=info.device, backend_version=info.version,
        feature_level=level.short, flush_subnormals=info.flush_subnormals, seed=seed,
        command="dmlconform " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        started=started.isoformat(timespec="seconds"),
        finished=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        cases=results, ambiguities=ambiguity_words((s for _, s in specs), results),
        interrupted=outcome.interrupted, seconds=round(time.perf_counter() - clock, 3),
        float16_accumulation=reported_float16(info.float16_accumulation), subset=info.subset))
    _finish(report, folder, console, view=run.view, skipped=skipped, show_skipped=run.show_skipped,
            ran=len(outcome.results), total=len(pairs))


def _available(info: BackendInfo, skip_unavailable: bool) -> BackendInfo:
    """``info`` of a backend that can run here; else its reason, and exit
    3 (0 with --skip-unavailable)."""
    if not info.available:
        click.echo(f"backend {info.name} is unavailable: {info.reason}", err=True)
        sys.exit(ExitCode.OK if skip_unavailable else ExitCode.BACKEND_UNAVAILABLE)
    return info


def _operators(ops: tuple[str, ...], ids: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The operators whose specs a run needs, and the option that named them:
    ``--op``, else those of the ``--case`` ids (an id starts with its
    operator), else none (every spec)."""
    if ops or not ids:
        return ops, "--op"
    return tuple(dict.fromkeys(i.split("/", 1)[0] for i in ids)), "--case"


def _invocation(ctx: click.Context, run: RunOptions, level: m.FeatureLevel) -> Invocation:
    """The options of this run that its repro lines must repeat: those the
    user gave (a path as written), the level and the seed (not for --cases,
    whose cases do not depend on it)."""
    def given(name: str) -> Any:  # click's parameter values are untyped
        source = ctx.get_parameter_source(name)
        return ctx.params[name] if source is not None and source.name == "COMMANDLINE" else None

    return Invocation(
        backend=run.backend_name, backend_args=run.backend_args, level=level.short,
        seed=None if run.cases_dir else run.seed, specs=given("specs_dir"), cases=run.cases_dir,
        tolerances=run.gate.tolerances or None, large=bool(ctx.params.get("large")),
        timeout=given("timeout"))


def _with_repro(results: tuple[CaseResult, ...], invocation: Invocation) -> tuple[CaseResult, ...]:
    """Each result with the line that runs its case alone again."""
    return tuple(dataclasses.replace(r, repro=invocation.repro(r.case_id)) for r in results)


def _finish(report: RunResult, folder: ReportFolder, console: Console, *, view: View, skipped: list[str],
            show_skipped: bool, ran: int, total: int) -> None:
    """Print the summary, then write the reports (if that fails, the summary
    is already out and the reports go to a temp folder); exit with the
    run's code."""

    render(report, console, dataclasses.replace(view, html=str(folder.final / FILE_NAMES['html'])))
    if show_skipped:
        for line in skipped:
            click.echo(f"skipped {line}", err=True)
    elif skipped:
        click.echo(f"skipped {len(skipped)} specs whose formula the oracle cannot evaluate or whose cases "
                   f"cannot be generated (--show-skipped lists them)", err=True)
    try:
        written = commit_reports(report, folder)
    except OSError as exc:
        _rescue(report, folder.final, exc)
    click.echo(f"reports: {', '.join(str(p) for p in sorted(written.values()))}", err=True)
    if report.interrupted:
        click.echo(f"interrupted: {ran} of {total} cases ran; the reports hold those", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    sys.exit(ExitCode.FINDINGS if report.failed else ExitCode.OK)


def _rescue(report: RunResult, target: Path, exc: OSError) -> NoReturn:
    """The reports could not be written where they belong (the folder was
    checked writable before the run: something changed since): write them
    to a new temp folder instead, say where in one line, exit 2."""


    why = exc.strerror or str(exc)
    try:
        written = write_reports(report, Path(tempfile.mkdtemp(prefix=f"dmlconform-{report.run_id}-")))
    except OSError as again:
        raise InputError(f"cannot write the reports to {target}: {why}; nor to a temp folder: "
                         f"{again.strerror or again}; the summary above is all this run kept") from None
    raise InputError(f"cannot write the reports to {target}: {why}; they were written to "
                     f"{written['json'].parent} instead") from None


def _run_with_progress(total: int, console: Console, *, enabled: bool,
                       execute: Callable[[Progress | None], RunOutcome]) -> RunOutcome:
    if not enabled:
        return execute(None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415 - the bar is drawn only on a terminal; CI logs and --no-progress skip its import

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("running", total=total)
        return execute(lambda r: progress.update(task, advance=1, description=r.operator))
