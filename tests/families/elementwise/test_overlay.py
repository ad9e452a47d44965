"""The ``formula`` kind of reviewed semantics (docs/bitwise.md): the
overlay's formula becomes the spec's, checked against the fields, every
problem one located error; extract never counts it as lost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.families import family_of
from dmlconform.spec import model as m
from dmlconform.spec.extract import losses
from dmlconform.spec.load import loads_spec, read_text
from tests.conftest import REPO

OPERATORS = ("ELEMENT_WISE_BIT_AND", "ELEMENT_WISE_BIT_OR", "ELEMENT_WISE_BIT_XOR", "ELEMENT_WISE_BIT_NOT",
             "ELEMENT_WISE_BIT_COUNT", "ELEMENT_WISE_IS_NAN", "ELEMENT_WISE_ROUND")


@pytest.mark.parametrize("op", OPERATORS)
def test_the_overlay_gives_the_spec_its_formula(op: str) -> None:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    assert spec.formula.source is m.FormulaSource.NONE  # the page's own word, kept
    assert spec.formula.evaluable and spec.formula.parsed
    assert spec.formula.reviewed == f"operators/sdk-api/ns-directml-dml_{op.lower()}_operator_desc.md:" \
                                    f"{ {'ELEMENT_WISE_IS_NAN': 41, 'ELEMENT_WISE_ROUND': 70}.get(op, 48)}"
    assert spec.semantics is None  # the element-wise family tests it, as any formula
    family, _ = family_of(spec)
    assert family is not None and family.name == "element-wise formula"


def test_extract_does_not_count_a_reviewed_formula_as_lost() -> None:
    """The page has no formula: replacing the spec with the page's must not
    be refused as "a poorer spec, without the formula"."""
    path = REPO / "specs" / "ELEMENT_WISE_BIT_AND.yaml"
    old = load_spec(path)
    assert losses(loads_spec(read_text(path), path=str(path)), old) == []  # the spec without its overlay


def _folder(tmp_path: Path, formula: str) -> Path:
    specs = tmp_path / "specs"
    (specs / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / "ELEMENT_WISE_BIT_AND.yaml", specs / "ELEMENT_WISE_BIT_AND.yaml")
    text = (REPO / "specs" / "reviewed" / "ELEMENT_WISE_BIT_AND.yaml").read_text()
    (specs / "reviewed" / "ELEMENT_WISE_BIT_AND.yaml").write_text(
        text.replace("formula: 'f(a, b) = a & b'", f"formula: '{formula}'"))
    return specs


@pytest.mark.parametrize(("formula", "message"), [
    ("f(a, b) = a & c", "formula 'f(a, b) = a & c' is not one the element-wise oracle can evaluate"),
    ("f(a, b) = a & & b", "formula 'f(a, b) = a & & b': does not parse: expected a number, a name or '(', found '&'"),
    ("f(a, b) = (a & b) + 1", "formula 'f(a, b) = (a & b) + 1' mixes bitwise operations with other ones, and the "
                              "tables allow FLOAT16, FLOAT32, FLOAT64 inputs, whose bitwise operations read their "
                              "encodings: write a formula of bitwise operations alone (docs/bitwise.md)"),
    ("f(a, b) = " + "(" * 40 + "a" + ")" * 40, "formula 'f(a, b) = " + "(" * 40 + "a" + ")" * 6 + "...': does not parse: nesting "
                                               "deeper than 32 levels"),
])
def test_a_bad_reviewed_formula_is_one_located_error(tmp_path: Path, formula: str, message: str) -> None:
    specs = _folder(tmp_path, formula)
    result = CliRunner().invoke(main, ["run", "--specs", str(specs), "--no-progress", "--no-isolate",
                                       "-o", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"{specs / 'reviewed' / 'ELEMENT_WISE_BIT_AND.yaml'}:8:12: error: {message}"), result.output
    assert not (tmp_path / "r").exists()


def test_a_reviewed_formula_cannot_replace_a_pages_formula(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    (specs / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / "ELEMENT_WISE_ADD.yaml", specs / "ELEMENT_WISE_ADD.yaml")
    (specs / "reviewed" / "ELEMENT_WISE_ADD.yaml").write_text(
        "operator: ELEMENT_WISE_ADD\nsemantics:\n  family: formula\n  source: a.md:1\n"
        "  formula: 'f(a, b) = a - b'\nambiguities: []\n")
    result = CliRunner().invoke(main, ["lint", str(specs)])
    assert result.exit_code == 1
    assert f"{specs / 'reviewed' / 'ELEMENT_WISE_ADD.yaml'}:5:12: DML002 ELEMENT_WISE_ADD's page has a formula of " \
           "its own ('f(a, b) = a + b'); a reviewed formula is only for pages without one" in result.output
