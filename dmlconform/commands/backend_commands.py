"""`dmlconform backends`: every installed backend, whether it loads and runs here.

DESIGN.md, "Backends".  Each entry point is loaded with no options; one that
fails to load, needs options to be built (the external backend's ``cmd=``,
the faulty backend's ``faults=``: `backends.base.OptionsRequired`) or loads
and reports itself unavailable, is a row with the reason, never an error:
the command lists, it does not judge (exit 0).  The table shows a line per
backend; ``dmlconform backends NAME`` shows one backend in full (a reason
word-wrapped whole: the faulty backend's list of faults).
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass

import click
from rich import box
from rich.table import Table
from rich.text import Text

from dmlconform.backends.base import OptionsRequired
from dmlconform.backends.registry import BackendEntry, available_backends, find_backend, load_entry
from dmlconform.commands.options import console
from dmlconform.errors import EXIT_CODES_HELP, BackendLoadError

FORMATS = ("table", "json")

#: What the ``tables`` column says of a backend (`BackendInfo.subset`).
TABLES = {False: "all", True: "subset"}


@dataclass(frozen=True, slots=True)
class BackendRow:
    """One backend of the listing.  ``reason``: why it is not available, in
    full (a load error begins ``dist[name]:``, as `run` says it);
    ``summary``: the same in one line for the table (what options it
    needs, or the reason without that prefix, which the row already says);
    ``tables``: ``all`` where it claims DirectML's tables, ``subset``
    where it implements part of them, "" where it could not be asked."""

    name: str
    distribution: str
    version: str
    device: str
    feature_level: str
    available: bool
    reason: str
    tables: str = ""
    summary: str = ""
    needs_options: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "distribution": self.distribution, "version": self.version,
                "device": self.device, "feature_level": self.feature_level, "available": self.available,
                "reason": self.reason, "tables": self.tables or None}

    @property
    def status(self) -> str:
        """``yes``, ``needs options`` or ``no``."""
        return "yes" if self.available else "needs options" if self.needs_options else "no"


def backend_rows(path: list[str] | None = None) -> tuple[BackendRow, ...]:
    """A row per installed backend, sorted by name then distribution."""
    return tuple(backend_row(entry) for entry in available_backends(path=path))


def backend_row(entry: BackendEntry) -> BackendRow:
    """``entry`` loaded with no options, as a row."""
    dist = f"{entry.dist} {entry.dist_version}"
    try:
        info = load_entry(entry).info
    except BackendLoadError as exc:
        cause = exc.__cause__
        summary = cause.summary if isinstance(cause, OptionsRequired) else _unlabelled(exc.message, entry.name)
        return BackendRow(entry.name, dist, "", "", "", False, exc.message, summary=summary,
                          needs_options=isinstance(cause, OptionsRequired))
    reason = info.reason or ""
    return BackendRow(entry.name, dist, info.version, info.device, info.feature_level.short, info.available, reason,
                      tables=TABLES[info.subset], summary=reason)


def _unlabelled(reason: str, name: str) -> str:
    """``reason`` without the ``dist[name]: `` that a load error begins with
    (`registry.BackendEntry.label`): beside the name it reads like a pip
    extra that does not exist."""
    head, sep, rest = reason.partition(": ")
    return rest if sep and head.endswith(f"[{name}]") else reason


def backends_table(rows: tuple[BackendRow, ...]) -> Table:
    """A rich Table of ``rows``: a line each (more where the last column
    wraps, at word boundaries), the device of an available backend, what an
    unavailable one lacks or needs.  The package column only where the
    backends come from more than one (a third party's)."""
    table = Table(title="dmlconform backends", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False)
    packages = len({r.distribution for r in rows}) > 1
    for header in ("name", *(("package",) if packages else ()), "level", "tables", "available"):
        table.add_column(header, no_wrap=header != "package")
    table.add_column("device, or why not", ratio=1)
    for r in rows:
        # Text, not markup: a reason such as "pip install 'dmlconform[torch]'" (or a
        # third-party backend's own words) is shown as written.
        detail = r.device if r.available else r.summary or r.reason
        cells = (r.name, *((r.distribution,) if packages else ()), r.feature_level, r.tables, r.status, detail)
        table.add_row(*(Text(cell) for cell in cells))
    return table


#: Under the table: what its columns mean and where more is.
LEGEND = ("tables: all = claims DirectML's tensor-support tables (refusing a configuration they support is a "
          "FAIL); subset = implements part of them (such a refusal is NOT_SUPPORTED, counted as refused). "
          "'dmlconform backends NAME' shows one backend in full.")


def backend_details(row: BackendRow, *, width: int) -> str:
    """One backend in full, each text wrapped at word boundaries to ``width`` columns."""
    fields = [("package", row.distribution), ("version", row.version), ("device", row.device),
              ("feature level", row.feature_level), ("tables", _tables_text(row.tables)), ("available", row.status),
              ("reason", _unlabelled(row.reason, row.name))]
    lines = [row.name]
    for name, value in fields:
        if value:
            lines.extend(textwrap.wrap(value, width=max(width, 40), initial_indent=f"  {name + ':':<15}",
                                       subsequent_indent=" " * 17, break_long_words=False, break_on_hyphens=False))
    return "\n".join(lines)


def _tables_text(tables: str) -> str:
    if tables == "all":
        return "all: claims DirectML's tensor-support tables"
    if tables == "subset":
        return "subset: implements part of DirectML's tables (its refusals are NOT_SUPPORTED, counted as refused)"
    return ""


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="A table for people, or JSON (a list of objects) for programs.")
def backends(name: str | None, fmt: str) -> None:
    """List the installed backends (entry point group dmlconform.backends):
    distribution, claimed feature level, whether each claims DirectML's
    tables or a subset, and whether each is available here, with the reason
    where not.  With NAME, that backend in full (an unknown NAME: exit 3)."""
    if name is not None:
        rows: tuple[BackendRow, ...] = (backend_row(find_backend(name, available_backends())),)
    else:
        rows = backend_rows()
    if fmt == "json":
        click.echo(json.dumps([r.as_dict() for r in rows], indent=2, sort_keys=True))
        return
    out = console()
    if name is not None:
        click.echo(backend_details(rows[0], width=out.width))
        return
    out.print(backends_table(rows))
    out.print(Text(LEGEND, style="dim"))
