"""The interpolation family on torch: RESAMPLE, RESAMPLE1, RESAMPLE2,
RESAMPLE3 and UPSAMPLE_2D (its half-pixel reading) as
``torch.nn.functional.interpolate`` (issue #36 item 5).

``interpolate`` scales only the dimensions after batch and channel (1 to 3
of them), so a case scaling its first two dimensions, or of fewer than 3,
is NOT_SUPPORTED.  With ``scale_factor`` (and ``recompute_scale_factor``
False) it maps output index o through the given scale: ``nearest-exact``
takes floor((o + 0.5) / scale), DirectML's half-pixel offsets (0.5, -0.5)
with ties up (RESAMPLE1's primary reading, RoundingDirection INCREASING);
``linear`` / ``bilinear`` / ``trilinear`` with ``align_corners=False`` is
the half-pixel multilinear map, coordinates clamped to the edges.  Other
offsets (torch's ``nearest`` is floor(o / scale), offsets 0.5 and 0, which
no case uses; ``align_corners=True`` ties the scale to the sizes), ties
rounded down and an output beyond floor(size x scale) are NOT_SUPPORTED.
Antialiased is honoured only where DirectML's conditions hold (none of the
suite's cases); elsewhere DirectML ignores it, and so ``antialias=False``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.families.interpolation.cases import Geometry, antialias_applies, parse_floats, scale_size
from dmlconform.families.interpolation.semantics import DECREASING, INCREASING, LINEAR, NEAREST

NOTE = ("interpolate: half-pixel offsets only (nearest-exact, ties up; linear/bilinear/trilinear, "
        "align_corners=False), dimensions after N and C, an output within floor(size x scale)")
_LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}


def _geometry(a: Attrs, rank: int, *, count: str, offsets: bool, rounding: bool, antialiased: bool) -> Geometry:
    """The case's attributes read as the interpolation family's `Geometry` (RESAMPLE's fixed offsets where
    the operator has none; UPSAMPLE_2D's scales from ScaleSize where ``count`` is empty)."""
    if count:
        a.raw(count)  # the arrays' length, which they give already
    try:
        scales = parse_floats(a.raw("Scales"), name="Scales", count=rank) if count else \
            scale_size({"ScaleSize": a.raw("ScaleSize") or ""}, "ScaleSize", rank)
        ins = parse_floats(a.raw("InputPixelOffsets"), name="InputPixelOffsets", count=rank) if offsets else \
            (0.5,) * rank
        outs = parse_floats(a.raw("OutputPixelOffsets"), name="OutputPixelOffsets", count=rank) if offsets else \
            (-0.5,) * rank
    except ValueError as exc:
        raise NotSupportedError(str(exc)) from None
    direction = str(a.raw("RoundingDirection") or INCREASING) if rounding else None
    flag = bool(a.raw("Antialiased")) if antialiased else False
    return Geometry(str(a.raw("InterpolationMode") or NEAREST), scales, ins, outs, direction, flag)


def resample(t: Any, xs: list[Any], a: Attrs, *, count: str = "DimensionCount", offsets: bool = True,
             rounding: bool = False, antialiased: bool = False) -> Any:
    """The resample of ``xs[0]`` as the attributes say, through ``interpolate``."""
    x = xs[0]
    rank = x.dim()
    geo = _geometry(a, rank, count=count, offsets=offsets, rounding=rounding, antialiased=antialiased)
    if not 3 <= rank <= 5 or geo.scales[:2] != (1.0, 1.0):
        raise NotSupportedError(f"scales {list(geo.scales)}: interpolate scales 1 to 3 dimensions after N and C")
    if geo.input_offsets != (0.5,) * rank or geo.output_offsets != (-0.5,) * rank:
        raise NotSupportedError(f"pixel offsets {list(geo.input_offsets)} / {list(geo.output_offsets)}: torch's "
                                "maps are half-pixel (0.5, -0.5), floor(o / scale) or align_corners")
    if geo.mode == NEAREST and geo.rounding == DECREASING:
        raise NotSupportedError("ties rounded down: nearest-exact rounds them up")
    if antialias_applies(geo):
        raise NotSupportedError("Antialiased below scale 0.5: the page gives no filter to compare torch's with")
    full = [math.floor(n * s) for n, s in zip(x.shape, geo.scales)]
    wanted = a.output_sizes[0]
    if any(o > f for o, f in zip(wanted, full)):
        raise NotSupportedError(f"output sizes {list(wanted)} beyond floor(size x scale) {full}: interpolate's "
                                "output has no clamped edges")
    mode = _LINEAR[rank - 2] if geo.mode == LINEAR else "nearest-exact"
    extra = {"align_corners": False} if geo.mode == LINEAR else {}
    y = t.nn.functional.interpolate(x, scale_factor=list(geo.scales[2:]), mode=mode, recompute_scale_factor=False,
                                    **extra)
    return y[tuple(slice(0, n) for n in wanted)]


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "RESAMPLE": {"fn": lambda t, xs, a: resample(t, xs, a, count="ScaleCount", offsets=False), "note": NOTE},
    "RESAMPLE1": {"fn": resample, "note": NOTE},
    "RESAMPLE2": {"fn": lambda t, xs, a: resample(t, xs, a, rounding=True), "note": NOTE},
    "RESAMPLE3": {"fn": lambda t, xs, a: resample(t, xs, a, rounding=True, antialiased=True), "note": NOTE},
    "UPSAMPLE_2D": {"fn": lambda t, xs, a: resample(t, xs, a, count="", offsets=False), "note": NOTE},
}
