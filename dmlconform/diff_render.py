"""Diff results as a rich table, JSON, markdown (for a PR comment) and the
operators x feature levels matrix as markdown or a self-contained HTML page.

DESIGN.md "Comparison, verdicts and reports" (a rich terminal view, machine
readable JSON, HTML where a person would rather look than read) applied to the
results of `dmlconform.diff`.  Every diff result first becomes a `Grid` (title,
columns, rows of marked text); the terminal and markdown renderers only lay a
Grid out, so the three views cannot disagree.  No I/O here: functions return
text or a renderable, and the caller's Console prints it.
"""

from __future__ import annotations

import enum
import html
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from dmlconform.diff import (
    Aspect,
    ChangeKind,
    Changelog,
    LevelDiff,
    MatrixRow,
    OperatorHistory,
    OperatorLevelDiff,
    Step,
    TensorAt,
    TensorChange,
    TreeDiff,
    condition_text,
    dims_text,
    dtypes_text,
)
from dmlconform.spec.model import Condition, DataType, FeatureLevel, sort_dtypes

DiffResult = LevelDiff | Changelog | OperatorHistory | TreeDiff


class Mark(enum.Enum):
    """How a piece of text is emphasised: green/bold when added, red/struck when removed."""

    PLAIN = ""
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


#: Terminal style of each mark.
RICH_STYLES = {Mark.PLAIN: "", Mark.ADDED: "green", Mark.REMOVED: "red", Mark.CHANGED: "yellow"}

Seg = tuple[str, Mark]
Cell = tuple[Seg, ...]


def plain(text: str) -> Cell:
    return ((text, Mark.PLAIN),) if text else ()


def marked(text: str, mark: Mark) -> Cell:
    return ((text, mark),) if text else ()


