"""CONVOLUTION's FusedActivation (issue #35): every activation the fused-activation
page lists, composed with its element-wise oracle as GEMM's is
(`families.contraction.fused`); the CPU reference and torch (the unfused
pair: the ``rounded`` reading) pass; skipping the activation or applying it
before the bias FAILs."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.families.window.activation import COMPOSED
from dmlconform.families.window.cases import case_problems
from dmlconform.families.window.oracle import WindowOracle
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from tests.conftest import REPO
from tests.families.window.suites import case as _case
from tests.families.window.suites import cases as _cases
from tests.families.window.suites import spec as _spec

PAGE = REPO.parent / "shared" / "directml-docs" / "reference" / "windows-ai-docs" / "dml-fused-activations.md"


def _fused() -> list[Case]:
    return [c for c in _cases("CONVOLUTION") if "/fused=" in c.id]


def test_the_cases_fuse_every_activation_the_page_lists() -> None:
    if not PAGE.is_file():
        pytest.skip(f"the docs are not at {PAGE}")
    text = PAGE.read_text(encoding="utf-8").split("## Activations that are supported for fusion")[1]
    listed = set(re.findall(r"\* \*\*DML_OPERATOR_([A-Z_]+)\*\*", text))
    assert listed == set(COMPOSED) and len(listed) == 18
    used = {dict(c.attributes)["FusedActivation"].split("(")[0] for c in _fused()}
    assert used == listed
    assert Counter(c.dtype.name for c in _fused()) == {"FLOAT32": 20, "FLOAT16": 20}


def test_relu_on_exact_data_is_the_exact_sum_clamped_at_zero() -> None:
    fused = _case("CONVOLUTION", "FLOAT32/4d/forward/cross/k3/exact/fused=relu")
    plain = dataclasses.replace(fused, attributes=tuple(a for a in fused.attributes if a[0] != "FusedActivation"))
    oracle = WindowOracle.of(_spec("CONVOLUTION"))
    n = int(np.prod(fused.outputs[0].sizes))
    (got,) = oracle.bind([fused], flush_subnormals=False).expect(0, n)
    (sums,) = oracle.bind([plain], flush_subnormals=False).expect(0, n)
    assert np.array_equal(got.expected, np.maximum(sums.expected, 0)) and (sums.expected < 0).any()
    # the sums are exact (0 bound): only ReLU's own element-wise bound is left, below one spacing of the value
    assert got.bound_strict is not None and np.all(got.bound_strict < np.spacing(np.abs(got.expected)))


def test_the_cpu_reference_passes_every_fused_case() -> None:
    results = run_cases([(_spec("CONVOLUTION"), c) for c in _fused()], CpuBackend())
    assert {r.outcome for r in results} == {Outcome.PASS}, [(r.case_id, r.message) for r in results
                                                           if r.outcome is not Outcome.PASS]


def test_torch_passes_every_fused_case_with_the_rounded_reading() -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec("CONVOLUTION"), c) for c in _fused()], TorchBackend())
    assert {r.outcome for r in results} == {Outcome.PASS}, [(r.case_id, r.message) for r in results
                                                           if r.outcome is not Outcome.PASS]


@pytest.mark.parametrize("fault", ["conv-activation-skipped", "conv-activation-before-bias"])
def test_the_faults_are_caught(fault: str) -> None:
    results = run_cases([(_spec("CONVOLUTION"), c) for c in _fused()], FaultyBackend(fault))
    passed = sorted(r.case_id.rsplit("=", 1)[1] for r in results if r.outcome is not Outcome.FAIL)
    assert passed == ["identity", "identity"]  # the identity commutes with the bias and is its own skipping


def test_a_case_folder_with_an_unusable_activation_is_refused() -> None:
    case = _fused()[0]
    bad = dataclasses.replace(case, attributes=tuple((n, "ACTIVATION_SOFTMAX" if n == "FusedActivation" else v)
                                                     for n, v in case.attributes))
    (problem,) = case_problems(_spec("CONVOLUTION"), bad)
    assert problem.startswith("FusedActivation=ACTIVATION_SOFTMAX is not one the window oracle composes (the "
                              "fusable ones: ACTIVATION_CELU, ")
