"""report.html: one self-contained page for a person who would rather look
than read.  No network: inline CSS, one small inline script (the matrix's
controls and the filter box) allowed by its hash in a Content-Security-Policy
that forbids everything else.

What failed comes first, so that a failing run's first screen never looks
like a passing one's (issue #33): the verdict with the totals on red or
green, then the failing operators (most failing cases first, their counts by
outcome, a link per data type to the cases, the first message), or one line
saying nothing failed.  Then the run's facts (backend, device, level, seed,
command, times), the operator x data type matrix coloured by each cell's
worst outcome (a hue per outcome, bold where any is not PASS; failing
operators first; controls to show only failing operators or those with any
outcome but PASS, or every operator by name; in a scrolling box with a
sticky header row and first column, so it never makes the page wider than
the window; a cell with failing cases links to them), the coverage table,
then the failing cases grouped by operator x data type under a filter box:
per case its message, repro command, the worst elements (distances in words,
`report.distance`) and an SVG scatter of ULP error against the input value,
or against the element's index where the elements shown share input values
(`x_axis`; a note under the plot says which), whose labels are placed so
that they never overlap or leave the plot.  Every text from the data goes
through `html.escape`; SVG coordinates are formatted to two decimals, so the
same `RunResult` gives the same bytes.  DESIGN.md "Comparison, verdicts and
reports".
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
from collections.abc import Iterable
from dataclasses import dataclass

from dmlconform.report.coverage import (
    Coverage,
    GroupRow,
    count_outcomes,
    dtype_key,
    failed_cases,
    fmt_float,
    gating_facts,
    group_rows,
    plot_ulp,
    stale_entries,
    summarise,
    totals_line,
    unexpected_passes,
    visible,
    worst_element,
    worst_outcome,
)
from dmlconform.report.distance import distance_text, short_float, ulp_count
from dmlconform.report.readings import summarize as summarize_readings
from dmlconform.report.terminal import inputs_text
from dmlconform.results import CaseResult, ElementDiff, Outcome, RunResult

#: Background colour of a cell by its worst outcome: each outcome a hue of
#: its own (no two closer than CIE76 delta E 20, tests/report/test_html.py),
#: so that a cell with any non-pass outcome never reads as PASS, nor a FAIL
#: as an ERROR; dark text stays readable on every one.
COLOURS = {
    Outcome.PASS: "#c8e6c9", Outcome.QUALITY_WARNING: "#fff176", Outcome.FAIL: "#ef5350",
    Outcome.NOT_SUPPORTED: "#b0bec5", Outcome.XFAIL: "#a1887f", Outcome.XPASS: "#80deea",
    Outcome.CRASH: "#ba68c8", Outcome.TIMEOUT: "#7986cb", Outcome.ERROR: "#ff9800",
}

#: Short outcome names in the matrix cells, spelled out in a legend (and each cell's title).
SHORT = {Outcome.QUALITY_WARNING: "QW", Outcome.NOT_SUPPORTED: "NS"}

CSS = "\n".join(
    [
        "body{font-family:system-ui,sans-serif;margin:1.5em;color:#212121}",
        "table{border-collapse:collapse;margin:.5em 0 1.5em}",
        "th,td{border:1px solid #bdbdbd;padding:.2em .5em;text-align:left;vertical-align:top}",
        "td.num{text-align:right;font-variant-numeric:tabular-nums}",
        "pre{background:#f5f5f5;padding:.5em;white-space:pre-wrap;word-break:break-all}",
        "dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em}dt{font-weight:bold}"
        "dd{margin:0;overflow-wrap:anywhere}",
        # the matrix scrolls inside its box, never the page; header row and operator column stay in view
        ".matrix{width:fit-content;max-width:100%;max-height:80vh;overflow:auto;border:1px solid #bdbdbd;"
        "margin:.5em 0 1.5em}",
        ".matrix table{margin:0;border-collapse:separate;border-spacing:0;font-size:.85em}",
        ".matrix th,.matrix td{border-width:0 1px 1px 0;white-space:nowrap}",
        ".matrix thead th{position:sticky;top:0;z-index:2;background:#f5f5f5}",
        ".matrix tbody th{position:sticky;left:0;z-index:1;background:#fff;font-weight:normal}",
        ".matrix thead th:first-child{left:0;z-index:3}",
        ".matrix td a{color:inherit;display:block}",
        "#failing-cases input{font:inherit;width:min(40em,100%);padding:.2em .4em}",
        "section.case{border-top:2px solid #9e9e9e;margin-top:1.5em;overflow-x:auto}",
        "svg{background:#fafafa;border:1px solid #e0e0e0;max-width:100%;height:auto}",
        # the verdict first, on a colour a glance tells apart: a failing run's first screen is not a passing one's
        "#totals{font-size:1.25em;padding:.4em .7em;border-radius:4px;margin:.5em 0}",
        "#totals.failed{background:#ffebee;border:2px solid #c62828}#totals.ok{background:#e8f5e9;border:2px solid "
        "#2e7d32}",
        "#failures table{font-size:.95em}#failures td a{margin-right:.6em}",
        ".badge{padding:0 .35em;border-radius:3px;margin-right:.3em;white-space:nowrap}",
        ".matrix td.nonpass{font-weight:bold}",
        ".controls label{margin-right:1.5em}.controls select{font:inherit}",
        "p.plot-note{font-size:.9em;color:#424242;margin:.2em 0 1em}",
    ]
    + [f".o-{o.value}{{background:{c}}}" for o, c in COLOURS.items()]
)

#: The page's one script, two parts.  The matrix's controls (`MATRIX_CONTROLS`):
#: show every operator, those with any outcome other than PASS, or those that
#: fail the run (each row's ``data-nonpass``/``data-failing`` counts), failing
#: first or by name (``data-name``), and say how many rows are shown.  The
#: filter box: shows the failing cases whose text holds every word typed (case
#: id, operator, data type, level, outcome, message), hides the others and the
#: groups left empty, and says how many are shown.  Both read attributes and
#: set ``hidden``/``textContent`` and the rows' order only: nothing typed or
#: read becomes markup.
SCRIPT = """
(function () {
  var show = document.getElementById("matrix-show"), order = document.getElementById("matrix-order");
  var table = document.getElementById("summary");
  if (!show || !order || !table) { return; }
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var note = document.getElementById("matrix-shown");
  function count(row, name) { return parseInt(row.getAttribute("data-" + name), 10) || 0; }
  function update() {
    var sorted = rows.slice().sort(function (a, b) {
      var byName = a.getAttribute("data-name") < b.getAttribute("data-name") ? -1 : 1;
      return order.value === "failing" ? (count(b, "failing") - count(a, "failing")) || byName : byName;
    });
    var shown = 0;
    sorted.forEach(function (row) {
      row.hidden = show.value !== "all" && count(row, show.value) === 0;
      shown += row.hidden ? 0 : 1;
      body.appendChild(row);
    });
    note.textContent = shown + " of " + rows.length + " operators shown";
  }
  show.addEventListener("change", update);
  order.addEventListener("change", update);
  update();
})();
(function () {
  var box = document.getElementById("filter"), count = document.getElementById("shown");
  if (!box) { return; }
  var groups = Array.prototype.slice.call(document.querySelectorAll("div.group"));
  box.addEventListener("input", function () {
    var words = box.value.toLowerCase().split(/\\s+/).filter(Boolean), shown = 0, total = 0;
    groups.forEach(function (group) {
      var any = false;
      group.querySelectorAll("section.case").forEach(function (section) {
        var text = section.getAttribute("data-search"), hit = words.every(function (w) {
          return text.indexOf(w) >= 0;
        });
        section.hidden = !hit; any = any || hit; shown += hit ? 1 : 0; total += 1;
      });
      group.hidden = !any;
    });
    count.textContent = words.length ? shown + " of " + total + " shown" : "";
  });
})();
"""


def content_policy() -> str:
    """The page's Content-Security-Policy: nothing from anywhere, inline
    styles, and the one script whose SHA-256 is `SCRIPT`'s."""
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"


