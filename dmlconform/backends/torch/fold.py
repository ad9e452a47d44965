"""FOLD and UNFOLD on torch: ``torch.nn.functional.unfold`` and ``fold``
(issue #35 item 5), 2 spatial dimensions only (torch's im2col and col2im
take 4D images): 1, 3 or more spatial dimensions are NOT_SUPPORTED.

torch's padding is symmetric, so UNFOLD pads the image with ``F.pad``
(zeros, +0) first, and FOLD folds into the padded image and crops it (the
elements that land in the padding dropped).  Both lay a column out as the
pages do (channel-major, then the window row-major) and number the blocks
row-major: the same map.  FOLD's sum runs in the tensor's type on CPU
(FLOAT16 in FLOAT16 where torch's col2im does so; compare it against
``float16_accumulation``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.cases import family

NOTE = "F.unfold / F.fold (2 spatial dimensions only), asymmetric padding by F.pad or a cropped fold"


def _geometry(a: Attrs) -> dict[str, list[int]]:
    """The attributes by torch's names, NOT_SUPPORTED unless DimensionCount is 2."""
    count = int(str(a.raw("DimensionCount")))
    if count != 2:
        raise NotSupportedError(f"DimensionCount {count}: torch's fold and unfold take 2 spatial dimensions only")
    names = {"kernel_size": "WindowSizes", "stride": "Strides", "dilation": "Dilations", "start": "StartPadding",
             "end": "EndPadding"}
    return {key: list(family.parse_axes(a.raw(name), name=name)) for key, name in names.items()}


def unfold(t: Any, xs: list[Any], a: Attrs) -> Any:
    g = _geometry(a)
    x = t.nn.functional.pad(xs[0], [g["start"][1], g["end"][1], g["start"][0], g["end"][0]])
    return t.nn.functional.unfold(x, g["kernel_size"], dilation=g["dilation"], stride=g["stride"])


def fold(t: Any, xs: list[Any], a: Attrs, sizes: tuple[int, ...]) -> Any:
    g = _geometry(a)
    padded = [s + b + e for s, b, e in zip(sizes[2:], g["start"], g["end"])]
    y = t.nn.functional.fold(xs[0], padded, g["kernel_size"], dilation=g["dilation"], stride=g["stride"])
    return y[:, :, g["start"][0]:g["start"][0] + sizes[2], g["start"][1]:g["start"][1] + sizes[3]]


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into the window family's `TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "UNFOLD": {"fn": unfold, "note": NOTE},
    "FOLD": {"fn": fold, "sizes": True, "note": NOTE},
}
