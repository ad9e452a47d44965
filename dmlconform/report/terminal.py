"""The rich terminal summary of a run, written to be read from the bottom of
a CI log as well as on a screen:

1. one line per operator: its data types (and levels, where they are not
   the run's) folded in, its cases counted by outcome; an operator with a
   failing case stands out (``!`` and red);
2. the first failing cases in full (message, worst elements, repro), one per
   operator x data type x level before a second of any, wrong values before
   refusals, then ``and K more failing cases: see report.html``;
3. warnings (unexpected passes, stale baseline entries);
4. the header again (backend, device, version, level, seed, subnormals,
   the command with its options such as ``faults=``, gating facts), the
   wrong values counted apart from the refusals (`refusals_line`), and the
   totals line last.

``verbose`` swaps the operator lines for the full operator x data type x
level table and shows every failing case.  The tables are renderables built
from the data; `render` prints them on the Console it is given (STYLE.md).
Every text from the data goes in as `Text` (never parsed as markup) with
control characters made visible.  Headings and repro commands are printed
soft-wrapped, so a repro is one line that can be copied whole.  DESIGN.md
"Comparison, verdicts and reports".
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from dmlconform.report.coverage import (
    OperatorRow,
    failed_cases,
    fmt_float,
    gating_facts,
    group_rows,
    operator_rows,
    outcome_columns,
    refusals_line,
    spread_failures,
    stale_entries,
    totals_line,
    unexpected_passes,
    visible,
)
from dmlconform.report.distance import distance_text
from dmlconform.report.readings import in_words, words_of
from dmlconform.report.readings import summarize as summarize_readings
from dmlconform.report.view import View
from dmlconform.results import CaseResult, ElementDiff, Outcome, RunResult

#: Terminal style of each outcome (counts and headings).
STYLES = {
    Outcome.PASS: "green", Outcome.QUALITY_WARNING: "yellow", Outcome.FAIL: "bold red",
    Outcome.NOT_SUPPORTED: "dim", Outcome.XFAIL: "dim", Outcome.XPASS: "yellow",
    Outcome.CRASH: "bold magenta", Outcome.TIMEOUT: "magenta", Outcome.ERROR: "bold magenta",
}

#: Short names in the operator lines, spelled out in a legend under them.
SHORT = {Outcome.QUALITY_WARNING: "QW", Outcome.NOT_SUPPORTED: "NS"}

#: Data types named in an operator line; more are counted (``+9``).
NAMED_DTYPES = 3

#: Columns the counts of an operator line get at least (names fold on a console narrower than that).
MIN_COUNTS_WIDTH = 24

#: Columns of the diff table; the numeric ones are right-aligned.
DIFF_COLUMNS = ("output", "index", "inputs", "expected", "actual", "distance", "bound", "verdict")
_NUMERIC = frozenset({"expected", "actual", "distance", "bound"})


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


def operator_table(run: RunResult, *, width: int) -> Table:
    """One line per operator: ``!`` where a case of it fails the run, its
    name, its data types (`dtypes_text`), then its cases by outcome
    (`count_fields`), each count with its name so that a line read alone
    (grep) says everything.  Names and data types never wrap; where the
    counts do not fit ``width`` columns they go on as many lines as they
    need, broken between counts at the same place on every line."""
    rows = operator_rows(run)
    present = [o for o in outcome_columns(run) if run.count(o)]
    widths = {o: max(len(str(dict(r.counts)[o])) for r in rows) for o in present}
    names = [(data(r.operator), data(dtypes_text(r, run.feature_level))) for r in rows]
    fixed = 3 + max((len(op) + 2 + len(types) + 2 for op, types in names), default=0)
    table = Table(title="Operators", title_justify="left", box=None, show_header=False, pad_edge=False,
                  padding=(0, 2, 0, 0))
    room = max(MIN_COUNTS_WIDTH, width - fixed)
    fits = width - fixed >= MIN_COUNTS_WIDTH   # else names fold on a narrow console
    table.add_column(no_wrap=True, min_width=1)
    for _ in range(2):
        table.add_column(no_wrap=fits, overflow="fold")
    table.add_column(no_wrap=True, min_width=room if not fits else None)
    for row, (operator, types) in zip(rows, names):
        style = STYLES[Outcome.FAIL] if row.failed else ""
        operator.stylize(style)
        table.add_row(Text("!" if row.failed else " ", style=style), operator, types,
                      packed(count_fields(row, widths), width=room))
    return table


def count_fields(row: OperatorRow, widths: dict[Outcome, int]) -> list[Text]:
    """``120 PASS``, ``  3 QW``, blanks for a zero count: the counts of
    ``row`` for each outcome of ``widths`` (the run's, in OUTCOME_ORDER),
    each padded to the widest of its column so that the lines align."""
    counts = dict(row.counts)
    fields = []
    for o, digits in widths.items():
        name = SHORT.get(o, o.value)
        fields.append(Text(f"{counts[o]:>{digits}} {name}", style=STYLES[o]) if counts[o]
                      else Text(" " * (digits + 1 + len(name))))
    return fields


def packed(fields: list[Text], *, width: int) -> Text:
    """``fields`` two spaces apart on lines of at most ``width`` columns
    (a field wider than that alone on its line), lines of blanks left out."""
    lines: list[list[Text]] = [[]]
    used = 0
    for field in fields:
        if lines[-1] and used + 2 + len(field) > width:
            lines.append([])
            used = 0
        used += (2 if lines[-1] else 0) + len(field)
        lines[-1].append(field)
    kept = [Text("  ").join(line) for line in lines if any(f.plain.strip() for f in line)]
    text = Text("\n").join(kept)
    text.rstrip()
    return text


def dtypes_text(row: OperatorRow, level: str) -> str:
    """``FLOAT32,FLOAT16,INT8``, ``FLOAT32,FLOAT16,INT8 +8`` past `NAMED_DTYPES`,
    with `` @5_0,6_4`` where the operator's levels are not just the run's."""
    names = ",".join(row.dtypes[:NAMED_DTYPES])
    more = len(row.dtypes) - NAMED_DTYPES
    levels = "" if row.levels == (level,) else " @" + ",".join(row.levels)
    return f"{names}{f' +{more}' if more > 0 else ''}{levels}"


def legend(run: RunResult, *, verbose: bool) -> list[Text]:
    """``QW = QUALITY_WARNING, NS = NOT_SUPPORTED, ! = fails the run`` under
    the operator lines, naming only what they show."""
    if verbose:
        return []
    parts = [f"{short} = {o.value}" for o, short in SHORT.items() if run.count(o)]
    if any(run.fails(c) for c in run.cases):
        parts.append("! = an operator with a case that fails the run")
    return [Text(", ".join(parts), style="dim")] if parts else []


def diff_table(case: CaseResult, *, worst: int) -> Table:
    """The first ``worst`` elements of ``case.worst`` (the worst first), each
    distance in words (`distance_text`)."""
    shown = case.worst[:worst]
    title = f"worst {len(shown)} of {len(case.worst)} elements" if len(shown) < len(case.worst) else None
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  collapse_padding=True)
    for name in DIFF_COLUMNS:
        table.add_column(name, justify="right" if name in _NUMERIC else "left", overflow="fold")
    for d in shown:
        table.add_row(data(d.output), "[" + ", ".join(map(str, d.index)) + "]", data(inputs_text(d)),
                      fmt_float(d.expected), fmt_float(d.actual),
                      distance_text(d.expected, d.actual, d.ulp), fmt_float(d.bound),
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


def render(run: RunResult, console: Console, view: View | None = None) -> None:
    """Print the summary of ``run`` on ``console`` as ``view`` says (default
    `View()`; the module docstring gives the order, the totals line last)."""
    view = view or View()
    console.print(run_line(run), soft_wrap=True)
    console.print(summary_table(run) if view.verbose else operator_table(run, width=console.width))
    for line in legend(run, verbose=view.verbose):
        console.print(line, soft_wrap=True)
    for line in reading_lines(run, verbose=view.verbose):
        console.print(line, soft_wrap=True)
    print_failures(run, console, view)
    warnings = warning_lines(run)
    if warnings:
        console.print()
    for line in warnings:
        console.print(line, soft_wrap=True)
    console.print()
    for line in header_lines(run):
        console.print(line, soft_wrap=True)
    console.print(totals(run), soft_wrap=True)


def run_line(run: RunResult) -> Text:
    """``cpu 0.1.0 on numpy 2.4 on x86_64, feature level 6_4, seed 0``"""
    flush = ", subnormals flushed" if run.flush_subnormals else ""
    return data(f"{run.backend} {run.backend_version} on {run.device}, feature level {run.feature_level}, "
                f"seed {run.seed}{flush}")


def header_lines(run: RunResult) -> list[Text]:
    """The facts of the run printed again just above the totals, so that
    the end of a log says everything: the run line, the command (with the
    backend's options, such as ``faults=``), the gating facts."""
    refusals = refusals_line(run)
    return [run_line(run), Text.assemble(("command: ", "bold"), visible(run.command)), *gating_lines(run),
            *([data(refusals, "bold")] if refusals else [])]


def print_failures(run: RunResult, console: Console, view: View) -> None:
    """The failing cases, `spread_failures` order; the first ``view.failures``
    in full, then one line counting the rest and naming report.html."""
    failing = failed_cases(run) if view.verbose and view.failures is None else spread_failures(run)
    shown = failing if view.failures is None else failing[:view.failures]
    for case in shown:
        console.print()
        print_case(case, console, worst=view.worst)
    if len(shown) < len(failing):
        console.print()
        console.print(more_line(len(failing) - len(shown), view.html), soft_wrap=True)


def print_case(case: CaseResult, console: Console, *, worst: int) -> None:
    """A failing case: its heading, its worst elements, its repro line."""
    console.print(case_heading(case), soft_wrap=True)
    if case.worst and worst:
        console.print(diff_table(case, worst=worst))
    if case.repro:
        console.print(Text.assemble(("repro: ", "dim"), visible(case.repro)), soft_wrap=True)


def more_line(more: int, html: str) -> Text:
    """``and 12 more failing cases: see reports/x/report.html (--show-failures N shows more)``"""
    where = f"see {html}" if html else "see report.html"
    noun = "case" if more == 1 else "cases"
    return Text.assemble(("and ", "bold"), (f"{more} more failing {noun}", STYLES[Outcome.FAIL]),
                         visible(f": {where} (--show-failures N shows more)"))


def reading_lines(run: RunResult, *, verbose: bool = False) -> list[Text]:
    """The readings of ambiguous docs (docs/ambiguities.md) in words
    (`readings.in_words`: what the doc leaves open, what the backend did,
    that it is accepted), two lines each: where the backend mixed readings
    always (no one reading explains its results), and with ``verbose``
    every one where it took another than the primary reading.  A reading
    taken is a PASS all the same: by default only what matters is said."""
    words = words_of(run.ambiguities)
    lines = []
    for taken in summarize_readings(run.cases):
        if taken.mixed or (verbose and taken.notable):
            opened, did = in_words(taken, words, run.backend)
            lines += [Text.assemble(("reading: ", "cyan"), visible(opened)), data(f"  {did}")]
    return lines


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
