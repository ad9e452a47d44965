"""The large MVN1 case's reading counts and matches without their heavy
passes (issue #36): `judge._per_case_mask` counts a mask's elements per
case as `_per_case` counts them gathered; `judge._holds_where` uses a
trace's own mask where its elements are the marker's; `compare._matched`
tests a reading's bound before any distance, and asks a budget of 0 only
for the same value.  Each against the plain computation it replaces."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.compare import Alternative, Policy, Tier, _abs_error, _matched, ulp_distance
from dmlconform.judge import _holds_where, _per_case, _per_case_mask


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=6).map(sorted),
       st.sets(st.integers(0, 40), max_size=40).map(sorted), st.data())
def test_per_case_mask_counts_what_per_case_counts_gathered(starts: list[int], base: list[int],
                                                            data: st.DataObject) -> None:
    offsets = np.array([0, *starts], dtype=np.int64)
    b = np.array(base, dtype=np.int64)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=b.size, max_size=b.size)), dtype=bool)
    count = offsets.size - 1
    assert _per_case_mask(b, mask, offsets, count).tolist() == _per_case(b[mask], offsets, count).tolist()


@settings(max_examples=300, deadline=None)
@given(st.sets(st.integers(0, 50), max_size=30).map(sorted), st.booleans(), st.data())
def test_holds_where_is_membership_of_the_masked_elements(base: list[int], same: bool, data: st.DataObject) -> None:
    b = np.array(base, dtype=np.int64)
    index = b.copy() if same else np.array(sorted(data.draw(st.sets(st.integers(0, 50), max_size=30))), np.int64)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=index.size, max_size=index.size)), dtype=bool)
    assert _holds_where(b, index, mask).tolist() == np.isin(b, index[mask]).tolist()
    assert _holds_where(b, index, None).tolist() == np.isin(b, index).tolist()


_SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, np.nextafter(np.float32(1), np.float32(2)), 1e-45, -1e-45]


@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(0, 3), st.booleans(), st.booleans(), st.sampled_from([np.float32, np.float16]))
def test_matched_is_within_the_budget_or_the_bound(data: st.DataObject, ulp: int, signed_zero: bool,
                                                   bounded: bool, dtype: type) -> None:
    size = data.draw(st.integers(1, 30))
    number = st.one_of(st.sampled_from(_SPECIAL), st.floats(-4, 4, width=32))
    actual = np.array(data.draw(st.lists(number, min_size=size, max_size=size)), dtype=dtype)
    index = np.array(sorted(data.draw(st.sets(st.integers(0, size - 1), min_size=1))), dtype=np.int64)
    near = actual[index].astype(np.float64) + np.array(
        data.draw(st.lists(st.sampled_from([0.0, 1e-7, -1e-3, 0.5, np.nan]), min_size=index.size,
                           max_size=index.size)))
    values = np.where(np.array(data.draw(st.lists(st.booleans(), min_size=index.size, max_size=index.size))),
                      actual[index], near.astype(dtype))
    bound = np.array(data.draw(st.lists(st.sampled_from([0.0, 1e-6, 1e-2, np.inf]), min_size=index.size,
                                        max_size=index.size))) if bounded else None
    policy = Policy(ulp=ulp, signed_zero=signed_zero)
    with np.errstate(all="ignore"):
        got = actual[index]
        wanted = ulp_distance(values, got, signed_zero=signed_zero) <= ulp
        if bound is not None:
            wanted |= _abs_error(values, got) <= bound
        found = _matched(Alternative("x", index, values, Tier.STRICT, "", bound), actual, policy)
    assert found.tolist() == wanted.tolist()


def test_a_shifted_comparison_keeps_shared_elements_shared() -> None:
    """A marker and its reading offer one array of elements; moved to their block's place they still share one
    (`judge._holds_where` then knows them equal without comparing them), and each trace's elements are moved."""
    from dmlconform.compare import compare_sparse

    expected = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    actual = np.array([1.0, 2.5, 3.0, 4.0], dtype=np.float32)
    shared = np.array([1, 2], dtype=np.int64)
    alternatives = (Alternative("reading:v=p", shared, expected[shared], Tier.STRICT, ""),
                    Alternative("reading:v:s", shared, np.array([2.5, 3.0], np.float32), Tier.STRICT, ""),
                    Alternative("other", np.array([0, 3], np.int64), expected[[0, 3]], Tier.STRICT, ""))
    moved = compare_sparse(expected, actual, alternatives=alternatives).shifted(10)
    marker, reading, other = moved.traces
    assert marker.index is reading.index and marker.index.tolist() == [11, 12]
    assert other.index.tolist() == [10, 13] and other.index is not marker.index
    assert reading.gained.tolist() == [True, False] and moved.index.tolist() == [11]
