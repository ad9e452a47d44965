"""report.html: self-contained, escaped, parseable, with the summary matrix and the SVG plots."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.report import html as html_report
from dmlconform.report.coverage import failed_cases
from dmlconform.report.folder import write_reports
from dmlconform.results import Outcome, RunResult
from tests.report.fixtures import (
    case,
    diff,
    full_run_one_failure,
    full_run_passing,
    gemm_failure,
    passing_run,
    sample_run,
    wide_run,
)
from tests.report.strategies import run_results

#: Elements without an end tag.
VOID = {"meta", "br", "line", "circle", "input"}


class Checker(HTMLParser):
    """Records start tags, checks that every element is closed in order, and collects text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Checker:
    checker = Checker()
    checker.feed(page)
    checker.close()
    assert checker.problems == [] and checker.stack == [], (checker.problems, checker.stack)
    return checker


def test_well_formed_and_self_contained() -> None:
    """No network: no link, img, iframe or src; links only to anchors of
    the page; one script, ours, the only one the page's policy allows."""
    page = html_report.dumps(sample_run())
    checker = parse(page)
    tags = [t for t, _ in checker.tags]
    assert "link" not in tags and "img" not in tags and "iframe" not in tags and tags.count("script") == 1
    assert page.count("<script>") == 1 and f"<script>{html_report.SCRIPT}</script>" in page
    assert not re.search(r"src\s*=", page)
    ids = {a.get("id") for _, a in checker.tags}
    links = {a["href"] for t, a in checker.tags if t == "a"}
    assert links == {"#failing-1", "#failing-2", "#failing-3"} and {h[1:] for h in links} <= ids
    policy = html_report.content_policy()
    assert f'<meta http-equiv="Content-Security-Policy" content="{policy}">' in page
    assert policy.startswith("default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-")
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page


def test_data_is_escaped() -> None:
    page = html_report.dumps(sample_run())
    assert page.count("<script") == 1    # ours; the data's is text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot; &#x27;single&#x27;" in page
    assert "ZeroDivisionError\\x00\\x1b[31m" in page


def test_header_summary_coverage() -> None:
    checker = parse(html_report.dumps(sample_run()))
    ids = {a.get("id") for _, a in checker.tags}
    assert {"summary", "coverage", "totals", "case-1", "case-4"} <= ids and "case-5" not in ids
    text = "".join(checker.text)
    assert "dmlconform run --backend cpu --seed 1234 --filter '<script>alert(1)</script>" in text
    assert "2026-11-22T17:00:00Z" in text and "seed1234" in text
    run = sample_run()
    matrix = parse(html_report.summary_matrix(run, html_report.failure_anchors(failed_cases(run))))
    cells = [(a.get("class") or "").split() for t, a in matrix.tags if t == "td" and a.get("class")]
    assert ["o-FAIL", "nonpass"] in cells and ["o-CRASH", "nonpass"] in cells and ["o-PASS"] in cells
    assert all((c[0] != "o-PASS") == ("nonpass" in c) for c in cells)   # bold exactly where not all PASS


def test_failing_case_sections_have_diff_table_and_svg() -> None:
    page = html_report.dumps(sample_run())
    section = page[page.index('id="case-1"'):page.index('id="case-2"')]
    assert "abs-f16-0002" in section
    assert section.count("<circle") == 6 and "<svg" in section
    assert "<td>InputTensor=-inf</td>" not in section and '<td class="num">-inf</td>' in section
    distances = re.findall(r'<td class="num">([^<]*)</td><td class="num">[^<]*</td><td class="o-', section)
    assert distances == ["4096 ULP", "NaN vs 1", "sign differs", "sign differs", "1.2e7 ULP", "3 ULP"]
    assert "<pre><code>dmlconform run --backend cpu --level 6_4 --seed 1234 --case abs-f16-0002</code></pre>" in section
    crash = page[page.index('id="case-2"'):page.index('id="case-3"')]
    assert "<svg" not in crash    # no element diffs to plot


