"""report.json: strict, deterministic, and read back into the same RunResult."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings

from dmlconform.errors import DmlconformError
from dmlconform.report import json_report
from dmlconform.report.json_report import decode_float, dumps, encode_float, loads
from dmlconform.results import Outcome
from tests.golden_plugin import Golden, golden_for
from tests.report.fixtures import sample_run
from tests.report.strategies import run_results


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return golden_for(request.config)


def _strict(text: str) -> Any:
    def reject(name: str) -> None:
        raise AssertionError(f"non-strict JSON constant {name} in the report")
    return json.loads(text, parse_constant=reject)


def test_golden(golden: Golden) -> None:
    golden.check("report/report.json", dumps(sample_run()))


def test_round_trip_fixture() -> None:
    run = sample_run()
    back = loads(dumps(run), path="report.json")
    # NaN != NaN, so compare reprs (exact for floats, -0.0 included) and the text again
    assert repr(back) == repr(run)
    assert dumps(back) == dumps(run)


@settings(max_examples=60, deadline=None)
@given(run_results())
def test_round_trip_property(run) -> None:  # type: ignore[no-untyped-def]
    text = dumps(run)
    _strict(text)
    back = loads(text, path="r.json")
    assert repr(back) == repr(run)


def test_header_summary_groups_coverage() -> None:
    data = _strict(dumps(sample_run()))
    assert data["format"] == "dmlconform-report" and data["version"] == 1
    assert data["summary"]["cases"] == 11 and data["summary"]["failed"] is True
    assert data["summary"]["outcomes"] == {o.value: n for o, n in [
        (Outcome.PASS, 2), (Outcome.QUALITY_WARNING, 1), (Outcome.FAIL, 1), (Outcome.NOT_SUPPORTED, 2),
        (Outcome.XFAIL, 1), (Outcome.XPASS, 1), (Outcome.CRASH, 1), (Outcome.TIMEOUT, 1), (Outcome.ERROR, 1)]}
    group = data["groups"][1]
    assert (group["operator"], group["dtype"], group["level"], group["worst"]) == (
        "ELEMENT_WISE_ABS", "FLOAT16", "6_4", "FAIL")
    assert group["outcomes"]["FAIL"] == 1 and group["outcomes"]["QUALITY_WARNING"] == 1
    abs_cov = data["coverage"][0]
    assert abs_cov["operator"] == "ELEMENT_WISE_ABS"
    assert abs_cov["edges"] == [["inf", 1], ["nan", 2], ["x<0", 2], ["x=-0", 2], ["x>=0", 1]]


def test_special_floats_are_strings() -> None:
    worst = _strict(dumps(sample_run()))["cases"][3]["worst"]
    assert [w["expected"] for w in worst[1:4]] == ["nan", "inf", "-0"]
    assert worst[2]["actual"] == "-inf"
    assert worst[0]["inputs"] == [["InputTensor", 1.5]]


@pytest.mark.parametrize("x", [0.0, -0.0, 1.5, -2.5e-8, 1e308, 5e-324, math.inf, -math.inf])
def test_float_codec(x: float) -> None:
    back = decode_float(encode_float(x), "x")
    assert back == x and math.copysign(1, back) == math.copysign(1, x)


def test_nan_codec() -> None:
    assert encode_float(math.nan) == "nan" and math.isnan(decode_float("nan", "x"))


def test_deterministic() -> None:
    assert dumps(sample_run()) == dumps(sample_run())


def test_one_case_per_line_and_the_same_data_as_plain_json() -> None:
    """The layout of docs/report-json.md: a top-level member per line, an
    array's elements one per line; the data is what ``to_json`` builds."""
    from dmlconform.report.json_report import to_json

    run = sample_run()
    text = dumps(run)
    assert json.loads(text) == json.loads(json.dumps(to_json(run), allow_nan=False))
    lines = text.splitlines()
    cases = [json.loads(line.rstrip(",")) for line in lines if line.startswith('  {"alternatives": ')]
    assert [c["case_id"] for c in cases] == [c.case_id for c in run.cases]
    assert lines[0] == "{" and lines[-1] == "}" and lines[1] == ' "cases": [' and text.endswith("}\n")
    top = [line for line in lines[1:-1] if line.startswith(' "')]
    assert [line.split('"')[1] for line in top] == sorted(to_json(run))


def _corrupt(edit) -> str:  # type: ignore[no-untyped-def]
    data = json.loads(dumps(sample_run()))
    edit(data)
    return json.dumps(data)


