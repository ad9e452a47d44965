"""The index-map family's paddings as torch calls (issue #34 item 5),
merged into `backends.torch.index_map.TORCH_OPS`.

* PADDING, PADDING1: ``torch.nn.functional.pad``.  CONSTANT pads every
  dimension at once with the constant as the desc holds it (PADDING's
  FLOAT as float32, truncated toward zero for an integer type: torch is
  not what is tested on that conversion); F.pad takes it as a Python
  float, so a 64-bit integer constant beyond 2^53 is NOT_SUPPORTED.
  EDGE (``replicate``) and REFLECTION (``reflect``) pad one dimension at a
  time, moved last behind one batch dimension (their kernels take the last
  one to three dimensions only; the modes are separable); ``reflect``
  reflects once, so a padding as large as the dimension or larger is
  NOT_SUPPORTED, and so is SYMMETRIC, which torch has no mode for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.families.index_map.pads import MODE_PREFIX
from dmlconform.families.index_map.slices import numbers

_MODES = {"CONSTANT": "constant", "EDGE": "replicate", "REFLECTION": "reflect"}


def _constant(a: Attrs, dtype: Any, t: Any) -> float:
    """The constant as the desc holds it, as the Python float F.pad takes."""
    value = a.raw("PaddingValue")
    if not isinstance(value, (int, float)):
        raise NotSupportedError(f"PaddingValue {value!r}: give a number")
    if a.raw("PaddingValueDataType") is None:  # PADDING's FLOAT: float32 first, truncated for an integer type
        held = float(t.tensor(float(value), dtype=t.float32))
        return held if dtype.is_floating_point else float(int(held))
    if float(value) != value:
        raise NotSupportedError(f"PaddingValue {value}: F.pad takes the constant as a Python float, which does not "
                                "hold it exactly")
    return float(value)


def _pad(t: Any, xs: list[Any], a: Attrs) -> Any:
    (x,) = xs
    mode = str(a.raw("PaddingMode")).removeprefix(MODE_PREFIX)
    start, end = numbers(a.raw("StartPadding"), "StartPadding"), numbers(a.raw("EndPadding"), "EndPadding")
    a.raw("DimensionCount")
    if mode not in _MODES:
        raise NotSupportedError(f"PaddingMode {mode}: torch's F.pad has no mode that repeats the edge in a mirror")
    if mode == "CONSTANT":
        widths = [w for d in reversed(range(x.dim())) for w in (start[d], end[d])]
        return t.nn.functional.pad(x, widths, mode="constant", value=_constant(a, x.dtype, t))
    a.raw("PaddingValue"), a.raw("PaddingValueDataType")
    if mode == "REFLECTION" and any(max(s, e) >= n for n, s, e in zip(x.shape, start, end)):
        raise NotSupportedError("a REFLECTION padding as large as its dimension or larger: torch's reflect reflects "
                                "once, where the page folds again")
    y = x
    for d in (d for d in range(x.dim()) if start[d] or end[d]):
        moved = y.movedim(d, -1)
        shape = moved.shape
        flat = t.nn.functional.pad(moved.reshape(-1, shape[-1]), (start[d], end[d]), mode=_MODES[mode])
        y = flat.reshape(*shape[:-1], flat.shape[-1]).movedim(-1, d)
    return y


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.index_map.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    op: {"fn": _pad, "note": "F.pad: constant at once, replicate and reflect a dimension at a time; SYMMETRIC and "
                             "a reflection folded more than once NOT_SUPPORTED"}
    for op in ("PADDING", "PADDING1")}
