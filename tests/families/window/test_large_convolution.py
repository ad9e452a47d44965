"""The ``--large`` convolution (issue #35, "Done means"): the oracle works it
a block of output rows at a time (`plan.WINDOW_PATCHES`), and the blocks
change nothing; a planted fault is still caught on it (FAIL, not hidden by
the blocking or by the bounds of its 577-term sums)."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.window import oracle
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

LARGE = "CONVOLUTION/FLOAT32/4d/forward/cross/k3/random/large"


def _large() -> tuple[m.Spec, Case]:
    spec = load_spec(REPO / "specs" / "CONVOLUTION.yaml")
    return spec, next(cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, large=True, keep=lambda i, _: i == LARGE))


@pytest.mark.slow
def test_the_large_case_is_worked_in_several_blocks_that_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """T and n are the same in blocks as whole; S, summed in float32 (`oracle._above32`), may differ in
    its last bits with the BLAS's blocking of each shape, and is in both an upper bound of the float64 S
    within the inflation's factor (so are the bounds made from it)."""
    spec, case = _large()
    blocks = oracle.WindowOracle.of(spec).bind([case], flush_subnormals=False)
    (n, c, _, _), (_, _, *kernel), (_, _, rows, width) = (t.sizes for t in (*case.inputs[:2], case.outputs[0]))
    per_row = n * c * width * int(np.prod(kernel))
    assert rows * per_row > oracle.WINDOW_PATCHES  # more than one block, or the test shows nothing
    monkeypatch.setattr(oracle, "WINDOW_PATCHES", rows * per_row)
    whole = oracle.WindowOracle.of(spec).bind([case], flush_subnormals=False)
    assert isinstance(blocks, oracle.WindowBatch) and isinstance(whole, oracle.WindowBatch)
    assert whole.strict.any()
    for got, wanted in ((blocks.expected, whole.expected), (blocks.n, whole.n)):
        np.testing.assert_array_equal(got, wanted)
    sem = oracle.semantics_of(spec)
    ops, geo = oracle.operands(sem, case), oracle.geometry(sem, case)
    exact = oracle.convolve(ops.x, ops.w, ops.bias, geo, case.outputs[0].sizes[2:], flip=(False, False))
    s = exact.magnitude.reshape(-1)
    for batch in (blocks, whole):
        assert np.all(batch.magnitude >= s) and np.all(batch.magnitude <= s * (1 + 2 * 577 * 2.0 ** -24))
    np.testing.assert_allclose(blocks.strict, whole.strict, rtol=2 * 577 * 2.0 ** -24)
    np.testing.assert_allclose(blocks.relaxed, whole.relaxed, rtol=2 * 577 * 2.0 ** -24)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["conv-dropped-border-tap", "conv-flip-in-cross-correlation"])
def test_a_planted_fault_fails_the_large_case(fault: str) -> None:
    spec, case = _large()
    result = run_cases([(spec, case)], FaultyBackend(fault))[0]
    assert result.outcome is Outcome.FAIL, result.message
