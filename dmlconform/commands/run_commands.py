"""`run`: generate (or read) cases, run them on a backend, compare, report.

This module is the command: its options, and the start of its worker
processes, first thing, so that their start (a Python process each,
importing numpy, the families and the backend) overlaps this process's
own loading of the specs and cases (`running`, imported after).  So it
imports nothing heavy (tests/commands/test_startup.py checks it; a
one-case repro: bench/bench_startup.py).
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING

import click

from dmlconform.commands.gating_options import Gate, gating_options
from dmlconform.commands.options import backend_options, specs_option
from dmlconform.commands.view_options import view_options
from dmlconform.errors import EXIT_CODES_HELP
from dmlconform.limits import MAX_TIMEOUT
from dmlconform.parallel import DEFAULT_TIMEOUT, InProcess, Workers, default_jobs

if TYPE_CHECKING:
    from dmlconform.report.view import View


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
    from dmlconform.commands.running import RunOptions, execute  # noqa: PLC0415 - once the workers have started (module docstring)

    asked = RunOptions(specs_dir=specs_dir, backend_name=backend_name, backend_args=tuple(options.items()),
                       level_text=level_text, seed=seed, ops=ops, dtypes=dtypes, patterns=patterns, ids=ids,
                       cases_dir=cases_dir, large=large, output=output, view=view, no_progress=no_progress,
                       skip_unavailable=skip_unavailable, show_skipped=show_skipped, gate=gate)
    execute(ctx, engine, asked, started=started, clock=clock)


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