@pytest.mark.parametrize("text, expected", [
    ("{", "out/report.json:1:2: error: not valid JSON: Expecting property name"),
    ("[]", "error: out/report.json: bad report: $: expected an object, got array"),
    ('{"format": "other"}', "error: out/report.json: bad report: format: expected 'dmlconform-report', got 'other'"),
    ('{"format": "dmlconform-report", "version": 2}', "error: out/report.json: bad report: version: expected 1, got 2"),
    ('{"x": NaN}', "out/report.json: error: not valid JSON: NaN is not strict JSON"),
    (_corrupt(lambda d: d["cases"][3]["worst"][1].__setitem__("ulp", "many")),
     "error: out/report.json: bad report: cases[3].worst[1].ulp: expected an integer, got string 'many'"),
    (_corrupt(lambda d: d["cases"][0].__setitem__("outcome", "MAYBE")),
     "error: out/report.json: bad report: cases[0].outcome: unknown outcome 'MAYBE' (known: PASS, QUALITY_WARNING"),
    (_corrupt(lambda d: d["cases"][3]["worst"][0].__setitem__("expected", "NaN")),
     "error: out/report.json: bad report: cases[3].worst[0].expected: expected a number or one of"),
    (_corrupt(lambda d: d["run"].pop("seed")), "error: out/report.json: bad report: run: missing member 'seed'"),
    (_corrupt(lambda d: d["cases"][1].__setitem__("counts", [1, 2])),
     "error: out/report.json: bad report: cases[1].counts: expected 3 counts [PASS, QUALITY_WARNING, FAIL], got 2"),
    (_corrupt(lambda d: d["cases"][1].__setitem__("expect_supported", 1)),
     "error: out/report.json: bad report: cases[1].expect_supported: expected true or false, got integer 1"),
])
def test_bad_input_names_path_and_place(text: str, expected: str) -> None:
    with pytest.raises(DmlconformError) as info:
        loads(text, path="out/report.json")
    assert info.value.exit_code == 2
    assert info.value.render().startswith(expected), info.value.render()


def test_format_constants() -> None:
    assert (json_report.FORMAT, json_report.VERSION) == ("dmlconform-report", 1)


def test_reports_written_before_the_gating_members_still_load() -> None:
    """strict, shard, merged_from, tolerances, overrides and baseline were added
    to version 1: a report without them reads with their defaults."""
    data = json.loads(dumps(sample_run()))
    for key in ("strict", "shard", "merged_from", "tolerances", "overrides", "baseline"):
        del data["run"][key]
    back = loads(json.dumps(data), path="old/report.json")
    assert (back.strict, back.shard, back.merged_from, back.tolerances, back.overrides, back.baseline) == \
        (False, "", (), "", (), None)
    assert repr(back.cases) == repr(sample_run().cases)  # NaN != NaN: compare reprs


def test_no_sentinel_distance_a_null_and_the_distance_in_words() -> None:
    """An element with no ULP distance (NaN against a number) has ``ulp``
    null, never a number that reads as one; every element says its distance
    in words, as the other reports do."""
    worst = _strict(dumps(sample_run()))["cases"][3]["worst"]
    assert [(w["ulp"], w["distance"]) for w in worst] == [
        (4096, "4096 ULP"), (None, "NaN vs 1"), (65535, "sign differs"), (1, "sign differs"),
        (12345678, "1.2e7 ULP"), (3, "3 ULP")]
    assert loads(dumps(sample_run()), path="r.json").cases[3].worst[1].ulp is None


def test_reports_with_the_old_minus_one_still_load() -> None:
    """Reports written before null (docs/results/*.summary.json, baselines'
    runs) hold -1 where there was no distance, and no ``distance`` member."""
    data = json.loads(dumps(sample_run()))
    for w in data["cases"][3]["worst"]:
        w["ulp"] = -1 if w["ulp"] is None else w["ulp"]
        del w["distance"]
    back = loads(json.dumps(data), path="old/report.json")
    assert back.cases[3].worst[1].ulp is None and repr(back) == repr(sample_run())


@pytest.mark.parametrize("ulp, problem", [
    (-2, "expected an integer of 0 or more, or null (not comparable), got -2"),
    (1.5, "expected an integer, got number 1.5"),
    (True, "expected an integer, got boolean True"),
])
def test_a_bad_ulp_is_refused(ulp: object, problem: str) -> None:
    text = _corrupt(lambda d: d["cases"][3]["worst"][0].__setitem__("ulp", ulp))
    with pytest.raises(DmlconformError) as info:
        loads(text, path="out/report.json")
    assert info.value.exit_code == 2
    assert info.value.render() == f"error: out/report.json: bad report: cases[3].worst[0].ulp: {problem}"
