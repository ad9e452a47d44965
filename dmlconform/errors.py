"""Every exception dmlconform raises on purpose, and the process exit codes.

`cli.py` is the one place that catches a `DmlconformError`, renders it once as
``file:line:col: error: message`` and exits with its ``exit_code``.
"""

from __future__ import annotations

import enum
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType


class ExitCode(enum.IntEnum):
    """Process exit statuses; part of the interface (README, ``--help``)."""

    OK = 0
    #: lint findings, out-of-date specs (``extract --check``), failed cases, diff removals
    FINDINGS = 1
    #: bad command line, unreadable or invalid input file
    USAGE = 2
    #: the requested backend is not available on this machine
    BACKEND_UNAVAILABLE = 3
    #: a bug in dmlconform itself: an exception nothing expected (``cli.py``
    #: turns it into one line asking for a report made with ``--debug``)
    INTERNAL = 4
    #: interrupted by Ctrl-C (128 + SIGINT), or stopped by SIGTERM, which is handled as Ctrl-C
    INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class ExitCodeMeaning:
    """What an exit code means, in the two places that say it: ``brief`` in
    every command's ``--help`` epilog, ``full`` in the README's table
    (``python -m dmlconform.docs_tables README.md`` writes it)."""

    brief: str
    full: str


#: Every exit code's meaning, in code order: the one source of --help's epilog and the README's table.
EXIT_CODE_MEANINGS: Mapping[ExitCode, ExitCodeMeaning] = MappingProxyType({
    ExitCode.OK: ExitCodeMeaning(
        "success: no findings, specs up to date, no case failed (QUALITY_WARNING, XPASS, NOT_SUPPORTED and "
        "XFAIL allowed unless --strict, which fails QUALITY_WARNING and XPASS; NOT_SUPPORTED includes the "
        "refusals of a backend that implements a subset of DirectML's tables, such as onnxruntime and torch)",
        "success: no findings, specs up to date, no case failed (QUALITY_WARNING, NOT_SUPPORTED, XFAIL and "
        "XPASS do not fail a run; with `run --strict` QUALITY_WARNING and XPASS do). NOT_SUPPORTED includes "
        "the refusals of a backend that implements a subset of DirectML's tables (onnxruntime, torch): "
        "configurations the table supports that it does not run, counted as *refused*"),
    ExitCode.FINDINGS: ExitCodeMeaning(
        "a case FAILed (a wrong value; or a refusal of a configuration the table supports, from a backend "
        "that claims DirectML's tables), CRASHed, TIMED OUT or hit a harness ERROR (run, merge); lint "
        "findings not in the baseline; out-of-date specs (extract --check); diff removals",
        "a case FAILed (a wrong value; or a refusal of a configuration the table supports, from a backend that "
        "claims DirectML's tables: cpu, faulty, directml, an external program by default), CRASHed, TIMED OUT "
        "or hit a harness ERROR and no baseline entry covers it (`run`, and "
        "`merge` for the merged run); lint errors the lint baseline does not name (warnings and fixed baseline "
        "entries too with `--strict`); out-of-date specs "
        "(`extract --check`); removals in a `diff`"),
    ExitCode.USAGE: ExitCodeMeaning(
        "usage or input error: bad option, missing or invalid file (spec, baseline, lint baseline, tolerance file, "
        "report), "
        "shards that overlap or are missing",
        "usage or input error: bad option, missing path, unreadable or invalid file (spec, baseline, lint baseline, "
        "tolerance file, report.json, case manifest or `.npy`), a file over its size limit or nested too deep, a FIFO or "
        "device where a file is expected, nothing to read at all (`lint`, `extract`); a page that would make "
        "`extract` write a poorer spec; `merge` of shards that overlap, are missing or come from different runs"),
    ExitCode.BACKEND_UNAVAILABLE: ExitCodeMeaning(
        "backend unavailable (run --skip-unavailable exits 0 instead)",
        "the backend cannot be loaded, or reports itself unavailable (`run --skip-unavailable` makes that 0)"),
    ExitCode.INTERNAL: ExitCodeMeaning(
        "internal error: a bug in dmlconform (rerun with --debug and report the traceback)",
        "internal error: an exception dmlconform did not expect, a bug of ours and never your input's fault; "
        "printed as one line (`internal error (a bug in dmlconform, exit 4): ...`), with the traceback under "
        "`dmlconform --debug ...`; please report it with the command"),
    ExitCode.INTERRUPTED: ExitCodeMeaning(
        "interrupted (Ctrl-C or SIGTERM); run writes the partial report first",
        "interrupted (Ctrl-C, or SIGTERM as CI systems stop a job: handled alike); `run` writes the partial "
        "report first"),
})


