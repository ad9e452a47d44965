"""The window map (issue #35 item 1): for each output element, the input
positions it reads, per filter tap, written once for the family's oracle.

Along one spatial dimension with stride S, dilation D and start padding P,
output position o and filter tap k read input position

* forward: ``i = o S + k D - P``;
* backward (transposed, the adjoint of the forward map): the ``i`` with
  ``i S + k D - P = o``, where ``o + P - k D`` is a multiple of S;

a tap is *valid* where that ``i`` lies inside the input (else it reads the
zero padding, or no input at all, and adds no term).  The map of several
spatial dimensions is the outer product of each one's, so an output
element's term count is the product of its valid taps per dimension times
the channels of its group (it varies at the borders and, transposed, with
the output's phase modulo the stride).  End padding and output padding
appear only through the output's sizes.  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class Taps:
    """One spatial dimension's map: ``index`` (O, K), the input position
    each (output, tap) reads, the input's size (one past its end: a zero
    appended there) where the tap is not ``valid``."""

    index: np.ndarray
    valid: np.ndarray

    def rows(self, lo: int, hi: int) -> Taps:
        """The map of the output positions [lo, hi) alone (a block of them)."""
        return Taps(self.index[lo:hi], self.valid[lo:hi])


def taps(input_size: int, output_size: int, kernel: int, *, stride: int, dilation: int, start: int,
         transposed: bool) -> Taps:
    """The map of one spatial dimension (the module's docstring)."""
    o = np.arange(output_size, dtype=np.int64)[:, None]
    k = np.arange(kernel, dtype=np.int64)[None, :]
    if transposed:
        num = o + start - k * dilation
        i = np.floor_divide(num, stride)
        valid = (np.mod(num, stride) == 0) & (i >= 0) & (i < input_size)
    else:
        i = o * stride + k * dilation - start
        valid = (i >= 0) & (i < input_size)
    return Taps(np.where(valid, i, input_size), valid)


def gather(x: np.ndarray, maps: tuple[Taps, ...]) -> np.ndarray:
    """``x`` (N, C, spatial...) read through ``maps`` (one per spatial
    dimension): (N, C, O1..Od, K1..Kd), 0 where a tap is not valid."""
    return read(appended(x, len(maps)), maps)


def appended(x: np.ndarray, spatial: int, *, channels_last: bool = False) -> np.ndarray:
    """``x`` (N, C, spatial...; with ``channels_last`` N, spatial..., C) with
    a zero appended along each spatial dimension: the zero an invalid tap
    reads (`read`).  Made once, read a block at a time."""
    ends = [(0, 1)] * spatial
    return np.pad(x, [(0, 0), *ends, (0, 0)] if channels_last else [(0, 0), (0, 0), *ends])


def read(padded: np.ndarray, maps: tuple[Taps, ...], *, channels_last: bool = False) -> np.ndarray:
    """``padded`` (`appended`) read through ``maps``: (N, C, O1..Od,
    K1..Kd); with ``channels_last`` (N, O1..Od, K1..Kd, C), the im2col
    order: an output position's taps by channels, each tap's channels
    contiguous (copied a row of channels at a time, not element by element)."""
    if channels_last:
        return _rows(padded, maps)
    where: tuple[Any, ...] = (slice(None), slice(None), *_placed(maps))
    return padded[where]


def _placed(maps: tuple[Taps, ...]) -> list[np.ndarray]:
    """Each dimension's input positions (O_j, K_j) shaped to broadcast as (O1..Od, K1..Kd)."""
    d = len(maps)
    placed = []
    for j, t in enumerate(maps):
        shape = [1] * (2 * d)
        shape[j], shape[d + j] = t.index.shape
        placed.append(t.index.reshape(shape))
    return placed


def _rows(padded: np.ndarray, maps: tuple[Taps, ...]) -> np.ndarray:
    """`read` with ``channels_last``: every (output, tap) one row of C
    channels of ``padded`` viewed as (N x positions, C), fetched by one
    ``np.take`` of row numbers (row-major over the spatial dimensions).
    Twice as fast as advanced indexing by d + 1 index arrays (the
    ``--large`` convolution's patches, docs/window.md)."""
    n_batch, spatial, c = padded.shape[0], padded.shape[1:-1], padded.shape[-1]
    row = np.zeros((), np.int64)
    for size, index in zip(spatial, _placed(maps)):
        row = row * size + index
    first = np.arange(n_batch, dtype=np.int64).reshape((n_batch,) + (1,) * row.ndim) * int(np.prod(spatial))
    return np.take(padded.reshape(-1, c), first + row, axis=0)


def counts(maps: tuple[Taps, ...]) -> np.ndarray:
    """Per output position (O1..Od), its valid taps: the product over the
    dimensions of each one's valid count."""
    out = np.ones((), np.int64)
    for t in maps:
        out = np.multiply.outer(out, t.valid.sum(axis=1))
    return out
