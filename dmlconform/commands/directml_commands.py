"""`dmlconform directml setup-linux`: the real DirectML on the CPU of a Linux machine.

Issues #25 and #37.  ``setup-linux`` builds the stack of
`backends/directml/linux_stack.py` (vkd3d built from its release source with
the project's patches, lavapipe from the machine's suite, the D3D12 bridge
generated from vkd3d's header, the torch-directml wheel's libdirectml.so,
the fake libdxcore.so) under a folder, and prints what it made.  The
directml backend then runs over it (``--backend-arg stack=DIR``, or without
options when DIR is the default).  ``census`` counts the library's shaders
that the stack's vkd3d translates (`census`).  ``results`` renders the
docs/results page of such a run (`linux_results`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import click

from dmlconform import limits
from dmlconform.backends.directml import census, linux_results, vkd3d_build
from dmlconform.backends.directml.library import Unavailable
from dmlconform.backends.directml.linux_stack import MESAS, Stack, check, default_stack_dir, setup
from dmlconform.errors import EXIT_CODES_HELP, ExitCode, InputError
from dmlconform.report.results_page import Note, load_notes
from dmlconform.spec.load import parse_document
from dmlconform.userfiles import check_output, read_json, read_text, write_output

SETUP_EXIT_HELP = EXIT_CODES_HELP + """

\b
setup-linux: 0 the stack is built (or was already), 3 it cannot be built
here (not Debian, a package or the network missing, no cc, no vkd3d
source); the message says which, a missing package by its Debian name."""


@click.group()
def directml() -> None:
    """The directml backend's own set-up."""


@directml.command("setup-linux", epilog=SETUP_EXIT_HELP)
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where to build the stack [default: <cache>/linux-stack, where the backend looks].")
@click.option("--vkd3d-source", "source", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="vkd3d's release tarball (vkd3d-1.17.tar.xz, or Debian's vkd3d_1.17.orig.tar.xz) [default: "
                   "none; the build in the stack is kept where its patches are unchanged].")
@click.option("--vkd3d-patches", "patch_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=None, help="A folder of patches to apply instead of the project's (*.patch, in name order; "
                                 "to measure a subset) [default: the project's vkd3d-patches/].")
@click.option("--refetch", is_flag=True, help="Download and unpack the packages again even where they are there.")
@click.option("--mesa", type=click.Choice(MESAS), default="host", show_default=True,
              help="Whose lavapipe to fetch: this machine's suite's, or Debian sid's (with sid's glibc; it flushes "
                   "float32 subnormals to zero, which the backend declares). A stack keeps both once fetched; the "
                   "backend's mesa option picks one per run.")
def setup_linux(folder: Path | None, source: Path | None, patch_dir: Path | None, refetch: bool, mesa: str) -> None:
    """Build the Linux CPU stack the directml backend runs the real
    libdirectml.so over (Debian, as root: vkd3d is built from its release
    source with the project's patches, cached by their digests; apt with a
    private state folder fetches lavapipe from this machine's suite, or with
    --mesa sid Debian sid's; nothing is installed and the system's apt
    configuration is only read).  Prints what it made.  Cached: a second run
    only checks."""
    root = _stack_root(folder)
    started = time.monotonic()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--dir {root}: cannot create the folder ({exc.strerror or exc}); give a writable folder") \
            from None
    patch_files = vkd3d_build.patches(patch_dir) if patch_dir else None
    try:
        made = setup(root, refetch=refetch, source=source.absolute() if source else None, patch_files=patch_files,
                     mesa=mesa, echo=lambda line: click.echo(f"== {line}", err=True))
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
    args = ([] if default else [f"stack={root}"]) + ([] if mesa == "host" else [f"mesa={mesa}"])
    click.echo("run: dmlconform run --backend directml" + "".join(f" --backend-arg {a}" for a in args))


def _stack_root(folder: Path | None) -> Path:
    return (folder or default_stack_dir()).absolute()


@directml.command("census", epilog=SETUP_EXIT_HELP.split("\n\n")[0])
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The stack whose vkd3d and libdirectml.so to use [default: <cache>/linux-stack].")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Shaders translated at a time.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the counts as JSON here.")
def census_command(folder: Path | None, jobs: int, json_path: Path | None) -> None:
    """Translate every DXIL shader of the stack's libdirectml.so with the
    stack's vkd3d-compiler: how many translate, and why the others do not
    (vkd3d-shader's first error, numbers written N), most first, and per
    shader model.  The number that each vkd3d patch moves (issue #37)."""
    stack = Stack(_stack_root(folder))
    if json_path:
        check_output(json_path)
    try:
        check(stack)
        env = {**os.environ, "LD_LIBRARY_PATH": str(stack.vkd3d / "lib")}
        found = census.take(stack.lib / "libdirectml.so", stack.compiler, env, jobs=jobs)
    except Unavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(ExitCode.BACKEND_UNAVAILABLE)
    click.echo(f"{stack.lib / 'libdirectml.so'}: {found.shaders} DXIL shaders ({found.distinct} distinct); "
               f"vkd3d at {stack.vkd3d.resolve()}")
    click.echo(f"translated: {found.translated} of {found.shaders}")
    for model, shaders, translated in found.models:
        click.echo(f"  shader model {model}: {translated} of {shaders}")
    click.echo("not translated, by vkd3d-shader's first error:")
    for reason, count in found.reasons:
        click.echo(f"  {count:6d}  {reason}")
    if json_path:
        write_output(json_path, json.dumps(found.as_dict(), indent=1) + "\n")


@directml.command("results", epilog=EXIT_CODES_HELP)
@click.argument("report", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Markdown page to write.")
@click.option("--notes", "notes_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML notes analysing the FAILs (format of docs/results/notes.yaml) [default: none].")
@click.option("--preface", "preface_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Markdown put after the run's line (how the stack was built, the shader census) [default: none].")
def results(report: Path, output: Path, notes_path: Path | None, preface_path: Path | None) -> None:
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
                      *(["--notes", str(notes_path)] if notes_path else []),
                      *(["--preface", str(preface_path)] if preface_path else [])])
    preface = read_text(preface_path, limits.NOTES) if preface_path else ""
    page, unexplained = linux_results.markdown(data, notes, command=shown, preface=preface)
    write_output(output, page)
    for case_id in unexplained:
        click.echo(f"not analysed: {case_id}", err=True)
    click.echo(f"wrote {output}", err=True)


def _notes(path: Path) -> tuple[Note, ...]:
    """The notes file, read as `dmlconform results` reads its own (bounded, guarded YAML)."""
    text = read_text(path, limits.NOTES)
    return load_notes(parse_document(text, path=str(path)).data if text.strip() else [], path=str(path))
