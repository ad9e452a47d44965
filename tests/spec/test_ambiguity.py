"""Ambiguities as data (issue #22 item 1): what extract derives, the
reviewed overlay merged at load, and the located errors of a bad one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.cli import main
from dmlconform.spec import model as m
from dmlconform.spec.load import load_spec, loads_spec
from dmlconform.spec.store import dumps_spec
from tests.conftest import REPO


def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _kinds(spec: m.Spec) -> list[tuple[str, str]]:
    return [(a.id, a.primary) for a in spec.ambiguities]


def test_extract_finds_every_kind_on_shrink() -> None:
    spec = _spec("ACTIVATION_SHRINK")
    assert _kinds(spec) == [("nan", "propagate"), ("branch-overlap", "first-match"),
                            ("integer-float-attribute", "exact"), ("integer-overflow", "wrap")]
    nan = spec.ambiguities[0]
    assert nan.source == "operators/windows-docs-scraper/ns-directml-dml_activation_shrink_operator_desc.md:6"
    assert [r.setting for r in nan.readings] == [m.NanPolicy.PROPAGATE, m.NanPolicy.FORMULA]
    assert "like ONNX" in nan.readings[1].says and not nan.reviewed


@pytest.mark.parametrize("op, expected", [
    ("ELEMENT_WISE_SIGN", [("nan", "formula")]),
    ("ACTIVATION_THRESHOLDED_RELU", [("nan", "propagate")]),
    ("ELEMENT_WISE_ADD", [("integer-overflow", "wrap")]),
    ("ACTIVATION_SOFTSIGN", []),
    ("ACTIVATION_ELU", []),  # NaN reaches `Alpha * (exp(x) - 1)`, which carries it
    ("ACTIVATION_PARAMETERIZED_RELU", [("nan", "propagate"), ("integer-overflow", "wrap")]),  # x >= 0 never reads slope
    ("ELEMENT_WISE_POW", [("nan", "propagate"), ("integer-overflow", "wrap")]),  # pow(NaN, 0) = 1 in IEEE 754
    ("ELEMENT_WISE_CONSTANT_POW", [("nan", "propagate")]),  # float tensors only
])
def test_extract_finds_only_what_the_formula_shows(op: str, expected: list[tuple[str, str]]) -> None:
    assert _kinds(_spec(op)) == expected


def test_a_nan_an_untaken_branch_never_reads_and_ieee_pow_are_ambiguities() -> None:
    """The results page called these doc ambiguities while they FAILed
    onnxruntime and torch: PRelu's NaN slope at x >= 0 gives x, and IEEE
    754 pow gives 1 for pow(NaN, 0)."""
    (prelu,) = [a for a in _spec("ACTIVATION_PARAMETERIZED_RELU").ambiguities if a.id == "nan"]
    assert "(x)" in prelu.readings[1].says
    (pow_nan,) = [a for a in _spec("ELEMENT_WISE_POW").ambiguities if a.id == "nan"]
    assert pow_nan.question == "What does a NaN input give where IEEE 754 pow(input, exponent) gives a number?"
    assert pow_nan.readings[1].says.endswith("gives 1 for pow(NaN, 0) and pow(1, NaN), like C and ONNX")


def test_a_spec_with_ambiguities_round_trips() -> None:
    spec = _spec("ACTIVATION_SHRINK")
    assert loads_spec(dumps_spec(spec)) == spec


OVERLAY = """operator: ACTIVATION_SHRINK
ambiguities:
- id: bias-rounding
  kind: other
  question: Is a fractional Bias rounded before it meets an integer tensor?
  source: operators/sdk-api/ns-directml-dml_activation_shrink_operator_desc.md:12
  primary: unsaid
  readings:
  - id: unsaid
    says: the doc says nothing
  - id: rounded
    says: Bias is rounded to nearest first
"""


def _folder(tmp_path: Path, overlay: str) -> Path:
    specs = tmp_path / "specs"
    (specs / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / "ACTIVATION_SHRINK.yaml", specs)
    (specs / "reviewed" / "ACTIVATION_SHRINK.yaml").write_text(overlay, encoding="utf-8")
    return specs


def test_the_reviewed_overlay_is_merged_and_never_stored(tmp_path: Path) -> None:
    specs = _folder(tmp_path, OVERLAY)
    spec = load_spec(specs / "ACTIVATION_SHRINK.yaml")
    assert [a.id for a in spec.ambiguities][-1] == "bias-rounding"
    assert spec.ambiguities[-1].reviewed and spec.ambiguities[-1].kind is m.AmbiguityKind.OTHER
    assert "bias-rounding" not in dumps_spec(spec)


def test_a_reviewed_entry_replaces_the_derived_one_of_its_id(tmp_path: Path) -> None:
    overlay = OVERLAY.replace("id: bias-rounding\n  kind: other", "id: integer-overflow\n  kind: other")
    spec = load_spec(_folder(tmp_path, overlay) / "ACTIVATION_SHRINK.yaml")
    assert [a.id for a in spec.ambiguities] == ["nan", "branch-overlap", "integer-float-attribute", "integer-overflow"]
    assert spec.ambiguities[-1].reviewed


@pytest.mark.parametrize("change, where, message", [
    (("primary: unsaid", "primary: said"), "7:12",
     "primary 'said' is not one of the readings (unsaid, rounded); name one of them"),
    (("  - id: rounded\n", "  - id: rounded\n    nan_policy: formula\n"), "12:5",
     "a reading of kind other sets nan_policy; kind other has no setting: drop it"),
    (("operator: ACTIVATION_SHRINK", "operator: ACTIVATION_ELU"), "1:11",
     "overlay of ACTIVATION_SHRINK names operator ACTIVATION_ELU; an overlay has the name of its spec file: "
     "write operator: ACTIVATION_SHRINK"),
    (("  kind: other", "  kind: others"), "4:9", "ambiguities.0.kind: 'others' is not allowed; did you mean 'other'?"),
    ((OVERLAY, "# nothing yet\n"), "1:1", "empty file: an overlay is a YAML mapping of operator and ambiguities "
                                          "(docs/ambiguities.md); fill it in or delete it"),
    ((OVERLAY, "- 1\n"), "1:1", "an overlay must be a YAML mapping of operator and ambiguities, not a list"),
])
def test_a_bad_overlay_is_one_located_error(tmp_path: Path, change: tuple[str, str], where: str,
                                            message: str) -> None:
    specs = _folder(tmp_path, OVERLAY.replace(*change))
    result = CliRunner().invoke(main, ["run", "--specs", str(specs), "--op", "ACTIVATION_SHRINK", "--no-isolate",
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    overlay = specs / "reviewed" / "ACTIVATION_SHRINK.yaml"
    assert f"{overlay}:{where}: error: {message}" in result.output
    assert "Traceback" not in result.output


def test_lint_checks_an_overlay_and_not_as_a_spec(tmp_path: Path) -> None:
    specs = _folder(tmp_path, OVERLAY.replace("primary: unsaid", "primary: said"))
    result = CliRunner().invoke(main, ["lint", str(specs)])
    overlay = specs / "reviewed" / "ACTIVATION_SHRINK.yaml"
    assert f"{overlay}:7:12: DML002 primary 'said' is not one of the readings" in result.output
    assert result.exit_code == 1
