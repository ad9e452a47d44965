"""Distances written for people: one function, checked over pairs of values
of every float type the comparator knows (any bit pattern: NaN, infinities,
signed zeros, subnormals), with the ULP distance the comparator gives them."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.compare import ulp_distance
from dmlconform.report.distance import distance_text, short_float, ulp_count

FLOAT_TYPES = (np.float64, np.float32, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
               ml_dtypes.float8_e5m2)
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@st.composite
def pairs(draw: st.DrawFn) -> tuple[float, float, int | None, type]:
    """(expected, actual, ULP distance or None as a result holds it, type): two values of one float type."""
    dtype = np.dtype(draw(st.sampled_from(FLOAT_TYPES), label="type"))
    bits = st.integers(0, 2 ** (8 * dtype.itemsize) - 1)
    raw = np.array([draw(bits, label="expected bits"), draw(bits, label="actual bits")],
                   dtype=_UNSIGNED[dtype.itemsize])
    values = raw.view(dtype)
    signed_zero = draw(st.booleans(), label="signed_zero")
    ulp = int(ulp_distance(values[:1], values[1:], signed_zero=signed_zero)[0])
    expected, actual = float(values[0]), float(values[1])
    return expected, actual, (ulp if math.isnan(expected) == math.isnan(actual) else None), dtype.type


@settings(max_examples=600, deadline=None)
@given(pairs())
def test_distance_text_over_every_float_type(pair: tuple[float, float, int | None, type]) -> None:
    expected, actual, ulp, _ = pair
    text = distance_text(expected, actual, ulp)
    if math.isnan(expected) or math.isnan(actual):
        assert text == f"{short_float(expected)} vs {short_float(actual)}" and "NaN" in text
    elif expected == -actual and math.copysign(1, expected) != math.copysign(1, actual):
        assert text == "sign differs"
    elif math.isinf(expected) or math.isinf(actual):
        assert text == f"{short_float(expected)} vs {short_float(actual)}" and "inf" in text
    else:
        assert ulp is not None and text.endswith(" ULP")
        shown = float(text.removesuffix(" ULP"))
        assert shown == ulp if ulp < 100_000 else abs(shown - ulp) <= 0.05 * ulp
    assert "-1 ULP" not in text and text != "-1"  # never the old sentinel (a value may be -1: "-1 vs inf")
    assert len(text) <= 24


@pytest.mark.parametrize("expected, actual, ulp, text", [
    (0.5, math.nan, None, "0.5 vs NaN"),
    (math.nan, 0.5, None, "NaN vs 0.5"),
    (0.0, -0.0, 1, "sign differs"),
    (-1.0, 1.0, 2130706432, "sign differs"),
    (math.inf, -math.inf, 4278190080, "sign differs"),
    (math.inf, 3.4028234663852886e38, 1, "inf vs 3.4e38"),
    (-2.5e-8, 1e30, 12345678, "1.2e7 ULP"),
    (1.0, 1.0000001192092896, 1, "1 ULP"),
    (1.0, 1.5, 99999, "99999 ULP"),
    (1.0, 2.0, 100000, "1e5 ULP"),
    (0.0, 1.0, 2130706432, "2.1e9 ULP"),
    (1.0, 2.0, None, "not comparable"),
])
def test_distance_text_examples(expected: float, actual: float, ulp: int | None, text: str) -> None:
    assert distance_text(expected, actual, ulp) == text


@pytest.mark.parametrize("value, text", [
    (math.nan, "NaN"), (math.inf, "inf"), (-math.inf, "-inf"), (-0.0, "-0"), (0.0, "0"), (0.5, "0.5"),
    (3.4028234663852886e38, "3.4e38"), (1.401298464324817e-45, "1.4e-45"), (-123456.0, "-1.23e5"),
])
def test_short_float(value: float, text: str) -> None:
    assert short_float(value) == text


def test_ulp_count() -> None:
    assert [ulp_count(n) for n in (0, 3, 99999, 100000, 2130706432, 2 ** 64 - 1)] == [
        "0", "3", "99999", "1e5", "2.1e9", "1.8e19"]
