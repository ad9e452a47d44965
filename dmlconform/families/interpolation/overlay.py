"""The interpolation kind of reviewed semantics (``family: interpolation``,
RESAMPLE1): its schema, its record (`families.interpolation.semantics.Resample`)
and its checks against the spec.  `families.Family.overlay` names it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from dmlconform.families.interpolation.semantics import Resample
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

_ARRAYS = ("scales", "input_offsets", "output_offsets")
_ENUMS = ("mode", "rounding")
_NUMBER = {"type": "number", "minimum": -1, "maximum": 1}
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["family", "source", "input", "output", "mode"],
    "properties": {
        "family": {"const": "interpolation"}, "source": rc.SOURCE, "input": rc.IDENT, "output": rc.IDENT,
        **{role: rc.IDENT for role in (*_ARRAYS, *_ENUMS, "dimension_count", "antialiased", "scale_size")},
        "input_offset": _NUMBER, "output_offset": _NUMBER, "dimension_counts": rc.DIMENSION_COUNTS,
    },
}


def build(data: dict[str, Any]) -> Resample:
    """Shape-checked ``semantics`` data -> `Resample`."""
    return Resample(source=data["source"], input=data["input"], output=data["output"], mode=data["mode"],
                    scales=data.get("scales"), dimension_count=data.get("dimension_count"),
                    scale_size=data.get("scale_size"),
                    input_offsets=data.get("input_offsets"), output_offsets=data.get("output_offsets"),
                    input_offset=float(data.get("input_offset", 0.5)),
                    output_offset=float(data.get("output_offset", -0.5)), rounding=data.get("rounding"),
                    antialiased=data.get("antialiased"), dimension_counts=rc.dimension_counts(data))


def _is_size_2d(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.STRUCT and f.c_type == "DML_SIZE_2D" else "a DML_SIZE_2D"


def _is_float_array(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ARRAY and f.c_type.replace("const ", "").startswith("FLOAT") else \
        "a FLOAT array"


_CHECKS: tuple[tuple[tuple[str, ...], Callable[[m.Field], str | None]], ...] = (
    *(((role,), _is_float_array) for role in _ARRAYS), *(((role,), rc.is_enum) for role in _ENUMS),
    (("dimension_count",), rc.is_uint), (("antialiased",), rc.is_bool), (("scale_size",), _is_size_2d))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """Names, kinds and roles of the fields the semantics name, every field
    named, and the dimension counts against the support tables."""
    roles = [(("input",), m.TensorRole.INPUT), (("output",), m.TensorRole.OUTPUT)]
    named = rc.named_fields(data, spec, roles, _CHECKS)
    yield from named.problems
    yield from rc.dims_problems(data, spec, [data["input"], data["output"]])
