"""S summed in float32 (issue #35, the ``--large`` convolution's time): the
inflated float32 sum of |x w| (`oracle._above32`) is never below the exact
S and at most about 2 n 2^-24 relative above it, on float32 data drawn
over the whole range (subnormals and overflow included); where float32
overflows, `convolve` falls back to float64's S."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dmlconform.families.window import oracle
from dmlconform.families.window.cases import Geometry
from tests.families.window.test_windowmap import _problems

_U = 2.0 ** -24
_TINY = 2.0 ** -149


def _within(above: np.ndarray, s: np.ndarray, n: int) -> bool:
    """``above`` is at least ``s`` and at most (2n + 2) u relative (plus n subnormals) above it."""
    return bool(np.all(above >= s) and np.all(above <= s * (1 + (2 * n + 2) * _U) + 2 * n * _TINY))


def _floats(scale: float) -> st.SearchStrategy[float]:
    scale = float(np.float32(scale))
    return st.floats(-scale, scale, width=32, allow_nan=False, allow_infinity=False, allow_subnormal=True)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda kc: st.tuples(
    hnp.arrays(np.float32, (1, 1, 3, kc), elements=st.one_of(_floats(1e-30), _floats(1.0), _floats(3e38)),
               fill=st.nothing()).map(np.abs),
    hnp.arrays(np.float32, (1, 2, kc), elements=st.one_of(_floats(1e-30), _floats(1.0), _floats(3e38)),
               fill=st.nothing()).map(np.abs))))
def test_the_float32_sum_inflated_is_an_upper_bound_of_the_exact_one(operands: tuple[np.ndarray, ...]) -> None:
    patches, single = operands
    n = patches.shape[-1]
    exact = np.array([[[[math.fsum(float(a) * float(b) for a, b in zip(row, column)) for row in patches[0, 0]]
                        for column in single[0]]]])
    above = oracle._above32(patches.copy(), single)
    if above is None:  # the float32 sum overflowed: it can only where S is near float32's largest
        assert np.max(exact) > float(np.finfo(np.float32).max) / (1 + 2 * n * _U), exact
        return
    assert _within(above, exact, n), (above, exact)


@settings(max_examples=40, deadline=None)
@given(_problems(), st.data())
def test_convolve_bounds_s_through_float32_on_any_geometry(problem: tuple, data: st.DataObject) -> None:
    """On the window map's drawn geometries, data over a wide range: S with ``magnitude_above`` bounds
    float64's from above, T and n unchanged (float64's S is within gamma_n(2^-53) of the exact one: the
    inflation's margin, at least u, covers it)."""
    x, w, geo, out, flip = problem
    values = st.one_of(_floats(1e-20), _floats(1e3), st.just(0.0))
    x = data.draw(hnp.arrays(np.float32, x.shape, elements=values), label="x")
    w = data.draw(hnp.arrays(np.float32, w.shape, elements=values), label="w")
    plain = oracle.convolve(x, w, None, geo, out, flip=(flip,) * len(out))
    above = oracle.convolve(x, w, None, geo, out, flip=(flip,) * len(out), magnitude_above=True)
    np.testing.assert_array_equal(above.value, plain.value)
    np.testing.assert_array_equal(above.n, plain.n)
    n = int(np.prod(w.shape[2:])) * (x.shape[1] // geo.groups)
    assert _within(above.magnitude, plain.magnitude, n)


def test_an_overflowing_float32_sum_falls_back_to_float64() -> None:
    """|x| |w| = 1e39 overflows float32, not float64: S is float64's, finite."""
    x = np.full((1, 1, 3), 1e38, np.float32)
    w = np.full((1, 1, 2), 10.0, np.float32)
    geo = Geometry((1,), (1,), (0,), (0,), (0,), 1, transposed=False)
    sums = oracle.convolve(x, w, None, geo, (2,), flip=(False,), magnitude_above=True)
    assert sums.magnitude.ravel().tolist() == [2 * float(np.float32(1e38)) * 10.0] * 2
