"""The window family on MAX_UNPOOLING (issue #35): each output element an
input value or 0, exact; repeated indices' readings (last primary, first,
between) accepted and reported; an index out of range writes nothing;
the CPU reference at 0 FAIL and the planted faults caught by name."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases import family
from dmlconform.cases.model import Case, writable_view
from dmlconform.families.window.oracle import WindowOracle
from dmlconform.families.window.unpool_reference import unpool
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.window.suites import case as _case
from tests.families.window.suites import cases as _cases
from tests.families.window.suites import spec as _spec

OP = "MAX_UNPOOLING"


def _hand_case(values: list[float], indices: list[int], out: tuple[int, ...]) -> Case:
    """A 1x1x1xK input and its indices into an output of ``out``."""
    x = np.array(values, np.float32).reshape(1, 1, 1, -1)
    i = np.array(indices, np.uint32).reshape(1, 1, 1, -1)
    with np.errstate(invalid="ignore"):  # the buffer's fill before the values
        inputs = (family.input_tensor("InputTensor", m.DataType.FLOAT32, x),
                  family.input_tensor("IndicesTensor", m.DataType.UINT32, i))
    return Case(id=f"{OP}/hand", operator=OP, level=m.FeatureLevel.FL_6_4, dtype=m.DataType.FLOAT32,
                inputs=inputs,
                outputs=(family.output_tensor("OutputTensor", m.DataType.FLOAT32, out),), seed=0)


def test_the_suites_cover_every_type_of_the_tables() -> None:
    cases = _cases(OP)
    assert len(cases) == 84
    assert {c.dtype.name for c in cases if c.expect_supported} == {
        "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"}
    assert _case(OP, "FLOAT16/4d/repeated/random/idx64").input("IndicesTensor").dtype is m.DataType.UINT64
    negative = sorted(c.id.removeprefix(OP + "/") for c in cases if not c.expect_supported)
    assert negative == ["FLOAT32/4d/pooled-k2-s2/random/indices-INT32/unsupported",
                        "FLOAT32/4d/pooled-k2-s2/random/out-of-range", "FLOAT32/5d/pooled-k2-s2/random/unsupported",
                        "FLOAT64/4d/pooled-k2-s2/random/unsupported"]


def test_pooled_indices_come_from_a_real_max_pooling() -> None:
    """k3 s2 windows overlap: an index repeats, always with the value it names in the pooled tensor."""
    case = _case(OP, "FLOAT32/4d/pooled-k3-s2/random")
    x, idx = (case.input(n).view().reshape(-1) for n in ("InputTensor", "IndicesTensor"))
    assert len(set(idx.tolist())) < idx.size
    for i in set(idx.tolist()):
        assert len(set(x[idx == i].tolist())) == 1


def test_the_last_of_repeated_indices_is_primary_and_the_others_are_readings() -> None:
    """Values [1, 2, 3, 4, 5] at indices [0, 5, 5, 5, 8] of a 3x3 output: element 5 is 4 (last), 2 (first) or
    3 (between); the index 8 is the last element; the rest is 0."""
    batch = WindowOracle.of(_spec(OP)).bind([_hand_case([1, 2, 3, 4, 5], [0, 5, 5, 5, 8], (1, 1, 3, 3))],
                                            flush_subnormals=False)
    (exp,) = batch.expect(0, 9)
    assert exp.expected.tolist() == [1, 0, 0, 0, 0, 4, 0, 0, 5]
    assert exp.bound_strict is None and exp.ulp == 0
    found = {(a.name, tuple(a.index.tolist()), tuple(a.values.tolist())) for a in exp.alternatives}
    assert found == {("reading:repeated-index=last", (5,), (4.0,)), ("reading:repeated-index:first", (5,), (2.0,)),
                     ("reading:repeated-index:between", (5,), (3.0,))}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_oracle_is_a_sequential_scatter_and_its_readings_are_the_other_writers(data: st.DataObject) -> None:
    """Against a plain loop over a 1x1x3x3 output (indices 9 to 11 past its end): the primary values are the
    last store's, and every alternative offers, at an element several indices name, one of their values."""
    indices = data.draw(st.lists(st.integers(0, 11), min_size=1, max_size=12), label="indices")
    values = [float(v) for v in range(1, len(indices) + 1)]
    batch = WindowOracle.of(_spec(OP)).bind([_hand_case(values, indices, (1, 1, 3, 3))], flush_subnormals=False)
    (exp,) = batch.expect(0, 9)
    loop = [0.0] * 9
    writers: dict[int, list[float]] = {}
    for v, i in zip(values, indices):
        if i < 9:
            loop[i] = v
            writers.setdefault(i, []).append(v)
    assert exp.expected.tolist() == loop
    for alt in exp.alternatives:
        for i, v in zip(alt.index.tolist(), alt.values.tolist()):
            assert v in writers[i] and len(writers[i]) > 1
    first = [a for a in exp.alternatives if a.name.endswith(":first")]
    offered = {i: v for a in first for i, v in zip(a.index.tolist(), a.values.tolist())}
    assert offered == {i: w[0] for i, w in writers.items() if len(w) > 1}