def test_svg_points_are_deterministic_and_inside() -> None:
    svg = html_report.scatter_svg(sample_run().cases[3])
    points = [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg)]
    assert len(points) == 6
    assert all(0 <= x <= html_report.W and 0 <= y <= html_report.H for x, y in points)
    assert points[1][0] == html_report.X_NAN and points[2][0] == html_report.X_POS_INF
    assert points[1][1] == html_report.TOP   # the largest ULP is at the top
    assert svg == html_report.scatter_svg(sample_run().cases[3])


def test_passing_run_has_no_case_sections() -> None:
    page = html_report.dumps(passing_run())
    parse(page)
    assert "Failing cases (0)" in page and "<svg" not in page


def test_deterministic() -> None:
    assert html_report.dumps(sample_run()) == html_report.dumps(sample_run())


@settings(max_examples=40, deadline=None)
@given(run_results())
def test_any_run_gives_escaped_well_formed_page(run: RunResult) -> None:
    page = html_report.dumps(run)
    checker = parse(page)
    assert page.count("<script") == 1 and [t for t, _ in checker.tags].count("script") == 1
    ids = {a.get("id") for _, a in checker.tags}
    assert all(a["href"][1:] in ids for t, a in checker.tags if t == "a")


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip("no chromium binary on PATH (Debian: apt-get install -y chromium)")
    return found


def _headless(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Chromium headless, as root too (--no-sandbox), with nothing that
    reaches for the network (the machine's network is closed)."""
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=False)


def test_loads_in_headless_chromium(tmp_path: Path) -> None:
    """The page loads without console errors (a script or style the page's
    policy refused would be one) and the DOM has the summary table and an SVG."""
    chromium = _chromium()
    page = write_reports(sample_run(), tmp_path)["html"]
    proc = _headless(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '<table id="summary">' in proc.stdout and "<svg" in proc.stdout
    assert "ELEMENT_WISE_ABS" in proc.stdout and "<script>alert" not in proc.stdout
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or ":console" in line.lower()]
    assert console == [], "\n".join(console)


#: Measures the page as laid out at the window's width and writes what it
#: found into the DOM (``<pre id="measured">``, JSON) for --dump-dom:
#: the page's and the matrix box's widths, whether header row and first
#: column are sticky, every SVG text's box (overlaps, or outside the plot),
#: and the filter box at work.
MEASURE = """
(function () {
  var doc = document.documentElement, matrix = document.querySelector("div.matrix");
  var box = matrix.getBoundingClientRect(), problems = [];
  document.querySelectorAll("svg").forEach(function (svg, k) {
    var view = svg.viewBox.baseVal, boxes = [];
    svg.querySelectorAll("text").forEach(function (t) {
      var b = t.getBBox(), m = t.getCTM(), p = svg.createSVGPoint(), q = svg.createSVGPoint();
      p.x = b.x; p.y = b.y; q.x = b.x + b.width; q.y = b.y + b.height;
      p = p.matrixTransform(m); q = q.matrixTransform(m);
      var r = {x0: Math.min(p.x, q.x), x1: Math.max(p.x, q.x), y0: Math.min(p.y, q.y), y1: Math.max(p.y, q.y),
               text: t.textContent};
      if (r.x0 < 0 || r.y0 < 0 || r.x1 > view.width || r.y1 > view.height) { problems.push(k + " clipped " + r.text); }
      boxes.forEach(function (o) {
        if (r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1) { problems.push(k + " " + r.text + " on " + o.text); }
      });
      boxes.push(r);
    });
  });
  var filter = document.getElementById("filter");
  filter.value = "operator_03 float32";
  filter.dispatchEvent(new Event("input"));
  var visible = Array.prototype.filter.call(document.querySelectorAll("section.case"), function (s) {
    return s.offsetParent !== null;
  }).map(function (s) { return s.id; });
  var out = {page: doc.scrollWidth, window: doc.clientWidth, matrixLeft: box.left, matrixRight: box.right,
             matrixScrolls: matrix.scrollWidth > matrix.clientWidth,
             head: getComputedStyle(matrix.querySelector("thead th")).position,
             column: getComputedStyle(matrix.querySelector("tbody th")).position,
             labels: problems, visible: visible, shown: document.getElementById("shown").textContent};
  var pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def _measured(page: str, script: str = MEASURE) -> str:
    """``page`` with ``script`` run after its own, the script's hash added
    to the page's policy (so the page's own script still has to pass it)."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = html_report.content_policy()
    assert policy in page
    return (page.replace(policy, f"{policy} 'sha256-{digest}'", 1)
            .replace("</body>", f"<script>{script}</script></body>", 1))


