"""The README's tables, written from the code they describe, so they cannot
drift from it: the commands (from the click commands' help), the exit codes
(`errors.EXIT_CODE_MEANINGS`) and the lint rules (`lint.checks.RULES`).

``python -m dmlconform.docs_tables README.md`` rewrites each marked region
(``<!-- lint-rules -->`` ... ``<!-- /lint-rules -->``) in place; ``--check``
writes nothing and exits 1 when one is out of date (tests/test_docs_tables.py
fails then too).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

import click

from dmlconform.atomic import write_atomic
from dmlconform.cli import main as cli_main
from dmlconform.errors import EXIT_CODE_MEANINGS, ExitCode
from dmlconform.lint.checks import RULES


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


@click.command()
@click.argument("readme", type=click.Path(dir_okay=False, exists=True))
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a table is out of date.")
def main(readme: str, check: bool) -> None:
    """Rewrite the marked tables of README (commands, exit codes, lint rules) from the code."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    try:
        fresh = rewrite(text)
    except ValueError as exc:
        raise click.UsageError(f"{readme}: {exc}") from None
    if fresh == text:
        click.echo(f"{readme}: tables up to date", err=True)
    elif check:
        click.echo(f"{readme}: tables out of date; run python -m dmlconform.docs_tables {readme}", err=True)
        sys.exit(ExitCode.FINDINGS)
    else:
        write_atomic(path, fresh)
        click.echo(f"{readme}: tables rewritten", err=True)


if __name__ == "__main__":
    main()