def esc(text: object) -> str:
    """Text from the data, escaped for HTML (quotes included) with control characters made visible."""
    return html.escape(visible(str(text)), quote=True)


def _row(cells: Iterable[str], *, tag: str = "td") -> str:
    return "<tr>" + "".join(c if c.startswith("<t") else f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def _table(head: Iterable[str], rows: Iterable[str], *, ident: str = "") -> str:
    attr = f' id="{ident}"' if ident else ""
    return f"<table{attr}><thead>{_row((esc(h) for h in head), tag='th')}</thead><tbody>" + "".join(rows) + "</tbody></table>"


def header(run: RunResult) -> str:
    """Title and the verdict with the totals, on red or green: the first
    thing a person sees says whether the run failed."""
    verdict, kind = ("FAILED", "failed") if run.failed else ("OK", "ok")
    return (f"<h1>dmlconform report: {esc(run.backend)}</h1>"
            f'<p id="totals" class="{kind}"><strong>{verdict}</strong> {esc(totals_line(run))}</p>')


def run_facts(run: RunResult) -> str:
    """The facts of the run as a definition list (after what failed)."""
    facts = (("backend", f"{run.backend} {run.backend_version}"), ("device", run.device),
             ("feature level", run.feature_level), ("seed", run.seed),
             ("flush subnormals", "yes" if run.flush_subnormals else "no"), ("run", run.run_id),
             ("command", run.command), ("started", run.started), ("finished", run.finished),
             *gating_facts(run))
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts)
    return f'<dl id="facts">{items}</dl>'


