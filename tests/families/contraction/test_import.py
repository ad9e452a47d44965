"""ONNX node tests of Gemm, MatMul and MatMulInteger as cases (issue #24
item 6): the conversion of shapes, broadcasts and zero points, the
refusals, and the committed cases replayed on cpu."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.catalog import load_spec
from dmlconform.importers.onnx_node import MAPPINGS, OnnxTest, Unmappable, to_case
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _test(op: str, inputs: tuple[np.ndarray | None, ...], output: np.ndarray, **attrs: object) -> OnnxTest:
    return OnnxTest(f"test_{op.lower()}_x", op, 13, tuple(sorted(attrs.items())), inputs, (output,))


def test_gemm_with_a_vector_c_is_c_through_a_stride_of_0() -> None:
    a, b, c = np.ones((4, 3), np.float32), np.ones((4, 5), np.float32), np.arange(5, dtype=np.float32)
    case = to_case(_test("Gemm", (a, b, c), np.zeros((3, 5), np.float32), transA=1, alpha=0.5),
                   _spec("GEMM"), MAPPINGS["Gemm"])
    assert case.id == "GEMM/FLOAT32/2d/onnx:test_gemm_x"
    assert [(t.name, t.sizes, t.strides) for t in case.inputs] == [
        ("ATensor", (4, 3), (3, 1)), ("BTensor", (4, 5), (5, 1)), ("CTensor", (3, 5), (0, 1))]
    assert case.attribute_map() == {"TransA": "DML_MATRIX_TRANSFORM_TRANSPOSE", "TransB": "DML_MATRIX_TRANSFORM_NONE",
                                    "Alpha": 0.5, "Beta": 1.0}


def test_matmul_broadcasts_batches_and_refuses_vectors() -> None:
    a, b = np.ones((2, 1, 3, 4), np.float32), np.ones((3, 4, 5), np.float32)
    case = to_case(_test("MatMul", (a, b), np.zeros((2, 3, 3, 5), np.float32)), _spec("GEMM"), MAPPINGS["MatMul"])
    assert [(t.sizes, t.strides) for t in case.inputs] == [((2, 3, 3, 4), (12, 0, 4, 1)), ((2, 3, 4, 5), (0, 20, 5, 1))]
    with pytest.raises(Unmappable, match="a 1-D operand: ONNX promotes it to a matrix and drops that dimension"):
        to_case(_test("MatMul", (np.ones(4, np.float32), b), np.zeros((3, 5), np.float32)), _spec("GEMM"),
                MAPPINGS["MatMul"])


def test_matmulinteger_zero_points_per_row_and_per_column() -> None:
    a, b = np.ones((3, 4), np.uint8), np.ones((4, 2), np.uint8)
    za, zb = np.array([1, 2, 3], np.uint8), np.array([4, 5], np.uint8)
    case = to_case(_test("MatMulInteger", (a, b, za, zb), np.zeros((3, 2), np.int32)), _spec("MATRIX_MULTIPLY_INTEGER"),
                   MAPPINGS["MatMulInteger"])
    assert [(t.name, t.sizes) for t in case.inputs] == [("ATensor", (3, 4)), ("AZeroPointTensor", (3, 1)),
                                                        ("BTensor", (4, 2)), ("BZeroPointTensor", (1, 2))]
    with pytest.raises(Unmappable, match=r"AZeroPointTensor of shape \[2\]: neither per tensor nor per row"):
        to_case(_test("MatMulInteger", (a, b, za[:2], zb), np.zeros((3, 2), np.int32)),
                _spec("MATRIX_MULTIPLY_INTEGER"), MAPPINGS["MatMulInteger"])


def test_the_committed_onnx_contraction_cases_pass_on_cpu() -> None:
    from dmlconform.cases.store import read_cases

    cases = [c for c in read_cases(REPO / "cases" / "onnx") if c.operator in ("GEMM", "MATRIX_MULTIPLY_INTEGER")]
    assert len(cases) == 16
    results = run_cases([(_spec(c.operator), c) for c in cases], CpuBackend())
    assert {r.outcome for r in results} == {Outcome.PASS}
