"""`oracles.base.spacing_above` of FLOAT16, FLOAT32 and FLOAT64 from the
exponent's bits (`_binade_spacing`, issue #36's large normalization) is
what ``np.spacing`` gave, NaN made infinite: every FLOAT16 value >= 0, every
FLOAT32 and FLOAT64 binade at its first, last and random values, the
largest value, infinity, NaN, zero and subnormals, from float64 too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.oracles.base import spacing_above


def _by_np_spacing(x: np.ndarray, nt: type) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        step = np.asarray(x).astype(nt)
        np.spacing(step, out=step)
    np.copyto(step, np.inf, where=np.isnan(step))
    return step


def test_every_float16_value() -> None:
    values = np.arange(0, 0x8000, dtype=np.uint16).view(np.float16)
    for x in (values, values.astype(np.float64)):
        assert spacing_above(x, np.float16).tobytes() == _by_np_spacing(x, np.float16).tobytes()


@pytest.mark.parametrize(("nt", "view", "mantissa", "exponents"),
                         [(np.float32, np.uint32, 23, 256), (np.float64, np.uint64, 52, 2048)])
def test_each_binade_at_its_edges(nt: type, view: type, mantissa: int, exponents: int) -> None:
    top = view((1 << mantissa) - 1)
    starts = np.arange(exponents, dtype=view) << view(mantissa)
    values = np.concatenate([starts, starts | top, starts | view(1)]).view(nt)
    assert spacing_above(values, nt).tobytes() == _by_np_spacing(values, nt).tobytes()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2 ** 31 - 1), min_size=1, max_size=50),
       st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20))
def test_random_float32_bits_and_float64_values(bits: list[int], values: list[float]) -> None:
    x = np.array(bits, dtype=np.uint32).view(np.float32)
    assert spacing_above(x, np.float32).tobytes() == _by_np_spacing(x, np.float32).tobytes()
    y = np.abs(np.array(values, dtype=np.float64))
    for nt in (np.float16, np.float32, np.float64):
        assert spacing_above(y, nt).tobytes() == _by_np_spacing(y, nt).tobytes()


def test_negative_values_keep_np_spacings_sign() -> None:
    x = np.array([-1.0, -0.0, 2.0], dtype=np.float32)
    assert spacing_above(x, np.float32).tobytes() == _by_np_spacing(x, np.float32).tobytes()
