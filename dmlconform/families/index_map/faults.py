"""Planted faults of the index-map family for the ``faulty`` backend (issue
#34 item 7): each recomputes a gather's or a slice's output the way a
plausible bug would, after the reference computed it.  `FAULTS` names them;
tests/test_mutants.py checks that each is caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.index_map import join_faults
from dmlconform.families.index_map.blocks import block_call
from dmlconform.families.index_map.cases import Call, call_of, relevant
from dmlconform.families.index_map.generated_faults import FAULTS as GENERATED_FAULTS
from dmlconform.families.index_map.nonzero_reference import nonzero
from dmlconform.families.index_map.onehot_reference import one_hot
from dmlconform.families.index_map.pads import PadCall, pad_call
from dmlconform.families.index_map.reference import gather, moved, pad, sliced
from dmlconform.families.index_map.scatter_reference import scatter
from dmlconform.families.index_map.scatters import ScatterCall, scatter_call
from dmlconform.families.index_map.semantics import IndexMap, Operation
from dmlconform.families.index_map.slices import SliceCall, slice_call
from dmlconform.families.index_map.tiles import repeats_of
from dmlconform.spec import model as m

#: (the call, the indices as read) -> the call and indices a bug uses instead.
_Bug = Callable[[Call, np.ndarray, tuple[int, ...]], tuple[Call, np.ndarray]]


def _planted(bug: _Bug) -> Fault:
    """A fault that recomputes the output with ``bug`` applied to the call
    and the indices (a result of another element count is cycled to the
    output's: the garbage such a bug writes)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, IndexMap) or sem.indices is None or sem.operation.is_scatter:
            return
        x = case.input(sem.input).view(buffers[sem.input])
        idx = np.array(case.input(sem.indices).view(buffers[sem.indices]))
        call, idx = bug(call_of(sem, case), idx, x.shape)
        out = next(t for t in case.outputs if t.name == sem.output)
        try:
            wrong = gather(call, x, idx)
        except (ValueError, IndexError):  # the bug's call has no result here (indices of another shape)
            return
        writable_view(out, buffers[sem.output])[...] = np.resize(wrong, out.sizes)
    return fault


def _not_wrapped(call: Call, idx: np.ndarray, sizes: tuple[int, ...]) -> tuple[Call, np.ndarray]:
    """A negative index read as 0 (clamped, not counted from the end)."""
    return call, np.maximum(idx, 0) if idx.dtype.kind == "i" else idx


def _axis_zero(call: Call, idx: np.ndarray, sizes: tuple[int, ...]) -> tuple[Call, np.ndarray]:
    """Axis ignored: every gather along dimension 0."""
    return replace(call, axis=0), idx


def _last_unreachable(call: Call, idx: np.ndarray, sizes: tuple[int, ...]) -> tuple[Call, np.ndarray]:
    """An off-by-one bound: an index of the last element (size - 1, or -1)
    taken as outside and clamped to the one before it."""
    if call.operation is Operation.GATHER_ND:  # each tuple coordinate against its own dimension
        size: int | np.ndarray = np.array(relevant(sizes, call.input_rank)[call.batch:call.batch + idx.shape[-1]])
    else:
        size = sizes[call.axis]
    wide = idx.astype(np.int64) if idx.dtype.kind == "i" else np.minimum(idx, np.uint64(2 ** 62)).astype(np.int64)
    last = (wide == size - 1) | (wide == -1)
    return call, np.where(last, size - 2, wide).astype(idx.dtype)


def _batch_ignored(call: Call, idx: np.ndarray, sizes: tuple[int, ...]) -> tuple[Call, np.ndarray]:
    """GATHER_ND1's BatchDimensionCount ignored: the tuples index the first
    dimensions that count, as GATHER_ND's do."""
    if call.operation is not Operation.GATHER_ND or not call.batch:
        return call, idx
    return replace(call, batch=0), idx


def _low_32_bits(call: Call, idx: np.ndarray, sizes: tuple[int, ...]) -> tuple[Call, np.ndarray]:
    """A 64-bit index read as its low 32 bits, unsigned (-1 becomes 2^32 - 1)."""
    if idx.dtype.itemsize != 8:
        return call, idx
    return call, idx.view(np.uint64) & np.uint64(0xFFFFFFFF)


#: (a slice's call, the output's sizes) -> the call a bug uses instead.
_SliceBug = Callable[[SliceCall, tuple[int, ...]], SliceCall]


def _planted_slice(bug: _SliceBug) -> Fault:
    """A fault that recomputes a slice's output with ``bug`` applied to its attributes."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, IndexMap) or not sem.operation.is_slice:
            return
        x = case.input(sem.input).view(buffers[sem.input])
        out = next(t for t in case.outputs if t.name == sem.output)
        call = bug(slice_call(sem, case.attribute_map()), out.sizes)
        writable_view(out, buffers[sem.output])[...] = sliced(call, x, out.sizes)
    return fault


def _near_end(call: SliceCall, sizes: tuple[int, ...]) -> SliceCall:
    """A negative stride's copy started at the far end of what the output
    reaches from the offset, not at the window's: the positive-stride
    selection, reversed (the window's own far end ignored)."""
    if not call.window:
        return call
    counts = tuple(n if s > 0 else (k - 1) * -s + 1 for n, s, k in zip(call.sizes, call.strides, sizes))
    return replace(call, sizes=counts)


def _unit_strides(call: SliceCall, sizes: tuple[int, ...]) -> SliceCall:
    """Strides read as +-1 (their magnitude ignored)."""
    return replace(call, strides=tuple((s > 0) - (s < 0) for s in call.strides))


def tile_each_element_repeated(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """TILE read as its first sentence might be: each element repeated in
    place (``np.repeat``: 1 1 2 2 3 3) where the page's example tiles the
    whole (1 2 3 1 2 3)."""
    sem = spec.semantics
    if not isinstance(sem, IndexMap) or sem.operation is not Operation.TILE:
        return
    y = np.array(case.input(sem.input).view(buffers[sem.input]))
    for d, r in enumerate(repeats_of(sem, case.attribute_map())):
        y = np.repeat(y, r, axis=d)
    out = next(t for t in case.outputs if t.name == sem.output)
    writable_view(out, buffers[sem.output])[...] = y


#: (a padding's call) -> the call a bug uses instead.
_PadBug = Callable[[PadCall], PadCall]


def _planted_pad(bug: _PadBug) -> Fault:
    """A fault that recomputes a padding's output with ``bug`` applied to its attributes."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, IndexMap) or sem.operation is not Operation.PAD:
            return
        x = np.array(case.input(sem.input).view(buffers[sem.input]))
        out = next(t for t in case.outputs if t.name == sem.output)
        writable_view(out, buffers[sem.output])[...] = pad(bug(pad_call(sem, case.attribute_map())), x)
    return fault


def _mirrors_swapped(call: PadCall) -> PadCall:
    """REFLECTION computed as SYMMETRIC and SYMMETRIC as REFLECTION (the edge repeated where it must not be)."""
    swap = {"REFLECTION": "SYMMETRIC", "SYMMETRIC": "REFLECTION"}
    return replace(call, mode=swap.get(call.mode, call.mode))


def _ends_swapped(call: PadCall) -> PadCall:
    """StartPadding read as EndPadding and the other way round."""
    return replace(call, start=call.end, end=call.start)


def depth_space_order_swapped(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """A depth/space move with DCR and CRD swapped (the depth version's
    channels read as (Channels, BlockHeight, BlockWidth) where they are
    (BlockHeight, BlockWidth, Channels), and the other way round)."""
    sem = spec.semantics
    if not isinstance(sem, IndexMap) or sem.operation not in (Operation.DEPTH_TO_SPACE, Operation.SPACE_TO_DEPTH):
        return
    call = block_call(sem, case.attribute_map())
    x = np.array(case.input(sem.input).view(buffers[sem.input]))
    out = next(t for t in case.outputs if t.name == sem.output)
    writable_view(out, buffers[sem.output])[...] = moved(replace(call, order="CRD" if call.order == "DCR" else "DCR"), x)
#: (a scatter's call, the indices as read) -> the call and indices a bug uses instead.
_ScatterBug = Callable[[ScatterCall, np.ndarray], tuple[ScatterCall, np.ndarray]]


def _planted_scatter(bug: _ScatterBug) -> Fault:
    """A fault that recomputes a scatter's output with ``bug`` applied to
    its call and indices (none where the bug's call has no result)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, IndexMap) or not sem.operation.is_scatter:
            return
        x, idx, upd = (case.input(n).view(buffers[n]) for n in (sem.input, sem.indices or "", sem.updates or ""))
        call, idx = bug(scatter_call(sem, case.attribute_map()), np.array(idx))
        try:
            wrong = scatter(call, x, idx, upd)
        except (ValueError, IndexError):  # the indices do not fit the bug's axis
            return
        writable_view(case.outputs[0], buffers[sem.output])[...] = wrong
    return fault


def _next_axis(call: ScatterCall, idx: np.ndarray) -> tuple[ScatterCall, np.ndarray]:
    """SCATTER written along the next axis (the last: the first), not Axis."""
    return (call, idx) if call.nd else (replace(call, axis=(call.axis + 1) % idx.ndim), idx)


def _scatter_not_wrapped(call: ScatterCall, idx: np.ndarray) -> tuple[ScatterCall, np.ndarray]:
    """A negative index written at 0 (clamped, not counted from the end)."""
    return call, np.maximum(idx, 0) if idx.dtype.kind == "i" else idx


def _tuple_reversed(call: ScatterCall, idx: np.ndarray) -> tuple[ScatterCall, np.ndarray]:
    """SCATTER_ND's tuple read last coordinate first."""
    return (call, idx[..., ::-1]) if call.nd else (call, idx)


def _planted_onehot(bug: Callable[[np.ndarray], np.ndarray]) -> Fault:
    """A fault that recomputes ONE_HOT's output from the indices as ``bug`` reads them."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, IndexMap) or sem.operation is not Operation.ONE_HOT:
            return
        idx = np.array(case.input(sem.indices or "").view(buffers[sem.indices or ""]))
        values = case.input(sem.input).view(buffers[sem.input])
        axis = int(case.attribute_map().get(sem.axis or "Axis", 0))
        out = case.outputs[0]
        writable_view(out, buffers[sem.output])[...] = one_hot(axis, bug(idx), values, out.sizes)
    return fault


def _one_past(idx: np.ndarray) -> np.ndarray:
    """An off-by-one: OnValue one element further along the sequence (a 1-based index)."""
    return np.where(idx == np.iinfo(idx.dtype).max, idx, idx + idx.dtype.type(1))


def _onehot_not_wrapped(idx: np.ndarray) -> np.ndarray:
    """A negative index taken as outside the sequence (all OffValue), not counted from the end."""
    return np.where(idx < 0, np.iinfo(idx.dtype).min, idx) if idx.dtype.kind == "i" else idx


def _planted_nonzero(bug: Callable[[np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray]]) -> Fault:
    """A fault that rewrites NONZERO_COORDINATES' outputs with ``bug``
    (the input, the rows (M x N), the count -> the count and rows it writes)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, IndexMap) or sem.operation is not Operation.NONZERO:
            return
        x = np.array(case.input(sem.input).view(buffers[sem.input]))
        count, coords = (next(t for t in case.outputs if t.name == n) for n in (sem.count, sem.output))
        counted, rows = nonzero(x, coords.sizes, count.sizes)
        n = coords.sizes[-1]
        found, wrong = bug(x, rows.reshape(-1, n), int(counted.reshape(-1)[0]))
        writable_view(count, buffers[count.name])[...] = found
        writable_view(coords, buffers[coords.name])[...] = wrong.reshape(coords.sizes)
    return fault


def _column_major(x: np.ndarray, rows: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The coordinates ordered by their last dimension first (column-major), not by element index."""
    order = np.lexsort(rows[:count].T)  # lexsort's last key (the last column) is the primary one
    out = rows.copy()
    out[:count] = rows[:count][order]
    return np.array(count), out


def _negative_zero_counted(x: np.ndarray, rows: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """-0 taken as non-zero (a test of the bits, not of the value)."""
    if x.dtype.kind != "f":
        return np.array(count), rows
    n = rows.shape[1]
    marked = np.where((x == 0) & np.signbit(x), 1, x)
    counted, found = nonzero(marked, (x.size, n), (1,))
    return counted.reshape(()), found


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "gather-negative-index-not-wrapped": _planted(_not_wrapped),
    "gather-axis-ignored": _planted(_axis_zero),
    "gather-last-index-unreachable": _planted(_last_unreachable),
    "gather-batch-ignored": _planted(_batch_ignored),
    "gather-64-bit-index-truncated": _planted(_low_32_bits),
    "slice-negative-stride-near-end": _planted_slice(_near_end),
    "slice-stride-magnitude-ignored": _planted_slice(_unit_strides),
    "tile-each-element-repeated": tile_each_element_repeated,
    "padding-reflection-symmetric-swapped": _planted_pad(_mirrors_swapped),
    "padding-start-end-swapped": _planted_pad(_ends_swapped),
    "depth-space-order-swapped": depth_space_order_swapped,
    "scatter-wrong-axis": _planted_scatter(_next_axis),
    "scatter-negative-index-not-wrapped": _planted_scatter(_scatter_not_wrapped),
    "scatter-nd-tuple-reversed": _planted_scatter(_tuple_reversed),
    "one-hot-off-by-one": _planted_onehot(_one_past),
    "one-hot-negative-index-not-wrapped": _planted_onehot(_onehot_not_wrapped),
    "nonzero-coordinates-wrong-order": _planted_nonzero(_column_major),
    "nonzero-negative-zero-counted": _planted_nonzero(_negative_zero_counted),
    **GENERATED_FAULTS,
    **join_faults.FAULTS,
}
