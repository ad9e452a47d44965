"""The CPU reference of ONE_HOT, plain numpy in the values' type, written
like the ONNX reference implementation of OneHot: rows of an identity
matrix (``np.eye``) picked by the indices, an index outside [-depth, depth)
picking an extra all-false row, moved to Axis; then OnValue where true,
OffValue where not.  It shares nothing with the oracle but the shape rules
of `families.index_map.onehot`.
"""

from __future__ import annotations

import numpy as np

from dmlconform.families.index_map.onehot import OFF, ON


def one_hot(axis: int, idx: np.ndarray, values: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """The output of ``sizes``: ``idx`` (size 1 on ``axis``) one-hot along ``axis``."""
    depth = sizes[axis]
    flat = np.ascontiguousarray(values).reshape(-1)
    rows = np.eye(depth + 1, depth, dtype=bool)  # row ``depth``: all false
    squeezed = np.squeeze(idx, axis=axis)
    if squeezed.dtype.kind == "u":
        picked = np.minimum(squeezed, np.uint64(depth)).astype(np.int64)
    else:
        wide = squeezed.astype(np.int64)
        wide = wide + depth * (wide < 0)
        picked = np.where((wide >= 0) & (wide < depth), wide, depth)
    hot = np.moveaxis(rows[picked], -1, axis)
    return np.where(hot, flat[ON], flat[OFF])
