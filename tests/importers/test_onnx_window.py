"""`import onnx` for the window family (issue #35 item 6): the geometry each
converter gives (ceil_mode's end padding, SAME padding, 1-D pools, the
transposed output's padding), its refusals, and, slow, every ONNX node test
of the family from onnx's generator: reproduced or explained, the imported
cases passing on the CPU reference."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.importers.onnx_node import MAPPINGS, OnnxTest, Unmappable, to_case
from dmlconform.importers.onnx_window import CONVERTERS
from dmlconform.results import Outcome
from tests.importers.test_onnx_families import _spec, _test, needs_onnx
from tests.importers.test_onnx_index_map import _judged, imported, replayed_on_cpu


def _case(test: OnnxTest):  # type: ignore[no-untyped-def]
    return to_case(test, _spec(MAPPINGS[test.op_type].spec), MAPPINGS[test.op_type])


X = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)


def _max_pool_2x2(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 windows at stride 2 over (N, C, 4, 4): the maxima and their flat row-major indices."""
    blocks = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    first = blocks.argmax(-1)
    flat = np.arange(x.size).reshape(x.shape).reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    return blocks.max(-1), np.take_along_axis(flat, first[..., None], -1)[..., 0].astype(np.int64)


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_max_pool_indices_are_uint64_and_column_major_ones_are_refused() -> None:
    values, indices = _max_pool_2x2(X[..., ::-1].copy())
    test = _test("MaxPool", (X[..., ::-1].copy(),), (values, indices), kernel_shape=[2, 2], strides=[2, 2])
    case = _case(test)
    assert case.outputs[1].dtype.name == "UINT64"
    assert case.attribute_map()["WindowSize"] == "2,2" and case.attribute_map()["EndPadding"] == "0,0"
    assert _judged(test)[0] is None
    wrong = _test("MaxPool", (X[..., ::-1].copy(),), (values, indices + 1), kernel_shape=[2, 2], strides=[2, 2])
    assert "ONNX defines it differently" in (_judged(wrong)[0] or "")
    with pytest.raises(Unmappable, match="storage_order=1"):
        _case(_test("MaxPool", (X,), (values, indices), kernel_shape=[2, 2], strides=[2, 2], storage_order=1))


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_ceil_mode_grows_the_end_padding_and_a_counted_pad_there_is_refused() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    # kernel 3, stride 2 over 4: floor gives 1 output, ceil 2 (the second window reads 2 positions past the input)
    want = np.array([[[[5, 7], [13, 15]]]], np.float32)
    test = _test("MaxPool", (x,), (want,), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    assert _case(test).attribute_map()["EndPadding"] == "1,1"
    assert _judged(test)[0] is None
    avg = np.array([[[[5, 6.5], [11, 12.5]]]], np.float32)        # the taps inside the input only
    assert _judged(_test("AveragePool", (x,), (avg,), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))[0] is None
    with pytest.raises(Unmappable, match="count_include_pad=1 with a window past the padded input"):
        _case(_test("AveragePool", (x,), (avg,), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
                    count_include_pad=1))


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_same_padding_and_one_dimensional_pools() -> None:
    x = np.arange(10, dtype=np.float32).reshape(1, 2, 5)
    want = np.maximum(x, np.concatenate([x[..., 1:], x[..., -1:]], -1))   # SAME_UPPER: the one pad at the end
    test = _test("MaxPool", (x,), (want,), kernel_shape=[2], auto_pad="SAME_UPPER")
    case = _case(test)
    assert case.inputs[0].sizes == (1, 2, 1, 5)
    assert case.attribute_map()["StartPadding"] == "0,0" and case.attribute_map()["EndPadding"] == "0,1"
    assert _judged(test)[0] is None
    lower = _test("MaxPool", (x,), (np.maximum(x, np.concatenate([x[..., :1], x[..., :-1]], -1)),), kernel_shape=[2],
                  auto_pad="SAME_LOWER")
    assert _case(lower).attribute_map()["StartPadding"] == "0,1" and _judged(lower)[0] is None


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_conv_and_conv_integer_zero_points() -> None:
    w = np.array([1, -2], np.float32).reshape(1, 2, 1, 1)
    b = np.array([0.5], np.float32)
    out = (X * w).sum(axis=1, keepdims=True) + 0.5
    test = _test("Conv", (X, w, b), (out,))
    case = _case(test)
    assert case.attribute_map()["Mode"].endswith("CROSS_CORRELATION") and case.inputs[2].sizes == (1, 1, 1, 1)
    assert _judged(test)[0] is None
    xi = np.arange(8, dtype=np.uint8).reshape(1, 2, 2, 2)
    wi = np.array([3, 4, 5, 6], np.uint8).reshape(2, 2, 1, 1)
    zp = np.array([1, 2], np.uint8)
    want = np.einsum("nchw,mc->nmhw", xi.astype(np.int32) - 2, wi[:, :, 0, 0].astype(np.int32) - zp[:, None])
    integer = _test("ConvInteger", (xi, wi, np.array(2, np.uint8), zp), (want.astype(np.int32),))
    assert [t.sizes for t in _case(integer).inputs][1:] == [(1, 1, 1, 1), (2, 2, 1, 1), (1, 2, 1, 1)]
    assert _judged(integer)[0] is None
    off = _test("ConvInteger", (xi, wi, np.array(2, np.uint8), zp), ((want + 1).astype(np.int32),))
    assert "ONNX defines it differently" in (_judged(off)[0] or "")


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_conv_transpose_output_shape_sets_the_padding() -> None:
    x = np.arange(3, dtype=np.float32).reshape(1, 1, 3)
    w = np.array([1, 10], np.float32).reshape(1, 1, 2)
    full = np.zeros(8, np.float32)                       # stride 3: (3 - 1) * 3 + 2 = 8 positions
    for i in range(3):
        full[3 * i:3 * i + 2] += x[0, 0, i] * w[0, 0]
    test = _test("ConvTranspose", (x, w), (full[None, None, :7],), strides=[3], output_shape=[7])
    case = _case(test)
    assert case.attribute_map()["Direction"].endswith("BACKWARD")
    assert (case.attribute_map()["StartPadding"], case.attribute_map()["EndPadding"]) == ("1", "0")
    assert _judged(_test("ConvTranspose", (x, w), (full[None, None, 1:],), strides=[3], output_shape=[7]))[0] is None
    flipped = _test("ConvTranspose", (x, w[..., ::-1].copy()), (full[None, None, :8],), strides=[3],
                    output_padding=[0])
    assert (_judged(flipped)[1] or ("",))[0].startswith("ONNX's expected output differs")  # a flip is found


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_max_unpool_indices_move_into_a_larger_output_shape() -> None:
    x = np.array([5, 6, 7, 8], np.float32).reshape(1, 1, 2, 2)
    indices = np.array([5, 7, 13, 15], np.int64).reshape(1, 1, 2, 2)   # of the 4x4 the 2x2 pooling gives
    out = np.zeros((1, 1, 5, 5), np.float32)
    out[0, 0, [1, 1, 3, 3], [1, 3, 1, 3]] = x.reshape(-1)              # ONNX's block at the output's start
    test = _test("MaxUnpool", (x, indices, np.array([1, 1, 5, 5], np.int64)), (out,), kernel_shape=[2, 2],
                 strides=[2, 2])
    case = _case(test)
    assert case.inputs[1].dtype.name == "UINT64" and list(case.inputs[1].buffer) == [6, 8, 16, 18]
    assert _judged(test)[0] is None and "identical in 25 of 25" in _judged(test)[1][0]
    with pytest.raises(Unmappable, match="does not hold"):
        _case(_test("MaxUnpool", (x, indices), (out[..., :3, :3],), kernel_shape=[2, 2], strides=[2, 2]))
    with pytest.raises(Unmappable, match="unsigned"):
        _case(_test("MaxUnpool", (x, -indices), (out,), kernel_shape=[2, 2], strides=[2, 2]))


@needs_onnx  # judged by the importer, whose backend info names onnx's version
def test_col2im_block_shape_and_pads_are_fold_attributes() -> None:
    x = np.arange(15, dtype=np.float32).reshape(1, 5, 3)               # 1x5 blocks, 3 of them over width 5 + 2
    out = np.zeros((1, 1, 1, 5), np.float32)
    for block in range(3):                                             # block b covers padded columns b..b+4
        for k in range(5):
            if 1 <= block + k <= 5:
                out[0, 0, 0, block + k - 1] += x[0, k, block]
    image, window = np.array([1, 5], np.int64), np.array([1, 5], np.int64)
    test = _test("Col2Im", (x, image, window), (out,), pads=[0, 1, 0, 1])
    attrs = _case(test).attribute_map()
    assert (attrs["WindowSizes"], attrs["StartPadding"], attrs["EndPadding"]) == ("1,5", "0,1", "0,1")
    assert _judged(test)[0] is None and "identical in 5 of 5" in _judged(test)[1][0]
    shifted = _test("Col2Im", (x, image, window), (np.roll(out, 1),), pads=[0, 1, 0, 1])
    assert (_judged(shifted)[1] or ("",))[0].startswith("ONNX's expected output differs")
    with pytest.raises(Unmappable, match="3 blocks where the geometry gives 1"):
        _case(_test("Col2Im", (x, image, window), (out,)))


# -- the real node tests (onnx's generator: slow) --------------------------------------------------
@pytest.mark.slow
@needs_onnx
def test_every_window_node_test_is_reproduced_or_explained() -> None:
    result, per_op = imported(CONVERTERS)
    assert per_op == {"AveragePool": 19, "Conv": 6, "ConvInteger": 2, "ConvTranspose": 11, "GlobalAveragePool": 2,
                      "GlobalMaxPool": 2, "LpPool": 8, "MaxPool": 18, "MaxUnpool": 2, "Col2Im": 5}
    assert len(result.skipped) == 2 and not [s for s in result.skipped if "differently" in s.reason]
    beyond = [i for i in result.imported if "differs from the oracle" in i.notes[-1]]
    assert [i.test.name for i in beyond] == ["test_averagepool_2d_ceil_last_window_starts_on_pad"]
    assert "numbers of 4 decimals written into its test" in beyond[0].notes[-1]
    assert replayed_on_cpu(result) == {Outcome.PASS}
