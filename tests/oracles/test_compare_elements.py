"""The judge's block of elements per oracle call (`oracles.base.compare_elements`):
`plan.COMPARE_ELEMENTS` unless the family asks for fewer (the normalization
family: `plan.CACHED_COMPARE_ELEMENTS`, its some forty float64 passes a block
held in the caches), and never more than the judge's own limit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dmlconform import judge
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import TensorData, packed_strides
from dmlconform.families.normalization.oracle import NormalizationBatch
from dmlconform.oracles.base import compare_elements
from dmlconform.plan import CACHED_COMPARE_ELEMENTS, COMPARE_ELEMENTS
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from tests.families.normalization import suites


class _Plain:
    """A bound batch that asks nothing."""


class _Asking:
    compare_elements = 1000


def test_a_family_asks_for_fewer_elements_never_more() -> None:
    assert compare_elements(_Plain(), COMPARE_ELEMENTS) == COMPARE_ELEMENTS  # type: ignore[arg-type]
    assert compare_elements(_Asking(), COMPARE_ELEMENTS) == 1000  # type: ignore[arg-type]
    assert compare_elements(_Asking(), 7) == 7  # type: ignore[arg-type]  # a test's smaller chunks still cut it
    assert NormalizationBatch.compare_elements == CACHED_COMPARE_ELEMENTS < COMPARE_ELEMENTS


def test_the_judge_asks_a_normalization_batch_a_cached_block_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A normalization over the last dimensions of 2^18 elements (two cached blocks, under one plain
    block) is asked for in ranges of `CACHED_COMPARE_ELEMENTS`, and PASSes as a whole."""
    case = next(c for c in suites.cases("MEAN_VARIANCE_NORMALIZATION1")
                if c.id.endswith("FLOAT32/4d/axes=1,2,3/none/random"))
    n = 1 << 18
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32).reshape(64, 16, 16, 16)

    def tensor(t: TensorData, buf: np.ndarray) -> TensorData:
        return replace(t, sizes=buf.shape, strides=packed_strides(buf.shape), buffer=buf.reshape(-1))

    big = replace(case, inputs=(tensor(case.inputs[0], x),), outputs=(tensor(case.outputs[0], np.zeros_like(x)),))
    asked: list[tuple[int, int]] = []
    expect = NormalizationBatch.expect

    def spy(self: NormalizationBatch, lo: int, hi: int) -> tuple:  # type: ignore[type-arg]
        asked.append((lo, hi))
        return expect(self, lo, hi)

    monkeypatch.setattr(NormalizationBatch, "expect", spy)
    (result,) = run_cases([(suites.spec("MEAN_VARIANCE_NORMALIZATION1"), big)], CpuBackend())
    assert result.outcome is Outcome.PASS, result.message
    assert result.elements == n
    assert asked == [(0, CACHED_COMPARE_ELEMENTS), (CACHED_COMPARE_ELEMENTS, n)]
    assert judge.COMPARE_ELEMENTS >= n  # one plain block would have held it
