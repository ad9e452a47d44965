"""The docs' attribute domains against CreateOperator (dmlconform/backends/directml/domains.py;
issue #22 item 4): the probes planned (pure), the verdicts, the page section, and the real
library's answers (skipped where it cannot be fetched)."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from dmlconform.backends.directml import domains
from dmlconform.backends.directml.library import Unavailable, validator_libs
from dmlconform.cli import main
from dmlconform.spec.model import FeatureLevel
from tests.backends.directml.conftest import spec

NEWEST = FeatureLevel.FL_6_4


def _probes(op: str) -> list[tuple[str, object, bool]]:
    return [(p.attribute, p.value, p.allowed) for p in domains.plan(spec(op), NEWEST)]


def test_softplus_steepness_is_probed_at_and_below_its_bound() -> None:
    assert _probes("ACTIVATION_SOFTPLUS") == [
        ("base", None, True), ("Steepness", 1.0, True), ("Steepness", 0.9999999403953552, False),
        ("Steepness", 0.0, False)]


def test_adam_betas_are_probed_at_both_bounds_and_beyond() -> None:
    beta1 = [(v, ok) for a, v, ok in _probes("ADAM_OPTIMIZER") if a == "Beta1"]
    assert beta1 == [(0.0, True), (-1.401298464324817e-45, False), (-1.0, False),
                     (1.0, True), (1.0000001192092896, False), (2.0, False)]


def test_a_bound_through_a_tensors_dimension_count_is_evaluated_on_the_configuration() -> None:
    # "This value must be less than the DimensionCount of the InputTensor": 4 dimensions here
    assert [(a, v, ok) for a, v, ok in _probes("TOP_K") if a == "Axis"] == [
        ("Axis", 3, True), ("Axis", 4, False), ("Axis", 8, False)]


def test_count_fields_and_operators_without_domains_are_not_probed() -> None:
    assert "InputCount" not in {a for a, _, _ in _probes("JOIN")}  # it sizes the InputTensors array
    assert _probes("ACTIVATION_SHRINK") == []


def test_verdicts() -> None:
    probes = domains.plan(spec("JOIN"), NEWEST)
    assert [(p.attribute, p.value) for p in probes] == [("base", None), ("Axis", 0), ("Axis", 3), ("Axis", 4),
                                                        ("Axis", 6)]
    bad = -2147024809  # E_INVALIDARG
    checks = domains.summarize(probes, [0, bad, 0, 0, bad])
    assert [(c.value, c.doc, c.verdict) for c in checks] == [
        ("0", "allowed", "unverified"), ("3", "allowed", "agree"), ("4", "forbidden", "disagree"),
        ("6", "forbidden", "agree")]
    assert checks[0].library == "rejected: E_INVALIDARG (0x80070057) (the configuration was built for Axis=3)"
    rejected_base = domains.summarize(probes, [bad, 0, 0, 0, 0])
    assert {c.verdict for c in rejected_base} == {"unverified"}
    assert rejected_base[2].library == "accepted (the base configuration: rejected: E_INVALIDARG (0x80070057))"


def test_markdown_section_and_old_reports() -> None:
    probes = domains.plan(spec("ACTIVATION_SOFTPLUS"), NEWEST)
    rows = [c.as_dict() for c in domains.summarize(probes, [0, 0, -2147024809, 0])]
    page = domains.markdown({"domains": rows})
    assert "2 agree, 1 disagree, 0 unverified" in page  # 0 accepted against "cannot be less than 1"
    assert "| ACTIVATION_SOFTPLUS | Steepness | `[1, inf)` | 0.99999994 | forbidden | rejected: E_INVALIDARG " \
           "(0x80070057) | agree |" in page
    assert domains.markdown({}) == ""  # a report.json written before domains


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux libdirectml.so needs Linux")
def test_the_real_library_on_the_docs_domains(tmp_path) -> None:  # type: ignore[no-untyped-def]
    try:
        validator_libs()
    except Unavailable as exc:
        pytest.skip(f"real-library tier skipped: {exc}")
    out = tmp_path / "v"
    result = CliRunner().invoke(main, ["validate", "--op", "ACTIVATION_SOFTPLUS", "--op", "ADAM_OPTIMIZER",
                                       "-o", str(out), "--markdown", str(tmp_path / "page.md")])
    report = json.loads((out / "report.json").read_text())
    got = {(d["operator"], d["attribute"], d["value"]): (d["library"].split(" (")[0], d["verdict"])
           for d in report["domains"]}
    # the library enforces "Steepness cannot be less than 1" ...
    assert got["ACTIVATION_SOFTPLUS", "Steepness", "1"] == ("accepted", "agree")
    assert got["ACTIVATION_SOFTPLUS", "Steepness", "0.99999994"] == ("rejected: E_INVALIDARG", "agree")
    # ... but not "Beta1 should be between 0.0 and 1.0" (CreateOperator accepts Beta1 = 2)
    assert got["ADAM_OPTIMIZER", "Beta1", "2"] == ("accepted", "disagree")
    assert result.exit_code == 1 and "Attribute domains (doc vs. library)" in result.output
    assert "## Attribute domains: the doc's ranges vs. the library" in (tmp_path / "page.md").read_text()
