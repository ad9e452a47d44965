"""The ``--large`` cases of the contraction and reduction families (issue
#24, "Done means"): which cases ``large`` adds, and the slow checks that
each passes on cpu with its run's peak traced memory at most
`MEMORY_FACTOR` times its tensors' bytes (bench/bench_gemm.py measures the
same, with times)."""

from __future__ import annotations

import tracemalloc
from functools import cache

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.cases.reduction import LARGE_LENGTH
from dmlconform.oracles import cases_of
from dmlconform.oracles.reduction import _integral
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from dmlconform.spec.load import load_spec
from tests.conftest import REPO

#: The issue's target: peak memory of a large case at most this many times its tensors' bytes.
MEMORY_FACTOR = 6.0
LARGE = {"GEMM": "GEMM/FLOAT32/4d/k512/random/large",
         "REDUCE": "REDUCE/FLOAT32/2d/axes=1/sum/random/large",
         "ARGMAX": "ARGMAX/FLOAT32/2d/axes=1/increasing/random/large",
         "ARGMIN": "ARGMIN/FLOAT32/2d/axes=1/increasing/random/large"}


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _ids(op: str, *, large: bool) -> list[str]:
    """The case ids generation offers (``keep`` sees each; no value is drawn)."""
    seen: list[str] = []

    def keep(case_id: str, _: m.DataType) -> bool:
        seen.append(case_id)
        return False

    list(cases_of(_spec(op), m.FeatureLevel.FL_6_4, seed=0, large=large, keep=keep))
    return seen


def _large(op: str) -> Case:
    return next(cases_of(_spec(op), m.FeatureLevel.FL_6_4, seed=0, large=True, keep=lambda i, _: i == LARGE[op]))


@pytest.mark.parametrize("op", sorted(LARGE))
def test_large_adds_exactly_the_large_case(op: str) -> None:
    plain, large = _ids(op, large=False), _ids(op, large=True)
    assert [i for i in large if i not in plain] == [LARGE[op]]
    assert not [i for i in plain if i.endswith("/large")]


def test_the_large_reduction_sums_one_axis_of_2_to_the_22() -> None:
    case = _large("REDUCE")
    assert case.inputs[0].sizes == (1, LARGE_LENGTH) and LARGE_LENGTH == 1 << 22
    assert case.outputs[0].sizes == (1, 1)
    assert case.attribute_map()["Function"] == "DML_REDUCE_FUNCTION_SUM"


def test_integral_reads_every_finite_term_not_only_the_first() -> None:
    whole = np.arange(200.0).reshape(2, 100)
    assert _integral(whole)
    late = whole.copy()
    late[1, 99] = 0.5  # past the first 64 terms looked at first
    assert not _integral(late)
    special = whole.copy()
    special[0, :3] = (np.nan, np.inf, -np.inf)  # NaN and infinities are no terms to test
    assert _integral(special)


@pytest.mark.slow
@pytest.mark.parametrize("op", sorted(LARGE))
def test_large_case_passes_within_its_memory_bound(op: str) -> None:
    spec, case = _spec(op), _large(op)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = run_cases([(spec, case)], CpuBackend())[0]
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    tensors = sum(t.buffer.nbytes for t in (*case.inputs, *case.outputs))
    assert result.outcome is Outcome.PASS, result.message
    assert peak <= MEMORY_FACTOR * tensors, f"{peak / tensors:.2f}x"
