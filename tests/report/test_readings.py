"""Which reading of each ambiguity a backend took: the per-operator summary
(`report.readings`) and how report.json, the terminal and the HTML page
show it (docs/ambiguities.md)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dmlconform.report import html, json_report
from dmlconform.report.readings import summarize
from dmlconform.results import CaseResult, Outcome, RunResult
from tests.report.fixtures import case, sample_run
from tests.report.test_terminal import render


def _shrink(case_id: str, *readings: tuple[str, int, int]) -> CaseResult:
    return case(case_id, "ACTIVATION_SHRINK", "FLOAT32", "6_4", Outcome.PASS, elements=64, counts=(64, 0, 0),
                readings=readings)


@pytest.mark.parametrize("readings, status", [
    ([("reading:nan=propagate", 4, 4), ("reading:nan:formula", 4, 0)], "took primary"),
    ([("reading:nan=propagate", 4, 0), ("reading:nan:formula", 4, 4)], "took formula"),
    ([("reading:nan=propagate", 4, 1), ("reading:nan:formula", 4, 3)], "mixed"),
    ([("reading:nan=propagate", 4, 0), ("reading:nan:formula", 4, 0)], "took none"),
    ([("reading:x=exact", 4, 0), ("reading:x:float32", 4, 4), ("reading:x:float64", 4, 4)],
     "took float32 or float64"),
])
def test_status_of_one_case(readings: list[tuple[str, int, int]], status: str) -> None:
    (taken,) = summarize([_shrink("c1", *readings)])
    assert taken.status == status


def test_cases_add_up_per_operator() -> None:
    taken = summarize([_shrink("c1", ("reading:nan=propagate", 3, 0), ("reading:nan:formula", 3, 3)),
                       _shrink("c2", ("reading:nan=propagate", 2, 0), ("reading:nan:formula", 2, 2))])
    assert [t.line() for t in taken] == ["ACTIVATION_SHRINK nan: took formula (5 elements: propagate 0, formula 5)"]


def _run_with_readings() -> RunResult:
    run = sample_run()
    extra = _shrink("shrink-nan", ("reading:nan=propagate", 3, 0), ("reading:nan:formula", 3, 3))
    return dataclasses.replace(run, cases=run.cases + (extra,))


def test_report_json_holds_and_reads_back_the_readings() -> None:
    run = _run_with_readings()
    text = json_report.dumps(run)
    data = json.loads(text)
    assert data["readings"] == [{"operator": "ACTIVATION_SHRINK", "ambiguity": "nan", "primary": "propagate",
                                 "elements": 3, "status": "took formula",
                                 "took": [["propagate", 0], ["formula", 3]]}]
    assert json_report.loads(text, path="report.json") == run


def test_a_report_without_readings_has_no_readings_key() -> None:
    assert "readings" not in json.loads(json_report.dumps(sample_run()))


def test_terminal_names_a_reading_other_than_the_primary() -> None:
    out = render(_run_with_readings())
    assert "reading: ACTIVATION_SHRINK nan: took formula (3 elements: propagate 0, formula 3)" in out
    assert "reading:" not in render(sample_run())


def test_html_has_a_readings_table() -> None:
    page = html.dumps(_run_with_readings())
    assert "<h2>Readings of ambiguous docs</h2>" in page
    assert "<td>ACTIVATION_SHRINK</td><td>nan</td><td>took formula</td><td>3</td>" in page
    assert "Readings of ambiguous docs" not in html.dumps(sample_run())
