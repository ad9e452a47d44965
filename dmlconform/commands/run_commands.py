"""`run`: generate (or read) cases, run them on a backend, compare, report."""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import itertools
import shlex
import sys
import time
from pathlib import Path
from collections.abc import Mapping
from typing import TYPE_CHECKING, NoReturn

from dataclasses import dataclass

import click

from dmlconform.commands.options import EXIT_CODES_HELP, backend_options, load_specs, parse_level
from dmlconform.commands.options import console as make_console
from dmlconform.commands.gating_commands import Gate, gating_options
from dmlconform.errors import ExitCode, InputError
from dmlconform.invocation import Invocation
from dmlconform.oracles import family_of
from dmlconform.backends.base import Backend, BackendInfo
from dmlconform.backends.registry import load_backend
from dmlconform.parallel import DEFAULT_TIMEOUT, Progress, RunOutcome, Workers, default_jobs, run_in_process
from dmlconform.results import CaseResult, RunResult, ToleranceOverride
from dmlconform.spec import model as m

if TYPE_CHECKING:
    from rich.console import Console

    from dmlconform.cases.model import Case
    from dmlconform.report.folder import ReportFolder


@dataclass(frozen=True, slots=True)
class _Selection:
    """Which cases a run keeps: ``ids`` (--case), ``patterns`` (-k: a glob,
    or a substring), ``dtypes`` (--dtype names) and the gate's shard."""

    ids: frozenset[str]
    patterns: tuple[str, ...]
    dtypes: frozenset[str]
    gate: Gate

    def keeps(self, case_id: str, dtype: m.DataType) -> bool:
        if (self.ids and case_id not in self.ids) or (self.dtypes and dtype.name not in self.dtypes):
            return False
        return self.gate.keep(case_id) and all(
            fnmatch.fnmatchcase(case_id, p if any(c in p for c in "*?[") else f"*{p}*") for p in self.patterns)


def _pairs(specs: list[tuple[Path, m.Spec]], level: m.FeatureLevel, *, seed: int, large: bool,
           cases: list[Case] | None,
           selection: _Selection) -> tuple[list[tuple[m.Spec, Case]], list[str]]:
    """The (spec, case) pairs to run: the selected ``cases`` of a case
    folder (`_read_cases` checked them) or the selected cases of ``specs``'
    families (only those are generated), and the specs no family tests,
    each with why."""
    by_op = {s.operator: s for _, s in specs}
    if cases is not None:
        return [(by_op[c.operator], c) for c in cases
                if c.operator in by_op and selection.keeps(c.id, c.dtype)], []
    skipped: list[str] = []
    pairs: list[tuple[m.Spec, Case]] = []
    for path, spec in specs:
        family, reason = family_of(spec)
        if family is None:
            skipped.append(f"{path}: {reason}")
            continue
        pairs.extend((spec, c) for c in family.generate(spec, level, seed=seed, large=large, keep=selection.keeps))
    return pairs, skipped


