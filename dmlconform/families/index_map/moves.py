"""The oracle's coordinates for PADDING, PADDING1 and the depth/space moves
(issue #34 item 1): per output element, the C-order position of the input
element it is, or that it is the constant (`block_map` for the moves).  Computed from the pages' words alone, never by
``np.pad`` (the CPU reference's tool):

* CONSTANT: coordinate c of a dimension of n elements (after StartPadding)
  is the input's where 0 <= c < n, the constant elsewhere;
* EDGE: c clamped into [0, n - 1];
* REFLECTION ("folded right on the edges ... edges are not mirrored",
  "periodically by folding them over previous padding regions"): c modulo
  the period 2(n - 1), folded back past n - 1; a dimension of one element
  has nothing to fold over: its element (docs/index-map.md);
* SYMMETRIC ("edges are also mirrored"): c modulo 2n, folded back past
  n - 1 onto the edge itself.

The constant is PaddingValue in the tensor's type (`constant`): the
overlay's ``padding-value-conversion`` says how.
"""

from __future__ import annotations

import math

import numpy as np

from dmlconform.families.index_map.blocks import BlockCall
from dmlconform.families.index_map.pads import PadCall
from dmlconform.spec.model import DataType, numpy_dtype


def fold(c: np.ndarray, n: int, mode: str) -> np.ndarray:
    """The input coordinate output coordinate ``c`` (counted from the
    input's first element, negative in the start padding) reads in a
    dimension of ``n`` elements, -1 where it is the constant."""
    if mode == "CONSTANT":
        return np.where((c >= 0) & (c < n), c, -1)
    if mode == "EDGE":
        return np.clip(c, 0, n - 1)
    if mode == "REFLECTION":
        if n == 1:
            return np.zeros_like(c)
        period = 2 * (n - 1)
        m = np.mod(c, period)
        return np.where(m < n, m, period - m)
    period = 2 * n  # SYMMETRIC
    m = np.mod(c, period)
    return np.where(m < n, m, period - 1 - m)


def pad_map(call: PadCall, input_sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per output element (the output's shape): the C-order position of the
    input element it is (0 where it is the constant), and whether it is the
    constant."""
    out_sizes = call.output_sizes(input_sizes)
    position = np.zeros(out_sizes, dtype=np.int64)
    constant = np.zeros(out_sizes, dtype=bool)
    after = 1
    for d in reversed(range(len(input_sizes))):
        shape = [1] * len(input_sizes)
        shape[d] = out_sizes[d]
        source = fold(np.arange(out_sizes[d], dtype=np.int64).reshape(shape) - call.start[d], input_sizes[d], call.mode)
        position = position + np.maximum(source, 0) * after
        constant = constant | (source < 0)
        after *= input_sizes[d]
    return position, constant


def constant(call: PadCall, dtype: DataType) -> np.ndarray:
    """PaddingValue in ``dtype``, a 0-d array: PADDING1's union holds it in
    its own type (which must be the output's); PADDING's FLOAT is first the
    float32 the desc holds, then, for a float tensor, that value in its
    type, for an integer one truncated toward zero ("10.6 will become 10").
    The cases give only values that every such conversion keeps exact or
    that the page's example settles."""
    nt = numpy_dtype(dtype)
    if call.value_type is not None:
        return np.array(call.value, dtype=nt)
    held = float(np.float32(call.value))
    return np.array(held if dtype.is_float else math.trunc(held), dtype=nt)


def block_map(call: BlockCall, input_sizes: tuple[int, ...]) -> np.ndarray:
    """Per output element of a depth/space move, the C-order position of
    the input element it is.  The space version is ``[Batch, Channels,
    (Height, BlockHeight), (Width, BlockWidth)]``, the depth version's
    channel ``(BlockHeight, BlockWidth, Channels)`` flattened (DCR) or
    ``(Channels, BlockHeight, BlockWidth)`` (CRD), as the
    DML_DEPTH_SPACE_ORDER page has them: the coordinates of one are
    computed from the other's."""
    b = call.block
    out = np.indices(call.output_sizes(input_sizes), sparse=True)
    if call.to_space:  # output: the space version; input: the depth version
        n, c, y, x = out
        channels = input_sizes[1] // (b * b)
        bh, bw = y % b, x % b
        depth = (bh * b + bw) * channels + c if call.order == "DCR" else (c * b + bh) * b + bw
        source = (n, depth, y // b, x // b)
    else:  # output: the depth version; input: the space version
        n, depth, h, w = out
        channels = input_sizes[1]
        if call.order == "DCR":
            bh, bw, c = depth // (b * channels), depth // channels % b, depth % channels
        else:
            c, bh, bw = depth // (b * b), depth // b % b, depth % b
        source = (n, c, h * b + bh, w * b + bw)
    position = np.zeros((), dtype=np.int64)
    after = 1
    for coordinate, size in zip(reversed(source), reversed(input_sizes)):
        position = position + coordinate.astype(np.int64) * after
        after *= size
    return np.broadcast_to(position, call.output_sizes(input_sizes))
