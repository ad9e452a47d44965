"""The window family on torch: CONVOLUTION as ``torch.nn.functional.conv{1,2,3}d``
(FORWARD) or ``conv_transpose{1,2,3}d`` (BACKWARD), the MAX_POOLINGs as
``max_pool{1,2,3}d`` (`max_pooling`), the LP_POOLINGs as ``lp_pool{1,2,3}d``
(`lp_pooling`) (issue #35 item 5).

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
activation is applied after, in torch (`contraction.apply_activation`: the
``rounded`` reading of ``fused-activation-rounding``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.backends.torch.contraction import apply_activation
from dmlconform.backends.torch.fold import TORCH_OPS as FOLD_OPS
from dmlconform.backends.torch.unpool import TORCH_OPS as UNPOOL_OPS
from dmlconform.cases import family

NOTE = ("conv{d}d after F.pad / conv_transpose{d}d cropped; CONVOLUTION mode: filter flipped; FusedActivation "
        "applied after, in torch")
POOL_NOTE = ("max_pool{d}d (its symmetric padding, else F.pad(-inf)), indices made flat over the tensor; "
             "asymmetric integer padding not mapped")
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
    fused = a.raw("FusedActivation")
    y = _convolution(t, x, w, b, a, d)
    return apply_activation(t, y, str(fused)) if fused else y  # the unfused pair: the rounded reading


def _convolution(t: Any, x: Any, w: Any, b: Any, a: Attrs, d: int) -> Any:
    """`convolution` before its fused activation."""
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


@dataclass(frozen=True, slots=True)
class _Pool:
    """A pooling's attributes, read: per spatial dimension (``d`` of them) the window, strides, paddings, dilations."""

    d: int
    kernel: list[int]
    strides: list[int]
    start: list[int]
    end: list[int]
    dilations: list[int]


def _pool(x: Any, a: Attrs, function: str) -> _Pool:
    """The attributes of a pooling over ``x``; NotSupportedError beyond torch's 1 to 3 spatial dimensions."""
    d = x.dim() - 2
    if not 1 <= d <= 3:
        raise NotSupportedError(f"{d} spatial dimensions: torch has {function}1d to {function}3d")
    a.raw("DimensionCount")  # the arrays' length, which they give already
    dilations = _ints(a, "Dilations") if a.raw("Dilations") is not None else [1] * d
    return _Pool(d, _ints(a, "WindowSize"), _ints(a, "Strides"), _ints(a, "StartPadding"), _ints(a, "EndPadding"),
                 dilations)


def max_pooling(t: Any, xs: list[Any], a: Attrs, *, indices: bool) -> Any:
    """``max_pool{d}d`` with ``return_indices``: the padding by ``F.pad`` with -inf (floats; exact, as no case's
    window lies wholly in padding), torch's indices (flat within each (batch, channel) plane of the padded
    input) converted to the doc's (flat over the whole logical input)."""
    x = xs[0]
    g = _pool(x, a, "max_pool")
    d, kernel, strides, start, end, dilations = g.d, g.kernel, g.strides, g.start, g.end, g.dilations
    own = start == end and all(2 * p <= (k - 1) * dl + 1 for p, k, dl in zip(start, kernel, dilations))
    pads = [] if own else [p for j in reversed(range(d)) for p in (start[j], end[j])]
    if any(pads) and not x.dtype.is_floating_point:
        raise NotSupportedError("asymmetric integer padding: torch pads with a value, which can tie with the "
                                "input's smallest")
    padded = t.nn.functional.pad(x, pads, value=float("-inf")) if any(pads) else x
    y, where = getattr(t.nn.functional, f"max_pool{d}d")(padded, kernel, stride=strides, dilation=dilations,
                                                         padding=start if own else 0, return_indices=True)
    if own:  # torch's own padding: its indices are already in the input's plane
        start = [0] * d
    if not indices:
        return y
    logical, rest = t.zeros_like(where), where
    scale = 1
    for j in reversed(range(d)):
        coordinate = rest % padded.shape[2 + j] - start[j]
        rest = rest // padded.shape[2 + j]
        logical += coordinate * scale
        scale *= x.shape[2 + j]
    plane = t.arange(x.shape[0] * x.shape[1], device=x.device).view(x.shape[0], x.shape[1], *([1] * d)) * scale
    return y, logical + plane


