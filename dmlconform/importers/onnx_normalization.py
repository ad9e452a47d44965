"""ONNX node tests of the normalization and interpolation families as cases
(issue #36 item 6): InstanceNormalization, LayerNormalization,
GroupNormalization and MeanVarianceNormalization become
MEAN_VARIANCE_NORMALIZATION1 cases, LpNormalization LP_NORMALIZATION, LRN
LOCAL_RESPONSE_NORMALIZATION, Resize RESAMPLE3 and Upsample UPSAMPLE_2D
and RoiAlign ROI_ALIGN1 (docs/normalization.md, docs/interpolation.md have
their semantics).

`importers.onnx_node` asks a mapping's ``convert`` (these functions) for the
case; each raises `Unmappable` with the reason where ONNX's test is not a
DirectML call:

* the normalizations are MVN1 over the axes ONNX normalizes (instance: 2 to
  the last; layer: ``axis`` to the last; MeanVarianceNormalization: ``axes``,
  default 0, 2, 3), scale and bias broadcast through their sizes; group
  normalization views {N, C, ...} as {N, G, C/G, ...} (the same packed
  buffer) over the axes 2 to the last, its per-channel scale and bias
  {1, G, C/G, 1...}; LayerNormalization's Mean and InvStdDev outputs have no
  DirectML counterpart (only Y is checked); MeanVarianceNormalization has
  no epsilon (Epsilon 0); LpNormalization none either, but a zero vector
  gives 0: Epsilon is the smallest normal float32 (`_TINY`);
* Resize: ``nearest`` and ``linear`` (``cubic`` has no DirectML mode); the
  coordinate modes as pixel offsets (half_pixel 0.5 / -0.5, asymmetric 0 / 0,
  align_corners a scale of (out - 1) / (in - 1), pytorch_half_pixel as
  half_pixel where the output is longer than 1); the scales ONNX uses
  (given, or from ``sizes`` and ``keep_aspect_ratio_policy``); ``nearest_mode``
  round_prefer_ceil / round_prefer_floor are RoundingDirection INCREASING /
  DECREASING, floor and ceil the same with the input offset moved by a half
  (``floor(c) = round_half_up(c - 1/2)``, ``ceil(c) = round_half_down(c + 1/2)``);
  ``tf_crop_and_resize``, ``half_pixel_symmetric`` and ``antialias`` on a
  downscale are not imported (see each reason);
* Upsample (opset 9, asymmetric, floor): UPSAMPLE_2D where the scales are 1
  but for whole height and width scales, ``ScaleSize`` width first;
* RoiAlign (avg): ROI_ALIGN1 LINEAR AVERAGE with OutputPixelOffset -0.5 and
  InputPixelOffset 0.5 (half_pixel) or 0 (output_half_pixel), the samples
  ``sampling_ratio`` or ONNX's ceil(size / out); ``mode='max'`` is not
  imported (ONNX's maximum is of weighted corners, not of samples).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.interpolation.roi_semantics import AVERAGE, Roi
from dmlconform.families.interpolation.semantics import DECREASING, INCREASING, LINEAR, NEAREST, Resample
from dmlconform.families.normalization.semantics import Normalization
from dmlconform.importers.onnx_contraction import Unmappable
from dmlconform.importers.onnx_families import _axis, _input
from dmlconform.importers.onnx_window import _case, _output, _tensor
from dmlconform.spec.model import Spec

__all__ = ["CONVERTERS", "Unmappable"]


def _sem(spec: Spec, kind: type[Any]) -> Any:
    sem = spec.semantics
    if not isinstance(sem, kind):
        raise Unmappable(f"{spec.operator} has no reviewed semantics in this suite yet (no oracle to check ONNX's "
                         "output against)")
    return sem


def _csv(values: Sequence[Any]) -> str:
    return ",".join(str(v) for v in values)


def _float(value: Any) -> float:
    """A float32 attribute's value, exactly."""
    return float(np.float32(value))


