"""`import onnx` for the reduction, softmax, sequence and bitwise families
(issue #24 item 6): each converter's attributes and refusals, the judge on
two outputs, and the committed cases per ONNX operator replayed on cpu."""

from __future__ import annotations

import importlib.util
from collections import Counter
from functools import cache

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.store import read_cases
from dmlconform.catalog import load_spec
from dmlconform.importers.onnx_node import MAPPINGS, OnnxTest, Unmappable, _array, judge, to_case
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

CASES = REPO / "cases" / "onnx"
DECREASING, INCREASING = "DML_AXIS_DIRECTION_DECREASING", "DML_AXIS_DIRECTION_INCREASING"
#: The tests that read an ONNX value or ask onnx for its version: they need the
#: ``[onnx]`` extra, which the README's ``.[test]`` install leaves out (issue #33).
needs_onnx = pytest.mark.skipif(importlib.util.find_spec("onnx") is None,
                                reason="needs onnx: pip install -e '.[test,onnx]'")


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _test(op: str, inputs: tuple[np.ndarray | None, ...], outputs: tuple[np.ndarray, ...], opset: int = 18,
          **attrs: object) -> OnnxTest:
    return OnnxTest(f"test_{op.lower()}_x", op, opset, tuple(sorted(attrs.items())), inputs, outputs)


def _case(test: OnnxTest):  # type: ignore[no-untyped-def]
    return to_case(test, _spec(MAPPINGS[test.op_type].spec), MAPPINGS[test.op_type])


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_reduce_axes_input_sorted_non_negative_and_kept() -> None:
    case = _case(_test("ReduceSum", (X, np.array([-1, 0], np.int64)), (np.zeros(3, np.float32),), keepdims=0))
    assert case.id == "REDUCE/FLOAT32/3d/onnx:test_reducesum_x"
    assert case.attribute_map() == {"Function": "DML_REDUCE_FUNCTION_SUM", "AxisCount": 2, "Axes": "0,2"}
    assert case.outputs[0].sizes == (1, 3, 1)           # keepdims=0 drops these size-1 dimensions: same values
    every = _case(_test("ReduceLogSumExp", (X,), (np.zeros((1, 1, 1), np.float32),), opset=13))
    assert every.attribute_map()["Axes"] == "0,1,2" and every.attribute_map()["Function"].endswith("LOG_SUM_EXP")


def test_reduce_noop_with_empty_axes_and_empty_tensors_are_refused() -> None:
    with pytest.raises(Unmappable, match="noop_with_empty_axes=1 with no axes: ONNX returns the input unreduced"):
        _case(_test("ReduceSum", (X, np.array([], np.int64)), (X,), noop_with_empty_axes=1))
    with pytest.raises(Unmappable, match=r"an empty tensor \(InputTensor of shape \[2, 0, 4\]\)"):
        _case(_test("ReduceMax", (np.zeros((2, 0, 4), np.float32),), (np.zeros((2, 1, 4), np.float32),), axes=[1]))


def test_argmax_select_last_index_is_decreasing() -> None:
    case = _case(_test("ArgMax", (X,), (np.zeros((2, 3, 1), np.int64),), axis=-1, select_last_index=1))
    assert case.attribute_map() == {"AxisCount": 1, "Axes": "2", "AxisDirection": DECREASING}
    assert case.outputs[0].sizes == (2, 3, 1) and case.outputs[0].dtype is m.DataType.INT64


def test_softmax_axis_before_opset_13_reduces_every_later_dimension() -> None:
    old = _case(_test("Softmax", (X,), (X,), opset=11, axis=1))
    assert old.operator == "ACTIVATION_SOFTMAX1" and old.attribute_map() == {"AxisCount": 2, "Axes": "1,2"}
    new = _case(_test("LogSoftmax", (X,), (X,), opset=13))
    assert new.operator == "ACTIVATION_LOG_SOFTMAX1" and new.attribute_map() == {"AxisCount": 1, "Axes": "2"}


@needs_onnx
def test_cumsum_reverse_and_exclusive_and_its_numpy_scalar_axis() -> None:
    axis = _array(np.int32(-2))     # onnx's generator gives the axis as a numpy scalar, the .pb files as 0-d
    assert axis.shape == () and int(axis) == -2
    case = _case(_test("CumSum", (X, axis), (X,), reverse=1, exclusive=1))
    assert case.attribute_map() == {"Axis": 1, "AxisDirection": DECREASING, "HasExclusiveSum": True}


