"""LP_NORMALIZATION's ``lp-epsilon:inside-root`` reading for P = 1 (issue
#37, item 4): Epsilon added to the squared norm, ``x / sqrt(||x||_1^2 +
Epsilon)``, which the real DirectML's kernels compute (implied norms
x / y = sqrt(L1^2 + 1e-5) at every element: 0.003406 for L1 = 0.001266)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, writable_view
from dmlconform.families.normalization.cases import axes_of, epsilon_of, order_of, semantics_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.normalization import suites

OP = "LP_NORMALIZATION"


class _SquaredNorm(CpuBackend):
    """The cpu reference with P = 1 as x / sqrt(L1^2 + ``factor`` Epsilon) in float32."""

    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        super().run(spec, case, buffers)
        sem = semantics_of(spec)
        if order_of(sem, case) != 1:
            return
        x = case.input("InputTensor").view(buffers["InputTensor"]).astype(np.float32)
        l1 = np.abs(x).sum(axis=axes_of(sem, case)[0], keepdims=True)
        divisor = np.sqrt(l1 * l1 + np.float32(self.factor * epsilon_of(sem, case)))
        out = case.outputs[0]
        writable_view(out, buffers[out.name])[...] = (x / divisor).astype(buffers[out.name].dtype)


def _run(factor: float) -> list[tuple[str, Outcome, bool]]:
    results = run_cases([(suites.spec(OP), c) for c in suites.cases(OP)], _SquaredNorm(factor))
    return [(r.case_id, r.outcome, any(name == "reading:lp-epsilon:inside-root" and n for name, _, n in r.readings))
            for r in results]


def test_epsilon_in_the_squared_l1_norm_is_a_reading() -> None:
    results = _run(1.0)
    assert not [i for i, outcome, _ in results if outcome is Outcome.FAIL]
    took = {i for i, _, took in results if took}
    assert f"{OP}/FLOAT32/4d/axis=0/p=1/random" in took and f"{OP}/FLOAT16/4d/axis=1/p=1/tiny" in took


def test_a_wrong_epsilon_in_the_squared_norm_fails() -> None:
    failed = {i for i, outcome, _ in _run(10.0) if outcome is Outcome.FAIL}
    assert f"{OP}/FLOAT32/4d/axis=0/p=1/random" in failed and all("/p=1/" in i for i in failed)
