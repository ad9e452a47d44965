"""The `dmlconform` command line: the one place that does terminal I/O, catches
our errors, renders them once and exits with their code."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from types import FrameType
from typing import Any, NoReturn

import click

from dmlconform import __version__
from dmlconform.errors import EXIT_CODES_HELP, DmlconformError, ExitCode

#: Every command: its module and function, imported only when the command
#: runs (or ``--help`` lists it), so that ``dmlconform --version`` and a
#: command's start pay for what that command needs alone.
COMMANDS = {
    "backends": "backend_commands:backends",
    "baseline": "gating_commands:baseline",
    "diff": "diff_commands:diff",
    "directml": "directml_commands:directml",
    "extract": "spec_commands:extract",
    "gen": "gen_commands:gen",
    "import": "import_commands:import_group",
    "lint": "lint_commands:lint",
    "matrix": "diff_commands:matrix",
    "merge": "gating_commands:merge",
    "results": "results_commands:results",
    "run": "run_commands:run",
    "schema": "spec_commands:schema",
    "validate": "validate_commands:validate",
}


class _Group(click.Group):
    """Renders DmlconformError once as `file:line:col: error: ...` and maps
    click's own usage errors to exit code 2; a traceback only with --debug.
    Its commands are those of `COMMANDS`, imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, _, name = COMMANDS[cmd_name].partition(":")
        command = getattr(importlib.import_module(f"dmlconform.commands.{module}"), name)
        assert isinstance(command, click.Command), f"{COMMANDS[cmd_name]} is not a click command"
        return command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("standalone_mode", True)
        if "args" in kwargs:  # click's own keyword (CliRunner passes it so)
            args = (kwargs.pop("args"), *args)
        try:
            with _sigterm_as_ctrl_c():
                return super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(ExitCode.USAGE)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(ExitCode.INTERRUPTED)
        except DmlconformError as exc:
            if _debug_requested(args):
                traceback.print_exc()
            click.echo(exc.render(), err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(ExitCode.INTERRUPTED)
        except Exception as exc:  # noqa: BLE001 - the one boundary where a bug of ours is caught
            if _debug_requested(args):
                traceback.print_exc()
            click.echo(internal_error_line(exc, debug=_debug_requested(args)), err=True)
            sys.exit(ExitCode.INTERNAL)


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM handled as Ctrl-C while a command runs: CI systems stop a job
    with SIGTERM, and `run` must then write its partial report as it does
    for Ctrl-C (issue #33), not die without a word.  Only the main thread
    may set a handler; the one before is put back afterwards."""
    if not hasattr(signal, "SIGTERM") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def internal_error_line(exc: BaseException, *, debug: bool) -> str:
    """One line for an exception nothing expected: it is our bug, not the
    user's input, so it says so and how to report it."""
    what = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    how = "the traceback is above" if debug else "rerun with `dmlconform --debug ...` for the traceback"
    return (f"internal error (a bug in dmlconform, exit {int(ExitCode.INTERNAL)}): {what}; {how} "
            "and report it with the command that caused it")


def _debug_requested(args: tuple[Any, ...]) -> bool:
    argv = args[0] if args and args[0] is not None else sys.argv[1:]
    return "--debug" in list(argv)


def run() -> NoReturn:
    """The console script ``dmlconform`` and ``python -m dmlconform``: `main`,
    then exit at once with its status.  Once a command has returned, what it
    owns is closed (a run's workers and report folder, by click's context);
    what is left of a normal exit is the interpreter tearing down every
    module it imported (numpy's, the families'), about 90 ms of a one-case
    repro's 0.7 s (issue #31).  So: the threads that keep a process alive
    are joined, the `atexit` handlers run (multiprocessing's, weakref
    finalizers'), the output is flushed, and the process ends without the
    teardown.  Tests call `main` (click's CliRunner), which returns or raises
    `SystemExit` as before."""
    try:
        main()
        status: object = 0
    except SystemExit as exc:
        status = exc.code
    try:
        for thread in threading.enumerate():
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join()
        atexit._run_exitfuncs()  # CPython's (and PyPy's) own exit runs them so; there is no public name
    except KeyboardInterrupt:  # a second Ctrl-C meanwhile: the exit it asks for, without a traceback
        status = ExitCode.INTERRUPTED
    if status is not None and not isinstance(status, int):
        click.echo(str(status), err=True)  # as `sys.exit("text")`: the text, exit 1
        status = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a pipe closed early (`| head`): nothing more to show
            stream.flush()
    os._exit(status or 0)


@click.group(cls=_Group, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dmlconform")
@click.option("--debug", is_flag=True, help="Show a Python traceback on errors.")
def main(debug: bool) -> None:
    """Conformance test harness and spec linter for DirectML operators.

    The DirectML operator docs become YAML specs (extract), specs are checked
    for mistakes (lint), and the JSON Schema of the spec format is printed by
    schema.
    """
