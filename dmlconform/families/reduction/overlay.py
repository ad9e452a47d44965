"""The reduction kind of reviewed semantics (``family: reduction``: REDUCE,
ARGMAX, ARGMIN): its schema, its record (`families.reduction.semantics.Reduction`)
and its checks against the spec.  `families.Family.overlay` names it.
Whether a transcribed worked example is right is lint's question
(`lint.examples`), not a load error: the doc's mistakes stay visible."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from dmlconform.families.reduction.semantics import FUNCTIONS, Example, Reduction
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

_NUMBERS = {"type": "array", "items": {"type": "number"}}
_EXAMPLE = {
    "type": "object", "additionalProperties": False,
    "required": ["name", "source", "input", "function", "axes", "output"],
    "properties": {
        "name": rc.IDENT, "source": rc.SOURCE,
        "input": {"type": "object", "additionalProperties": False, "required": ["sizes", "values"],
                  "properties": {"sizes": {"type": "array", "minItems": 1, "maxItems": 8,
                                           "items": {"type": "integer", "minimum": 1, "maximum": 64}},
                                 "values": {**_NUMBERS, "maxItems": 4096}}},
        "function": {"enum": list(FUNCTIONS)},
        "axes": {"type": "array", "maxItems": 8, "items": {"type": "integer", "minimum": 0, "maximum": 7}},
        "direction": rc.IDENT,
        "output": {"type": "object", "additionalProperties": False, "required": ["type", "values"],
                   "properties": {"type": {"enum": rc.DTYPES}, "values": {**_NUMBERS, "maxItems": 4096}}},
        "terms": {"type": "array", "maxItems": 4096, "items": {**_NUMBERS, "maxItems": 4096}},
    },
}
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["family", "source", "input", "output", "axes", "function"],
    "properties": {
        "family": {"const": "reduction"}, "source": rc.SOURCE, "input": rc.IDENT, "output": rc.IDENT,
        "axes": {"type": "object", "additionalProperties": False, "required": ["array", "count"],
                 "properties": {"array": rc.IDENT, "count": rc.IDENT}},
        "function": {"type": "object", "additionalProperties": False, "minProperties": 1, "maxProperties": 1,
                     "properties": {"attribute": rc.IDENT, "fixed": {"enum": list(FUNCTIONS)}}},
        "direction": rc.IDENT,
        "accumulators": {"type": "object", "propertyNames": {"enum": rc.DTYPES},
                         "additionalProperties": {"enum": rc.DTYPES}},
        "examples": {"type": "array", "maxItems": 32, "items": _EXAMPLE},
    },
}


def build(data: dict[str, Any]) -> Reduction:
    """Shape-checked ``semantics`` data -> `Reduction`."""
    return Reduction(
        source=data["source"], input=data["input"], output=data["output"], axes=data["axes"]["array"],
        axis_count=data["axes"]["count"], function=data["function"].get("attribute"),
        fixed=data["function"].get("fixed"), direction=data.get("direction"),
        accumulators=rc.accumulators(data),
        examples=tuple(_example(i, e) for i, e in enumerate(data.get("examples", []))))


def _example(index: int, e: dict[str, Any]) -> Example:
    return Example(e["name"], e["source"], index, tuple(e["input"]["sizes"]), tuple(float(v) for v in e["input"]["values"]),
                   e["function"], tuple(e["axes"]), e.get("direction"), tuple(float(v) for v in e["output"]["values"]),
                   m.DataType[e["output"]["type"]], tuple(tuple(float(v) for v in t) for t in e.get("terms", [])))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """Names, kinds and roles of the fields the semantics name, every field
    named, the accumulators' types, and each example's shape."""
    count = rc.get(data, ("axes", "count"))
    yield from rc.named_fields(data, spec, ((("input",), m.TensorRole.INPUT), (("output",), m.TensorRole.OUTPUT)),
                               ((("axes", "array"), _is_axes(count)), (("axes", "count"), _is_uint),
                                (("function", "attribute"), _is_enum("DML_REDUCE_FUNCTION")),
                                (("direction",), _is_enum("DML_AXIS_DIRECTION")))).problems
    yield from rc.accumulator_problems(data, spec)
    for i, example in enumerate(data.get("examples", [])):
        yield from _example_problems(("semantics", "examples", i), example, data["function"].get("fixed"))


def _example_problems(where: rc.JsonPath, e: dict[str, Any], fixed: str | None) -> Iterator[rc.Located]:
    """An example's shape: its values fill its sizes, its axes are the
    input's, its output and terms have one entry per output element."""
    sizes = e["input"]["sizes"]
    if math.prod(sizes) != len(e["input"]["values"]):
        yield where + ("input", "values"), f"{len(e['input']['values'])} values for sizes {sizes} " \
                                           f"({math.prod(sizes)} elements); give one value per element"
    bad = [a for a in e["axes"] if a >= len(sizes)] or sorted({a for a in e["axes"] if e["axes"].count(a) > 1})
    if bad:
        yield where + ("axes",), f"axes {e['axes']} name {bad}, not distinct axes of a {len(sizes)}-d input; " \
                                 f"give axes in 0..{len(sizes) - 1}, each once"
        return
    outputs = math.prod(s for i, s in enumerate(sizes) if i not in e["axes"])
    for key in ("output", "terms"):
        given = e[key]["values"] if key == "output" else e.get(key)
        if given is not None and len(given) != outputs:
            yield where + (key,), f"{len(given)} {key} for {outputs} output elements; give one per element"
    if fixed is not None and e["function"] != fixed:
        yield where + ("function",), f"function {e['function']} in an example of an operator that computes {fixed}"


def _is_uint(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "UINT" else "a UINT scalar"


def _is_axes(count: str | None) -> Any:
    def check(f: m.Field) -> str | None:
        ok = f.kind is m.FieldKind.ARRAY and f.count_field == count and "UINT" in f.c_type
        return None if ok else f"a UINT array counted by {count}"
    return check


def _is_enum(c_type: str) -> Any:
    def check(f: m.Field) -> str | None:
        return None if f.kind is m.FieldKind.ENUM and f.c_type == c_type else f"a {c_type}"
    return check
