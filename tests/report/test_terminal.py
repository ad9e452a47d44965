"""The rich terminal summary, rendered as plain text at width 100."""

from __future__ import annotations

import dataclasses
from io import StringIO
from typing import Any

import pytest
from hypothesis import given, settings
from rich.console import Console

from dmlconform.report import terminal
from dmlconform.report.view import View
from dmlconform.results import RunResult
from tests.golden_plugin import Golden, golden_for
from tests.report.fixtures import passing_run, sample_run, wide_run
from tests.report.strategies import run_results


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return golden_for(request.config)


def render(run: RunResult, *, width: int = 100, **kw: Any) -> str:
    console = Console(file=StringIO(), width=width, color_system=None)
    terminal.render(run, console, View(**kw))
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_golden(golden: Golden) -> None:
    golden.check("report/terminal.txt", render(sample_run()))
    golden.check("report/terminal_worst2.txt", render(sample_run(), worst=2, failures=2, html="out/report.html"))
    golden.check("report/terminal_passing.txt", render(passing_run()))
    golden.check("report/terminal_verbose.txt", render(sample_run(), verbose=True, failures=None))
    golden.check("report/terminal_wide.txt", render(wide_run(), width=120, html="out/report.html"))


def test_verbose_rows_and_columns() -> None:
    text = render(sample_run(), verbose=True)
    header = next(line for line in text.splitlines() if line.startswith("operator"))
    assert header.split() == ["operator", "dtype", "@", "level", "PASS", "WARNING", "FAIL", "SUPPORTED", "XFAIL",
                              "XPASS", "CRASH", "TIMEOUT", "ERROR"]
    assert "ELEMENT_WISE_ABS FLOAT16 @ 6_4    ·        1    1" in text


def test_no_xfail_columns_without_baseline() -> None:
    assert "XFAIL" not in render(passing_run()) and "XFAIL" not in render(passing_run(), verbose=True)


def test_failing_cases_with_diffs_and_repro() -> None:
    text = render(sample_run(), worst=3, verbose=True)
    assert "FAIL  ELEMENT_WISE_ABS FLOAT16 @ 6_4  abs-f16-0002: 5 of 64 elements beyond the bound" in text
    assert "worst 3 of 6 elements" in text
    rows = [" ".join(line.split()) for line in text.splitlines()]
    assert "OutputTensor [0, 9] InputTensor=inf inf -inf sign differs 0 FAIL" in rows
    assert "OutputTensor [0, 7] InputTensor=nan nan 1 NaN vs 1 0 FAIL" in rows
    assert "OutputTensor [0, 3] InputTensor=1.5 0.5 0.75 4096 ULP 2 FAIL" in rows
    assert "[0, 11]" not in text
    assert "repro: dmlconform run --backend cpu --level 6_4 --seed 1234 --case abs-f16-0002\n" in text
    assert "QUALITY_WARNING  ELEMENT_WISE_ABS" not in text   # warnings are counted, not listed


def test_repro_is_one_line_even_when_long() -> None:
    text = render(sample_run())
    line = next(x for x in text.splitlines() if x.startswith("repro:") and "exp-f32-<script>" in x)
    assert line.endswith("--case exp-f32-<script>alert(1)</script> & \"quoted\" 'single'")


def test_control_characters_and_markup_are_shown_not_obeyed() -> None:
    text = render(sample_run())
    assert "ZeroDivisionError\\x00\\x1b[31m" in text and "\x1b" not in text


def test_totals_line() -> None:
    assert render(sample_run()).splitlines()[-1] == (
        "FAILED  11 cases: 2 PASS, 1 QUALITY_WARNING, 1 FAIL, 2 NOT_SUPPORTED, 1 XFAIL, 1 XPASS, 1 CRASH, "
        "1 TIMEOUT, 1 ERROR in 31.57 s")
    assert render(passing_run()).splitlines()[-1] == "OK  2 cases: 2 PASS in 0.03 s"
    stopped = dataclasses.replace(passing_run(), interrupted=True)
    assert render(stopped).splitlines()[-1] == (
        "INTERRUPTED  2 cases: 2 PASS in 0.03 s (interrupted: the cases after these did not run)")


def test_worst_zero_hides_diff_tables() -> None:
    assert "verdict" not in render(sample_run(), worst=0)


