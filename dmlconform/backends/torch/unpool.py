"""MAX_UNPOOLING on torch: ``torch.nn.functional.max_unpool{d}d`` (issue #35 item 5).

torch's indices are flat within each (batch, channel) plane of the output,
the page's over the whole tensor: the adapter subtracts each input
element's plane offset, so it expresses only cases whose every index lies
in its own element's plane (the indices of a real max pooling); any other
is NOT_SUPPORTED (a cross-plane index has no torch form), as is an index
past the output's end (torch raises "Found an invalid max index") and
another batch or channel count than the input's.  ``output_size`` is the
case's; the window and padding (`_window`) make torch's own size that.  The CPU
kernel stores the values one after the other: the ``last`` reading of
``repeated-index``; on CUDA the write that wins is the GPU's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs

NOTE = "max_unpool{d}d, indices made flat within each plane (a cross-plane index: not mapped)"


def max_unpooling(t: Any, xs: list[Any], a: Attrs) -> Any:
    """The unpooling of ``xs`` = [input, indices] into the case's output sizes."""
    x, indices = xs
    sizes = tuple(a.output_sizes[0])
    d = x.dim() - 2
    if not 1 <= d <= 3:
        raise NotSupportedError(f"{d} spatial dimensions: torch has max_unpool1d to max_unpool3d")
    if tuple(x.shape[:2]) != sizes[:2]:
        raise NotSupportedError(f"output {list(sizes)} and input {list(x.shape)} differ in batch or channels: "
                                "max_unpool keeps them")
    plane = 1
    for s in sizes[2:]:
        plane *= s
    index = indices.to(t.int64)  # a UINT64 past int64's range turns negative: out of range below
    offsets = t.arange(x.shape[0] * x.shape[1], device=x.device).view(*x.shape[:2], *([1] * d)) * plane
    local = index - offsets
    if bool(((index < 0) | (index >= plane * sizes[0] * sizes[1])).any()):
        raise NotSupportedError("an index at or past the output's element count: torch raises \"Found an invalid "
                                "max index\"")
    if bool(((local < 0) | (local >= plane)).any()):
        raise NotSupportedError("an index outside its own (batch, channel) plane: torch's max_unpool indices are "
                                "within the plane")
    kernel, padding = zip(*(_window(int(i), o) for i, o in zip(x.shape[2:], sizes[2:])))
    return getattr(t.nn.functional, f"max_unpool{d}d")(x, local, list(kernel), stride=1, padding=list(padding),
                                                         output_size=list(sizes[2:]))


def _window(size: int, out: int) -> tuple[int, int]:
    """A window and padding at stride 1 whose unpooled size ``(size - 1) + window - 2 padding`` is ``out``
    (torch takes an ``output_size`` only within a stride of that)."""
    if out >= size:
        return out - size + 1, 0
    return (1, (size - out) // 2) if (size - out) % 2 == 0 else (2, (size - out + 1) // 2)


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.window.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "MAX_UNPOOLING": {"fn": max_unpooling, "inputs": ("InputTensor", "IndicesTensor"), "note": NOTE}}
