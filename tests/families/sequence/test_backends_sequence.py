"""torch and onnxruntime on the sequence family (issue #24 item 5): their
mappings give every case of the four operators within the oracle's
tolerance (the failures each library has are named in docs/sequence.md)."""

from __future__ import annotations

from functools import cache

import pytest

from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _pairs(op: str, pick: str) -> tuple[tuple[m.Spec, Case], ...]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return tuple((spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, keep=lambda i, _: pick in i))


@pytest.mark.parametrize(("op", "pick"), [("TOP_K1", "/ties"), ("TOP_K", "/k="),
                                          ("CUMULATIVE_SUMMATION", "/exclusive/"), ("CUMULATIVE_PRODUCT", "/decreasing/")])
def test_torch_passes_the_sequence_cases(op: str, pick: str) -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

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
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    pairs = _pairs(op, pick)
    results = run_cases(list(pairs), OnnxRuntimeBackend())
    assert pairs and all(r.outcome is Outcome.PASS for r in results), \
        [f"{r.case_id}: {r.message}" for r in results if r.outcome is not Outcome.PASS][:3]


def test_onnxruntime_passes_every_cumulative_product_case() -> None:
    # onnxruntime 1.32.0 implements ONNX CumProd (opset 26): exclusive and reverse are the doc's
    # HasExclusiveProduct and DECREASING (before: not mapped, all 120 cases NOT_SUPPORTED).
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    pairs = _pairs("CUMULATIVE_PRODUCT", "/")
    assert OnnxRuntimeBackend().implements(pairs[0][0]) is None
    results = run_cases(list(pairs), OnnxRuntimeBackend())
    assert len(pairs) == 120 and all(r.outcome is Outcome.PASS for r in results), \
        [f"{r.case_id}: {r.message}" for r in results if r.outcome is not Outcome.PASS][:3]
    assert {"exclusive", "inclusive"} <= {r.case_id.split("/")[6] for r in results}


def test_an_onnx_without_opset_26_leaves_cumulative_product_not_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    monkeypatch.setattr(onnx.defs, "onnx_opset_version", lambda: 25)
    spec, case = _pairs("CUMULATIVE_PRODUCT", "/n=7/increasing/inclusive/random")[0]
    support = OnnxRuntimeBackend().supports(spec, case)
    assert not support.supported
    assert support.reason == (f"ONNX CumProd needs opset 26; the installed onnx {onnx.__version__} goes to opset 25: "
                              "upgrade onnx (and onnxruntime) to map it")
