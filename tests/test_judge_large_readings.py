"""judge's counting of readings over large blocks (issue #36's large MVN1
case): `_holds` by a table over a dense marker or by a search over a sparse
one, and `_per_case` by a search of each case's start in sorted elements or
by each element's case, each against numpy's set membership and counts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.judge import _holds, _per_case

_VALUES = st.one_of(st.integers(0, 60), st.integers(0, 10**9))


@settings(max_examples=300, deadline=None)
@given(st.sets(_VALUES, max_size=40).map(sorted), st.lists(_VALUES, max_size=40))
def test_holds_is_set_membership_dense_or_sparse(base: list[int], elements: list[int]) -> None:
    b, e = np.array(base, dtype=np.int64), np.array(elements, dtype=np.int64)
    assert _holds(b, e).tolist() == np.isin(b, e).tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=6).map(sorted), st.lists(st.integers(0, 40), max_size=50),
       st.booleans())
def test_per_case_counts_each_cases_elements(starts: list[int], at: list[int], ordered: bool) -> None:
    offsets = np.array([0, *starts], dtype=np.int64)
    count = offsets.size - 1
    elements = np.array(sorted(at) if ordered else at, dtype=np.int64)
    owner = np.searchsorted(offsets, elements, side="right") - 1
    wanted = np.bincount(owner, minlength=count)[:count]
    assert _per_case(elements, offsets, count).tolist() == wanted.tolist()
