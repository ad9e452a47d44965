"""The sequence family's operators as torch calls (issue #24 item 5),
merged into the torch backend's `TORCH_OPS`.

* TOP_K, TOP_K1: ``torch.sort(stable=True)`` and its first K.  Not
  ``torch.topk``: it does not keep ties in index order (on CPU, 100 equal
  values give indices 65, 68, 67, 66, 69 for K=5), where the doc orders ties
  by ascending index; a stable sort does, descending or ascending, and puts
  NaN above +inf with -0 and +0 tied: the primary readings.
* CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT: ``torch.cumsum`` /
  ``torch.cumprod`` along Axis, flipped for DECREASING, shifted for the
  exclusive tally (torch has no exclusive flag).  Integer tallies come back
  in int64 and are cast to the tensor's type (two's complement: the wrap
  reading); UINT32 and UINT64 inputs are made int64 first (torch 2.13 has
  no flip for them; the int64 tally modulo 2^64 is the one torch makes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dmlconform.families.sequence.semantics import DECREASING, INCREASING

#: (torch, input views, attributes) -> result tensor, or the results of several outputs in order.
Fn = Callable[[Any, list[Any], Any], Any]


def _top_k(t: Any, xs: list[Any], a: Any) -> tuple[Any, Any]:
    axis, k = int(a.raw("Axis")), int(a.raw("K"))
    increasing = a.raw("AxisDirection") == INCREASING  # TOP_K has none: the largest
    values, indices = t.sort(xs[0], dim=axis, descending=not increasing, stable=True)
    return values.narrow(axis, 0, k), indices.narrow(axis, 0, k)


def _scan(product: bool, flag: str) -> Fn:
    def call(t: Any, xs: list[Any], a: Any) -> Any:
        x, axis = xs[0], int(a.raw("Axis"))
        reverse = a.raw("AxisDirection") == DECREASING
        if x.dtype in (t.uint32, t.uint64):  # no flip kernel; cumsum/cumprod tally them in int64 anyway
            x = x.to(t.int64)
        if reverse:
            x = x.flip(axis)
        y = (t.cumprod if product else t.cumsum)(x, dim=axis)
        if bool(a.raw(flag)) and y.shape[axis] > 0:
            first = (t.ones_like if product else t.zeros_like)(y.narrow(axis, 0, 1))
            y = t.cat([first, y.narrow(axis, 0, y.shape[axis] - 1)], dim=axis)
        return y.flip(axis) if reverse else y
    return call


_TOP_K = {"fn": _top_k, "outputs": 2, "note": "torch.sort(stable=True)[:K]: torch.topk does not keep ties in index order"}
#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "TOP_K": _TOP_K,
    "TOP_K1": _TOP_K,
    "CUMULATIVE_SUMMATION": {"fn": _scan(False, "HasExclusiveSum"),
                             "note": "torch.cumsum, flipped for DECREASING, shifted for the exclusive sum"},
    "CUMULATIVE_PRODUCT": {"fn": _scan(True, "HasExclusiveProduct"),
                           "note": "torch.cumprod, flipped for DECREASING, shifted for the exclusive product"},
}
