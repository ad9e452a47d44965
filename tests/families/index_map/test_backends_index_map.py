"""torch and onnxruntime on the index-map family (issue #34 item 5): every
gather, slice and tile case PASSes but GATHER's indices outside their dimension,
which both libraries refuse where the page asks for no failure (a refusal
of what the table supports: both implement a subset of the tables, so it
is NOT_SUPPORTED, counted as refused), and SLICE's stride of 0, which both
refuse cleanly (docs/index-map.md "Engines")."""

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

OPERATORS = ("GATHER", "GATHER_ELEMENTS", "GATHER_ND", "GATHER_ND1", "SLICE", "SLICE1", "TILE")


@cache
def _pairs(op: str) -> tuple[tuple[m.Spec, Case], ...]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return tuple((spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0))


def _check(op: str, backend: Any, refusal: str) -> None:
    pairs = _pairs(op)
    results = run_cases(list(pairs), backend)
    for (_, case), r in zip(pairs, results):
        if "/out-of-range" in case.id:  # refused: counted as refused where the page speaks (GATHER)
            assert refusal in r.message and r.outcome is Outcome.NOT_SUPPORTED and r.refused is (op == "GATHER")
        elif case.expect_supported:
            assert r.outcome is Outcome.PASS, f"{r.case_id}: {r.message}"
        else:
            assert r.outcome in (Outcome.PASS, Outcome.NOT_SUPPORTED), f"{r.case_id}: {r.message}"


@pytest.mark.parametrize("op", OPERATORS)
def test_torch_passes_the_gathers(op: str) -> None:
    pytest.importorskip("torch")
    from dmlconform.backends.torch.backend import TorchBackend

    _check(op, TorchBackend(), "an index outside its dimension: torch raises")


@pytest.mark.parametrize("op", OPERATORS)
def test_onnxruntime_passes_the_gathers(op: str) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    _check(op, OnnxRuntimeBackend(), "an index outside its dimension: ONNX Gather* calls it an error")
