"""`results`: the published results page from report.json files (issue 8)."""

from __future__ import annotations

from pathlib import Path

import click

from dmlconform import limits
from dmlconform.errors import EXIT_CODES_HELP, InputError
from dmlconform.report.results_page import Note, load_notes, read_input, render, summary_json, unmatched
from dmlconform.spec.load import parse_document
from dmlconform.userfiles import check_output, read_text, write_output


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("reports", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Markdown page to write.")
@click.option("--notes", "notes_path", type=click.Path(dir_okay=False),
              help="YAML notes keyed by case-id pattern (default: notes.yaml beside the page, if there).")
@click.option("--summaries", "summary_dir", type=click.Path(file_okay=False),
              help="Also write each input's trimmed summary (<label>.summary.json, small enough to commit) here.")
def results(reports: tuple[str, ...], output: str, notes_path: str | None, summary_dir: str | None) -> None:
    """Render the results page from REPORTS (report.json files or summaries).

    One row per operator x data type x backend, every FAIL with its minimal
    repro and the analysis from the notes file.  FAILs no note explains are
    listed on the page as "not analysed" and named on stderr."""

    check_output(Path(output))
    inputs = []
    for p in reports:
        path = Path(p)
        if not path.exists():
            raise InputError(f"{p}: no such report (give report.json files or *.summary.json)")
        inputs.append(read_input(read_text(path, limits.REPORT), path=p))
    labels = [s.label for s, _ in inputs]
    if len(set(labels)) != len(labels):
        raise InputError(f"two inputs have the same backend label ({', '.join(sorted(labels))}); give one per backend")
    notes_file = Path(notes_path) if notes_path else Path(output).parent / "notes.yaml"
    notes: tuple[Note, ...] = ()
    if notes_file.exists() or notes_file.is_symlink():
        notes = _read_notes(notes_file)
    elif notes_path:
        raise InputError(f"--notes {notes_path}: no such file")
    shown = ["dmlconform results", *sorted(reports), "-o", output]
    write_output(Path(output), render(inputs, notes, command=" ".join(shown)))
    if summary_dir:
        for summary, rows in inputs:
            write_output(Path(summary_dir) / f"{summary.label}.summary.json", summary_json(summary, rows))
    for line in unmatched(inputs, notes):
        click.echo(f"not analysed: {line}", err=True)
    click.echo(f"wrote {output} ({len(inputs)} backends)", err=True)


def _read_notes(path: Path) -> tuple[Note, ...]:
    """The notes file: a regular file within `limits.NOTES`, read with the
    spec loader's guarded YAML reader (no aliases, bounded nesting)."""

    text = read_text(path, limits.NOTES)
    data = parse_document(text, path=str(path)).data if text.strip() else None
    return load_notes(data, path=str(path))