def badges(counts: Iterable[tuple[Outcome, int]]) -> str:
    """``3 FAIL`` ``1 ERROR``: each count on its outcome's colour."""
    return "".join(f'<span class="badge o-{o.value}">{n} {o.value}</span>' for o, n in counts if n)


#: A failing operator's first message in the summary, cut to this many characters (the case has it whole).
MESSAGE_CHARS = 160


def failure_summary(run: RunResult, failing: tuple[CaseResult, ...], anchors: dict[tuple[str, str], str]) -> str:
    """What failed, first: per operator (most failing cases first) its
    failing cases by outcome, a link per data type to those cases, and the
    first one's message; for a run where nothing failed, one line that says so."""
    if not failing:
        return ('<div id="failures"><h2>What failed</h2><p>Nothing: no case failed the run (the matrix below '
                "shows every outcome).</p></div>")
    by_op: dict[str, list[CaseResult]] = {}
    for case in failing:
        by_op.setdefault(case.operator, []).append(case)
    order = sorted(by_op, key=lambda op: (-len(by_op[op]), op))
    rows = []
    for op in order:
        cases = by_op[op]
        dtypes = dict.fromkeys(c.dtype for c in cases)
        links = "".join(f'<a href="#{anchors[(op, t)]}">{esc(t)} ({sum(c.dtype == t for c in cases)})</a>'
                        for t in dtypes)
        message = cases[0].message if len(cases[0].message) <= MESSAGE_CHARS else cases[0].message[:MESSAGE_CHARS - 1] + "…"
        rows.append(_row([f'<th scope="row"><a href="#{anchors[(op, cases[0].dtype)]}">{esc(op)}</a></th>',
                          badges(count_outcomes(cases)), links, esc(message)]))
    total = len(run.cases)
    title = (f"What failed: {len(failing)} of {total} case{'' if total == 1 else 's'}, {len(order)} "
             f"operator{'' if len(order) == 1 else 's'}")
    return (f'<div id="failures"><h2>{esc(title)}</h2>'
            + _table(["operator", "failing cases", "data types (links to the cases)", "first message"], rows,
                     ident="failing-operators") + "</div>")