@dataclass(frozen=True, slots=True)
class Grid:
    """A titled table of marked cells; a rich renderable (the table, then the
    summary line, or only ``empty`` when there are no rows)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    summary: str
    empty: str
    column_marks: tuple[Mark, ...] = ()
    row_marks: tuple[Mark, ...] = ()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.rows:
            yield Text(self.empty)
            return
        table = Table(title=self.title, title_justify="left")
        marks = self.column_marks or (Mark.PLAIN,) * len(self.columns)
        for name, mark in zip(self.columns, marks, strict=True):
            table.add_column(name, style=RICH_STYLES[mark] or None, overflow="fold")
        row_marks = self.row_marks or (Mark.PLAIN,) * len(self.rows)
        for row, mark in zip(self.rows, row_marks, strict=True):
            table.add_row(*(_rich_cell(c) for c in row), style=RICH_STYLES[mark] or None)
        yield table
        yield Text(self.summary)


def plain_text(renderable: Grid, *, width: int = 100) -> str:
    """What the terminal would show, without colour, at ``width`` columns (for files and tests)."""
    text = io.StringIO()
    console = Console(file=text, width=width, color_system=None)
    console.print(renderable)
    return text.getvalue()


def _rich_cell(cell: Cell) -> Text:
    text = Text()
    for part, mark in cell:
        text.append(part, style=RICH_STYLES[mark])
    return text


# --------------------------------------------------------------------------- shared pieces


def tensor_label(tensor: str, condition: Condition | None) -> str:
    cond = condition_text(condition)
    return f"{tensor} [{cond}]" if cond else tensor


def support_text(dims: Iterable[int], dtypes: Iterable[DataType]) -> str:
    """``dims 1-3, 6-8; INT64, UINT64`` (either part left out when empty)."""
    parts = [f"dims {dims_text(dims)}" if tuple(dims) else "", dtypes_text(dtypes)]
    return "; ".join(p for p in parts if p)


def kind_notes(change: TensorChange) -> tuple[str, str]:
    """What a Kind change adds and removes: ``("optional", "")`` when the tensor became optional."""
    if change.became_optional:
        return "optional", ""
    if change.became_required:
        return "", "optional"
    if change.old_kind != change.new_kind:
        return f"kind {change.old_kind} \u2192 {change.new_kind}", ""
    return "", ""


def added_text(change: TensorChange) -> str:
    """``dims 1-3, 6-8; INT64, UINT64; optional``: what the tensor gained."""
    note = kind_notes(change)[0]
    return "; ".join(p for p in (support_text(change.added_dims, change.added_dtypes), note) if p)


def removed_text(change: TensorChange) -> str:
    note = kind_notes(change)[1]
    return "; ".join(p for p in (support_text(change.removed_dims, change.removed_dtypes), note) if p)


def change_text(change: TensorChange) -> str:
    """``InputTensor: +dims 1-3, 6-8; +INT64, UINT64; −FLOAT16`` (− is U+2212)."""
    added, removed = added_text(change), removed_text(change)
    parts = [f"+{added}" if added else "", f"\u2212{removed}" if removed else ""]
    return f"{tensor_label(change.tensor, change.condition)}: " + " ".join(p for p in parts if p)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# --------------------------------------------------------------------------- level diffs


def _level_rows(diff: OperatorLevelDiff) -> Iterator[tuple[Cell, ...]]:
    name = marked(diff.operator, Mark.ADDED) + plain(" (new)") if diff.is_new else plain(diff.operator)
    if not diff.tensors:
        yield name, (), (), ()
    for t in diff.tensors:
        yield (name, plain(tensor_label(t.tensor, t.condition)),
               plain(added_text(t)), plain(removed_text(t)))


def _level_summary(diffs: Iterable[OperatorLevelDiff]) -> str:
    diffs = tuple(diffs)
    new = sum(d.is_new for d in diffs)
    grew = sum(not d.is_new and any(t.has_additions for t in d.tensors) for d in diffs)
    shrank = sum(d.has_removals for d in diffs)
    verdict = "no removals" if not shrank else "REMOVALS: support that shrinks is almost always a doc error"
    return (f"{_count(len(diffs), 'operator')} changed: {new} new, {grew} with more support, "
            f"{shrank} with less support; {verdict}.")


def level_grid(diff: LevelDiff) -> Grid:
    rows = tuple(row for op in diff.operators for row in _level_rows(op))
    return Grid(
        title=f"Feature level {diff.older} \u2192 {diff.newer}: support added and removed",
        columns=("Operator", "Tensor", "Added", "Removed"),
        column_marks=(Mark.PLAIN, Mark.PLAIN, Mark.ADDED, Mark.REMOVED),
        rows=rows, summary=_level_summary(diff.operators),
        empty=f"No support changes between feature levels {diff.older} and {diff.newer}.",
    )


def changelog_grid(log: Changelog) -> Grid:
    rows = tuple(
        (plain(step.newer.short), *row) for step in log.steps for op in step.operators for row in _level_rows(op)
    )
    first, last = list(FeatureLevel)[0], list(FeatureLevel)[-1]
    levels = ", ".join(step.newer.short for step in log.steps)
    return Grid(
        title=f"Support changes level by level, {first} \u2192 {last}",
        columns=("Level", "Operator", "Tensor", "Added", "Removed"),
        column_marks=(Mark.PLAIN, Mark.PLAIN, Mark.PLAIN, Mark.ADDED, Mark.REMOVED),
        rows=rows, summary=f"Levels that change support: {levels or 'none'}. "
                           + _level_summary(op for step in log.steps for op in step.operators),
        empty=f"No support changes between feature levels {first} and {last}.",
    )


# --------------------------------------------------------------------------- one operator's history


def _runs_by_mark(values: list[tuple[int, Mark]]) -> Iterator[tuple[list[int], Mark]]:
    run: list[int] = []
    run_mark = Mark.PLAIN
    for v, mark in values:
        if run and (v != run[-1] + 1 or mark is not run_mark):
            yield run, run_mark
            run = []
        run.append(v)
        run_mark = mark
    if run:
        yield run, run_mark


_SIGN = {Mark.PLAIN: "", Mark.ADDED: "+", Mark.REMOVED: "\u2212"}


def _joined(items: Iterable[Seg]) -> Cell:
    out: list[Seg] = []
    for seg in items:
        out.extend((((", ", Mark.PLAIN),) if out else ()) + (seg,))
    return tuple(out)


def _dims_cell(now: tuple[int, ...], change: TensorChange | None) -> Cell:
    added = set(change.added_dims if change else ())
    removed = set(change.removed_dims if change else ())
    marks = [(d, Mark.ADDED if d in added else Mark.REMOVED if d in removed else Mark.PLAIN)
             for d in sorted(set(now) | removed)]
    return _joined((_SIGN[m] + dims_text(run), m) for run, m in _runs_by_mark(marks))


def _dtypes_cell(now: tuple[DataType, ...], change: TensorChange | None) -> Cell:
    added = set(change.added_dtypes if change else ())
    removed = set(change.removed_dtypes if change else ())
    marks = ((t, Mark.ADDED if t in added else Mark.REMOVED if t in removed else Mark.PLAIN)
             for t in sort_dtypes(set(now) | removed))
    return _joined((_SIGN[m] + t.name, m) for t, m in marks)


def _history_cell(now: TensorAt | None, change: TensorChange | None) -> Cell:
    if now is None and change is None:
        return plain("-")
    dims = _dims_cell(now.dims if now else (), change)
    dtypes = _dtypes_cell(now.dtypes if now else (), change)
    return plain("dims ") + dims + plain("\n") + dtypes + _kind_cell(now, change)


def _kind_cell(now: TensorAt | None, change: TensorChange | None) -> Cell:
    """A third line ``optional`` for an optional tensor, marked where that changed."""
    if change is not None and change.became_required:
        return plain("\n") + marked("\u2212optional", Mark.REMOVED)
    if now is None or not now.optional:
        return ()
    return plain("\n") + (marked("+optional", Mark.ADDED) if change and change.became_optional else plain("optional"))


def history_grid(hist: OperatorHistory) -> Grid:
    conditional = any(row.condition for row in hist.rows)
    rows = []
    for row in hist.rows:
        now = {t.tensor: t for t in row.tensors}
        changes = {c.tensor: c for c in row.changes}
        lead = (plain(row.level.short),) + ((plain(condition_text(row.condition)),) if conditional else ())
        rows.append(lead + tuple(_history_cell(now.get(n), changes.get(n)) for n in hist.tensor_names))
    grew = sorted({r.level.short for r in hist.rows if any(c.has_additions for c in r.changes)})
    shrank = sorted({r.level.short for r in hist.rows if any(c.has_removals for c in r.changes)})
    summary = (f"Introduced in {hist.introduced}; support grows at {', '.join(grew) or 'no later level'}; "
               + (f"SHRINKS at {', '.join(shrank)} (almost always a doc error)." if shrank else "never shrinks."))
    return Grid(
        title=f"{hist.operator}: support by feature level (each row applies up to the next)",
        columns=("Level",) + (("Condition",) if conditional else ()) + hist.tensor_names,
        rows=tuple(rows), summary=summary, empty=f"{hist.operator} has no support tables.",
    )


# --------------------------------------------------------------------------- two spec trees


_KIND_MARK = {ChangeKind.ADDED: Mark.ADDED, ChangeKind.REMOVED: Mark.REMOVED}


def _tree_summary(diff: TreeDiff) -> str:
    ops = {c.operator for c in diff.changes}
    added = sum(c.aspect is Aspect.OPERATOR and c.kind is ChangeKind.ADDED for c in diff.changes)
    removed = sum(c.aspect is Aspect.OPERATOR and c.kind is ChangeKind.REMOVED for c in diff.changes)
    changed = len(ops) - added - removed
    removals = sum(c.is_removal for c in diff.changes)
    return (f"{_count(len(diff.changes), 'change')}: {_count(added, 'operator')} added, {removed} removed, "
            f"{changed} changed; {_count(removals, 'removal')}.")


def tree_grid(diff: TreeDiff) -> Grid:
    rows = tuple(
        (plain(c.operator), plain(c.aspect.value), plain(c.kind.value), plain(c.subject), plain(c.old), plain(c.new))
        for c in diff.changes
    )
    return Grid(
        title=f"Spec changes: {diff.old_name} \u2192 {diff.new_name}",
        columns=("Operator", "Aspect", "Change", "Subject", "Old", "New"),
        rows=rows, row_marks=tuple(_KIND_MARK.get(c.kind, Mark.CHANGED) for c in diff.changes),
        summary=_tree_summary(diff), empty=f"No changes between {diff.old_name} and {diff.new_name}.",
    )


def grid(result: DiffResult) -> Grid:
    """The Grid of any diff result."""
    if isinstance(result, LevelDiff):
        return level_grid(result)
    if isinstance(result, Changelog):
        return changelog_grid(result)
    if isinstance(result, OperatorHistory):
        return history_grid(result)
    return tree_grid(result)


# --------------------------------------------------------------------------- markdown


_MD_ESCAPES = str.maketrans({"|": "\\|", "\\": "\\\\", "*": "\\*", "~": "\\~", "`": "\\`",
                             "<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": "<br>", "\r": ""})
_MD_MARKS = {Mark.PLAIN: "{}", Mark.ADDED: "**{}**", Mark.REMOVED: "~~{}~~", Mark.CHANGED: "{}"}


def md_text(text: str) -> str:
    """``text`` safe inside a GitHub markdown table cell (pipes, emphasis, HTML, newlines)."""
    return text.translate(_MD_ESCAPES)


def _md_cell(cell: Cell) -> str:
    return "".join(_MD_MARKS[mark].format(md_text(text)) if text.strip() else md_text(text) for text, mark in cell)


def md_table(columns: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    columns = tuple(columns)
    lines = ["| " + " | ".join(md_text(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def markdown(result: DiffResult) -> str:
    """A markdown page for a PR comment: heading, summary, table."""
    g = grid(result)
    if not g.rows:
        return f"## {md_text(g.title)}\n\n{md_text(g.empty)}\n"
    table = md_table(g.columns, ([_md_cell(c) for c in row] for row in g.rows))
    return "\n".join([f"## {md_text(g.title)}", "", md_text(g.summary), "", *table]) + "\n"


# --------------------------------------------------------------------------- JSON


def to_plain(value: Any) -> Any:
    """Records -> JSON data: levels as ``2_0``, data types by name, enums by value."""
    if isinstance(value, (FeatureLevel, DataType)):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (tuple, list)):
        return [to_plain(v) for v in value]
    return value


_JSON_KIND = {LevelDiff: "levels", Changelog: "changelog", OperatorHistory: "history", TreeDiff: "specs"}


def to_json(result: DiffResult) -> str:
    """The whole result, keys sorted; ``kind`` says which diff, ``removals`` whether it shrinks."""
    data = {"kind": _JSON_KIND[type(result)], "removals": result.has_removals, **to_plain(result)}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- operators x levels matrix


_STEP_SYMBOL = {Step.ABSENT: "", Step.INTRODUCED: "new", Step.SAME: "\u00b7", Step.GREW: "+",
                Step.SHRANK: "\u2212", Step.CHANGED: "\u00b1"}
MATRIX_TITLE = "DirectML operator support by feature level"
MATRIX_LEGEND = ("new: introduced; +: support grew; \u2212: support shrank; "
                 "\u00b1: grew and shrank, or a tensor's kind changed; "
                 "\u00b7: available, unchanged; blank: not available.")


def _shrinks(rows: tuple[MatrixRow, ...]) -> list[str]:
    return [f"{row.operator} at {cell.level}: {change_text(c)}"
            for row in rows for cell in row.cells for c in cell.changes if c.has_removals]


def _totals(rows: tuple[MatrixRow, ...]) -> tuple[list[str], list[str]]:
    levels = list(FeatureLevel)
    available = [str(sum(r.cells[i].step is not Step.ABSENT for r in rows)) for i in range(len(levels))]
    new = [str(sum(r.cells[i].step is Step.INTRODUCED for r in rows)) for i in range(len(levels))]
    return available, new


def matrix_markdown(rows: tuple[MatrixRow, ...]) -> str:
    """Operators x feature levels as a markdown page, totals last, then every shrink."""
    body = ([md_text(r.operator), str(r.introduced), *(_STEP_SYMBOL[c.step] for c in r.cells)] for r in rows)
    available, new = _totals(rows)
    footer = [["**available**", "", *available], ["**introduced**", "", *new]]
    table = md_table(["Operator", "Introduced", *(level.short for level in FeatureLevel)], [*body, *footer])
    shrinks = _shrinks(rows)
    tail = [f"- {md_text(s)}" for s in shrinks] or ["None."]
    return "\n".join([f"# {MATRIX_TITLE}", "", md_text(MATRIX_LEGEND), "", *table, "",
                      "## Support that shrinks (almost always a doc error)", "", *tail]) + "\n"


_HTML_STYLE = """\
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: center; }
th[scope=row] { text-align: left; font-family: monospace; font-weight: normal; }
thead th { position: sticky; top: 0; background: #f4f4f4; }
td.introduced { background: #cfe8ff; } td.grew { background: #c8f0c8; }
td.shrank, td.changed { background: #f8c8c8; font-weight: bold; } td.same { color: #999; }
tfoot th, tfoot td { background: #f4f4f4; font-weight: bold; }"""


def _html_cell(cell_step: Step, changes: tuple[TensorChange, ...], level: FeatureLevel) -> str:
    title = "; ".join(change_text(c) for c in changes)
    attr = f' title="{html.escape(f"{level}: {title}")}"' if title else ""
    return f'<td class="{cell_step.value}"{attr}>{html.escape(_STEP_SYMBOL[cell_step])}</td>'


def _html_row(row: MatrixRow) -> str:
    cells = "".join(_html_cell(c.step, c.changes, c.level) for c in row.cells)
    name, introduced = html.escape(row.operator), html.escape(str(row.introduced))
    return f'<tr><th scope="row">{name}</th><td>{introduced}</td>{cells}</tr>'


def matrix_html(rows: tuple[MatrixRow, ...]) -> str:
    """A self-contained page (inline CSS, no scripts); each changed cell's
    tooltip lists the tensors' changes.  Every text goes through html.escape."""
    e = html.escape
    head = "".join(f"<th>{e(level.short)}</th>" for level in FeatureLevel)
    available, new = _totals(rows)
    foot = "".join(
        f"<tr><th>{e(label)}</th><td></td>{''.join(f'<td>{e(v)}</td>' for v in values)}</tr>"
        for label, values in (("available", available), ("introduced", new))
    )
    shrinks = "".join(f"<li>{e(s)}</li>" for s in _shrinks(rows))
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', '<head><meta charset="utf-8">',
        f"<title>{e(MATRIX_TITLE)}</title>", f"<style>\n{_HTML_STYLE}\n</style>", "</head>", "<body>",
        f"<h1>{e(MATRIX_TITLE)}</h1>", f"<p>{e(MATRIX_LEGEND)}</p>",
        f"<table>\n<thead><tr><th>Operator</th><th>Introduced</th>{head}</tr></thead>",
        "<tbody>", *(_html_row(r) for r in rows), "</tbody>", f"<tfoot>{foot}</tfoot>", "</table>",
        "<h2>Support that shrinks (almost always a doc error)</h2>",
        f"<ul>{shrinks}</ul>" if shrinks else "<p>None.</p>", "</body>", "</html>",
    ]) + "\n"
