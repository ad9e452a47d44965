"""Operator descs built from spec fields: what the pointers reach."""

from __future__ import annotations

import ctypes as C
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dmlconform.backends.directml import abi
from dmlconform.backends.directml.descs import DescError, NestedOp, TensorLayout, build, enum_value, float32_value
from dmlconform.spec.model import DataType
from tests.backends.directml.conftest import spec


def _tensor(address: int) -> tuple[abi.DML_BUFFER_TENSOR_DESC, tuple[int, ...], tuple[int, ...] | None]:
    desc = abi.DML_TENSOR_DESC.from_address(address)
    assert desc.Type == abi.TensorType.BUFFER
    b = abi.DML_BUFFER_TENSOR_DESC.from_address(desc.Desc)
    sizes = tuple((C.c_uint32 * b.DimensionCount).from_address(b.Sizes))
    strides = tuple((C.c_uint32 * b.DimensionCount).from_address(b.Strides)) if b.Strides else None
    return b, sizes, strides


def test_softsign_desc_with_strides_and_total_size() -> None:
    s = spec("ACTIVATION_SOFTSIGN")
    built = build(s, {"InputTensor": TensorLayout(DataType.FLOAT32, (2, 3), (4, 1)),
                      "OutputTensor": TensorLayout(DataType.FLOAT16, (2, 3))}, {})
    assert built.desc.Type == 50
    body = built.body
    b, sizes, strides = _tensor(body.InputTensor)
    assert (b.DataType, b.DimensionCount, sizes, strides) == (1, 2, (2, 3), (4, 1))
    assert b.TotalTensorSizeInBytes == 4 * (1 + 1 * 4 + 2 * 1)  # 7 elements, already a multiple of 4
    out, _, out_strides = _tensor(body.OutputTensor)
    assert (out.DataType, out_strides, out.TotalTensorSizeInBytes) == (2, None, 12)


def test_total_size_rounds_up_to_four_and_packs_four_bit_types() -> None:
    assert TensorLayout(DataType.FLOAT16, (3,)).total_bytes == 8
    assert TensorLayout(DataType.INT4, (5,)).total_bytes == 4
    assert TensorLayout(DataType.FLOAT32, (2, 3), (0, 1)).total_bytes == 12  # broadcast rows


def test_scalars_defaults_scale_bias_and_absent_optional() -> None:
    shrink = build(spec("ACTIVATION_SHRINK"), {}, {"Threshold": 2.0})
    assert (shrink.body.Bias, shrink.body.Threshold, shrink.body.InputTensor) == (0.0, 2.0, None)
    ident = build(spec("ELEMENT_WISE_IDENTITY"), {}, {"ScaleBias.Scale": 3.0})
    sb = abi.DML_SCALE_BIAS.from_address(ident.body.ScaleBias)
    assert (sb.Scale, sb.Bias) == (3.0, 0.0)
    assert build(spec("ELEMENT_WISE_IDENTITY"), {}, {}).body.ScaleBias is None


def test_scalar_unions_follow_their_data_type_field() -> None:
    clip = build(spec("ELEMENT_WISE_CLIP1"), {}, {"Min": -3, "Max": 7}, dtype=DataType.INT64)
    assert clip.body.MinMaxDataType == DataType.INT64.value
    assert (clip.body.Min.Int64, clip.body.Max.Int64) == (-3, 7)
    half = build(spec("ELEMENT_WISE_CLIP1"), {}, {"MinMaxDataType": "DML_TENSOR_DATA_TYPE_FLOAT16", "Max": 1.0})
    assert half.body.Max.UInt16 == 0x3C00


def test_arrays_fill_their_count_field_and_nested_descs() -> None:
    tile = build(spec("TILE"), {}, {"Repeats": [1, 2, 3]})
    assert tile.body.RepeatsCount == 3
    assert list((C.c_uint32 * 3).from_address(tile.body.Repeats)) == [1, 2, 3]
    add1 = build(spec("ELEMENT_WISE_ADD1"), {}, {"FusedActivation": NestedOp(spec("ACTIVATION_LINEAR"),
                                                                              (("Alpha", 2.0),))})
    nested = abi.DML_OPERATOR_DESC.from_address(add1.body.FusedActivation)
    assert nested.Type == spec("ACTIVATION_LINEAR").operator_type
    linear = C.c_float.from_address(nested.Desc + 16)
    assert linear.value == 2.0


