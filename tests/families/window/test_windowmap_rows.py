"""The window map read channels last (`windowmap.read`, the convolution
oracle's im2col patches, fetched as whole rows of channels by one
``np.take``): on drawn 1D to 3D geometries, forward and transposed, with
batches, it holds what reading channels first holds, element for element."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.families.window import windowmap


@st.composite
def _maps(draw: st.DrawFn) -> tuple[np.ndarray, tuple[windowmap.Taps, ...]]:
    spatial = draw(st.integers(1, 3), label="spatial dimensions")
    transposed = draw(st.booleans(), label="transposed")
    sizes = tuple(draw(st.integers(1, 5), label="input size") for _ in range(spatial))
    maps = tuple(windowmap.taps(size, draw(st.integers(1, 6), label="output size"), draw(st.integers(1, 4), label="kernel"),
                                stride=draw(st.integers(1, 3), label="stride"),
                                dilation=draw(st.integers(1, 3), label="dilation"),
                                start=draw(st.integers(0, 3), label="start"), transposed=transposed)
                 for size in sizes)
    shape = (draw(st.integers(1, 3), label="batch"), draw(st.integers(1, 4), label="channels"), *sizes)
    x = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1), label="seed")).standard_normal(shape)
    return x.astype(np.float32) + 1, maps  # + 1: no value is the appended zero by chance


@settings(max_examples=60, deadline=None)
@given(_maps())
def test_reading_channels_last_holds_what_reading_channels_first_holds(problem: tuple) -> None:
    x, maps = problem
    first = windowmap.gather(x, maps)  # (N, C, O..., K...)
    last = windowmap.read(windowmap.appended(np.moveaxis(x, 1, -1), len(maps), channels_last=True), maps,
                          channels_last=True)  # (N, O..., K..., C)
    np.testing.assert_array_equal(last, np.moveaxis(first, 1, -1))
    valid = np.ones((), bool)
    for t in maps:  # (O..., K...) as the map's outer product
        valid = np.multiply.outer(valid, t.valid)
    d = len(maps)
    valid = valid.transpose([2 * j for j in range(d)] + [2 * j + 1 for j in range(d)])
    assert np.all((last != 0) == valid[None, ..., None])  # every valid tap reads the input, every other a zero
