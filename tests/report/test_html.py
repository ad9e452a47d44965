"""report.html: self-contained, escaped, parseable, with the summary matrix and the SVG plots."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings

from dmlconform.report import html as html_report
from dmlconform.report import write_reports
from dmlconform.results import RunResult
from tests.report.fixtures import case, diff, passing_run, sample_run
from tests.report.strategies import run_results

#: Elements without an end tag.
VOID = {"meta", "br", "line", "circle"}


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
    page = html_report.dumps(sample_run())
    checker = parse(page)
    tags = [t for t, _ in checker.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags and "iframe" not in tags
    assert not re.search(r"(src|href)\s*=", page)
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page


def test_data_is_escaped() -> None:
    page = html_report.dumps(sample_run())
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot; &#x27;single&#x27;" in page
    assert "ZeroDivisionError\\x00\\x1b[31m" in page


def test_header_summary_coverage() -> None:
    checker = parse(html_report.dumps(sample_run()))
    ids = {a.get("id") for _, a in checker.tags}
    assert {"summary", "coverage", "totals", "case-1", "case-4"} <= ids and "case-5" not in ids
    text = "".join(checker.text)
    assert "dmlconform run --backend cpu --seed 1234 --filter '<script>alert(1)</script>" in text
    assert "2026-11-22T17:00:00Z" in text and "seed1234" in text
    cells = [a.get("class") for t, a in checker.tags if t == "td" and (a.get("class") or "").startswith("o-")]
    assert "o-FAIL" in cells and "o-CRASH" in cells and "o-PASS" in cells


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
    parse(page)
    assert "<script" not in page


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip("no chromium binary on PATH (Debian: apt-get install -y chromium)")
    return found


def test_loads_in_headless_chromium(tmp_path: Path) -> None:
    """The page loads without console errors and the DOM has the summary table and an SVG."""
    chromium = _chromium()
    page = write_reports(sample_run(), tmp_path)["html"]
    proc = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr",
         "--v=0", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '<table id="summary">' in proc.stdout and "<svg" in proc.stdout
    assert "ELEMENT_WISE_ABS" in proc.stdout and "<script" not in proc.stdout
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or ":console" in line.lower()]
    assert console == [], "\n".join(console)


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
