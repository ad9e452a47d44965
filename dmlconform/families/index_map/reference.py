"""The CPU reference of the index-map family: plain numpy in the tensor's
own type, written like the ONNX reference implementations of Gather
(``np.take``), GatherElements (``np.take_along_axis``), GatherND (a
loop over the batches, advanced indexing inside), Slice (numpy's
``start:stop:step``) and Tile (``np.tile``).

Issue #34 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  It shares nothing with the oracle but the shape rules of
`families.index_map.cases` and `families.index_map.slices` (`call_of`,
`relevant`, `slice_call`).  An
index outside its dimension is clamped into it, as the GATHER page says
DirectML's reads are ("clamped safely within the input tensor's memory").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.index_map import generated_reference
from dmlconform.families.index_map.cases import Call, call_of, relevant, semantics_of
from dmlconform.families.index_map.semantics import Operation
from dmlconform.families.index_map.slices import SliceCall, slice_call
from dmlconform.families.index_map.tiles import repeats_of
from dmlconform.spec.model import Spec


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)  # the cpu backend dispatches here only for such specs
    if sem.operation.is_generated:
        return generated_reference.compute(sem, case, buffers)
    x = case.input(sem.input).view(buffers.get(sem.input))
    out = next(t for t in case.outputs if t.name == sem.output)
    if sem.operation is Operation.TILE:
        return {sem.output: np.tile(x, repeats_of(sem, case.attribute_map()))}
    if sem.indices is None:
        return {sem.output: np.array(sliced(slice_call(sem, case.attribute_map()), x, out.sizes))}
    idx = case.input(sem.indices).view(buffers.get(sem.indices))
    return {sem.output: gather(call_of(sem, case), x, idx).reshape(out.sizes)}


def sliced(call: SliceCall, x: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """``x[start:stop:step]`` in each dimension, as numpy slices it (a
    negative step from the window's last element down), its first
    ``sizes`` elements (SLICE1's output may take fewer than the window
    holds); a step of 0 repeats the offset's element."""
    picks = []
    for offset, count, step in zip(call.offsets, call.sizes, call.strides):
        if step == 0:  # SLICE's `stride-zero`: the offset's element, repeated below
            picks.append(slice(offset, offset + 1))
        elif step > 0:
            stop = offset + (count - 1) * step + 1 if not call.window else offset + count
            picks.append(slice(offset, stop, step))
        else:
            last = offset + count - 1
            picks.append(slice(last, offset - 1 if offset > 0 else None, step))
    y = x[tuple(picks)]
    return np.broadcast_to(y[tuple(slice(0, n) for n in sizes)], sizes)


def clamped(idx: np.ndarray, size: int) -> np.ndarray:
    """Indices as int64 in [0, size): negative ones of a signed type from
    the end, those still outside clamped to the nearest end."""
    if idx.dtype.kind == "u":
        return np.minimum(idx, np.uint64(max(size - 1, 0))).astype(np.int64)
    wide = idx.astype(np.int64)
    return np.clip(np.where(wide < 0, wide + size, wide), 0, max(size - 1, 0))


def gather(call: Call, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The operation's result, in the shape numpy gives it (the caller fits it to the output's sizes)."""
    if call.operation is Operation.GATHER:
        k = call.index_dimensions
        shaped = idx.reshape(relevant(idx.shape, k))
        return np.take(x, clamped(shaped, x.shape[call.axis]), axis=call.axis)
    if call.operation is Operation.GATHER_ELEMENTS:
        return np.take_along_axis(x, clamped(idx, x.shape[call.axis]), axis=call.axis)
    return gather_nd(x.reshape(relevant(x.shape, call.input_rank)),
                     idx.reshape(relevant(idx.shape, call.indices_rank)), call.batch)


def gather_nd(data: np.ndarray, idx: np.ndarray, batch: int) -> np.ndarray:
    """ONNX GatherND with ``batch`` batch dimensions: for each batch, the
    sub-blocks of ``data`` the index tuples (the last dimension of ``idx``) pick."""
    q = idx.shape[-1]
    lead = data.shape[:batch]
    count = int(np.prod(lead, dtype=np.int64))
    blocks = data.reshape((count,) + data.shape[batch:])
    tuples = idx.reshape((count, -1, q))
    results = []
    for b in range(count):
        picks = tuple(clamped(tuples[b, :, j], data.shape[batch + j]) for j in range(q))
        results.append(blocks[b][picks])
    return np.stack(results).reshape(idx.shape[:-1] + data.shape[batch + q:])
