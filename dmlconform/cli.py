"""The `dmlconform` command line: the one place that does terminal I/O, catches
our errors, renders them once and exits with their code."""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dmlconform import __version__
from dmlconform.errors import DmlconformError, ExitCode, InputError

if TYPE_CHECKING:
    from rich.console import Console

EXIT_CODES_HELP = """\b
Exit codes:
  0    success: no findings, specs up to date, no case failed
       (QUALITY_WARNING, XPASS, NOT_SUPPORTED and XFAIL allowed unless
       --strict, which fails QUALITY_WARNING and XPASS)
  1    a case FAILed, CRASHed, TIMED OUT or hit a harness ERROR (run, merge);
       lint findings; out-of-date specs (extract --check); diff removals
  2    usage or input error: bad option, missing or invalid file (spec,
       baseline, tolerance file, report), shards that overlap or are missing
  3    backend unavailable (run --skip-unavailable exits 0 instead)
  4    internal error: a bug in dmlconform (rerun with --debug and report
       the traceback)
  130  interrupted (Ctrl-C); run writes the partial report first"""


class _Group(click.Group):
    """Renders DmlconformError once as `file:line:col: error: ...` and maps
    click's own usage errors to exit code 2; a traceback only with --debug."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D401
        kwargs.setdefault("standalone_mode", True)
        if "args" in kwargs:  # click's own keyword (CliRunner passes it so)
            args = (kwargs.pop("args"), *args)
        try:
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


@click.group(cls=_Group, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dmlconform")
@click.option("--debug", is_flag=True, help="Show a Python traceback on errors.")
def main(debug: bool) -> None:
    """Conformance test harness and spec linter for DirectML operators.

    The DirectML operator docs become YAML specs (extract), specs are checked
    for mistakes (lint), and the JSON Schema of the spec format is printed by
    schema.
    """


@main.command(epilog=EXIT_CODES_HELP)
def schema() -> None:
    """Print the JSON Schema of spec files."""
    from dmlconform.spec.load import schema as spec_schema

    click.echo(json.dumps(spec_schema(), indent=2, sort_keys=False))


#: Width of rich output that goes to a file or a pipe (a CI log) rather than a
#: terminal, unless COLUMNS says otherwise: wide enough for the summary table's
#: longest operator names on one line.
LOG_WIDTH = 120


def console() -> Console:
    """A rich console on stdout: the terminal's width, or LOG_WIDTH columns
    when the output is not a terminal and COLUMNS is unset."""
    from rich.console import Console

    out = Console()
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out = Console(width=LOG_WIDTH)
    return out


def existing_paths(paths: tuple[str, ...], what: str) -> list[Path]:
    """Paths from the command line; a missing one is an input error (exit 2)."""
    out = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            if path.is_symlink():
                raise InputError(f"{what} {p!r} is a dangling symbolic link: its target "
                                 f"{os.readlink(path)!r} does not exist")
            raise InputError(f"{what} {p!r} does not exist")
        out.append(path)
    return out


# Each module of dmlconform.commands adds its commands to `main` when imported.
from dmlconform.commands import spec_commands  # noqa: E402,F401
from dmlconform.commands import diff_commands  # noqa: E402,F401
from dmlconform.commands import gen_commands  # noqa: E402,F401
from dmlconform.commands import backend_commands  # noqa: E402,F401
from dmlconform.commands import run_commands  # noqa: E402,F401
from dmlconform.commands import results_commands  # noqa: E402,F401
from dmlconform.commands import gating_commands  # noqa: E402,F401
from dmlconform.commands import validate_commands  # noqa: E402,F401
from dmlconform.commands import import_commands  # noqa: E402,F401
