"""`import onnx` for the normalization and interpolation families (issue #36
item 6): the axes and views of the normalizations, the Lp epsilon, Resize's
coordinate modes and nearest modes as offsets and rounding directions, the
refusals, and, slow, every ONNX node test of the families from onnx's
generator: reproduced or explained, the imported cases passing on cpu."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dmlconform.importers.onnx_node import MAPPINGS, OnnxTest, Unmappable, to_case
from dmlconform.importers.onnx_normalization import CONVERTERS
from dmlconform.results import Outcome
from tests.importers.test_onnx_families import _spec, _test, needs_onnx
from tests.importers.test_onnx_index_map import _judged, imported, replayed_on_cpu


def _case(test: OnnxTest):  # type: ignore[no-untyped-def]
    return to_case(test, _spec(MAPPINGS[test.op_type].spec), MAPPINGS[test.op_type])


def _normalized(x: np.ndarray, axes: tuple[int, ...], eps: float) -> np.ndarray:
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    return ((x64 - mean) / np.sqrt(x64.var(axis=axes, keepdims=True) + eps)).astype(x.dtype)


X = np.random.default_rng(7).standard_normal((2, 4, 3, 3)).astype(np.float32)


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_group_normalization_is_mvn1_of_a_grouped_view() -> None:
    scale, bias = np.arange(1, 5, dtype=np.float32), np.zeros(4, np.float32)
    view = X.reshape(2, 2, 2, 3, 3)
    want = (_normalized(view, (2, 3, 4), 1e-5) * scale.reshape(1, 2, 2, 1, 1)).reshape(X.shape)
    test = _test("GroupNormalization", (X, scale, bias), (want,), num_groups=2)
    case = _case(test)
    assert case.inputs[0].sizes == (2, 2, 2, 3, 3) and case.attribute_map()["Axes"] == "2,3,4"
    assert [t.sizes for t in case.inputs[1:]] == [(1, 2, 2, 1, 1)] * 2
    assert _judged(test)[0] is None
    per_channel = (_normalized(X, (2, 3), 1e-5) * scale.reshape(1, 4, 1, 1)).astype(np.float32)
    wrong = _judged(_test("GroupNormalization", (X, scale, bias), (per_channel,), num_groups=2))[1]
    assert wrong and "differs from the oracle" in wrong[0]       # instance normalization's values: found


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_layer_and_instance_normalization_axes() -> None:
    scale = np.full((3, 3), 2, np.float32)
    layer = _test("LayerNormalization", (X, scale, None), (2 * _normalized(X, (2, 3), 1e-5),), axis=-2)
    assert _case(layer).attribute_map()["Axes"] == "2,3" and _case(layer).inputs[1].sizes == (1, 1, 3, 3)
    assert _judged(layer)[0] is None
    ones, zeros = np.ones(4, np.float32), np.zeros(4, np.float32)
    inst = _test("InstanceNormalization", (X, ones, zeros), (_normalized(X, (2, 3), 0.01),), epsilon=0.01)
    assert _case(inst).attribute_map()["Epsilon"] == float(np.float32(0.01)) and _judged(inst)[0] is None


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_lp_normalization_gives_a_zero_vector_zero() -> None:
    x = np.array([[3, 0], [4, 0]], np.float32)
    test = _test("LpNormalization", (x,), (np.array([[0.6, 0], [0.8, 0]], np.float32),), axis=0, p=2)
    assert _case(test).attribute_map()["Epsilon"] == float(np.finfo(np.float32).tiny)
    assert _judged(test)[0] is None


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_resize_nearest_modes_are_rounding_directions_and_offsets() -> None:
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)
    scales = np.array([1, 1, 1, 2.5], np.float32)
    # asymmetric: source coordinate o / 2.5 for o = 0..9: 0, .4, .8, 1.2, 1.6, 2, 2.4, 2.8, 3.2, 3.6
    source = np.arange(10) / 2.5
    for mode, index in (("floor", np.floor(source)), ("ceil", np.ceil(source)),
                        ("round_prefer_floor", np.ceil(source - 0.5)), ("round_prefer_ceil", np.floor(source + 0.5))):
        want = x[..., np.minimum(index.astype(int), 3)]
        test = _test("Resize", (x, None, scales), (want,), mode="nearest", nearest_mode=mode,
                     coordinate_transformation_mode="asymmetric")
        assert _judged(test)[0] is None, mode
    floor = _case(_test("Resize", (x, None, scales), (x,), mode="nearest", nearest_mode="floor",
                        coordinate_transformation_mode="asymmetric"))
    assert floor.attribute_map()["InputPixelOffsets"] == "0.5,0.5,0.5,0.5"
    assert floor.attribute_map()["RoundingDirection"].endswith("INCREASING")
    wrong = _test("Resize", (x, None, scales), (x[..., np.minimum(np.ceil(source).astype(int), 3)],), mode="nearest",
                  nearest_mode="floor", coordinate_transformation_mode="asymmetric")
    assert (_judged(wrong)[1] or ("",))[0].startswith("ONNX's expected output differs")


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_resize_refusals_and_upsample() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    half = np.array([1, 1, 0.5, 0.5], np.float32)
    for attrs, reason in (({"mode": "cubic"}, "mode='cubic'"),
                          ({"mode": "linear", "antialias": 1}, "antialias=1 on a downscale"),
                          ({"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"},
                           "tf_crop_and_resize")):
        with pytest.raises(Unmappable, match=reason):
            _case(_test("Resize", (x, None, half), (x[..., ::2, ::2],), **attrs))
    up = _test("Upsample", (x, np.array([1, 1, 2, 3], np.float32)), (x.repeat(2, 2).repeat(3, 3),), opset=9)
    assert _case(up).attribute_map()["ScaleSize"] == "3,2" and _judged(up)[0] is None
    with pytest.raises(Unmappable, match="whole numbers only"):
        _case(_test("Upsample", (x, np.array([1, 1, 1.5, 2], np.float32)), (x,), opset=9))


RAMP = np.tile(np.arange(1, 9, dtype=np.float32), (1, 1, 4, 1))        # x[..., h, w] = w + 1: bilinear is exact


def _roi_align(x: np.ndarray, rois: list[list[float]], out: np.ndarray, **attrs: object) -> OnnxTest:
    return _test("RoiAlign", (x, np.array(rois, np.float32), np.zeros(len(rois), np.int64)), (out,), opset=16,
                 output_height=out.shape[2], output_width=out.shape[3], **attrs)


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_roi_align_offsets_and_sample_counts() -> None:
    # region x 1..5, 2 bins of 2 columns, 2 samples each at x1 - offset + 0.5, 1.5 (+ 2 for the second bin);
    # y 1..3 keeps every sample inside under either offset
    for mode, offset in (("output_half_pixel", 0.0), ("half_pixel", 0.5)):
        want = np.broadcast_to(np.array([3.0, 5.0], np.float32) - offset, (1, 1, 2, 2)).copy()
        for ratio in (2, 0):                                            # 0: ONNX's ceil(4 / 2) = 2 as well
            test = _roi_align(RAMP, [[1, 1, 5, 3]], want, coordinate_transformation_mode=mode,
                              sampling_ratio=ratio)
            attrs = _case(test).attribute_map()
            assert (attrs["InputPixelOffset"], attrs["OutputPixelOffset"]) == (offset, -0.5)
            assert (attrs["MinimumSamplesPerOutput"], attrs["MaximumSamplesPerOutput"]) == (ratio or 1, 2)
            assert _judged(test)[0] is None and "identical in 4 of 4" in _judged(test)[1][0]
    old = _roi_align(RAMP, [[1, 1, 5, 3]], want, sampling_ratio=2)     # no mode, opset 16: half_pixel
    assert _case(old).attribute_map()["InputPixelOffset"] == 0.5
    assert _case(replace(old, opset=10)).attribute_map()["InputPixelOffset"] == 0.0  # opset 10: no offset
    moved = _roi_align(RAMP, [[1, 1, 5, 3]], np.full((1, 1, 2, 2), 3.0, np.float32), sampling_ratio=2,
                       coordinate_transformation_mode="output_half_pixel")
    assert (_judged(moved)[1] or ("",))[0].startswith("ONNX's expected output differs")


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_roi_align_band_reading_and_refusals() -> None:
    # half_pixel, region 0..3 in 2 bins, 2 samples: x -0.125 (clamped to 0: ONNX's band), 0.625; 1.375, 2.125
    x = RAMP / np.float32(7)
    band = np.array([1.3125, 2.75]) / 7
    literal = np.broadcast_to(np.round(band, 4).astype(np.float32), (1, 1, 2, 2)).copy()
    test = _roi_align(x, [[0, 0, 3, 3]], literal, coordinate_transformation_mode="half_pixel", sampling_ratio=2)
    assert _judged(test)[0] is None and "under reading:out-of-bounds:band" in _judged(test)[1][0]
    for attrs, rois, reason in (({"mode": "max"}, [[0, 0, 3, 3]], "mode='max'"),
                                ({"coordinate_transformation_mode": "output_half_pixel"}, [[0, 0, 0.5, 3]],
                                 "smaller than 1"),
                                ({"coordinate_transformation_mode": "half_pixel"}, [[1, 0, 1, 3]], "empty region")):
        with pytest.raises(Unmappable, match=reason):
            _case(_roi_align(x, rois, literal, **attrs))


@pytest.mark.slow
@needs_onnx
def test_every_normalization_and_resize_node_test_is_reproduced_or_explained() -> None:
    result, per_op = imported(CONVERTERS)
    assert per_op == {"GroupNormalization": 2, "InstanceNormalization": 2, "LRN": 2, "LayerNormalization": 19,
                      "LpNormalization": 6, "MeanVarianceNormalization": 1, "Resize": 18, "Upsample": 1, "RoiAlign": 2}
    assert len(result.skipped) == 22 and not [s for s in result.skipped if "differently" in s.reason]
    beyond = {i.test.name: i.notes[-1] for i in result.imported if "differs from the oracle" in i.notes[-1]}
    assert sorted(beyond) == ["test_roialign_aligned_false", "test_roialign_aligned_true"]
    assert all("numbers of 4 decimals" in note for note in beyond.values())
    assert "under reading:out-of-bounds:band" in beyond["test_roialign_aligned_true"]
    assert replayed_on_cpu(result) == {Outcome.PASS}
