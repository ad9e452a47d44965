"""Group rows, totals and coverage shared by every report."""

from __future__ import annotations

from dmlconform.report.coverage import (
    OperatorCoverage,
    dtype_key,
    fmt_float,
    group_rows,
    level_key,
    outcome_columns,
    summarise,
    totals_line,
    visible,
    worst_outcome,
)
from dmlconform.results import Outcome
from tests.report.fixtures import passing_run, sample_run


def test_group_rows_sorted_by_operator_dtype_level() -> None:
    rows = group_rows(sample_run())
    assert [(r.operator, r.name) for r in rows] == [
        ("ELEMENT_WISE_ABS", "FLOAT32 @ 6_4"), ("ELEMENT_WISE_ABS", "FLOAT16 @ 6_4"),
        ("ELEMENT_WISE_ABS", "INT8 @ 6_4"), ("ELEMENT_WISE_EXP", "FLOAT64 @ 5_0"),
        ("ELEMENT_WISE_EXP", "FLOAT64 @ 6_4"), ("ELEMENT_WISE_EXP", "FLOAT32 @ 5_0"),
        ("ELEMENT_WISE_EXP", "FLOAT16 @ 5_0"), ("ELEMENT_WISE_EXP", "UINT8 @ 6_4")]
    assert rows[1].worst is Outcome.FAIL and rows[1].count(Outcome.QUALITY_WARNING) == 1
    assert rows[2].skipped and rows[3].skipped and not rows[4].skipped


def test_unknown_names_sort_last() -> None:
    assert dtype_key("FLOAT64") < dtype_key("UINT4") < dtype_key("BFLOAT16")
    assert level_key("1_0") < level_key("6_4") < level_key("banana")


def test_worst_outcome() -> None:
    assert worst_outcome([Outcome.PASS, Outcome.NOT_SUPPORTED, Outcome.QUALITY_WARNING]) is Outcome.QUALITY_WARNING
    assert worst_outcome([Outcome.FAIL, Outcome.ERROR, Outcome.CRASH]) is Outcome.ERROR
    assert worst_outcome([]) is Outcome.PASS


def test_outcome_columns() -> None:
    assert Outcome.XFAIL in outcome_columns(sample_run())
    assert Outcome.XFAIL not in outcome_columns(passing_run())


def test_coverage() -> None:
    cov = summarise(sample_run())
    assert [o.operator for o in cov.operators] == ["ELEMENT_WISE_ABS", "ELEMENT_WISE_EXP"]
    assert cov.operators[0] == OperatorCoverage(
        operator="ELEMENT_WISE_ABS", cases=5, dtypes=("FLOAT32", "FLOAT16", "INT8"), levels=("6_4",),
        dims=((2, 1), (4, 4)), layouts=(("packed", 5),),
        edges=(("inf", 1), ("nan", 2), ("x<0", 2), ("x=-0", 2), ("x>=0", 1)), combinations=4)
    assert cov.operators[0].possible == 6
    assert cov.operators[1].levels == ("5_0", "6_4")
    assert cov.edges_hit == 5


def test_formats() -> None:
    assert [fmt_float(x) for x in (float("nan"), float("inf"), -float("inf"), -0.0, 1 / 3)] == [
        "nan", "inf", "-inf", "-0", "0.333333333"]
    assert visible("a\x1b[31m\tb\nc\x7f") == "a\\x1b[31m\tb\nc\\x7f"
    assert totals_line(passing_run()) == "2 cases: 2 PASS in 0.03 s"