def average_pooling(t: Any, xs: list[Any], a: Attrs) -> Any:
    """``avg_pool{d}d``.  IncludePadding TRUE: the input zero-padded by ``F.pad`` (any padding), divided by the
    window's size; FALSE: torch's own symmetric padding (at most half the window) with ``count_include_pad``
    off, the divisor the taps inside the input; other paddings (F.pad's zeros would be counted) and Dilations
    other than 1 (torch's avg_pool has none) NOT_SUPPORTED."""
    x = xs[0]
    g = _pool(x, a, "avg_pool")
    if any(v != 1 for v in g.dilations):
        raise NotSupportedError("Dilations: torch's avg_pool has none")
    f = getattr(t.nn.functional, f"avg_pool{g.d}d")
    if a.raw("IncludePadding"):
        pads = [p for j in reversed(range(g.d)) for p in (g.start[j], g.end[j])]
        return f(t.nn.functional.pad(x, pads) if any(pads) else x, g.kernel, stride=g.strides)
    if g.start != g.end or any(2 * p > k for p, k in zip(g.start, g.kernel)):
        raise NotSupportedError(f"IncludePadding FALSE with paddings {g.start}, {g.end}: torch's avg_pool pads "
                                "symmetrically, at most half the window")
    return f(x, g.kernel, stride=g.strides, padding=g.start, count_include_pad=False)


def lp_pooling(t: Any, xs: list[Any], a: Attrs) -> Any:
    """``lp_pool{d}d`` over the input zero-padded by ``F.pad`` (a padding tap adds 0^P = 0: exact).  torch
    computes ``x.pow(P)`` without |x|, then ``avg_pool * K`` and ``.pow(1/P)``: the ``signed-nan`` reading of
    ``lp-sign`` (NaN for a negative sum at odd P).  It has no dilation: Dilations other than 1 NOT_SUPPORTED."""
    x = xs[0]
    g = _pool(x, a, "lp_pool")
    if any(v != 1 for v in g.dilations):
        raise NotSupportedError("Dilations: torch's lp_pool has none")
    pads = [p for j in reversed(range(g.d)) for p in (g.start[j], g.end[j])]
    padded = t.nn.functional.pad(x, pads) if any(pads) else x
    return getattr(t.nn.functional, f"lp_pool{g.d}d")(padded, float(str(a.raw("P"))), g.kernel, stride=g.strides)


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "CONVOLUTION": {"fn": convolution, "inputs": ("InputTensor", "FilterTensor", "BiasTensor"), "note": NOTE},
    "MAX_POOLING": {"fn": lambda t, xs, a: max_pooling(t, xs, a, indices=False), "note": POOL_NOTE},
    **{op: {"fn": lambda t, xs, a: max_pooling(t, xs, a, indices=True), "outputs": 2, "note": POOL_NOTE}
       for op in ("MAX_POOLING1", "MAX_POOLING2")},
    **{op: {"fn": average_pooling, "note": "avg_pool{d}d (F.pad for IncludePadding, else torch's own symmetric "
                                           "padding, count_include_pad off); no dilation"}
       for op in ("AVERAGE_POOLING", "AVERAGE_POOLING1")},
    **{op: {"fn": lp_pooling, "note": "lp_pool{d}d after F.pad (x^P without |x|: the signed-nan reading); no dilation"}
       for op in ("LP_POOLING", "LP_POOLING1")},
    **UNPOOL_OPS,
    **FOLD_OPS}
