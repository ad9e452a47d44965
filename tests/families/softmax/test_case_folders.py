"""Softmax case folders (issue #24): `gen` writes ``Axes`` as text ("2,0"),
`run --cases` replays it, and a hand-edited ``Axes`` or ``AxisCount`` that
is no call of the operator is refused before anything runs, one located
line per problem, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.cases.store import case_columns
from dmlconform.cli import main
from tests.conftest import REPO

SPECS = str(REPO / "specs")
CASE = "ACTIVATION_HARDMAX1/FLOAT32/4d/axes=2,0/n8/ties"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hardmax1") / "cases"
    result = CliRunner().invoke(main, ["gen", "--specs", SPECS, "--op", "ACTIVATION_HARDMAX1", "--dtype", "FLOAT32",
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["cases"] = [c for c in manifest["cases"] if c["id"] == CASE]
    assert manifest["cases"][0]["attributes"] == [["AxisCount", 2], ["Axes", "2,0"]]
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def _run(folder: Path, tmp_path: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["run", "--specs", SPECS, "--op", "ACTIVATION_HARDMAX1", "--cases", str(folder),
                                       "--no-progress", "--no-isolate", "-o", str(tmp_path / "r")])
    return result.exit_code, result.output.splitlines()


def test_a_generated_folder_replays(folder: Path, tmp_path: Path) -> None:
    code, lines = _run(folder, tmp_path)
    assert code == 0 and any("1 case: 1 PASS" in line for line in lines), lines


@pytest.mark.parametrize(("attributes", "message"), [
    ([["AxisCount", 1], ["Axes", "4"]], "Axes=4: 4 is no dimension of the 4-D OutputTensor: give dimensions 0 to 3"),
    ([["AxisCount", 2], ["Axes", "2,2"]], "Axes=2,2 names dimension 2 twice: give each dimension once"),
    ([["AxisCount", 2], ["Axes", "a,b"]],
     "Axes='a,b' is not a list of dimension numbers; write them comma-separated, e.g. \"2,0\""),
    ([["AxisCount", 3], ["Axes", "2,0"]], "AxisCount=3 but Axes=2,0 lists 2 dimensions: give AxisCount=2"),
    ([["AxisCount", 1]], "attribute Axes is missing: give the reduced dimensions as text, e.g. [\"Axes\", \"3\"]"),
])
def test_a_bad_axes_attribute_is_refused(folder: Path, tmp_path: Path, attributes: list[list[object]],
                                         message: str) -> None:
    bad = tmp_path / "cases"
    bad.mkdir()
    for f in folder.iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["cases"][0]["attributes"] = attributes
    (bad / "manifest.json").write_text(json.dumps(manifest))
    code, lines = _run(bad, tmp_path)
    assert code == 2
    assert lines == [f"{bad}/manifest.json:1:{case_columns(bad)[0]}: error: case 0 ({CASE}): {message}"]
    assert not (tmp_path / "r").exists()
