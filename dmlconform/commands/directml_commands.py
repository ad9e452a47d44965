"""`dmlconform directml setup-linux`: the real DirectML on the CPU of a Linux machine.

Issue #25.  ``setup-linux`` builds the stack of `backends/directml/linux_stack.py` (vkd3d 2
and glibc from Debian sid, lavapipe from the machine's suite, the D3D12
bridge generated from vkd3d's header, the torch-directml wheel's
libdirectml.so, the fake libdxcore.so) under a folder, and prints what it
made.  The directml backend then runs over it (``--backend-arg stack=DIR``,
or without options when DIR is the default).  ``results`` renders the
docs/results page of such a run (`linux_results`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from dmlconform import limits
from dmlconform.backends.directml import linux_results
from dmlconform.backends.directml.library import Unavailable
from dmlconform.backends.directml.linux_stack import default_stack_dir, setup
from dmlconform.errors import EXIT_CODES_HELP, ExitCode, InputError
from dmlconform.report.results_page import Note, load_notes
from dmlconform.spec.load import parse_document
from dmlconform.userfiles import check_output, read_json, read_text, write_output

SETUP_EXIT_HELP = EXIT_CODES_HELP + """

\b
setup-linux: 0 the stack is built (or was already), 3 it cannot be built
here (not Debian, a package or the network missing, no cc); the message
says which."""


@click.group()
def directml() -> None:
    """The directml backend's own set-up."""


@directml.command("setup-linux", epilog=SETUP_EXIT_HELP)
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where to build the stack [default: <cache>/linux-stack, where the backend looks].")
@click.option("--refetch", is_flag=True, help="Download and unpack the packages again even where they are there.")
def setup_linux(folder: Path | None, refetch: bool) -> None:
    """Build the Linux CPU stack the directml backend runs the real
    libdirectml.so over (Debian, as root: apt with a private state folder
    fetches vkd3d 2 and glibc from sid and lavapipe from this machine's
    suite; nothing is installed and the system's apt configuration is only
    read).  Prints what it made.  Cached: a second run only checks."""
    root = (folder or default_stack_dir()).absolute()
    started = time.monotonic()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--dir {root}: cannot create the folder ({exc.strerror or exc}); give a writable folder") \
            from None
    try:
        made = setup(root, refetch=refetch, echo=lambda line: click.echo(f"== {line}", err=True))
    except OSError as exc:
        click.echo(f"error: the Linux CPU stack cannot be written at {root}: {exc}", err=True)
        sys.exit(ExitCode.BACKEND_UNAVAILABLE)
    except Unavailable as exc:
        click.echo(f"error: the Linux CPU stack cannot be built at {root}: {exc}", err=True)
        sys.exit(ExitCode.BACKEND_UNAVAILABLE)
    click.echo(f"Linux CPU stack for the directml backend at {root} ({time.monotonic() - started:.1f} s):")
    for m in made:
        click.echo(f"  {m.what}: {m.path}" + (f" ({m.note})" if m.note else ""))
    default = root == default_stack_dir().absolute()
    click.echo("run: dmlconform run --backend directml" + ("" if default else f" --backend-arg stack={root}"))


@directml.command("results", epilog=EXIT_CODES_HELP)
@click.argument("report", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Markdown page to write.")
@click.option("--notes", "notes_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML notes analysing the FAILs (format of docs/results/notes.yaml) [default: none].")
def results(report: Path, output: Path, notes_path: Path | None) -> None:
    """Render the results page of a `dmlconform run --backend directml`
    over the Linux CPU stack from its REPORT (report.json): per operator and
    data type, ran or why not; every FAIL with its analysis.  FAILs no note
    explains are marked "not analysed" and named on stderr."""
    check_output(output)
    data = read_json(report, limits.REPORT)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list) or not isinstance(data.get("run"), dict):
        raise InputError(f"{report}: not a report.json of dmlconform run (no cases and run)")
    if data["run"].get("backend") != "directml":
        raise InputError(f"{report}: a run of backend {data['run'].get('backend')!r}, not directml")
    notes = _notes(notes_path) if notes_path else ()
    shown = " ".join(["dmlconform directml results", str(report), "-o", str(output),
                      *(["--notes", str(notes_path)] if notes_path else [])])
    page, unexplained = linux_results.markdown(data, notes, command=shown)
    write_output(output, page)
    for case_id in unexplained:
        click.echo(f"not analysed: {case_id}", err=True)
    click.echo(f"wrote {output}", err=True)


def _notes(path: Path) -> tuple[Note, ...]:
    """The notes file, read as `dmlconform results` reads its own (bounded, guarded YAML)."""
    text = read_text(path, limits.NOTES)
    return load_notes(parse_document(text, path=str(path)).data if text.strip() else [], path=str(path))
