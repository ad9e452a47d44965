"""contraction.oracle._upper: the float32 S it returns is above the true
sum of |a_k b_k|, also where the products fall below float32's normal range
and the float32 sum lost them."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.families.contraction.oracle import _upper

tiny = st.floats(min_value=0.0, max_value=2.0 ** -60, allow_subnormal=True, width=32)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(tiny, tiny), min_size=1, max_size=64))
def test_the_float32_bound_is_above_the_exact_sum_of_underflowing_products(pairs: list[tuple[float, float]]) -> None:
    a = np.array([p for p, _ in pairs], dtype=np.float32)
    b = np.array([q for _, q in pairs], dtype=np.float32)
    summed = np.array([np.float32(0)])
    for term in a * b:  # float32 products, summed in float32: what a float32 GEMM of |a| |b| gives
        summed[0] = np.float32(summed[0] + term)
    exact = sum(Fraction(float(p)) * Fraction(float(q)) for p, q in zip(a, b))
    assert Fraction(float(_upper(summed, len(pairs))[0])) >= exact


def test_products_that_underflow_to_zero_still_bound() -> None:
    # 2^-80 * 2^-80 = 2^-160: zero in float32, so the float32 S is 0 where the true S is 16 * 2^-160
    assert float(_upper(np.zeros(1, dtype=np.float32), 16)[0]) >= 16 * 2.0 ** -160
