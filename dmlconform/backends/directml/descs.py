"""Operator descs built generically from a spec's ``fields``.

DESIGN.md, "Backends" (``directml``: the op desc structs are built from the
spec's fields).  Each spec becomes a ctypes Structure whose members follow the
fields in struct order, so natural C alignment gives the header's layout (the
tests compare every desc against abi-facts.json).  Values are filled per field
kind: tensor pointers (NULL for an absent optional tensor), tensor arrays,
FLOAT/UINT/INT/BOOL scalars, enums by constant name, arrays with their count
field, DML_SCALAR_UNION typed by its sibling data-type enum, DML_SIZE_2D,
an optional DML_SCALE_BIAS and nested operator descs (fused activations).

`build` returns a `BuiltDesc` that owns every ctypes object the pointers
reach, so nothing is freed while the library reads the desc.
"""

from __future__ import annotations

import ctypes as C
import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from typing import Any

import numpy as np

from dmlconform.backends.directml import abi
from dmlconform.spec.model import DataType, Field, FieldKind, Spec

_SCALARS: dict[str, Any] = {"FLOAT": C.c_float, "float": C.c_float, "UINT": C.c_uint32, "INT": C.c_int32,
                            "BOOL": C.c_int32}
_ARRAY_ITEMS: dict[str, Any] = {"const FLOAT*": C.c_float, "const UINT*": C.c_uint32, "const INT*": C.c_int32}
_STRUCTS: dict[str, Any] = {"DML_SCALAR_UNION": abi.DML_SCALAR_UNION, "DML_SIZE_2D": abi.DML_SIZE_2D}
_DATA_TYPE_ENUM = "DML_TENSOR_DATA_TYPE"
_UNION_MEMBER = {DataType.FLOAT32: "Float32", DataType.FLOAT64: "Float64", DataType.FLOAT16: "UInt16",
                 DataType.INT8: "Int8", DataType.INT16: "Int16", DataType.INT32: "Int32", DataType.INT64: "Int64",
                 DataType.UINT8: "UInt8", DataType.UINT16: "UInt16", DataType.UINT32: "UInt32",
                 DataType.UINT64: "UInt64", DataType.INT4: "Int8", DataType.UINT4: "UInt8"}


class DescError(ValueError):
    """A desc cannot be built from the values given (names the field and value)."""


@dataclass(frozen=True, slots=True)
class TensorLayout:
    """One tensor as DML_BUFFER_TENSOR_DESC describes it: element strides, or
    None for packed."""

    dtype: DataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None

    @property
    def total_bytes(self) -> int:
        """DMLCalcBufferTensorSize: the addressed extent in bits, rounded up to
        bytes and then to a multiple of 4."""
        if self.strides is None:
            elements = math.prod(self.sizes)
        else:
            elements = 1 + sum((s - 1) * st for s, st in zip(self.sizes, self.strides))
        nbytes = (elements * self.dtype.bits + 7) // 8
        return (nbytes + 3) // 4 * 4


@dataclass(frozen=True, slots=True)
class NestedOp:
    """A nested operator desc (``FusedActivation``, ``ActivationDescs``): an
    activation whose tensor pointers stay NULL."""

    spec: Spec
    attributes: tuple[tuple[str, Any], ...] = ()


@dataclass(slots=True)
class BuiltDesc:
    """A DML_OPERATOR_DESC and everything its pointers reach."""

    desc: abi.DML_OPERATOR_DESC
    body: C.Structure
    keep: list[Any] = field(default_factory=list)

    def pointer(self) -> Any:
        return C.byref(self.desc)


@functools.cache
def attribute_enums() -> Mapping[str, int]:
    """Every attribute enum constant's value (package data generated from the ABI facts)."""
    text = resources.files("dmlconform.backends.directml").joinpath("attribute_enums.json").read_text("utf-8")
    return {str(k): int(v) for k, v in json.loads(text).items()}


