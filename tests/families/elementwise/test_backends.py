"""onnxruntime and torch on the reviewed-formula operators
(docs/bitwise.md): every case they run gives the doc's bits; what they
cannot express is refused with its reason."""

from __future__ import annotations

import pytest

from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


def _run(backend_name: str, op: str, dtypes: tuple[m.DataType, ...]) -> dict[str, tuple[Outcome, str, bool]]:
    if backend_name == "onnxruntime":
        pytest.importorskip("onnxruntime")
        from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend
        backend = OnnxRuntimeBackend()
    else:
        pytest.importorskip("torch")
        from dmlconform.backends.torch.backend import TorchBackend
        backend = TorchBackend()
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    pairs = [(spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0,
                                         keep=lambda i, d: d in dtypes and "unsupported" not in i)]
    assert pairs
    return {r.case_id: (r.outcome, r.message, r.refused) for r in run_cases(pairs, backend)}


@pytest.mark.parametrize("backend", ["onnxruntime", "torch"])
def test_round_halves_to_even_passes_and_other_modes_are_refused(backend: str) -> None:
    results = _run(backend, "ELEMENT_WISE_ROUND", (m.DataType.FLOAT16,))
    refused = {"onnxruntime": ("TOWARD_ZERO", "TOWARD_INFINITY"), "torch": ("TOWARD_INFINITY",)}[backend]
    for case_id, (outcome, message, was_refused) in results.items():
        if case_id.endswith(refused):  # both engines implement a subset of the tables: a refusal, not a FAIL
            assert outcome is Outcome.NOT_SUPPORTED and was_refused, (case_id, message)
        else:
            assert outcome is Outcome.PASS, (case_id, message)


@pytest.mark.parametrize("backend", ["onnxruntime", "torch"])
def test_bit_xor_matches_the_encoding_rule(backend: str) -> None:
    """torch views float tensors as integers of their width and passes;
    ONNX's bitwise operators take integers only and refuse float ones."""
    results = _run(backend, "ELEMENT_WISE_BIT_XOR", (m.DataType.FLOAT16, m.DataType.INT8, m.DataType.UINT64))
    for case_id, (outcome, message, was_refused) in results.items():
        if backend == "onnxruntime" and "/FLOAT16/" in case_id:
            assert outcome is Outcome.NOT_SUPPORTED and was_refused and message.endswith(
                "ONNX bitwise operators take integer tensors only, not float16 (the doc reads a float tensor's "
                "encoding)"), (case_id, message)
        else:
            assert outcome is Outcome.PASS, (case_id, message)
