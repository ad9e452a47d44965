"""Lint findings rendered as text, JSON, SARIF 2.1.0 or GitHub workflow commands.

DESIGN.md "Who uses it": spec writers read ``path:line:col: CODE message``
lines; CI reads JSON, uploads SARIF to code scanning, or prints GitHub
annotations.  Every format is a pure function of the findings, sorted, so the
same findings always give the same bytes.  No trailing newline: the caller
prints.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from dmlconform.errors import InputError
from dmlconform.lint.checks import RULES, Finding, Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "dmlconform"
INFORMATION_URI = "https://dmlconform.invalid/docs/lint"


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: f.sort_key)


def format_text(findings: Iterable[Finding], rules: tuple[Rule, ...] = RULES) -> str:
    """One ``path:line:col: CODE message`` line per finding (flake8's default)."""
    return "\n".join(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}" for f in _sorted(findings))


def format_json(findings: Iterable[Finding], rules: tuple[Rule, ...] = RULES) -> str:
    """A JSON list of objects with every `Finding` field."""
    return json.dumps([asdict(f) for f in _sorted(findings)], indent=2, ensure_ascii=False)


def sarif_uri(path: str) -> str:
    """A SARIF artifact URI: relative paths with forward slashes (resolved
    against %SRCROOT%), absolute paths as ``file://`` URIs."""
    posix = path.replace("\\", "/")
    if PureWindowsPath(path).is_absolute() or PurePosixPath(posix).is_absolute():
        return PurePosixPath(posix).as_uri() if posix.startswith("/") else PureWindowsPath(path).as_uri()
    return posix[2:] if posix.startswith("./") else posix


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "defaultConfiguration": {"level": rule.severity},
    }


def _sarif_result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    location: dict[str, Any] = {"uri": sarif_uri(f.path)}
    if not location["uri"].startswith("file:"):
        location["uriBaseId"] = "%SRCROOT%"
    result: dict[str, Any] = {"ruleId": f.code}
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    result.update({
        "level": f.severity,
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": location,
            "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
        }}],
    })
    return result


def sarif_log(findings: Iterable[Finding], rules: tuple[Rule, ...] = RULES) -> dict[str, Any]:
    """The SARIF 2.1.0 log as data: one run, the rule table as the driver's rules."""
    ordered = sorted(rules, key=lambda r: r.code)
    index = {rule.code: i for i, rule in enumerate(ordered)}
    driver = {"name": TOOL_NAME, "informationUri": INFORMATION_URI, "rules": [_sarif_rule(r) for r in ordered]}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": driver},
            "columnKind": "unicodeCodePoints",
            "results": [_sarif_result(f, index) for f in _sorted(findings)],
        }],
    }


def format_sarif(findings: Iterable[Finding], rules: tuple[Rule, ...] = RULES) -> str:
    """SARIF 2.1.0 JSON, as GitHub code scanning reads it."""
    return json.dumps(sarif_log(findings, rules), indent=2, ensure_ascii=False)


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as `escape_data`, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(findings: Iterable[Finding], rules: tuple[Rule, ...] = RULES) -> str:
    """GitHub Actions annotations: ``::error file=..,line=..,col=..,title=CODE::message``."""
    lines = []
    for f in _sorted(findings):
        command = "warning" if f.severity == "warning" else "error"
        props = f"file={escape_property(f.path)},line={f.line},col={f.column},title={escape_property(f.code)}"
        lines.append(f"::{command} {props}::{escape_data(f.message)}")
    return "\n".join(lines)


Formatter = Callable[[Iterable[Finding], tuple[Rule, ...]], str]

_FORMATTERS: tuple[tuple[str, Formatter], ...] = (
    ("text", format_text), ("json", format_json), ("sarif", format_sarif), ("github", format_github),
)

#: The names `format_findings` accepts (for a click.Choice).
FORMATS: tuple[str, ...] = tuple(name for name, _ in _FORMATTERS)


def format_findings(findings: list[Finding], fmt: str, *, rules: tuple[Rule, ...] = RULES) -> str:
    """``findings`` rendered in ``fmt`` (one of `FORMATS`); raises InputError otherwise."""
    formatter = dict(_FORMATTERS).get(fmt)
    if formatter is None:
        raise InputError(f"unknown lint output format fmt={fmt!r}; use one of {', '.join(FORMATS)}")
    return formatter(findings, tuple(rules))
