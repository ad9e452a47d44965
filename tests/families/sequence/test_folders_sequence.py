"""Case folders of the sequence family: `gen` writes them, `run --cases`
replays them, and a case no TOP_K1 call describes (K outside the axis, an
axis past the dimensions, an attribute of the wrong type, outputs of other
sizes) is refused before anything runs, one located line, exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dmlconform.cases.store import case_columns
from dmlconform.cli import main
from tests.conftest import REPO

SPECS = str(REPO / "specs")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("topk1") / "cases"
    result = CliRunner().invoke(main, ["gen", "--specs", SPECS, "--op", "TOP_K1", "-o", str(out)])
    assert result.output == f"wrote 96 cases of 1 operator at 6_4 (seed 0) to {out}\n"
    return out


def _edited(folder: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    copy = tmp_path / "cases"
    copy.mkdir()
    for f in folder.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    manifest = json.loads((copy / "manifest.json").read_text())
    edit(manifest["cases"][0])
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def _run(cases: Path, tmp_path: Path) -> Any:
    return CliRunner().invoke(main, ["run", "--specs", SPECS, "--op", "TOP_K1", "--cases", str(cases),
                                     "--no-progress", "--no-isolate", "-o", str(tmp_path / "r")])


def test_gen_then_run_replays_every_case(folder: Path, tmp_path: Path) -> None:
    result = _run(folder, tmp_path)
    assert result.exit_code == 0, result.output
    assert "96 cases: 94 PASS, 2 NOT_SUPPORTED" in result.output


PREFIX = "manifest.json:1:{}: error: case 0 (TOP_K1/FLOAT32/4d/axis=3/n=33/k=5/decreasing/random): "  # the case's column


@pytest.mark.parametrize(("edit", "message"), [
    (lambda c: c["attributes"].__setitem__(1, ["K", 0]), "K=0 is outside 1..33 (the size of axis 3): give one inside"),
    (lambda c: c["attributes"].__setitem__(1, ["K", 34]), "K=34 is outside 1..33 (the size of axis 3): give one inside"),
    (lambda c: c["attributes"].__setitem__(0, ["Axis", 4]),
     "Axis=4 is not a dimension of InputTensor (sizes [2, 3, 2, 33]): give 0..3"),
    (lambda c: c["attributes"].__setitem__(1, ["K", "five"]),
     'attribute K="five" is not an integer: give an integer from 0 to 4294967295 (UINT32)'),
    (lambda c: c["attributes"].__setitem__(0, ["Axis", True]),
     "attribute Axis=true is not an integer: give an integer from 0 to 4294967295 (UINT32)"),
    (lambda c: c["outputs"][1].__setitem__("sizes", [2, 3, 2, 4]),
     "OutputIndexTensor's sizes [2, 3, 2, 4] are not [2, 3, 2, 5]: give it those"),
])
def test_a_case_no_call_describes_is_refused(folder: Path, tmp_path: Path,
                                             edit: Callable[[dict[str, Any]], None], message: str) -> None:
    bad = _edited(folder, tmp_path, edit)
    result = _run(bad, tmp_path)
    assert (result.exit_code, result.output.splitlines()[:1]) == (2, [f"{bad}/{PREFIX.format(case_columns(bad)[0])}{message}"])
    assert not (tmp_path / "r").exists()