def test_an_index_past_the_end_writes_nothing() -> None:
    batch = WindowOracle.of(_spec(OP)).bind([_hand_case([7, 8], [9, 2], (1, 1, 3, 3))], flush_subnormals=False)
    assert batch.expect(0, 9)[0].expected.tolist() == [0, 0, 8, 0, 0, 0, 0, 0, 0]


def test_the_cpu_reference_passes() -> None:
    results = run_cases([(_spec(OP), c) for c in _cases(OP)], CpuBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 81, Outcome.NOT_SUPPORTED: 3}
    computed = next(r for r in results if r.case_id.endswith("/out-of-range"))
    assert computed.outcome is Outcome.PASS  # refused or computed right: the cpu computes it, the index dropped
    repeated = next(r for r in results if r.case_id == f"{OP}/FLOAT32/4d/repeated/random")
    took = {name: (differ, hit) for name, differ, hit in repeated.readings}
    assert took["reading:repeated-index=last"][0] == took["reading:repeated-index=last"][1] > 0


class _FirstWins(CpuBackend):
    """A scatter that keeps the first store of repeated indices: an honest reading, not a fault."""

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        super().run(spec, case, buffers)
        out = case.outputs[0]
        writable_view(out, buffers[out.name])[...] = unpool(spec.semantics, case, buffers,  # type: ignore[arg-type]
                                                            first_wins=True)


def test_first_wins_passes_and_is_reported() -> None:
    """On FLOAT32 random data (distinct values: first and last differ wherever indices repeat)."""
    results = run_cases([(_spec(OP), c) for c in _cases(OP) if "FLOAT32/4d/repeated/random" in c.id], _FirstWins())
    assert {r.outcome for r in results} == {Outcome.PASS}
    took: Counter[str] = Counter()
    for r in results:
        took.update({name: hit for name, _, hit in r.readings})
    assert took["reading:repeated-index:first"] > 0 and took["reading:repeated-index=last"] == 0


@pytest.mark.parametrize(("fault", "where"), [
    ("unpool-index-off-by-one", ""), ("unpool-repeats-summed", "/repeated/"), ("unpool-plane-index", ""),
    ("unpool-buffer-index", "/padded")])
def test_the_faults_are_caught(fault: str, where: str) -> None:
    failed = [r.case_id for r in run_cases([(_spec(OP), c) for c in _cases(OP)], FaultyBackend(fault))
              if r.outcome is Outcome.FAIL]
    assert failed and any(where in i for i in failed)
    if fault == "unpool-buffer-index":
        assert all(i.endswith("/padded") for i in failed)  # packed tensors' offsets are their logical indices


def test_onnxruntime_passes_what_maxunpool_expresses() -> None:
    """MaxUnpool: float types only; an index out of range refused before the run (onnxruntime: INVALID_ARGUMENT)."""
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec(OP), c) for c in _cases(OP)], OnnxRuntimeBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 18, Outcome.NOT_SUPPORTED: 66}
    refused = next(r for r in results if r.case_id.endswith("/out-of-range"))
    assert refused.outcome is Outcome.NOT_SUPPORTED and "INVALID_ARGUMENT" in refused.message


def test_torch_passes_what_max_unpool_expresses() -> None:
    """max_unpool2d: float types; indices within their own plane only (``boundary`` crosses planes: refused)."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec(OP), c) for c in _cases(OP)], TorchBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 16, Outcome.NOT_SUPPORTED: 68}
    crossing = next(r for r in results if r.case_id == f"{OP}/FLOAT32/4d/boundary/random")
    assert crossing.outcome is Outcome.NOT_SUPPORTED and "plane" in crossing.message
