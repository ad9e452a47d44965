"""The index-map family's scatters as torch calls (issue #34 item 5),
merged into `backends.torch.index_map.TORCH_OPS`.

* SCATTER: ``torch.scatter`` along Axis (out of place).  It does not count
  negative indices from the end (it raises): the adapter adds the axis
  size to a negative one first, as a DirectML implementation over torch
  would; unsigned tensors, which it has no kernel for, through a signed
  view of their bits.
* SCATTER_ND: ``Tensor.index_put`` with one index tensor per tuple
  coordinate over the dimensions that count (negative ones from the end).

Indices become int64.  An index outside its dimension is an error to torch
(on CUDA a device assert): such a case, outside the pages' domain, is
NOT_SUPPORTED before any kernel runs.  Where several updates write one
element torch gives no winner either (its CPU loops keep the last): the
oracle accepts each colliding update and reports which (``duplicate-index``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.families.index_map.scatters import last

_INPUTS = ("InputTensor", "IndicesTensor", "UpdatesTensor")
_SIGNED_VIEW = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}


def _inside(t: Any, idx: Any, sizes: Any) -> Any:
    """``idx`` as int64, negative ones plus ``sizes``, after checking each
    lies inside its dimension; NotSupportedError otherwise."""
    wide = idx.to(t.float64)
    low = -sizes if idx.dtype.is_signed else 0
    if not bool(((wide >= low) & (wide < sizes)).all()):
        raise NotSupportedError("an index outside its dimension: torch raises (the scatter pages are silent)")
    found = idx.to(t.int64)
    return t.where(found < 0, found + sizes.to(t.int64) if isinstance(sizes, t.Tensor) else found + sizes, found)


def _bits(t: Any, x: Any) -> Any:
    """A signed view of an unsigned ``x``'s bits (torch's scatter kernels have no unsigned ones)."""
    signed = _SIGNED_VIEW.get(str(x.dtype).removeprefix("torch."))
    return x.view(getattr(t, signed)) if signed else x


def _scatter(t: Any, xs: list[Any], a: Attrs) -> Any:
    x, idx, upd = xs
    axis = int(a.raw("Axis") or 0)
    found = _inside(t, idx, x.shape[axis])
    return t.scatter(_bits(t, x), axis, found, _bits(t, upd)).view(x.dtype)


def _scatter_nd(t: Any, xs: list[Any], a: Attrs) -> Any:
    x, idx, upd = xs
    r_in, r_idx = int(a.raw("InputDimensionCount") or 0), int(a.raw("IndicesDimensionCount") or 0)
    data = _bits(t, x).reshape(last(tuple(x.shape), r_in))
    tuples = idx.reshape(last(tuple(idx.shape), r_idx))
    q = tuples.shape[-1]
    bounds = t.tensor(data.shape[:q], dtype=t.float64, device=x.device)
    tuples = _inside(t, tuples, bounds)
    block = _bits(t, upd).reshape(tuple(tuples.shape[:-1]) + tuple(data.shape[q:]))
    y = data.index_put(tuple(tuples[..., j] for j in range(q)), block)
    return y.reshape(x.shape).view(x.dtype)


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.index_map.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "SCATTER": {"fn": _scatter, "inputs": _INPUTS,
                "note": "torch.scatter; a negative index made positive first (torch.scatter raises on it)"},
    "SCATTER_ND": {"fn": _scatter_nd, "inputs": _INPUTS, "note": "index_put, one index per tuple coordinate"},
}
