"""Integer results into the target type: the int64 fast path saturates and
wraps exactly as Python integers do."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.families.elementwise.formula_oracle import _fit
from dmlconform.spec.model import Overflow

TYPES = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)


def _python(ints: list[int], dtype: np.dtype, overflow: Overflow) -> list[int]:
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    if overflow is Overflow.SATURATE:
        return [min(max(v, lo), hi) for v in ints]
    return [(v - lo) % (hi - lo + 1) + lo for v in ints]


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("overflow", [Overflow.SATURATE, Overflow.WRAP])
@pytest.mark.parametrize("beyond_int64", [False, True])
def test_fit_saturates_and_wraps_like_python_integers(dtype: type, overflow: Overflow, beyond_int64: bool) -> None:
    rng = np.random.default_rng(0)
    edges = [0, 1, -1, 2 ** 7, -2 ** 7 - 1, 2 ** 8, 2 ** 15, -2 ** 15 - 1, 2 ** 31, -2 ** 31 - 1, 2 ** 32,
             2 ** 63 - 1, -2 ** 63]
    values = edges + [int(v) for v in rng.integers(-2 ** 63, 2 ** 63 - 1, 200, dtype=np.int64)]
    values += [int(v) >> int(s) for v, s in zip(rng.integers(-2 ** 63, 2 ** 63 - 1, 200), rng.integers(0, 62, 200))]
    if beyond_int64:
        values += [2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1, 3 ** 50, -(3 ** 50)]
    ints = np.asarray(values, dtype=object)
    got = _fit(ints, np.dtype(dtype), overflow)
    assert got.dtype == np.dtype(dtype)
    assert [int(v) for v in got] == _python(values, np.dtype(dtype), overflow)
