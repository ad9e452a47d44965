"""The exact re-evaluation computes each distinct row of operands once
(`refine._distinct`): rows are told apart by their bits, as mpmath sees
them (-0 and +0 apart, a float32 and a float64 column alike)."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.formula.refine import _distinct


@pytest.mark.parametrize("seed", range(5))
def test_rows_are_grouped_by_their_bits(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pool = np.asarray([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, 2.0 ** -1074])
    picked = {"x": pool[rng.integers(0, pool.size, 60)], "y": pool[rng.integers(0, 3, 60)].astype(np.float32),
              "a": 0.5}
    first, inverse = _distinct(picked, 60)
    bits = np.stack([picked[n].astype(np.float64).view(np.uint64) for n in ("x", "y")], axis=1)
    want_rows, want_first = np.unique(bits, axis=0, return_index=True)
    assert sorted(first.tolist()) == sorted(want_first.tolist())  # the first position of each distinct row
    assert np.array_equal(bits[first][inverse], bits)  # every position gets its own row
    assert len({tuple(r) for r in bits[first].tolist()}) == len(first) == len(want_rows)


def test_one_column_or_one_row() -> None:
    first, inverse = _distinct({"x": np.asarray([3.0, 3.0, -0.0, 0.0, 3.0])}, 5)
    assert sorted(first.tolist()) == [0, 2, 3]  # -0 and +0 apart
    assert [first[i] for i in inverse] == [0, 0, 2, 3, 0]
    assert [a.tolist() for a in _distinct({"x": np.asarray([7.0])}, 1)] == [[0], [0]]
