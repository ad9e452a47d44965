"""The ROI operators on onnxruntime: ROI_ALIGN and ROI_ALIGN1 as ONNX
RoiAlign (opset 16), ROI_POOLING as MaxRoiPool, one node (issue #36 item 5).

RoiAlign places sample i of output index o at ``x1 s - 0.5 + (o + (i + 0.5)
/ S) bin`` (``half_pixel``: DirectML's pixel offsets 0.5 and -0.5) or
without the -0.5 and with the region at least 1 wide (``output_half_pixel``:
offsets 0 and -0.5, regions of 1 or more); S is ``sampling_ratio`` or,
where 0, ceil(region / output) per region: DirectML's clamped counts map
where every region's count is one k in both dimensions, or every count is
the unclamped ceiling.  It reads 0 outside [-1, size] and clamps inside
(the ``out-of-bounds:band`` reading, with OutOfBoundsInputValue 0 only),
has one spatial_scale, bilinear sampling only, no AlignRegionsToCorners,
and float32 on the CPU provider.  Its ``max`` mode takes the largest of a
sample's weighted corners, not of the interpolated samples (the FAILs of
docs/interpolation.md "ROI_ALIGN1 on onnxruntime").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.interpolation.roi_cases import (
    RoiGeometry,
    geometry,
    one_sampling_ratio,
    regions,
    semantics_of,
)
from dmlconform.families.interpolation.roi_pooling import pooled_size, spatial_scale
from dmlconform.families.interpolation.roi_semantics import MAX
from dmlconform.families.interpolation.semantics import NEAREST
from dmlconform.spec.model import DataType, Spec

OPSET = 16
NOTE = ("RoiAlign: LINEAR, offsets 0.5 / -0.5 (half_pixel) or 0 / -0.5 (output_half_pixel, regions of 1 or more), "
        "one spatial scale, OutOfBoundsInputValue 0, one sample count for all regions or the unclamped ceiling; "
        "FLOAT32 only")


def _transform(geo: RoiGeometry, sizes: np.ndarray) -> str:
    if (geo.input_offset, geo.output_offset) == (0.5, -0.5):
        return "half_pixel"
    if (geo.input_offset, geo.output_offset) == (0.0, -0.5) and (sizes >= 1).all():
        return "output_half_pixel"
    raise NotSupportedError(f"pixel offsets {geo.input_offset} / {geo.output_offset} (with regions of "
                            f"{sizes.min():g} and more): RoiAlign has half_pixel (0.5, -0.5) and output_half_pixel "
                            "(0, -0.5, regions of 1 or more) only")


def _sampling_ratio(geo: RoiGeometry, sizes: np.ndarray, pooled: tuple[int, int]) -> int:
    """RoiAlign's sampling_ratio giving every region DirectML's counts, NotSupportedError where none does."""
    ratio = one_sampling_ratio(geo, sizes, pooled)
    if ratio is None:
        counts = np.clip(np.ceil(sizes / np.array([pooled[1], pooled[0]])), geo.min_samples, geo.max_samples)
        raise NotSupportedError(f"sample counts {counts.astype(int).tolist()} (x, y per region): RoiAlign takes one "
                                "sampling_ratio for all or the unclamped ceiling per region")
    return ratio


def _plan(spec: Spec, case: Case) -> tuple[RoiGeometry, dict[str, Any]]:
    """The node's attributes for ``case``; NotSupportedError where RoiAlign does not express it."""
    if case.dtype is not DataType.FLOAT32:
        raise NotSupportedError(f"{case.dtype.name}: onnxruntime's CPU RoiAlign takes float32 and double only")
    sem = semantics_of(spec)
    geo = geometry(sem, case)
    if geo.mode == NEAREST:
        raise NotSupportedError("NEAREST_NEIGHBOR: RoiAlign samples bilinearly only")
    if geo.align_corners:
        raise NotSupportedError("AlignRegionsToCorners: RoiAlign has no such mode")
    if geo.out_of_bounds != 0:
        raise NotSupportedError(f"OutOfBoundsInputValue {geo.out_of_bounds:g}: RoiAlign reads 0 outside the input")
    if geo.scale_x != geo.scale_y:
        raise NotSupportedError(f"spatial scales {geo.scale_x:g} / {geo.scale_y:g}: RoiAlign has one")
    rois, _ = regions(sem, case)
    sizes = np.stack([rois[:, 2] - rois[:, 0], rois[:, 3] - rois[:, 1]], axis=1) * geo.scale_x
    pooled = (case.outputs[0].sizes[2], case.outputs[0].sizes[3])
    attrs = {"mode": "max" if geo.reduction == MAX else "avg", "output_height": pooled[0],
             "output_width": pooled[1], "sampling_ratio": _sampling_ratio(geo, sizes, pooled),
             "spatial_scale": geo.scale_x, "coordinate_transformation_mode": _transform(geo, sizes)}
    return geo, attrs


