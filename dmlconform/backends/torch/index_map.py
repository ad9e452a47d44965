"""The index-map family's gathers as torch calls (issue #34 item 5),
merged into the torch backend's `TORCH_OPS`.

* GATHER: advanced indexing with one index tensor at Axis
  (``x[:, ..., idx]``): torch places the indices' sizes there, as the page
  does before right alignment, and counts negative indices from the end.
* GATHER_ELEMENTS: ``torch.gather`` along Axis.  It does not count negative
  indices from the end (it raises): the adapter adds the axis size to a
  negative one first, as a DirectML implementation over torch would (so
  torch is not what is tested on negative indices there); unsigned
  tensors, which it has no kernel for, through a signed view of their bits.
* GATHER_ND, GATHER_ND1: torch has no gather_nd; advanced indexing with one
  index tensor per tuple coordinate (and the batch's position) is the same
  function, negative indices included.

* SLICE, SLICE1: ``narrow`` from the copy's start and a step slice per
  dimension, a negative stride on the flipped dimension (torch has no
  negative step); a stride of 0 (SLICE's ``stride-zero``) NOT_SUPPORTED.

* TILE: ``Tensor.repeat``, which tiles the whole as the page's example does.

Indices become int64 (every value kept).  An index outside its dimension
is an error to torch (on CUDA a device assert, which ends the process's
context): such a case is NOT_SUPPORTED before any kernel runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.backends.torch import index_map_blocks, index_map_joins, index_map_pads
from dmlconform.backends.torch import nonzero as torch_nonzero
from dmlconform.backends.torch import onehot as torch_onehot
from dmlconform.backends.torch import scatters as torch_scatters
from dmlconform.families.index_map.cases import relevant, right_aligned
from dmlconform.families.index_map.slices import SliceCall, numbers

_INPUTS = ("InputTensor", "IndicesTensor")
#: torch.gather and flip have no unsigned kernels (2.13: "not implemented for 'UInt32'"): those
#: tensors move through a signed view of the same bits (a gather moves bits, whatever their type).
_SIGNED_VIEW = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}


def _indices(t: Any, idx: Any, sizes: Any) -> Any:
    """``idx`` as int64, after checking each lies inside its dimension of
    ``sizes`` (a number, or a tensor broadcast over the last dimension);
    NotSupportedError otherwise."""
    wide = idx.to(t.float64)
    low = -sizes if idx.dtype.is_signed else 0
    if not bool(((wide >= low) & (wide < sizes)).all()):
        raise NotSupportedError("an index outside its dimension: torch raises, where the GATHER page asks for no "
                                "failure (and the others are silent)")
    return idx.to(t.int64)


def _gather(t: Any, xs: list[Any], a: Attrs) -> Any:
    x, idx = xs
    axis, k = int(a.raw("Axis") or 0), int(a.raw("IndexDimensions") or 0)
    shaped = _indices(t, idx, x.shape[axis]).reshape(relevant(tuple(idx.shape), k))
    y = x[(slice(None),) * axis + (shaped,)]
    return y.reshape(right_aligned(tuple(y.shape), x.dim()))


def _gather_elements(t: Any, xs: list[Any], a: Attrs) -> Any:
    x, idx = xs
    axis = int(a.raw("Axis") or 0)
    wide = _indices(t, idx, x.shape[axis])
    return _signed(t, x, lambda data: t.gather(data, axis, t.where(wide < 0, wide + x.shape[axis], wide)))


def _signed(t: Any, x: Any, move: Any) -> Any:
    """``move(x)`` through a signed view of an unsigned ``x``'s bits, viewed back (`_SIGNED_VIEW`)."""
    signed = _SIGNED_VIEW.get(str(x.dtype).removeprefix("torch."))
    return move(x.view(getattr(t, signed))).view(x.dtype) if signed else move(x)


