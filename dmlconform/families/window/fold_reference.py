"""The CPU reference of FOLD and UNFOLD: plain numpy in the tensor's own type
(FOLD's sums of FLOAT16 in float32, as a GPU does).

Issue #35 item 4.  Written from the pages' prose, not through the oracle's
window map: the image zero-padded by StartPadding and EndPadding, then one
strided slice per window offset (the sliding windows), copied out into the
block tensor's rows (UNFOLD) or added into the padded image (FOLD, which is
then cropped).  It shares nothing with the oracle but the shape rules of
`families.window.fold`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.window.fold import Geometry, blocks, geometry, sides
from dmlconform.families.window.semantics import Window
from dmlconform.spec.model import DataType, numpy_dtype

#: The type each tensor type sums in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}


def compute(sem: Window, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    geo, s = geometry(sem, case.attribute_map()), sides(sem, case)
    x = case.input(sem.input).view(buffers[sem.input])
    if sem.operation == "unfold":
        return {sem.output: unfold(x, geo)}
    work = _WORK.get(case.dtype, numpy_dtype(case.dtype))
    return {sem.output: fold(x.astype(work), geo, s.image.sizes).astype(numpy_dtype(case.dtype))}


def _windows(geo: Geometry, counts: tuple[int, ...]) -> Iterator[tuple[Any, ...]]:
    """Per window offset (row-major), the strided slice of the padded image its taps read over every block."""
    for offset in itertools.product(*(range(k) for k in geo.window)):
        yield (slice(None), slice(None), *(slice(k * d, k * d + (b - 1) * s + 1, s)
                                           for k, d, b, s in zip(offset, geo.dilations, counts, geo.strides)))


def unfold(x: np.ndarray, geo: Geometry, *, counts: tuple[int, ...] | None = None) -> np.ndarray:
    """``x`` {N, C, spatial...} -> {N, C x prod(window), BlockCount}, the padding +0
    (``counts``: blocks per dimension other than the geometry's, for a planted fault)."""
    n, c = x.shape[:2]
    counts = blocks(geo, x.shape[2:]) if counts is None else counts
    padded = np.pad(x, [(0, 0), (0, 0), *zip(geo.start, geo.end)])
    rows = [padded[where].reshape(n, c, -1) for where in _windows(geo, counts)]
    return np.stack(rows, axis=2).reshape(n, c * len(rows), math.prod(counts))


def fold(x: np.ndarray, geo: Geometry, image: tuple[int, ...]) -> np.ndarray:
    """``x`` {N, C x prod(window), BlockCount} -> the image of sizes
    ``image``, each block's values added where its window lies (the padding
    dropped), in ``x``'s type."""
    n, c = image[:2]
    counts = blocks(geo, image[2:])
    taps = x.reshape(n, c, math.prod(geo.window), *counts)
    padded = np.zeros((n, c, *(s + a + b for s, a, b in zip(image[2:], geo.start, geo.end))), x.dtype)
    for k, where in enumerate(_windows(geo, counts)):
        padded[where] += taps[:, :, k]
    crop: tuple[Any, ...] = (slice(None), slice(None), *(slice(a, a + s) for a, s in zip(geo.start, image[2:])))
    return padded[crop]
