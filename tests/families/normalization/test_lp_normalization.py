"""LP_NORMALIZATION in the normalization family (issue #36): the suite,
the reference at 0 FAIL, Epsilon's place (``lp-epsilon``: max, add,
inside the root) with each reading accepted within its own bound and
reported, P outside "either 1 or 2", and the engines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, writable_view
from dmlconform.families.normalization.cases import axes_of, epsilon_of, order_of, semantics_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.normalization import suites

OP = "LP_NORMALIZATION"


class _Reading(CpuBackend):
    """The cpu reference with ``factor`` x Epsilon elsewhere, for the orders P in ``orders``: ``add`` (norm +
    eps) or ``inside-root`` (P = 2: sqrt(sum x^2 + eps); P = 1 (``p1_root``): sqrt(L1^2 + eps), what the real
    DirectML computes, issue #37)."""

    def __init__(self, where: str, *, factor: float = 1.0, orders: tuple[int, ...] = (1, 2),
                 p1_root: bool = False) -> None:
        super().__init__()
        self.where, self.factor, self.orders, self.p1_root = where, factor, orders, p1_root

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        super().run(spec, case, buffers)
        sem = semantics_of(spec)
        x = case.input("InputTensor").view(buffers["InputTensor"]).astype(np.float32)
        axis, p = axes_of(sem, case)[0], order_of(sem, case)
        eps = np.float32(self.factor * epsilon_of(sem, case))
        if p not in self.orders:
            return
        l1 = np.abs(x).sum(axis=axis, keepdims=True)
        if self.where == "add":
            divisor = (l1 if p == 1 else np.sqrt((x * x).sum(axis=axis, keepdims=True))) + eps
        elif p == 2:
            divisor = np.sqrt((x * x).sum(axis=axis, keepdims=True) + eps)
        elif self.p1_root:
            divisor = np.sqrt(l1 * l1 + eps)
        else:
            return
        out = case.outputs[0]
        writable_view(out, buffers[out.name])[...] = (x / divisor).astype(buffers[out.name].dtype)


def test_the_suite_and_the_reference() -> None:
    cases = suites.cases(OP)
    ids = {c.id for c in cases}
    assert len(ids) == len(cases) == 36
    for want in ("FLOAT32/4d/axis=0/p=1/random", "FLOAT32/1d/axis=0/p=2/random", "FLOAT32/4d/axis=1/p=2/tiny",
                 "FLOAT16/4d/axis=1/p=1/tiny", "FLOAT32/4d/axis=3/p=3/random/out-of-range"):
        assert f"{OP}/{want}" in ids
    results = run_cases([(suites.spec(OP), c) for c in cases], CpuBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 35, Outcome.NOT_SUPPORTED: 1}


@pytest.mark.parametrize("where", ["add", "inside-root"])
def test_each_place_of_epsilon_is_a_reading(where: str) -> None:
    """Epsilon added to the norm, or inside the root, PASSes (by its own bound) and is reported; on the ``tiny``
    cases (norms of 1e-6, below Epsilon) it differs from the primary max(norm, eps) by 10% to 300x."""
    results = run_cases([(suites.spec(OP), c) for c in suites.cases(OP)], _Reading(where))
    assert not [r.case_id for r in results if r.outcome is Outcome.FAIL]
    took = {r.case_id for r in results for name, _, n in r.readings if name == f"reading:lp-epsilon:{where}" and n}
    assert f"{OP}/FLOAT32/4d/axis=1/p=2/tiny" in took


def test_a_wrong_epsilon_fails() -> None:
    """Epsilon ten times too large on the tiny cases: none of the readings, FAIL."""

    class Wrong(_Reading):
        def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
            super().run(spec, case, buffers)
            out = case.outputs[0]
            if "/tiny" in case.id:
                writable_view(out, buffers[out.name])[...] *= np.asarray(0.1, buffers[out.name].dtype)

    results = run_cases([(suites.spec(OP), c) for c in suites.cases(OP)], Wrong("add"))
    failed = {r.case_id for r in results if r.outcome is Outcome.FAIL}
    assert failed and all("/tiny" in f for f in failed)


@pytest.mark.parametrize(("engine", "counts"), [("onnxruntime", (30, 6)), ("torch", (34, 2))])
def test_engines(engine: str, counts: tuple[int, int]) -> None:
    """onnxruntime's LpNormalization has no epsilon (NOT_SUPPORTED where a norm is below it); torch's normalize
    is the max reading (NOT_SUPPORTED in FLOAT16 where a norm is below Epsilon: it rounds Epsilon to FLOAT16)."""
    pytest.importorskip(engine, reason=f"the {engine} extra is not installed")
    if engine == "onnxruntime":
        from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend as Backend
    else:
        from dmlconform.backends.torch.backend import TorchBackend as Backend  # type: ignore[assignment]
    results = run_cases([(suites.spec(OP), c) for c in suites.cases(OP)], Backend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: counts[0], Outcome.NOT_SUPPORTED: counts[1]}


def _squared_norm(factor: float) -> list[tuple[str, Outcome, bool]]:
    """LP_NORMALIZATION's ``lp-epsilon:inside-root`` reading for P = 1 (issue #37, item 4): Epsilon added to
    the squared norm, ``x / sqrt(||x||_1^2 + factor Epsilon)``, which the real DirectML's kernels compute
    (implied norms x / y = sqrt(L1^2 + 1e-5) at every element: 0.003406 for L1 = 0.001266)."""
    backend = _Reading("inside-root", factor=factor, orders=(1,), p1_root=True)
    results = run_cases([(suites.spec(OP), c) for c in suites.cases(OP)], backend)
    return [(r.case_id, r.outcome, any(name == "reading:lp-epsilon:inside-root" and n for name, _, n in r.readings))
            for r in results]


def test_epsilon_in_the_squared_l1_norm_is_a_reading() -> None:
    results = _squared_norm(1.0)
    assert not [i for i, outcome, _ in results if outcome is Outcome.FAIL]
    took = {i for i, _, took in results if took}
    assert f"{OP}/FLOAT32/4d/axis=0/p=1/random" in took and f"{OP}/FLOAT16/4d/axis=1/p=1/tiny" in took


def test_a_wrong_epsilon_in_the_squared_norm_fails() -> None:
    failed = {i for i, outcome, _ in _squared_norm(10.0) if outcome is Outcome.FAIL}
    assert f"{OP}/FLOAT32/4d/axis=0/p=1/random" in failed and all("/p=1/" in i for i in failed)
