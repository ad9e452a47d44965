"""The window kind of reviewed semantics (``family: window``, CONVOLUTION):
its schema, its record (`families.window.semantics.Window`) and its checks
against the spec.  `families.Family.overlay` names it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from dmlconform.families.window.semantics import OPERATIONS, Window, WindowExample
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

#: The attribute roles, each with the check of the field it names.
_ARRAYS = ("strides", "dilations", "start_padding", "end_padding", "output_padding", "window_size")
_ENUMS = ("mode", "direction")
_UINTS = ("spatial_count", "group_count", "power")
_NUMBERS = {"type": "array", "items": {"type": "number"}, "maxItems": 4096}
_SIZES = {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "integer", "minimum": 1, "maximum": 64}}
_TENSOR = {"type": "object", "additionalProperties": False, "required": ["sizes", "values", "type"],
           "properties": {"sizes": _SIZES, "values": _NUMBERS, "type": {"enum": rc.DTYPES}}}
#: A worked example (FOLD, UNFOLD): input, attributes (whole numbers or arrays of them), the printed output.
_EXAMPLE = {
    "type": "object", "additionalProperties": False, "required": ["name", "source", "input", "attributes", "output"],
    "properties": {
        "name": {"type": "string", "pattern": "^example[0-9]+$"}, "source": rc.SOURCE, "input": _TENSOR,
        "output": _TENSOR,
        "attributes": {"type": "object", "maxProperties": 8, "propertyNames": rc.IDENT, "additionalProperties": {
            "anyOf": [{"type": "integer", "minimum": 0, "maximum": 64},
                      {"type": "array", "minItems": 1, "maxItems": 8,
                       "items": {"type": "integer", "minimum": 0, "maximum": 64}}]}}},
}
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["family", "source", "operation", "input", "output"],
    "properties": {
        "family": {"const": "window"}, "source": rc.SOURCE, "operation": {"enum": list(OPERATIONS)},
        "input": rc.IDENT, "output": rc.IDENT, "filter": rc.IDENT, "bias": rc.IDENT, "indices": rc.IDENT,
        "input_zero_point": rc.IDENT, "filter_zero_point": rc.IDENT, "input_indices": rc.IDENT,
        **{role: rc.IDENT for role in (*_ARRAYS, *_ENUMS, *_UINTS, "fused_activation", "include_padding")},
        "dimension_counts": rc.DIMENSION_COUNTS,
        "accumulators": {"type": "object", "propertyNames": {"enum": rc.DTYPES},
                         "additionalProperties": {"enum": rc.DTYPES}},
        "examples": {"type": "array", "maxItems": 16, "items": _EXAMPLE},
    },
}


def build(data: dict[str, Any]) -> Window:
    """Shape-checked ``semantics`` data -> `Window`."""
    roles = {role: data.get(role) for role in (*_ARRAYS, *_ENUMS, *_UINTS, "fused_activation", "include_padding",
                                               "filter", "bias", "indices", "input_zero_point", "filter_zero_point",
                                               "input_indices")}
    return Window(source=data["source"], operation=data["operation"], input=data["input"], output=data["output"],
                  dimension_counts=rc.dimension_counts(data), accumulators=rc.accumulators(data),
                  examples=tuple(_example(i, e) for i, e in enumerate(data.get("examples", []))), **roles)


def _example(index: int, e: dict[str, Any]) -> WindowExample:
    """One worked example, its attributes sorted by name (arrays as tuples)."""
    x, y = e["input"], e["output"]
    attributes = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in e["attributes"].items()))
    return WindowExample(e["name"], e["source"], index, m.DataType[x["type"]], tuple(x["sizes"]),
                         tuple(float(v) for v in x["values"]), attributes, tuple(y["sizes"]),
                         tuple(float(v) for v in y["values"]))


def _is_uint_array(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ARRAY and "UINT" in f.c_type else "a UINT array"


def _is_uint(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "UINT" else "a UINT scalar"


def _is_bool(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "BOOL" else "a BOOL scalar"


def _is_enum(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ENUM else "an enum"


_CHECKS: tuple[tuple[tuple[str, ...], Callable[[m.Field], str | None]], ...] = (
    *(((role,), _is_uint_array) for role in _ARRAYS), *(((role,), _is_enum) for role in _ENUMS),
    *(((role,), _is_uint) for role in _UINTS), (("fused_activation",), rc.is_pointer),
    (("include_padding",), _is_bool))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """Names, kinds and roles of the fields the semantics name, every field
    named, and the dimension counts (of the input, filter and output: the
    bias has the same) and types against the support tables."""
    roles = [(("input",), m.TensorRole.INPUT), (("filter",), m.TensorRole.INPUT), (("bias",), m.TensorRole.INPUT),
             (("output",), m.TensorRole.OUTPUT), (("indices",), m.TensorRole.OUTPUT),
             (("input_zero_point",), m.TensorRole.INPUT), (("filter_zero_point",), m.TensorRole.INPUT),
             (("input_indices",), m.TensorRole.INPUT)]
    named = rc.named_fields(data, spec, roles, _CHECKS)
    yield from named.problems
    zero_points = (data.get("input_zero_point"), data.get("filter_zero_point"))  # {1..}: dims 1 to 4, not the input's
    tensors = [n for n in named.names if (f := spec.field(n)) is not None and f.is_tensor and n not in zero_points]
    yield from rc.dims_problems(data, spec, tensors)
    yield from rc.accumulator_problems(data, spec)
