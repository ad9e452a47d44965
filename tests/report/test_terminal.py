"""The rich terminal summary, rendered as plain text at width 100."""

from __future__ import annotations

import dataclasses
from io import StringIO

import pytest
from hypothesis import given, settings
from rich.console import Console

from dmlconform.report import terminal
from dmlconform.results import RunResult
from tests.golden_plugin import Golden, golden_for
from tests.report.fixtures import passing_run, sample_run
from tests.report.strategies import run_results


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return golden_for(request.config)


def render(run: RunResult, **kw: int) -> str:
    console = Console(file=StringIO(), width=100, color_system=None)
    terminal.render(run, console, **kw)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_golden(golden: Golden) -> None:
    golden.check("report/terminal.txt", render(sample_run()))
    golden.check("report/terminal_worst2.txt", render(sample_run(), worst=2))
    golden.check("report/terminal_passing.txt", render(passing_run()))


def test_rows_and_columns() -> None:
    text = render(sample_run())
    header = next(line for line in text.splitlines() if line.startswith("operator"))
    assert header.split() == ["operator", "dtype", "@", "level", "PASS", "WARNING", "FAIL", "SUPPORTED", "XFAIL",
                              "XPASS", "CRASH", "TIMEOUT", "ERROR"]
    assert "ELEMENT_WISE_ABS FLOAT16 @ 6_4    ·        1    1" in text


def test_no_xfail_columns_without_baseline() -> None:
    assert "XFAIL" not in render(passing_run())


def test_failing_cases_with_diffs_and_repro() -> None:
    text = render(sample_run(), worst=3)
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


@settings(max_examples=40, deadline=None)
@given(run_results())
def test_any_run_renders(run: RunResult) -> None:
    text = render(run)
    assert "\x1b" not in text
    assert text.splitlines()[-1].startswith("FAILED" if run.failed else "OK")
