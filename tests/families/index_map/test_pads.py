"""PADDING and PADDING1 in the index-map family (issue #34): the oracle's
folds against numpy's pad over drawn shapes, the constant's bit pattern,
the cases the issue asks for, the pages' examples, the CPU reference at 0
FAIL at every level, and the engines (the planted faults: test_faults_index_map.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.families.index_map.cases import case_problems
from dmlconform.families.index_map.moves import fold
from dmlconform.families.index_map.oracle import IndexMapOracle, padded
from dmlconform.families.index_map.pads import MODES, PadCall
from dmlconform.lint.examples import findings
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.index_map.engines import through
from tests.families.index_map.test_index_map import _cases, _spec

PADS = ("PADDING", "PADDING1")


_NUMPY = {"EDGE": "edge", "REFLECTION": "reflect", "SYMMETRIC": "symmetric"}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_folds_are_numpys_pad(data: st.DataObject) -> None:
    """Every mode, paddings from 0 to three times the dimension, one-element dimensions included."""
    mode = data.draw(st.sampled_from(MODES), label="mode")
    rank = data.draw(st.integers(1, 4), label="rank")
    sizes = tuple(data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank), label="sizes"))
    start = tuple(data.draw(st.integers(0, 3 * n), label="start") for n in sizes)
    end = tuple(data.draw(st.integers(0, 3 * n), label="end") for n in sizes)
    x = np.arange(1, int(np.prod(sizes)) + 1, dtype=np.float32).reshape(sizes)
    got, valid = padded(PadCall(mode, start, end, -0.0), x, m.DataType.FLOAT32)
    widths = list(zip(start, end))
    want = np.pad(x, widths, mode="constant", constant_values=-0.0) if mode == "CONSTANT" else \
        np.pad(x, widths, mode=_NUMPY[mode])
    assert valid.all() and np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_reflection_leaves_the_edge_out_and_symmetric_repeats_it() -> None:
    c = np.arange(-5, 9)
    assert fold(c, 4, "REFLECTION").tolist() == [1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2]
    assert fold(c, 4, "SYMMETRIC").tolist() == [3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0]
    assert fold(c, 4, "EDGE").tolist() == [0] * 6 + [1, 2, 3] + [3] * 5
    assert fold(c, 4, "CONSTANT").tolist() == [-1] * 5 + [0, 1, 2, 3] + [-1] * 5


def test_the_constant_keeps_its_bits() -> None:
    """-0 stays -0, PADDING1's 64-bit extremes every bit, PADDING's FLOAT truncated for an integer type."""
    x = np.ones((2,), dtype=np.int64)
    low = int(np.iinfo(np.int64).min)
    got, _ = padded(PadCall("CONSTANT", (1,), (0,), low, m.DataType.INT64), x, m.DataType.INT64)
    assert got.tolist() == [low, 1, 1]
    top = int(np.iinfo(np.uint64).max)
    got, _ = padded(PadCall("CONSTANT", (0,), (1,), top, m.DataType.UINT64), x.astype(np.uint64), m.DataType.UINT64)
    assert got.tolist() == [1, 1, top]
    got, _ = padded(PadCall("CONSTANT", (1,), (1,), -10.6), x.astype(np.int8), m.DataType.INT8)
    assert got.tolist() == [-10, 1, 1, -10]
    got, _ = padded(PadCall("CONSTANT", (1,), (0,), -0.0), np.ones(1, np.float16), m.DataType.FLOAT16)
    assert got.view(np.uint16).tolist() == [0x8000, 0x3C00]


def test_the_suites_have_what_the_issue_asks_for() -> None:
    for op in PADS:
        cases = _cases(op)
        ids = [c.id for c in cases]
        assert len(ids) == len(set(ids))
        table = _spec(op).table_at(m.FeatureLevel.FL_6_4)
        assert table is not None
        assert {c.dtype for c in cases} == set(table.rows[0].dtypes)
        assert {c.dimension_count for c in cases} == set(range(1, 9))
        assert {i.split("/")[3] for i in ids} == {mode.lower() for mode in MODES} | {"example1", "example2", "example3",
                                                                                      "example4"}
        assert {i.split("/")[4] for i in ids if i.split("/")[4:]} == {"mixed", "none", "equal", "beyond", "single"}
        assert any(0 in c.inputs[0].strides for c in cases)
        assert any(c.inputs[0].strides[0] < c.inputs[0].strides[-1] for c in cases)
        for c in cases:
            assert list(case_problems(_spec(op), c)) == [], c.id
        reflected = next(c for c in cases if c.id.endswith("/reflection/single"))
        assert not reflected.expect_supported and reflected.out_of_domain == ("StartPadding",)
        symmetric = next(c for c in cases if c.id.endswith("/symmetric/single"))
        assert symmetric.expect_supported


def test_symmetric_is_outside_the_page_before_3_0() -> None:
    early = [c for c in _cases("PADDING", m.FeatureLevel.FL_2_1) if "/symmetric/" in c.id]
    assert early and all(not c.expect_supported and c.out_of_domain == ("PaddingMode",) for c in early)
    assert all(c.expect_supported for c in _cases("PADDING", m.FeatureLevel.FL_3_0) if "/symmetric/" in c.id
               and "/unsupported" not in c.id)


def test_a_case_of_other_sizes_or_value_type_is_a_problem() -> None:
    case = next(c for c in _cases("PADDING1") if c.id == "PADDING1/INT32/4d/constant/mixed/edges")
    out = dataclasses.replace(case.outputs[0], sizes=(3, 4, 8, 9))
    (problem,) = case_problems(_spec("PADDING1"), dataclasses.replace(case, outputs=(out,)))
    assert "must be [3, 6, 8, 8]" in problem
    attributes = tuple((n, "DML_TENSOR_DATA_TYPE_INT16" if n == "PaddingValueDataType" else v)
                       for n, v in case.attributes)
    (problem,) = case_problems(_spec("PADDING1"), dataclasses.replace(case, attributes=attributes))
    assert problem.startswith("PaddingValueDataType INT16 must match the output's DataType INT32")


def test_the_pages_examples_are_cases_and_a_wrong_value_is_found() -> None:
    for op in PADS:
        assert list(findings(_spec(op))) == []
        assert sum("/example" in c.id for c in _cases(op)) == 4
    assert not [c for c in _cases("PADDING", m.FeatureLevel.FL_2_1) if c.id.endswith("/example4")]
    spec = _spec("PADDING")
    sem = spec.semantics
    e = sem.examples[2]  # type: ignore[union-attr]
    bad = dataclasses.replace(e, output_values=e.output_values[:-1] + (1,))
    wrong = dataclasses.replace(spec, semantics=dataclasses.replace(sem, examples=(bad,)))  # type: ignore[type-var]
    (found,) = findings(wrong)
    assert found[0] == ("semantics", "examples", 2, "output") and found[1].endswith("2}: the doc's output is wrong")


@pytest.mark.parametrize("level", [m.FeatureLevel.FL_1_0, m.FeatureLevel.FL_2_1, m.FeatureLevel.FL_3_1,
                                   m.FeatureLevel.FL_6_4])
def test_the_reference_passes_every_case(level: m.FeatureLevel) -> None:
    pairs = [(_spec(op), c) for op in PADS if _spec(op).introduced <= level for c in _cases(op, level)]
    results = run_cases(pairs, CpuBackend())
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert pairs and not bad, "\n".join(bad[:5])


def test_the_oracle_takes_a_whole_batch() -> None:
    cases = [c for c in _cases("PADDING") if c.id.startswith("PADDING/FLOAT32/4d/reflection/")]
    batch = IndexMapOracle.of(_spec("PADDING")).bind(cases, flush_subnormals=False)
    assert batch.valid is None and batch.expected.size == sum(int(np.prod(c.outputs[0].sizes)) for c in cases)


#: The refusals each engine may give on a case the table supports (docs/index-map.md "Engines").
_REFUSED = ("PaddingMode SYMMETRIC", "a REFLECTION padding as large as its dimension", "not implemented for",
            "NOT_IMPLEMENTED", "F.pad takes the constant as a Python float")


def _engine_check(backend: object) -> None:
    results = through([(_spec(op), c) for op in PADS for c in _cases(op)], backend, _REFUSED)
    passed = {r.case_id.split("/")[3] for r in results if r.outcome is Outcome.PASS}
    assert {"constant", "edge", "reflection"} <= passed


def test_onnxruntime_pads_where_onnx_has_the_mode() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    _engine_check(OnnxRuntimeBackend())


def test_torch_pads_where_torch_has_the_mode() -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    _engine_check(TorchBackend())


def test_the_overlay_names_each_part_by_its_kind() -> None:
    """PaddingMode must name an enum, PaddingValue a FLOAT or a union, the paddings arrays."""
    from dmlconform.families.index_map.overlay import against_spec

    data = {"family": "index-map", "source": "x.md:1", "operation": "pad", "input": "InputTensor",
            "output": "OutputTensor", "dimension_count": "DimensionCount", "start_padding": "StartPadding",
            "end_padding": "EndPadding", "padding_mode": "PaddingMode", "padding_value": "PaddingValue",
            "dimension_counts": {"1_0": [4, 5], "2_1": [4, 5], "3_1": list(range(1, 9)), "5_0": list(range(1, 9))}}
    assert list(against_spec(data, _spec("PADDING"))) == []
    swapped = {**data, "padding_mode": "PaddingValue", "padding_value": "PaddingMode"}
    messages = [message for _, message in against_spec(swapped, _spec("PADDING"))]
    assert len(messages) == 2 and any("an enum" in t for t in messages) and any("a FLOAT or" in t for t in messages)
    missing = [message for _, message in against_spec({k: v for k, v in data.items() if k != "end_padding"},
                                                      _spec("PADDING"))]
    assert missing and missing[0] == "a pad names its end_padding; add semantics.end_padding"
