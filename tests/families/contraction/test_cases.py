"""GEMM case folders (issue #24): `gen` writes the contraction family's
cases, `run --cases` replays them, and a folder whose GEMM shapes do not
chain is refused before anything runs, one located line per problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.cases.store import case_columns
from dmlconform.cli import main
from tests.conftest import REPO

SPECS = str(REPO / "specs")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gemm") / "cases"
    result = CliRunner().invoke(main, ["gen", "--specs", SPECS, "--op", "GEMM", "-o", str(out)])
    assert result.exit_code == 0 and result.output == f"wrote 86 cases of 1 operator at 6_4 (seed 0) to {out}\n"
    return out


def test_gen_then_run_replays_every_gemm_case(folder: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--specs", SPECS, "--op", "GEMM", "--cases", str(folder), "--no-progress",
                                       "--no-isolate", "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "86 cases: 84 PASS, 2 NOT_SUPPORTED" in result.output


def _edited(folder: Path, tmp_path: Path, edit: object) -> Path:
    copy = tmp_path / "cases"
    copy.mkdir()
    for f in folder.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    manifest = json.loads((copy / "manifest.json").read_text())
    edit(manifest["cases"][0])  # type: ignore[operator]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


PREFIX = "manifest.json:1:{}: error: case 0 (GEMM/FLOAT32/4d/k1/exact): "  # the case's column


@pytest.mark.parametrize(("edit", "messages"), [
    (lambda c: c["attributes"].__setitem__(0, ["TransA", "DML_MATRIX_TRANSFORM_TRANSPOSE"]),
     ["ATensor gives K=3 but BTensor gives K=1 (sizes [2, 3, 3, 1] and [2, 3, 1, 5], after their transforms): "
      "give them one K",
      "OutputTensor's sizes [2, 3, 3, 5] end in [3, 5], not [M, N] = [1, 5] of ATensor and BTensor: give it "
      "sizes [..., 1, 5]"]),
    (lambda c: c["inputs"][0].__setitem__("sizes", [1, 3, 3, 1]),
     ["ATensor's leading sizes [1, 3] are not OutputTensor's [2, 3]: every operand has the output's batch sizes "
      "(stride 0 where one repeats)"]),
    (lambda c: c["inputs"][1].__setitem__("sizes", [2, 3, 1, 4]),
     ["OutputTensor's sizes [2, 3, 3, 5] end in [3, 5], not [M, N] = [3, 4] of ATensor and BTensor: give it "
      "sizes [..., 3, 4]"]),
])
def test_a_folder_whose_shapes_do_not_chain_is_refused(folder: Path, tmp_path: Path, edit: object,
                                                         messages: list[str]) -> None:
    bad = _edited(folder, tmp_path, edit)
    result = CliRunner().invoke(main, ["run", "--specs", SPECS, "--op", "GEMM", "--cases", str(bad), "--no-progress",
                                       "--no-isolate", "-o", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.splitlines() == [f"{bad}/{PREFIX.format(case_columns(bad)[0])}{m}" for m in messages]
    assert not (tmp_path / "r").exists()
