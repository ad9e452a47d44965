"""The README's tables and numbers, written from the code and data they
describe, so they cannot drift from them: the commands (from the click
commands' help), the exit codes (`errors.EXIT_CODE_MEANINGS`), the lint rules
(`lint.checks.RULES`), and the numbers in its prose (`NUMBERS`: the default
suite's cases and operators, what ``import onnx`` wrote into cases/onnx/).

``python -m dmlconform.docs_tables README.md [DOC...]`` rewrites each marked
region of the README (``<!-- lint-rules -->`` ... ``<!-- /lint-rules -->``)
and each marked number of every file (``<!-- n:onnx-cases -->310<!-- /n -->``,
invisible in the rendered page) in place; ``--check`` writes nothing and
exits 1 when one is out of date (tests/test_docs_tables.py fails then too).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

import click

from dmlconform.atomic import write_atomic
from dmlconform.catalog import load_spec
from dmlconform.cli import main as cli_main
from dmlconform.errors import EXIT_CODE_MEANINGS, ExitCode
from dmlconform.families import cases_of
from dmlconform.lint.checks import RULES
from dmlconform.packaged import shipped_specs
from dmlconform.spec.files import spec_files
from dmlconform.spec.model import FeatureLevel


def _row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _table(header: tuple[str, ...], rows: Iterator[tuple[str, ...]]) -> str:
    lines = [_row(header), "| " + " | ".join("---" for _ in header) + " |", *(_row(r) for r in rows)]
    return "\n".join(lines) + "\n"


def _commands(group: click.Group, ctx: click.Context) -> Iterator[tuple[str, click.Command, click.Context]]:
    """(full name, command, its context) of every leaf command, sorted by name."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        sub = click.Context(command, info_name=name, parent=ctx)
        if isinstance(command, click.Group):
            yield from ((f"{name} {n}", c, x) for n, c, x in _commands(command, sub))
        else:
            yield name, command, sub


def commands_table() -> str:
    """Every command: its arguments, the first paragraph of its help, its options."""
    root = click.Context(cli_main, info_name="dmlconform")

    def row(name: str, command: click.Command, ctx: click.Context) -> tuple[str, str, str]:
        arguments = [piece for piece in command.collect_usage_pieces(ctx) if piece != "[OPTIONS]"]
        options = [max(p.opts, key=len) for p in command.get_params(ctx)
                   if isinstance(p, click.Option) and "--help" not in p.opts]
        return (f"`{' '.join(['dmlconform', name, *arguments])}`", command.get_short_help_str(limit=300),
                " ".join(f"`{o}`" for o in options))

    assert isinstance(cli_main, click.Group)
    return _table(("command", "what it does", "options"), (row(*c) for c in _commands(cli_main, root)))


def exit_codes_table() -> str:
    return _table(("code", "meaning"), ((str(code.value), EXIT_CODE_MEANINGS[code].full) for code in ExitCode))


def lint_rules_table() -> str:
    return _table(("code", "severity", "name", "what it finds"),
                  ((r.code, r.severity, r.name, r.summary) for r in RULES))


#: Each marked region of the README and what writes it.
TABLES: Mapping[str, Callable[[], str]] = MappingProxyType({
    "commands": commands_table,
    "exit-codes": exit_codes_table,
    "lint-rules": lint_rules_table,
})


def rewrite(text: str) -> str:
    """``text`` with every region of `TABLES` written afresh; a region that is
    missing (or not closed) is a ValueError naming its markers."""
    for name, render in TABLES.items():
        opening, closing = f"<!-- {name} -->\n", f"<!-- /{name} -->"
        start = text.find(opening)
        end = text.find(closing, start + len(opening)) if start >= 0 else -1
        if end < 0:
            raise ValueError(f"no <!-- {name} --> ... <!-- /{name} --> region")
        text = text[:start + len(opening)] + render() + text[end:]
    return text


# --------------------------------------------------------------------------- numbers in the prose


