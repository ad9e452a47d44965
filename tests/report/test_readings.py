"""Which reading of each ambiguity a backend took: the per-operator summary
(`report.readings`) and how report.json, the terminal and the HTML page
show it (docs/ambiguities.md)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dmlconform.report import html, json_report
from dmlconform.report.readings import ambiguity_words, in_words, summarize
from dmlconform.results import AmbiguityWords, CaseResult, Outcome, RunResult
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


#: What the spec of ACTIVATION_SHRINK says of its ``nan`` ambiguity, as a run keeps it.
SHRINK_NAN = AmbiguityWords("ACTIVATION_SHRINK", "nan", "What does a NaN input give?",
                            (("propagate", "NaN (IEEE)"), ("formula", "the branch's value")))


def test_terminal_says_a_reading_in_words_only_under_verbose() -> None:
    """issue #33 item 5: ``reading: ... took formula (3 elements: propagate 0,
    formula 3)`` meant nothing to a newcomer, and was printed for every
    reading other than the primary one, though each is a PASS."""
    run = dataclasses.replace(_run_with_readings(), ambiguities=(SHRINK_NAN,))
    assert "reading" not in render(run)
    lines = render(run, verbose=True).splitlines()
    at = lines.index("reading: ACTIVATION_SHRINK: its doc leaves a question open: What does a NaN input give?")
    assert lines[at + 1] == ('  cpu took the reading "formula" (the branch\'s value) on all 3 elements where the '
                             "readings differ. Accepted (PASS): the doc allows it, like every reading an honest "
                             "implementation could take.")
    assert "reading" not in render(sample_run(), verbose=True)


def test_terminal_says_a_mix_of_readings_always() -> None:
    run = sample_run()
    mixed = _shrink("shrink-nan", ("reading:nan=propagate", 4, 1), ("reading:nan:formula", 4, 3))
    lines = render(dataclasses.replace(run, cases=run.cases + (mixed,), ambiguities=(SHRINK_NAN,))).splitlines()
    at = lines.index("reading: ACTIVATION_SHRINK: its doc leaves a question open: What does a NaN input give?")
    assert lines[at + 1].startswith('  cpu mixed the readings: no one of them explains all 4 elements where the '
                                    'readings differ; it took "propagate" (NaN (IEEE)) on 1 and "formula" (the '
                                    "branch's value) on 3. Each result that matches a reading is accepted (PASS)")


def test_a_report_without_the_words_says_the_ids() -> None:
    (taken,) = summarize([_shrink("c1", ("reading:nan=propagate", 2, 2), ("reading:nan:formula", 2, 0))])
    assert in_words(taken, {}, "x") == (
        "ACTIVATION_SHRINK: its doc leaves a question open: nan (docs/ambiguities.md)",
        'x took the primary reading "propagate" on all 2 elements where the readings differ. Accepted (PASS): '
        "the doc allows it, like every reading an honest implementation could take.")


def test_the_words_travel_in_report_json_and_come_from_the_specs() -> None:
    from dmlconform.catalog import load_spec
    from tests.conftest import REPO
    run = dataclasses.replace(_run_with_readings(), ambiguities=(SHRINK_NAN,))
    data = json.loads(json_report.dumps(run))
    assert data["run"]["ambiguities"] == [{"operator": "ACTIVATION_SHRINK", "ambiguity": "nan",
                                           "question": "What does a NaN input give?",
                                           "readings": [["propagate", "NaN (IEEE)"], ["formula", "the branch's value"]]}]
    assert json_report.loads(json_report.dumps(run), path="report.json") == run
    spec = load_spec(REPO / "specs" / "ACTIVATION_SHRINK.yaml")
    (words,) = ambiguity_words([spec], run.cases)
    assert (words.operator, words.ambiguity) == ("ACTIVATION_SHRINK", "nan")
    assert words.question == next(a.question for a in spec.ambiguities if a.id == "nan")
    assert [r for r, _ in words.readings] == [r.id for a in spec.ambiguities if a.id == "nan" for r in a.readings]


def test_html_has_a_readings_table() -> None:
    page = html.dumps(_run_with_readings())
    assert "<h2>Readings of ambiguous docs</h2>" in page
    assert "<td>ACTIVATION_SHRINK</td><td>nan</td><td>took formula</td><td>3</td>" in page
    assert "Readings of ambiguous docs" not in html.dumps(sample_run())
