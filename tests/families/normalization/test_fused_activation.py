"""The FusedActivation of MEAN_VARIANCE_NORMALIZATION, 1 and 2 (issue #36):
the element-wise oracle of the activation composed on the normalization's
expectation as GEMM's is (`families.contraction.fused.compose`), each
reading's alternative through it too; the cases, the planted fault."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.families.normalization.oracle import NormalizationOracle
from dmlconform.oracles.base import Expectation
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from tests.families.normalization import suites

OPS = ("MEAN_VARIANCE_NORMALIZATION", "MEAN_VARIANCE_NORMALIZATION1", "MEAN_VARIANCE_NORMALIZATION2")
OP = "MEAN_VARIANCE_NORMALIZATION1"


def _expect(op: str, case: Case) -> Expectation:
    n = int(np.prod(case.outputs[0].sizes))
    return NormalizationOracle.of(suites.spec(op)).bind([case], flush_subnormals=False).expect(0, n)[0]


def _unfused(case: Case) -> Case:
    return replace(case, id=case.id + "/unfused", attributes=tuple(
        (k, v) for k, v in case.attributes if k != "FusedActivation"))


@pytest.mark.parametrize("op", OPS)
def test_each_operator_has_each_activation(op: str) -> None:
    tags = {c.id.rsplit("fused=", 1)[1] for c in suites.cases(op) if "fused=" in c.id}
    assert tags == {"relu", "linear", "sigmoid", "tanh", "leaky"}
    assert sum("fused=" in c.id for c in suites.cases(op)) == 13


def test_relu_is_exact_on_the_normalized_value_and_its_bound_kept() -> None:
    case = suites.case(OP, "FLOAT32/4d/axes=2,3/channel/random/fused=relu")
    fused, plain = _expect(OP, case), _expect(OP, _unfused(case))
    assert np.array_equal(fused.expected, np.maximum(plain.expected, 0))
    assert fused.bound_strict is not None and plain.bound_strict is not None
    positive = plain.expected > plain.bound_strict
    assert np.all(fused.bound_strict[positive] >= plain.bound_strict[positive])
    assert np.all(fused.bound_strict[positive] <= 2 * plain.bound_strict[positive])
    negative = plain.expected < -plain.bound_strict
    assert negative.any() and np.all(fused.bound_strict[negative] == 0)


def test_a_reading_goes_through_the_activation() -> None:
    """The sample variance's alternative is offered after a sigmoid too: its values the sigmoid of the
    unfused alternative's, its bound that reading's own through the activation."""
    case = suites.case(OP, "FLOAT32/4d/axes=2,3/channel/random/fused=sigmoid")
    fused, plain = _expect(OP, case), _expect(OP, _unfused(case))
    (alt,) = [a for a in fused.alternatives if a.name == "reading:variance:sample"]
    (before,) = [a for a in plain.alternatives if a.name == "reading:variance:sample"]
    assert np.array_equal(alt.index, before.index)
    sigmoid = 1 / (1 + np.exp(-before.values.astype(np.float64)))
    assert np.allclose(alt.values, sigmoid, rtol=1e-6) and alt.bound is not None and np.all(alt.bound < 1e-5)


@pytest.mark.parametrize("op", OPS)
def test_an_ignored_activation_is_caught_in_the_fused_cases_only(op: str) -> None:
    results = run_cases([(suites.spec(op), c) for c in suites.cases(op)], FaultyBackend("norm-fused-activation-ignored"))
    failed = {r.case_id for r in results if r.outcome is Outcome.FAIL}
    assert failed and all("fused=" in f for f in failed)
    assert {f"{op}/FLOAT32/4d/axes=2,3/channel/random/fused={tag}" for tag in ("relu", "sigmoid", "tanh")} <= failed
