"""The window family on torch: CONVOLUTION as ``torch.nn.functional.conv{1,2,3}d``
(FORWARD) or ``conv_transpose{1,2,3}d`` (BACKWARD) (issue #35 item 5).

FORWARD: the input zero-padded by ``F.pad`` (start and end apart: torch's
own ``padding`` is symmetric), then ``conv{d}d`` with stride, dilation and
groups: DirectML's CROSS_CORRELATION.  BACKWARD: ``conv_transpose{d}d``
without padding (the full adjoint output, weight {C, M/G, K...} as
DirectML's), an ``output_padding`` of what the end padding does not cover,
then cropped by the start padding: the ``computed`` reading of
``output-padding``.  CONVOLUTION mode: the filter ``torch.flip``-ped along
every spatial dimension (exact; the ``every-spatial`` reading).  On CUDA,
cuDNN's TF32 for convolutions follows the backend's ``tf32`` option
(``torch.backends.cudnn.allow_tf32``, set here before each call).  A fused
activation is NOT_SUPPORTED.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.cases import family

NOTE = "conv{d}d after F.pad / conv_transpose{d}d cropped; CONVOLUTION mode: filter flipped; no FusedActivation"
_BACKWARD = "DML_CONVOLUTION_DIRECTION_BACKWARD"
_FLIPPED = "DML_CONVOLUTION_MODE_CONVOLUTION"


def _ints(a: Attrs, name: str) -> list[int]:
    return list(family.parse_axes(a.raw(name), name=name))


def convolution(t: Any, xs: list[Any], a: Attrs) -> Any:
    """The convolution of ``xs`` = [input, filter, bias or None] as the attributes say."""
    x, w, b = xs
    d = x.dim() - 2
    if not 1 <= d <= 3:
        raise NotSupportedError(f"{d} spatial dimensions: torch has conv1d to conv3d")
    a.raw("DimensionCount")  # the arrays' length, which they give already
    if a.raw("FusedActivation"):
        raise NotSupportedError("FusedActivation: not mapped onto torch")
    strides, dilations = _ints(a, "Strides"), _ints(a, "Dilations")
    start, end, outpad = _ints(a, "StartPadding"), _ints(a, "EndPadding"), _ints(a, "OutputPadding")
    groups = int(a.raw("GroupCount") or 1)
    if str(a.raw("Mode")) == _FLIPPED:
        w = t.flip(w, dims=list(range(2, 2 + d)))
    bias = b.reshape(-1) if b is not None else None
    f = t.nn.functional
    t.backends.cudnn.allow_tf32 = t.backends.cuda.matmul.allow_tf32  # the backend's tf32 option, for convolutions too
    if str(a.raw("Direction")) != _BACKWARD:
        pads = [p for j in reversed(range(d)) for p in (start[j], end[j])]
        return getattr(f, f"conv{d}d")(f.pad(x, pads), w, bias, stride=strides, dilation=dilations, groups=groups)
    extra = [max(0, p - e) for p, e in zip(outpad, end)]
    if any(e >= max(s, dl) for e, s, dl in zip(extra, strides, dilations)):
        raise NotSupportedError(f"output padding {extra} beyond the end padding: torch needs it below the stride "
                                "or the dilation")
    y = getattr(f, f"conv_transpose{d}d")(x, w, bias, stride=strides, output_padding=extra, groups=groups,
                                         dilation=dilations)
    sizes = [y.shape[2 + j] - start[j] - end[j] + outpad[j] - extra[j] for j in range(d)]
    crop = tuple(slice(start[j], start[j] + sizes[j]) for j in range(d))
    return y[(slice(None), slice(None), *crop)]


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "CONVOLUTION": {"fn": convolution, "inputs": ("InputTensor", "FilterTensor", "BiasTensor"), "note": NOTE}}
