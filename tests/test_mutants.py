"""The mutant check (issue 5, part 7): deliberately wrong backends must be
caught by the default suite, each by name, while the correct `cpu` backend
passes the same cases with zero FAIL.

Each mutant wraps the CPU reference and breaks one thing after it computes.
The suite is the generated default suite (seed 0, level 6_4) of the
operators each mutant touches, so the test stays fast.
"""

from __future__ import annotations

from functools import lru_cache

from typing import Callable, Mapping

import numpy as np
import pytest

from dmlconform.backends.base import NotSupportedError, Support
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.generate import generate
from dmlconform.cases.model import Case
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from dmlconform.spec.load import load_spec
from tests.conftest import REPO

Buffers = Mapping[str, np.ndarray]


@lru_cache(maxsize=None)
def _suite(op: str) -> tuple[tuple[m.Spec, Case], ...]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return tuple((spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0))


class Mutant(CpuBackend):
    """The reference, with ``breaks(spec, case, buffers)`` applied after it."""

    def __init__(self, breaks: Callable[[m.Spec, Case, Buffers], None]) -> None:
        super().__init__()
        self.breaks = breaks

    def run(self, spec: m.Spec, case: Case, buffers: Buffers) -> None:
        super().run(spec, case, buffers)
        with np.errstate(all="ignore"):
            self.breaks(spec, case, buffers)


def _writable_output(case: Case, buffers: Buffers) -> np.ndarray:
    out = case.outputs[0]
    buf = buffers[out.name]
    item = buf.dtype.itemsize
    return np.lib.stride_tricks.as_strided(buf, out.sizes, tuple(s * item for s in out.strides))


def _input(case: Case, buffers: Buffers) -> np.ndarray:
    return np.ascontiguousarray(case.inputs[0].view())


def one_ulp(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Every finite float result one ULP up (identity and relu are exact ops)."""
    if case.dtype.is_float:
        y = _writable_output(case, buffers)
        finite = np.isfinite(y)
        y[finite] = np.nextafter(y[finite], np.array(np.inf, y.dtype))


def wrong_branch_at_threshold(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """shrink with ``x >= Threshold`` instead of ``x > Threshold``."""
    attrs = case.attribute_map()
    threshold, bias = np.float32(attrs["Threshold"]), np.float32(attrs["Bias"])
    x, y = _input(case, buffers), _writable_output(case, buffers)
    at = x == x.dtype.type(threshold)
    y[at] = (x[at].astype(np.float32) - bias).astype(y.dtype)


def sign_of_negative_zero(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """sign(-0) = -1."""
    if case.dtype.is_float:
        x, y = _input(case, buffers), _writable_output(case, buffers)
        y[(x == 0) & np.signbit(x)] = -1


def nan_to_zero(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """NaN in, 0 out (where the spec propagates NaN)."""
    if case.dtype.is_float:
        y = _writable_output(case, buffers)
        y[np.isnan(y)] = 0


def wrong_in_8d(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Right everywhere except in 8-D tensors, where the first element is off."""
    if case.dimension_count == 8:
        y = _writable_output(case, buffers)
        y.flat[0] = y.flat[0] + y.dtype.type(1) if not np.isnan(y.flat[0]) else y.dtype.type(1)


def in_place_corrupting(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """In-place cases computed element by element in the wrong direction: the
    output overwrites inputs that later elements still read."""
    if case.aliases:
        y = _writable_output(case, buffers)
        if y.size > 1:
            y.flat[1:] = y.flat[:-1].copy()


class RejectsFloat16(CpuBackend):
    """Refuses FLOAT16, which the tables support."""

    def supports(self, spec: m.Spec, case: Case) -> Support:
        if case.dtype is m.DataType.FLOAT16:
            return Support(False, "FLOAT16 is not implemented")
        return super().supports(spec, case)

    def run(self, spec: m.Spec, case: Case, buffers: Buffers) -> None:
        if case.dtype is m.DataType.FLOAT16:
            raise NotSupportedError("FLOAT16 is not implemented")
        super().run(spec, case, buffers)


MUTANTS = {
    "one-ulp": (lambda: Mutant(one_ulp), ("ELEMENT_WISE_IDENTITY", "ACTIVATION_RELU")),
    "wrong-branch-at-threshold": (lambda: Mutant(wrong_branch_at_threshold), ("ACTIVATION_SHRINK",)),
    "sign-of-negative-zero": (lambda: Mutant(sign_of_negative_zero), ("ELEMENT_WISE_SIGN",)),
    "nan-to-zero": (lambda: Mutant(nan_to_zero), ("ACTIVATION_SOFTSIGN", "ACTIVATION_SHRINK")),
    "wrong-in-8d": (lambda: Mutant(wrong_in_8d), ("ACTIVATION_SOFTSIGN",)),
    "in-place-corrupting": (lambda: Mutant(in_place_corrupting), ("ACTIVATION_SOFTSIGN", "ELEMENT_WISE_ADD")),
    "rejects-float16": (RejectsFloat16, ("ACTIVATION_HARD_SIGMOID",)),
}


def _run(backend: CpuBackend, ops: tuple[str, ...]) -> tuple[CaseResult, ...]:
    return run_cases([pair for op in ops for pair in _suite(op)], backend)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name: str) -> None:
    make, ops = MUTANTS[name]
    failed = [r for r in _run(make(), ops) if r.outcome is Outcome.FAIL]
    assert failed, f"mutant {name} survived the default suite of {', '.join(ops)}"
    assert all(r.repro.startswith("dmlconform run --backend cpu ") for r in failed)


def test_reference_passes_the_mutants_suites() -> None:
    ops = sorted({op for _, ops in MUTANTS.values() for op in ops})
    results = _run(CpuBackend(), tuple(ops))
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert not bad, "\n".join(bad[:10])
    assert any(r.outcome is Outcome.NOT_SUPPORTED and not r.expect_supported for r in results)


def test_where_each_mutant_is_caught() -> None:
    """The failures point at what the mutant broke."""
    by_name = {name: [r for r in _run(make(), ops) if r.outcome is Outcome.FAIL]
               for name, (make, ops) in MUTANTS.items()}
    assert all(r.dims == 8 for r in by_name["wrong-in-8d"])
    assert all(r.layout == "in_place" for r in by_name["in-place-corrupting"])
    assert all(r.dtype == "FLOAT16" and "rejected a configuration" in r.message for r in by_name["rejects-float16"])
    assert all("Threshold" in r.case_id or "boundary" in r.case_id for r in by_name["wrong-branch-at-threshold"])
    assert any(d.expected != d.expected for r in by_name["nan-to-zero"] for d in r.worst)  # NaN expected


