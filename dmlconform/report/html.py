"""report.html: one self-contained page (inline CSS, no script, no network)
for a person who would rather look than read.

Header (backend, device, level, seed, command, times), the operator x data
type matrix coloured by each cell's worst outcome, the coverage table, then a
section per failing case: message, repro command, the worst elements, and an
SVG scatter of ULP error against input value.  Every text from the data goes
through `html.escape`; SVG coordinates are formatted to two decimals, so the
same `RunResult` gives the same bytes.  DESIGN.md "Comparison, verdicts and
reports".
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

from dmlconform.report.coverage import (
    Coverage,
    GroupRow,
    count_outcomes,
    dtype_key,
    failed_cases,
    fmt_float,
    fmt_ulp,
    gating_facts,
    group_rows,
    plot_ulp,
    stale_entries,
    summarise,
    totals_line,
    unexpected_passes,
    visible,
    worst_outcome,
)
from dmlconform.report.readings import summarize as summarize_readings
from dmlconform.report.terminal import inputs_text
from dmlconform.results import CaseResult, ElementDiff, Outcome, RunResult

#: Background colour of a cell by its worst outcome.
COLOURS = {
    Outcome.PASS: "#c8e6c9", Outcome.QUALITY_WARNING: "#fff59d", Outcome.FAIL: "#ef9a9a",
    Outcome.NOT_SUPPORTED: "#e0e0e0", Outcome.XFAIL: "#eeeeee", Outcome.XPASS: "#ffe082",
    Outcome.CRASH: "#ce93d8", Outcome.TIMEOUT: "#b39ddb", Outcome.ERROR: "#f48fb1",
}

CSS = "\n".join(
    [
        "body{font-family:system-ui,sans-serif;margin:1.5em;color:#212121}",
        "table{border-collapse:collapse;margin:.5em 0 1.5em}",
        "th,td{border:1px solid #bdbdbd;padding:.2em .5em;text-align:left;vertical-align:top}",
        "td.num{text-align:right;font-variant-numeric:tabular-nums}",
        "pre{background:#f5f5f5;padding:.5em;white-space:pre-wrap;word-break:break-all}",
        "dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em}dt{font-weight:bold}dd{margin:0}",
        "section.case{border-top:2px solid #9e9e9e;margin-top:1.5em}",
        "svg{background:#fafafa;border:1px solid #e0e0e0}",
    ]
    + [f".o-{o.value}{{background:{c}}}" for o, c in COLOURS.items()]
)


def esc(text: object) -> str:
    """Text from the data, escaped for HTML (quotes included) with control characters made visible."""
    return html.escape(visible(str(text)), quote=True)


def _row(cells: Iterable[str], *, tag: str = "td") -> str:
    return "<tr>" + "".join(c if c.startswith("<t") else f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def _table(head: Iterable[str], rows: Iterable[str], *, ident: str = "") -> str:
    attr = f' id="{ident}"' if ident else ""
    return f"<table{attr}><thead>{_row((esc(h) for h in head), tag='th')}</thead><tbody>" + "".join(rows) + "</tbody></table>"


def header(run: RunResult) -> str:
    """Title and the facts of the run as a definition list."""
    facts = (("backend", f"{run.backend} {run.backend_version}"), ("device", run.device),
             ("feature level", run.feature_level), ("seed", run.seed),
             ("flush subnormals", "yes" if run.flush_subnormals else "no"), ("run", run.run_id),
             ("command", run.command), ("started", run.started), ("finished", run.finished),
             *gating_facts(run))
    verdict = "FAILED" if run.failed else "OK"
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts)
    return (f"<h1>dmlconform report: {esc(run.backend)}</h1><dl>{items}</dl>"
            f'<p id="totals"><strong>{verdict}</strong> {esc(totals_line(run))}</p>')


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


def _cell(rows: list[GroupRow]) -> str:
    if not rows:
        return "<td></td>"
    cases = [c for r in rows for c in r.cases]
    worst = worst_outcome(c.outcome for c in cases)
    text = "<br>".join(f"{n} {o.value}" for o, n in count_outcomes(cases) if n)
    return f'<td class="o-{worst.value}" title="worst: {worst.value}">{text}</td>'


def summary_matrix(run: RunResult) -> str:
    """Operators down, data types across; each cell counts the outcomes over all levels."""
    cells: dict[tuple[str, str], list[GroupRow]] = {}
    for row in group_rows(run):
        cells.setdefault((row.operator, row.dtype), []).append(row)
    dtypes = sorted({t for _, t in cells}, key=dtype_key)
    operators = sorted({op for op, _ in cells})
    body = [_row([esc(op)] + [_cell(cells.get((op, t), [])) for t in dtypes]) for op in operators]
    return "<h2>Summary</h2>" + _table(["operator", *dtypes], body, ident="summary")


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
                                                               fmt_ulp(d.ulp), fmt_float(d.bound))),
                  f'<td class="o-{esc(d.verdict)}">{esc(d.verdict)}</td>'])
            for d in worst]


# --------------------------------------------------------------------------- SVG scatter

W, H = 480, 240          # plot size, in SVG units
LEFT, BOTTOM, TOP = 64, 40, 20
#: Plot x of non-finite inputs, left of (NaN, -inf) and right of (+inf) the finite range.
X_NAN, X_NEG_INF, X_POS_INF = LEFT + 8.0, LEFT + 20.0, W - 12.0
X_LO, X_HI = LEFT + 36.0, W - 28.0


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
    return f'<text x="{x:.2f}" y="{y:.2f}" text-anchor="{anchor}" font-size="10"{extra}>{esc(text)}</text>'


def _x_labels(values: list[float]) -> list[str]:
    """Under the axis: the smallest and largest finite input, and nan/-inf/inf where present."""
    y = H - BOTTOM + 14
    finite = [v for v in values if math.isfinite(v)]
    labels = [_label(X_LO, y, fmt_float(min(finite))), _label(X_HI, y, fmt_float(max(finite)))] if finite else []
    for text, x, hit in (("nan", X_NAN, any(math.isnan(v) for v in values)),
                         ("-inf", X_NEG_INF, -math.inf in values), ("inf", X_POS_INF, math.inf in values)):
        if hit:
            labels.append(_label(x, y + 10, text))
    return labels


def scatter_svg(case: CaseResult) -> str:
    """ULP error (log10(1 + ULP), up) against the first input's value, one dot per element."""
    points = case.worst
    values = [d.inputs[0][1] if d.inputs else float(i) for i, d in enumerate(points)]
    top = max((math.log10(1 + plot_ulp(d.ulp)) for d in points), default=1.0) or 1.0
    name = points[0].inputs[0][0] if points and points[0].inputs else "element"
    base = H - BOTTOM
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
              f'role="img" aria-label="ULP error against {esc(name)}">'),
             f'<line x1="{LEFT}" y1="{base}" x2="{W - 4}" y2="{base}" stroke="#616161"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="#616161"/>',
             _label(W / 2, H - 4, f"{name} (symlog)", extra=' font-weight="bold"'),
             _label(12, H / 2, "ULP (log)", extra=f' font-weight="bold" transform="rotate(-90 12 {H / 2:.2f})"'),
             _label(LEFT - 4, TOP + 4, f"{10 ** top - 1:.3g}", anchor="end"),
             _label(LEFT - 4, base, "0", anchor="end"),
             *_x_labels(values)]
    for x, d in zip(_x_positions(values), points):
        y = base - (base - TOP) * (math.log10(1 + plot_ulp(d.ulp)) / top)
        colour = COLOURS[Outcome.FAIL if d.verdict == "FAIL" else Outcome.QUALITY_WARNING]
        parts.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="4" fill="{colour}" stroke="#424242">'
                     f'<title>{esc(inputs_text(d))}: expected {esc(fmt_float(d.expected))}, actual '
                     f'{esc(fmt_float(d.actual))}, {esc(fmt_ulp(d.ulp))} ULP</title></circle>')
    return "".join(parts) + "</svg>"