def gating_sections(run: RunResult) -> str:
    """Tolerance overrides, stale baseline entries and unexpected passes
    (XPASS that do not fail the run), each only when there are any."""
    parts = []
    if run.overrides:
        body = [_row([esc(o.operator), esc(o.dtype), esc("" if o.ulp is None else o.ulp),
                      esc("" if o.bound_factor is None else f"{o.bound_factor:g}"), esc(o.reason)])
                for o in run.overrides]
        parts.append("<h2>Tolerance overrides</h2>" + _table(["operator", "data type", "ULP budget", "bound factor",
                                                               "reason"], body, ident="overrides"))
    stale = stale_entries(run)
    if stale:
        body = [_row([esc(key), esc(reason)]) for key, reason in stale]
        parts.append(f"<h2>Stale baseline entries ({len(stale)})</h2><p>They match no case of this run.</p>"
                     + _table(["entry", "reason"], body, ident="stale"))
    xpass = unexpected_passes(run)
    if xpass:
        body = [_row([esc(c.case_id), esc(c.message)]) for c in xpass]
        parts.append(f"<h2>Unexpected passes ({len(xpass)})</h2>" + _table(["case", "message"], body, ident="xpass"))
    return "".join(f"{part}\n" for part in parts)


def _cell(rows: list[GroupRow], anchor: str) -> str:
    """A matrix cell: one ``15 FAIL`` line per outcome present (short names,
    `SHORT`), coloured by the worst, in bold where any is not PASS; a link
    to ``#anchor`` where it has failing cases."""
    if not rows:
        return "<td></td>"
    cases = [c for r in rows for c in r.cases]
    worst = worst_outcome(c.outcome for c in cases)
    counts = [(o, n) for o, n in count_outcomes(cases) if n]
    text = "<br>".join(f"{n} {SHORT.get(o, o.value)}" for o, n in counts)
    title = esc(", ".join(f"{n} {o.value}" for o, n in counts))
    if anchor:
        text = f'<a href="#{anchor}">{text}</a>'
    nonpass = " nonpass" if worst is not Outcome.PASS else ""
    return f'<td class="o-{worst.value}{nonpass}" title="{title}">{text}</td>'


#: The matrix's controls: which operators it shows and in what order (`SCRIPT` acts on them).
MATRIX_CONTROLS = (
    '<p class="controls"><label>show <select id="matrix-show" aria-label="operators shown in the matrix">'
    '<option value="all">every operator</option><option value="nonpass">operators with an outcome other than '
    'PASS</option><option value="failing">operators that fail the run</option></select></label>'
    '<label>order <select id="matrix-order" aria-label="order of the matrix rows">'
    '<option value="failing">failing first</option><option value="name">by name</option></select></label>'
    '<span id="matrix-shown"></span></p>')


def summary_matrix(run: RunResult, anchors: dict[tuple[str, str], str]) -> str:
    """Operators down, data types across; each cell counts the outcomes over
    all levels and links to its failing cases (``anchors``, by operator and
    data type).  Operators with failing cases first (then by name), each row
    carrying its counts for `SCRIPT`'s filter and order.  In a box that
    scrolls, so that the page stays as wide as the window whatever the run."""
    cells: dict[tuple[str, str], list[GroupRow]] = {}
    for row in group_rows(run):
        cells.setdefault((row.operator, row.dtype), []).append(row)
    dtypes = sorted({t for _, t in cells}, key=dtype_key)
    cases: dict[str, list[CaseResult]] = {}
    for (op, _), rows in cells.items():
        cases.setdefault(op, []).extend(c for r in rows for c in r.cases)
    failing = {op: sum(run.fails(c) for c in cs) for op, cs in cases.items()}
    nonpass = {op: sum(c.outcome is not Outcome.PASS for c in cs) for op, cs in cases.items()}
    body = [f'<tr data-name="{esc(op)}" data-failing="{failing[op]}" data-nonpass="{nonpass[op]}">'
            + f'<th scope="row">{esc(op)}</th>'
            + "".join(_cell(cells.get((op, t), []), anchors.get((op, t), "")) for t in dtypes) + "</tr>"
            for op in sorted(cases, key=lambda op: (-failing[op], op))]
    legend = " ".join(f'<span class="badge o-{o.value}">{esc(SHORT.get(o, o.value))}'
                      f'{esc(" = " + o.value) if o in SHORT else ""}</span>' for o in COLOURS)
    return (f"<h2>Summary</h2><p>Cases by outcome per operator and data type, each cell coloured by its worst "
            f"outcome (in bold where any is not PASS): {legend}. A cell with failing cases links to them.</p>"
            f'{MATRIX_CONTROLS}<div class="matrix">' + _table(["operator", *dtypes], body, ident="summary")
            + "</div>")


