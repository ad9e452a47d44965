"""VALUE_SCALE_2D on onnxruntime (Mul then Add) and torch (x * Scale +
Bias.view): every case passes, and the readings each takes are reported
(docs/value-scale.md, "Real implementations")."""

from __future__ import annotations

import pytest

from dmlconform.catalog import load_spec
from dmlconform.families.value_scale.cases import generate
from dmlconform.report.readings import summarize
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


def _results(backend: object) -> dict[str, object]:
    spec = load_spec(REPO / "specs" / "VALUE_SCALE_2D.yaml")
    results = run_cases([(spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)], backend)
    assert all(r.outcome is Outcome.PASS for r in results), [(r.case_id, r.message) for r in results
                                                             if r.outcome is not Outcome.PASS]
    return {t.ambiguity: t.status for t in summarize(results)}


def test_onnxruntime_mul_add_passes_every_case() -> None:
    pytest.importorskip("onnxruntime")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    assert _results(OnnxRuntimeBackend())["rounding"] in ("took separate", "mixed")


def test_torch_passes_every_case_rounding_scale_and_bias_to_float16() -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    taken = _results(TorchBackend())
    assert taken["float16-working-type"] == "mixed"  # FLOAT16 Bias rounded where it matters; FLOAT32 untouched
