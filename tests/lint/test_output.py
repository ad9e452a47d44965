"""Tests for dmlconform.lint.output: exact output for every format."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.errors import InputError
from dmlconform.lint.checks import RULES, Finding, Rule
from dmlconform.lint.output import (
    FORMATS,
    escape_data,
    escape_property,
    format_findings,
    sarif_uri,
)

FINDINGS = [
    Finding("DML111", "specs/B.yaml", 6, 18, "the doc also claims introduction at 1_0", "warning"),
    Finding("DML101", "specs/A.yaml", 40, 10, "support table for 2_0 is older than introduced: 3_0", "error"),
    Finding("DML002", "specs/A.yaml", 5, 9, "the top level: unknown key 'colour'", "error"),
]


def test_text() -> None:
    assert format_findings(FINDINGS, "text") == (
        "specs/A.yaml:5:9: DML002 the top level: unknown key 'colour'\n"
        "specs/A.yaml:40:10: DML101 support table for 2_0 is older than introduced: 3_0\n"
        "specs/B.yaml:6:18: DML111 the doc also claims introduction at 1_0"
    )


def test_empty_outputs() -> None:
    assert format_findings([], "text") == ""
    assert format_findings([], "github") == ""
    assert json.loads(format_findings([], "json")) == []
    assert json.loads(format_findings([], "sarif"))["runs"][0]["results"] == []


def test_json() -> None:
    data = json.loads(format_findings(FINDINGS, "json"))
    assert data[0] == {"code": "DML002", "path": "specs/A.yaml", "line": 5, "column": 9,
                       "message": "the top level: unknown key 'colour'", "severity": "error"}
    assert [d["code"] for d in data] == ["DML002", "DML101", "DML111"]


def test_github() -> None:
    assert format_findings(FINDINGS, "github").splitlines() == [
        "::error file=specs/A.yaml,line=5,col=9,title=DML002::the top level: unknown key 'colour'",
        "::error file=specs/A.yaml,line=40,col=10,title=DML101::support table for 2_0 is older than introduced: 3_0",
        "::warning file=specs/B.yaml,line=6,col=18,title=DML111::the doc also claims introduction at 1_0",
    ]


def test_github_escaping() -> None:
    f = Finding("DML001", "dir,x/a:b.yaml", 1, 1, "50% bad\r\nline two", "error")
    assert format_findings([f], "github") == (
        "::error file=dir%2Cx/a%3Ab.yaml,line=1,col=1,title=DML001::50%25 bad%0D%0Aline two")
    assert escape_property("a%b:c,d\n") == "a%25b%3Ac%2Cd%0A"
    assert escape_data("a:b,c") == "a:b,c"


#: The part of the SARIF 2.1.0 schema GitHub code scanning relies on.
SARIF_SUBSET = {
    "type": "object",
    "required": ["$schema", "version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name", "rules"],
                    "properties": {
                        "name": {"type": "string"}, "informationUri": {"type": "string", "format": "uri"},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id", "name", "shortDescription", "defaultConfiguration"],
                            "properties": {
                                "id": {"type": "string"},
                                "shortDescription": {"type": "object", "required": ["text"]},
                                "defaultConfiguration": {"type": "object", "properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}}},
                            }}},
                    }}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["ruleId", "level", "message", "locations"],
                    "properties": {
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "ruleIndex": {"type": "integer", "minimum": 0},
                        "message": {"type": "object", "required": ["text"]},
                        "locations": {"type": "array", "minItems": 1, "items": {
                            "type": "object", "required": ["physicalLocation"],
                            "properties": {"physicalLocation": {
                                "type": "object", "required": ["artifactLocation", "region"],
                                "properties": {
                                    "artifactLocation": {"type": "object", "required": ["uri"]},
                                    "region": {"type": "object", "required": ["startLine", "startColumn"],
                                               "properties": {"startLine": {"type": "integer", "minimum": 1},
                                                              "startColumn": {"type": "integer", "minimum": 1}}},
                                }}}}},
                    }}},
            }}},
    },
}


def test_sarif_structure() -> None:
    log = json.loads(format_findings(FINDINGS, "sarif"))
    jsonschema.validate(log, SARIF_SUBSET)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "dmlconform" and driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == [r.code for r in RULES]
    assert driver["rules"][0] == {"id": "DML001", "name": "yaml-syntax", "shortDescription": {"text": RULES[0].summary},
                                  "defaultConfiguration": {"level": "error"}}
    first = run["results"][0]
    assert first == {
        "ruleId": "DML002", "ruleIndex": 1, "level": "error", "message": {"text": "the top level: unknown key 'colour'"},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "specs/A.yaml", "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 5, "startColumn": 9}}}],
    }
    assert [r["level"] for r in run["results"]] == ["error", "error", "warning"]
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_with_custom_rules() -> None:
    rules = (Rule("X1", "x-one", "one", "warning"),)
    log = json.loads(format_findings([Finding("X1", "a.yaml", 1, 1, "m", "warning"), FINDINGS[0]], "sarif", rules=rules))
    results = log["runs"][0]["results"]
    assert results[0]["ruleIndex"] == 0 and "ruleIndex" not in results[1]


@pytest.mark.parametrize("path, uri", [
    ("specs/A.yaml", "specs/A.yaml"),
    ("./specs/A.yaml", "specs/A.yaml"),
    ("specs\\sub\\A.yaml", "specs/sub/A.yaml"),
    ("/abs/specs/A.yaml", "file:///abs/specs/A.yaml"),
    ("C:\\work\\A.yaml", "file:///C:/work/A.yaml"),
])
def test_sarif_uri(path: str, uri: str) -> None:
    assert sarif_uri(path) == uri


def test_unknown_format() -> None:
    with pytest.raises(InputError, match=r"fmt='xml'; use one of text, json, sarif, github"):
        format_findings(FINDINGS, "xml")


_findings = st.lists(st.builds(
    Finding,
    code=st.sampled_from([r.code for r in RULES]),
    path=st.text(min_size=1, max_size=20),
    line=st.integers(1, 10_000), column=st.integers(1, 200),
    message=st.text(max_size=80), severity=st.sampled_from(["error", "warning"]),
), max_size=8)


@settings(max_examples=60, deadline=None)
@given(findings=_findings, fmt=st.sampled_from(FORMATS))
def test_output_is_deterministic_and_order_free(findings: list[Finding], fmt: str) -> None:
    out = format_findings(findings, fmt)
    assert out == format_findings(list(reversed(findings)), fmt)
    if fmt == "github":
        assert len(out.split("\n")) == len(findings) if findings else out == ""  # the runner splits on LF only
    if fmt in ("json", "sarif"):
        json.loads(out)
