"""`extract` and `lint`: the spec pipeline's commands."""

from __future__ import annotations

import click

from dmlconform.cli import EXIT_CODES_HELP, main


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("sources", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", "output", type=click.Path(file_okay=False), default="specs", show_default=True,
              help="Folder the specs are written to.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if the specs in --output are out of date.")
def extract(sources: tuple[str, ...], output: str, check: bool) -> None:
    """Turn DirectML operator doc pages (files or folders) into YAML specs."""
    raise click.UsageError("not implemented yet")
