"""An overlay's ``corrections`` (`spec.load.corrected`): the reviewer's
reading replaces a fact the page prints wrong (FOLD's and UNFOLD's empty
data-type column, their ``same DimensionCount`` constraint against their own
examples) when the spec is loaded; the extracted spec keeps the page as it
is, and a correction that corrects nothing or names no ambiguity is a
located error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dmlconform.catalog import load_spec
from dmlconform.errors import SpecError
from dmlconform.spec import model as m
from dmlconform.spec.load import loads_spec
from tests.conftest import REPO


@pytest.mark.parametrize("op", ["FOLD", "UNFOLD"])
def test_the_loaded_spec_has_the_reviewed_types_and_the_extracted_one_the_page(op: str) -> None:
    printed = loads_spec((REPO / "specs" / f"{op}.yaml").read_text(), path=f"{op}.yaml")
    assert all(not r.dtypes for t in printed.support for r in t.rows)
    assert any(c.kind is m.ConstraintKind.SAME and c.properties == ("DimensionCount",) for c in printed.constraints)
    loaded = load_spec(REPO / "specs" / f"{op}.yaml")
    assert all(r.dtypes == (m.DataType.FLOAT32, m.DataType.FLOAT16) for t in loaded.support for r in t.rows)
    assert not any(c.properties == ("DimensionCount",) for c in loaded.constraints)


def _copy(tmp_path: Path, op: str, old: str, new: str) -> Path:
    folder = tmp_path / "specs"
    (folder / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / f"{op}.yaml", folder / f"{op}.yaml")
    text = (REPO / "specs" / "reviewed" / f"{op}.yaml").read_text()
    assert old in text
    (folder / "reviewed" / f"{op}.yaml").write_text(text.replace(old, new, 1))
    return folder / f"{op}.yaml"


@pytest.mark.parametrize("old, new, expected", [
    ("- ambiguity: data-types\n", "- ambiguity: data-typos\n", "names ambiguity 'data-typos'"),
    ("  drop_same: [DimensionCount]", "  drop_same: [Sizes]", "drop_same corrects nothing"),
    ("  empty_dtypes: [FLOAT32, FLOAT16]", "  empty_dtypes: [FLOAT99]", "FLOAT99"),
    ("  empty_dtypes: [FLOAT32, FLOAT16]", "  empty_dtypes: [FLOAT32]\n  colour: red", "colour"),
])
def test_a_wrong_correction_is_a_located_error(tmp_path: Path, old: str, new: str, expected: str) -> None:
    path = _copy(tmp_path, "FOLD", old, new)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert expected in str(caught.value) and caught.value.path and caught.value.path.endswith("reviewed/FOLD.yaml")
    assert caught.value.line is not None and caught.value.line > 1


def test_a_correction_of_a_table_the_doc_has_filled_says_to_delete_it(tmp_path: Path) -> None:
    path = _copy(tmp_path, "FOLD", "x", "x")
    spec_text = path.read_text().replace("dtypes: []", "dtypes: [FLOAT32]")
    path.write_text(spec_text)
    with pytest.raises(SpecError, match="empty_dtypes corrects nothing.*delete this correction"):
        load_spec(path)
