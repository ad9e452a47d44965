"""`families.elementwise.floatrun._sorted_union`: the sorted union of the per-kind index
arrays the literal variants look at, as np.unique of their concatenation
gives it (bench/bench_oracle.py: np.unique's hashing was half a large
swish evaluation)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.families.elementwise.floatrun import _sorted_union

sorted_indices = st.lists(st.integers(0, 200), max_size=40).map(lambda xs: np.asarray(sorted(set(xs)), dtype=np.intp))


@settings(max_examples=80, deadline=None)
@given(parts=st.lists(sorted_indices, min_size=2, max_size=5))
def test_the_union_of_sorted_parts_is_np_unique_of_them(parts: list[np.ndarray]) -> None:
    got = _sorted_union(parts)
    want = np.unique(np.concatenate(parts))
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
