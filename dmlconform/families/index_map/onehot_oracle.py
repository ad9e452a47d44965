"""ONE_HOT's index map, for the family's oracle (`families.index_map.oracle`):
each output element is the values tensor's element OnValue (C-order
position 1) where its coordinate on Axis is the index of its sequence,
else OffValue (position 0).

From the coordinates alone (the CPU reference builds rows of an identity
matrix instead): an index of a signed type below 0 counts from the end of
the sequence (FL 3_0); one at or past the depth (the page: "that index
value is ignored, and all elements in that sequence will be set to
OffValue"), or below -depth (silent: read as ignored too; such cases are
negative), leaves its sequence all OffValue.
"""

from __future__ import annotations

import numpy as np

from dmlconform.families.index_map.onehot import OFF, ON


def onehot_positions(axis: int, indices: np.ndarray, output_sizes: tuple[int, ...]) -> np.ndarray:
    """Per output element, the C-order position in the values tensor of
    the value it holds (`OFF` or `ON`)."""
    depth = output_sizes[axis]
    coordinate = np.indices(output_sizes, sparse=True)[axis]
    if indices.dtype.kind == "u":
        picked = np.where(indices < np.uint64(depth), indices, np.uint64(depth)).astype(np.int64)
    else:
        wide = indices.astype(np.int64)
        picked = np.where(wide < 0, wide + depth, wide)
    return np.where(coordinate == picked, ON, OFF)


def onehot_expected(axis: int, indices: np.ndarray, values: np.ndarray, output_sizes: tuple[int, ...]) -> np.ndarray:
    """The output (its sizes, the values' type)."""
    return np.ascontiguousarray(values).reshape(-1)[onehot_positions(axis, indices, output_sizes)]
