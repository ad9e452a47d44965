"""The softmax family on torch: ``torch.softmax``, ``torch.log_softmax``
and a hardmax from ``torch.argmax``, over every axis set.

Issue #24 item 5.  torch reduces one ``dim``; several Axes are reduced
jointly by moving them last (in increasing order), flattening them into
one dimension, and moving them back: the same grouping DirectML's Axes
describe, so every case maps.  Hardmax is ``argmax`` (torch: the first
maximum, NaN the largest) scattered into zeros, torch having no hardmax.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

NOTE = "several Axes reduced jointly through permute and reshape; hardmax as argmax scattered into zeros"


def _axes(x: Any, a: Any) -> list[int]:
    """The case's Axes (read from the attributes), or the last dimension."""
    given = a.raw("Axes") if "Axes" in a.values else None
    if "AxisCount" in a.values:
        a.raw("AxisCount")
    return sorted(int(p) for p in str(given).split(",")) if given is not None else [x.dim() - 1]


def _grouped(t: Any, x: Any, a: Any, rows: Callable[[Any, Any], Any]) -> Any:
    """``rows`` over the last dimension of ``x`` with the reduced axes moved last and flattened."""
    axes = _axes(x, a)
    order = [d for d in range(x.dim()) if d not in axes] + axes
    moved = x.permute(order)
    y = rows(t, moved.reshape(*moved.shape[:x.dim() - len(axes)], -1)).reshape(moved.shape)
    return y.permute([order.index(d) for d in range(x.dim())])


def _hardmax(t: Any, rows: Any) -> Any:
    return t.zeros_like(rows).scatter_(-1, t.argmax(rows, dim=-1, keepdim=True), 1)


def softmax(t: Any, xs: list[Any], a: Any) -> Any:
    return _grouped(t, xs[0], a, lambda t, r: t.softmax(r, dim=-1))


def log_softmax(t: Any, xs: list[Any], a: Any) -> Any:
    return _grouped(t, xs[0], a, lambda t, r: t.log_softmax(r, dim=-1))


def hardmax(t: Any, xs: list[Any], a: Any) -> Any:
    return _grouped(t, xs[0], a, _hardmax)


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    op: {"fn": fn, "note": NOTE} for op, fn in (
        ("ACTIVATION_SOFTMAX", softmax), ("ACTIVATION_SOFTMAX1", softmax), ("ACTIVATION_LOG_SOFTMAX", log_softmax),
        ("ACTIVATION_LOG_SOFTMAX1", log_softmax), ("ACTIVATION_HARDMAX", hardmax), ("ACTIVATION_HARDMAX1", hardmax))}
