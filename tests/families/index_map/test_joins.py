"""JOIN and SPLIT in the index-map family (issue #34): the oracle's
coordinates against numpy's concatenate and split over drawn shapes, the
shape rules' messages, the cases the issue asks for, the CPU reference at 0
FAIL at every level, and the engines (the planted faults:
test_faults_index_map.py; the tensor-array convention: tests/test_tensor_arrays.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.case_folders import case_problems
from dmlconform.cases.model import Case
from dmlconform.families.index_map.join_moves import join_positions
from dmlconform.families.index_map.joins import JoinCall, join_problem
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.index_map.engines import through
from tests.families.index_map.test_index_map import _cases, _spec

JOINS = ("JOIN", "SPLIT")


@st.composite
def _calls(draw: st.DrawFn) -> JoinCall:
    rank = draw(st.integers(1, 5), label="rank")
    axis = draw(st.integers(0, rank - 1), label="axis")
    whole = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank), label="sizes")
    lengths = draw(st.lists(st.integers(1, 3), min_size=1, max_size=4), label="lengths")
    whole[axis] = sum(lengths)
    parts = tuple(tuple(n if d == axis else s for d, s in enumerate(whole)) for n in lengths)
    return JoinCall(draw(st.booleans(), label="join"), axis, parts, tuple(whole))


@settings(max_examples=200, deadline=None)
@given(_calls())
def test_the_join_map_is_numpys_concatenate_and_split(call: JoinCall) -> None:
    assert join_problem(call) is None
    sizes = call.parts if call.join else (call.whole,)
    values = [np.arange(int(np.prod(s))).reshape(s) + 1000 * k for k, s in enumerate(sizes)]
    flat = np.concatenate([v.reshape(-1) for v in values])
    found = [flat[p] for p in join_positions(call)]
    if call.join:
        (got,) = found
        assert np.array_equal(got, np.concatenate(values, axis=call.axis))
    else:
        cuts = np.cumsum([p[call.axis] for p in call.parts])[:-1]
        assert all(np.array_equal(g, w) for g, w in zip(found, np.split(values[0], cuts, axis=call.axis)))


def test_the_shape_rules_name_what_is_wrong() -> None:
    ok = JoinCall(True, 1, ((2, 1, 3), (2, 2, 3)), (2, 3, 3))
    assert join_problem(ok) is None
    assert join_problem(replace(ok, axis=3)) == "Axis 3 must be in [0, 2] (the DimensionCount - 1)"
    assert join_problem(replace(ok, parts=((2, 1, 3), (2, 2, 4)))) == (
        "tensor 1 of the array has sizes [2, 2, 4]: it must have the sizes [2, 3, 3] on every dimension but Axis 1")
    assert join_problem(replace(ok, parts=((2, 1, 3), (2, 1, 3)))) == (
        "the array's sizes on Axis 1 add up to 2, but the single tensor's is 3: make them equal")


def test_a_case_folder_with_parts_that_do_not_add_up_is_a_problem() -> None:
    case = next(c for c in _cases("SPLIT") if "/n=3/" in c.id)
    bad = replace(case, attributes=tuple((n, 0 if n == "Axis" else v) for n, v in case.attributes))
    found = list(case_problems(_spec("SPLIT"), bad))
    assert any(p.startswith("tensor 0 of the array has sizes") and p.endswith("give sizes and an Axis the page "
                                                                                "allows") for p in found), found


@pytest.mark.parametrize("op", JOINS)
def test_the_suites_have_what_the_issue_asks_for(op: str) -> None:
    spec = _spec(op)
    for level in (m.FeatureLevel.FL_1_0, m.FeatureLevel.FL_3_0, m.FeatureLevel.FL_6_4):
        cases = [c for c in _cases(op, level) if c.expect_supported]
        ranks = spec.semantics.dims_at(level)  # type: ignore[union-attr]  # an index map
        axes = {(c.dimension_count if op == "JOIN" else c.inputs[0].dimension_count, c.attribute_map()["Axis"])
                for c in cases}
        assert axes >= {(r, a) for r in ranks for a in range(r)}, level
        assert {c.dtype for c in cases} == set(spec.table_at(level).rows[0].dtypes)  # type: ignore[union-attr]
        count = "InputCount" if op == "JOIN" else "OutputCount"
        assert {c.attribute_map()[count] for c in cases} == {1, 2, 3, 4}
    negatives = [c.id for c in _cases(op, m.FeatureLevel.FL_1_0) if not c.expect_supported]
    assert negatives == [f"{op}/FLOAT64/4d/axis=1/n=3/unsupported", f"{op}/FLOAT32/3d/axis=1/n=3/unsupported"]


def test_the_parts_are_unequal_and_strided_layouts_are_there() -> None:
    case = next(c for c in _cases("JOIN") if c.id.endswith("/n=4/unequal"))
    assert [t.sizes[-1] for t in case.inputs] == [1, 3, 2, 1]
    ids = {c.id for c in _cases("JOIN")}
    assert {"JOIN/FLOAT32/4d/axis=1/n=3/unequal/" + layout for layout in ("padded", "permuted", "broadcast")} <= ids
    broadcast = next(c for c in _cases("SPLIT") if c.id.endswith("/broadcast"))
    assert 0 in broadcast.inputs[0].strides


@pytest.mark.parametrize("level", [m.FeatureLevel.FL_1_0, m.FeatureLevel.FL_3_0, m.FeatureLevel.FL_6_4])
def test_the_reference_passes_every_case(level: m.FeatureLevel) -> None:
    pairs = [(_spec(op), c) for op in JOINS for c in _cases(op, level)]
    results = run_cases(pairs, CpuBackend(feature_level=level.short))
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert pairs and not bad, "\n".join(bad[:5])
    assert sum(r.outcome is Outcome.PASS for r in results) == sum(c.expect_supported for _, c in pairs)


_REFUSED = ("NOT_IMPLEMENTED", "not implemented for")


def _engine_check(backend: object) -> None:
    results = through([(_spec(op), c) for op in JOINS for c in _cases(op)], backend, _REFUSED)
    assert {r.case_id.split("/")[0] for r in results if r.outcome is Outcome.PASS} == set(JOINS)


def test_onnxruntime_concat_and_split() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    _engine_check(OnnxRuntimeBackend())


def test_torch_cat_and_split() -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    _engine_check(TorchBackend())


def _shuffled() -> list[tuple[m.Spec, Case]]:
    """JOIN and SPLIT cases whose arrays are listed out of index order (a case folder may)."""
    pairs = []
    for op in JOINS:
        case = next(c for c in _cases(op) if c.id.endswith("/n=4/unequal"))
        pairs.append((_spec(op), replace(case, inputs=case.inputs[::-1], outputs=case.outputs[::-1])))
    return pairs


@pytest.mark.parametrize("engine", ["cpu", "onnxruntime", "torch"])
def test_an_array_listed_out_of_order_binds_by_index(engine: str) -> None:
    if engine == "cpu":
        backend: object = CpuBackend()
    elif engine == "onnxruntime":
        pytest.importorskip("onnxruntime")
        pytest.importorskip("onnx")
        from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend
        backend = OnnxRuntimeBackend()
    else:
        pytest.importorskip("torch")
        from dmlconform.backends.torch.backend import TorchBackend
        backend = TorchBackend()
    results = through(_shuffled(), backend, ())
    assert [r.outcome for r in results] == [Outcome.PASS, Outcome.PASS]
