"""MAX_UNPOOLING's planted faults (issue #35 item 7), merged into
`families.window.faults.FAULTS`: each rewrites the output the reference
computed the way a plausible bug would."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.window.semantics import Window
from dmlconform.families.window.unpool import Unpooling, operands
from dmlconform.families.window.unpool_reference import unpool
from dmlconform.spec import model as m


def _fault(write: Callable[[Window, Case, Buffers], np.ndarray | None]) -> Fault:
    """A fault writing ``write``'s output (None: this case shows nothing of it) over the reference's."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Window) or sem.operation != "max_unpooling":
            return
        result = write(sem, case, buffers)
        if result is not None:
            out = case.outputs[0]
            writable_view(out, buffers[out.name])[...] = result
    return fault


def _scattered(ops: Unpooling, target: np.ndarray, dtype: np.dtype, *, add: bool = False) -> np.ndarray:
    """``ops.x`` stored (or added, ``add``) at ``target`` (flat; outside the output: dropped), zeros elsewhere."""
    out = np.zeros(ops.size, dtype)
    inside = (target >= 0) & (target < ops.size)
    if add:
        np.add.at(out, target[inside], ops.x[inside])
    else:
        out[target[inside]] = ops.x[inside]
    return out.reshape(ops.sizes)


def _summed(sem: Window, case: Case, buffers: Buffers) -> np.ndarray:
    """Repeated indices' values added (a scatter-add), not one of them stored."""
    ops = operands(sem, case, dict(buffers))
    return _scattered(ops, ops.indices, buffers[sem.output].dtype, add=True)


def _plane_index(sem: Window, case: Case, buffers: Buffers) -> np.ndarray:
    """The index read within the input element's (batch, channel) plane (as torch's max_unpool), its plane's
    offset added once more."""
    ops = operands(sem, case, dict(buffers))
    x = case.input(sem.input)
    plane = int(np.prod(ops.sizes[2:]))
    lead = np.arange(ops.x.size) // int(np.prod(x.sizes[2:]))
    return _scattered(ops, ops.indices + lead * plane, buffers[sem.output].dtype)


def _buffer_index(sem: Window, case: Case, buffers: Buffers) -> np.ndarray | None:
    """The index read as an offset into the output's strided buffer (where that is not the logical index)."""
    ops, out = operands(sem, case, dict(buffers)), case.outputs[0]
    if out.strides == tuple(int(np.prod(out.sizes[d + 1:])) for d in range(len(out.sizes))):
        return None
    coords = np.unravel_index(np.arange(ops.size), ops.sizes)
    offsets = np.dot(np.stack(coords, axis=-1), np.array(out.strides, np.int64))
    logical = np.full(int(offsets.max()) + 1, -1, np.int64)
    logical[offsets] = np.arange(ops.size)
    target = np.where(ops.indices < logical.size, logical[np.minimum(ops.indices, logical.size - 1)], -1)
    return _scattered(ops, target, buffers[sem.output].dtype)


#: The faults by name (`families.window.faults.FAULTS` holds them too).
UNPOOL_FAULTS: Mapping[str, Fault] = {
    "unpool-index-off-by-one": _fault(lambda sem, case, buffers: unpool(sem, case, buffers, shift=1)),
    "unpool-repeats-summed": _fault(_summed),
    "unpool-plane-index": _fault(_plane_index),
    "unpool-buffer-index": _fault(_buffer_index),
}
