"""Ambiguities as data (issue #22 item 1): what extract derives, the
reviewed overlay merged at load, and the located errors of a bad one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.spec import model as m
from dmlconform.spec.load import loads_spec
from dmlconform.spec.store import dumps_spec
from tests.conftest import REPO


def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _kinds(spec: m.Spec) -> list[tuple[str, str]]:
    return [(a.id, a.primary) for a in spec.ambiguities]


def test_extract_finds_every_kind_on_shrink() -> None:
    spec = _spec("ACTIVATION_SHRINK")
    assert _kinds(spec) == [("nan", "propagate"), ("branch-overlap", "first-match"),
                            ("integer-float-attribute", "exact"), ("integer-overflow", "wrap"),
                            ("float-to-integer-conversion", "as-overflow")]
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
    ("ELEMENT_WISE_POW", [("integer-pow", "exact"), ("integer-overflow", "wrap"), ("ieee-pow", "formula"),
                          ("float-to-integer-conversion", "as-overflow")]),  # pow(NaN, 0) = 1 in IEEE 754
    ("ELEMENT_WISE_CONSTANT_POW", [("ieee-pow", "formula")]),  # float tensors only
    ("ELEMENT_WISE_DIVIDE", [("integer-overflow", "wrap"), ("integer-division-by-zero", "quotient-zero")]),
    ("ELEMENT_WISE_MODULUS_FLOOR", [("integer-overflow", "wrap"), ("integer-division-by-zero", "quotient-zero"),
                                    ("infinite-divisor", "formula")]),
    ("ELEMENT_WISE_MEAN", [("integer-overflow", "wrap")]),  # (a + b) / 2: a constant divisor is never 0
    ("ELEMENT_WISE_RECIP", []),  # 1 / x on float tensors only: IEEE gives inf
])
def test_extract_finds_only_what_the_formula_shows(op: str, expected: list[tuple[str, str]]) -> None:
    assert _kinds(_spec(op)) == expected


def test_a_nan_an_untaken_branch_never_reads_and_ieee_pow_are_ambiguities() -> None:
    """The results page called these doc ambiguities while they FAILed
    onnxruntime and torch: PRelu's NaN slope at x >= 0 gives x, and IEEE
    754 pow gives 1 for pow(NaN, 0) and +inf for pow(-inf, 0.5)."""
    (prelu,) = [a for a in _spec("ACTIVATION_PARAMETERIZED_RELU").ambiguities if a.id == "nan"]
    assert "(x)" in prelu.readings[1].says
    (pow_ieee,) = [a for a in _spec("ELEMENT_WISE_POW").ambiguities if a.id == "ieee-pow"]
    assert pow_ieee.question == "What does pow(input, exponent) give at IEEE 754's special values?"
    assert [r.setting for r in pow_ieee.readings] == [m.IeeePow.FORMULA, m.IeeePow.IEEE_754]
    assert "pow(-inf, 0.5) = +inf" in pow_ieee.readings[1].says


def test_integer_division_by_zero_has_the_readings_implementations_take() -> None:
    """Issue #22: torch on CUDA gives -1 for an integer modulus by zero,
    numpy 0, AArch64's quotient of 0 leaves a; the doc says nothing."""
    (mod,) = [a for a in _spec("ELEMENT_WISE_MODULUS_TRUNCATE").ambiguities if a.id == "integer-division-by-zero"]
    assert mod.question == "What does an integer division by b = 0 give (C and ONNX leave it undefined)?"
    assert [r.setting for r in mod.readings] == [m.DivisionByZero.QUOTIENT_ZERO, m.DivisionByZero.ZERO,
                                                 m.DivisionByZero.ALL_ONES]
    (div,) = [a for a in _spec("ELEMENT_WISE_DIVIDE").ambiguities if a.id == "integer-division-by-zero"]
    assert [r.id for r in div.readings] == ["quotient-zero", "all-ones"]  # a / 0 = 0 is a result of 0: no `zero`


def test_a_modulus_by_infinity_and_a_conversion_out_of_range_are_ambiguities() -> None:
    (floor,) = [a for a in _spec("ELEMENT_WISE_MODULUS_FLOOR").ambiguities if a.id == "infinite-divisor"]
    assert floor.question == "What does a finite a give for b = +-inf?"
    assert "adding b where a and b differ in sign" in floor.readings[1].says
    (conversion,) = [a for a in _spec("ELEMENT_WISE_CLIP").ambiguities if a.kind is m.AmbiguityKind.FLOAT_TO_INTEGER]
    assert [r.setting for r in conversion.readings] == list(m.FloatToInteger)  # one reading per platform


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
    assert [a.id for a in spec.ambiguities] == ["nan", "branch-overlap", "integer-float-attribute", "integer-overflow",
                                                "float-to-integer-conversion"]
    assert spec.ambiguities[3].reviewed and not spec.ambiguities[-1].reviewed


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
