"""The reduction overlays (issue #24 item 1): loaded with their specs,
checked against them, every problem at its line and column; lint rule
DML131 evaluates the doc's worked examples; a case folder holds Axes as a
text and every bad one is one located line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.families.reduction.semantics import Reduction
from dmlconform.lint import checks as lint
from tests.conftest import REPO

OVERLAY = REPO / "specs" / "reviewed" / "REDUCE.yaml"


def _folder(tmp_path: Path, overlay: str, op: str = "REDUCE") -> Path:
    specs = tmp_path / "specs"
    (specs / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / f"{op}.yaml", specs / f"{op}.yaml")
    (specs / "reviewed" / f"{op}.yaml").write_text(overlay)
    return specs


def _broken(old: str, new: str, op: str = "REDUCE") -> str:
    text = (REPO / "specs" / "reviewed" / f"{op}.yaml").read_text()
    assert old in text
    return text.replace(old, new, 1)


def test_the_overlays_load_with_their_semantics() -> None:
    sem = load_spec(REPO / "specs" / "REDUCE.yaml").semantics
    assert isinstance(sem, Reduction)
    assert (sem.input, sem.output, sem.axes, sem.axis_count, sem.function, sem.fixed) == (
        "InputTensor", "OutputTensor", "Axes", "AxisCount", "Function", None)
    assert [e.name for e in sem.examples] == ["example1", "example2", "example3"]
    argmin = load_spec(REPO / "specs" / "ARGMIN.yaml").semantics
    assert isinstance(argmin, Reduction) and (argmin.fixed, argmin.direction) == ("ARGMIN", "AxisDirection")


def test_lint_flags_the_reduce_pages_example_3_and_nothing_else() -> None:
    # (the other families' overlays have doc mistakes of their own: tests/families/index_map)
    result = CliRunner().invoke(main, ["lint", "--no-baseline", str(REPO / "specs" / "reviewed")])
    assert result.exit_code == 0, result.output  # a warning: the doc is wrong, not the spec (and baselined)
    lines = [line for line in result.output.splitlines() if "DML131" in line and "REDUCE" in line]
    assert lines == [
        f"{OVERLAY}:40:13: DML131 example3 (operators/sdk-api/ns-directml-dml_reduce_operator_desc.md:130): the comment "
        "of output element 0 lists sum{1, 2, 3, 3, 0, 4, 2, 5, 2}, but the input's terms there are "
        "{1, 2, 3, 3, 0, 4, 2, 4, 2} (term 7: 5 where the input has 4); the listed terms give 22, the output 21: "
        "the doc's comment is wrong"]
    assert lint.rule_for("DML131") is lint.DOC_EXAMPLE


def test_lint_flags_a_printed_output_that_its_input_does_not_give(tmp_path: Path) -> None:
    specs = _folder(tmp_path, _broken("output: {type: UINT32, values: [7]}", "output: {type: UINT32, values: [6]}",
                                      "ARGMAX"), "ARGMAX")
    result = CliRunner().invoke(main, ["lint", "--strict", str(specs)])
    assert result.exit_code == 1
    assert (f"{specs / 'reviewed' / 'ARGMAX.yaml'}:38:13: DML131 example3 (operators/sdk-api/"
            "ns-directml-dml_argmax_operator_desc.md:122) prints {6}, but ARGMAX over axes [0, 1] of its input "
            "gives {7}; the doc's output is wrong: report it, and keep the overlay as the doc has it") in result.output


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("input: InputTensor", "input: OutputTensor",
     ":14:10: DML002 OutputTensor is an output of REDUCE, not an input; name one of its inputs"),
    ("axes: {array: Axes, count: AxisCount}", "axes: {array: Function, count: AxisCount}",
     ":16:17: DML002 Function is DML_REDUCE_FUNCTION (enum) in the spec; name a UINT array counted by AxisCount here"),
    ("function: {attribute: Function}", "function: {attribute: AxisCount}",
     ":17:25: DML002 AxisCount is UINT (scalar) in the spec; name a DML_REDUCE_FUNCTION here"),
    ("accumulators: {FLOAT16: FLOAT32}", "accumulators: {FLOAT64: FLOAT32}",
     ":18:27: DML002 FLOAT64 is no tensor type of REDUCE (its tables allow FLOAT32, FLOAT16, INT64, INT32, INT16, "
     "INT8, UINT64, UINT32, UINT16, UINT8); name one of those"),
    ("input: {sizes: [3, 3], values: [1, 2, 3, 3, 0, 4, 2, 4, 2]}", "input: {sizes: [3, 4], values: [1, 2]}",
     ":22:36: DML002 2 values for sizes [3, 4] (12 elements); give one value per element"),
    ("axes: [0]\n", "axes: [0, 0]\n",
     ":24:11: DML002 axes [0, 0] name [0], not distinct axes of a 2-d input; give axes in 0..1, each once"),
    ("terms: [[1, 3, 2], [2, 0, 4], [3, 4, 2]]", "terms: [[1, 3, 2]]",
     ":26:12: DML002 1 terms for 3 output elements; give one per element"),
    ("  family: reduction\n", "  family: reduction\n  order: rows\n",
     ":12:3: DML002 semantics: Additional properties are not allowed ('order' was unexpected)"),
])
def test_lint_locates_each_problem(tmp_path: Path, old: str, new: str, expected: str) -> None:
    specs = _folder(tmp_path, _broken(old, new))
    result = CliRunner().invoke(main, ["lint", str(specs)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "reviewed" in line]
    assert lines == [f"{specs / 'reviewed' / 'REDUCE.yaml'}{expected}"], result.output


def test_a_run_refuses_a_broken_overlay_with_one_located_line(tmp_path: Path) -> None:
    specs = _folder(tmp_path, _broken("function: {fixed: ARGMAX}", "function: {fixed: ARGMAX, attribute: X}",
                                      "ARGMAX"), "ARGMAX")
    result = CliRunner().invoke(main, ["run", "--specs", str(specs), "--no-progress", "--no-isolate",
                                       "-o", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.strip() == (f"{specs / 'reviewed' / 'ARGMAX.yaml'}:13:13: error: semantics.function: "
                                     "{'fixed': 'ARGMAX', 'attribute': 'X'} has too many properties")
    assert not (tmp_path / "r").exists()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cases") / "argmax"
    result = CliRunner().invoke(main, ["gen", "--op", "ARGMAX", "--dtype", "FLOAT32", "--output", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_a_case_folder_holds_axes_as_text_and_runs(folder: Path, tmp_path: Path) -> None:
    entry = json.loads((folder / "manifest.json").read_text())["cases"][0]
    assert entry["attributes"] == [["AxisCount", 1], ["Axes", "0"], ["AxisDirection", "DML_AXIS_DIRECTION_INCREASING"]]
    result = CliRunner().invoke(main, ["run", "--backend", "cpu", "--cases", str(folder), "--no-progress",
                                       "--no-isolate", "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("old", "new", "expected"), [
    ('"Axes", "0"]', '"Axes", "9"]', "Axes=9: 9 is no dimension of the 2-D InputTensor: give dimensions 0 to 1"),
    ('"Axes", "0,1"]', '"Axes", "1,1"]', "Axes=1,1 names dimension 1 twice: give each dimension once"),
    ('"Axes", "0"]', '"Axes", "zero"]',
     "Axes='zero' is not a list of dimension numbers; write them comma-separated, e.g. \"2,0\""),
    ('["AxisCount", 1], ["Axes", "0"]', '["AxisCount", 2], ["Axes", "0"]',
     "AxisCount=2 but Axes=0 lists 1 dimension: give AxisCount=1"),
    ('"Axes", "0"]', '"Axes", "0;1"]',
     "Axes='0;1' is not a list of dimension numbers; write them comma-separated, e.g. \"2,0\""),
    ('"Axes", "0"]', '"Axes", "-1"]',
     "Axes='-1' is not a list of dimension numbers; write them comma-separated, e.g. \"2,0\""),
    (', ["Axes", "0"]', '',
     'attribute Axes is missing: give the reduced dimensions as text, e.g. ["Axes", "1"]'),
])
def test_bad_axes_in_a_case_folder_are_one_located_line(folder: Path, tmp_path: Path, old: str, new: str,
                                                        expected: str) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(folder, bad)
    text = (folder / "manifest.json").read_text()
    (bad / "manifest.json").write_text(text.replace(old, new, 1))
    result = CliRunner().invoke(main, ["run", "--backend", "cpu", "--cases", str(bad), "--no-progress",
                                       "--no-isolate", "-o", str(tmp_path / "r")])
    assert result.exit_code == 2
    first = result.output.splitlines()[0]
    assert first.startswith(f"{bad / 'manifest.json'}:") and first.endswith(expected), result.output