def _gather_nd(t: Any, xs: list[Any], a: Attrs) -> Any:
    x, idx = xs
    r_in, r_idx = int(a.raw("InputDimensionCount") or 0), int(a.raw("IndicesDimensionCount") or 0)
    b = int(a.raw("BatchDimensionCount") or 0)
    data = x.reshape(relevant(tuple(x.shape), r_in))
    tuples = idx.reshape(relevant(tuple(idx.shape), r_idx))
    q = tuples.shape[-1]
    bounds = t.tensor(data.shape[b:b + q], dtype=t.float64, device=x.device)
    tuples = _indices(t, tuples, bounds)
    batch = [t.arange(n, device=x.device).reshape((1,) * i + (n,) + (1,) * (tuples.dim() - 2 - i))
             for i, n in enumerate(data.shape[:b])]
    y = data[tuple(batch) + tuple(tuples[..., j] for j in range(q))]
    return y.reshape(right_aligned(tuple(y.shape), x.dim()))


def _slice(window: bool) -> Any:
    names = ("InputWindowOffsets", "InputWindowSizes", "InputWindowStrides") if window else \
        ("Offsets", "Sizes", "Strides")

    def call(t: Any, xs: list[Any], a: Attrs) -> Any:
        (x,) = xs
        found = SliceCall(window, *(numbers(a.raw(n), n) for n in names))
        a.raw("DimensionCount")
        if 0 in found.strides:
            raise NotSupportedError("a stride of 0: torch slices take steps of 1 or more")
        return _signed(t, x, lambda data: _steps(data, found, a.output_sizes[0]))
    return call


def _steps(x: Any, call: SliceCall, sizes: tuple[int, ...]) -> Any:
    """``x`` sliced dimension by dimension: narrowed from the copy's start,
    every |stride|-th element; a negative stride on the flipped dimension
    (torch has no negative step) from the mirrored start.  ``sizes``: the
    output's (SLICE1's may take fewer elements than its window holds)."""
    y = x
    for d, (start, step, n) in enumerate(zip(call.starts(), call.strides, sizes)):
        if step < 0:
            y, start = y.flip(d), x.shape[d] - 1 - start
        y = y.narrow(d, start, abs(step) * (n - 1) + 1)[(slice(None),) * d + (slice(None, None, abs(step)),)]
    return y


def _tile(t: Any, xs: list[Any], a: Attrs) -> Any:
    (x,) = xs
    a.raw("RepeatsCount")
    return x.repeat(*numbers(a.raw("Repeats"), "Repeats"))


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "GATHER": {"fn": _gather, "inputs": _INPUTS, "note": "advanced indexing at Axis (negative indices from the end)"},
    "GATHER_ELEMENTS": {"fn": _gather_elements, "inputs": _INPUTS,
                        "note": "torch.gather; a negative index made positive first (torch.gather raises on it)"},
    "GATHER_ND": {"fn": _gather_nd, "inputs": _INPUTS, "note": "advanced indexing, one index per tuple coordinate"},
    "GATHER_ND1": {"fn": _gather_nd, "inputs": _INPUTS,
                   "note": "advanced indexing, the batch's position and one index per tuple coordinate"},
    "SLICE": {"fn": _slice(False), "note": "narrow and a step slice per dimension; a stride of 0 NOT_SUPPORTED"},
    "SLICE1": {"fn": _slice(True), "note": "narrow and a step slice per dimension, flipped for a negative stride"},
    "TILE": {"fn": _tile, "note": "Tensor.repeat (numpy's tile, as the page's example)"},
    **index_map_pads.TORCH_OPS,
    **index_map_blocks.TORCH_OPS,
    **index_map_joins.TORCH_OPS,
}
TORCH_OPS = {**TORCH_OPS, **torch_scatters.TORCH_OPS, **torch_onehot.TORCH_OPS,
             **torch_nonzero.TORCH_OPS}  # scatters.py, onehot.py, nonzero.py