def _operators(ops: tuple[str, ...], ids: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The operators whose specs a run needs, and the option that named them:
    ``--op``, else those of the ``--case`` ids (an id starts with its
    operator), else none (every spec)."""
    if ops or not ids:
        return ops, "--op"
    return tuple(dict.fromkeys(i.split("/", 1)[0] for i in ids)), "--case"


def _read_cases(folder: Path, specs: list[m.Spec], *, every_operator: bool) -> list[Case]:
    """The cases of ``folder``, checked whole against ``specs`` before
    anything runs (`cases.validate`): every problem is an input error, shown
    at its manifest line.  With --op (not ``every_operator``) the cases of
    other operators are left out unchecked."""
    from dmlconform.cases.store import MANIFEST, case_lines, read_cases
    from dmlconform.cases.validate import SHOWN, folder_error, folder_problems

    cases = read_cases(folder)
    by_op = {s.operator: s for s in specs}
    problems = folder_problems(cases, by_op, operators=None if every_operator else frozenset(by_op))
    shown = list(itertools.islice(problems, SHOWN))
    if shown:
        raise folder_error(shown, more=sum(1 for _ in problems), manifest=folder / MANIFEST, lines=case_lines(folder))
    return cases


def _dtype_names(dtypes: tuple[str, ...]) -> tuple[str, ...]:
    """``--dtype`` values as data type names; an unknown one is an input
    error listing the known ones and the nearest."""
    import difflib

    names = []
    for text in dtypes:
        try:
            names.append(m.DataType.parse(text).name)
        except ValueError:
            known = [t.name for t in m.DATA_TYPE_ORDER]
            near = difflib.get_close_matches(text.strip().upper(), known, n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise InputError(f"--dtype {text}: no such data type (known: {', '.join(known)}){hint}") from None
    return tuple(names)


@click.command(epilog=EXIT_CODES_HELP)
@click.option("--specs", "specs_dir", default="specs", show_default=True, type=click.Path(), help="Spec folder.")
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
@click.option("--worst", default=10, show_default=True, type=click.IntRange(min=0),
              help="Worst elements shown per failing case.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--skip-unavailable", is_flag=True, help="Exit 0 instead of 3 when the backend is unavailable.")
@click.option("--show-skipped", is_flag=True, help="List each spec left out of the suite, with the reason.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes that run the backend (default: one fewer than the cores, at least one).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TIMEOUT, show_default=True,
              metavar="SECONDS", help="A case running longer is TIMEOUT and its worker is replaced (a case over "
                                      "2^22 elements gets proportionally longer).")
@click.option("--no-isolate", is_flag=True, help="Run the backend in this process, one case after another, for "
                                                 "debugging: a crash ends the run, nothing times out, -j is ignored.")
@gating_options
def run(specs_dir: str, backend_name: str, backend_args: tuple[str, ...], level_text: str | None, seed: int,
        ops: tuple[str, ...], dtypes: tuple[str, ...], patterns: tuple[str, ...], ids: tuple[str, ...],
        cases_dir: str | None, large: bool, output: str | None, worst: int, no_progress: bool,
        skip_unavailable: bool, show_skipped: bool, jobs: int | None, timeout: float, no_isolate: bool,
        gate: Gate) -> None:
    """Run the conformance suite on a backend and report.

    Cases come from the specs (every spec whose formula the oracle can
    evaluate) at the chosen feature level, deterministic for --seed.  Writes
    report.json, junit.xml and report.html, prints a summary with the worst
    elements of each failing case and a command that reproduces it.  The
    backend runs in worker processes: a case that crashes one is CRASH, one
    over --timeout is TIMEOUT, and the run goes on; Ctrl-C writes the
    reports of the cases that finished and exits 130.  Exits 0
    when nothing failed (QUALITY_WARNING and XPASS too with --strict); with
    --baseline, known failures (XFAIL) do not fail the run, new ones do.
    """

    from dmlconform.report.folder import reserve

    ctx = click.get_current_context()
    console = make_console()
    started, clock = dt.datetime.now(dt.timezone.utc), time.perf_counter()
    options = backend_options(backend_args)
    engine = _engine(ctx, backend_name, options, isolate=not no_isolate, jobs=jobs, timeout=timeout, gate=gate)
    needed, option = _operators(ops, ids) if not cases_dir else (ops, "--op")
    specs = load_specs(specs_dir, needed, option=option)  # input errors before waiting for the backend
    dtype_names = _dtype_names(dtypes)
    cases = _read_cases(Path(cases_dir), [s for _, s in specs], every_operator=not ops) if cases_dir else None
    info = engine.info()
    if not info.available:
        click.echo(f"backend {info.name} is unavailable: {info.reason}", err=True)
        sys.exit(ExitCode.OK if skip_unavailable else ExitCode.BACKEND_UNAVAILABLE)
    level = parse_level(level_text, "--feature-level") or info.feature_level
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + f"-{info.name}-{level.short}-s{seed}" + gate.run_id_suffix
    folder = reserve(Path(output) if output else None, run_id)   # before any case: a bad -o costs nothing
    ctx.call_on_close(folder.abandon)
    invocation = _invocation(ctx, backend_name, options, level, seed=seed, cases_dir=cases_dir,
                             tolerances=gate.tolerances)
    selection = _Selection(frozenset(ids), patterns, frozenset(dtype_names), gate)
    pairs, skipped = _pairs(specs, level, seed=seed, large=large, cases=cases, selection=selection)
    if not pairs:
        why = f"; skipped {'; '.join(skipped[:3])}" if skipped else ""
        raise InputError(f"no case matches the selection (--op, --dtype, -k, --case, --shard){why}")
    outcome = _run_with_progress(len(pairs), console, enabled=not no_progress and console.is_terminal,
                                 execute=lambda progress: engine.run(pairs, progress=progress))
    finished = dt.datetime.now(dt.timezone.utc)
    report = gate.finish(RunResult(
        run_id=folder.run_id, backend=info.name, device=info.device, backend_version=info.version,
        feature_level=level.short, flush_subnormals=info.flush_subnormals, seed=seed,
        command="dmlconform " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        started=started.isoformat(timespec="seconds"), finished=finished.isoformat(timespec="seconds"),
        cases=_with_repro(_with_notes(outcome.results, cases_dir), invocation), interrupted=outcome.interrupted,
        seconds=round(time.perf_counter() - clock, 3),
    ))
    _finish(report, folder, console, worst=worst, skipped=skipped, show_skipped=show_skipped,
            ran=len(outcome.results), total=len(pairs))


def _invocation(ctx: click.Context, backend: str, options: dict[str, str], level: m.FeatureLevel, *,
                seed: int, cases_dir: str | None, tolerances: str) -> Invocation:
    """The options of this run that its repro lines must repeat: those the
    user gave (a path as written), the level and the seed (not for --cases,
    whose cases do not depend on it)."""
    def given(name: str) -> object:
        source = ctx.get_parameter_source(name)
        return ctx.params[name] if source is not None and source.name == "COMMANDLINE" else None

    return Invocation(
        backend=backend, backend_args=tuple(options.items()), level=level.short,
        seed=None if cases_dir else seed, specs=given("specs_dir"), cases=cases_dir,  # type: ignore[arg-type]
        tolerances=tolerances or None, large=bool(ctx.params.get("large")),
        timeout=given("timeout"))  # type: ignore[arg-type]


def _with_repro(results: tuple[CaseResult, ...], invocation: Invocation) -> tuple[CaseResult, ...]:
    """Each result with the line that runs its case alone again."""
    return tuple(dataclasses.replace(r, repro=invocation.repro(r.case_id)) for r in results)


def _finish(report: RunResult, folder: ReportFolder, console: Console, *, worst: int, skipped: list[str],
            show_skipped: bool, ran: int, total: int) -> None:
    """Print the summary, then write the reports (if that fails, the summary
    is already out and the reports go to a temp folder); exit with the
    run's code."""
    from dmlconform.report import commit_reports
    from dmlconform.report.terminal import render

    render(report, console, worst=worst)
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
    import tempfile

    from dmlconform.report import write_reports

    why = exc.strerror or str(exc)
    try:
        written = write_reports(report, Path(tempfile.mkdtemp(prefix=f"dmlconform-{report.run_id}-")))
    except OSError as again:
        raise InputError(f"cannot write the reports to {target}: {why}; nor to a temp folder: "
                         f"{again.strerror or again}; the summary above is all this run kept") from None
    raise InputError(f"cannot write the reports to {target}: {why}; they were written to "
                     f"{written['json'].parent} instead") from None


def _with_notes(results, cases_dir: str | None):  # type: ignore[no-untyped-def]
    """External vectors (`import onnx`) carry their origin and findings in the
    manifest: each such case's message shows them (docs/import-onnx.md)."""
    import dataclasses

    from dmlconform.cases.store import read_notes

    notes = read_notes(cases_dir) if cases_dir else {}
    if not notes:
        return results
    return tuple(dataclasses.replace(r, message="; ".join((r.message, *notes[r.case_id]) if r.message
                                                          else notes[r.case_id]))
                 if r.case_id in notes else r for r in results)


class _InProcess:
    """``--no-isolate``: the backend built in this process (when it is first
    asked about, after the run's inputs are checked), the runner here."""

    def __init__(self, name: str, options: dict[str, str], overrides: Mapping[tuple[str, str], ToleranceOverride]):
        self.name, self.options, self.overrides = name, options, overrides
        self.backend: Backend | None = None

    def info(self) -> BackendInfo:
        if self.backend is None:
            self.backend = load_backend(self.name, self.options)
        return self.backend.info()

    def run(self, pairs: list[tuple[m.Spec, Case]], *, progress: Progress | None) -> RunOutcome:
        assert self.backend is not None, "info() builds the backend first"
        return run_in_process(pairs, self.backend, overrides=self.overrides, progress=progress)


def _engine(ctx: click.Context, name: str, options: dict[str, str], *, isolate: bool, jobs: int | None,
            timeout: float, gate: Gate) -> Workers | _InProcess:
    """What runs the cases: worker processes, started now so that their
    start overlaps the loading of specs and cases (this process never builds
    the backend; an error building it is raised when the run first asks
    about it, after its own inputs are checked), or with --no-isolate the
    backend here."""
    if not isolate:
        return _InProcess(name, options, gate.override_map)
    return ctx.with_resource(Workers(name, options, jobs=jobs or default_jobs(), timeout=timeout,
                                     overrides=gate.override_map))


def _run_with_progress(total: int, console, *, enabled: bool, execute):  # type: ignore[no-untyped-def]
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not enabled:
        return execute(None)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("running", total=total)
        return execute(lambda r: progress.update(task, advance=1, description=r.operator))
