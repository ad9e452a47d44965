"""The interpolation family on onnxruntime: RESAMPLE, RESAMPLE1, RESAMPLE2,
RESAMPLE3 and UPSAMPLE_2D (scales 1, 1, .., height, width; its half-pixel
reading) as ONNX Resize, one node (issue #36 item 5).

Resize (opset 19) maps output index o to ``(o + 0.5) / scale - 0.5``
(``half_pixel``) or ``o / scale`` (``asymmetric``): DirectML's pixel
offsets 0.5 / -0.5 and 0 / 0 exactly; no other offsets are expressible
(NOT_SUPPORTED).  Its ``scales`` input is DirectML's Scales and its output
has floor(size x scale) elements per dimension: a DirectML output of fewer
(the scaled input cropped) is the leading part of Resize's, one of more
(the edges clamped) is NOT_SUPPORTED.  NEAREST_NEIGHBOR rounds with
``round_prefer_ceil`` (ties up: RESAMPLE1's primary reading and
RoundingDirection INCREASING) or ``round_prefer_floor`` (DECREASING);
LINEAR is ``linear`` (separable multilinear, coordinates clamped to the
edges).  Antialiased is passed as ``antialias`` only where DirectML's
conditions hold (none of the suite's cases): elsewhere DirectML ignores it
and so ``antialias = 0``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.interpolation.cases import Geometry, antialias_applies, geometry, semantics_of
from dmlconform.families.interpolation.semantics import DECREASING, LINEAR
from dmlconform.spec.model import Spec

OPSET = 19
NOTE = ("Resize: half_pixel (offsets 0.5, -0.5) or asymmetric (0, 0) only; nearest round_prefer_ceil / "
        "round_prefer_floor by RoundingDirection; an output beyond floor(size x scale) not mapped")


def _transform(geo: Geometry) -> str:
    """Resize's coordinate_transformation_mode of the case's offsets, NotSupportedError where none is."""
    rank = len(geo.scales)
    if geo.input_offsets == (0.5,) * rank and geo.output_offsets == (-0.5,) * rank:
        return "half_pixel"
    if geo.input_offsets == (0.0,) * rank and geo.output_offsets == (0.0,) * rank:
        return "asymmetric"
    raise NotSupportedError(f"pixel offsets {list(geo.input_offsets)} / {list(geo.output_offsets)}: ONNX Resize "
                            "has only half_pixel (0.5, -0.5) and asymmetric (0, 0)")


def check(spec: Spec, case: Case) -> None:
    """NotSupportedError for a case one Resize node does not express."""
    sem = semantics_of(spec)
    geo = geometry(sem, case)
    _transform(geo)
    if antialias_applies(geo):
        raise NotSupportedError("Antialiased below scale 0.5: the page gives no filter to compare Resize's with")
    x, out = case.input(sem.input), case.outputs[0]
    if geo.mode == LINEAR and not _linear_allowed(geo.scales):
        raise NotSupportedError(f"LINEAR with scales {list(geo.scales)}: onnxruntime's linear Resize scales 2-D and "
                                "3-D tensors, or 4-D and 5-D ones whose outermost two scales are 1")
    full = tuple(math.floor(n * s) for n, s in zip(x.sizes, geo.scales))
    if any(o > f for o, f in zip(out.sizes, full)):
        raise NotSupportedError(f"output sizes {list(out.sizes)} beyond floor(size x scale) {list(full)}: Resize's "
                                "output has no clamped edges")


def _linear_allowed(scales: tuple[float, ...]) -> bool:
    """onnxruntime's own rule for linear Resize (its ScalesValidation)."""
    if len(scales) in (2, 3):
        return True
    outer = scales[0] == 1 and scales[1] == 1
    return outer or (len(scales) == 4 and scales[0] == 1 and scales[3] == 1)


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its Resize node, the leading part written into the output buffer."""
    check(spec, case)
    sem = semantics_of(spec)
    geo = geometry(sem, case)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))
    attrs: dict[str, Any] = {"mode": "linear" if geo.mode == LINEAR else "nearest",
                             "coordinate_transformation_mode": _transform(geo),
                             "nearest_mode": "round_prefer_floor" if geo.rounding == DECREASING else "round_prefer_ceil"}
    scales = np.array(geo.scales, np.float32)
    key = ("interpolation", x.ndim, case.dtype.name, tuple(scales.tolist()), tuple(sorted(attrs.items())))
    session = sessions.get(key, lambda: _model(x.ndim, x.dtype, scales, attrs), "Resize")
    (y,) = session.run(None, {"x": x})
    out = case.outputs[0]
    write_output(out, buffers, y[tuple(slice(0, n) for n in out.sizes)])


def _model(rank: int, dtype: np.dtype, scales: np.ndarray, attrs: dict[str, Any]) -> Any:
    """One Resize node over a tensor of ``rank`` dimensions of any size, its scales a constant."""
    from onnx import helper, numpy_helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import

    elem = helper.np_dtype_to_tensor_dtype(dtype)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], **attrs)
    graph = helper.make_graph([node], "interpolation",
                              [helper.make_tensor_value_info("x", elem, [f"x{i}" for i in range(rank)])],
                              [helper.make_tensor_value_info("y", elem, [f"y{i}" for i in range(rank)])],
                              initializer=[numpy_helper.from_array(scales, "scales")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {
    op: OnnxMapping("Resize", attrs=every_attribute, integer=True, runner=run, check=check, opset=OPSET, note=NOTE)
    for op in ("RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3", "UPSAMPLE_2D")}
