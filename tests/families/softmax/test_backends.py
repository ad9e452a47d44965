"""The softmax family on onnxruntime and torch (issue #24 item 5): what
each maps, what it refuses and which reading it takes (docs/softmax.md,
"Real implementations")."""

from __future__ import annotations

from functools import cache

import pytest

from dmlconform.backends.base import NotSupportedError
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families.softmax.cases import generate
from dmlconform.report.readings import summarize
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _cases(op: str, dtype: m.DataType | None = None) -> list[tuple[m.Spec, Case]]:
    keep = None if dtype is None else (lambda i, t: t is dtype)
    return [(_spec(op), c) for c in generate(_spec(op), m.FeatureLevel.FL_6_4, seed=0, keep=keep)]


def _outcomes(results: tuple[CaseResult, ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for r in results:
        found.setdefault(r.outcome.value, []).append(r.case_id)
    return found


def test_onnxruntime_passes_what_one_node_expresses_and_refuses_the_rest() -> None:
    pytest.importorskip("onnxruntime")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend, plan

    results = run_cases(_cases("ACTIVATION_HARDMAX1") + _cases("ACTIVATION_SOFTMAX"), OnnxRuntimeBackend())
    refused = [r for r in results if r.refused]   # a subset of the tables: NOT_SUPPORTED, not FAIL (issue #33)
    assert refused and all("are neither one axis nor the trailing dimensions" in r.message for r in refused)
    assert all(r.outcome is Outcome.NOT_SUPPORTED for r in refused)
    assert not any(r.outcome is Outcome.FAIL for r in results)
    assert any(r.outcome is Outcome.PASS and "axes=0,1,2,3" in r.case_id for r in results)  # trailing: fed 2-D
    assert any(r.outcome is Outcome.PASS and "axes=1/" in r.case_id for r in results)  # one axis inside
    taken = {(t.operator, t.ambiguity): t.status for t in summarize(results)}
    assert taken[("ACTIVATION_HARDMAX1", "nan")] == "took skipped"  # onnxruntime's Hardmax never picks NaN
    spec, case = next(pair for pair in _cases("ACTIVATION_SOFTMAX1") if "axes=1,3/" in pair[1].id)
    with pytest.raises(NotSupportedError, match="Axes 1,3 are neither one axis nor the trailing dimensions of a "
                                                "4-D tensor; ONNX reduces one axis"):
        plan(spec, case)


def test_torch_maps_every_axis_set() -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    pairs = _cases("ACTIVATION_SOFTMAX1", m.DataType.FLOAT32) + _cases("ACTIVATION_HARDMAX1", m.DataType.FLOAT32)
    results = run_cases([(s, c) for s, c in pairs if "/4d/" in c.id], TorchBackend())  # every axis set, 4-D
    assert set(_outcomes(results)) == {"PASS"}
    taken = {(t.operator, t.ambiguity): t.status for t in summarize(results)}
    assert taken[("ACTIVATION_SOFTMAX1", "positive-infinity")] == "took nan"
    assert taken[("ACTIVATION_HARDMAX1", "nan")] == "took primary"  # torch.argmax: the first NaN is the largest
