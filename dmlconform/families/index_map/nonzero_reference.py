"""The CPU reference of NONZERO_COORDINATES, plain numpy: ``np.nonzero``
(C order, -0 == 0, NaN non-zero), the rows stacked and their last N
columns written, zeros past the count.  It shares nothing with the oracle
but the shape rules of `families.index_map.nonzero`."""

from __future__ import annotations

import numpy as np

from dmlconform.families.index_map.nonzero import columns


def nonzero(x: np.ndarray, coordinates: tuple[int, ...], count: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The count (``count``'s sizes) and coordinates (``coordinates``' sizes), UINT32."""
    n = columns(x.shape, coordinates, count)
    found = np.stack(np.nonzero(x), axis=1) if x.ndim else np.zeros((int(x != 0), 0), dtype=np.int64)
    rows = np.zeros((x.size, n), dtype=np.uint32)
    rows[:len(found)] = found[:, x.ndim - n:]
    return np.full(count, len(found), dtype=np.uint32), rows.reshape(coordinates)
