"""`extract` and `schema`: the spec pipeline's commands (`lint` is in
`lint_commands`: it needs numpy, through the formula boundaries, and these do not)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from dmlconform.commands.options import existing_paths
from dmlconform.errors import EXIT_CODES_HELP, DmlconformError, ExitCode, ExtractError
from dmlconform.spec.corpus import OPERATORS, Skipped, skipped_summary
from dmlconform.spec.extract import extract as run_extract
from dmlconform.spec.extract import losses
from dmlconform.spec.load import read_spec
from dmlconform.spec.load import schema as spec_schema
from dmlconform.spec.model import Spec
from dmlconform.spec.store import dumps_spec, spec_filename, write_spec


def _echo_warnings(warnings: list[str], quiet: bool, limit: int) -> None:
    if quiet:
        return
    for line in warnings[:limit] if limit else warnings:
        click.echo(line, err=True)
    if limit and len(warnings) > limit:
        click.echo(f"... and {len(warnings) - limit} more warnings (use --all-warnings)", err=True)


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("sources", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", "output", type=click.Path(file_okay=False), default="specs", show_default=True,
              help="Folder the specs are written to (one <OPERATOR>.yaml each).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if the specs in --output differ from what "
                                            "extract would write (for CI).")
@click.option("-q", "--quiet", is_flag=True, help="Do not print warnings.")
@click.option("--all-warnings", is_flag=True, help="Print every warning (default: the first 50).")
def extract(sources: tuple[str, ...], output: str, check: bool, quiet: bool, all_warnings: bool) -> None:
    """Turn DirectML operator doc pages into YAML specs.

    SOURCES are .md pages or folders searched recursively; the doc corpus's
    root (the folder holding operators/), or a folder above it, reads
    operators/ alone and skips the other pages (INDEX.md, reference/) with
    one line.  Source paths in the
    specs are relative to the corpus root whatever folder of it is named.  Pages of the same
    operator are merged: the newest revision wins and every fact on which the
    revisions disagree is recorded in the spec and printed as a warning.  A
    page that cannot be fully parsed gives a warning naming the file and line
    of the part skipped; the other pages go on.
    """

    result = run_extract(existing_paths(sources, "source"))
    _echo_warnings([w.render() for w in result.warnings], quiet, 0 if all_warnings else 50)
    _echo_skipped(result.skipped, quiet, all_warnings)
    out = Path(output)
    refused = _refusals(result.specs, out, spec_filename)
    if refused:
        for line in refused:
            click.echo(line, err=True)
        sys.exit(ExitCode.USAGE)
    if check:
        stale = _stale(result.specs, out, dumps_spec, spec_filename)
        for line in stale:
            click.echo(line, err=True)
        click.echo(f"{len(result.specs)} specs from {result.pages} pages: "
                   f"{'up to date' if not stale else str(len(stale)) + ' out of date'}", err=True)
        sys.exit(ExitCode.FINDINGS if stale else ExitCode.OK)
    for spec in result.specs:
        write_spec(spec, out)
    click.echo(f"wrote {len(result.specs)} specs from {result.pages} pages to {out} "
               f"({len(result.warnings)} warnings)", err=True)


def _echo_skipped(skipped: tuple[Skipped, ...], quiet: bool, every: bool) -> None:
    """The non-operator pages of a corpus root: one summary line, each page too with --all-warnings."""
    if quiet or not skipped:
        return
    if every:
        for page in skipped:
            click.echo(f"{page.path}: skipped: not an operator page (outside {OPERATORS}/)", err=True)
    click.echo(skipped_summary(skipped), err=True)


def _refusals(specs: tuple[Spec, ...], out: Path, filename: Callable[[Spec], str]) -> list[str]:
    """One error line per spec extract must not write: its page gave no
    struct fields (not an operator page, or a damaged one), or it would
    replace the spec in ``out`` with a poorer one (`extract.losses`).  Exit 2
    and nothing written: the pages are the input and one of them is bad, and
    writing the others would leave ``out`` a mix of two revisions of the docs."""

    lines = []
    for spec in specs:
        page = spec.sources[0].path if spec.sources else spec.operator
        path = out / filename(spec)
        if not spec.fields:
            lines.append(ExtractError(f"no struct fields found for {spec.struct}: not an operator page, or a "
                                      "damaged one; fix or leave out the page (nothing was written)",
                                      path=page).render())
            continue
        try:
            old = read_spec(path)[0] if path.is_file() else None  # as printed: the overlay's corrections aside
        except DmlconformError:
            old = None  # a broken spec is replaced, not compared
        lost = losses(spec, old) if old is not None else []
        if lost:
            lines.append(ExtractError(f"would replace {path} with a poorer spec, without {'; '.join(lost)}: the "
                                      f"page may be truncated or damaged; fix the page, or delete {path} if the "
                                      "docs really dropped them (nothing was written)", path=page).render())
    return lines


def _stale(specs: tuple[Spec, ...], out: Path, dumps: Callable[[Spec], str], filename: Callable[[Spec], str]) -> list[str]:
    """One line per spec file that is missing, different, or no longer produced."""
    lines = []
    expected = {filename(s): dumps(s) for s in specs}
    for name, text in sorted(expected.items()):
        path = out / name
        if not path.is_file():
            lines.append(f"{path}: missing")
        elif path.read_bytes() != text.encode("utf-8"):  # bytes: an old file need not be UTF-8
            lines.append(f"{path}: out of date")
    if out.is_dir():
        for path in sorted(out.glob("*.yaml")):
            if path.name not in expected:
                lines.append(f"{path}: not produced by these sources")
    return lines


@click.command(epilog=EXIT_CODES_HELP)
def schema() -> None:
    """Print the JSON Schema of spec files."""

    click.echo(json.dumps(spec_schema(), indent=2, sort_keys=False))
