"""The CPU reference of the scatters, plain numpy in the tensor's own type,
written like the ONNX reference implementations: ScatterElements
(``np.put_along_axis`` on a copy of the input) and ScatterND (fancy-index
assignment of each index tuple's block).  Where several updates write one
element, numpy's assignment keeps the last (the SCATTER page's Example 1
prints the same).  An index outside its dimension is clamped into it (a
write that stays inside the output, as DirectML's reads are "clamped
safely").  It shares nothing with the oracle but the shape rules of
`families.index_map.scatters`.
"""

from __future__ import annotations

import numpy as np

from dmlconform.families.index_map.scatters import ScatterCall, last


def wrapped(idx: np.ndarray, size: np.ndarray | int) -> np.ndarray:
    """Indices as int64 in [0, size): a signed type's negative ones plus
    ``size``, then whatever is still outside clamped to the nearest end."""
    if idx.dtype.kind == "u":
        return np.minimum(idx, np.asarray(size, dtype=np.uint64) - np.uint64(1)).astype(np.int64)
    wide = idx.astype(np.int64)
    wide = np.where(wide < 0, wide + size, wide)
    return np.clip(wide, 0, np.asarray(size) - 1)


def scatter(call: ScatterCall, x: np.ndarray, idx: np.ndarray, updates: np.ndarray) -> np.ndarray:
    """The scatter's output: a copy of ``x`` with ``updates`` written (the
    indices and updates made C-contiguous first: numpy writes in memory
    order, and the last write in C order must win)."""
    out = np.array(x)
    idx, updates = np.ascontiguousarray(idx), np.ascontiguousarray(updates)
    if not call.nd:
        np.put_along_axis(out, wrapped(idx, x.shape[call.axis]), updates, axis=call.axis)
        return out
    data = out.reshape(last(x.shape, call.input_rank))
    tuples = idx.reshape(last(idx.shape, call.indices_rank))
    q = tuples.shape[-1]
    coords = wrapped(tuples, np.array(data.shape[:q]))
    block = updates.reshape(tuples.shape[:-1] + data.shape[q:])
    data[tuple(coords[..., j] for j in range(q))] = block
    return out
