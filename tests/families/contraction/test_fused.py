"""GEMM's FusedActivation (issue #24 item 2): the activation's element-wise
oracle composed on the contraction's result, either reading of where it
rounds accepted, a misplaced activation caught."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.contraction.cases import Activation, activation, operands, scales
from dmlconform.families.contraction.oracle import ContractionOracle
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.families.contraction.suite import case_problems
from dmlconform.families.elementwise.reference import OPS, Call
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _spec() -> m.Spec:
    return load_spec(REPO / "specs" / "GEMM.yaml")


def _sem() -> Contraction:
    sem = _spec().semantics
    assert isinstance(sem, Contraction)
    return sem


@cache
def _fused() -> tuple[Case, ...]:
    return tuple(c for c in cases_of(_spec(), m.FeatureLevel.FL_6_4, seed=0) if "fused=" in c.id)


def test_the_cases_name_their_activation_as_text() -> None:
    assert len(_fused()) == 12
    linear = next(c for c in _fused() if c.id == "GEMM/FLOAT16/4d/k33/random/fused=linear")
    assert linear.attribute_map()["FusedActivation"] == "ACTIVATION_LINEAR(Alpha=-0.5,Beta=0.25)"
    assert activation(_sem(), linear) == Activation("ACTIVATION_LINEAR", (("Alpha", -0.5), ("Beta", 0.25)))


def test_the_cpu_reference_passes_and_the_exact_case_allows_no_error() -> None:
    results = run_cases([(_spec(), c) for c in _fused()], CpuBackend())
    assert {r.outcome for r in results} == {Outcome.PASS}, [(r.case_id, r.message) for r in results]
    exact = next(c for c in _fused() if c.id == "GEMM/FLOAT32/4d/k33/exact/fused=relu")
    exp = ContractionOracle.of(_spec()).bind([exact], flush_subnormals=False).expect(0, 90)[0]
    assert exp.bound_strict is not None and exp.ulp == 0  # the GEMM adds nothing to ReLU's own bound (< 1 ULP)
    assert np.all(exp.bound_strict < np.spacing(np.maximum(exp.expected, np.float32(1))))
    assert exp.expected.min() == 0 and (exp.expected > 0).any()


class _RoundedFirst(CpuBackend):
    """The ``rounded`` reading of fused-activation-rounding: the GEMM result
    rounded to the output type, then the activation (what the unfused pair computes)."""

    def run(self, spec: m.Spec, case: Case, buffers: dict[str, np.ndarray]) -> None:  # type: ignore[override]
        sem = _sem()
        act = activation(sem, case)
        assert act is not None
        plain = dataclasses.replace(case, attributes=tuple(a for a in case.attributes if a[0] != "FusedActivation"))
        super().run(spec, plain, buffers)
        out = buffers["OutputTensor"]
        y = np.asarray(OPS[act.operator](Call({"InputTensor": out.astype(np.float32)}, dict(act.attributes),
                                              m.DataType.FLOAT32, {"OutputTensor": np.dtype(np.float32)})))
        out[...] = y.astype(out.dtype)


def test_the_rounded_reading_passes_too() -> None:
    results = run_cases([(_spec(), c) for c in _fused()], _RoundedFirst())
    assert {r.outcome for r in results} == {Outcome.PASS}, [(r.case_id, r.message) for r in results]


def test_an_activation_before_the_addend_fails() -> None:
    results = run_cases([(_spec(), c) for c in _fused()], FaultyBackend("gemm-activation-before-addend"))
    assert sum(r.outcome is Outcome.FAIL for r in results) >= 10


@pytest.mark.parametrize(("text", "expected"), [
    ("ACTIVATION_GELU", "FusedActivation=ACTIVATION_GELU is not one the contraction oracle composes (monotone "
                        "ones: ACTIVATION_IDENTITY, ACTIVATION_LEAKY_RELU, ACTIVATION_LINEAR, ACTIVATION_RELU, "
                        "ACTIVATION_SIGMOID, ACTIVATION_TANH); use one of those"),
    ("ACTIVATION_LINEAR(Alpha=one)", "FusedActivation='ACTIVATION_LINEAR(Alpha=one)' is no activation: write "
                                     "ACTIVATION_NAME or ACTIVATION_NAME(Attr=value,...), e.g. "
                                     "ACTIVATION_LINEAR(Alpha=0.5,Beta=1)"),
])
def test_a_case_folder_with_an_unusable_activation_is_refused(text: str, expected: str) -> None:
    case = _fused()[0]
    bad = dataclasses.replace(case, attributes=tuple((n, text if n == "FusedActivation" else v)
                                                     for n, v in case.attributes))
    assert list(case_problems(_spec(), bad)) == [expected]


def test_operands_and_scales_ignore_the_activation() -> None:
    case = _fused()[0]
    ops = operands(_sem(), case)
    assert ops.a.shape[-1] == 33 and scales(_sem(), case) == (1.0, 1.0)
