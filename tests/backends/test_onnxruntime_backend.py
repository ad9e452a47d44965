"""The onnxruntime backend: the mapping on known values, session caching,
batching, clean rejections and a known disagreement reported as FAIL."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime_backend import MAPPINGS, OnnxRuntimeBackend, plan
from dmlconform.cases.generate import generate
from dmlconform.cases.model import Case, TensorData, packed_strides
from dmlconform.results import Outcome
from dmlconform.runner import bind, run_cases
from dmlconform.spec import model as m
from dmlconform.spec.load import load_spec
from tests.conftest import REPO

pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed (pip install -e '.[onnxruntime]')")


def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _case(op: str, x: list[float], dtype: m.DataType = m.DataType.FLOAT32, **attrs: float) -> Case:
    arr = np.asarray(x, dtype=dtype.name.lower())
    sizes = (arr.size,)
    return Case(id=f"{op}/test", operator=op, level=m.FeatureLevel.FL_6_4, dtype=dtype,
                inputs=(TensorData("InputTensor", dtype, sizes, packed_strides(sizes), arr),),
                outputs=(TensorData("OutputTensor", dtype, sizes, packed_strides(sizes), np.zeros_like(arr)),),
                attributes=tuple(attrs.items()))


def _run(backend: OnnxRuntimeBackend, op: str, x: list[float], **attrs: float) -> np.ndarray:
    case = _case(op, x, **attrs)
    buffers = bind(case)
    backend.run(_spec(op), case, buffers)
    return buffers["OutputTensor"]


def test_hard_sigmoid_passes_the_docs_values_not_onnx_defaults() -> None:
    # Alpha=1.5, Beta=-0.25: ONNX's defaults (0.2, 0.5) would give 0.6 at x=0.5.
    out = _run(OnnxRuntimeBackend(), "ACTIVATION_HARD_SIGMOID", [0.5, -1.0, 2.0], Alpha=1.5, Beta=-0.25)
    assert out.tolist() == [0.5, 0.0, 1.0]
    p = plan(_spec("ACTIVATION_HARD_SIGMOID"), _case("ACTIVATION_HARD_SIGMOID", [0.0], Alpha=1.5, Beta=-0.25))
    assert p.attrs == {"alpha": 1.5, "beta": -0.25}


def test_shrink_maps_threshold_to_lambd_and_bias_to_bias() -> None:
    p = plan(_spec("ACTIVATION_SHRINK"), _case("ACTIVATION_SHRINK", [0.0], Threshold=1.0, Bias=0.25))
    assert p.mapping.op_type == "Shrink" and p.attrs == {"lambd": 1.0, "bias": 0.25}
    out = _run(OnnxRuntimeBackend(), "ACTIVATION_SHRINK", [2.0, -2.0, 0.5], Threshold=1.0, Bias=0.25)
    assert out.tolist() == [1.75, -1.75, 0.0]


@pytest.mark.parametrize(("op", "attrs", "why"), [
    ("ACTIVATION_SHRINK", {"Threshold": -0.5, "Bias": 0.0}, "Threshold=-0.5 < 0"),
    ("ACTIVATION_SOFTPLUS", {"Steepness": 2.0}, "Steepness=2.0: ONNX Softplus"),
    ("ACTIVATION_HARD_SWISH", {"Alpha": 0.2, "Beta": 0.5}, "fixes it at 1/6"),
    ("ELEMENT_WISE_CLIP", {"Min": 3.0, "Max": 2.0}, "Min=3.0 > Max=2.0"),
    ("ACTIVATION_LINEAR", {"Alpha": 1.0, "Beta": 0.0}, "not mapped"),
])
def test_what_onnx_cannot_express_is_not_supported(op: str, attrs: dict[str, float], why: str) -> None:
    support = OnnxRuntimeBackend().supports(_spec(op), _case(op, [1.0], **attrs))
    assert not support.supported and why in (support.reason or "")


def test_integer_division_by_zero_is_rejected_not_run() -> None:
    spec = _spec("ELEMENT_WISE_DIVIDE")
    case = next(c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)
                if c.dtype is m.DataType.INT32 and np.any(c.input("BTensor").buffer == 0))
    with pytest.raises(NotSupportedError, match="by zero"):
        OnnxRuntimeBackend().run(spec, case, bind(case))


def test_sessions_are_cached_per_key_across_ranks_and_layouts() -> None:
    spec = _spec("ACTIVATION_SOFTSIGN")
    cases = [c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is m.DataType.FLOAT32]
    backend = OnnxRuntimeBackend()
    results = run_cases([(spec, c) for c in cases], backend)   # one run_batch call: one session built
    assert {r.outcome for r in results} == {Outcome.PASS}
    assert backend.misses == 1
    one_by_one = OnnxRuntimeBackend()
    for case in cases:                                         # every rank and layout: the same session
        one_by_one.run(spec, case, bind(case))
    assert one_by_one.misses == 1 and one_by_one.hits == len(cases) - 1


def test_run_batch_equals_run_one_by_one() -> None:
    spec = _spec("ACTIVATION_SHRINK")
    cases = [c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is m.DataType.FLOAT16]
    single = [bind(c) for c in cases]
    for c, b in zip(cases, single):
        OnnxRuntimeBackend().run_batch([(spec, c, b)])
    batched = [bind(c) for c in cases]
    backend = OnnxRuntimeBackend()
    errors = backend.run_batch([(spec, c, b) for c, b in zip(cases, batched)])
    assert all(e is None or isinstance(e, NotSupportedError) for e in errors)
    for c, s, b in zip(cases, single, batched):
        assert s["OutputTensor"].tobytes() == b["OutputTensor"].tobytes(), c.id
    assert backend.misses < len(cases)


def test_a_known_disagreement_is_a_fail_shrink_of_nan() -> None:
    # The doc's "0, otherwise" meets the spec's nan_policy propagate: onnxruntime gives 0 for NaN.
    spec = _spec("ACTIVATION_SHRINK")
    case = _case("ACTIVATION_SHRINK", [float("nan"), 1.0], Threshold=0.5, Bias=0.0)
    (result,) = run_cases([(spec, case)], OnnxRuntimeBackend())
    assert result.outcome is Outcome.FAIL
    assert result.worst[0].actual == 0.0 and np.isnan(result.worst[0].expected)


def test_unknown_provider_is_unavailable_with_the_reason() -> None:
    info = OnnxRuntimeBackend(provider="NoSuchExecutionProvider").info()
    assert not info.available and "NoSuchExecutionProvider" in (info.reason or "")


def test_every_mapping_names_an_onnx_operator() -> None:
    from onnx import defs

    for op, mapping in MAPPINGS.items():
        assert defs.has(mapping.op_type), (op, mapping.op_type)
        assert dataclasses.is_dataclass(mapping)
