"""ONE_HOT in the index-map family (issue #34): the oracle's map against a
loop over the sequences, indices past the axis and negative ones, the
page's examples, the CPU reference at 0 FAIL, and the engines
(docs/index-map.md "ONE_HOT")."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families.index_map.onehot import onehot_problem
from dmlconform.families.index_map.onehot_oracle import onehot_expected
from dmlconform.families.index_map.oracle import example_problems
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO
from tests.families.index_map import test_scatters as scatter_tests


def _pairs() -> tuple[tuple[m.Spec, Case], ...]:
    return scatter_tests._pairs("ONE_HOT")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.data())
def test_each_sequence_is_off_but_at_its_index(rank: int, data: st.DataObject) -> None:
    sizes = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axis = data.draw(st.integers(0, rank - 1))
    depth = sizes[axis]
    idx_sizes = tuple(1 if d == axis else s for d, s in enumerate(sizes))
    signed = data.draw(st.booleans())
    count = int(np.prod(idx_sizes))
    raw = data.draw(st.lists(st.integers(-2 * depth - 1 if signed else 0, 2 * depth + 1), min_size=count,
                             max_size=count))
    idx = np.array(raw, dtype=np.int64 if signed else np.uint32).reshape(idx_sizes)
    got = onehot_expected(axis, idx, np.array([-2.0, 7.0]), sizes)
    want = np.full(sizes, -2.0)
    for c in np.ndindex(*idx_sizes):
        i = int(idx[c])
        i = i + depth if i < 0 else i
        if 0 <= i < depth:
            at = list(c)
            at[axis] = i
            want[tuple(at)] = 7.0
    assert np.array_equal(got, want)


def test_shape_rules_say_what_is_wrong() -> None:
    assert onehot_problem(1, (2, 1, 4), (1, 1, 2), (2, 5, 4)) is None
    assert "with 1 on Axis" in (onehot_problem(1, (2, 5, 4), (1, 1, 2), (2, 5, 4)) or "")
    assert "at least 2" in (onehot_problem(0, (1, 4), (1, 1), (3, 4)) or "")


def test_the_pages_examples_hold() -> None:
    sem = load_spec(REPO / "specs" / "ONE_HOT.yaml").semantics
    assert isinstance(sem, IndexMap) and len(sem.examples) == 4
    assert [e.name for e in sem.examples if example_problems(sem, e)] == []


def test_cpu_passes_every_case() -> None:
    results = run_cases(list(_pairs()), CpuBackend())
    assert [r.case_id for r in results if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)] == []
    assert [r.case_id.split("/")[-1] for r in results if r.outcome is Outcome.NOT_SUPPORTED] == ["unsupported"]
    assert {r.case_id.split("/")[6] for r in results} >= {"past-axis", "below-axis", "example", "boundary"}


def test_onnxruntime_passes_but_the_value_types_it_lacks() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    for (_, case), r in zip(_pairs(), run_cases(list(_pairs()), OnnxRuntimeBackend())):
        if r.outcome is Outcome.NOT_SUPPORTED:
            assert "NOT_IMPLEMENTED" in r.message and case.dtype is not m.DataType.FLOAT32, r.message
        else:
            assert r.outcome is Outcome.PASS, f"{r.case_id}: {r.message}"


@pytest.mark.parametrize("op", ["ONE_HOT", "NONZERO_COORDINATES"])
def test_torch_passes_every_case(op: str) -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases(list(scatter_tests._pairs(op)), TorchBackend())
    assert all(r.outcome is Outcome.PASS for r in results), [r.message for r in results if r.outcome is not Outcome.PASS]