def check(spec: Spec, case: Case) -> None:
    """NotSupportedError for a case one RoiAlign node does not express."""
    _plan(spec, case)


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its RoiAlign node."""
    sem = semantics_of(spec)
    _, attrs = _plan(spec, case)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    rois, batch = regions(sem, case, buffers)
    key = ("roi-align", case.dtype.name, tuple(sorted(attrs.items())))
    session = sessions.get(key, lambda: _model(x.dtype, attrs), "RoiAlign")
    (y,) = session.run(None, {"x": x, "rois": rois.astype(x.dtype), "batch_indices": batch.astype(np.int64)})
    write_output(case.outputs[0], buffers, y)


def _model(dtype: np.dtype, attrs: dict[str, Any]) -> Any:
    """One RoiAlign node over inputs of any size."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(dtype)
    node = helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["y"], **attrs)
    graph = helper.make_graph([node], "roi_align",
                              [helper.make_tensor_value_info("x", elem, ["n", "c", "h", "w"]),
                               helper.make_tensor_value_info("rois", elem, ["r", 4]),
                               helper.make_tensor_value_info("batch_indices", TensorProto.INT64, ["r"])],
                              [helper.make_tensor_value_info("y", elem, ["r", "c", "oh", "ow"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


POOL_NOTE = "MaxRoiPool: FLOAT32 only; regions rounded half away from zero, empty bins 0"


def check_pool(spec: Spec, case: Case) -> None:
    """NotSupportedError for a ROI_POOLING case MaxRoiPool does not run."""
    if case.dtype is not DataType.FLOAT32:
        raise NotSupportedError(f"{case.dtype.name}: onnxruntime's CPU MaxRoiPool takes float32 only")


def run_pool(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its MaxRoiPool node (``pooled_shape`` [height, width], one ``spatial_scale``)."""
    check_pool(spec, case)
    sem = semantics_of(spec)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    rois = np.ascontiguousarray(case.input(sem.rois).view(buffers[sem.rois]).reshape(-1, 5))
    pooled, scale = pooled_size(sem, case), spatial_scale(sem, case)
    attrs: dict[str, Any] = {"pooled_shape": list(pooled), "spatial_scale": scale}
    key = ("max-roi-pool", case.dtype.name, pooled, scale)
    session = sessions.get(key, lambda: _pool_model(x.dtype, attrs), "MaxRoiPool")
    (y,) = session.run(None, {"x": x, "rois": rois})
    write_output(case.outputs[0], buffers, y)


def _pool_model(dtype: np.dtype, attrs: dict[str, Any]) -> Any:
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(dtype)
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], **attrs)
    graph = helper.make_graph([node], "max_roi_pool",
                              [helper.make_tensor_value_info("x", elem, ["n", "c", "h", "w"]),
                               helper.make_tensor_value_info("rois", elem, ["r", 5])],
                              [helper.make_tensor_value_info("y", elem, ["r", "c", "ph", "pw"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {
    **{op: OnnxMapping("RoiAlign", inputs=("InputTensor", "ROITensor", "BatchIndicesTensor"), attrs=every_attribute,
                       integer=False, runner=run, check=check, opset=OPSET, note=NOTE)
       for op in ("ROI_ALIGN", "ROI_ALIGN1")},
    "ROI_POOLING": OnnxMapping("MaxRoiPool", inputs=("InputTensor", "ROITensor"), attrs=every_attribute,
                               integer=False, runner=run_pool, check=check_pool, opset=OPSET, note=POOL_NOTE)}