def field_ctype(f: Field) -> Any:
    """The ctypes type of one struct member."""
    if f.kind in (FieldKind.TENSOR, FieldKind.TENSOR_ARRAY, FieldKind.ARRAY, FieldKind.STRUCT_PTR,
                  FieldKind.STRUCT_ARRAY):
        return C.c_void_p
    if f.kind is FieldKind.ENUM:
        return C.c_int32
    table = _SCALARS if f.kind is FieldKind.SCALAR else _STRUCTS
    try:
        return table[f.c_type]
    except KeyError:
        raise DescError(f"field {f.name}: no ctypes type for {f.kind.value} {f.c_type!r}") from None


def float64_value(raw: float | int | str) -> float:
    """A number, or an exact text such as ``"1/6"`` rounded once to float64."""
    if not isinstance(raw, str):
        return float(raw)
    try:
        return float(Fraction(raw.strip()))
    except (ValueError, ZeroDivisionError):
        return float(raw)


def float32_value(raw: float | int | str) -> float:
    """A FLOAT member's value: the number, or a doc's exact text (``"1/6"``,
    a spec's ``default_exact`` that cases carry as written) rounded once to the
    nearest float32 (ties to even); ``"inf"``, ``"nan"`` as float() reads them."""
    if not isinstance(raw, str):
        return float(raw)
    try:
        exact = Fraction(raw.strip())
    except (ValueError, ZeroDivisionError):
        return float(raw)
    near = np.float32(float(exact))
    with np.errstate(over="ignore"):  # beside the largest float32: its neighbour is infinite, not finite
        around = [near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))]
    finite = [c for c in around if np.isfinite(c)] or [near]
    best = min(finite, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.uint32)) & 1))
    return float(best)


@functools.cache
def _struct_type(name: str, members: tuple[tuple[str, Any], ...]) -> type[C.Structure]:
    return type(name, (C.Structure,), {"_fields_": list(members)})


def desc_struct(spec: Spec) -> type[C.Structure]:
    """The Structure of ``spec.struct``: its fields in struct order."""
    return _struct_type(spec.struct, tuple((f.name, field_ctype(f)) for f in spec.fields))


def array_items(f: Field, value: Any, *, floats: bool) -> list[float | int]:
    """An ARRAY field's items from a case's text (``"2,0"``, ``"0.5,-1,inf"``:
    the form `cases.family.parse_axes` and `cases.value_scale.parse_bias`
    read), one number, or a sequence (the validate tier's plans); ``None`` or
    ``""`` is no item.  FLOAT items are rounded once to float32
    (`float32_value`).  DescError naming the field and the value otherwise."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    parts = value.split(",") if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) \
        else [value]
    try:
        if floats:
            return [float32_value(p.strip() if isinstance(p, str) else p) for p in parts]
        if any(isinstance(p, bool) or (isinstance(p, float) and not p.is_integer()) for p in parts):
            raise ValueError(value)
        return [int(p) for p in parts]
    except (TypeError, ValueError, ZeroDivisionError):
        what = "numbers" if floats else "whole numbers"
        raise DescError(f"field {f.name}: {value!r} is not a list of {what}; write them comma-separated, "
                        f"e.g. \"{'0.5,-1' if floats else '2,0'}\"") from None


#: A fused activation: an ACTIVATION_* operator, or ELEMENT_WISE_CLIP, which DirectML fuses too (the
#: window family's CONVOLUTION cases fuse it; `families.contraction.cases.parse_activation` reads both).
_NESTED_TEXT = re.compile(r"^(ACTIVATION_[A-Z0-9_]+|ELEMENT_WISE_CLIP)(?:\((.*)\))?$")
_NESTED_SETTING = re.compile(r"^([A-Za-z]+)=(\S+)$")


def nested_texts(spec: Spec, attributes: Mapping[str, Any], load: Callable[[str], Spec]) -> dict[str, Any]:
    """``attributes`` with each nested desc a case gives as text
    (``FusedActivation``: ``"ACTIVATION_LINEAR(Alpha=-0.5,Beta=0.25)"`` or
    ``"ELEMENT_WISE_CLIP(Min=-0.5,Max=0.5)"``, the form
    `families.contraction.cases.parse_activation` reads) as a `NestedOp` of the spec
    ``load`` gives for its name; ``""`` is no desc.  DescError naming the
    field and the value where the text is no activation."""
    out = dict(attributes)
    for f in spec.fields:
        text = out.get(f.name)
        if f.kind is not FieldKind.STRUCT_PTR or f.c_type == "const DML_SCALE_BIAS*" or not isinstance(text, str):
            continue
        if not text.strip():
            del out[f.name]
            continue
        found = _NESTED_TEXT.match(text.strip())
        settings = [_NESTED_SETTING.match(p.strip()) for p in (found.group(2) or "").split(",") if p.strip()] \
            if found else []
        if found is None or not all(settings):
            raise DescError(f"field {f.name}: {text!r} is no activation; write ACTIVATION_NAME or "
                            "ACTIVATION_NAME(Attr=value,...), e.g. ACTIVATION_LINEAR(Alpha=0.5,Beta=1)")
        out[f.name] = NestedOp(load(found.group(1)), tuple((m.group(1), m.group(2)) for m in settings if m))
    return out


def enum_value(f: Field, value: Any) -> int:
    """An enum field's value from an int, a full constant name or its suffix."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise DescError(f"field {f.name}: enum value {value!r} is neither a number nor a constant name")
    if isinstance(value, int):
        return value
    table = attribute_enums()
    for name in (value, f"{f.c_type}_{value}"):
        if name in table:
            return table[name]
    raise DescError(f"field {f.name}: {value!r} is not a {f.c_type} constant")