def test_negative_worst_is_refused() -> None:
    with pytest.raises(ValueError, match="worst=-1 must be 0 or more"):
        render(sample_run(), worst=-1)
    with pytest.raises(ValueError, match="failures=-1 must be 0 or more"):
        render(sample_run(), failures=-1)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_one_aligned_line_per_operator(width: int) -> None:
    """A line per operator, its data types folded in, its counts named and
    aligned (at 100 columns the counts of this run go on two lines, broken
    at the same place); a failing operator marked ``!``; every line within
    the width."""
    lines = [line.rstrip() for line in render(wide_run(), width=width, failures=0).splitlines()]
    table = lines[lines.index("Operators"):lines.index(
        "QW = QUALITY_WARNING, NS = NOT_SUPPORTED, ! = an operator with a case that fails the run")]
    assert all(len(line) <= width for line in table)
    assert sum(1 for line in table if line.startswith("!  ELEMENT_WISE_QUANTIZED_")) == 30
    for name in ("PASS", "QW", "FAIL", "NS", "XFAIL"):
        assert len({line.index(f" {name}") for line in table if f" {name}" in line}) == 1, name
    if width == 120:
        assert table[1].split() == ["!", "ELEMENT_WISE_QUANTIZED_LINEAR_OPERATOR_00", "FLOAT64,FLOAT32,FLOAT16",
                                    "+10", "13", "PASS", "10", "QW", "7", "FAIL", "4", "NS", "2", "XFAIL"]
    if width == 100:
        assert [line.split() for line in table[1:3]] == [
            ["!", "ELEMENT_WISE_QUANTIZED_LINEAR_OPERATOR_00", "FLOAT64,FLOAT32,FLOAT16", "+10", "13", "PASS", "10",
             "QW", "7", "FAIL"], ["4", "NS", "2", "XFAIL"]]


def test_levels_other_than_the_runs_are_named() -> None:
    rows = [" ".join(line.split()) for line in render(sample_run()).splitlines()]
    assert "! ELEMENT_WISE_ABS FLOAT32,FLOAT16,INT8 2 PASS 1 QW 1 FAIL 1 NS" in rows
    assert "! ELEMENT_WISE_EXP FLOAT64,FLOAT32,FLOAT16 +1 @5_0,6_4 1 NS 1 XFAIL" in rows


def test_first_failures_in_full_one_per_group_then_a_count() -> None:
    """The first N failing cases come from N different operator x data type
    x level groups where there are that many; the rest are counted, with
    where report.html is."""
    text = render(wide_run(), failures=4, html="out/report.html")
    headings = [line for line in text.splitlines() if line.startswith("FAIL  ")]
    assert len(headings) == 4 and len({" ".join(h.split()[1:4]) for h in headings}) == 4
    failing = sum(1 for c in wide_run().cases if c.outcome.failed)
    assert (f"and {failing - 4} more failing cases: see out/report.html (--show-failures N shows more)"
            in text.splitlines())
    assert "more failing" not in render(sample_run(), failures=None)
    assert "more failing" not in render(sample_run(), verbose=True, failures=None)
    assert "more failing" not in render(sample_run(), failures=4)   # 4 failing: all shown


def test_the_end_says_everything() -> None:
    """The header again, then the totals line last: backend, device,
    version, level, seed, subnormals, the command (options such as faults),
    gating facts."""
    run = dataclasses.replace(sample_run(), flush_subnormals=True, shard="2/4", strict=True,
                              command="dmlconform run --backend faulty --backend-arg faults=one-ulp")
    tail = render(run).splitlines()[-6:]
    assert tail[0] == ("cpu 0.1.0 on reference CPU <script>alert(1)</script> & \"quoted\" 'single', feature level "
                       "6_4, seed 1234, subnormals flushed")
    assert tail[1] == "command: dmlconform run --backend faulty --backend-arg faults=one-ulp"
    assert tail[2:4] == ["shard: 2/4", "strict: QUALITY_WARNING and XPASS fail the run"]
    assert tail[4] == "1 wrong value, 0 refused"
    assert tail[5].startswith("FAILED  11 cases:")


def test_warnings_stay_visible_after_the_failures() -> None:
    lines = render(sample_run(), failures=0).splitlines()
    xpass = lines.index("XPASS  ELEMENT_WISE_EXP FLOAT64 @ 6_4  exp-f64-0002: baseline expected FAIL")
    assert xpass > next(i for i, line in enumerate(lines) if line.startswith("and 4 more failing cases"))


@settings(max_examples=40, deadline=None)
@given(run_results())
def test_any_run_renders(run: RunResult) -> None:
    text = render(run)
    assert "\x1b" not in text
    assert text.splitlines()[-1].startswith("FAILED" if run.failed else "OK")
