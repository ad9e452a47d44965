"""The CPU reference backend: known values per operator, layouts, validation.

Cases are built by hand (no generator, no oracle): each expected value comes
from the doc's formula worked out by hand or from an independent closed form.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from dmlconform.backends.base import Backend, NotSupportedError
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.catalog import load_spec
from dmlconform.errors import InputError
from dmlconform.families.elementwise.reference import OPS, Call, erf64, erfc64, float32_of
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

SPECS = Path(__file__).resolve().parents[2] / "specs"
F32, F16 = DataType.FLOAT32, DataType.FLOAT16


def spec_of(name: str) -> Spec:
    return load_spec(SPECS / f"{name}.yaml")


def tensor(name: str, dtype: DataType, values: object, sizes: tuple[int, ...] | None = None,
           strides: tuple[int, ...] | None = None) -> TensorData:
    flat = np.asarray(values, dtype=numpy_dtype(dtype)).reshape(-1)
    sizes = sizes or (flat.size,)
    return TensorData(name, dtype, sizes, strides or packed_strides(sizes), flat)


def output(name: str, dtype: DataType, sizes: tuple[int, ...]) -> TensorData:
    n = int(np.prod(sizes))
    return TensorData(name, dtype, sizes, packed_strides(sizes), np.zeros(n, numpy_dtype(dtype)))


def run(op: str, dtype: DataType, inputs: dict[str, object], attrs: dict[str, object] | None = None, *,
        out: str = "OutputTensor", out_dtype: DataType | None = None, backend: CpuBackend | None = None) -> np.ndarray:
    """Run ``op`` on 1-D inputs and return the output as an array."""
    ins = tuple(tensor(n, dtype if n != "ConditionTensor" else DataType.UINT8, v) for n, v in inputs.items())
    sizes = ins[0].sizes
    o = output(out, out_dtype or dtype, sizes)
    case = Case("t", op, FeatureLevel.FL_6_4, dtype, ins, (o,), tuple((attrs or {}).items()))
    buffers = {t.name: t.buffer.copy() for t in ins} | {o.name: o.buffer.copy()}
    (backend or CpuBackend()).run(spec_of(op), case, buffers)
    return buffers[out]


def same(actual: np.ndarray, expected: list[float], dtype: DataType) -> None:
    """Bitwise equality, NaN matching NaN, sign of zero included."""
    exp = np.asarray(expected, dtype=numpy_dtype(dtype))
    assert actual.dtype == exp.dtype
    if exp.dtype.kind == "f":
        both_nan = np.isnan(actual) & np.isnan(exp)
        ok = both_nan | ((actual == exp) & (np.signbit(actual) == np.signbit(exp)))
        assert ok.all(), f"out={actual.tolist()}, but should be {exp.tolist()}"
    else:
        assert (actual == exp).all(), f"out={actual.tolist()}, but should be {exp.tolist()}"


NAN, INF = math.nan, math.inf


# -- known values ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, F16])
def test_shrink_first_match_at_threshold(dtype: DataType) -> None:
    out = run("ACTIVATION_SHRINK", dtype, {"InputTensor": [0.5, -0.5, 1.0, -1.0, 0.25, NAN]},
              {"Bias": 0.25, "Threshold": 0.5})
    same(out, [0.0, 0.0, 0.75, -0.75, 0.0, NAN], dtype)


def test_shrink_negative_threshold_takes_first_branch() -> None:
    out = run("ACTIVATION_SHRINK", F32, {"InputTensor": [0.0, 2.0]}, {"Bias": 1.0, "Threshold": -1.0})
    same(out, [-1.0, 1.0], F32)  # x > -1 matches first: x - Bias


def test_shrink_integer_exact_then_truncated() -> None:
    out = run("ACTIVATION_SHRINK", DataType.INT8, {"InputTensor": [2, -90, 0, 127, -128]},
              {"Bias": 1.5, "Threshold": 0.5})
    # 2 - 1.5 = 0.5 -> 0; -90 + 1.5 = -88.5 -> -88; 127 - 1.5 -> 125; -128 + 1.5 -> -126
    same(out, [0, -88, 0, 125, -126], DataType.INT8)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_sign_of_negative_zero_and_nan_is_zero(dtype: DataType) -> None:
    out = run("ELEMENT_WISE_SIGN", dtype, {"InputTensor": [-0.0, NAN, -3.0, 2.0, INF, -INF]})
    same(out, [0.0, 0.0, -1.0, 1.0, 1.0, -1.0], dtype)


def test_sign_integer() -> None:
    same(run("ELEMENT_WISE_SIGN", DataType.INT16, {"InputTensor": [-5, 0, 7]}), [-1, 0, 1], DataType.INT16)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_softsign(dtype: DataType) -> None:
    out = run("ACTIVATION_SOFTSIGN", dtype, {"InputTensor": [NAN, 1.0, -3.0, 0.0, -0.0]})
    same(out, [NAN, 0.5, -0.75, 0.0, -0.0], dtype)


def test_softsign_infinity_is_the_literal_nan() -> None:
    same(run("ACTIVATION_SOFTSIGN", F32, {"InputTensor": [INF]}), [NAN], F32)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_hard_sigmoid(dtype: DataType) -> None:
    out = run("ACTIVATION_HARD_SIGMOID", dtype, {"InputTensor": [-10.0, 0.0, 10.0, NAN]}, {"Alpha": 0.25, "Beta": 0.5})
    same(out, [0.0, 0.5, 1.0, NAN], dtype)


def test_hard_swish_exact_attribute_text() -> None:
    assert float32_of("1/6") == np.float32(1 / 6)
    out = run("ACTIVATION_HARD_SWISH", F32, {"InputTensor": [3.0, -3.0, 6.0]}, {"Alpha": "1/6", "Beta": 0.5})
    expected = np.float32(3.0) * (np.float32(1 / 6) * np.float32(3.0) + np.float32(0.5))
    same(out, [float(expected), -0.0, 6.0], F32)  # -3 * 0 is -0


@pytest.mark.parametrize("dtype", [F32, F16])
def test_relu_family(dtype: DataType) -> None:
    same(run("ACTIVATION_RELU", dtype, {"InputTensor": [-2.0, 3.0, NAN]}), [0.0, 3.0, NAN], dtype)
    same(run("ACTIVATION_LEAKY_RELU", dtype, {"InputTensor": [-2.0, 3.0, -0.0]}, {"Alpha": 0.5}), [-1.0, 3.0, -0.0],
         dtype)
    same(run("ACTIVATION_THRESHOLDED_RELU", dtype, {"InputTensor": [1.0, 1.5]}, {"Alpha": 1.0}), [0.0, 1.5], dtype)
    same(run("ACTIVATION_ELU", dtype, {"InputTensor": [0.0, 2.0, -INF]}, {"Alpha": 2.0}), [0.0, 2.0, -2.0], dtype)
    same(run("ACTIVATION_CELU", dtype, {"InputTensor": [3.0, -INF]}, {"Alpha": 1.0}), [3.0, -1.0], dtype)


def test_relu_integer() -> None:
    same(run("ACTIVATION_RELU", DataType.INT8, {"InputTensor": [-128, 5, 0]}), [0, 5, 0], DataType.INT8)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_smooth_activations(dtype: DataType) -> None:
    same(run("ACTIVATION_SIGMOID", dtype, {"InputTensor": [0.0, -INF, INF]}), [0.5, 0.0, 1.0], dtype)
    same(run("ACTIVATION_TANH", dtype, {"InputTensor": [0.0, -INF, 1e4]}), [0.0, -1.0, 1.0], dtype)
    same(run("ACTIVATION_SWISH", dtype, {"InputTensor": [0.0, 1e4]}, {"SigmoidInputScale": 1.0}), [0.0, 1e4], dtype)
    same(run("ACTIVATION_SOFTPLUS", dtype, {"InputTensor": [0.0, 1e4]}, {"Steepness": 1.0}),
         [float(np.float32(math.log(2))), 1e4], dtype)
    same(run("ACTIVATION_IDENTITY", dtype, {"InputTensor": [-0.0, NAN]}), [-0.0, NAN], dtype)
    same(run("ACTIVATION_LINEAR", dtype, {"InputTensor": [2.0]}, {"Alpha": 3.0, "Beta": -1.0}), [5.0], dtype)


def test_softplus_keeps_the_range_where_an_intermediate_overflows() -> None:
    """ln(1 + exp(s x)) / s is x for a large s x: never inf for a finite
    result, whatever overflows on the way (issue #32): exp(100), the product
    Steepness * x = FLT_MAX * 1.97, and Beta * x = 2 FLT_MAX under Alpha = 2^-126."""
    same(run("ACTIVATION_SOFTPLUS", F32, {"InputTensor": [100.0, -100.0]}, {"Steepness": 1.0}),
         [100.0, float(np.float32(math.exp(-100.0)))], F32)
    same(run("ACTIVATION_SOFTPLUS", F32, {"InputTensor": [1.9693403, 8.175838e26]}, {"Steepness": 3.4028235e38}),
         [1.9693403, 8.175838e26], F32)
    same(run("ACTIVATION_SOFTPLUS", F16, {"InputTensor": [1.1337891, 20.0]}, {"Steepness": 3.4028235e38}),
         [1.1337891, 20.0], F16)
    same(run("ACTIVATION_PARAMETRIC_SOFTPLUS", F32, {"InputTensor": [3.4028235e38]}, {"Alpha": 2.0 ** -126, "Beta": 2.0}),
         [8.0 - 2.0 ** -21], F32)  # 2 * (2 - 2^-23) * 2^127 * 2^-126, exactly


def test_batch_normalization_keeps_the_range_where_input_minus_mean_overflows() -> None:
    """(Input - Mean) = 2 FLT_MAX overflows float32; Scale 0.25 brings the
    result back to FLT_MAX / 2, exactly."""
    top = 3.4028235e38
    out = run("BATCH_NORMALIZATION", F32, {"InputTensor": [top], "MeanTensor": [-top], "VarianceTensor": [0.75],
                                           "ScaleTensor": [0.25], "BiasTensor": [0.0]}, {"Epsilon": 0.25})
    same(out, [float(np.float32(top)) / 2], F32)


def test_adam_at_a_tiny_training_step_is_finite() -> None:
    """1 - Beta^T at T = 3.3e-34 is 0 in float32 and float64 alike (0 / 0 =
    NaN); the step is finite: to first order in T, Alpha = sqrt(T ln(1 /
    Beta2)) / (T ln(1 / Beta1)) (issue #32)."""
    f32 = np.float32
    x, m, v, g, t = f32(2.6671579e13), f32(0.59552574), f32(1.1960177), f32(0.23149039), f32(3.329872e-34)
    lr, b1, b2, eps = f32(0.5), f32(0.9), f32(0.999), f32(1e-8)
    inputs = {"InputParametersTensor": x, "InputFirstMomentTensor": m, "InputSecondMomentTensor": v,
              "GradientTensor": g, "TrainingStepTensor": t}
    call = Call({n: np.asarray([a]) for n, a in inputs.items()},
                {"LearningRate": 0.5, "Beta1": 0.9, "Beta2": 0.999, "Epsilon": 1e-8}, F32,
                {n: np.dtype(np.float32) for n in ("OutputParametersTensor", "OutputFirstMomentTensor",
                                                    "OutputSecondMomentTensor")})
    got = np.asarray(OPS["ADAM_OPTIMIZER"](call)["OutputParametersTensor"]).astype(np.float32)
    m1 = float(b1) * float(m) + (1 - float(b1)) * float(g)
    v1 = float(b2) * float(v) + (1 - float(b2)) * float(g) ** 2
    alpha = math.sqrt(float(t) * -math.log(float(b2))) / (float(t) * -math.log(float(b1)))
    want = np.float32(float(x) - float(lr) * alpha * m1 / (math.sqrt(v1) + float(eps)))
    assert np.isfinite(want) and abs(float(got[0]) - float(want)) <= abs(float(want)) * 2.0 ** -20


def test_sigmoid_keeps_the_subnormal_tail() -> None:
    out = run("ACTIVATION_SIGMOID", F32, {"InputTensor": [-95.0]})
    assert out[0] == np.float32(math.exp(-95.0))  # exp(95) overflows float32; the result does not


def test_erf_and_gelu_against_closed_forms() -> None:
    xs = np.array([-6.0, -3.5, -1.0, -1e-3, 0.0, 0.5, 2.0, 2.99, 3.01, 5.0])
    ref = np.array([math.erf(x) for x in xs])
    assert np.allclose(erf64(xs), ref, rtol=1e-14, atol=0)
    tail = np.array([3.0, 5.0, 10.0, 25.0])
    assert np.allclose(erfc64(tail), [math.erfc(x) for x in tail], rtol=1e-13, atol=0)
    out = run("ACTIVATION_GELU", F32, {"InputTensor": [0.0, 1.0, -10.0]})
    assert out[1] == np.float32(0.5 * (1 + math.erf(1 / math.sqrt(2))))
    assert out[2] == np.float32(-10.0 * 0.5 * math.erfc(10 / math.sqrt(2)))


@pytest.mark.parametrize("dtype", [F32, F16])
def test_binary_arithmetic(dtype: DataType) -> None:
    a, b = [1.0, -2.0, 7.5, NAN], [2.0, 3.0, -2.0, 1.0]
    same(run("ELEMENT_WISE_ADD", dtype, {"ATensor": a, "BTensor": b}), [3.0, 1.0, 5.5, NAN], dtype)
    same(run("ELEMENT_WISE_DIVIDE", dtype, {"ATensor": a, "BTensor": b}), [0.5, -2 / 3, -3.75, NAN], dtype)
    same(run("ELEMENT_WISE_MODULUS_FLOOR", dtype, {"ATensor": a, "BTensor": b}), [1.0, 1.0, -0.5, NAN], dtype)
    same(run("ELEMENT_WISE_MODULUS_TRUNCATE", dtype, {"ATensor": a, "BTensor": b}), [1.0, -2.0, 1.5, NAN], dtype)
    same(run("ELEMENT_WISE_MAX", dtype, {"ATensor": a, "BTensor": b}), [2.0, 3.0, 7.5, NAN], dtype)
    same(run("ELEMENT_WISE_DIFFERENCE_SQUARE", dtype, {"ATensor": a, "BTensor": b}), [1.0, 25.0, 90.25, NAN], dtype)


def test_mean_does_not_overflow() -> None:
    big = float(np.finfo(np.float32).max)
    same(run("ELEMENT_WISE_MEAN", F32, {"ATensor": [big], "BTensor": [big]}), [big], F32)


@pytest.mark.parametrize("dtype", [DataType.INT8, DataType.INT32])
def test_integer_arithmetic_wraps_and_truncates(dtype: DataType) -> None:
    info = np.iinfo(numpy_dtype(dtype))
    a, b = [int(info.max), -7, 7, 5], [1, 2, -2, 0]
    same(run("ELEMENT_WISE_ADD", dtype, {"ATensor": a, "BTensor": b}), [int(info.min), -5, 5, 5], dtype)
    same(run("ELEMENT_WISE_DIVIDE", dtype, {"ATensor": a, "BTensor": b}), [int(info.max), -3, -3, 0], dtype)
    same(run("ELEMENT_WISE_MODULUS_TRUNCATE", dtype, {"ATensor": a, "BTensor": b}), [0, -1, 1, 5], dtype)
    same(run("ELEMENT_WISE_MODULUS_FLOOR", dtype, {"ATensor": a, "BTensor": b}), [0, 1, -1, 5], dtype)
    same(run("ELEMENT_WISE_MEAN", DataType.INT32, {"ATensor": [-7, 2 ** 31 - 1], "BTensor": [2, 2 ** 31 - 1]}),
         [-2, 2 ** 31 - 1], DataType.INT32)


def test_integer_pow_and_shifts() -> None:
    same(run("ELEMENT_WISE_POW", DataType.INT32, {"InputTensor": [3, 2, -1, 5], "ExponentTensor": [4, 31, -3, -1]}),
         [81, -(2 ** 31), -1, 0], DataType.INT32)
    same(run("ELEMENT_WISE_BIT_SHIFT_LEFT", DataType.UINT8, {"ATensor": [1, 3, 255], "BTensor": [7, 8, 1]}),
         [128, 0, 254], DataType.UINT8)
    same(run("ELEMENT_WISE_BIT_SHIFT_RIGHT", DataType.UINT32, {"ATensor": [256, 7], "BTensor": [4, 40]}),
         [16, 0], DataType.UINT32)


def test_clip_and_threshold_on_integers_truncate_the_bounds() -> None:
    same(run("ELEMENT_WISE_CLIP", DataType.INT8, {"InputTensor": [-100, 0, 100]}, {"Min": -1.5, "Max": 2.5}),
         [-1, 0, 2], DataType.INT8)
    same(run("ELEMENT_WISE_THRESHOLD", DataType.UINT8, {"InputTensor": [0, 9]}, {"Min": 0.7}), [0, 9],
         DataType.UINT8)
    same(run("ELEMENT_WISE_THRESHOLD", DataType.UINT8, {"InputTensor": [0, 9]}, {"Min": 300.0}), [44, 44],
         DataType.UINT8)  # max(x, 300) = 300, wrapped (integer_overflow: wrap)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_clip_and_clip_grad(dtype: DataType) -> None:
    same(run("ELEMENT_WISE_CLIP", dtype, {"InputTensor": [-5.0, 0.5, 5.0, NAN]}, {"Min": -1.0, "Max": 1.0}),
         [-1.0, 0.5, 1.0, NAN], dtype)
    out = run("ELEMENT_WISE_CLIP_GRAD", dtype, {"InputTensor": [-1.0, 0.0, 1.0, NAN],
                                                "InputGradientTensor": [7.0, 7.0, 7.0, 7.0]},
              {"Min": -1.0, "Max": 1.0}, out="OutputGradientTensor")
    same(out, [0.0, 7.0, 0.0, 7.0], dtype)  # nan_policy formula: NaN falls to `otherwise`


def test_logic_and_comparisons() -> None:
    u8 = DataType.UINT8
    same(run("ELEMENT_WISE_LOGICAL_XOR", u8, {"ATensor": [0, 2, 3], "BTensor": [0, 0, 9]}), [0, 1, 0], u8)
    same(run("ELEMENT_WISE_LOGICAL_NOT", u8, {"InputTensor": [0, 5]}), [1, 0], u8)
    out = run("ELEMENT_WISE_LOGICAL_LESS_THAN", F16, {"ATensor": [1.0, NAN, -0.0], "BTensor": [2.0, 1.0, 0.0]},
              out_dtype=u8)
    same(out, [1, 0, 0], u8)
    same(run("ELEMENT_WISE_IS_INFINITY", F32, {"InputTensor": [INF, -INF, NAN, 1.0]},
             {"InfinityMode": "DML_IS_INFINITY_MODE_NEGATIVE"}, out_dtype=u8), [0, 1, 0, 0], u8)


def test_if_selects_values_as_they_are() -> None:
    out = run("ELEMENT_WISE_IF", DataType.FLOAT64, {"ConditionTensor": [1, 0, 2], "ATensor": [NAN, 1.0, -0.0],
                                                    "BTensor": [9.0, NAN, 8.0]})
    same(out, [NAN, NAN, -0.0], DataType.FLOAT64)


def test_float16_rounds_once() -> None:
    # 1 + 2^-11 + 2^-22 is above the fp16 midpoint 1 + 2^-11: one rounding gives 1 + 2^-10,
    # rounding the addends to fp16 first would give 1 (ties to even).
    out = run("ELEMENT_WISE_ADD", F16, {"ATensor": [1.0], "BTensor": [float(np.float16(2 ** -11))]})
    same(out, [1.0], F16)  # both inputs fp16: the exact sum is a tie, ties to even
    assert run("ELEMENT_WISE_MULTIPLY", F16, {"ATensor": [1.5], "BTensor": [1.5]})[0] == np.float16(2.25)


# -- layouts ---------------------------------------------------------------------
def _unary_case(inp: TensorData, out: TensorData, *, aliases: tuple[tuple[str, str], ...] = (),
                layout: Layout = Layout.PACKED) -> Case:
    return Case("layout", "ACTIVATION_SOFTSIGN", FeatureLevel.FL_6_4, F32, (inp,), (out,), (), layout, aliases)


def test_padded_strides_are_honoured() -> None:
    flat = np.array([1, 3, 99, 99, -1, 7, 99, 99], dtype=np.float32)
    inp = TensorData("InputTensor", F32, (2, 2), (4, 1), flat)
    out = TensorData("OutputTensor", F32, (2, 2), (1, 3), np.zeros(5, np.float32))  # column-major with a gap
    buffers = {"InputTensor": flat.copy(), "OutputTensor": np.full(5, -9.0, np.float32)}
    CpuBackend().run(spec_of("ACTIVATION_SOFTSIGN"), _unary_case(inp, out, layout=Layout.PADDED), buffers)
    got = buffers["OutputTensor"]
    assert got.tolist() == [0.5, -0.5, -9.0, 0.75, 0.875]  # element (i, j) at i + 3j; the gap untouched


def test_broadcast_stride_zero() -> None:
    a = TensorData("ATensor", F32, (2, 3), (3, 1), np.arange(6, dtype=np.float32))
    b = TensorData("BTensor", F32, (2, 3), (0, 1), np.array([10, 20, 30], dtype=np.float32))
    out = output("OutputTensor", F32, (2, 3))
    case = Case("bc", "ELEMENT_WISE_ADD", FeatureLevel.FL_6_4, F32, (a, b), (out,), layout=Layout.BROADCAST)
    buffers = {"ATensor": a.buffer.copy(), "BTensor": b.buffer.copy(), "OutputTensor": out.buffer.copy()}
    CpuBackend().run(spec_of("ELEMENT_WISE_ADD"), case, buffers)
    assert buffers["OutputTensor"].tolist() == [10, 21, 32, 13, 24, 35]


def test_in_place_output_is_the_input_buffer() -> None:
    # A transposed view in place: element (i, j) reads where (j, i) is written,
    # so writing while computing would read already-written values.
    flat = np.array([1, 2, 3, 4], dtype=np.float32)
    inp = TensorData("InputTensor", F32, (2, 2), (2, 1), flat)
    out = TensorData("OutputTensor", F32, (2, 2), (1, 2), flat)
    shared = flat.copy()
    buffers = {"InputTensor": shared, "OutputTensor": shared}
    case = _unary_case(inp, out, aliases=(("OutputTensor", "InputTensor"),), layout=Layout.IN_PLACE)
    CpuBackend().run(spec_of("ACTIVATION_SOFTSIGN"), case, buffers)
    assert shared.tolist() == [0.5, 0.75, float(np.float32(2) / np.float32(3)), float(np.float32(0.8))]
    assert buffers["OutputTensor"] is shared


def test_in_place_binary_reads_before_writing() -> None:
    flat = np.array([1, 2, 3], dtype=np.int32)
    a = TensorData("ATensor", DataType.INT32, (3,), (1,), flat)
    b = TensorData("BTensor", DataType.INT32, (3,), (1,), np.array([3, 2, 1], np.int32))
    out = TensorData("OutputTensor", DataType.INT32, (3,), (1,), flat)
    shared = flat.copy()
    buffers = {"ATensor": shared, "BTensor": b.buffer.copy(), "OutputTensor": shared}
    case = Case("ip", "ELEMENT_WISE_MULTIPLY", FeatureLevel.FL_6_4, DataType.INT32, (a, b), (out,),
                aliases=(("OutputTensor", "ATensor"),), layout=Layout.IN_PLACE)
    CpuBackend().run(spec_of("ELEMENT_WISE_MULTIPLY"), case, buffers)
    assert shared.tolist() == [3, 4, 3]


# -- validation ---------------------------------------------------------------------
def _softsign(dtype: DataType, sizes: tuple[int, ...], out_dtype: DataType | None = None) -> Case:
    n = int(np.prod(sizes))
    inp = TensorData("InputTensor", dtype, sizes, packed_strides(sizes), np.zeros(n, numpy_dtype(dtype)))
    return _unary_case(inp, output("OutputTensor", out_dtype or dtype, sizes))


def test_supports_follows_the_claimed_level() -> None:
    spec = spec_of("ACTIVATION_SOFTSIGN")  # 1_0: 4-D only; 3_0: 1 to 8 dimensions
    old, new = CpuBackend("1_0"), CpuBackend()
    case = _softsign(F32, (2, 3))
    assert new.supports(spec, case).supported
    verdict = old.supports(spec, case)
    assert not verdict.supported
    assert verdict.reason == ("InputTensor dimension count 2 is not supported at feature level 1_0 (supported: 4)")
    assert old.supports(spec, _softsign(F32, (1, 2, 3, 4))).supported
    with pytest.raises(NotSupportedError, match="dimension count 2"):
        old.run(spec, case, {"InputTensor": case.inputs[0].buffer.copy(), "OutputTensor": np.zeros(6, np.float32)})


def test_supports_rejects_dtype_outside_the_row_and_mismatch() -> None:
    spec = spec_of("ACTIVATION_SOFTSIGN")
    verdict = CpuBackend().supports(spec, _softsign(DataType.INT32, (4,)))
    assert not verdict.supported and "data type INT32 is not supported at feature level 6_4" in (verdict.reason or "")
    verdict = CpuBackend().supports(spec, _softsign(F32, (4,), out_dtype=F16))
    assert verdict.reason == "InputTensor, OutputTensor must have the same DataType (InputTensor=FLOAT32, OutputTensor=FLOAT16)"


def test_supports_rejects_operator_newer_than_the_level() -> None:
    spec = spec_of("ACTIVATION_GELU")
    verdict = CpuBackend("5_0").supports(spec, _softsign(F32, (4,)))
    assert verdict.reason == "ACTIVATION_GELU is introduced at 5_1, above the claimed feature level 5_0"


def test_info_and_protocol() -> None:
    backend = CpuBackend("5.0")
    info = backend.info()
    assert isinstance(backend, Backend)
    assert (info.name, info.feature_level, info.flush_subnormals, info.available) == ("cpu", FeatureLevel.FL_5_0,
                                                                                      False, True)
    assert info.device.startswith(f"numpy {np.__version__} on ")
    assert CpuBackend().info().feature_level is FeatureLevel.FL_6_4
    with pytest.raises(InputError, match="unknown option colour"):  # a usage error (exit 2), not a TypeError
        CpuBackend(colour="red")


def test_every_evaluable_spec_has_an_implementation() -> None:
    evaluable = sorted(p.stem for p in SPECS.glob("*.yaml") if "evaluable: true" in p.read_text())
    missing = [name for name in evaluable if name not in OPS]
    assert not missing, f"no cpu implementation for {missing}"


def test_clip_grad_integer_bounds_are_exact_at_64_bits() -> None:
    top = 2 ** 63 - 1
    out = run("ELEMENT_WISE_CLIP_GRAD1", DataType.INT64, {"InputTensor": [top, 5, 0],
                                                          "InputGradientTensor": [9, 9, 9]},
              {"MinMaxDataType": "DML_TENSOR_DATA_TYPE_INT64", "Min": 0, "Max": top}, out="OutputGradientTensor")
    same(out, [0, 9, 0], DataType.INT64)
    out = run("ELEMENT_WISE_CLIP_GRAD", DataType.INT8, {"InputTensor": [-128, 127], "InputGradientTensor": [3, 3]},
              {"Min": -math.inf, "Max": math.inf}, out="OutputGradientTensor")
    same(out, [3, 3], DataType.INT8)


def test_modulus_by_infinity_is_the_formula_nan() -> None:
    for op in ("ELEMENT_WISE_MODULUS_FLOOR", "ELEMENT_WISE_MODULUS_TRUNCATE"):
        same(run(op, F32, {"ATensor": [-0.25, 1.0], "BTensor": [INF, -INF]}), [NAN, NAN], F32)


def test_shifts_are_logical_on_signed_types() -> None:
    """The shift pages: the encoding is shifted, the type ignored except for its width."""
    from dmlconform.families.elementwise.reference import _shift

    class _Call:
        def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
            self.values = {"ATensor": a, "BTensor": b}

        def x(self, name: str) -> np.ndarray:
            return self.values[name]

    right = _shift(False)(_Call(np.array([-8, 8, 1], np.int8), np.array([1, 9, -1], np.int8)))
    assert right.tolist() == [124, 0, 0]
    assert _shift(True)(_Call(np.array([3], np.uint64), np.array([64], np.uint64))).tolist() == [0]


def test_support_verdicts_follow_each_cases_conditional_table_whatever_was_asked_before(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """REDUCE's table for ARGMIN/ARGMAX differs from the others': one
    backend asked about both in turn answers as a fresh one does (REDUCE
    given a stand-in implementation: the reference has none)."""
    import dmlconform.backends.cpu as cpu

    monkeypatch.setattr(cpu, "OPS", {**OPS, "REDUCE": lambda call: call.x()})
    spec = spec_of("REDUCE")
    inp = tensor("InputTensor", F32, np.zeros(24), (1, 2, 3, 4))
    out = output("OutputTensor", DataType.UINT32, (1, 2, 3, 1))

    def case(function: str) -> Case:
        return Case(function, "REDUCE", FeatureLevel.FL_6_4, F32, (inp,), (out,), (("Function", function),))

    cases = [case(f) for f in ("DML_REDUCE_FUNCTION_ARGMIN", "DML_REDUCE_FUNCTION_AVERAGE")] * 2
    shared = CpuBackend()
    asked = [shared.supports(spec, c) for c in cases]
    assert asked == [CpuBackend().supports(spec, c) for c in cases]
    assert asked[0].supported and asked[2].supported
    assert asked[1].reason == asked[3].reason == ("OutputTensor data type UINT32 is not supported at feature level "
                                                  "6_4 (supported: FLOAT32, FLOAT16)")


def test_asking_about_a_case_keeps_no_reference_to_it() -> None:
    """State belongs to the run: the backend remembers no case it was asked
    about (a large case's buffers stay alive only as long as the run holds it)."""
    spec, case = spec_of("ACTIVATION_SOFTSIGN"), _softsign(F32, (2, 3))
    backend = CpuBackend()
    held = sys.getrefcount(case)
    assert backend.supports(spec, case).supported
    assert sys.getrefcount(case) == held


def test_support_rules_follow_the_spec_asked_about_not_its_operator_name() -> None:
    """Rules are remembered per operator and the values of the attributes
    that pick a table, for an equal spec only: a changed spec of the same
    operator gets its own verdict, an equal one (another object) the same."""
    spec = spec_of("ACTIVATION_SOFTSIGN")
    case = _softsign(F32, (2, 3))
    backend = CpuBackend()
    assert backend.supports(spec, case).supported
    assert backend.supports(spec_of("ACTIVATION_SOFTSIGN"), case).supported
    four_d = dataclasses.replace(spec, support=tuple(
        dataclasses.replace(t, rows=tuple(dataclasses.replace(r, dims=(4,)) for r in t.rows)) for t in spec.support))
    verdict = backend.supports(four_d, case)
    assert verdict.reason == "InputTensor dimension count 2 is not supported at feature level 6_4 (supported: 4)"
    assert backend.supports(spec, case).supported
