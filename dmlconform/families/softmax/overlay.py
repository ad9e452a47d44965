"""The softmax kind of reviewed semantics (``family: softmax``): its schema,
its record (`families.softmax.semantics.Softmax`) and its checks against the
spec, the doc's worked examples evaluated among them.  `families.Family.overlay` names it; docs/softmax.md explains the semantics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from dmlconform.families.softmax.semantics import Example, Function, Softmax, exact
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

_NUMBERS = {"type": "array", "minItems": 1, "maxItems": 4096, "items": {"type": "number"}}
_EXAMPLE = {
    "type": "object", "additionalProperties": False,
    "required": ["name", "source", "sizes", "input", "axes", "output"],
    "properties": {"name": rc.IDENT, "source": rc.SOURCE,
                   "sizes": {"type": "array", "minItems": 1, "maxItems": 8,
                             "items": {"type": "integer", "minimum": 1, "maximum": 64}},
                   "input": _NUMBERS, "output": _NUMBERS,
                   "axes": {"type": "array", "minItems": 1, "maxItems": 8, "uniqueItems": True,
                            "items": {"type": "integer", "minimum": 0, "maximum": 7}},
                   "mistake": {"type": "string", "minLength": 1}},
}
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["family", "source", "function", "input", "output"],
    "properties": {
        "family": {"const": "softmax"}, "source": rc.SOURCE, "function": {"enum": [f.value for f in Function]},
        "input": rc.IDENT, "output": rc.IDENT,
        "axes": {"type": "object", "additionalProperties": False, "required": ["attribute", "count"],
                 "properties": {"attribute": rc.IDENT, "count": rc.IDENT}},
        "effective_rank": {"type": "integer", "minimum": 1, "maximum": 8},
        "dimension_counts": rc.DIMENSION_COUNTS,
        "accumulators": {"type": "object", "propertyNames": {"enum": rc.DTYPES},
                         "additionalProperties": {"enum": rc.DTYPES}},
        "examples": {"type": "array", "maxItems": 16, "items": _EXAMPLE},
    },
}
#: Largest difference between a doc example's printed value and the evaluated one that still agrees
#: (the pages print hardmax's 0 and 1, and softmax values to a few digits).
EXAMPLE_TOLERANCE = 5e-4


def build(data: dict[str, Any]) -> Softmax:
    """Shape-checked ``semantics`` data -> `Softmax`."""
    axes = data.get("axes") or {}
    return Softmax(
        source=data["source"], function=Function(data["function"]), input=data["input"], output=data["output"],
        axes=axes.get("attribute"), axis_count=axes.get("count"), effective_rank=data.get("effective_rank"),
        dimension_counts=rc.dimension_counts(data),
        accumulators=rc.accumulators(data),
        examples=tuple(_example(e) for e in data.get("examples", ())))


def _example(e: dict[str, Any]) -> Example:
    return Example(e["name"], e["source"], tuple(e["sizes"]), tuple(float(v) for v in e["input"]), tuple(e["axes"]),
                   tuple(float(v) for v in e["output"]), e.get("mistake"))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """Names, kinds and roles of the fields the semantics name, every field
    named, the dimension counts and types against the tables, and the doc's
    examples evaluated (`example_problems`)."""
    yield from rc.named_fields(data, spec, ((("input",), m.TensorRole.INPUT), (("output",), m.TensorRole.OUTPUT)),
                               ((("axes", "attribute"), _is_uint_array), (("axes", "count"), _is_uint))).problems
    yield from rc.dims_problems(data, spec, [data["input"], data["output"]])
    yield from rc.accumulator_problems(data, spec)
    for i, example in enumerate(data.get("examples", ())):
        yield from ((rc.AT + ("examples", i) + path, text) for path, text in example_problems(data, example))


def _is_uint_array(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ARRAY and "UINT" in f.c_type else "a UINT array (the axes)"


def _is_uint(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "UINT" else "a UINT scalar (the axis count)"


def example_problems(data: dict[str, Any], example: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], str]]:
    """A doc example evaluated by the semantics: its sizes hold its values,
    its axes are dimensions of it, and the printed output is what the
    function gives, unless the reviewer recorded the doc's ``mistake`` (then
    it must really differ: a fixed doc makes the record stale)."""
    sizes, values, printed = example["sizes"], example["input"], example["output"]
    count = int(np.prod(sizes))
    if len(values) != count or len(printed) != count:
        yield ("sizes",), f"example {example['name']}: sizes {sizes} hold {count} values, the input gives " \
                          f"{len(values)} and the output {len(printed)}; copy every value of the doc's example"
        return
    if max(example["axes"]) >= len(sizes):
        yield ("axes",), f"example {example['name']}: axes {example['axes']} name a dimension past the last of " \
                         f"sizes {sizes}; give axes below {len(sizes)}"
        return
    x = np.array(values, dtype=np.float64).reshape(sizes)
    got = exact(Function(data["function"]), x, tuple(example["axes"])).reshape(-1)
    wrong = np.flatnonzero(~(np.abs(got - np.array(printed)) <= EXAMPLE_TOLERANCE))
    shown = ", ".join(f"[{i}] prints {printed[i]:g}, is {got[i]:.6g}" for i in wrong[:3])
    if wrong.size and example.get("mistake") is None:
        yield ("output",), f"example {example['name']}: the doc's output disagrees with the {data['function']} of " \
                           f"its input at {wrong.size} of {count} elements ({shown}); fix the semantics, or record " \
                           "the doc's error under `mistake`"
    elif not wrong.size and example.get("mistake") is not None:
        yield ("mistake",), f"example {example['name']}: the doc's output agrees with the {data['function']} of " \
                            "its input, but `mistake` says it is wrong; delete `mistake`"
