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
from dmlconform.families.index_map.pads import PadCall, pad_call
from dmlconform.families.index_map.reference import gather, moved, pad, sliced
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
        if not isinstance(sem, IndexMap) or sem.indices is None:
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
    **join_faults.FAULTS,
}
