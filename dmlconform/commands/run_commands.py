"""`run`: generate (or read) cases, run them on a backend, compare, report."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from dmlconform import suite
from dmlconform.backends.base import reported_float16
from dmlconform.commands.gating_commands import Gate, gating_options
from dmlconform.commands.options import backend_options, load_specs, parse_dtypes, parse_level, specs_option
from dmlconform.commands.options import console as make_console
from dmlconform.commands.view_options import view_options
from dmlconform.errors import EXIT_CODES_HELP, ExitCode, InputError
from dmlconform.invocation import Invocation
from dmlconform.limits import MAX_TIMEOUT
from dmlconform.parallel import DEFAULT_TIMEOUT, InProcess, Progress, RunOutcome, Workers, default_jobs
from dmlconform.report import commit_reports, write_reports
from dmlconform.report.folder import FILE_NAMES, reserve
from dmlconform.report.readings import ambiguity_words
from dmlconform.report.terminal import View, render
from dmlconform.results import CaseResult, RunResult
from dmlconform.spec import model as m

if TYPE_CHECKING:
    from rich.console import Console

    from dmlconform.backends.base import BackendInfo
    from dmlconform.report.folder import ReportFolder


@click.command(epilog=EXIT_CODES_HELP)
@specs_option()
@click.option("--backend", "backend_name", default="cpu", show_default=True, help="Backend (see `dmlconform backends`).")
@click.option("--backend-arg", "backend_args", multiple=True, metavar="KEY=VALUE", help="Option for the backend.")
@click.option("--feature-level", "level_text", metavar="LEVEL", help="Level whose tables the cases exercise "
                                                                     "(default: the backend's claimed level).")
@click.option("--seed", default=0, show_default=True, help="Seed of the random values; same seed, same cases.")
@click.option("--op", "ops", multiple=True, metavar="NAME", help="Only these operators.")
@click.option("--dtype", "dtypes", multiple=True, metavar="TYPE", help="Only these data types (FLOAT16, ...).")
@click.option("-k", "patterns", multiple=True, metavar="PATTERN", help="Only case ids matching (glob, or substring).")
@click.option("--case", "ids", multiple=True, metavar="ID", help="Only this case id (repeatable).")
@click.option("--cases", "cases_dir", type=click.Path(), help="Replay cases written by `gen` instead of generating.")
@click.option("--large", is_flag=True, help="Add the large-tensor cases (>= 2^22 elements).")
@click.option("-o", "--output", type=click.Path(file_okay=False), help="Report folder (default reports/<run-id>).")
@view_options
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--skip-unavailable", is_flag=True, help="Exit 0 instead of 3 when the backend is unavailable.")
@click.option("--show-skipped", is_flag=True, help="List each spec left out of the suite, with the reason.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes that run the backend (default: one per core).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True, max=MAX_TIMEOUT), default=DEFAULT_TIMEOUT,
              show_default=True, callback=lambda ctx, param, value: _finite(value, "--timeout"),
              metavar="SECONDS", help=f"A case running longer is TIMEOUT and its worker is replaced (a case over "
                                      f"2^22 elements gets proportionally longer; at most {MAX_TIMEOUT:g}).")
@click.option("--no-isolate", is_flag=True, help="Run the backend in this process, one case after another, for "
                                                 "debugging: a crash ends the run, nothing times out, -j is ignored.")
@gating_options
def run(specs_dir: str, backend_name: str, backend_args: tuple[str, ...], level_text: str | None, seed: int,
        ops: tuple[str, ...], dtypes: tuple[str, ...], patterns: tuple[str, ...], ids: tuple[str, ...],
        cases_dir: str | None, large: bool, output: str | None, view: View, no_progress: bool,
        skip_unavailable: bool, show_skipped: bool, jobs: int | None, timeout: float, no_isolate: bool,
        gate: Gate) -> None:
    """Run the conformance suite on a backend and report.

    Cases come from the specs (every spec whose formula the oracle can
    evaluate) at the chosen feature level, deterministic for --seed.  Writes
    report.json, junit.xml and report.html, prints a line per operator, the
    first failing cases (--show-failures) with their worst elements and a
    command that reproduces each, then the run's facts and totals.  The
    backend runs in worker processes: a case that crashes one is CRASH, one
    over --timeout is TIMEOUT, and the run goes on; Ctrl-C (or SIGTERM)
    writes the reports of the cases that finished and exits 130.  Exits 0
    when nothing failed (QUALITY_WARNING and XPASS too with --strict); with
    --baseline, known failures (XFAIL) do not fail the run, new ones do.
    Wrong values are counted apart from refusals (configurations the
    table supports that the backend does not run): a backend that claims
    DirectML's tables (cpu, directml) FAILs on a refusal; one that
    implements a subset of them (onnxruntime, torch) is NOT_SUPPORTED
    there, which does not fail the run.
    """

    ctx = click.get_current_context()
    started, clock = dt.datetime.now(dt.UTC), time.perf_counter()
    options = backend_options(backend_args)
    engine = _engine(ctx, backend_name, options, isolate=not no_isolate, jobs=jobs, timeout=timeout, gate=gate)
    # Imported once the workers have started: numpy, the oracle and the generator then load while they start
    # (a one-case run, the repro of a failure: 0.74 -> 0.55 s on 2 cores; bench/bench_cli.py).

    console = make_console()
    needed, option = _operators(ops, ids) if not cases_dir else (ops, "--op")
    specs = load_specs(specs_dir, needed, option=option)  # input errors before waiting for the backend
    selection = suite.Selection(frozenset(ids), patterns, frozenset(parse_dtypes(dtypes)), gate.shard)
    cases = suite.checked_cases(Path(cases_dir), [s for _, s in specs], every_operator=not ops) if cases_dir else None
    info = _available(engine.info(), skip_unavailable)
    level = parse_level(level_text, "--feature-level") or info.feature_level
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + f"-{info.name}-{level.short}-s{seed}" + gate.run_id_suffix
    folder = reserve(Path(output) if output else None, run_id)   # before any case: a bad -o costs nothing
    ctx.call_on_close(folder.abandon)
    pairs, skipped = suite.pairs(specs, level, seed=seed, large=large, cases=cases, selection=selection)
    if not pairs:
        why = f"; skipped {'; '.join(skipped[:3])}" if skipped else ""
        raise InputError(f"no case matches the selection (--op, --dtype, -k, --case, --shard){why}")
    outcome = _run_with_progress(len(pairs), console, enabled=not no_progress and console.is_terminal,
                                 execute=lambda progress: engine.run(pairs, progress=progress))
    invocation = _invocation(ctx, backend_name, options, level, seed=seed, cases_dir=cases_dir,
                             tolerances=gate.tolerances)
    results = _with_repro(suite.with_notes(outcome.results, Path(cases_dir) if cases_dir else None), invocation)
    report = gate.finish(RunResult(
        run_id=folder.run_id, backend=info.name, device=info.device, backend_version=info.version,
        feature_level=level.short, flush_subnormals=info.flush_subnormals, seed=seed,
        command="dmlconform " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        started=started.isoformat(timespec="seconds"),
        finished=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        cases=results, ambiguities=ambiguity_words((s for _, s in specs), results),
        interrupted=outcome.interrupted, seconds=round(time.perf_counter() - clock, 3),
        float16_accumulation=reported_float16(info.float16_accumulation), subset=info.subset))
    _finish(report, folder, console, view=view, skipped=skipped, show_skipped=show_skipped,
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


def _invocation(ctx: click.Context, backend: str, options: dict[str, str], level: m.FeatureLevel, *,
                seed: int, cases_dir: str | None, tolerances: str) -> Invocation:
    """The options of this run that its repro lines must repeat: those the
    user gave (a path as written), the level and the seed (not for --cases,
    whose cases do not depend on it)."""
    def given(name: str) -> Any:  # click's parameter values are untyped
        source = ctx.get_parameter_source(name)
        return ctx.params[name] if source is not None and source.name == "COMMANDLINE" else None

    return Invocation(
        backend=backend, backend_args=tuple(options.items()), level=level.short,
        seed=None if cases_dir else seed, specs=given("specs_dir"), cases=cases_dir,
        tolerances=tolerances or None, large=bool(ctx.params.get("large")),
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


def _engine(ctx: click.Context, name: str, options: dict[str, str], *, isolate: bool, jobs: int | None,
            timeout: float, gate: Gate) -> Workers | InProcess:
    """What runs the cases: worker processes, started now so that their
    start overlaps the loading of specs and cases (this process never builds
    the backend; an error building it is raised when the run first asks
    about it, after its own inputs are checked), or with --no-isolate the
    backend here."""
    if not isolate:
        return InProcess(name, options, overrides=gate.override_map)
    cores = default_jobs()
    if jobs is not None and jobs > cores:
        click.echo(f"note: -j {jobs} runs {cores} worker{'s' if cores > 1 else ''}, one per core of this machine: "
                   "more only compete for the cores (and each builds its own backend)", err=True)
    return ctx.with_resource(Workers(name, options, jobs=min(jobs or cores, cores), timeout=timeout,
                                     overrides=gate.override_map))


def _finite(value: float, option: str) -> float:
    """``value`` where it is a number (a FloatRange lets NaN through: every
    comparison with it is false)."""
    if value != value:  # NaN
        raise click.BadParameter(f"{value} is not a number of seconds: give one above 0 and at most "
                                 f"{MAX_TIMEOUT:g}", param_hint=f"'{option}'")
    return value


def _run_with_progress(total: int, console: Console, *, enabled: bool,
                       execute: Callable[[Progress | None], RunOutcome]) -> RunOutcome:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415 - the bar is drawn only on a terminal; CI logs and --no-progress skip its import

    if not enabled:
        return execute(None)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("running", total=total)
        return execute(lambda r: progress.update(task, advance=1, description=r.operator))
