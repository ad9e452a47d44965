"""Counter-based draws (dmlconform/cases/draws.py): a tensor's values depend on
its key alone, whatever else is drawn with it; the values cover what the
generator promises (pools first, the exponent range, both integer kinds)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.cases import draws
from dmlconform.cases.edges import np_dtype
from dmlconform.compare import finfo
from dmlconform.spec.model import DataType

FLOATS = (DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64)
INTS = (DataType.INT8, DataType.UINT8, DataType.INT16, DataType.UINT16, DataType.INT32, DataType.UINT32,
        DataType.INT64, DataType.UINT64)

request = st.builds(
    draws.Request,
    key=st.integers(0, 2 ** 64 - 1),
    dtype=st.sampled_from(FLOATS + INTS),
    count=st.integers(0, 300),
    pool=st.none(),   # random values only (builds would fill a NamedTuple's defaulted fields too)
    fixed=st.none(),
)


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@settings(max_examples=60, deadline=None)
@given(st.lists(request, min_size=1, max_size=8), st.data())
def test_a_tensors_values_do_not_depend_on_what_is_drawn_with_it(requests, data):
    together = draws.fill(requests)
    k = data.draw(st.integers(0, len(requests) - 1))
    alone = draws.fill([requests[k]])[0]
    assert together[k].dtype == np_dtype(requests[k].dtype) and together[k].shape == (requests[k].count,)
    assert _bits(together[k]) == _bits(alone)


def test_the_key_decides_and_other_keys_give_other_values():
    a = draws.fill([draws.Request(1, DataType.FLOAT32, 100)])[0]
    b = draws.fill([draws.Request(1, DataType.FLOAT32, 100)])[0]
    c = draws.fill([draws.Request(2, DataType.FLOAT32, 100)])[0]
    assert _bits(a) == _bits(b) and _bits(a) != _bits(c)
    assert draws.stream_key(0, "OP/FLOAT32/4d/edges", "InputTensor") != draws.stream_key(1, "OP/FLOAT32/4d/edges",
                                                                                          "InputTensor")
    assert draws.stream_key(0, "A", "x") != draws.stream_key(0, "A", "y")


@given(st.integers(0, 2 ** 64 - 1), st.integers(1, 200), st.integers(0, 40))
@settings(max_examples=40, deadline=None)
def test_the_pool_is_all_there_and_shuffled_in(key, count, size):
    pool = np.arange(1000, 1000 + size, dtype=np.int32)
    values = draws.fill([draws.Request(key, DataType.INT32, count, pool=pool)])[0]
    kept = pool[:count]
    assert np.isin(kept, values).all()
    assert values.size == count


def test_the_pool_does_not_stay_in_front():
    pool = np.arange(1000, 1064, dtype=np.int32)
    values = draws.fill([draws.Request(5, DataType.INT32, 256, pool=pool)])[0]
    assert not np.array_equal(values[:64], pool)


def test_fixed_values_are_taken_as_they_are():
    fixed = np.array([3, 1, 2], dtype=np.int8)
    assert draws.fill([draws.Request(9, DataType.INT8, 3, fixed=fixed)])[0].tolist() == [3, 1, 2]


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_values_span_the_exponent_range_and_the_small_ranges(dtype):
    values = draws.fill([draws.Request(11, dtype, 20000)])[0].astype(np.float64)
    fi = finfo(np_dtype(dtype))
    finite = values[np.isfinite(values)]
    exps = np.frexp(finite[finite != 0])[1]
    assert exps.min() <= int(fi.minexp) + 3 and exps.max() >= int(fi.maxexp) - 3
    assert (finite < 0).any() and (finite > 0).any()
    small = np.abs(finite) <= 4
    assert small.mean() > 0.5  # three in five are uniform in [-4, 4) or [-1, 1)
    inner = finite[np.abs(finite) <= 1]
    assert inner.min() < -0.9 and inner.max() > 0.9


@pytest.mark.parametrize("dtype", INTS)
def test_integer_values_cover_the_range_and_small_values(dtype):
    nt = np_dtype(dtype)
    info = np.iinfo(nt)
    values = draws.fill([draws.Request(13, dtype, 4000)])[0]
    assert values.dtype == nt
    wide = values.astype(np.float64)
    assert wide.min() < float(info.min) / 2 + 1 and wide.max() > float(info.max) / 2
    lo, hi = max(int(info.min), -100), min(int(info.max), 100)
    small = values[(values.astype(np.float64) >= lo) & (values.astype(np.float64) <= hi)].astype(np.int64)
    assert small.size >= 0.45 * values.size  # every other value is small (then shuffled)
    assert small.min() == lo and small.max() == hi


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_values_are_the_documented_formula_of_the_bits(dtype):
    """The spread values are built from their bits (`draws._heads`): each
    element is what the module docstring's arithmetic gives for its word."""
    nt = np_dtype(dtype)
    words = draws.mix(np.arange(1, 5001, dtype=np.uint64) * draws.GOLDEN)
    position = np.arange(words.size, dtype=np.int64)
    fi = finfo(nt)
    lo, hi = int(fi.minexp), int(fi.maxexp)
    unit = (words >> np.uint64(12)).astype(np.float64) * 2.0 ** -52
    sign = 1.0 - 2.0 * (words & np.uint64(1)).astype(np.float64)
    exps = ((words >> np.uint64(1)) & np.uint64(0x7FF)).astype(np.int64) % (hi - lo) + lo
    spread = np.ldexp(sign * (1.0 + unit), exps)
    mixed = (2.0 * unit - 1.0) * np.where((words >> np.uint64(1)) & np.uint64(1), 4.0, 1.0)
    with np.errstate(over="ignore"):
        expected = np.where(position % 5 < 2, spread, mixed).astype(nt)
    assert _bits(draws._values(dtype, nt, words, position)) == _bits(expected)


