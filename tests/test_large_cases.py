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
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.reduction.cases import LARGE_LENGTH
from dmlconform.families.reduction.oracle import ReductionOracle, _integral
from dmlconform.limits import MAX_EXACT_ROWS
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

#: The issue's target: peak memory of a large case at most this many times its tensors' bytes.
MEMORY_FACTOR = 6.0
LARGE = {"GEMM": ("GEMM/FLOAT32/4d/k512/random/large",),
         "REDUCE": ("REDUCE/FLOAT32/2d/axes=1/sum/random/large", "REDUCE/FLOAT32/2d/axes=1/sum/exact-nonzero/large"),
         "ARGMAX": ("ARGMAX/FLOAT32/2d/axes=1/increasing/random/large",),
         "ARGMIN": ("ARGMIN/FLOAT32/2d/axes=1/increasing/random/large",)}
EXACT = "REDUCE/FLOAT32/2d/axes=1/sum/exact-nonzero/large"


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


def _large(op: str, case_id: str | None = None) -> Case:
    """The large case ``case_id`` of ``op`` (its first where not given)."""
    wanted = case_id or LARGE[op][0]
    return next(cases_of(_spec(op), m.FeatureLevel.FL_6_4, seed=0, large=True, keep=lambda i, _: i == wanted))


@pytest.mark.parametrize("op", sorted(LARGE))
def test_large_adds_exactly_the_large_cases(op: str) -> None:
    plain, large = _ids(op, large=False), _ids(op, large=True)
    assert tuple(i for i in large if i not in plain) == LARGE[op]
    assert not [i for i in plain if i.endswith("/large")]


@pytest.mark.parametrize("case_id", LARGE["REDUCE"])
def test_the_large_reductions_sum_one_axis_of_2_to_the_22(case_id: str) -> None:
    case = _large("REDUCE", case_id)
    assert case.inputs[0].sizes == (1, LARGE_LENGTH) and LARGE_LENGTH == 1 << 22
    assert case.outputs[0].sizes == (1, 1)
    assert case.attribute_map()["Function"] == "DML_REDUCE_FUNCTION_SUM"


def test_the_exact_large_reduction_needs_0_ulp_and_every_term_counts() -> None:
    case = _large("REDUCE", EXACT)
    x = case.inputs[0].view(case.inputs[0].buffer).astype(np.float64)
    assert np.all(x == np.round(x)) and np.all(x != 0)  # whole numbers, none 0: every term changes the sum
    assert np.abs(x).sum() <= 2.0 ** 24  # every partial sum exact in float32, in any order
    batch = ReductionOracle.of(_spec("REDUCE")).bind([case], flush_subnormals=False)
    assert batch.strict.tolist() == [0.0] and batch.expected.tolist() == [x.sum()]


def test_a_dropped_term_fails_the_exact_large_reduction() -> None:
    # The random large case's bound (about 7e5 ULP) hides one dropped term; the exact one cannot.
    spec = _spec("REDUCE")
    exact, noisy = _large("REDUCE", EXACT), _large("REDUCE")
    assert [r.outcome for r in run_cases([(spec, exact), (spec, noisy)], FaultyBackend("reduce-dropped-term"))] == [
        Outcome.FAIL, Outcome.PASS]


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
@pytest.mark.parametrize(("op", "case_id"), [(op, i) for op in sorted(LARGE) for i in LARGE[op]])
def test_large_case_passes_within_its_memory_bound(op: str, case_id: str) -> None:
    spec, case = _spec(op), _large(op, case_id)
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


#: The element-wise large cases that FAILed on cpu (or ran past the timeout) while their values were drawn
#: freely: the exact evaluation gave up past 4,096 elements and left float64's NaN expected.
FORMULA_LARGE = ("ACTIVATION_TANH/FLOAT32/4d/edges/large", "ACTIVATION_SOFTPLUS/FLOAT32/4d/edges/Steepness=1/large",
                 "ACTIVATION_PARAMETRIC_SOFTPLUS/FLOAT32/4d/edges/Alpha=0.5,Beta=2/large")


@pytest.mark.parametrize("case_id", FORMULA_LARGE[:1])
def test_a_formula_large_case_has_at_most_the_exact_budget_of_distinct_rows(case_id: str) -> None:
    case = _large(case_id.split("/")[0], case_id)
    x = case.inputs[0].view(case.inputs[0].buffer)
    assert x.size >= 1 << 22
    assert 1000 < np.unique(x.view(np.uint32)).size <= MAX_EXACT_ROWS


@pytest.mark.slow
@pytest.mark.parametrize("case_id", FORMULA_LARGE)
def test_a_formula_large_case_does_not_fail_on_cpu(case_id: str) -> None:
    op = case_id.split("/")[0]
    result = run_cases([(_spec(op), _large(op, case_id))], CpuBackend())[0]
    assert result.outcome in (Outcome.PASS, Outcome.QUALITY_WARNING), result.message
    assert "past the exact evaluation's budget" not in result.message