def exit_codes_help() -> str:
    """The exit codes as every command's ``--help`` epilog shows them
    (``\\b``: click keeps the lines as they are)."""
    lines = ["\b", "Exit codes:"]
    for code, meaning in EXIT_CODE_MEANINGS.items():
        first, *rest = textwrap.wrap(meaning.brief, width=68)
        lines.append(f"  {code.value:<4} {first}")
        lines.extend(f"       {line}" for line in rest)
    return "\n".join(lines)


#: `exit_codes_help`, the epilog of every command.
EXIT_CODES_HELP = exit_codes_help()


class DmlconformError(Exception):
    """Base of all our errors; carries the exit code the CLI uses."""

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def location(self) -> str | None:
        """``file:line:col`` of the problem, or None when it has no place."""
        return None

    def render(self) -> str:
        where = self.location()
        return f"{where}: error: {self.message}" if where else f"error: {self.message}"


class LocatedError(DmlconformError):
    """An error at a place in a file (1-based line and column; 0 = unknown)."""

    def __init__(self, message: str, *, path: str | Path, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.path = str(path)
        self.line = line
        self.column = column

    def location(self) -> str:
        parts = [self.path]
        if self.line:
            parts.append(str(self.line))
            if self.column:
                parts.append(str(self.column))
        return ":".join(parts)


class SpecError(LocatedError):
    """Raised by `spec.load` when a spec file is not valid YAML or breaks the schema.

    ``problems`` holds every problem found (one rendered line each), so a user
    fixes a file in one pass instead of one error per run.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path,
        line: int = 0,
        column: int = 0,
        problems: tuple[LocatedError, ...] = (),
    ) -> None:
        super().__init__(message, path=path, line=line, column=column)
        self.problems = problems or (LocatedError(message, path=path, line=line, column=column),)

    def render(self) -> str:
        return "\n".join(LocatedError.render(p) for p in self.problems)


class CaseFolderError(LocatedError):
    """Raised by `run --cases` when cases of a case folder contradict their
    specs or each other (`case_folders`), before anything runs.

    ``problems`` holds the first problems found, one rendered line each
    (``manifest.json:LINE: error: case N (ID): problem: fix``); ``more``
    counts those left out, so a user fixes a folder in one pass and the
    output stays bounded whatever the folder holds.
    """

    def __init__(self, message: str, *, path: str | Path, problems: tuple[LocatedError, ...] = (),
                 more: int = 0) -> None:
        super().__init__(message, path=path)
        self.problems = problems or (LocatedError(message, path=path),)
        self.more = more

    def render(self) -> str:
        lines = [LocatedError.render(p) for p in self.problems]
        if self.more:
            lines.append(f"{self.path}: error: and {self.more} more problem{'s' if self.more > 1 else ''} "
                         "in this case folder (fix these first)")
        return "\n".join(lines)


class ExtractError(LocatedError):
    """Raised by `spec.extract` when a page cannot be turned into a spec at all
    (no operator name, not a DirectML operator page, unreadable file)."""


class InputError(DmlconformError):
    """A command-line argument names something that does not exist or cannot be used."""


class FormulaError(LocatedError):
    """A formula text does not parse; ``column`` points into the formula text."""


class BackendLoadError(DmlconformError):
    """Raised by `backends.registry.load_backend` when a backend cannot be had:
    no entry point of that name (the message lists the installed ones and
    the nearest), its import or factory failed (the message names
    ``dist[name]`` and the cause), or the object it made is not a `Backend`."""

    exit_code = ExitCode.BACKEND_UNAVAILABLE
