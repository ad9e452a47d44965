"""The index-map family's generated operations as torch calls (issue #34
item 5), merged into the torch backend's `TORCH_OPS`:

* CAST: ``Tensor.to(dtype)`` (C++ casts: one of the readings of
  `families.index_map.conversions`).
* FILL_VALUE_CONSTANT: ``torch.full`` with the Value in the output's type.
* FILL_VALUE_SEQUENCE: integers ``torch.arange(start, limit, step)`` in the
  output's type; floats ``torch.arange(n)`` times ValueDelta plus ValueStart
  in float32 (the ``multiply-add`` reading), because ``torch.arange(start,
  limit, step)`` itself rounds each vector block's base apart from its lanes
  (measured, torch 2.13 CPU: start 1, step 0.1f gives 22 of 120 elements an
  ulp away from every reading); a step of 0 NOT_SUPPORTED (torch raises).
* DIAGONAL_MATRIX, DIAGONAL_MATRIX1: ``torch.triu`` masks of the diagonals
  (``triu(k=Begin) & ~triu(k=End)``, inverted where Begin > End) and
  ``torch.where`` with the Value (DIAGONAL_MATRIX's FLOAT Value converted
  by ``Tensor.to``) and the input or zeros.

RANDOM_GENERATOR is not mapped: torch's Philox (CUDA's) numbers its
counters and offsets otherwise and has no state tensor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.families.index_map.generated import union_value
from dmlconform.spec.model import DataType


def _out_type(t: Any, a: Attrs) -> Any:
    """The torch type of the output (the case's data type for the generators)."""
    return getattr(t, str(a.dtype))


def _cast(t: Any, xs: list[Any], a: Attrs) -> Any:
    """The input itself: the backend's ``r.to(output dtype)`` into the output is the conversion."""
    return xs[0]


def _number(raw: object, a: Attrs) -> int | float:
    """A union's value (a number or an exact text) in the case's type, as a Python number."""
    held = union_value(raw, DataType[str(a.dtype).upper()])
    return float(held) if held.dtype.kind == "f" else int(held)


def _fill(t: Any, xs: list[Any], a: Attrs) -> Any:
    dtype = _out_type(t, a)
    try:
        return t.full(a.output_sizes[0], _number(a.raw("Value"), a), dtype=dtype)
    except (RuntimeError, OverflowError) as exc:
        raise NotSupportedError(f"torch.full: {exc}") from exc


def _sequence(t: Any, xs: list[Any], a: Attrs) -> Any:
    dtype = _out_type(t, a)
    start, delta = (_number(a.raw(n), a) for n in ("ValueStart", "ValueDelta"))
    count = math.prod(a.output_sizes[0])
    if delta == 0:
        raise NotSupportedError("a ValueDelta of 0: torch.arange's step may not be 0")
    try:
        if dtype.is_floating_point:  # float32 i * Delta + Start: the multiply-add reading (see the docstring)
            steps = t.arange(count, dtype=t.float32) * t.tensor(delta, dtype=t.float32)
            return (steps + t.tensor(start, dtype=t.float32)).to(dtype).reshape(a.output_sizes[0])
        return t.arange(start, start + count * delta, delta, dtype=dtype).reshape(a.output_sizes[0])
    except (RuntimeError, OverflowError) as exc:
        raise NotSupportedError(f"torch.arange: {exc}") from exc


def _mask(t: Any, sizes: tuple[int, ...], begin: int, end: int, device: Any = None) -> Any:
    """Where column - row lies in [begin, end) (outside [end, begin) where begin > end), on ``device``
    (the input's: a CUDA input beside a mask made on the CPU is an error)."""
    rows, cols = sizes[-2], sizes[-1]
    ones = t.ones(rows, cols, dtype=t.bool, device=device)
    reach = rows + cols
    lo, hi = (max(min(k, reach), -reach) for k in (min(begin, end), max(begin, end)))
    inside = t.triu(ones, lo) & ~t.triu(ones, hi)
    return (inside if begin <= end else ~inside).expand(sizes)


def _diagonal(t: Any, xs: list[Any], a: Attrs) -> Any:
    sizes = a.output_sizes[0]
    dtype = getattr(t, str(a.dtype))
    offset = int(a.raw("Offset") or 0)
    value = t.tensor(float(a.raw("Value") or 0), dtype=t.float32).to(dtype)
    return t.where(_mask(t, sizes, offset, offset + 1), value, t.zeros((), dtype=dtype))


def _span(t: Any, xs: list[Any], a: Attrs) -> Any:
    sizes = a.output_sizes[0]
    dtype = _out_type(t, a)
    begin, end = (int(a.raw(n) or 0) for n in ("DiagonalFillBegin", "DiagonalFillEnd"))
    (x,) = xs
    device = None if x is None else x.device
    rest = t.zeros(sizes, dtype=dtype) if x is None else x
    value = t.tensor(_number(a.raw("Value"), a), dtype=dtype, device=device)
    return t.where(_mask(t, sizes, begin, end, device), value, rest)


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "CAST": {"fn": _cast, "note": "Tensor.to(the output's dtype): C++ casts"},
    "FILL_VALUE_CONSTANT": {"fn": _fill, "inputs": (), "note": "torch.full"},
    "FILL_VALUE_SEQUENCE": {"fn": _sequence, "inputs": (),
                            "note": "torch.arange; floats arange(n) * Delta + Start in float32 (multiply-add)"},
    "DIAGONAL_MATRIX": {"fn": _diagonal, "inputs": (), "note": "triu masks and where; the FLOAT Value by Tensor.to"},
    "DIAGONAL_MATRIX1": {"fn": _span, "inputs": ("InputTensor",), "note": "triu masks and where over the input or 0"},
}
