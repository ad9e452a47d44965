"""The sequence kind of reviewed semantics (issue #24 item 1): the four
overlays load, and lint locates each problem of a broken one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.families.sequence.semantics import Operation, SequenceOp
from dmlconform.spec import model as m
from tests.conftest import REPO

OPERATORS = ("TOP_K", "TOP_K1", "CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT")


def test_the_four_overlays_load_with_their_semantics() -> None:
    sems = {op: load_spec(REPO / "specs" / f"{op}.yaml").semantics for op in OPERATORS}
    assert all(isinstance(s, SequenceOp) for s in sems.values())
    top, top1, total, product = (sems[op] for op in OPERATORS)
    assert isinstance(top, SequenceOp) and isinstance(top1, SequenceOp) and isinstance(total, SequenceOp)
    assert isinstance(product, SequenceOp)
    assert (top.operation, top.k, top.indices, top.direction) == (Operation.TOP_K, "K", "OutputIndexTensor", None)
    assert top1.direction == "AxisDirection"
    assert (total.operation, total.exclusive, total.accumulator(m.DataType.FLOAT16)) == \
        (Operation.CUMULATIVE_SUM, "HasExclusiveSum", m.DataType.FLOAT32)
    assert product.exclusive == "HasExclusiveProduct"
    assert top.dims_at(m.FeatureLevel.FL_2_0) == (4,) and top.dims_at(m.FeatureLevel.FL_6_4) == tuple(range(1, 9))
    assert product.dims_at(m.FeatureLevel.FL_2_1) == ()


def test_lint_passes_the_four_overlays() -> None:
    paths = [str(REPO / "specs" / "reviewed" / f"{op}.yaml") for op in OPERATORS]
    result = CliRunner().invoke(main, ["lint", *paths])
    assert result.exit_code == 0, result.output


def _folder(tmp_path: Path, op: str, old: str, new: str) -> Path:
    specs = tmp_path / "specs"
    (specs / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / f"{op}.yaml", specs / f"{op}.yaml")
    text = (REPO / "specs" / "reviewed" / f"{op}.yaml").read_text()
    assert old in text
    (specs / "reviewed" / f"{op}.yaml").write_text(text.replace(old, new))
    return specs


@pytest.mark.parametrize(("op", "old", "new", "expected"), [
    ("TOP_K", "  k: K\n", "",
     ":11:3: DML002 a top-k names its k; add semantics.k"),
    ("TOP_K", "  k: K\n", "  k: Axis\n",
     ":11:3: DML002 semantics leave out field K of TOP_K; name every tensor and attribute"),
    ("TOP_K1", "direction: AxisDirection", "direction: K",
     ":20:14: DML002 K is UINT (scalar) in the spec; name a DML_AXIS_DIRECTION here"),
    ("CUMULATIVE_SUMMATION", "exclusive: HasExclusiveSum", "exclusive: Axis",
     ":16:14: DML002 Axis is UINT (scalar) in the spec; name a BOOL scalar here"),
    ("CUMULATIVE_SUMMATION", "  axis: Axis\n", "  axis: Axis\n  k: Axis\n",
     ":15:6: DML002 a cumulative-sum has no k; drop semantics.k"),
    ("CUMULATIVE_PRODUCT", "output: OutputTensor", "output: InputTensor",
     ":17:11: DML002 InputTensor is an input of CUMULATIVE_PRODUCT, not an output; name one of its outputs"),
    ("CUMULATIVE_PRODUCT", "operation: cumulative-product", "operation: cumulative-mean",
     ":15:14: DML002 semantics.operation: 'cumulative-mean' is not one of ['top-k', 'cumulative-sum', "
     "'cumulative-product']"),
])
def test_lint_locates_each_problem(tmp_path: Path, op: str, old: str, new: str, expected: str) -> None:
    specs = _folder(tmp_path, op, old, new)
    result = CliRunner().invoke(main, ["lint", str(specs)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "reviewed" in line]
    assert lines == [f"{specs / 'reviewed' / f'{op}.yaml'}{expected}"], result.output
