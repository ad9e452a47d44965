"""torch and onnxruntime on the sequence family (issue #24 item 5): their
mappings give every case of the four operators within the oracle's
tolerance (the failures each library has are named in docs/sequence.md)."""

from __future__ import annotations

from functools import cache

import pytest

from dmlconform.cases.model import Case
from dmlconform.oracles import cases_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from dmlconform.spec.load import load_spec
from tests.conftest import REPO


@cache
def _pairs(op: str, pick: str) -> tuple[tuple[m.Spec, Case], ...]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return tuple((spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, keep=lambda i, _: pick in i))


@pytest.mark.parametrize(("op", "pick"), [("TOP_K1", "/ties"), ("TOP_K", "/k="),
                                          ("CUMULATIVE_SUMMATION", "/exclusive/"), ("CUMULATIVE_PRODUCT", "/decreasing/")])
def test_torch_passes_the_sequence_cases(op: str, pick: str) -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch_backend import TorchBackend

    pairs = _pairs(op, pick)
    results = run_cases(list(pairs), TorchBackend())
    assert pairs and all(r.outcome is Outcome.PASS for r in results), \
        [f"{r.case_id}: {r.message}" for r in results if r.outcome is not Outcome.PASS][:3]


@pytest.mark.parametrize(("op", "pick"), [("TOP_K1", "FLOAT32/4d/axis=3/n=33/k=5/increasing/ties"),
                                          ("TOP_K1", "FLOAT16/4d/axis=3/n=33/k=5/decreasing/nan"),
                                          ("TOP_K", "INT8/4d/axis=3/n=33/k=5/extremes"),
                                          ("CUMULATIVE_SUMMATION", "FLOAT32/4d/axis=3/n=33/decreasing/exclusive/random"),
                                          ("CUMULATIVE_SUMMATION", "in-place")])
def test_onnxruntime_passes_the_sequence_cases(op: str, pick: str) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime_backend import OnnxRuntimeBackend

    pairs = _pairs(op, pick)
    results = run_cases(list(pairs), OnnxRuntimeBackend())
    assert pairs and all(r.outcome is Outcome.PASS for r in results), \
        [f"{r.case_id}: {r.message}" for r in results if r.outcome is not Outcome.PASS][:3]


def test_onnxruntime_has_no_cumulative_product() -> None:
    from dmlconform.backends.onnxruntime_backend import OnnxRuntimeBackend

    spec = load_spec(REPO / "specs" / "CUMULATIVE_PRODUCT.yaml")
    assert OnnxRuntimeBackend().implements(spec) == \
        "ONNX has no one-node equivalent of CUMULATIVE_PRODUCT (not mapped)"
    assert OnnxRuntimeBackend().implements(load_spec(REPO / "specs" / "TOP_K.yaml")) is None