def test_topk_indices_are_uint64_and_sorted_0_is_refused() -> None:
    x, k = np.array([[3, 1, 2, 5]], np.float32), np.array([2], np.int64)
    values, indices = np.array([[1, 2]], np.float32), np.array([[1, 2]], np.int64)
    case = _case(_test("TopK", (x, k), (values, indices), largest=0))
    assert case.attribute_map() == {"Axis": 1, "K": 2, "AxisDirection": INCREASING}
    assert [(t.name, t.dtype, t.sizes) for t in case.outputs] == [
        ("OutputValueTensor", m.DataType.FLOAT32, (1, 2)), ("OutputIndexTensor", m.DataType.UINT64, (1, 2))]
    with pytest.raises(Unmappable, match="sorted=0: ONNX leaves the order of the K outputs open"):
        _case(_test("TopK", (x, k), (values, indices), sorted=0))
    with pytest.raises(Unmappable, match="^K 9 is not between 1 and the axis size 4$"):
        _case(_test("TopK", (x, np.array([9], np.int64)), (values, indices)))
    with pytest.raises(Unmappable, match=r"^K \[1, 2\] is not one number$"):
        _case(_test("TopK", (x, np.array([1, 2], np.int64)), (values, indices)))
    with pytest.raises(Unmappable, match=r"^axis \[\[0, 1\]\] is not one dimension of a 2-D input$"):
        _case(_test("CumSum", (x, np.array([[0, 1]], np.int32)), (x,)))


@needs_onnx
def test_judge_checks_both_outputs_and_integer_disagreement_is_a_definition() -> None:
    x, k = np.array([[3, 1, 2, 5]], np.float32), np.array([2], np.int64)
    values, indices = np.array([[5, 3]], np.float32), np.array([[3, 0]], np.int64)
    case = _case(_test("TopK", (x, k), (values, indices)))
    skip, notes = judge(_spec("TOP_K1"), case, values, indices)
    assert skip is None and notes == (
        "ONNX's expected output OutputValueTensor is within the oracle's bounds (identical in 2 of 2 elements)",
        "ONNX's expected output OutputIndexTensor is within the oracle's bounds (identical in 2 of 2 elements)")
    skip, _ = judge(_spec("TOP_K1"), case, values, np.array([[3, 2]], np.int64))
    assert skip == ("ONNX defines it differently from the doc: at index [0, 1] of OutputIndexTensor ONNX expects "
                    "2.0, the oracle 0.0")


def test_round_is_halves_to_even_and_clip_min_above_max_is_refused() -> None:
    x = np.array([0.5, 1.5, -2.5], np.float32)
    case = _case(_test("Round", (x,), (np.array([0, 2, -2], np.float32),)))
    assert case.attribute_map() == {"RoundingMode": "DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"}
    with pytest.raises(Unmappable, match=r"ONNX defines it differently from the doc: with min 2.0 > max 1.0 ONNX "
                                         r"sets every output to max, the doc's max\(Min, min\(x, Max\)\) gives Min"):
        _case(_test("Clip", (x, np.array(2, np.float32), np.array(1, np.float32)), (np.ones(3, np.float32),), opset=13))


#: Cases per ONNX operator that onnx 1.23.2's node tests give (docs/import-onnx.md has the skips).
PER_OPERATOR = {"ReduceSum": 8, "ReduceMean": 8, "ReduceMax": 8, "ReduceMin": 8, "ReduceProd": 8, "ReduceL1": 8,
                "ReduceL2": 8, "ReduceLogSum": 4, "ReduceSumSquare": 8, "ArgMax": 16, "ArgMin": 16, "TopK": 7,
                "CumSum": 2, "CumProd": 2, "Softmax": 7, "LogSoftmax": 7, "Hardmax": 7, "BitwiseAnd": 4,
                "BitwiseOr": 4, "BitwiseXor": 4, "BitwiseNot": 3, "IsNaN": 2, "Round": 1, "Clip": 8}


def test_committed_family_cases_per_onnx_operator_pass_on_cpu() -> None:
    import json

    manifest = json.loads((CASES / "manifest.json").read_text())
    ops = {e["id"]: e["origin"].split("(")[1].split(",")[0] for e in manifest["cases"]}
    counted = Counter(op for op in ops.values() if op in PER_OPERATOR)
    assert counted == PER_OPERATOR
    cases = [c for c in read_cases(CASES) if ops[c.id] in PER_OPERATOR]
    results = run_cases([(_spec(c.operator), c) for c in cases], CpuBackend())
    assert {r.outcome for r in results} == {Outcome.PASS}