@pytest.mark.parametrize(("operator", "attributes", "field", "count", "ctype", "items"), [
    ("ACTIVATION_HARDMAX1", {"AxisCount": 1, "Axes": "3"}, "Axes", "AxisCount", C.c_uint32, [3]),
    ("ACTIVATION_HARDMAX1", {"AxisCount": 2, "Axes": "2, 0"}, "Axes", "AxisCount", C.c_uint32, [2, 0]),
    ("ACTIVATION_HARDMAX1", {"Axes": 1}, "Axes", "AxisCount", C.c_uint32, [1]),
    ("VALUE_SCALE_2D", {"ChannelCount": 3, "Bias": "-0.5,1/3,inf"}, "Bias", "ChannelCount", C.c_float,
     [-0.5, float(np.float32(1 / 3)), float("inf")])])
def test_array_attributes_as_cases_hold_them(operator: str, attributes: dict[str, object], field: str, count: str,
                                             ctype: type, items: list[float]) -> None:
    """Issue #37: a case holds an ARRAY attribute as text ("2,0"), which the
    builder read as items before (1,155 cases of the default suite failed
    with TypeError)."""
    desc = build(spec(operator), {}, attributes)
    assert getattr(desc.body, count) == len(items)
    assert list((ctype * len(items)).from_address(getattr(desc.body, field))) == items


@pytest.mark.parametrize(("operator", "attributes", "shown"), [
    ("ACTIVATION_HARDMAX1", {"Axes": "1,x"}, "field Axes: '1,x' is not a list of whole numbers"),
    ("ACTIVATION_HARDMAX1", {"Axes": "1.5"}, "field Axes: '1.5' is not a list of whole numbers"),
    ("VALUE_SCALE_2D", {"Bias": "0.5,,1"}, "field Bias: '0.5,,1' is not a list of numbers")])
def test_array_attributes_that_are_no_numbers_name_the_field(operator: str, attributes: dict[str, object],
                                                             shown: str) -> None:
    with pytest.raises(DescError, match=f"^{shown}; write them comma-separated"):
        build(spec(operator), {}, attributes)


def test_enums_by_name_suffix_or_number_and_errors() -> None:
    field = spec("ELEMENT_WISE_ROUND").field("RoundingMode")
    assert enum_value(field, "DML_ROUNDING_MODE_TOWARD_ZERO") == 1
    assert enum_value(field, "TOWARD_INFINITY") == 2 and enum_value(field, 0) == 0
    with pytest.raises(DescError, match="field RoundingMode: 'HALFWAY' is not a DML_ROUNDING_MODE constant"):
        enum_value(field, "HALFWAY")
    with pytest.raises(DescError, match="no operator_type"):
        import dataclasses
        build(dataclasses.replace(spec("ACTIVATION_SOFTSIGN"), operator_type=None), {}, {})


def test_exact_float_texts_become_the_nearest_float32() -> None:
    """Issue #25: HARD_SWISH's cases carry Alpha as the doc's exact "1/6"; the
    desc held `float("1/6")` (ValueError: could not convert string to float)."""
    swish = build(spec("ACTIVATION_HARD_SWISH"), {}, {"Alpha": "1/6", "Beta": 0.5})
    assert swish.body.Alpha == float(np.float32(1 / 6)) == 0.1666666716337204
    assert swish.body.Beta == 0.5
    ident = build(spec("ELEMENT_WISE_IDENTITY"), {}, {"ScaleBias.Scale": "1/3", "ScaleBias.Bias": "-inf"})
    sb = abi.DML_SCALE_BIAS.from_address(ident.body.ScaleBias)
    assert (sb.Scale, sb.Bias) == (float(np.float32(1 / 3)), float("-inf"))
    clip = build(spec("ELEMENT_WISE_CLIP1"), {}, {"MinMaxDataType": "DML_TENSOR_DATA_TYPE_FLOAT64", "Max": "1/3"})
    assert clip.body.Max.Float64 == 1 / 3


@given(st.fractions(min_value=-1e30, max_value=1e30, max_denominator=10**12))
def test_float32_value_rounds_an_exact_text_once(exact: Fraction) -> None:
    got = float32_value(f"{exact.numerator}/{exact.denominator}")
    assert np.float32(got) == got
    below, above = np.nextafter(np.float32(got), np.float32(-np.inf)), np.nextafter(np.float32(got), np.float32(np.inf))
    error = abs(Fraction(got) - exact)
    assert error <= abs(Fraction(float(below)) - exact) and error <= abs(Fraction(float(above)) - exact)
