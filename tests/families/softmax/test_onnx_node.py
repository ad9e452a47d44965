"""The ONNX node tests of Softmax, LogSoftmax and Hardmax (issue #24 item 6),
reproduced by the softmax family's oracle: each becomes a case of the ``1``
operator with ``Axes = {axis}`` through the importer's own conversion
(`importers.onnx_families.softmax`, the cases of cases/onnx), and of the
older operator where the input is 2-D (its last dimension: the importer does
not make these), and ONNX's expected output must lie within the oracle's
strict bound, or be a reading the oracle accepts.  The CPU
reference passes the same cases.  Slow: onnx's generator makes every node
test of every operator to give these 21 (15 s on the 2-core machine)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.catalog import load_spec
from dmlconform.families.softmax.oracle import SoftmaxOracle
from dmlconform.results import Outcome
from dmlconform.runner import run_case
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype
from tests.conftest import REPO

pytestmark = pytest.mark.slow
pytest.importorskip("onnx")
from dmlconform.importers.onnx_node import MAPPINGS, OnnxTest, load_tests, to_case  # noqa: E402 - after the skip: it needs onnx

OPERATORS = {"Softmax": "ACTIVATION_SOFTMAX", "LogSoftmax": "ACTIVATION_LOG_SOFTMAX", "Hardmax": "ACTIVATION_HARDMAX"}


@cache
def _tests() -> tuple[OnnxTest, ...]:
    return tuple(load_tests(None, OPERATORS))


def _case(test: OnnxTest, operator: str) -> Case:
    """``test`` as a case of ``operator``: a ``1`` version as the importer makes it, an older one here."""
    if operator.endswith("1"):
        return to_case(test, load_spec(REPO / "specs" / f"{operator}.yaml"), MAPPINGS[test.op_type])
    x = test.inputs[0]
    assert x is not None
    sizes = tuple(int(s) for s in x.shape)
    axis = int(dict(test.attributes).get("axis", -1)) % len(sizes)
    dtype = m.DataType[x.dtype.name.upper()]
    buf = np.ascontiguousarray(x, dtype=numpy_dtype(dtype)).reshape(-1)
    buf.setflags(write=False)
    out = np.zeros(buf.size, numpy_dtype(dtype))
    out.setflags(write=False)
    assert axis == len(sizes) - 1  # the older operators reduce the last dimension
    return Case(id=f"{operator}/onnx/{test.name}", operator=operator, level=m.FeatureLevel.FL_6_4, dtype=dtype,
                inputs=(TensorData("InputTensor", dtype, sizes, packed_strides(sizes), buf),),
                outputs=(TensorData("OutputTensor", dtype, sizes, packed_strides(sizes), out),),
                attributes=(), layout=Layout.PACKED)


def _pairs() -> list[tuple[str, str]]:
    found = []
    for test in _tests():
        found.append((test.name, OPERATORS[test.op_type] + "1"))
        x = test.inputs[0]
        if x is not None and x.ndim <= 2:  # the older operators: effective rank 2, the last dimension
            found.append((test.name, OPERATORS[test.op_type]))
    return found


def test_every_node_test_is_here() -> None:
    assert len(_tests()) == 21
    assert len(_pairs()) == 21 + 6  # six of them 2-D


@pytest.mark.parametrize(("name", "operator"), _pairs())
def test_onnx_expected_output_is_within_the_oracle_bound(name: str, operator: str) -> None:
    test = next(t for t in _tests() if t.name == name)
    spec = load_spec(REPO / "specs" / f"{operator}.yaml")
    case = _case(test, operator)
    batch = SoftmaxOracle.of(spec).bind([case], flush_subnormals=False)
    (e,) = batch.expect(0, batch.expected.size)
    theirs = test.outputs[0].reshape(-1).astype(np.float64)
    ours = e.expected.astype(np.float64)
    assert e.bound_strict is not None
    within = np.abs(theirs - ours) <= e.bound_strict
    for alt in e.alternatives:
        within[alt.index] |= alt.values.astype(np.float64) == theirs[alt.index]
    assert within.all(), (theirs[~within], ours[~within])
    assert run_case(spec, case, CpuBackend()).outcome is Outcome.PASS
