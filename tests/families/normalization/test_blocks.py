"""The normalization oracle asked a range at a time (the judge asks a large
case's output block by block, issue #36) gives what it gives asked whole:
values, both bounds and every reading's alternative, across the groups'
edges and the cases' of a batch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.compare import Alternative
from dmlconform.families.normalization.oracle import NormalizationOracle
from dmlconform.oracles.base import Expectation, within
from tests.families.normalization import suites

#: Groups over the last dimensions (computed a range at a time), with the sample variance's or the variance about
#: the mean's reading offered, a fused activation, and one over other dimensions (computed whole).
#: Each with its group size N (2x3x4x5 inputs).
CASES = [("MEAN_VARIANCE_NORMALIZATION1", "FLOAT32/4d/axes=2,3/channel/random", 20),
         ("MEAN_VARIANCE_NORMALIZATION1", "FLOAT32/4d/axes=1,2,3/channel/large-mean", 60),
         ("MEAN_VARIANCE_NORMALIZATION1", "FLOAT32/4d/axes=2,3/channel/random/fused=tanh", 20),
         ("MEAN_VARIANCE_NORMALIZATION1", "FLOAT32/4d/axes=2,3/channel/random/padded", 20),
         ("MEAN_VARIANCE_NORMALIZATION1", "FLOAT32/4d/axes=0,2/channel/random", 8),
         ("MEAN_VARIANCE_NORMALIZATION2", "FLOAT32/4d/axes=1,2,3/channel/random/no-mean", 60)]


def _alternatives(found: tuple[Alternative, ...]) -> list[tuple[str, list[int], list[float], list[float] | None]]:
    return [(a.name, a.index.tolist(), a.values.astype(np.float64).tolist(),
             None if a.bound is None else a.bound.tolist()) for a in found]


def _same(piece: Expectation, whole: Expectation, lo: int, hi: int) -> None:
    assert piece.expected.tobytes() == whole.expected[lo:hi].tobytes()
    for got, wanted in ((piece.bound_strict, whole.bound_strict), (piece.bound_relaxed, whole.bound_relaxed)):
        assert got is not None and wanted is not None
        assert got.tobytes() == wanted[lo:hi].tobytes()
    assert _alternatives(piece.alternatives) == _alternatives(within(whole.alternatives, lo, hi))


@pytest.mark.parametrize(("op", "suffix", "n"), CASES)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_range_at_a_time_is_the_whole(op: str, suffix: str, n: int, data: st.DataObject) -> None:
    case = suites.case(op, suffix)
    batch = NormalizationOracle.of(suites.spec(op)).bind([case, case], flush_subnormals=False)  # two cases end to end
    total = 2 * int(np.prod(case.outputs[0].sizes))
    cuts = data.draw(st.lists(st.integers(1, total - 1), max_size=6, unique=True), label="cuts")
    (whole,) = batch.expect(0, total)
    assert whole.alternatives  # a reading offered: the test can see their indices moved
    edges = [0, *sorted(cuts), total]
    for lo, hi in zip(edges, edges[1:]):
        (piece,) = batch.expect(lo, hi)
        _same(piece, whole, lo, hi)
    assert batch.inputs_at(0, np.array([0, total - 1])) == (("N", [float(n), float(n)]),)
