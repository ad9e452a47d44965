"""The CPU reference of the index-map family: plain numpy in the tensor's
own type, written like the ONNX reference implementations of Gather
(``np.take``), GatherElements (``np.take_along_axis``), GatherND (a
loop over the batches, advanced indexing inside), Slice (numpy's
``start:stop:step``), Tile (``np.tile``), Pad (``np.pad``), DepthToSpace
and SpaceToDepth (reshape, transpose, reshape).

Issue #34 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  It shares nothing with the oracle but the shape rules of
`families.index_map.cases` and `families.index_map.slices` (`call_of`,
`relevant`, `slice_call`).  An
index outside its dimension is clamped into it, as the GATHER page says
DirectML's reads are ("clamped safely within the input tensor's memory").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

from dmlconform.cases.model import Case, array_tensors
from dmlconform.families.index_map import generated_reference
from dmlconform.families.index_map.blocks import BlockCall, block_call
from dmlconform.families.index_map.cases import Call, call_of, relevant, semantics_of
from dmlconform.families.index_map.joins import array_name, is_join, join_call
from dmlconform.families.index_map.nonzero_reference import nonzero
from dmlconform.families.index_map.onehot_reference import one_hot
from dmlconform.families.index_map.pads import PadCall, pad_call
from dmlconform.families.index_map.scatter_reference import scatter
from dmlconform.families.index_map.scatters import scatter_call
from dmlconform.families.index_map.semantics import IndexMap, Operation
from dmlconform.families.index_map.slices import SliceCall, slice_call
from dmlconform.families.index_map.tiles import repeats_of
from dmlconform.spec.model import Spec


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)  # the cpu backend dispatches here only for such specs
    if sem.operation.is_generated:
        return generated_reference.compute(sem, case, buffers)
    if is_join(sem):
        return joined(sem, case, buffers)
    x = case.input(sem.input).view(buffers.get(sem.input))
    out = next(t for t in case.outputs if t.name == sem.output)
    if sem.operation is Operation.NONZERO:  # nonzero_reference.py
        count = next(t for t in case.outputs if t.name == sem.count)
        counted, rows = nonzero(np.array(x), out.sizes, count.sizes)
        return {count.name: counted, sem.output: rows}
    if sem.operation is Operation.TILE:
        return {sem.output: np.tile(x, repeats_of(sem, case.attribute_map()))}
    if sem.operation is Operation.PAD:
        return {sem.output: pad(pad_call(sem, case.attribute_map()), np.array(x))}
    if sem.operation in (Operation.DEPTH_TO_SPACE, Operation.SPACE_TO_DEPTH):
        return {sem.output: np.array(moved(block_call(sem, case.attribute_map()), x))}
    if sem.indices is None:
        return {sem.output: np.array(sliced(slice_call(sem, case.attribute_map()), x, out.sizes))}
    idx = case.input(sem.indices).view(buffers.get(sem.indices))
    if sem.operation is Operation.ONE_HOT:  # onehot_reference.py
        return {sem.output: one_hot(int(case.attribute_map().get(sem.axis or "Axis", 0)), idx, x, out.sizes)}
    if sem.operation.is_scatter:  # scatter_reference.py
        updates = case.input(sem.updates or "UpdatesTensor").view(buffers.get(sem.updates or "UpdatesTensor"))
        return {sem.output: scatter(scatter_call(sem, case.attribute_map()), x, idx, updates)}
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


#: The pages' padding modes as numpy's (its reflect leaves the edge out, symmetric repeats it).
_NUMPY_MODES: dict[str, Literal["edge", "reflect", "symmetric"]] = {
    "EDGE": "edge", "REFLECTION": "reflect", "SYMMETRIC": "symmetric"}


def pad(call: PadCall, x: np.ndarray) -> np.ndarray:
    """``np.pad`` of ``x`` with the call's paddings: the constant as the
    desc holds it in the tensor's type (PADDING's FLOAT as a float32 first,
    C's conversion to an integer type truncating), or numpy's mode of the
    same name.  numpy's reflect pads a one-element dimension with that
    element, and folds paddings beyond a dimension over and over."""
    widths = list(zip(call.start, call.end))
    if call.mode != "CONSTANT":
        return np.pad(x, widths, mode=_NUMPY_MODES[call.mode])
    value = np.array(call.value, dtype=x.dtype) if call.value_type is not None else \
        np.float32(call.value).astype(x.dtype)
    return np.pad(x, widths, mode="constant", constant_values=value)


def moved(call: BlockCall, x: np.ndarray) -> np.ndarray:
    """DepthToSpace or SpaceToDepth as the ONNX reference writes them: the
    depth version's channels split into (b, b, C) for DCR or (C, b, b) for
    CRD, the space version's height and width into (H, b) and (W, b),
    transposed from one to the other."""
    n, c, h, w = x.shape
    b = call.block
    if call.to_space:
        if call.order == "DCR":
            y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        return y.reshape(n, c // (b * b), h * b, w * b)
    y = x.reshape(n, c, h // b, b, w // b, b)
    y = y.transpose(0, 3, 5, 1, 2, 4) if call.order == "DCR" else y.transpose(0, 1, 3, 5, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


def joined(sem: IndexMap, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """JOIN as ``np.concatenate`` of the inputs in the array's order along
    Axis; SPLIT as ``np.split`` of the input at the outputs' sizes added up."""
    call = join_call(sem, case)
    if call.join:
        parts = [t.view(buffers.get(t.name)) for t in array_tensors(case.inputs, array_name(sem))]
        return {sem.output: np.concatenate(parts, axis=call.axis)}
    x = case.input(sem.input).view(buffers.get(sem.input))
    outputs = array_tensors(case.outputs, array_name(sem))
    cuts = np.cumsum([t.sizes[call.axis] for t in outputs])[:-1]
    return {t.name: np.array(part) for t, part in zip(outputs, np.split(x, cuts, axis=call.axis))}
