"""The passes the large MVN1 case's sample reading was cut to (issue #36),
each against the plain computation it replaces: `oracles.base.kept`
against ``np.flatnonzero`` and gathers; `oracles.base.spacing_above` with and
without a largest value, infinity or NaN among the steps; the comparison's
shared gathers (`compare._Taken`) against gathering per alternative; the
statistics' row sums handed to `reduced_each` and the reading's scratch
arrays (`_offered`) against taking them afresh."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.compare import Alternative, Policy, Tier, _matched, compare_sparse
from dmlconform.families.normalization.oracle import _offered
from dmlconform.families.reduction.oracle import reduced_each
from dmlconform.oracles.base import gamma, gamma_probable, kept, spacing_above
from tests.families.normalization import suites


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 300), st.data())
def test_kept_is_flatnonzero_and_gathers(size: int, data: st.DataObject) -> None:
    """Few elements left out, none, all, and many, at the ends and side by side."""
    out = data.draw(st.one_of(st.sets(st.integers(0, max(size - 1, 0)), max_size=8),
                              st.sets(st.integers(0, max(size - 1, 0)), max_size=size)), label="left out")
    mask = np.ones(size, bool)
    mask[sorted(i for i in out if i < size)] = False
    rng = np.random.default_rng(size)
    arrays = (rng.standard_normal(size).astype(np.float32), rng.standard_normal(size))
    where, found = kept(mask, *arrays)
    assert where.tolist() == np.flatnonzero(mask).tolist()
    for got, z in zip(found, arrays):
        assert got.dtype == z.dtype and got.tobytes() == z[mask].tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 1e40), st.sampled_from([np.inf, np.nan, 3.4028234663852886e38, 65504.0])),
                min_size=1, max_size=20), st.sampled_from([np.float16, np.float32, np.float64]))
def test_spacing_above_is_numpys_spacing_made_infinite_past_the_range(x: list[float], dtype: type) -> None:
    z = np.array(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        step = z.astype(dtype)
        wanted = np.spacing(step).astype(np.float64)
    wanted[~(step < np.finfo(dtype).max)] = np.inf
    assert spacing_above(z, np.dtype(dtype)).astype(np.float64).tolist() == wanted.tolist()


def test_a_marker_and_its_reading_share_one_gather_and_match_as_each_alone() -> None:
    """The marker and the reading offer one index array: compared together, each trace matches what
    `_matched` finds for it alone (a fresh gather each) and the plain test, over both of `_matched`'s
    ways (the bound failing at a few elements, at many)."""
    rng = np.random.default_rng(0)
    expected = rng.standard_normal(64).astype(np.float32)
    actual = expected.copy()
    actual[::7] = np.nextafter(actual[::7], np.float32(np.inf))
    index = np.flatnonzero(rng.random(64) < 0.9)
    reading_values = (expected[index] * np.float32(1.0001)).astype(np.float32)
    reading_values[::3] = actual[index][::3]  # the backend's own value: matched by the budget, not the bound
    for bound in (np.full(index.size, 1e-3), np.full(index.size, 1e-9),
                  rng.uniform(0, 2e-4, index.size) * np.abs(expected[index])):  # the bound holding at about half
        reading = Alternative("reading:variance:sample", index, reading_values, Tier.STRICT, "", bound)
        marker = Alternative("reading:variance=population", index, expected[index], Tier.STRICT, "")
        found = compare_sparse(expected, actual, policy=Policy(), alternatives=(marker, reading))
        got = actual[index]
        plain = {"marker": got == expected[index],  # a budget of 0: the same value, or within the bound
                 "reading": (got == reading_values) | (np.abs(got.astype(np.float64) - reading_values) <= bound)}
        for trace, alt, which in zip(found.traces, (marker, reading), plain):
            assert trace.matched is not None and trace.index is index
            assert trace.matched.tolist() == _matched(alt, actual, Policy()).tolist() == plain[which].tolist()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(1, 40), st.floats(-1e3, 1e3), st.floats(1e-3, 1e3), st.integers(0, 2**32 - 1),
       st.booleans())
def test_row_sums_given_are_the_reduction_bit_for_bit(rows: int, n: int, mean: float, spread: float, seed: int,
                                                      odd: bool) -> None:
    """`reduced_each`'s AVERAGE with ``sums`` (the terms' and their magnitudes', as the statistics hand
    them over: the squares' twice) gives the same value and bounds bit for bit as taking them itself, a
    NaN or an infinity among the terms included."""
    terms = np.random.default_rng(seed).normal(mean, spread, (rows, n))
    if odd:
        terms[0, 0], terms[-1, -1] = np.nan, np.inf
    with np.errstate(all="ignore"):
        for x, sums in ((terms, (terms.sum(axis=1), np.abs(terms).sum(axis=1))),
                        (terms * terms, ((terms * terms).sum(axis=1),) * 2)):
            plain, plain_bounds = reduced_each(x, "AVERAGE", 2.0 ** -24, (gamma_probable, gamma))
            given_, given_bounds = reduced_each(x, "AVERAGE", 2.0 ** -24, (gamma_probable, gamma), sums=sums)
            for a, b in zip((plain, *plain_bounds), (given_, *given_bounds)):
                assert a.tobytes() == b.tobytes()


def test_a_reading_offered_over_its_scratch_arrays_is_the_same() -> None:
    """`_offered` writing its magnitude and bound over the arrays it is given (``scratch``) offers the
    same alternative and marker as with fresh arrays, a NaN and an infinity among the values included."""
    spec = suites.spec("MEAN_VARIANCE_NORMALIZATION1")
    rng = np.random.default_rng(7)
    expected = rng.standard_normal(4096)
    value = expected * 1.0001
    value[::97] = expected[::97]  # where the readings agree
    value[5], value[9] = np.nan, np.inf
    bound = np.abs(value) * 1e-6
    for nt in (np.dtype(np.float32), np.dtype(np.float16)):
        fresh = _offered(spec, "variance:sample", value, bound, nt, expected.astype(nt))
        mine = _offered(spec, "variance:sample", value.copy(), bound.copy(), nt, expected.astype(nt), scratch=True)
        assert len(fresh) == len(mine) == 2
        for a, b in zip(fresh, mine):
            assert a.name == b.name and a.index.tobytes() == b.index.tobytes()
            assert a.values.tobytes() == b.values.tobytes()
            assert (a.bound is None) == (b.bound is None)
            assert a.bound is None or a.bound.tobytes() == b.bound.tobytes()
