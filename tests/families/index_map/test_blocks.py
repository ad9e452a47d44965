"""DEPTH_TO_SPACE(1) and SPACE_TO_DEPTH(1) in the index-map family (issue
#34): the oracle's coordinates against numpy's reshape and transpose over
drawn shapes, the orders told apart, the cases the issue asks for, the
pages' examples, the CPU reference at 0 FAIL at every level, and the
engines (the planted fault: test_faults_index_map.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.families.index_map.blocks import BlockCall
from dmlconform.families.index_map.cases import case_problems
from dmlconform.families.index_map.moves import block_map
from dmlconform.families.index_map.reference import moved
from dmlconform.lint.examples import findings
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.index_map.engines import through
from tests.families.index_map.test_index_map import _cases, _spec

BLOCKS = ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1")


@settings(max_examples=200, deadline=None)
@given(st.booleans(), st.sampled_from(["DCR", "CRD"]), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.integers(1, 3), st.integers(1, 2))
def test_the_block_map_is_numpys_reshape_and_transpose(to_space: bool, order: str, b: int, c: int, h: int, w: int,
                                                       n: int) -> None:
    sizes = (n, c * b * b, h, w) if to_space else (n, c, h * b, w * b)
    call = BlockCall(to_space, b, order)
    x = np.arange(int(np.prod(sizes)), dtype=np.int64).reshape(sizes)
    assert np.array_equal(x.reshape(-1)[block_map(call, sizes)], moved(call, x))


def test_the_orders_flatten_the_channels_as_the_order_page_says() -> None:
    """Depth version (1, 8, 1, 1), BlockSize 2, 2 channels: DCR's channel
    (BlockHeight, BlockWidth, Channels), CRD's (Channels, BlockHeight, BlockWidth)."""
    dcr = block_map(BlockCall(True, 2, "DCR"), (1, 8, 1, 1))
    crd = block_map(BlockCall(True, 2, "CRD"), (1, 8, 1, 1))
    assert dcr.reshape(2, 4).tolist() == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert crd.reshape(2, 4).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    back = block_map(BlockCall(False, 2, "DCR"), (1, 2, 2, 2))
    assert np.arange(8)[back.reshape(-1)][dcr.reshape(-1)].tolist() == list(range(8))


def test_the_suites_have_what_the_issue_asks_for() -> None:
    for op in BLOCKS:
        cases = _cases(op)
        ids = [c.id for c in cases]
        assert len(ids) == len(set(ids))
        table = _spec(op).table_at(m.FeatureLevel.FL_6_4)
        assert table is not None and {c.dtype for c in cases} == set(table.rows[0].dtypes)
        orders = {"dcr", "crd"} if op.endswith("1") else {"dcr"}
        assert {i.split("/")[3] for i in ids} == orders | {"example1"} | ({"example2"} if op.endswith("1") else set())
        assert {i.split("/")[4] for i in ids if "/example" not in i} == {"b1", "b2", "b3", "single"}
        assert any(0 in c.inputs[0].strides for c in cases)
        assert any(c.inputs[0].strides[0] < c.inputs[0].strides[-1] for c in cases)
        for c in cases:
            assert list(case_problems(_spec(op), c)) == [], c.id
    early = [c for c in _cases("DEPTH_TO_SPACE", m.FeatureLevel.FL_2_1) if not c.expect_supported]
    assert [c.dtype for c in early] == [m.DataType.FLOAT64]


def test_a_case_of_other_sizes_is_a_problem() -> None:
    case = next(c for c in _cases("SPACE_TO_DEPTH1") if c.id == "SPACE_TO_DEPTH1/FLOAT32/4d/crd/b3")
    out = dataclasses.replace(case.outputs[0], sizes=(2, 2, 6, 3))
    (problem,) = case_problems(_spec("SPACE_TO_DEPTH1"), dataclasses.replace(case, outputs=(out,)))
    assert "must be [2, 18, 2, 1]" in problem


def test_the_pages_examples_are_cases_and_a_wrong_value_is_found() -> None:
    for op in BLOCKS:
        assert list(findings(_spec(op))) == []
        assert sum("/example" in c.id for c in _cases(op)) == (2 if op.endswith("1") else 1)
    spec = _spec("DEPTH_TO_SPACE1")
    sem = spec.semantics
    e = sem.examples[1]  # type: ignore[union-attr]
    swapped = dataclasses.replace(e, output_values=next(x.output_values for x in sem.examples  # type: ignore[union-attr]
                                                        if x.name == "example1"))
    wrong = dataclasses.replace(spec, semantics=dataclasses.replace(sem, examples=(swapped,)))  # type: ignore[type-var]
    (found,) = findings(wrong)
    assert found[0] == ("semantics", "examples", 1, "output") and "the doc's output is wrong" in found[1]


@pytest.mark.parametrize("level", [m.FeatureLevel.FL_1_0, m.FeatureLevel.FL_2_1, m.FeatureLevel.FL_6_4])
def test_the_reference_passes_every_case(level: m.FeatureLevel) -> None:
    pairs = [(_spec(op), c) for op in BLOCKS if _spec(op).introduced <= level for c in _cases(op, level)]
    results = run_cases(pairs, CpuBackend())
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert pairs and not bad, "\n".join(bad[:5])


_REFUSED = ("ONNX SpaceToDepth has the DCR order alone", "NOT_IMPLEMENTED", "not implemented for")


def _engine_check(backend: object) -> None:
    results = through([(_spec(op), c) for op in BLOCKS for c in _cases(op)], backend, _REFUSED)
    assert {r.case_id.split("/")[0] for r in results if r.outcome is Outcome.PASS} == set(BLOCKS)


def test_onnxruntime_moves_where_onnx_has_the_order() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    _engine_check(OnnxRuntimeBackend())


def test_torch_moves_every_order() -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    _engine_check(TorchBackend())
