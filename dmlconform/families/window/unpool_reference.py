"""MAX_UNPOOLING on the CPU reference: zeros, then each input value stored at
its index, one after the other in the logical input's order (so the last of
repeated indices stays: the primary reading of ``repeated-index``); an index
at or past the output's element count stores nothing.  Written plainly,
sharing with the oracle only the shape rule `families.window.unpool.operands`."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.window.semantics import Window
from dmlconform.families.window.unpool import operands
from dmlconform.spec.model import numpy_dtype


def unpool(sem: Window, case: Case, buffers: Mapping[str, np.ndarray], *, first_wins: bool = False,
           shift: int = 0) -> np.ndarray:
    """The output (its logical shape, storage type).  ``first_wins`` and
    ``shift`` (every index moved by it) are for the planted faults and the
    ``first`` reading's test: a scatter keeping the first store, an index off by ``shift``."""
    ops = operands(sem, case, buffers)
    out = np.zeros(ops.size, numpy_dtype(case.outputs[0].dtype))
    index = ops.indices + shift
    inside = (index >= 0) & (index < ops.size)
    index, values = index[inside], ops.x[inside]
    if first_wins:
        index, values = index[::-1], values[::-1]
    # numpy leaves the winner of repeated indices in one assignment open: keep each target's last store only
    _, last = np.unique(index[::-1], return_index=True)
    keep = index.size - 1 - last
    out[index[keep]] = values[keep]
    return out.reshape(ops.sizes)
