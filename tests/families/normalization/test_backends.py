"""The normalization family on real implementations (issue #36 item 5):
onnxruntime's LayerNormalization/InstanceNormalization and torch's
layer_norm/instance_norm pass MEAN_VARIANCE_NORMALIZATION1's suite; what
they cannot express is NOT_SUPPORTED with the reason, never FAIL."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from dmlconform.cases.model import Case
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.normalization import suites

OP = "MEAN_VARIANCE_NORMALIZATION1"


def _spec() -> m.Spec:
    return suites.spec(OP)


def _cases() -> tuple[Case, ...]:
    return suites.cases(OP)


def test_onnxruntime_passes_what_its_nodes_express() -> None:
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec(), c) for c in _cases()], OnnxRuntimeBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 57, Outcome.NOT_SUPPORTED: 23}
    refused = {r.case_id: r.message for r in results if r.outcome is Outcome.NOT_SUPPORTED}
    assert "NormalizeVariance (UseVariance) FALSE" in refused[f"{OP}/FLOAT32/4d/axes=2,3/channel/random/no-variance"]
    assert "LayerNormalization" in refused[f"{OP}/FLOAT32/4d/axes=0,2/channel/random"]
    passed = {r.case_id for r in results if r.outcome is Outcome.PASS}
    assert {f"{OP}/FLOAT16/4d/axes=2,3/channel/wide", f"{OP}/FLOAT32/4d/axes=2,3/strided/random",
            f"{OP}/FLOAT32/4d/axes=1,2,3/normalized/random", f"{OP}/FLOAT32/4d/axes=2,3/channel/random/fused=relu",
            f"{OP}/FLOAT16/4d/axes=2,3/channel/random/fused=sigmoid"} <= passed
    assert "ACTIVATION_LINEAR: ONNX has no such node" in refused[f"{OP}/FLOAT32/4d/axes=2,3/channel/random/fused=linear"]


def test_torch_passes_with_its_declared_float16_instance_statistics() -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec(), c) for c in _cases()], TorchBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 59, Outcome.NOT_SUPPORTED: 21}
    refused = {r.case_id: r.message for r in results if r.outcome is Outcome.NOT_SUPPORTED}
    assert "one element per instance" in refused[f"{OP}/FLOAT32/4d/axes=2,3/channel/random/n1"]


def test_torch_float16_instance_norm_fails_the_float32_bound() -> None:
    """torch's CPU instance_norm rounds FLOAT16 statistics to FLOAT16: without the declaration its large-mean case
    FAILs, so the declaration is what lets it pass."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch import backend

    class Undeclared(backend.TorchBackend):
        def info(self):  # type: ignore[no-untyped-def]
            return dataclasses.replace(super().info(), float16_accumulation=frozenset())

    case = next(c for c in _cases() if c.id == f"{OP}/FLOAT16/4d/axes=2,3/channel/large-mean")
    (result,) = run_cases([(_spec(), case)], Undeclared())
    assert result.outcome is Outcome.FAIL
