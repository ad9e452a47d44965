"""The CPU reference of the index-map family: plain numpy in the tensor's
own type, written like the ONNX reference implementations of Gather
(``np.take``), GatherElements (``np.take_along_axis``) and GatherND (a
loop over the batches, advanced indexing inside).

Issue #34 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  It shares nothing with the oracle but the shape rules of
`families.index_map.cases` (`call_of`, `relevant`, `right_aligned`).  An
index outside its dimension is clamped into it, as the GATHER page says
DirectML's reads are ("clamped safely within the input tensor's memory").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.index_map.cases import Call, call_of, relevant, semantics_of
from dmlconform.families.index_map.semantics import Operation
from dmlconform.spec.model import Spec


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output of ``case`` in its storage type and logical shape, a new array."""
    sem = semantics_of(spec)  # the cpu backend dispatches here only for such specs
    x = case.input(sem.input).view(buffers.get(sem.input))
    idx = case.input(sem.indices).view(buffers.get(sem.indices))
    out = next(t for t in case.outputs if t.name == sem.output)
    return {sem.output: gather(call_of(sem, case), x, idx).reshape(out.sizes)}


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