def default_suite() -> tuple[int, int]:
    """(cases, operators) of the default suite, ``dmlconform run`` with no
    selection: every shipped spec's cases at 6_4, counted by their ids (a
    family draws no values for an id its ``keep`` refuses)."""
    ids: list[str] = []
    operators = 0

    def count(case_id: str, _dtype: object) -> bool:
        ids.append(case_id)
        return False

    for path in spec_files([shipped_specs()]):
        before = len(ids)
        for _ in cases_of(load_spec(path), FeatureLevel.FL_6_4, seed=0, keep=count):
            pass
        operators += len(ids) > before
    return len(ids), operators


_ORIGIN = re.compile(r"\(([A-Za-z][A-Za-z0-9]*), opset \d+[,)]")


def onnx_cases(root: Path) -> tuple[int, int, int]:
    """(cases, ONNX operators, DirectML operators) of the cases ``import
    onnx`` wrote into ``root``/cases/onnx/ (its manifest; each case's
    origin names its ONNX operator: ``onnx 1.23.2 node test test_abs (Abs, opset 13)``,
    ``... (Elu, opset 22, alpha=2.0)``)."""
    manifest = json.loads((root / "cases" / "onnx" / "manifest.json").read_text(encoding="utf-8"))
    cases = manifest["cases"]
    found = [_ORIGIN.search(c["origin"]) for c in cases]
    if not all(found):
        raise ValueError(f"a case's origin names no ONNX operator: {cases[found.index(None)]['origin']!r}")
    onnx_ops = {m.group(1) for m in found if m}
    return len(cases), len(onnx_ops), len({c["operator"] for c in cases})


def numbers(root: Path) -> dict[str, str]:
    """Every marked number, by name, as the prose writes it (``8,240``);
    ``root`` is the repository's folder (cases/onnx/ lies in it)."""
    suite_cases, suite_operators = default_suite()
    onnx, onnx_ops, onnx_dml_ops = onnx_cases(root)
    counts = {"default-cases": suite_cases, "default-operators": suite_operators, "onnx-cases": onnx,
              "onnx-operators": onnx_ops, "onnx-dml-operators": onnx_dml_ops}
    return {name: f"{n:,}" for name, n in counts.items()}


#: The names `numbers` writes.
NUMBERS = ("default-cases", "default-operators", "onnx-cases", "onnx-operators", "onnx-dml-operators")

_NUMBER = re.compile(r"<!-- n:([a-z0-9-]+) -->(.*?)<!-- /n -->")


def rewrite_numbers(text: str, values: Mapping[str, str]) -> str:
    """``text`` with every marked number written afresh from ``values``; a
    marker naming no number is a ValueError naming it."""
    def fresh(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise ValueError(f"<!-- n:{m.group(1)} --> names no number; known: {', '.join(sorted(values))}")
        return f"<!-- n:{m.group(1)} -->{values[m.group(1)]}<!-- /n -->"

    return _NUMBER.sub(fresh, text)


@click.command()
@click.argument("readme", type=click.Path(dir_okay=False, exists=True))
@click.argument("docs", nargs=-1, type=click.Path(dir_okay=False, exists=True))
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a table or a number is out of date.")
def main(readme: str, docs: tuple[str, ...], check: bool) -> None:
    """Rewrite the marked tables of README (commands, exit codes, lint rules)
    and the marked numbers of README and DOCS from the code."""
    texts = {name: Path(name).read_text(encoding="utf-8") for name in (readme, *docs)}
    marked = any(_NUMBER.search(text) for text in texts.values())
    values = numbers(Path(readme).resolve().parent) if marked else {}
    stale = []
    for name, text in texts.items():
        path = Path(name)
        try:
            fresh = rewrite_numbers(rewrite(text) if name == readme else text, values)
        except ValueError as exc:
            raise click.UsageError(f"{name}: {exc}") from None
        if fresh == text:
            click.echo(f"{name}: tables and numbers up to date", err=True)
        elif check:
            click.echo(f"{name}: tables or numbers out of date; run python -m dmlconform.docs_tables "
                       f"{' '.join((readme, *docs))}", err=True)
            stale.append(name)
        else:
            write_atomic(path, fresh)
            click.echo(f"{name}: rewritten", err=True)
    if stale:
        sys.exit(ExitCode.FINDINGS)


if __name__ == "__main__":
    main()
