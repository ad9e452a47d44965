"""What several commands share: the console and command-line values
(paths, feature levels, data types, the spec folder, ``--op`` selections).
Each value parser turns a bad value into an `InputError` naming the option,
so every command words it the same way.  (The exit codes' help text is
`errors.EXIT_CODES_HELP`, beside the codes.)"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from dmlconform.errors import InputError
from dmlconform.packaged import SHIPPED_SPECS, shipped_specs_arg
from dmlconform.spec.files import spec_files

if TYPE_CHECKING:
    from rich.console import Console

    from dmlconform.spec.model import FeatureLevel, Spec


#: Width of rich output that goes to a file or a pipe (a CI log) rather than a
#: terminal, unless COLUMNS says otherwise: wide enough for the summary table's
#: longest operator names on one line.
LOG_WIDTH = 120


def console() -> Console:
    """A rich console on stdout: the terminal's width, or LOG_WIDTH columns
    when the output is not a terminal and COLUMNS is unset."""

    from rich.console import Console  # noqa: PLC0415 - off the run's start: its workers start first (issue #31)

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

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def specs_folder(given: str | None) -> str:
    """The spec folder a command reads: ``--specs`` (or a PATHS argument)
    when given, else the specs shipped with dmlconform (`packaged`), so that
    every command works in any folder."""
    return given if given is not None else shipped_specs_arg()


def specs_option(what: str = "Spec folder", *, metavar: str = "DIR") -> Callable[[F], F]:
    """The ``--specs`` option of every command that reads specs: its value,
    or `specs_folder`'s default when it is not given, arrives as ``specs_dir``;
    the help names the default honestly."""
    def default(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
        return specs_folder(value)

    return click.option("--specs", "specs_dir", metavar=metavar, callback=default,
                        help=f"{what} (default: {SHIPPED_SPECS}).")


def parse_each(values: tuple[str, ...], parse: Callable[[str], T], option: str) -> list[T]:
    """``parse`` applied to each value; a ValueError becomes ``option: reason``."""
    out = []
    for value in values:
        try:
            out.append(parse(value))
        except ValueError as exc:
            raise InputError(f"{option}: {exc}") from None
    return out


def backend_options(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--backend-arg KEY=VALUE`` pairs as a dict (a later key wins)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--backend-arg {pair!r}: write KEY=VALUE, e.g. device=cuda")
        out[key.strip()] = value
    return out


def parse_level(text: str | None, option: str) -> FeatureLevel | None:
    """The level ``text`` names, or None when the option was not given."""
    from dmlconform.spec.model import FeatureLevel  # noqa: PLC0415 - the records (~15 ms): `run` starts its workers first

    return None if text is None else parse_each((text,), FeatureLevel.parse, option)[0]


def operator_key(name: str) -> str:
    """``activation_shrink`` and ``DML_ACTIVATION_SHRINK_OPERATOR_DESC`` both
    name ``ACTIVATION_SHRINK``."""
    return name.strip().upper().removeprefix("DML_").removesuffix("_OPERATOR_DESC")


def load_specs(folder: str, ops: tuple[str, ...], *, option: str = "--op") -> list[tuple[Path, Spec]]:
    """(path, spec) of every spec under ``folder``, only those of ``ops`` when
    given; an unknown operator (named by ``option``) or an empty folder is an
    input error.  Specs are named after their operator (lint's DML005), so
    the specs of ``ops`` are read alone when their files are there."""
    from dmlconform.catalog import load_spec  # noqa: PLC0415 - the families (numpy): `run` reads its options first

    root = existing_paths((folder,), "spec folder")[0]
    named = [root / f"{operator_key(o)}.yaml" for o in dict.fromkeys(ops)]
    if ops and root.is_dir() and all(p.is_file() for p in named):
        spec_files([root])  # listed, not read: an overlay without its spec is an error with --op too
        found = [(p, load_spec(p)) for p in named]
        if all(s.operator == p.stem for p, s in found):
            return found
    specs = [(p, load_spec(p)) for p in spec_files([root])]
    if not specs:
        raise InputError(f"no spec files (*.yaml) under {folder}")
    if ops:
        wanted = {operator_key(o) for o in ops}
        unknown = wanted - {s.operator for _, s in specs}
        if unknown:
            raise InputError(f"{option} {', '.join(sorted(unknown))}: no such operator in {folder}")
        specs = [(p, s) for p, s in specs if s.operator in wanted]
    return specs


def parse_dtypes(texts: tuple[str, ...], option: str = "--dtype") -> tuple[str, ...]:
    """Data type names (any case, with or without the DML_TENSOR_DATA_TYPE_
    prefix) as their canonical names; an unknown one is an input error
    listing the known ones and the nearest."""
    from dmlconform.spec.model import DATA_TYPE_ORDER, DataType  # noqa: PLC0415 - as `parse_level`

    names = []
    for text in texts:
        try:
            names.append(DataType.parse(text).name)
        except ValueError:
            known = [t.name for t in DATA_TYPE_ORDER]
            near = difflib.get_close_matches(text.strip().upper(), known, n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise InputError(f"{option} {text}: no such data type (known: {', '.join(known)}){hint}") from None
    return tuple(names)