def failure_anchors(failing: Iterable[CaseResult]) -> dict[tuple[str, str], str]:
    """``failing-3``: the anchor of each operator x data type with failing
    cases, numbered in the order of the page."""
    anchors: dict[tuple[str, str], str] = {}
    for case in failing:
        anchors.setdefault((case.operator, case.dtype), f"failing-{len(anchors) + 1}")
    return anchors


def failing_section(failing: tuple[CaseResult, ...], anchors: dict[tuple[str, str], str]) -> str:
    """The failing cases under a filter box, a ``div.group`` per operator x
    data type (its anchor the matrix links to), cases numbered in order."""
    if not failing:
        return '<h2 id="failing-cases">Failing cases (0)</h2>\n<p>None.</p>\n'
    groups: dict[str, list[str]] = {}
    for number, case in enumerate(failing, 1):
        groups.setdefault(anchors[(case.operator, case.dtype)], []).append(case_section(number, case))
    firsts = {anchors[(c.operator, c.dtype)]: c for c in reversed(failing)}
    parts = [f'<div class="group" id="{anchor}"><h3>{esc(firsts[anchor].operator)} {esc(firsts[anchor].dtype)} '
             f"({len(sections)} failing)</h3>" + "".join(sections) + "</div>\n"
             for anchor, sections in groups.items()]
    search = ('<p><input type="search" id="filter" aria-label="filter failing cases" placeholder="filter: words '
              'from the case id, operator, data type, outcome or message"> <span id="shown"></span></p>')
    return f'<div id="failing-cases"><h2>Failing cases ({len(failing)})</h2>\n{search}\n{"".join(parts)}</div>\n'


def coverage_table(coverage: Coverage) -> str:
    """Per operator: data types, levels, ranks, layouts, edge classes hit."""
    def pairs(items: Iterable[tuple[object, int]]) -> str:
        return esc(", ".join(f"{k} ({n})" for k, n in items))

    body = [_row([esc(o.operator), f'<td class="num">{o.cases}</td>', esc(" ".join(o.dtypes)),
                  esc(" ".join(o.levels)), pairs(o.dims), pairs(o.layouts), pairs(o.edges),
                  f'<td class="num">{o.combinations} / {o.possible}</td>'])
            for o in coverage.operators]
    head = ["operator", "cases", "data types", "levels", "ranks", "layouts", "edge classes", "rank x type x level"]
    return "<h2>Coverage</h2>" + _table(head, body, ident="coverage")


def diff_rows(worst: Iterable[ElementDiff]) -> list[str]:
    return [_row([esc(d.output), esc(list(d.index)), esc(inputs_text(d)),
                  *(f'<td class="num">{esc(v)}</td>' for v in (fmt_float(d.expected), fmt_float(d.actual),
                                                               distance_text(d.expected, d.actual, d.ulp),
                                                               fmt_float(d.bound))),
                  f'<td class="o-{esc(d.verdict)}">{esc(d.verdict)}</td>'])
            for d in worst]


# --------------------------------------------------------------------------- SVG scatter