def details(case: CaseResult) -> str:
    """``rank 4, packed; 64 elements: 58 PASS, 1 QUALITY_WARNING, 5 FAIL; max 12 ULP; 0.030 s``"""
    passed, warned, failed = case.counts
    parts = [f"rank {case.dims}, {case.layout}",
             f"{case.elements} elements: {passed} PASS, {warned} QUALITY_WARNING, {failed} FAIL",
             f"max {case.max_ulp} ULP", f"{case.seconds:.3f} s"]
    if case.alternatives:
        parts.append("alternatives: " + ", ".join(f"{name} ({n})" for name, n in case.alternatives))
    if case.edges:
        parts.append("edges: " + ", ".join(case.edges))
    return "; ".join(parts)


def case_section(number: int, case: CaseResult) -> str:
    """The section of one failing case."""
    parts = [f'<section class="case" id="case-{number}">',
             f'<h3><span class="o-{case.outcome.value}">{case.outcome.value}</span> {esc(case.case_id)}</h3>',
             f"<p>{esc(case.operator)} {esc(case.dtype)} @ {esc(case.level)}: {esc(case.message)}</p>",
             f'<p class="facts">{esc(details(case))}</p>']
    if case.repro:
        parts.append(f"<pre><code>{esc(case.repro)}</code></pre>")
    if case.worst:
        head = ["output", "index", "inputs", "expected", "actual", "ULP", "bound", "verdict"]
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
    sections = "".join(case_section(i, c) for i, c in enumerate(failing, 1))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dmlconform report: {esc(run.backend)} {esc(run.run_id)}</title>"
        f"<style>\n{CSS}\n</style></head><body>\n"
        f"{header(run)}\n{gating_sections(run)}{summary_matrix(run)}\n{readings_section(run)}"
        f"{coverage_table(summarise(run))}\n"
        f"<h2>Failing cases ({len(failing)})</h2>\n{sections or '<p>None.</p>'}\n</body></html>\n"
    )
