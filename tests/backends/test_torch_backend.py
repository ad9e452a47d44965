"""The torch backend: exact-only mappings, strides and in-place through
as_strided views, the CUDA path (skipped without CUDA), missing packages."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dmlconform.backends.torch.backend import TorchBackend
from dmlconform.cases.model import Layout
from dmlconform.catalog import load_spec
from dmlconform.families.elementwise.cases import generate
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.backends.test_onnxruntime_backend import _case, _spec
from tests.conftest import REPO

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install 'dmlconform[torch]')")


def _cases(op: str, dtype: m.DataType = m.DataType.FLOAT32) -> list:  # type: ignore[type-arg]
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return [(spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is dtype]


def test_hardsigmoid_maps_only_the_one_sixth_slope() -> None:
    backend = TorchBackend()
    spec = _spec("ACTIVATION_HARD_SIGMOID")
    doc_default = backend.supports(spec, _case("ACTIVATION_HARD_SIGMOID", [0.0], Alpha=0.2, Beta=0.5))
    assert not doc_default.supported and "fixes it at 1/6" in (doc_default.reason or "")
    assert backend.supports(spec, _case("ACTIVATION_HARD_SIGMOID", [0.0], Alpha=1 / 6, Beta=0.5)).supported


@pytest.mark.parametrize(("bias", "function"), [(0.0, "hardshrink"), (0.5, "softshrink"), (0.25, None)])
def test_shrink_is_hardshrink_or_softshrink_or_rejected(bias: float, function: str | None) -> None:
    case = _case("ACTIVATION_SHRINK", [1.0, -1.0, 0.25], Threshold=0.5, Bias=bias)
    support = TorchBackend().supports(_spec("ACTIVATION_SHRINK"), case)
    assert support.supported is (function is not None)
    if function is None:
        assert "hardshrink (Bias = 0) and softshrink (Bias = Threshold)" in (support.reason or "")


def test_strided_broadcast_and_in_place_layouts_pass() -> None:
    pairs = _cases("ACTIVATION_SOFTSIGN") + _cases("ELEMENT_WISE_ADD") + _cases("ACTIVATION_RELU")
    layouts = {c.layout for _, c in pairs}
    assert {Layout.PADDED, Layout.BROADCAST, Layout.IN_PLACE} <= layouts
    results = run_cases(pairs, TorchBackend())
    assert [r.case_id for r in results if r.outcome is not Outcome.PASS] == []


def test_a_known_disagreement_is_a_fail_gelu_of_inf() -> None:
    # torch's vectorised float32 gelu gives NaN for +inf on some CPUs (docs/results/notes.yaml:
    # an Intel Xeon's AVX-512 path) and +inf on others (this project's AMD EPYC): the case
    # FAILs exactly where torch gives NaN for +inf on the case's own input.
    import torch

    pairs = _cases("ACTIVATION_GELU")[:1]
    x = torch.from_numpy(np.array(pairs[0][1].inputs[0].view()).reshape(-1))
    nan_at_inf = bool(torch.isnan(torch.nn.functional.gelu(x)[torch.isposinf(x)]).any())
    results = run_cases(pairs, TorchBackend())
    assert (results[0].outcome is Outcome.FAIL) is nan_at_inf
    if nan_at_inf:
        assert any(w.inputs[0][1] == np.inf and np.isnan(w.actual) for w in results[0].worst)


def test_cuda_without_a_device_is_unavailable_with_the_reason() -> None:
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the unavailable path cannot be shown here")
    info = TorchBackend(device="cuda").info()
    assert not info.available and "sees no CUDA device" in (info.reason or "")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (torch.cuda.is_available() is False)")
def test_cuda_path_copies_in_and_out_of_device_memory() -> None:
    pairs = _cases("ACTIVATION_SOFTSIGN") + _cases("ELEMENT_WISE_ADD")
    results = run_cases(pairs, TorchBackend(device="cuda"))
    assert {r.outcome for r in results} <= {Outcome.PASS, Outcome.QUALITY_WARNING}


def test_missing_torch_is_unavailable_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    info = TorchBackend().info()
    assert not info.available and "pip install 'dmlconform[torch]'" in (info.reason or "")


def test_missing_onnxruntime_is_unavailable_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    info = OnnxRuntimeBackend().info()
    assert not info.available and "pip install 'dmlconform[onnxruntime]'" in (info.reason or "")


def test_an_operator_without_a_function_is_not_supported_not_fail() -> None:
    # issue #22 item 5: every case of an operator torch has no function for is NOT_SUPPORTED
    # with the reason (before: FAIL, "rejected a configuration that the 6_4 table supports").
    spec = load_spec(REPO / "specs" / "ACTIVATION_LINEAR.yaml")
    assert TorchBackend().implements(spec) == "torch has no function for ACTIVATION_LINEAR (not mapped)"
    cases = list(generate(spec, m.FeatureLevel.FL_6_4, seed=0, negative=False))[:5]
    results = run_cases([(spec, c) for c in cases], TorchBackend())
    assert [r.outcome for r in results] == [Outcome.NOT_SUPPORTED] * 5
    assert results[0].message == "not implemented: torch has no function for ACTIVATION_LINEAR (not mapped)"
    assert TorchBackend().implements(load_spec(REPO / "specs" / "ACTIVATION_SHRINK.yaml")) is None


def test_every_family_gives_its_torch_ops_in_one_convention() -> None:
    # Each family module's TORCH_OPS maps operator -> TorchOp keyword arguments (fn, and where
    # they differ from the defaults inputs in order, outputs, check, note): one merge, no family's
    # own tuple layout.
    import dataclasses

    from dmlconform.backends.torch import contraction as torch_contraction
    from dmlconform.backends.torch import elementwise as torch_elementwise
    from dmlconform.backends.torch import reduction as torch_reduction
    from dmlconform.backends.torch import sequence as torch_sequence
    from dmlconform.backends.torch import softmax as torch_softmax
    from dmlconform.backends.torch.backend import TORCH_OPS, TorchOp

    fields = {f.name for f in dataclasses.fields(TorchOp)}
    for op, entry in torch_elementwise.TORCH_OPS.items():
        assert TORCH_OPS[op] is entry, op
    for family in (torch_softmax, torch_sequence, torch_reduction, torch_contraction):
        for op, kwargs in family.TORCH_OPS.items():
            assert "fn" in kwargs and set(kwargs) <= fields, (family.__name__, op, sorted(kwargs))
            assert TORCH_OPS[op] == TorchOp(**kwargs), op
    assert TORCH_OPS["TOP_K1"].outputs == 2 and TORCH_OPS["GEMM"].inputs == ("ATensor", "BTensor", "CTensor")


def test_the_declared_float16_accumulation_is_per_device() -> None:
    from dmlconform.backends.torch.backend import float16_accumulation

    assert TorchBackend().info().float16_accumulation == {"ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1",
                                                          "REDUCE:DML_REDUCE_FUNCTION_MULTIPLY",
                                                          "CONVOLUTION:DML_CONVOLUTION_DIRECTION_BACKWARD",
                                                          "LP_POOLING", "LP_POOLING1",
                                                          "MEAN_VARIANCE_NORMALIZATION1:2,3",
                                                          "MEAN_VARIANCE_NORMALIZATION2:2,3",
                                                          "MEAN_VARIANCE_NORMALIZATION:False", "FOLD",
                                                          "BATCH_NORMALIZATION_TRAINING", "ROI_ALIGN", "ROI_ALIGN1"}
    assert float16_accumulation("cuda:1") == {"CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT", "CONVOLUTION", "LP_POOLING",
                                              "LP_POOLING1", "LOCAL_RESPONSE_NORMALIZATION", "ROI_ALIGN", "ROI_ALIGN1"}
    assert float16_accumulation("mps") == frozenset()


@pytest.mark.parametrize("case_id", [
    "ACTIVATION_LOG_SOFTMAX/FLOAT16/4d/n2/random",   # FAIL undeclared: torch CPU's log-sum in FLOAT16
    "REDUCE/FLOAT16/4d/axes=3/log_sum/nan",            # the mapping's sum rounded to FLOAT16 before the log
    "REDUCE/FLOAT64/4d/axes=3/log_sum/random/unsupported",  # ... and not a FLOAT64 sum to float32
    "ACTIVATION_LOG_SOFTMAX1/FLOAT16/4d/axes=3/n33/range",  # the log of an underflowed softmax: a finite bound
    "REDUCE/FLOAT16/4d/axes=3/multiply/random/n1000"])  # torch's CPU prod in FLOAT16, declared for MULTIPLY alone
def test_torch_cpu_float16_cases_of_its_declaration_and_mapping_pass(case_id: str) -> None:
    from dmlconform.families import cases_of

    spec = load_spec(REPO / "specs" / f"{case_id.split('/')[0]}.yaml")
    pairs = [(spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0) if c.id == case_id]
    assert len(pairs) == 1
    assert [r.outcome for r in run_cases(pairs, TorchBackend())] == [Outcome.PASS]
