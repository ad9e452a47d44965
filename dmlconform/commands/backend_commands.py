"""`dmlconform backends`: every installed backend, whether it loads and runs here.

DESIGN.md, "Backends".  Each entry point is loaded with no options; one that
fails to load, or loads and reports itself unavailable, is a row with the
reason, never an error: the command lists, it does not judge (exit 0).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import click
from rich.table import Table
from rich.text import Text

from dmlconform.backends.registry import available_backends, load_entry
from dmlconform.commands.options import console
from dmlconform.errors import EXIT_CODES_HELP, BackendLoadError

FORMATS = ("table", "json")


@dataclass(frozen=True, slots=True)
class BackendRow:
    """One line of the listing."""

    name: str
    distribution: str
    version: str
    device: str
    feature_level: str
    available: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "distribution": self.distribution, "version": self.version,
                "device": self.device, "feature_level": self.feature_level, "available": self.available,
                "reason": self.reason}


def backend_rows(path: list[str] | None = None) -> tuple[BackendRow, ...]:
    """A row per installed backend, sorted by name then distribution."""

    rows = []
    for entry in available_backends(path=path):
        dist = f"{entry.dist} {entry.dist_version}"
        try:
            info = load_entry(entry).info
        except BackendLoadError as exc:
            rows.append(BackendRow(entry.name, dist, "", "", "", False, exc.message))
            continue
        rows.append(BackendRow(entry.name, dist, info.version, info.device, info.feature_level.short,
                               info.available, info.reason or ""))
    return tuple(rows)


def backends_table(rows: tuple[BackendRow, ...]) -> object:
    """A rich Table of ``rows``."""

    table = Table(title="dmlconform backends")
    for header in ("name", "distribution", "version", "device", "feature level", "available"):
        table.add_column(header, overflow="fold")
    for r in rows:
        status = "yes" if r.available else f"no: {r.reason}" if r.reason else "no"
        # Text, not markup: a reason such as "pip install -e '.[torch]'" (or a
        # third-party backend's own words) is shown as written.
        table.add_row(*(Text(cell) for cell in (r.name, r.distribution, r.version, r.device, r.feature_level, status)))
    return table


@click.command(epilog=EXIT_CODES_HELP)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="A table for people, or JSON (a list of objects) for programs.")
def backends(fmt: str) -> None:
    """List the installed backends (entry point group dmlconform.backends):
    distribution, version, device, claimed feature level, and whether each
    is available here, with the reason where not."""
    rows = backend_rows()
    if fmt == "json":
        click.echo(json.dumps([r.as_dict() for r in rows], indent=2, sort_keys=True))
        return

    console().print(backends_table(rows))