class _Builder:
    """Fills one desc; ``keep`` collects what must outlive the call."""

    def __init__(self, spec: Spec, tensors: Mapping[str, TensorLayout | Sequence[TensorLayout] | None],
                 attributes: Mapping[str, Any], dtype: DataType | None, keep: list[Any]) -> None:
        self.spec, self.tensors, self.attrs, self.keep = spec, tensors, dict(attributes), keep
        self.dtype = dtype
        self.counts = {f.count_field: 0 for f in spec.fields if f.count_field}

    def tensor_desc(self, layout: TensorLayout) -> abi.DML_TENSOR_DESC:
        n = len(layout.sizes)
        sizes = (C.c_uint32 * n)(*layout.sizes)
        strides = None if layout.strides is None else (C.c_uint32 * n)(*layout.strides)
        buf = abi.DML_BUFFER_TENSOR_DESC(DataType=layout.dtype.value, Flags=abi.TensorFlags.NONE, DimensionCount=n,
                                         Sizes=C.addressof(sizes), Strides=C.addressof(strides) if strides else None,
                                         TotalTensorSizeInBytes=layout.total_bytes, GuaranteedBaseOffsetAlignment=0)
        desc = abi.DML_TENSOR_DESC(Type=abi.TensorType.BUFFER, Desc=C.addressof(buf))
        self.keep.extend((sizes, strides, buf, desc))
        return desc

    def value(self, f: Field) -> Any:
        kind = f.kind
        if kind is FieldKind.TENSOR:
            layout = self.tensors.get(f.name)
            if layout is None:
                return None
            return C.addressof(self.tensor_desc(layout))  # type: ignore[arg-type]  # a TENSOR field has one layout
        if kind is FieldKind.TENSOR_ARRAY:
            layouts = tuple(self.tensors.get(f.name) or ())  # type: ignore[arg-type]  # a TENSOR_ARRAY's: a sequence
            return self.array(f, abi.DML_TENSOR_DESC, [self.tensor_desc(t) for t in layouts])
        if kind is FieldKind.STRUCT_PTR:
            return self.struct_ptr(f)
        if kind is FieldKind.STRUCT_ARRAY:
            nested = tuple(self.attrs.get(f.name) or ())
            return self.array(f, abi.DML_OPERATOR_DESC, [self.nested(n) for n in nested])
        if kind is FieldKind.ARRAY:
            item = _ARRAY_ITEMS.get(f.c_type, C.c_uint32)
            return self.array(f, item, array_items(f, self.attrs.get(f.name), floats=item is C.c_float))
        if kind is FieldKind.ENUM:
            raw = self.attrs.get(f.name, f.default)
            if raw is None and f.c_type == _DATA_TYPE_ENUM and self.dtype is not None:
                return self.dtype.value
            return 0 if raw is None else enum_value(f, raw)
        if kind is FieldKind.STRUCT:
            return self.struct(f)
        raw = self.attrs.get(f.name, f.default)
        if f.count_field is None and f.name in self.counts and raw is None:
            return None  # a count: filled after its array
        return 0 if raw is None else (float32_value(raw) if f.c_type.upper() == "FLOAT" else int(raw))

    def array(self, f: Field, item: Any, values: list[Any]) -> int | None:
        if f.count_field:
            self.counts[f.count_field] = max(self.counts[f.count_field], len(values))
        if not values:
            return None
        arr = (item * len(values))(*values)
        self.keep.append(arr)
        return C.addressof(arr)

    def struct_ptr(self, f: Field) -> int | None:
        if f.c_type == "const DML_SCALE_BIAS*":
            scale, bias = self.attrs.get(f"{f.name}.Scale"), self.attrs.get(f"{f.name}.Bias")
            if scale is None and bias is None:
                return None
            sb = abi.DML_SCALE_BIAS(1.0 if scale is None else float32_value(scale),
                                    0.0 if bias is None else float32_value(bias))
            self.keep.append(sb)
            return C.addressof(sb)
        nested = self.attrs.get(f.name)
        if nested is None:
            return None
        desc = self.nested(nested)
        return C.addressof(desc)

    def nested(self, op: NestedOp) -> abi.DML_OPERATOR_DESC:
        if not isinstance(op, NestedOp):
            raise DescError(f"field of {self.spec.operator}: nested desc {op!r} is not a NestedOp")
        built = build(op.spec, {}, dict(op.attributes), dtype=self.dtype)
        self.keep.append(built)
        return built.desc

    def struct(self, f: Field) -> Any:
        raw = self.attrs.get(f.name, f.default)
        if f.c_type == "DML_SIZE_2D":
            w, h = (1, 1) if raw is None else tuple(raw.split(",") if isinstance(raw, str) else raw)  # "Width,Height"
            return abi.DML_SIZE_2D(int(w), int(h))
        union = abi.DML_SCALAR_UNION()
        dtype = self.sibling_dtype(f)
        member = _UNION_MEMBER[dtype]
        value = 0 if raw is None else raw
        if dtype is DataType.FLOAT16:
            union.UInt16 = int(np.array(float64_value(value), dtype=np.float16).view(np.uint16))
        else:
            setattr(union, member, float32_value(value) if dtype is DataType.FLOAT32 else
                    float64_value(value) if dtype.is_float else int(value))
        return union

    def sibling_dtype(self, f: Field) -> DataType:
        """The data type of a scalar union: the nearest earlier DML_TENSOR_DATA_TYPE field."""
        index = self.spec.fields.index(f)
        for g in reversed(self.spec.fields[:index]):
            if g.kind is FieldKind.ENUM and g.c_type == _DATA_TYPE_ENUM:
                return DataType(self.value(g))
        return self.dtype or DataType.FLOAT32


def build(spec: Spec, tensors: Mapping[str, TensorLayout | Sequence[TensorLayout] | None],
          attributes: Mapping[str, Any], *, dtype: DataType | None = None, type_number: int | None = None) -> BuiltDesc:
    """The DML_OPERATOR_DESC of ``spec`` with ``tensors`` (None or absent:
    a NULL pointer) and ``attributes`` (absent: the doc's default, else 0).
    ``type_number`` overrides the spec's ``operator_type`` (tests send wrong ones)."""
    number = spec.operator_type if type_number is None else type_number
    if number is None:
        raise DescError(f"{spec.operator}: the spec has no operator_type (re-extract the specs)")
    keep: list[Any] = []
    builder = _Builder(spec, tensors, attributes, dtype, keep)
    values = {f.name: builder.value(f) for f in spec.fields}
    for name, count in builder.counts.items():
        if values.get(name) is None:
            values[name] = count
    body = desc_struct(spec)(**{k: v for k, v in values.items() if v is not None})
    desc = abi.DML_OPERATOR_DESC(Type=number, Desc=C.addressof(body))
    return BuiltDesc(desc, body, keep)
