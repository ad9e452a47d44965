"""The window map (issue #35 item 1) against the naive definition: on
hypothesis-drawn geometries, forward and transposed, with groups, flips,
dilations and asymmetric padding, the oracle's sums through the map and
the CPU reference's sliding windows / scatter-add give what explicit loops
over every (output, channel, tap) give, term counts included."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dmlconform.families.window import oracle
from dmlconform.families.window.cases import Geometry, Operands, output_sizes
from dmlconform.families.window.oracle import convolve
from dmlconform.families.window.reference import convolution
from dmlconform.families.window.windowmap import taps
from dmlconform.spec.model import DataType


def _naive(x: np.ndarray, w: np.ndarray, geo: Geometry, out_spatial: tuple[int, ...],
           flip: bool) -> tuple[np.ndarray, np.ndarray]:
    """Value and term count of every output element by explicit loops: forward gathers
    ``x[o S + k D - P]``; backward scatters ``x[i] w[k]`` to ``i S + k D - P``."""
    n, c = x.shape[:2]
    g = geo.groups
    cg = c // g
    mg = w.shape[1] if geo.transposed else w.shape[0] // g
    y = np.zeros((n, mg * g, *out_spatial))
    count = np.zeros(y.shape, np.int64)
    kernel = w.shape[2:]

    def tap(k: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(K - 1 - j for j, K in zip(k, kernel)) if flip else k

    for b, group, ci, mi in itertools.product(range(n), range(g), range(cg), range(mg)):
        cin, mout = group * cg + ci, group * mg + mi
        for k in itertools.product(*(range(K) for K in kernel)):
            wk = w[(cin, mi, *tap(k))] if geo.transposed else w[(mout, ci, *tap(k))]
            if geo.transposed:
                for i in itertools.product(*(range(s) for s in x.shape[2:])):
                    o = tuple(ij * s + kj * d - p for ij, kj, s, d, p in zip(i, k, geo.strides, geo.dilations,
                                                                             geo.start))
                    if all(0 <= oj < size for oj, size in zip(o, out_spatial)):
                        y[(b, mout, *o)] += x[(b, cin, *i)] * wk
                        count[(b, mout, *o)] += 1
            else:
                for o in itertools.product(*(range(s) for s in out_spatial)):
                    i = tuple(oj * s + kj * d - p for oj, kj, s, d, p in zip(o, k, geo.strides, geo.dilations,
                                                                             geo.start))
                    if all(0 <= ij < size for ij, size in zip(i, x.shape[2:])):
                        y[(b, mout, *o)] += x[(b, cin, *i)] * wk
                        count[(b, mout, *o)] += 1
    return y, count


@st.composite
def _problems(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, Geometry, tuple[int, ...], bool]:
    spatial = draw(st.integers(1, 2), label="spatial dimensions")
    dims = st.lists(st.integers(1, 3), min_size=spatial, max_size=spatial).map(tuple)
    pads = st.lists(st.integers(0, 3), min_size=spatial, max_size=spatial).map(tuple)
    transposed = draw(st.booleans(), label="transposed")
    strides = draw(dims, label="strides")
    outpad = tuple(draw(st.integers(0, s - 1), label="output padding") for s in strides) if transposed \
        else (0,) * spatial
    geo = Geometry(strides, draw(dims, label="dilations"), draw(pads, label="start"), draw(pads, label="end"),
                   outpad, draw(st.integers(1, 2), label="groups"), transposed=transposed)
    size = tuple(draw(st.lists(st.integers(1, 5), min_size=spatial, max_size=spatial), label="input sizes"))
    kernel = tuple(draw(st.lists(st.integers(1, 4), min_size=spatial, max_size=spatial), label="kernel"))
    out = output_sizes(geo, size, kernel)
    assume(all(o >= 1 for o in out))
    c, m = geo.groups * draw(st.integers(1, 2), label="C/G"), geo.groups * draw(st.integers(1, 2), label="M/G")
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    x = rng.integers(-4, 5, size=(2, c, *size)).astype(np.float32)
    w_sizes = (c, m // geo.groups) if transposed else (m, c // geo.groups)
    w = rng.integers(-4, 5, size=(*w_sizes, *kernel)).astype(np.float32)
    return x, w, geo, out, draw(st.booleans(), label="flip")


@settings(max_examples=60, deadline=None)
@given(_problems())
def test_the_map_and_the_reference_agree_with_the_naive_sums(problem: tuple) -> None:
    x, w, geo, out, flip = problem
    want, count = _naive(x.astype(np.float64), w.astype(np.float64), geo, out, flip)
    sums = convolve(x, w, None, geo, out, flip=(flip,) * len(out))
    assert np.array_equal(sums.value, want) and np.array_equal(np.broadcast_to(sums.n, want.shape), count)
    got = convolution(Operands(x, w, None), Geometry(geo.strides, geo.dilations, geo.start, geo.end,
                                                     geo.output_padding, geo.groups, flip, geo.transposed),
                      (2, want.shape[1], *out), DataType.FLOAT32)
    assert np.array_equal(got, want)


@settings(max_examples=30, deadline=None)
@given(_problems())
def test_the_sums_worked_a_row_at_a_time_are_the_naive_ones(problem: tuple) -> None:
    """`convolve` cut into blocks of one output row (a large case's way) gives
    every T, S (the naive sums of |x| |w|) and n of the whole."""
    x, w, geo, out, flip = problem
    want, count = _naive(x.astype(np.float64), w.astype(np.float64), geo, out, flip)
    magnitude, _ = _naive(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), geo, out, flip)
    with mock.patch.object(oracle, "WINDOW_PATCHES", 1):
        sums = convolve(x, w, None, geo, out, flip=(flip,) * len(out))
    assert np.array_equal(sums.value, want)
    assert np.array_equal(sums.magnitude, magnitude)
    assert np.array_equal(np.broadcast_to(sums.n, want.shape), count)


def test_a_transposed_tap_reads_only_its_phase() -> None:
    """Stride 2, dilation 1, start 1: output 0 reads input 0 through tap 1 only; output 1 reads taps 0 and 2."""
    t = taps(3, 5, 3, stride=2, dilation=1, start=1, transposed=True)
    assert t.valid.tolist()[:2] == [[False, True, False], [True, False, True]]
    assert t.index[1].tolist() == [1, 3, 0]  # tap 1 is invalid: it points at the appended zero (index 3)
