"""SCATTER and SCATTER_ND in the index-map family (issue #34): the
oracle's index map against numpy, the readings of duplicate indices (the
first, the last or another colliding update, each accepted and reported),
indices outside their dimension, the pages' examples, the CPU reference
at 0 FAIL, and the engines (docs/index-map.md "Scatters")."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Buffers, Case, writable_view
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.index_map.oracle import example_problems
from dmlconform.families.index_map.scatter_oracle import scatter_values
from dmlconform.families.index_map.scatters import ScatterCall, scatter_problem, updates_sizes
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

OPERATORS = ("SCATTER", "SCATTER_ND")


@cache
def _pairs(op: str) -> tuple[tuple[m.Spec, Case], ...]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return tuple((spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0))


# -- the oracle's map -------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.data())
def test_scatter_elements_is_each_update_where_its_index_points(rank: int, data: st.DataObject) -> None:
    sizes = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axis = data.draw(st.integers(0, rank - 1))
    m_ = data.draw(st.integers(1, 5))
    idx_sizes = tuple(m_ if d == axis else s for d, s in enumerate(sizes))
    signed = data.draw(st.booleans())
    n = sizes[axis]
    idx = np.array(data.draw(st.lists(st.integers(-n if signed else 0, n - 1), min_size=int(np.prod(idx_sizes)),
                                      max_size=int(np.prod(idx_sizes)))), dtype=np.int32 if signed else np.uint32)
    idx = idx.reshape(idx_sizes)
    x = np.arange(np.prod(sizes), dtype=np.float64).reshape(sizes)
    upd = -1.0 - np.arange(idx.size, dtype=np.float64).reshape(idx_sizes)
    found = scatter_values(ScatterCall(False, axis=axis), x, idx, upd)
    # the written elements by a loop over the updates in C order: the last write wins, the first is offered
    last, first = x.copy(), x.copy()
    written = np.zeros(sizes, dtype=bool)
    for u in np.ndindex(*idx_sizes):
        at = list(u)
        at[axis] = int(idx[u]) % n
        last[tuple(at)] = upd[u]
        if not written[tuple(at)]:
            first[tuple(at)] = upd[u]
        written[tuple(at)] = True
    assert found.valid.all()
    assert np.array_equal(found.expected, last.reshape(-1))
    offered = found.expected.copy()
    for name, position, values in found.readings:
        if name == "first":
            offered[position] = values
    assert np.array_equal(offered, first.reshape(-1))


def test_scatter_nd_writes_each_block_at_its_tuple() -> None:
    x = np.zeros((2, 3, 2))
    idx = np.array([[1, -1], [0, 0]], dtype=np.int64)  # (1, 2) and (0, 0): blocks of 2
    upd = np.array([[1.0, 2.0], [3.0, 4.0]])
    call = ScatterCall(True, input_rank=3, indices_rank=2)
    assert updates_sizes(call, (2, 3, 2), (1, 2, 2)) == (1, 2, 2)
    found = scatter_values(call, x, idx.reshape(1, 2, 2), upd.reshape(1, 2, 2))
    want = np.zeros((2, 3, 2))
    want[1, 2], want[0, 0] = (1.0, 2.0), (3.0, 4.0)
    assert np.array_equal(found.expected, want.reshape(-1))


def test_an_index_outside_leaves_only_its_line_open() -> None:
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[0, 1, 2, 3], [7, 0, 1, 2]], dtype=np.uint32)  # along axis 1: row 1's first index is outside
    upd = -np.arange(1.0, 9.0).reshape(2, 4)
    found = scatter_values(ScatterCall(False, axis=1), x, idx, upd)
    assert found.valid.reshape(3, 4).tolist() == [[True] * 4, [False] * 4, [True] * 4]
    assert found.expected.reshape(3, 4)[0].tolist() == [-1, -2, -3, -4]
    nd = scatter_values(ScatterCall(True, input_rank=2, indices_rank=2), x, np.array([[1, 9], [2, 3]]),
                        np.array([5.0, 6.0]))
    assert nd.valid.reshape(3, 4).tolist() == [[True] * 4, [False] * 4, [True] * 4]  # row 1, any column
    assert nd.expected.reshape(3, 4)[2, 3] == 6.0


def test_shape_rules_say_what_is_wrong() -> None:
    assert scatter_problem(ScatterCall(False, axis=1), (3, 4), (2, 4), (2, 4), (3, 4)) is not None
    assert scatter_problem(ScatterCall(False, axis=0), (3, 4), (2, 4), (2, 4), (3, 4)) is None
    assert "updates' sizes" in (scatter_problem(ScatterCall(True, input_rank=2, indices_rank=2), (3, 4), (5, 1),
                                                (5, 3), (3, 4)) or "")


def test_the_pages_examples_hold_but_scatter_nds() -> None:
    for op, wrong in (("SCATTER", []), ("SCATTER_ND", ["example1"])):
        sem = load_spec(REPO / "specs" / f"{op}.yaml").semantics
        assert isinstance(sem, IndexMap)
        assert [e.name for e in sem.examples if example_problems(sem, e)] == wrong


# -- the suite ------------------------------------------------------------------------------------
def _first_wins(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """A backend whose colliding writes keep the first: the updates written in reverse order."""
    sem = spec.semantics
    assert isinstance(sem, IndexMap)
    x, idx, upd = (np.array(case.input(n).view(buffers[n])) for n in (sem.input, sem.indices, sem.updates))
    out = writable_view(case.outputs[0], buffers[sem.output])
    call = ScatterCall(sem.updates is not None and spec.operator == "SCATTER_ND")
    if not call.nd:
        axis = int(case.attribute_map()["Axis"])
        out[...] = x
        flipped = (np.ascontiguousarray(np.flip(a, axis)) for a in (idx.astype(np.int64) % x.shape[axis], upd))
        np.put_along_axis(out, *flipped, axis=axis)  # contiguous: numpy writes a flipped view in memory order
        return
    r_in = int(case.attribute_map()["InputDimensionCount"])
    data = x.reshape(x.shape[x.ndim - r_in:])
    q = idx.shape[-1]
    tuples = idx.reshape(-1, q).astype(np.int64) % np.array(data.shape[:q])
    block = upd.reshape((tuples.shape[0],) + data.shape[q:])
    data[tuple(tuples[::-1, j] for j in range(q))] = block[::-1]
    out[...] = data.reshape(x.shape)


class FirstWins(CpuBackend):
    def run(self, spec: m.Spec, case: Case, buffers: Buffers) -> None:
        super().run(spec, case, buffers)
        if "/duplicates" in case.id:
            _first_wins(spec, case, buffers)


@pytest.mark.parametrize("op", OPERATORS)
def test_cpu_passes_and_takes_the_last_update(op: str) -> None:
    results = run_cases(list(_pairs(op)), CpuBackend())
    assert [r.case_id for r in results if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)] == []
    assert {r.case_id.split("/")[-1] for r in results if r.outcome is Outcome.NOT_SUPPORTED} == {"unsupported"}
    duplicates = [r for r in results if "/duplicates" in r.case_id]
    assert duplicates
    for r in duplicates:
        took = {name: (n, k) for name, n, k in r.readings}
        assert took["reading:duplicate-index=last"][1] == took["reading:duplicate-index=last"][0] > 0


@pytest.mark.parametrize("op", OPERATORS)
def test_first_write_wins_passes_and_is_reported(op: str) -> None:
    results = run_cases([p for p in _pairs(op) if "/duplicates" in p[1].id], FirstWins())
    assert results and all(r.outcome is Outcome.PASS for r in results), [r.message for r in results]
    for r in results:
        took = {name: (n, k) for name, n, k in r.readings}
        assert took["reading:duplicate-index:first"][1] == took["reading:duplicate-index:first"][0] > 0
        assert took["reading:duplicate-index=last"][1] == 0


def _check_engine(op: str, backend: Any, refusal: str) -> None:
    pairs = _pairs(op)
    for (_, case), r in zip(pairs, run_cases(list(pairs), backend)):
        if "/out-of-range" in case.id:
            assert r.outcome is Outcome.NOT_SUPPORTED and refusal in r.message
        else:
            assert r.outcome is Outcome.PASS, f"{r.case_id}: {r.message}"


@pytest.mark.parametrize("op", OPERATORS)
def test_onnxruntime_passes_the_scatters(op: str) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    _check_engine(op, OnnxRuntimeBackend(), "an index outside its dimension: ONNX Scatter* calls it an error")


@pytest.mark.parametrize("op", OPERATORS)
def test_torch_passes_the_scatters(op: str) -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    _check_engine(op, TorchBackend(), "an index outside its dimension: torch raises")
