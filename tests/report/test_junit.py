"""junit.xml: parses, one suite per operator, one test case per data type x level, right counts."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings

from dmlconform.report import junit
from dmlconform.results import RunResult
from tests.golden_plugin import Golden, golden_for
from tests.report.fixtures import HOSTILE, REPRO, passing_run, sample_run
from tests.report.strategies import run_results


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return golden_for(request.config)


@pytest.fixture
def root() -> ET.Element:
    return ET.fromstring(junit.dumps(sample_run()))


def test_golden(golden: Golden) -> None:
    golden.check("report/junit.xml", junit.dumps(sample_run()))
    golden.check("report/junit_passing.xml", junit.dumps(passing_run()))


def test_totals(root: ET.Element) -> None:
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "8", "failures": "3", "errors": "0", "skipped": "3"}
    assert [s.get("name") for s in root.iter("testsuite")] == ["ELEMENT_WISE_ABS", "ELEMENT_WISE_EXP"]
    assert [(s.get("tests"), s.get("failures"), s.get("skipped")) for s in root.iter("testsuite")] == [
        ("3", "1", "1"), ("5", "2", "2")]


def test_testcases(root: ET.Element) -> None:
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert ("ELEMENT_WISE_ABS", "FLOAT16 @ 6_4") in cases
    fail = cases["ELEMENT_WISE_ABS", "FLOAT16 @ 6_4"].find("failure")
    assert fail is not None and fail.get("message") == "1 FAIL, 1 QUALITY_WARNING of 2 cases"
    assert fail.text is not None and "abs-f16-0002: FAIL: 5 of 64 elements beyond the bound" in fail.text
    assert "repro: dmlconform run --backend cpu --level 6_4 --seed 1234 --case abs-f16-0002" in fail.text
    crash = cases["ELEMENT_WISE_EXP", "FLOAT32 @ 5_0"].find("failure")
    assert crash is not None and crash.get("message") == "1 CRASH, 1 TIMEOUT of 2 cases"
    assert crash.text is not None and f"exp-f32-{HOSTILE}: CRASH" in crash.text   # escaped, then parsed back
    skipped = cases["ELEMENT_WISE_ABS", "INT8 @ 6_4"].find("skipped")
    assert skipped is not None and skipped.get("message") == "1 NOT_SUPPORTED of 1 case"
    assert cases["ELEMENT_WISE_EXP", "FLOAT64 @ 5_0"].find("skipped") is not None   # XFAIL only
    xpass = cases["ELEMENT_WISE_EXP", "FLOAT64 @ 6_4"]                                # XPASS passes, listed
    assert [child.tag for child in xpass] == ["system-out"]
    assert xpass[0].text == "exp-f64-0002: XPASS: baseline expected FAIL\n  repro: " + REPRO.format("exp-f64-0002") + "\n"
    assert list(cases["ELEMENT_WISE_ABS", "FLOAT32 @ 6_4"]) == []


def test_properties(root: ET.Element) -> None:
    suite = root.find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["backend"] == "cpu" and props["seed"] == "1234" and props["feature_level"] == "6_4"
    assert props["device"] == f"reference CPU {HOSTILE}"


def test_control_characters_are_made_legal(root: ET.Element) -> None:
    error = next(c for c in root.iter("testcase") if c.get("name") == "FLOAT16 @ 5_0").find("failure")
    assert error is not None and error.text is not None
    assert "ZeroDivisionError\\x00\\x1b[31m" in error.text


def test_deterministic() -> None:
    assert junit.dumps(sample_run()) == junit.dumps(sample_run())


@settings(max_examples=40, deadline=None)
@given(run_results())
def test_any_run_gives_parseable_xml(run: RunResult) -> None:
    root = ET.fromstring(junit.dumps(run))
    groups = {(c.operator, c.dtype, c.level) for c in run.cases}
    assert int(root.get("tests", "-1")) == len(list(root.iter("testcase"))) == len(groups)
