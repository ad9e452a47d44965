"""The ROI operators on torch: ROI_ALIGN and ROI_ALIGN1 as torchvision's
``ops.roi_align``, ROI_POOLING as ``ops.roi_pool`` (issue #36 item 5),
where torchvision is installed; NOT_SUPPORTED with that reason where not.

``roi_align`` with ``aligned=True`` shifts the region by -0.5 (DirectML's
offsets 0.5 / -0.5); ``aligned=False`` keeps it and makes it at least 1
wide (offsets 0 / -0.5 on regions of 1 or more); its ``sampling_ratio`` is
onnxruntime's (`families.interpolation.roi_cases.one_sampling_ratio`); it
averages only (MAX NOT_SUPPORTED), samples bilinearly, reads 0 outside
[-1, size].  ``roi_pool`` is Caffe's ROIPooling, the page's formula.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.families.interpolation.roi_cases import RoiGeometry, one_sampling_ratio
from dmlconform.families.interpolation.roi_semantics import AVERAGE
from dmlconform.families.interpolation.semantics import LINEAR

NOTE = ("torchvision roi_align (AVERAGE, LINEAR, offsets 0.5 / -0.5 or 0 / -0.5, OutOfBoundsInputValue 0) and "
        "roi_pool, where torchvision is installed")


def _ops() -> Any:
    try:
        import torchvision.ops  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 - optional
    except ImportError:
        raise NotSupportedError("torchvision is not installed: torch has ROI align and ROI pooling only in "
                                "torchvision.ops (pip install torchvision)") from None
    return torchvision.ops


def _geometry(a: Attrs) -> RoiGeometry:
    """ROI_ALIGN(1)'s attributes (ROI_ALIGN's fixed offsets and no corner alignment where it has none)."""
    offsets = a.raw("InputPixelOffset") is not None
    return RoiGeometry(str(a.raw("ReductionFunction")), str(a.raw("InterpolationMode")), a.f32("SpatialScaleX"),
                       a.f32("SpatialScaleY"), a.f32("InputPixelOffset") if offsets else 0.5,
                       a.f32("OutputPixelOffset") if offsets else -0.5, a.f32("OutOfBoundsInputValue"),
                       int(a.raw("MinimumSamplesPerOutput") or 0), int(a.raw("MaximumSamplesPerOutput") or 0),
                       bool(a.raw("AlignRegionsToCorners") or False))


def roi_align(t: Any, xs: list[Any], a: Attrs) -> Any:
    """``xs`` = input, regions, batch indices, through torchvision's roi_align."""
    ops = _ops()
    geo = _geometry(a)
    if geo.reduction != AVERAGE or geo.mode != LINEAR or geo.align_corners or geo.out_of_bounds != 0:
        raise NotSupportedError("roi_align averages bilinear samples only, reads 0 outside, has no corner alignment")
    if geo.scale_x != geo.scale_y:
        raise NotSupportedError(f"spatial scales {geo.scale_x:g} / {geo.scale_y:g}: roi_align has one")
    rois = xs[1].reshape(-1, 4)
    sizes = (rois[:, 2:] - rois[:, :2]).double().cpu().numpy() * geo.scale_x
    pooled = tuple(a.output_sizes[0][2:])
    if (geo.input_offset, geo.output_offset) == (0.5, -0.5):
        aligned = True
    elif (geo.input_offset, geo.output_offset) == (0.0, -0.5) and (sizes >= 1).all():
        aligned = False
    else:
        raise NotSupportedError(f"pixel offsets {geo.input_offset} / {geo.output_offset}: roi_align has 0.5 / -0.5 "
                                "(aligned) and 0 / -0.5 on regions of 1 or more")
    ratio = one_sampling_ratio(geo, np.asarray(sizes), (int(pooled[0]), int(pooled[1])))
    if ratio is None:
        raise NotSupportedError("sample counts no one sampling_ratio gives")
    boxes = t.cat([xs[2].reshape(-1, 1).to(xs[0].dtype), rois.to(xs[0].dtype)], dim=1)
    return ops.roi_align(xs[0], boxes, output_size=pooled, spatial_scale=geo.scale_x,
                         sampling_ratio=ratio or -1, aligned=aligned)


def roi_pool(t: Any, xs: list[Any], a: Attrs) -> Any:
    """``xs`` = input, regions [batch, x1, y1, x2, y2], through torchvision's roi_pool."""
    ops = _ops()
    width, height = (int(v) for v in str(a.raw("PooledSize")).split(","))
    return ops.roi_pool(xs[0], xs[1].reshape(-1, 5), output_size=(height, width),
                        spatial_scale=a.f32("SpatialScale"))


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "ROI_ALIGN": {"fn": roi_align, "inputs": ("InputTensor", "ROITensor", "BatchIndicesTensor"), "note": NOTE},
    "ROI_ALIGN1": {"fn": roi_align, "inputs": ("InputTensor", "ROITensor", "BatchIndicesTensor"), "note": NOTE},
    "ROI_POOLING": {"fn": roi_pool, "inputs": ("InputTensor", "ROITensor"), "note": NOTE},
}