W, H = 480, 260          # plot size, in SVG units
LEFT, BOTTOM, TOP = 64, 56, 20
#: Plot x of non-finite inputs, left of (NaN, -inf) and right of (+inf) the finite range.
X_NAN, X_NEG_INF, X_POS_INF = LEFT + 8.0, LEFT + 20.0, W - 12.0
X_LO, X_HI = LEFT + 36.0, W - 28.0
#: Tick labels: monospace at 10 units, so a character is 0.6 * 10 wide
#: (DejaVu Sans Mono 0.602, Liberation Mono 0.600; 6.2 leaves room); at
#: least GAP apart; under the axis in up to ROWS rows, ROW_HEIGHT apart.
FONT, CHAR_W, GAP, ROWS, ROW_HEIGHT = 10, 6.2, 4.0, 3, 11


def _symlog(x: float) -> float:
    """sign(x) * log10(1 + |x|): input values span many decades and both signs."""
    return math.copysign(math.log10(1.0 + abs(x)), x)


def _x_positions(values: list[float]) -> list[float]:
    """Plot x of each input: finite values scaled symlog between X_LO and X_HI,
    NaN and -inf at fixed places on the left, +inf on the right."""
    finite = [_symlog(v) for v in values if math.isfinite(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 0.0)
    out: list[float] = []
    for v in values:
        if math.isnan(v):
            out.append(X_NAN)
        elif math.isinf(v):
            out.append(X_NEG_INF if v < 0 else X_POS_INF)
        else:
            out.append(X_LO + (X_HI - X_LO) * ((_symlog(v) - lo) / (hi - lo) if hi > lo else 0.5))
    return out


def _label(x: float, y: float, text: str, *, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{x:.2f}" y="{y:.2f}" text-anchor="{anchor}" font-size="{FONT}"{extra}>{esc(text)}</text>'


@dataclass(frozen=True, slots=True)
class Tick:
    """A tick label placed under the x axis: centred on ``x``, in ``row`` (0 nearest the axis)."""

    x: float
    row: int
    text: str


def place_ticks(wanted: list[tuple[float, str]], *, lo: float = 2.0, hi: float = W - 2.0) -> tuple[Tick, ...]:
    """Tick labels that never overlap or leave the plot: each wanted
    (x, text), in order of importance, is moved inward until its whole
    width lies in [lo, hi], then put in the first row where it keeps GAP
    from every label there; one that fits no row is left out (the dots'
    tooltips still say every value)."""
    placed: list[Tick] = []
    for x, text in wanted:
        half = len(text) * CHAR_W / 2
        centre = min(max(x, lo + half), hi - half)
        for row in range(ROWS):
            if all(abs(centre - t.x) >= half + len(t.text) * CHAR_W / 2 + GAP for t in placed if t.row == row):
                placed.append(Tick(centre, row, text))
                break
    return tuple(sorted(placed, key=lambda t: (t.row, t.x)))


def _ticks(wanted: list[tuple[float, str]]) -> tuple[str, ...]:
    """Tick labels under the axis, placed by `place_ticks`."""
    base = H - BOTTOM
    return tuple(_label(t.x, base + 12 + t.row * ROW_HEIGHT, t.text, extra=' font-family="monospace"')
                 for t in place_ticks(wanted))


def _x_labels(values: list[float]) -> tuple[str, ...]:
    """Under the axis: the smallest and largest finite input first, then
    nan/-inf/inf where present, placed by `place_ticks`."""
    finite = [v for v in values if math.isfinite(v)]
    wanted = [(X_LO, short_float(min(finite))), (X_HI, short_float(max(finite)))] if finite else []
    if finite and min(finite) == max(finite):
        wanted = [((X_LO + X_HI) / 2, short_float(finite[0]))]
    for text, x, hit in (("NaN", X_NAN, any(math.isnan(v) for v in values)),
                         ("-inf", X_NEG_INF, -math.inf in values), ("inf", X_POS_INF, math.inf in values)):
        if hit:
            wanted.append((x, text))
    return _ticks(wanted)


@dataclass(frozen=True, slots=True)
class Axis:
    """The x axis of a case's plot: each dot's x (in the order of
    ``case.worst``), the tick labels, the axis title, and the note under
    the plot that says what x is."""

    xs: tuple[float, ...]
    ticks: tuple[str, ...]
    title: str
    note: str


def _value_axis(points: tuple[ElementDiff, ...]) -> Axis:
    """x is the first input's value, symlog: where the inputs tell the dots apart."""
    values = [d.inputs[0][1] for d in points]
    name = points[0].inputs[0][0]
    return Axis(tuple(_x_positions(values)), _x_labels(values), f"{name} (symlog)",
                f"Each dot is one element; x is its {name}, on a symlog scale (sign(x) log10(1 + |x|)), NaN and "
                "-inf at the left edge, inf at the right; up is its distance in ULP (log scale). Hover a dot for "
                "its values.")


def _index_axis(points: tuple[ElementDiff, ...]) -> Axis:
    """x is the element's place in index order (output, then C order of the
    index), one even step each, its index under the axis: where many
    elements share one input value and would otherwise be one dot."""
    order = sorted(range(len(points)), key=lambda i: (points[i].output, points[i].index))
    rank = {i: r for r, i in enumerate(order)}
    step = (X_HI - X_LO) / (len(points) - 1) if len(points) > 1 else 0.0
    xs = tuple(X_LO + step * rank[i] if step else (X_LO + X_HI) / 2 for i in range(len(points)))
    several = len({d.output for d in points}) > 1
    text = [f"{d.output if several else ''}[{', '.join(map(str, d.index))}]" for d in points]
    wanted = [(xs[order[0]], text[order[0]]), (xs[order[-1]], text[order[-1]])]
    wanted += [(xs[i], text[i]) for i in order[1:-1]]
    if points and all(d.inputs for d in points):
        name = points[0].inputs[0][0]
        shared = len({fmt_float(d.inputs[0][1]) for d in points})
        why = (f"the {len(points)} elements shown share {shared} value{'' if shared == 1 else 's'} of {name}, "
               f"so against {name} they would lie on one another")
    else:
        why = "not every element shown has an input value to plot against"
    return Axis(xs, _ticks(wanted), "element, in index order",
                f"Each dot is one element; x is its place in index order (C order), one even step each, its "
                f"index under the axis ({why}); up is its distance in ULP (log scale). Hover a dot for its values.")


def x_axis(case: CaseResult) -> Axis:
    """Against the first input's value where that tells the elements shown
    apart (every one a value of its own), else against their index."""
    points = case.worst
    if points and all(d.inputs for d in points) and len({fmt_float(d.inputs[0][1]) for d in points}) == len(points):
        return _value_axis(points)
    return _index_axis(points)


def scatter_svg(case: CaseResult) -> str:
    """ULP error (log10(1 + ULP), up) against the first input's value or
    the element's index (`x_axis`), one dot per element."""
    points = case.worst
    axis = x_axis(case)
    top = max((math.log10(1 + plot_ulp(d.ulp)) for d in points), default=1.0) or 1.0
    base = H - BOTTOM
    mono = ' font-family="monospace"'
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
              f'role="img" aria-label="ULP error against {esc(axis.title)}">'),
             f'<line x1="{LEFT}" y1="{base}" x2="{W - 4}" y2="{base}" stroke="#616161"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="#616161"/>',
             _label(W / 2, H - 6, _clipped(axis.title, W - 8), extra=' font-weight="bold"'),
             _label(12, (TOP + base) / 2, "ULP (log)",
                    extra=f' font-weight="bold" transform="rotate(-90 12 {(TOP + base) / 2:.2f})"'),
             _label(LEFT - 4, TOP + 4, ulp_count(round(10 ** top - 1)), anchor="end", extra=mono),
             _label(LEFT - 4, base, "0", anchor="end", extra=mono),
             *axis.ticks]
    for x, d in zip(axis.xs, points):
        y = base - (base - TOP) * (math.log10(1 + plot_ulp(d.ulp)) / top)
        colour = COLOURS[Outcome.FAIL if d.verdict == "FAIL" else Outcome.QUALITY_WARNING]
        parts.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="4" fill="{colour}" stroke="#424242">'
                     f'<title>{esc(d.output)}[{esc(", ".join(map(str, d.index)))}] {esc(inputs_text(d))}: expected '
                     f'{esc(fmt_float(d.expected))}, actual {esc(fmt_float(d.actual))}: '
                     f'{esc(distance_text(d.expected, d.actual, d.ulp))}</title></circle>')
    return "".join(parts) + "</svg>" + f'<p class="plot-note">{esc(axis.note)}</p>'