# -- normalization ---------------------------------------------------------------------------------
def _mvn(spec: Spec, test: Any, x: np.ndarray, axes: Sequence[int], scale: np.ndarray | None,
         bias: np.ndarray | None, epsilon: float, out: np.ndarray) -> Case:
    """MEAN_VARIANCE_NORMALIZATION1 of ``x`` over ``axes``; scale and bias right-aligned to its sizes."""
    sem = _sem(spec, Normalization)
    inputs = [_tensor(sem.input, x)]
    for name, value in ((sem.scale, scale), (sem.bias, bias)):
        if value is not None and name is not None:
            inputs.append(_tensor(name, value, (1,) * (x.ndim - value.ndim) + value.shape))
    given = {sem.axis_count: len(axes), sem.axes: _csv(sorted(axes)), sem.normalize_variance: True,
             sem.epsilon: _float(epsilon)}
    return _case(spec, test, tuple(inputs), (_output(sem.output, out, x.shape),), given)


def instance_norm(test: Any, spec: Spec) -> Case:
    """ONNX InstanceNormalization(x, scale[C], B[C]) -> MVN1 over axes 2 to the last."""
    x, scale, bias = (np.asarray(a) for a in test.inputs[:3])
    per_channel = (x.shape[1],) + (1,) * (x.ndim - 2)
    return _mvn(spec, test, x, range(2, x.ndim), scale.reshape(per_channel), bias.reshape(per_channel),
                dict(test.attributes).get("epsilon", 1e-5), test.outputs[0])


def layer_norm(test: Any, spec: Spec) -> Case:
    """ONNX LayerNormalization(X, Scale, B) -> MVN1 over ``axis`` to the last (Y only)."""
    x, scale = np.asarray(test.inputs[0]), np.asarray(test.inputs[1])
    attrs = dict(test.attributes)
    if int(attrs.get("stash_type", 1)) != 1:
        raise Unmappable("stash_type other than 1 (float32 statistics)")
    axis = _axis(attrs.get("axis", -1), x.ndim)
    return _mvn(spec, test, x, range(axis, x.ndim), scale, _input(test, 2), attrs.get("epsilon", 1e-5),
                test.outputs[0])


