"""The reviewed overlay's semantics (issue #24 item 1): loaded with its
spec, checked against it by lint and by every command that loads it, each
problem at its line and column."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.errors import SpecError
from dmlconform.families.contraction.semantics import Contraction, Operand
from dmlconform.spec import model as m
from dmlconform.spec.files import spec_files
from tests.conftest import REPO

OVERLAY = REPO / "specs" / "reviewed" / "GEMM.yaml"


def _folder(tmp_path: Path, overlay: str) -> Path:
    """specs/GEMM.yaml and an overlay of ``overlay``'s text beside it."""
    specs = tmp_path / "specs"
    (specs / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / "GEMM.yaml", specs / "GEMM.yaml")
    (specs / "reviewed" / "GEMM.yaml").write_text(overlay)
    return specs


def _broken(old: str, new: str) -> str:
    text = OVERLAY.read_text()
    assert old in text
    return text.replace(old, new)


def test_gemm_loads_with_its_semantics() -> None:
    sem = load_spec(REPO / "specs" / "GEMM.yaml").semantics
    assert isinstance(sem, Contraction)
    assert (sem.a, sem.b, sem.c, sem.output) == (Operand("ATensor", "TransA"), Operand("BTensor", "TransB"),
                                                 "CTensor", "OutputTensor")
    assert (sem.alpha, sem.beta, sem.activation, sem.c_broadcast) == ("Alpha", "Beta", "FusedActivation", True)
    assert sem.dims_at(m.FeatureLevel.FL_1_0) == (4,) and sem.dims_at(m.FeatureLevel.FL_6_4) == (2, 3, 4)
    assert sem.accumulator(m.DataType.FLOAT16) is m.DataType.FLOAT32


def test_an_overlay_is_not_a_spec() -> None:
    files = spec_files([REPO / "specs"])
    assert REPO / "specs" / "GEMM.yaml" in files and not any(p.parent.name == "reviewed" for p in files)


def test_lint_passes_the_repository_overlay() -> None:
    result = CliRunner().invoke(main, ["lint", str(OVERLAY)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("a: {tensor: ATensor,", "a: {tensor: XTensor,",
     ":11:15: DML002 XTensor is not a tensor of GEMM (its tensors: ATensor, BTensor, CTensor, OutputTensor)"),
    ("output: OutputTensor", "output: CTensor",
     ":14:11: DML002 CTensor is an input of GEMM, not an output; name one of its outputs"),
    ("alpha: Alpha", "alpha: TransA",
     ":15:10: DML002 TransA is DML_MATRIX_TRANSFORM (enum) in the spec; name a FLOAT scalar here"),
    ("  fused_activation: FusedActivation\n", "",
     ":9:3: DML002 semantics leave out field FusedActivation of GEMM; name every tensor and attribute"),
    ("'4_0': [2, 3, 4]", "'4_0': [2, 4]",
     ":17:41: DML002 at 4_0 the table gives ATensor, BTensor, CTensor, OutputTensor dimension counts [2, 3, 4], "
     "here [2, 4]; write the table's"),
    ("accumulators: {FLOAT32: FLOAT32,", "accumulators: {INT8: FLOAT32,",
     ":18:24: DML002 INT8 is no tensor type of GEMM (its tables allow FLOAT32, FLOAT16); name one of those"),
    ("  family: contraction\n", "  family: contraction\n  shape: wrong\n",
     ":9:3: DML002 semantics: Additional properties are not allowed ('shape' was unexpected)"),
])
def test_lint_locates_each_problem(tmp_path: Path, old: str, new: str, expected: str) -> None:
    specs = _folder(tmp_path, _broken(old, new))
    result = CliRunner().invoke(main, ["lint", str(specs)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "reviewed" in line]
    assert lines == [f"{specs / 'reviewed' / 'GEMM.yaml'}{expected}"], result.output


def test_a_run_refuses_a_broken_overlay_with_one_located_line(tmp_path: Path) -> None:
    specs = _folder(tmp_path, _broken("b: {tensor: BTensor,", "b: {tensor: Bee,"))
    result = CliRunner().invoke(main, ["run", "--specs", str(specs), "--no-progress", "--no-isolate",
                                       "-o", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.strip() == (f"{specs / 'reviewed' / 'GEMM.yaml'}:12:15: error: Bee is not a tensor of GEMM "
                                     "(its tensors: ATensor, BTensor, CTensor, OutputTensor)")
    assert not (tmp_path / "r").exists()


def test_an_overlay_of_another_operator_is_an_error(tmp_path: Path) -> None:
    specs = _folder(tmp_path, _broken("operator: GEMM", "operator: GEMX"))
    with pytest.raises(SpecError, match="overlay of GEMM names operator GEMX; an overlay has the name of its spec "
                                        "file: write operator: GEMM") as info:
        load_spec(specs / "GEMM.yaml")
    assert (info.value.line, info.value.column) == (7, 11)


@pytest.mark.parametrize("text", ["", "- a list\n", "operator: GEMM\nsemantics: 3\n", "operator: [GEMM\n"])
def test_malformed_overlays_are_located_errors(tmp_path: Path, text: str) -> None:
    specs = _folder(tmp_path, text)
    result = CliRunner().invoke(main, ["run", "--specs", str(specs), "--no-progress", "--no-isolate",
                                       "-o", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"{specs / 'reviewed' / 'GEMM.yaml'}:") and "Traceback" not in result.output


@pytest.mark.parametrize("command", [
    ["run", "--no-progress", "--no-isolate", "-o", "unused"],
    ["run", "--no-progress", "--no-isolate", "-o", "unused", "--op", "GEMM"],
    ["gen", "-o", "unused"],
    ["matrix"],
], ids=["run", "run --op", "gen", "matrix"])
def test_an_overlay_without_its_spec_is_an_error_wherever_specs_load(tmp_path: Path, command: list[str]) -> None:
    """Issue #33: ``run`` ignored reviewed/GEMM1.yaml (no GEMM1.yaml beside
    it) in silence, and only ``lint`` reported it; a misnamed overlay leaves
    its operator's semantics untested."""
    specs = _folder(tmp_path, OVERLAY.read_text())
    orphan = specs / "reviewed" / "GEMM1.yaml"
    orphan.write_text(OVERLAY.read_text())
    result = CliRunner().invoke(main, [*command, "--specs", str(specs)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.splitlines() == [
        f"{orphan}:1:1: error: overlay GEMM1.yaml has no spec {specs / 'GEMM1.yaml'}, so nothing reads it: name it "
        "after its spec file, in the reviewed folder beside it, or remove it"]
    assert not Path("unused").exists()