def _measure_in_chromium(tmp_path: Path, page: str, script: str, name: str) -> dict[str, Any]:
    """``page`` with ``script`` loaded at 1280 x 900 in headless Chromium,
    a screenshot of its first screen in tmp_path/<name>.png, and what the
    script wrote into ``<pre id="measured">``."""
    chromium = _chromium()
    (tmp_path / f"{name}.html").write_text(_measured(page, script), encoding="utf-8")
    proc = _headless(chromium, tmp_path / f"profile-{name}", "--window-size=1280,900", "--dump-dom",
                     f"--screenshot={tmp_path / f'{name}.png'}", (tmp_path / f"{name}.html").as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', proc.stdout)
    assert found, proc.stdout[-2000:] + proc.stderr[-2000:]
    png = (tmp_path / f"{name}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1280, 900)
    measured: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return measured


def test_the_matrix_fits_1280_px_in_headless_chromium(tmp_path: Path) -> None:
    """At 1280 px a run with 30 long operator names x 13 data types and
    five outcomes a cell: the page is no wider than the window (the matrix
    scrolls in its box, header row and operator column sticky), no plot
    label overlaps another or leaves its plot, the filter box shows only
    the cases with every word typed.  The same load takes a screenshot
    (PNG, 1280 x 900) for a person to look at: tmp_path/report.png."""
    chromium = _chromium()
    run = wide_run()
    page = html_report.dumps(run)
    (tmp_path / "report.html").write_text(_measured(page), encoding="utf-8")
    proc = _headless(chromium, tmp_path / "profile", "--window-size=1280,900", "--dump-dom",
                     f"--screenshot={tmp_path / 'report.png'}", (tmp_path / "report.html").as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', proc.stdout)
    assert found, proc.stdout[-2000:] + proc.stderr[-2000:]
    measured = json.loads(html.unescape(found.group(1)))
    assert measured["window"] == 1280 and measured["page"] <= measured["window"], measured
    assert 0 <= measured["matrixLeft"] and measured["matrixRight"] <= measured["window"], measured
    assert measured["matrixScrolls"] and (measured["head"], measured["column"]) == ("sticky", "sticky")
    assert measured["labels"] == []
    wanted = [f"case-{n}" for n, c in enumerate(failed_cases(run), 1)
              if c.operator.endswith("OPERATOR_03") and c.dtype == "FLOAT32"]
    assert wanted and measured["visible"] == wanted
    assert measured["shown"] == f"{len(wanted)} of {len(failed_cases(run))} shown"
    png = (tmp_path / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1280, 900)


def test_case_facts() -> None:
    page = html_report.dumps(sample_run())
    assert ('<p class="facts">rank 4, packed; 64 elements: 58 PASS, 1 QUALITY_WARNING, 5 FAIL; worst: NaN vs 1; '
            "0.030 s; alternatives: flush (2); edges: nan, inf, x=-0</p>") in page


def test_a_nan_against_a_number_is_not_max_0_ulp() -> None:
    """A FAIL whose only bad element is NaN against a number has no ULP
    distance (max_ulp stays 0): the facts say what it is instead."""
    only_nan = case("n", "OP", "FLOAT32", "6_4", sample_run().cases[3].outcome, elements=4, counts=(3, 0, 1),
                    max_ulp=0, worst=(diff(0, math.nan, math.nan, 0.5, None),))
    facts = html_report.details(only_nan)
    assert facts == "rank 4, packed; 4 elements: 3 PASS, 0 QUALITY_WARNING, 1 FAIL; worst: NaN vs 0.5; 0.000 s"
    assert "ULP" not in facts


def _tick_boxes(ticks: tuple[html_report.Tick, ...]) -> list[tuple[float, float, int]]:
    half = [len(t.text) * html_report.CHAR_W / 2 for t in ticks]
    return [(t.x - h, t.x + h, t.row) for t, h in zip(ticks, half)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(-100, html_report.W + 100), st.text(min_size=1, max_size=12)), max_size=8))
def test_tick_labels_never_overlap_or_leave_the_plot(wanted: list[tuple[float, str]]) -> None:
    """Whatever labels are asked for, where: those placed lie inside the
    plot and keep GAP from each other in their row; the first always gets
    a place (the smallest input's value)."""
    ticks = html_report.place_ticks(wanted)
    boxes = _tick_boxes(ticks)
    assert all(2.0 - 1e-9 <= lo and hi <= html_report.W - 2.0 + 1e-9 for lo, hi, _ in boxes)
    for i, (lo, hi, row) in enumerate(boxes):
        for lo2, hi2, row2 in boxes[i + 1:]:
            assert row != row2 or hi + html_report.GAP <= lo2 + 1e-9 or hi2 + html_report.GAP <= lo + 1e-9
    assert all(0 <= t.row < html_report.ROWS for t in ticks)
    if wanted:
        assert wanted[0][1] in [t.text for t in ticks]


def test_axis_labels_are_short_and_readable() -> None:
    """Values as `short_float` writes them (3 significant digits), the top
    of the ULP axis as a count (`4.3e9`, not 4.29e+09)."""
    svg = html_report.scatter_svg(sample_run().cases[3])
    texts = re.findall(r'<text [^>]*font-family="monospace"[^>]*>([^<]*)</text>', svg)
    assert texts == ["4.3e9", "0", "-2.5e-8", "3", "NaN", "inf"]


#: What a person sees first, measured at the window's size (issue #33: the
#: one red GEMM cell of a full run was the last row of an inner scroll box):
#: the verdict's colour, where the failure summary and its first link lie,
#: the matrix's first row, then the matrix's controls at work.
FIRST_SCREEN = """
(function () {
  function box(el) { var r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; }
  function rows() {
    return Array.prototype.filter.call(document.querySelectorAll("#summary tbody tr"), function (r) {
      return !r.hidden;
    }).map(function (r) { return r.getAttribute("data-name"); });
  }
  var totals = document.getElementById("totals"), failures = document.getElementById("failures");
  var link = document.querySelector("#failures a[href]");
  var out = {view: window.innerHeight, verdict: getComputedStyle(totals).backgroundColor,
             failures: failures ? box(failures) : null, summary: failures ? failures.textContent : "",
             link: link ? {box: box(link), href: link.getAttribute("href"), text: link.textContent} : null,
             firstRow: rows()[0]};
  var show = document.getElementById("matrix-show"), order = document.getElementById("matrix-order");
  show.value = "failing"; show.dispatchEvent(new Event("change"));
  out.failingRows = rows(); out.shown = document.getElementById("matrix-shown").textContent;
  show.value = "nonpass"; show.dispatchEvent(new Event("change"));
  out.nonpassRows = rows().length;
  show.value = "all"; order.value = "name"; order.dispatchEvent(new Event("change"));
  out.byName = rows();
  order.value = "failing"; order.dispatchEvent(new Event("change"));   // as loaded again, for the screenshot
  var pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def test_the_first_screen_of_a_failing_run_shows_what_failed(tmp_path: Path) -> None:
    """At 1280 x 900, a full run with one failing GEMM case: the verdict
    is on another colour than a passing run's, the failure summary and its
    link to the GEMM cases lie above the fold (the passing run's summary
    says nothing failed), GEMM is the matrix's first row, and the matrix's
    controls show only failing operators, or those with any outcome but
    PASS, or every operator by name.  Screenshots of both first screens:
    tmp_path/failing.png and tmp_path/passing.png."""
    failing = _measure_in_chromium(tmp_path, html_report.dumps(full_run_one_failure()), FIRST_SCREEN, "failing")
    passing = _measure_in_chromium(tmp_path, html_report.dumps(full_run_passing()), FIRST_SCREEN, "passing")
    assert failing["view"] >= 700   # the window's height less what the browser keeps (757 px headless)
    assert failing["failures"] is not None and failing["failures"]["bottom"] <= failing["view"], failing
    assert failing["link"]["text"] == "GEMM" and failing["link"]["href"] == "#failing-1"
    assert 0 <= failing["link"]["box"]["top"] and failing["link"]["box"]["bottom"] <= failing["view"]
    assert "1 FAIL" in failing["summary"] and "FLOAT32 (1)" in failing["summary"]
    assert failing["firstRow"] == "GEMM" and failing["failingRows"] == ["GEMM"]
    assert failing["shown"] == "1 of 101 operators shown"
    assert failing["nonpassRows"] == 51   # GEMM and the 50 operators with an INT32 NOT_SUPPORTED
    assert failing["byName"][0] == "ELEMENT_WISE_OPERATOR_00" and failing["byName"][-1] == "GEMM"
    assert passing["failures"]["bottom"] <= passing["view"] and "Nothing" in passing["summary"]
    assert passing["link"] is None and passing["failingRows"] == []
    assert failing["verdict"] != passing["verdict"]
    assert (tmp_path / "failing.png").read_bytes() != (tmp_path / "passing.png").read_bytes()


def test_the_failure_summary_comes_first_and_links_to_the_cases() -> None:
    """Before the run's facts and the matrix: per operator (most failing
    cases first) its failing cases by outcome and a link per data type."""
    run = sample_run()
    page = html_report.dumps(run)
    assert page.index('id="totals"') < page.index('id="failures"') < page.index('id="facts"') \
        < page.index('id="summary"')
    summary = page[page.index('id="failures"'):page.index('id="facts"')]
    table = parse(summary[summary.index("<table"):summary.index("</table>") + len("</table>")])
    ops = [a["href"] for t, a in table.tags if t == "a"]
    assert ops == ["#failing-2", "#failing-2", "#failing-3", "#failing-1", "#failing-1"]
    text = "".join(table.text)
    assert text.index("ELEMENT_WISE_EXP") < text.index("ELEMENT_WISE_ABS")   # 3 failing cases before 1
    assert "1 CRASH1 TIMEOUT1 ERROR" in text and "FLOAT32 (2)FLOAT16 (1)" in text
    assert "What failed: 4 of 11 cases, 2 operators" in summary
    assert "&lt;script&gt;" in summary and "<script>alert" not in summary
    assert 'class="ok"' in html_report.dumps(passing_run()) and 'class="failed"' in page


def _lab(colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB ``#rrggbb``."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    xyz = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b, \
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = [t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_every_outcome_has_a_colour_of_its_own() -> None:
    """No two outcomes' cell colours closer than CIE76 delta E 20 (FAIL and
    ERROR were 18 apart, NOT_SUPPORTED and XFAIL 5), so a cell with any
    non-pass outcome never looks like PASS, nor one outcome like another."""
    colours = html_report.COLOURS
    assert set(colours) == set(Outcome)
    close = [(a.value, b.value, round(math.dist(_lab(colours[a]), _lab(colours[b])), 1))
             for i, a in enumerate(colours) for b in list(colours)[i + 1:]
             if math.dist(_lab(colours[a]), _lab(colours[b])) < 20]
    assert close == []


def test_elements_sharing_one_input_value_are_plotted_against_their_index() -> None:
    """A GEMM case's 10 worst elements all have K = 90: plotted against K
    they were one dot; now each has its own x, in index order, the first
    and last index under the axis, and the note says why."""
    case = gemm_failure()
    svg = html_report.scatter_svg(case)
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', svg)]
    assert len(xs) == 10 and xs == sorted(xs) and len(set(xs)) == 10
    assert xs[0] == html_report.X_LO and xs[-1] == html_report.X_HI
    ticks = re.findall(r'<text [^>]*font-family="monospace"[^>]*>([^<]*)</text>', svg)
    assert "[0, 0]" in ticks and "[8, 1]" in ticks
    assert "element, in index order" in svg
    assert "the 10 elements shown share 1 value of K, so against K they would lie on one another" in svg
    value_plot = html_report.scatter_svg(sample_run().cases[3])   # distinct inputs: against their value
    assert "InputTensor (symlog)" in value_plot and "x is its InputTensor, on a symlog scale" in value_plot
