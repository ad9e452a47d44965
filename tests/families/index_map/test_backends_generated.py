"""torch and onnxruntime on the index-map family's generated operations
(issue #34 item 5): every case they run PASSes (their C++ casts take one of
CAST's readings); what they cannot express is NOT_SUPPORTED with its reason
(docs/index-map.md "Engines")."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

OPERATORS = ("CAST", "FILL_VALUE_CONSTANT", "FILL_VALUE_SEQUENCE", "DIAGONAL_MATRIX", "DIAGONAL_MATRIX1")


@cache
def _pairs(op: str) -> tuple[tuple[m.Spec, Case], ...]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return tuple((spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0))


def _outcomes(op: str, backend: Any) -> dict[str, tuple[Outcome, str]]:
    pairs = _pairs(op)
    return {r.case_id: (r.outcome, r.message) for r in run_cases(list(pairs), backend)}


@pytest.mark.slow
@pytest.mark.parametrize("op", OPERATORS)
def test_torch_passes_what_it_runs(op: str) -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    found = _outcomes(op, TorchBackend())
    assert all(o in (Outcome.PASS, Outcome.NOT_SUPPORTED) for o, _ in found.values()), found
    if op in ("CAST", "DIAGONAL_MATRIX", "DIAGONAL_MATRIX1", "FILL_VALUE_CONSTANT"):
        assert all(o is Outcome.PASS for i, (o, _) in found.items() if "unsupported" not in i)


@pytest.mark.slow
@pytest.mark.parametrize("op", OPERATORS)
def test_onnxruntime_passes_what_it_runs(op: str) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    found = _outcomes(op, OnnxRuntimeBackend())
    assert all(o in (Outcome.PASS, Outcome.NOT_SUPPORTED) for o, _ in found.values()), found
    refused = {i: msg for i, (o, msg) in found.items() if o is Outcome.NOT_SUPPORTED}
    if op in ("CAST", "FILL_VALUE_CONSTANT"):
        assert not refused
    if op == "DIAGONAL_MATRIX":
        assert refused and all(("/value=1/" not in i + "/" and "EyeLike writes ones" in msg)
                               or "Could not find an implementation for EyeLike" in msg for i, msg in refused.items())
    if op == "DIAGONAL_MATRIX1":
        assert len(refused) == len(found)


def test_torch_diagonal_span_keeps_the_input_device() -> None:
    """On CUDA, DIAGONAL_MATRIX1 with an input raised "Expected all tensors
    to be on the same device" (28 FAILs): the mask and the value were made
    on the CPU.  torch's "meta" device stands in for CUDA here."""
    torch = pytest.importorskip("torch")
    from dmlconform.backends.mapping import Attrs
    from dmlconform.backends.torch.index_map_generated import TORCH_OPS

    spec, case = next((s, c) for s, c in _pairs("DIAGONAL_MATRIX1")
                      if any(t.name == "InputTensor" for t in c.inputs) and c.expect_supported)
    sizes = case.outputs[0].sizes
    x = torch.zeros(sizes, dtype=getattr(torch, str(Attrs(spec, case).dtype)), device="meta")
    assert TORCH_OPS["DIAGONAL_MATRIX1"]["fn"](torch, [x], Attrs(spec, case)).device == x.device
