"""Issue #22 "Done means": a backend written literally from each doc formula,
and the same with the other reading of each ambiguity, both get 0 FAIL on
the operator's default cases and the report names the reading it took; a
backend that takes neither reading FAILs, naming the case."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.report.readings import summarize
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.ambiguity.literal import LITERAL, NEITHER, NUMPY, OTHER, ZERO, LiteralBackend, Op
from tests.conftest import REPO

LEVEL = m.FeatureLevel.FL_6_4


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _run(op: str, ops: Mapping[str, Op] | None) -> tuple[CaseResult, ...]:
    spec = _spec(op)
    backend = CpuBackend() if ops is None else LiteralBackend(ops)
    return run_cases([(spec, c) for c in cases_of(spec, LEVEL, seed=0)], backend)


def _statuses(results: tuple[CaseResult, ...]) -> dict[str, str]:
    return {t.ambiguity: t.status for t in summarize(results)}


def _failed(results: tuple[CaseResult, ...]) -> list[str]:
    return [r.case_id for r in results if r.outcome is Outcome.FAIL]


#: Per operator: the status of each ambiguity for the literal backend and for the other one.
EXPECTED = {
    "ACTIVATION_SHRINK": (
        {"nan": "took formula", "branch-overlap": "took primary", "integer-float-attribute": "took float32",
         "integer-overflow": "took primary", "float-to-integer-conversion": "took indefinite"},
        {"nan": "took primary", "branch-overlap": "took last-match",
         "integer-float-attribute": "took attribute-to-integer", "integer-overflow": "took saturate",
         "float-to-integer-conversion": "took primary"},
    ),
    "ACTIVATION_THRESHOLDED_RELU": ({"nan": "took formula"}, {"nan": "took primary"}),
    "ELEMENT_WISE_SIGN": ({"nan": "took primary"}, {"nan": "took propagate"}),
    "ELEMENT_WISE_ADD": ({"integer-overflow": "took primary"}, {"integer-overflow": "took saturate"}),
    "ELEMENT_WISE_MODULUS_FLOOR": (
        {"integer-division-by-zero": "took primary", "infinite-divisor": "took fmod"},
        {"integer-division-by-zero": "took all-ones", "infinite-divisor": "took primary"},
    ),
    "ELEMENT_WISE_DIVIDE": (
        {"integer-division-by-zero": "took primary", "integer-overflow": "took primary"},
        {"integer-division-by-zero": "took all-ones", "integer-overflow": "took primary"},
    ),
    "ELEMENT_WISE_POW": (
        {"integer-pow": "took float64", "integer-overflow": "took primary", "ieee-pow": "took ieee-754",
         "float-to-integer-conversion": "took indefinite"},
        {"integer-pow": "took primary", "integer-overflow": "took saturate", "ieee-pow": "took primary",
         "float-to-integer-conversion": "took primary"},
    ),
}


@pytest.mark.parametrize("op", sorted(EXPECTED))
@pytest.mark.parametrize("which", ["literal", "other"])
def test_every_reading_passes_and_is_named(op: str, which: str) -> None:
    results = _run(op, LITERAL if which == "literal" else OTHER)
    assert _failed(results) == []
    assert _statuses(results) == EXPECTED[op][which == "other"]


def test_numpys_zero_for_an_integer_modulus_by_zero_passes_and_is_named() -> None:
    """numpy's ``%`` gives 0 for b = 0; torch on CUDA -1 (OTHER); AArch64 a (LITERAL)."""
    results = _run("ELEMENT_WISE_MODULUS_FLOOR", ZERO)
    assert _failed(results) == []
    assert _statuses(results)["integer-division-by-zero"] == "took zero"


def test_numpys_own_shrink_passes_every_integer_case_naming_its_vectorised_cast() -> None:
    """Issue #32 item 5: Shrink in float64 then ``astype`` FAILed 4 UINT32
    cases (``edges/Bias=3.4028235e+38,Threshold=0.5``: x = 1 gave 2^31, its
    vectorised loop's value).  Its elements take x86's vectorised reading in
    the loop's body and the scalar one in its tail, element by element."""
    results = _run("ACTIVATION_SHRINK", NUMPY)
    integer = [r for r in results if not m.DataType[r.dtype].is_float]
    assert {r.dtype for r in integer} == {"INT8", "INT16", "INT32", "UINT8", "UINT16", "UINT32"}  # its tables
    assert _failed(results) == []
    uint32 = {t.ambiguity: t for t in summarize([r for r in integer if r.dtype == "UINT32"])}
    took = dict(uint32["float-to-integer-conversion"].took)
    assert took.get("x86-vector", 0) > took.get("indefinite", 0) > 0


@pytest.mark.parametrize("op", sorted(EXPECTED))
def test_the_cpu_reference_takes_every_primary_reading(op: str) -> None:
    results = _run(op, None)
    assert _failed(results) == []
    assert set(_statuses(results).values()) == {"took primary"}


@pytest.mark.parametrize("op", sorted(EXPECTED))
def test_a_backend_taking_neither_reading_fails_by_name(op: str) -> None:
    failed = _failed(_run(op, NEITHER))
    assert failed
    assert all(case_id.startswith(op + "/") for case_id in failed)
    assert any("/ambiguity(" in case_id for case_id in failed)
