"""The index-map kind of reviewed semantics (``family: index-map``: GATHER,
GATHER_ELEMENTS, GATHER_ND, GATHER_ND1): its schema, its record
(`families.index_map.semantics.IndexMap`) and its checks against the spec.
`families.Family.overlay` names it.  Whether a transcribed worked example
is right is lint's question (`lint.examples`), not a load error: the doc's
mistakes stay visible (docs/index-map.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dmlconform.families.index_map.semantics import (
    ARRAYS,
    ATTRIBUTES,
    GENERATED,
    NO_INPUT,
    OPTIONAL,
    Example,
    ExampleTensor,
    IndexMap,
    Operation,
)
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

_PARTS = ("axis", "index_dimensions", "input_dimension_count", "indices_dimension_count", "batch_dimension_count",
          "dimension_count", "offsets", "sizes", "strides", "repeats",
          "start_padding", "end_padding", "padding_mode", "padding_value", "padding_value_type", "block_size", "order")
#: The generated operations' parts (`families.index_map.generated`): attributes, then RANDOM's state output.
_GENERATED_PARTS = ("value_data_type", "value", "value_start", "value_delta", "offset", "fill_begin", "fill_end",
                    "generator_type")
_NUMBERS = {"type": "array", "items": {"type": "number"}, "maxItems": 4096}
_SIZES = {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "integer", "minimum": 1, "maximum": 64}}
_TENSOR = {"type": "object", "additionalProperties": False, "required": ["sizes", "values", "type"],
           "properties": {"sizes": _SIZES, "values": _NUMBERS, "type": {"enum": rc.DTYPES}}}
#: JOIN's ``inputs``, SPLIT's ``outputs``: the tensor array, in its order (`against_spec` says which side).
_ARRAY = {"type": "array", "minItems": 1, "maxItems": 8, "items": _TENSOR}
_EXAMPLE = {
    "type": "object", "additionalProperties": False,
    "required": ["name", "source", "attributes"],  # ``output`` or ``outputs``: `against_spec`
    "properties": {
        # a letter after the number: the parts of one numbered example (JOIN's Example 2 joins on three axes)
        "name": {"type": "string", "pattern": "^example[0-9]+[a-z]?$"}, "source": rc.SOURCE,
        "input": {"type": "object", "additionalProperties": False, "required": ["sizes", "values", "type"],
                  "properties": {"sizes": _SIZES, "values": _NUMBERS, "type": {"enum": rc.DTYPES}}},
        "indices": {"type": "object", "additionalProperties": False, "required": ["sizes", "values", "type"],
                    "properties": {"sizes": _SIZES, "type": {"enum": rc.DTYPES},
                                   "values": {"type": "array", "items": {"type": "integer"}, "maxItems": 4096}}},
        "attributes": {"type": "object", "maxProperties": 8, "propertyNames": rc.IDENT,
                       "additionalProperties": {"anyOf": [
                           {"type": "integer", "minimum": 0, "maximum": 8},
                           {"type": "number", "minimum": -1e9, "maximum": 1e9},  # a PaddingValue
                           {"type": "string", "pattern": "^DML_[A-Z0-9_]{1,60}$"},  # an enum's constant
                           {"type": "array", "minItems": 1, "maxItems": 8,
                            "items": {"type": "integer", "minimum": -64, "maximum": 64}},
                           # the generated operations' (`generated`): Values, INT offsets, ValueDataType
                           {"type": "number", "not": {"type": "integer", "minimum": 0, "maximum": 8},
                            "minimum": -9223372036854775808, "maximum": 18446744073709551615},
                           {"enum": rc.DTYPES}]}},
        "output": {"type": "object", "additionalProperties": False, "required": ["sizes", "values", "type"],
                   "properties": {"sizes": _SIZES, "values": _NUMBERS, "type": {"enum": rc.DTYPES}}},
        "updates": {"type": "object", "additionalProperties": False, "required": ["sizes", "values", "type"],
                    "properties": {"sizes": _SIZES, "values": _NUMBERS, "type": {"enum": rc.DTYPES}}},
        "inputs": _ARRAY, "outputs": _ARRAY,
    },
}
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["family", "source", "operation", "output"],
    "properties": {
        "family": {"const": "index-map"}, "source": rc.SOURCE,
        "operation": {"enum": [o.value for o in Operation]},
        "input": rc.IDENT, "indices": rc.IDENT, "output": rc.IDENT, "updates": rc.IDENT, "count": rc.IDENT,
        **{part: rc.IDENT for part in _PARTS + _GENERATED_PARTS}, "state_output": rc.IDENT,
        "out_of_range_stated": {"type": "boolean"},
        "dimension_counts": rc.DIMENSION_COUNTS,
        "examples": {"type": "array", "maxItems": 16, "items": _EXAMPLE},
    },
}


def build(data: dict[str, Any]) -> IndexMap:
    """Shape-checked ``semantics`` data -> `IndexMap`."""
    return IndexMap(
        source=data["source"], operation=Operation(data["operation"]), input=data.get("input", ""),
        indices=data.get("indices"), output=data["output"],
        **{part: data.get(part) for part in _PARTS + _GENERATED_PARTS + ("state_output",)},
        out_of_range_stated=data.get("out_of_range_stated", False), dimension_counts=rc.dimension_counts(data),
        examples=tuple(_example(i, e, Operation(data["operation"]) in GENERATED)
                       for i, e in enumerate(data.get("examples", []))), updates=data.get("updates"),
        count=data.get("count"))


def _example(index: int, e: dict[str, Any], generated: bool) -> Example:
    """One worked example; a generated operation's attributes that are no
    whole number or array (a float Value, a ValueDataType's name) go to
    ``scalars``, the others' enum names stay attributes (PaddingMode)."""
    kept = (int, list) if generated else (int, list, str)
    idx = e.get("indices", {"sizes": [], "values": [], "type": None})
    array = e.get("inputs", e.get("outputs", []))
    y = e.get("output", {"sizes": [], "values": [], "type": array[0]["type"] if array else None})  # SPLIT's: none
    x = e.get("input", {"sizes": [], "values": [], "type": (array or [y])[0]["type"]})  # a generator's, JOIN's: none
    attributes = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in e["attributes"].items()
                              if isinstance(v, kept)))
    scalars = tuple(sorted((k, v) for k, v in e["attributes"].items() if not isinstance(v, kept)))
    upd = e.get("updates", {"sizes": [], "values": []})
    return Example(e["name"], e["source"], index, m.DataType[x["type"]], tuple(x["sizes"]),
                   tuple(float(v) for v in x["values"]), tuple(idx["sizes"]),
                   tuple(int(v) for v in idx["values"]), None if idx["type"] is None else m.DataType[idx["type"]],
                   attributes, m.DataType[y["type"]], tuple(y["sizes"]), tuple(float(v) for v in y["values"]),
                   updates_sizes=tuple(upd["sizes"]), updates_values=tuple(float(v) for v in upd["values"]),
                   scalars=scalars, array=tuple(ExampleTensor(m.DataType[t["type"]], tuple(t["sizes"]),
                                                              tuple(float(v) for v in t["values"])) for t in array))


