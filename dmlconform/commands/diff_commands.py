"""`diff` and `matrix`: what a feature level or a revision of the specs adds or removes.

DESIGN.md "Who uses it" (spec writers diff support tables between feature
levels) and the issue 6 contract: exit 1 when a diff shows removals, so CI can
guard doc changes; exit 2 for bad input.  A spec tree is a folder or
``git:REV[:PATH]``, read with ``git ls-tree`` and ``git cat-file --batch``
(one process for all files, no shell).
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from dmlconform import diff as d
from dmlconform import diff_render as r
from dmlconform import limits
from dmlconform.atomic import write_atomic
from dmlconform.catalog import load_spec
from dmlconform.commands.options import console, existing_paths, operator_key, parse_level, specs_folder, specs_option
from dmlconform.errors import EXIT_CODES_HELP, ExitCode, InputError, SpecError
from dmlconform.packaged import SHIPPED_SPECS
from dmlconform.spec.files import spec_files
from dmlconform.spec.load import loads_spec
from dmlconform.spec.model import FeatureLevel, Spec
from dmlconform.userfiles import too_big

if TYPE_CHECKING:
    from dmlconform.diff import TreeDiff
    from dmlconform.diff_render import DiffResult

GIT_PREFIX = "git:"
DEFAULT_SPECS = "specs"
FORMATS = ("table", "json", "markdown")

# --------------------------------------------------------------------------- reading spec trees


def _git(args: list[str], *, stdin: bytes | None = None) -> bytes:
    """``git ARGS`` in the current folder; a failure is an input error quoting git."""
    try:
        proc = subprocess.run(["git", *args], input=stdin, capture_output=True, check=False)
    except FileNotFoundError:
        raise InputError("reading git:REV needs the git program, which is not on PATH") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise InputError(f"git {args[0]} failed: {message[0] if message else f'exit status {proc.returncode}'}")
    return proc.stdout


def _cat_files(rev: str, names: list[str]) -> list[bytes]:
    """The contents of ``REV:name`` for each name, from one ``git cat-file
    --batch``, once ``--batch-check`` has shown every blob within the spec
    size limit (`limits.SPEC`): a huge blob in history is refused unread."""
    asked = "".join(f"{rev}:{n}\n" for n in names).encode("utf-8")
    for name, line in zip(names, _git(["cat-file", "--batch-check"], stdin=asked).decode().splitlines()):
        checked = line.split()
        if len(checked) == 3 and checked[1] == "blob" and int(checked[2]) > limits.SPEC.max_bytes:
            raise too_big(f"git:{rev}:{name}", int(checked[2]), limits.SPEC)
    out = _git(["cat-file", "--batch"], stdin=asked)
    blobs, pos = [], 0
    for name in names:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise InputError(f"git:{rev}:{name} is not a file at that revision")
        size = int(header[2])
        blobs.append(out[end + 1:end + 1 + size])
        pos = end + 1 + size + 1
    return blobs


def _decode(raw: bytes, path: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"not UTF-8 text: byte 0x{raw[exc.start]:02X} at offset {exc.start}", path=path) from None


def _git_specs(ref: str) -> list[tuple[str, Spec]]:
    """``git:REV[:PATH]`` (PATH from the repository root, default ``specs``) -> (path, Spec)s."""

    rev, _, path = ref[len(GIT_PREFIX):].partition(":")
    path = path.strip("/") or DEFAULT_SPECS
    if not rev or rev.startswith("-"):
        raise InputError(f"{ref!r}: give a revision, as in git:HEAD or git:v1.0:specs")
    listing = _git(["ls-tree", "-r", "-z", "--full-tree", "--name-only", rev, "--", path])
    names = sorted(n for n in listing.decode("utf-8", errors="replace").split("\0")
                   if n.endswith(".yaml") and "\n" not in n)
    if not names:
        raise InputError(f"no spec files (*.yaml) under {path!r} at git revision {rev!r}")
    return [(f"git:{rev}:{n}", loads_spec(_decode(raw, f"git:{rev}:{n}"), path=f"git:{rev}:{n}"))
            for n, raw in zip(names, _cat_files(rev, names), strict=True)]


def _folder_specs(folder: str) -> list[tuple[str, Spec]]:
    path = existing_paths((folder,), "spec folder")[0]
    if not path.is_dir():
        raise InputError(f"spec folder {folder!r} is not a folder")
    files = spec_files([path])
    if not files:
        raise InputError(f"no spec files (*.yaml) in {folder!r}")
    return [(str(f), load_spec(f)) for f in files]


def load_tree(where: str) -> tuple[Spec, ...]:
    """The specs of a folder or of ``git:REV[:PATH]``; two files of one operator are an input error."""
    found = _git_specs(where) if where.startswith(GIT_PREFIX) else _folder_specs(where)
    seen: dict[str, str] = {}
    for path, spec in found:
        if spec.operator in seen:
            raise InputError(f"operator {spec.operator} is specified twice in {where!r}: "
                             f"{seen[spec.operator]} and {path}")
        seen[spec.operator] = path
    return tuple(spec for _, spec in found)


# --------------------------------------------------------------------------- arguments


def pick_operator(name: str, names: Iterable[str]) -> str:
    """The operator ``name`` means (``softsign``-style case and a ``DML_..._OPERATOR_DESC``
    struct name are accepted), or an input error with the closest names."""
    known = sorted(set(names))
    key = operator_key(name)
    if key in known:
        return key
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.6) or [n for n in known if key and key in n][:3]
    hint = f"; did you mean {' or '.join(close)}?" if close else f" ({len(known)} operators known)"
    raise InputError(f"--op: unknown operator {name!r}{hint}")


def _narrow(specs: tuple[Spec, ...], operator: str | None, names: Iterable[str]) -> tuple[Spec, ...]:
    if operator is None:
        return specs
    chosen = pick_operator(operator, names)
    return tuple(s for s in specs if s.operator == chosen)


# --------------------------------------------------------------------------- results


def level_range(old: FeatureLevel | None, new: FeatureLevel | None) -> tuple[FeatureLevel, FeatureLevel] | None:
    """``--from``/``--to`` with the missing end filled in (oldest, newest); None when neither is given."""
    if old is None and new is None:
        return None
    levels = list(FeatureLevel)
    old, new = old or levels[0], new or levels[-1]
    if not old < new:
        raise InputError(f"--from {old} must be an older feature level than --to {new}")
    return old, new


def _level_result(specs: tuple[Spec, ...], levels: tuple[FeatureLevel, FeatureLevel] | None,
                  operator: str | None) -> DiffResult:
    """A level diff, one operator's history (``--op`` alone) or every level's changes (nothing given)."""

    specs = _narrow(specs, operator, (s.operator for s in specs))
    if levels is None:
        return d.history(specs[0]) if operator else d.changelog(specs)
    return d.level_diff(specs, *levels)


def _tree_result(trees: tuple[str, ...], operator: str | None) -> TreeDiff:
    if len(trees) != 2:
        raise InputError(f"give two spec trees to compare (OLD NEW), got {len(trees)}: {', '.join(map(repr, trees))}")
    old, new = load_tree(trees[0]), load_tree(trees[1])
    names = [s.operator for s in old + new]
    return d.tree_diff(_narrow(old, operator, names), _narrow(new, operator, names),
                       old_name=trees[0], new_name=trees[1])


def _emit(result: DiffResult, fmt: str, output: str | None) -> None:
    """The table straight to the terminal (in colour where it is one); everything else as text."""


    if fmt == "table" and output is None:
        console().print(r.grid(result))
    elif fmt == "json":
        _write(r.to_json(result), output)
    elif fmt == "markdown":
        _write(r.markdown(result), output)
    else:
        _write(r.plain_text(r.grid(result)), output)


def _write(text: str, output: str | None) -> None:
    if output is None:
        click.echo(text, nl=False)
        return

    write_atomic(Path(output), text)
    click.echo(f"wrote {output}", err=True)


# --------------------------------------------------------------------------- commands


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("trees", nargs=-1, metavar="[OLD NEW]")
@click.option("--from", "from_level", metavar="LEVEL", help="Older feature level (default: 1_0 when --to is given).")
@click.option("--to", "to_level", metavar="LEVEL", help="Newer feature level (default: 6_4 when --from is given).")
@click.option("--op", "operator", metavar="NAME", help="Only this operator (ACTIVATION_SOFTSIGN).")
@click.option("--specs", "specs_dir", metavar="DIR|git:REV[:PATH]",
              help=f"Spec tree for level diffs (default: {SHIPPED_SPECS}).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table: rich terminal table; json: everything, keys sorted; markdown: for a PR comment.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
def diff(trees: tuple[str, ...], from_level: str | None, to_level: str | None, operator: str | None,
         specs_dir: str | None, fmt: str, output: str | None) -> None:
    """Show what a newer feature level or a newer spec revision adds or removes.

    \b
    dmlconform diff --from 5_0 --to 6_2 [--op NAME]   support gained/lost between two levels
    dmlconform diff --op NAME                          one operator's history, level by level
    dmlconform diff                                    every level's changes over the one before
    dmlconform diff OLD NEW [--op NAME]                two spec trees: folders or git:REV[:PATH]

    Levels are written 6_2, 6.2 or DML_FEATURE_LEVEL_6_2.  Exits 1 when the
    diff shows a removal (support that shrinks between levels, or anything a
    newer spec tree drops): that is almost always a doc error.
    """
    old, new = parse_level(from_level, "--from"), parse_level(to_level, "--to")
    result: DiffResult
    if trees:
        if old is not None or new is not None or specs_dir is not None:
            raise InputError("--from, --to and --specs work on one spec tree; "
                             "with two trees (OLD NEW) leave them out")
        result = _tree_result(trees, operator)
    else:
        levels = level_range(old, new)
        result = _level_result(load_tree(specs_folder(specs_dir)), levels, operator)
    _emit(result, fmt, output)
    if result.has_removals:
        sys.exit(ExitCode.FINDINGS)


@click.command(epilog=EXIT_CODES_HELP)
@specs_option("Spec tree to tabulate", metavar="DIR|git:REV[:PATH]")
@click.option("--format", "fmt", type=click.Choice(("html", "markdown")),
              help="Default: html when -o ends in .html or .htm, else markdown.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
def matrix(specs_dir: str, fmt: str | None, output: str | None) -> None:
    """Tabulate operators x feature levels: where each operator was introduced
    and where its support grew (or shrank), as a markdown or a self-contained
    HTML page whose cells list the changes in their tooltips."""

    if fmt is None:
        fmt = "html" if output and Path(output).suffix.lower() in (".html", ".htm") else "markdown"
    rows = d.support_matrix(load_tree(specs_dir))
    _write(r.matrix_html(rows) if fmt == "html" else r.matrix_markdown(rows), output)