def test_values_do_not_depend_on_the_chunking(monkeypatch):
    requests = [draws.Request(k, dtype, count, pool=np.arange(5, dtype=np_dtype(dtype)) if k % 2 else None)
                for k, (dtype, count) in enumerate([(DataType.FLOAT16, 40), (DataType.INT8, 3), (DataType.FLOAT16, 0),
                                                    (DataType.FLOAT32, 77), (DataType.FLOAT32, 1)])]
    whole = draws.fill(requests)
    monkeypatch.setattr(draws, "DRAW_CHUNK", 7)
    assert [_bits(a) for a in draws.fill(requests)] == [_bits(a) for a in whole]


@given(st.integers(0, 2 ** 64 - 1), st.integers(0, 2 ** 64 - 1), st.integers(1, 64))
@settings(max_examples=30, deadline=None)
def test_a_period_bounds_the_distinct_rows_of_a_case(key, picker, period):
    """A large case draws ``period`` values per tensor and every element of
    each tensor picks by the case's shared ``picker``: at most ``period``
    distinct rows of operands (what the exact evaluation pays for), each
    value of the pool among them."""
    pool = np.array([0.0, -0.0, np.inf, np.nan], dtype=np.float32)
    count = 40 * period + 7
    a, b = draws.fill([draws.Request(key, DataType.FLOAT32, count, pool=pool, period=period, picker=picker),
                       draws.Request(key ^ 1, DataType.FLOAT16, count, period=period, picker=picker)])
    assert a.shape == b.shape == (count,) and a.dtype == np.float32 and b.dtype == np.float16
    rows = {(x, y) for x, y in zip(a.view(np.uint32).tolist(), b.view(np.uint16).tolist())}
    assert len(rows) <= period
    base = draws.fill([draws.Request(key, DataType.FLOAT32, period, pool=pool)])[0]
    assert set(a.view(np.uint32).tolist()) <= set(base.view(np.uint32).tolist())  # the period's values, no others
    if period >= pool.size:
        assert np.isin(pool.view(np.uint32), a.view(np.uint32)).all()
    again = draws.fill([draws.Request(key, DataType.FLOAT32, count, pool=pool, period=period, picker=picker)])[0]
    assert _bits(again) == _bits(a)


def test_the_picker_places_the_values():
    made = [draws.fill([draws.Request(3, DataType.FLOAT32, 5000, period=16, picker=p)])[0] for p in (1, 2)]
    assert not np.array_equal(made[0], made[1])
    assert np.unique(made[0]).size == 16  # 5000 picks of 16 values reach them all
    assert not np.array_equal(made[0][:16], made[0][16:32])  # no period in the places