def _clipped(text: str, width: float) -> str:
    """``text`` cut to fit ``width`` units at CHAR_W a character (an input
    name can be any length), ending in an ellipsis where cut."""
    most = int(width // CHAR_W)
    return text if len(text) <= most else text[:most - 1] + "…"


def details(case: CaseResult) -> str:
    """``rank 4, packed; 64 elements: 58 PASS, 1 QUALITY_WARNING, 5 FAIL; worst: NaN vs 1; 0.030 s``"""
    passed, warned, failed = case.counts
    parts = [f"rank {case.dims}, {case.layout}",
             f"{case.elements} elements: {passed} PASS, {warned} QUALITY_WARNING, {failed} FAIL"]
    worst = worst_element(case)
    if worst is not None:
        parts.append(f"worst: {distance_text(worst.expected, worst.actual, worst.ulp)}")
    parts.append(f"{case.seconds:.3f} s")
    if case.alternatives:
        parts.append("alternatives: " + ", ".join(f"{name} ({n})" for name, n in case.alternatives))
    if case.edges:
        parts.append("edges: " + ", ".join(case.edges))
    return "; ".join(parts)


def case_section(number: int, case: CaseResult) -> str:
    """The section of one failing case."""
    search = " ".join((case.case_id, case.operator, case.dtype, case.level, case.outcome.value, case.message)).lower()
    parts = [f'<section class="case" id="case-{number}" data-search="{esc(search)}">',
             f'<h3><span class="o-{case.outcome.value}">{case.outcome.value}</span> {esc(case.case_id)}</h3>',
             f"<p>{esc(case.operator)} {esc(case.dtype)} @ {esc(case.level)}: {esc(case.message)}</p>",
             f'<p class="facts">{esc(details(case))}</p>']
    if case.repro:
        parts.append(f"<pre><code>{esc(case.repro)}</code></pre>")
    if case.worst:
        head = ["output", "index", "inputs", "expected", "actual", "distance", "bound", "verdict"]
        parts.append(_table(head, diff_rows(case.worst)))
        parts.append(scatter_svg(case))
    return "".join(parts) + "</section>"


def readings_section(run: RunResult) -> str:
    """Which reading of each ambiguity the backend took, per operator
    (docs/ambiguities.md); nothing where no case told readings apart."""
    taken = summarize_readings(run.cases)
    if not taken:
        return ""
    rows = [_row([esc(t.operator), esc(t.ambiguity), esc(t.status), str(t.elements),
                  esc(", ".join(f"{name} {n}" for name, n in t.took))]) for t in taken]
    table = _table(["operator", "ambiguity", "reading taken", "elements", "per reading (primary first)"], rows)
    return f"<h2>Readings of ambiguous docs</h2>\n{table}\n"


def dumps(run: RunResult) -> str:
    """The whole page."""
    failing = failed_cases(run)
    anchors = failure_anchors(failing)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{content_policy()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dmlconform report: {esc(run.backend)} {esc(run.run_id)}</title>"
        f"<style>\n{CSS}\n</style></head><body>\n"
        f"{header(run)}\n{failure_summary(run, failing, anchors)}\n{run_facts(run)}\n{gating_sections(run)}"
        f"{summary_matrix(run, anchors)}\n{readings_section(run)}"
        f"{coverage_table(summarise(run))}\n"
        f"{failing_section(failing, anchors)}<script>{SCRIPT}</script>\n</body></html>\n"
    )