def group_norm(test: Any, spec: Spec) -> Case:
    """ONNX GroupNormalization(X, scale[C], bias[C]) -> MVN1 of X viewed as {N, G, C/G, ...} over axes 2 to the last."""
    x, scale, bias = (np.asarray(a) for a in test.inputs[:3])
    attrs = dict(test.attributes)
    groups = int(attrs["num_groups"])
    if scale.size != x.shape[1]:
        raise Unmappable(f"a scale of {scale.size} values for {x.shape[1]} channels (opset 18's per-group scale)")
    view = (x.shape[0], groups, x.shape[1] // groups, *x.shape[2:])
    per_channel = (groups, x.shape[1] // groups) + (1,) * (x.ndim - 2)
    return _mvn(spec, test, x.reshape(view), range(2, len(view)), scale.reshape(per_channel),
                bias.reshape(per_channel), attrs.get("epsilon", 1e-5), np.asarray(test.outputs[0]).reshape(view))


def mvn(test: Any, spec: Spec) -> Case:
    """ONNX MeanVarianceNormalization(axes) -> MVN1 with Epsilon 0 (ONNX adds none)."""
    x = np.asarray(test.inputs[0])
    axes = sorted({_axis(a, x.ndim) for a in dict(test.attributes).get("axes", [0, 2, 3])})
    return _mvn(spec, test, x, axes, None, None, 0.0, test.outputs[0])


#: LpNormalization's Epsilon: ONNX divides by the norm and gives 0 for a zero vector, which is
#: ``x / max(norm, eps)`` (and ``x / (norm + eps)``, Epsilon's other reading) for any eps below every
#: nonzero float32 norm's rounding: the smallest normal float32.
_TINY = float(np.finfo(np.float32).tiny)


def lp_norm(test: Any, spec: Spec) -> Case:
    """ONNX LpNormalization(axis, p) -> LP_NORMALIZATION with Epsilon the smallest normal float32."""
    sem = _sem(spec, Normalization)
    x = np.asarray(test.inputs[0])
    attrs = dict(test.attributes)
    given = {sem.axis: _axis(attrs.get("axis", -1), x.ndim), sem.p: int(attrs.get("p", 2)), sem.epsilon: _TINY}
    return _case(spec, test, (_tensor(sem.input, x),), (_output(sem.output, test.outputs[0]),), given)


def lrn(test: Any, spec: Spec) -> Case:
    """ONNX LRN(alpha, beta, bias, size) -> LOCAL_RESPONSE_NORMALIZATION across channels."""
    sem = _sem(spec, Normalization)
    x = np.asarray(test.inputs[0])
    attrs = dict(test.attributes)
    given = {sem.cross_channel: True, sem.local_size: int(attrs["size"]), sem.alpha: _float(attrs.get("alpha", 1e-4)),
             sem.beta: _float(attrs.get("beta", 0.75)), sem.offset: _float(attrs.get("bias", 1.0))}
    return _case(spec, test, (_tensor(sem.input, x),), (_output(sem.output, test.outputs[0]),), given)


# -- interpolation ---------------------------------------------------------------------------------
#: ONNX nearest_mode -> (RoundingDirection, the input offset's shift).
_NEAREST = {"round_prefer_floor": (DECREASING, 0.0), "round_prefer_ceil": (INCREASING, 0.0),
            "floor": (INCREASING, 0.5), "ceil": (DECREASING, -0.5)}


def _scales(test: Any, x: np.ndarray, out: np.ndarray) -> list[float]:
    """The scale per dimension ONNX resizes with: the scales input, or from the sizes input and the policy."""
    attrs = dict(test.attributes)
    axes = [_axis(a, x.ndim) for a in attrs.get("axes", range(x.ndim))]
    given, sizes = _input(test, 2), _input(test, 3)
    scales = [1.0] * x.ndim
    if given is not None and given.size:
        for a, s in zip(axes, given.reshape(-1).tolist()):
            scales[a] = _float(s)
        return scales
    assert sizes is not None  # Resize has scales or sizes
    ratios = [float(s) / x.shape[a] for a, s in zip(axes, sizes.reshape(-1).tolist())]
    policy = attrs.get("keep_aspect_ratio_policy", "stretch")
    if policy != "stretch":
        ratios = [(min if policy == "not_larger" else max)(ratios)] * len(ratios)
    for a, r in zip(axes, ratios):
        scales[a] = _float(r)
    return scales


def resize(test: Any, spec: Spec) -> Case:
    """ONNX Resize (opset 11 on: roi, scales, sizes) -> RESAMPLE3."""
    sem = _sem(spec, Resample)
    attrs = dict(test.attributes)
    mode = attrs.get("mode", "nearest")
    # opset 10 had no mode and sampled as output_half_pixel does; from 16 the default is half_pixel
    transform = attrs.get("coordinate_transformation_mode", "half_pixel" if test.opset >= 16 else "output_half_pixel")
    if mode not in ("nearest", "linear"):
        raise Unmappable(f"mode={mode!r}: DirectML's interpolation modes are NEAREST_NEIGHBOR and LINEAR")
    if transform in ("tf_crop_and_resize", "half_pixel_symmetric"):
        raise Unmappable(f"coordinate_transformation_mode={transform!r}: not mapped to pixel offsets here "
                         "(a crop box with an extrapolation value / a centring shift per dimension)")
    x, out = np.asarray(test.inputs[0]), np.asarray(test.outputs[0])
    scales = _scales(test, x, out)
    if int(attrs.get("antialias", 0)) and min(scales) < 1:
        raise Unmappable("antialias=1 on a downscale: ONNX widens the filter by 1/scale, RESAMPLE3's page gives "
                         "no filter formula to check")
    in_off, out_off = [0.5] * x.ndim, [-0.5] * x.ndim
    if transform == "asymmetric":
        in_off, out_off = [0.0] * x.ndim, [0.0] * x.ndim
    elif transform == "align_corners":
        in_off, out_off = [0.0] * x.ndim, [0.0] * x.ndim
        scales = [_float((o - 1) / (i - 1)) if o > 1 and i > 1 and o != i else s
                  for o, i, s in zip(out.shape, x.shape, scales)]
        if any(o == 1 < i for o, i in zip(out.shape, x.shape)):
            raise Unmappable("align_corners to an output of size 1: ONNX reads coordinate 0, no scale gives that")
    elif transform == "pytorch_half_pixel" and any(o == 1 and s != 1 for o, s in zip(out.shape, scales)):
        raise Unmappable("pytorch_half_pixel to an output of size 1: ONNX reads coordinate 0, half_pixel's offsets "
                         "do not")
    rounding, shift = _NEAREST[attrs.get("nearest_mode", "round_prefer_floor")] if mode == "nearest" else (INCREASING, 0.0)
    given = {sem.mode: NEAREST if mode == "nearest" else LINEAR, sem.rounding: rounding,
             sem.dimension_count: x.ndim, sem.scales: _csv(scales),
             sem.input_offsets: _csv([o + shift for o in in_off]), sem.output_offsets: _csv(out_off),
             sem.antialiased: bool(int(attrs.get("antialias", 0)))}
    return _case(spec, test, (_tensor(sem.input, x),), (_output(sem.output, out),), given)


def upsample(test: Any, spec: Spec) -> Case:
    """ONNX Upsample (opset 9: scales input, asymmetric, nearest floor) -> UPSAMPLE_2D."""
    sem = _sem(spec, Resample)
    attrs = dict(test.attributes)
    x, out = np.asarray(test.inputs[0]), np.asarray(test.outputs[0])
    scales = np.asarray(test.inputs[1]).reshape(-1).tolist()
    if x.ndim < 3 or any(s != 1 for s in scales[:-2]) or any(s < 1 or s != int(s) for s in scales[-2:]):
        raise Unmappable(f"scales {scales}: UPSAMPLE_2D scales height and width by whole numbers only")
    mode = attrs.get("mode", "nearest")
    if mode != "nearest":
        raise Unmappable(f"mode={mode!r}: ONNX Upsample's linear is asymmetric, UPSAMPLE_2D's the page's offsets")
    given = {sem.scale_size: f"{int(scales[-1])},{int(scales[-2])}", sem.mode: NEAREST}
    return _case(spec, test, (_tensor(sem.input, x),), (_output(sem.output, out),), given)


# -- ROI align ---------------------------------------------------------------------------------------
#: ONNX RoiAlign's coordinate_transformation_mode -> InputPixelOffset (ONNX subtracts it from the scaled corners).
_ROI_OFFSETS = {"half_pixel": 0.5, "output_half_pixel": 0.0}


def roi_align(test: Any, spec: Spec) -> Case:
    """ONNX RoiAlign(X, rois, batch_indices), mode avg -> ROI_ALIGN1, LINEAR, AVERAGE.

    ONNX samples ``X1 - offset + (o S + i + 0.5) size / (out S)``: the page's
    coordinate with OutputPixelOffset -0.5 and InputPixelOffset ONNX's offset.
    ``sampling_ratio`` n > 0 is n samples (Minimum = Maximum = n); 0 is ONNX's
    ceil(size / out), the ``ceil`` reading between 1 and the largest one.  A
    sample past [-1, size] reads 0, one within it is clamped: the ``band``
    reading with OutOfBoundsInputValue 0."""
    sem = _sem(spec, Roi)
    attrs = dict(test.attributes)
    x, rois, batch, out = (np.asarray(a) for a in (*test.inputs[:3], test.outputs[0]))
    if attrs.get("mode", "avg") != "avg":
        raise Unmappable("mode='max': ONNX takes the largest of each sample's four weighted corners (w * v), the "
                         "page the largest bilinear sample (their sum): no attribute gives ONNX's")
    # opset 10 had no mode and sampled as output_half_pixel does; from 16 the default is half_pixel
    transform = attrs.get("coordinate_transformation_mode", "half_pixel" if test.opset >= 16 else "output_half_pixel")
    if transform not in _ROI_OFFSETS:
        raise Unmappable(f"coordinate_transformation_mode={transform!r}: not one ONNX defines")
    scale = _float(attrs.get("spatial_scale", 1.0))
    pooled = (int(attrs.get("output_height", 1)), int(attrs.get("output_width", 1)))
    sizes = (rois[:, 2:] - rois[:, :2]).astype(np.float64) * scale  # width, height
    if transform == "output_half_pixel" and (sizes < 1).any():
        raise Unmappable("a region smaller than 1 with output_half_pixel: ONNX widens it to 1, the page does not")
    ratio = int(attrs.get("sampling_ratio", 0))
    if ratio <= 0 and (sizes <= 0).any():
        raise Unmappable("an empty region with sampling_ratio 0: ONNX takes no sample (ceil(0) = 0), the page at "
                         "least MinimumSamplesPerOutput")
    most = ratio if ratio > 0 else int(np.ceil(sizes / np.array(pooled[::-1], np.float64)).max(initial=1))
    if batch.size and int(batch.min()) < 0:
        raise Unmappable(f"a negative batch index {int(batch.min())}: DirectML's BatchIndicesTensor is unsigned")
    given = {sem.reduction: AVERAGE, sem.mode: LINEAR, sem.scale_x: scale, sem.scale_y: scale,
             sem.input_offset_field: _ROI_OFFSETS[transform], sem.output_offset_field: -0.5,
             sem.out_of_bounds: 0.0, sem.min_samples: ratio if ratio > 0 else 1, sem.max_samples: most,
             sem.align_corners: False}
    inputs = (_tensor(sem.input, x), _tensor(sem.rois, rois), _tensor(sem.batch_indices or "", batch.astype(np.uint64)))
    return _case(spec, test, inputs, (_output(sem.output, out),), given)


_MVN = "MEAN_VARIANCE_NORMALIZATION1"

#: ONNX operator -> (the spec, its converter, the note, ONNX's outputs in the case's form or None: as stored),
#: for `importers.onnx_node.MAPPINGS`.
CONVERTERS: Mapping[str, tuple[str, Callable[[Any, Spec], Case], str,
                               Callable[[Any, Case, Spec], tuple[np.ndarray, ...]] | None]] = {
    "InstanceNormalization": (_MVN, instance_norm, "ONNX InstanceNormalization is MVN1 over axes 2 to the last, "
                                                   "scale and B {1, C, 1...}", None),
    "LayerNormalization": (_MVN, layer_norm, "ONNX LayerNormalization is MVN1 over axis to the last; its Mean and "
                                             "InvStdDev outputs have no DirectML counterpart (Y only)", None),
    "GroupNormalization": (_MVN, group_norm, "ONNX GroupNormalization is MVN1 of X viewed as {N, G, C/G, ...} over "
                                             "axes 2 to the last, scale and bias {1, G, C/G, 1...}", None),
    "MeanVarianceNormalization": (_MVN, mvn, "ONNX MeanVarianceNormalization(axes) is MVN1 with Epsilon 0", None),
    "LpNormalization": ("LP_NORMALIZATION", lp_norm, "ONNX LpNormalization(axis, p) is LP_NORMALIZATION with "
                                                     "Epsilon the smallest normal float32: ONNX adds none but "
                                                     "gives 0 for a zero vector", None),
    "LRN": ("LOCAL_RESPONSE_NORMALIZATION", lrn, "ONNX LRN(alpha, beta, bias, size) is LOCAL_RESPONSE_NORMALIZATION "
                                                 "across channels (Bias = bias, LocalSize = size)", None),
    "Resize": ("RESAMPLE3", resize, "ONNX Resize nearest/linear is RESAMPLE3; coordinate modes as pixel offsets "
                                    "and scales, nearest_mode as RoundingDirection (floor/ceil: the input offset "
                                    "moved by a half)", None),
    "Upsample": ("UPSAMPLE_2D", upsample, "ONNX Upsample nearest with whole height/width scales is UPSAMPLE_2D "
                                          "(ScaleSize width first)", None),
    "RoiAlign": ("ROI_ALIGN1", roi_align, "ONNX RoiAlign (avg) is ROI_ALIGN1 LINEAR AVERAGE; half_pixel / "
                                          "output_half_pixel are InputPixelOffset 0.5 / 0 with OutputPixelOffset "
                                          "-0.5; sampling_ratio n is n samples, 0 ONNX's ceil(size / out); a sample "
                                          "outside reads 0 (the band reading)", None),
}