def _is_uint(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "UINT" else "a UINT scalar"


def _is_enum(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ENUM else "an enum"


def _is_value(f: m.Field) -> str | None:
    """PADDING's FLOAT PaddingValue, PADDING1's DML_SCALAR_UNION."""
    return None if (f.kind is m.FieldKind.SCALAR and f.c_type == "FLOAT") or f.c_type == "DML_SCALAR_UNION" else \
        "a FLOAT or a DML_SCALAR_UNION"


#: The kind each part other than a UINT or an array names.
_KINDS = {"padding_mode": _is_enum, "padding_value_type": _is_enum, "padding_value": _is_value, "order": _is_enum}


def _is_array(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ARRAY and f.c_type in ("const UINT*", "const INT*") else \
        "an array of UINT or INT"


def _is_int(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "INT" else "an INT scalar"


#: The kind of field each generated operation's part names.
_GENERATED_KINDS = {"value_data_type": _is_enum, "value": _is_value, "value_start": _is_value,
                    "value_delta": _is_value, "offset": _is_int, "fill_begin": _is_int, "fill_end": _is_int,
                    "generator_type": _is_enum}


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """The attributes the operation needs (and no others), the names, kinds
    and roles of the fields named, every field named, the dimension counts
    against the support tables, and each example's values filling its sizes."""
    operation = Operation(data["operation"])
    needs, optional = set(ATTRIBUTES[operation]), set(OPTIONAL.get(operation, ()))
    for part in sorted(needs - set(data)):
        yield rc.AT, f"a {operation.value} names its {part}; add semantics.{part}"
    for part in sorted((set(_PARTS + _GENERATED_PARTS + ("state_output",)) - needs - optional) & set(data)):
        yield rc.AT + (part,), f"a {operation.value} has no {part}; drop semantics.{part}"
    if operation.has_indices != ("indices" in data):
        yield rc.AT, f"a {operation.value} {'names its' if operation.has_indices else 'has no'} indices tensor; " \
                     f"{'add' if operation.has_indices else 'drop'} semantics.indices"
    if operation.is_scatter != ("updates" in data):
        yield rc.AT, f"a {operation.value} {'names its' if operation.is_scatter else 'has no'} updates tensor; " \
                     f"{'add' if operation.is_scatter else 'drop'} semantics.updates"
    if operation in NO_INPUT and operation is not Operation.DIAGONAL_SPAN and "input" in data:
        yield rc.AT + ("input",), f"a {operation.value} has no input tensor; drop semantics.input"
    if operation not in NO_INPUT and "input" not in data:
        yield rc.AT, f"a {operation.value} names its input tensor; add semantics.input"
    tensors = (("input", m.TensorRole.INPUT), ("indices", m.TensorRole.INPUT), ("updates", m.TensorRole.INPUT),
               ("output", m.TensorRole.OUTPUT), ("count", m.TensorRole.OUTPUT), ("state_output", m.TensorRole.OUTPUT))
    kinds = [((part,), _KINDS.get(part, _is_array if part in ARRAYS else _is_uint)) for part in _PARTS]
    kinds += [((part,), _GENERATED_KINDS[part]) for part in _GENERATED_PARTS]
    yield from rc.named_fields(data, spec, (((key,), role) for key, role in tensors), kinds).problems
    counted = [data[k] for k, _ in tensors if k in data and not (operation is Operation.NONZERO and k == "output")]
    yield from rc.dims_problems(data, spec, counted)  # NONZERO_COORDINATES' coordinates: 2 to 8 (nonzero.py)
    for i, e in enumerate(data.get("examples", [])):
        yield from _example_sides(operation, i, e)
        tensors_of: list[tuple[tuple[str | int, ...], dict[str, Any]]] = [((key,), e[key]) for key in ("input", "indices", "updates", "output") if key in e]
        tensors_of += [((key, k), t) for key in ("inputs", "outputs") for k, t in enumerate(e.get(key, []))]
        for at, tensor in tensors_of:
            count = 1
            for size in tensor["sizes"]:
                count *= size
            if len(tensor["values"]) != count:
                yield ("semantics", "examples", i, *at, "values"), (
                    f"{len(tensor['values'])} values for sizes {tensor['sizes']} ({count} elements); "
                    "transcribe every value")


def _example_sides(operation: Operation, i: int, e: dict[str, Any]) -> Iterator[rc.Located]:
    """The tensors an example of ``operation`` holds: JOIN's ``inputs``
    (the array, a list) and ``output``, SPLIT's ``input`` and ``outputs``
    (the array), every other's ``output`` and no array."""
    at = ("semantics", "examples", i)
    array = {Operation.JOIN: "inputs", Operation.SPLIT: "outputs"}.get(operation)
    single = {Operation.JOIN: "input", Operation.SPLIT: "output"}.get(operation)
    if array is not None and array not in e:
        yield at, (f"an example of a {operation.value} gives its tensor array as {array}: a list of "
                   "{type, sizes, values} in the array's order; add it")
    needed = "input" if operation is Operation.SPLIT else "output"  # SPLIT's one tensor is its input
    if needed not in e:
        yield at, f"an example of a {operation.value} gives its {needed}; add {needed}"
    for key in ("inputs", "outputs", "input", "output"):
        if key in e and key != array and (key in ("inputs", "outputs") or key == single):
            why = f": its tensor array is {array}" if array is not None else ""
            yield at + (key,), f"an example of a {operation.value} has no {key}{why}; drop {key}"
