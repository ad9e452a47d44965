"""The rich terminal summary of a run: the outcome counts of every operator x
data type x feature level, then for each failing case its message, a diff
table of the worst elements and the one-line repro, then the totals.

The tables are renderables built from the data; `render` prints them on the
Console it is given (STYLE.md).  Every text from the data goes in as `Text`
(never parsed as markup) with control characters made visible.  Headings and
repro commands are printed soft-wrapped, so a repro is one line that can be
copied whole.  DESIGN.md "Comparison, verdicts and reports".
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from dmlconform.report.coverage import (
    failed_cases,
    fmt_float,
    fmt_ulp,
    gating_facts,
    group_rows,
    outcome_columns,
    stale_entries,
    totals_line,
    unexpected_passes,
    visible,
)
from dmlconform.report.readings import summarize as summarize_readings
from dmlconform.results import CaseResult, ElementDiff, Outcome, RunResult

#: Terminal style of each outcome (counts and headings).
STYLES = {
    Outcome.PASS: "green", Outcome.QUALITY_WARNING: "yellow", Outcome.FAIL: "bold red",
    Outcome.NOT_SUPPORTED: "dim", Outcome.XFAIL: "dim", Outcome.XPASS: "yellow",
    Outcome.CRASH: "bold magenta", Outcome.TIMEOUT: "magenta", Outcome.ERROR: "bold magenta",
}

#: Columns of the diff table; the numeric ones are right-aligned.
DIFF_COLUMNS = ("output", "index", "inputs", "expected", "actual", "ULP", "bound", "verdict")
_NUMERIC = frozenset({"expected", "actual", "ULP", "bound"})


def data(text: str, style: str = "") -> Text:
    """A cell or line from the data: no markup, no control characters."""
    return Text(visible(text), style=style)


def inputs_text(diff: ElementDiff) -> str:
    """``x=1.5, y=-0``"""
    return ", ".join(f"{name}={fmt_float(v)}" for name, v in diff.inputs)


def _header(outcome: Outcome) -> str:
    """``QUALITY_\\nWARNING``: long outcome names on two header lines, so the table fits 100 columns."""
    head, sep, tail = outcome.value.partition("_")
    return f"{head}_\n{tail}" if sep else head


def summary_table(run: RunResult) -> Table:
    """One row per operator x data type x feature level, one column per outcome."""
    columns = outcome_columns(run)
    table = Table(title="Outcomes", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=0)
    table.add_column("operator", overflow="fold")
    table.add_column("dtype @ level", no_wrap=True)
    for outcome in columns:
        table.add_column(_header(outcome), justify="right")
    for row in group_rows(run):
        cells = [Text(str(n), style=STYLES[o]) if n else Text("·", style="dim")
                 for o, n in row.counts if o in columns]
        table.add_row(data(row.operator), data(row.name), *cells)
    return table


def diff_table(case: CaseResult, *, worst: int) -> Table:
    """The first ``worst`` elements of ``case.worst`` (the worst first)."""
    shown = case.worst[:worst]
    title = f"worst {len(shown)} of {len(case.worst)} elements" if len(shown) < len(case.worst) else None
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  collapse_padding=True)
    for name in DIFF_COLUMNS:
        table.add_column(name, justify="right" if name in _NUMERIC else "left", overflow="fold")
    for d in shown:
        table.add_row(data(d.output), "[" + ", ".join(map(str, d.index)) + "]", data(inputs_text(d)),
                      fmt_float(d.expected), fmt_float(d.actual), fmt_ulp(d.ulp), fmt_float(d.bound),
                      data(d.verdict, STYLES.get(Outcome.FAIL if d.verdict == "FAIL" else Outcome.QUALITY_WARNING, "")))
    return table


def case_heading(case: CaseResult) -> Text:
    """``FAIL  Abs FLOAT16 @ 6_4  abs-f16-0003: 3 of 64 elements beyond the bound``"""
    text = Text()
    text.append(case.outcome.value, style=STYLES[case.outcome])
    text.append(visible(f"  {case.operator} {case.dtype} @ {case.level}  "))
    text.append(visible(case.case_id), style="bold")
    if case.message:
        text.append(visible(f": {case.message}"))
    return text


def totals(run: RunResult) -> Text:
    """``FAILED  12 cases: 5 PASS, 2 FAIL in 3.25 s``, ``OK  …``, or for a run
    stopped by Ctrl-C ``INTERRUPTED  …`` (it passed nothing: part of it never ran)."""
    if run.interrupted:
        verdict = ("INTERRUPTED", "bold yellow")
    else:
        verdict = ("FAILED", "bold red") if run.failed else ("OK", "bold green")
    return Text.assemble(verdict, f"  {totals_line(run)}")


def render(run: RunResult, console: Console, *, worst: int = 10) -> None:
    """Print the summary of ``run`` on ``console``, with at most ``worst``
    (0 or more) elements per failing case."""
    if worst < 0:
        raise ValueError(f"worst={worst!r} must be 0 or more")
    console.print(data(f"{run.backend} {run.backend_version} on {run.device}, feature level "
                       f"{run.feature_level}, seed {run.seed}"), soft_wrap=True)
    for line in gating_lines(run):
        console.print(line, soft_wrap=True)
    console.print(summary_table(run))
    for line in reading_lines(run):
        console.print(line, soft_wrap=True)
    for case in failed_cases(run):
        console.print()
        console.print(case_heading(case), soft_wrap=True)
        if case.worst and worst:
            console.print(diff_table(case, worst=worst))
        if case.repro:
            console.print(Text.assemble(("repro: ", "dim"), visible(case.repro)), soft_wrap=True)
    warnings = warning_lines(run)
    if warnings:
        console.print()
    for line in warnings:
        console.print(line, soft_wrap=True)
    console.print()
    console.print(totals(run), soft_wrap=True)


def reading_lines(run: RunResult) -> list[Text]:
    """One line per operator and ambiguity where the backend took another
    reading than the primary one, or several (docs/ambiguities.md): PASS
    all the same, and worth knowing."""
    return [Text.assemble(("reading: ", "cyan"), visible(t.line())) for t in summarize_readings(run.cases)
            if t.notable]


def gating_lines(run: RunResult) -> list[Text]:
    """``shard: 3/8``, ``baseline: …``, then one line per tolerance override."""
    lines = [Text.assemble((f"{name}: ", "bold"), visible(value)) for name, value in gating_facts(run)]
    lines += [data(f"  override {o.operator} {o.dtype} {o.describe()}: {o.reason}") for o in run.overrides]
    return lines


def warning_lines(run: RunResult) -> list[Text]:
    """Unexpected passes that do not fail the run, and stale baseline entries."""
    lines = [case_heading(c) for c in unexpected_passes(run)]
    lines += [Text.assemble(("stale", STYLES[Outcome.XPASS]), visible(f"  baseline entry {key!r} matches no case "
                                                                       f"of this run ({reason})"))
              for key, reason in stale_entries(run)]
    return lines
