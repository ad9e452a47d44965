"""The reduction family on onnxruntime (issue #24 item 5): shaped models,
ArgMax/ArgMin over several axes through a transpose, NOT_SUPPORTED with the
reason where onnxruntime has no kernel; and the oracle on cases outside the
tables (FLOAT64), which a real backend may run."""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend
from dmlconform.backends.torch.backend import TorchBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.reduction.oracle import ReductionOracle
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _cases(op: str, *ids: str) -> list[Case]:
    return list(cases_of(_spec(op), m.FeatureLevel.FL_6_4, seed=0, keep=lambda i, _: i in ids))


def test_the_oracle_binds_float64_cases_of_every_function() -> None:
    """A backend that runs a FLOAT64 case outside the tables gets a verdict,
    not a harness error (log(2^-1075) was a math domain error)."""
    cases = [c for c in cases_of(_spec("REDUCE"), m.FeatureLevel.FL_6_4, seed=0,
                                 keep=lambda i, _: i.startswith("REDUCE/FLOAT64/"))]
    assert len(cases) == 12
    for case in cases:
        exp = ReductionOracle.of(_spec("REDUCE")).bind([case], flush_subnormals=False).expect(0, 30)[0]
        assert exp.expected.dtype.kind in "fu", case.id


def test_onnxruntime_computes_the_reductions_it_has_kernels_for() -> None:
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    backend = OnnxRuntimeBackend()
    pairs = [(_spec("ARGMAX"), c) for c in _cases("ARGMAX", "ARGMAX/FLOAT32/3d/axes=0,2/increasing/random",
                                                  "ARGMAX/FLOAT32/4d/axes=3/decreasing/ties",
                                                  "ARGMAX/FLOAT32/2d/axes=0,1/increasing/example3")]
    pairs += [(_spec("REDUCE"), c) for c in _cases("REDUCE", "REDUCE/FLOAT32/4d/axes=0,2/sum/random",
                                                   "REDUCE/FLOAT16/4d/axes=3/log_sum_exp/random/n257",
                                                   "REDUCE/FLOAT32/4d/axes=1,3/average/random/padded",
                                                   "REDUCE/UINT32/4d/axes=1,3/sum/random")]
    results = {r.case_id: r for r in run_cases(pairs, backend)}
    assert len(results) == 7
    kernel = results.pop("REDUCE/UINT32/4d/axes=1,3/sum/random")
    # no UINT32 kernel: refused (onnxruntime implements a subset of the tables), not a wrong value
    assert kernel.outcome is Outcome.NOT_SUPPORTED and kernel.refused
    assert "on UINT32" in kernel.message and "ReduceSum" in kernel.message
    assert Counter(r.outcome for r in results.values()) == {Outcome.PASS: 6}, [r.message for r in results.values()]
    assert backend.implements(_spec("REDUCE")) is None
    assert all(r.outcome is Outcome.PASS for r in run_cases(pairs[:1], CpuBackend()))


def test_torch_computes_the_reductions_and_refuses_an_empty_axis_set() -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    pairs = [(_spec("ARGMIN"), c) for c in _cases("ARGMIN", "ARGMIN/FLOAT32/3d/axes=0,2/increasing/random",
                                                  "ARGMIN/FLOAT32/4d/axes=3/decreasing/ties")]
    pairs += [(_spec("REDUCE"), c) for c in _cases("REDUCE", "REDUCE/FLOAT32/8d/axes=0,2,4,6/multiply/random",
                                                   "REDUCE/INT32/4d/axes=1,3/sum/overflow",
                                                   "REDUCE/FLOAT32/4d/axes=none/sum/random/ambiguity(empty-axis-set)")]
    results = {r.case_id: r for r in run_cases(pairs, TorchBackend())}
    empty = results.pop("REDUCE/FLOAT32/4d/axes=none/sum/random/ambiguity(empty-axis-set)")
    assert empty.outcome is Outcome.NOT_SUPPORTED and "torch reads an empty dim as every axis" in empty.message
    assert Counter(r.outcome for r in results.values()) == {Outcome.PASS: 4}, [r.message for r in results.values()]
