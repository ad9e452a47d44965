"""The ``value-scale`` kind of reviewed semantics (VALUE_SCALE_2D): its
schema, its record (`families.value_scale.semantics.ValueScale`) and its checks
against the spec.  `families.Family.overlay` names it;
docs/value-scale.md explains the semantics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dmlconform.families.value_scale.semantics import ValueScale
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["family", "source", "input", "output", "scale", "bias", "channel_count"],
    "properties": {
        "family": {"const": "value-scale"}, "source": rc.SOURCE, "input": rc.IDENT, "output": rc.IDENT,
        "scale": rc.IDENT, "bias": rc.IDENT, "channel_count": rc.IDENT,
        "channel_dimension": {"type": "integer", "minimum": 0, "maximum": 7},
        "channel_counts": {"type": "array", "minItems": 1, "maxItems": 16, "uniqueItems": True,
                           "items": {"type": "integer", "minimum": 1, "maximum": 65536}},
        "dimension_counts": rc.DIMENSION_COUNTS,
        "accumulators": {"type": "object", "propertyNames": {"enum": rc.DTYPES},
                         "additionalProperties": {"enum": rc.DTYPES}},
    },
}


def build(data: dict[str, Any]) -> ValueScale:
    """Shape-checked ``semantics`` data -> `ValueScale`."""
    return ValueScale(
        source=data["source"], input=data["input"], output=data["output"], scale=data["scale"], bias=data["bias"],
        channel_count=data["channel_count"], channel_dimension=data.get("channel_dimension", 1),
        channel_counts=tuple(sorted(data.get("channel_counts", ()))), dimension_counts=rc.dimension_counts(data),
        accumulators=rc.accumulators(data))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """Names, kinds and roles of the fields the semantics name, every field
    named, Bias counted by ChannelCount, the channel dimension inside every
    dimension count of the tables, the dimension counts and types against
    the tables."""
    named = rc.named_fields(data, spec, ((("input",), m.TensorRole.INPUT), (("output",), m.TensorRole.OUTPUT)),
                            ((("scale",), rc.is_float), (("bias",), _is_float_array), (("channel_count",), _is_uint)))
    yield from named.problems
    if named.problems:
        return
    bias = spec.field(data["bias"])
    if bias is not None and bias.count_field != data["channel_count"]:
        yield rc.AT + ("bias",), f"{data['bias']} is counted by {bias.count_field} in the spec, not by " \
                                 f"{data['channel_count']}; name its count field as channel_count"
    axis = data.get("channel_dimension", 1)
    low = min((n for _, counts in rc.dimension_counts(data) for n in counts), default=axis + 1)
    if axis >= low:
        yield rc.AT + ("channel_dimension",), f"channel_dimension {axis} is no dimension of a {low}-D tensor " \
                                              f"the tables allow; give one below {low}"
    yield from rc.dims_problems(data, spec, [data["input"], data["output"]])
    yield from rc.accumulator_problems(data, spec)


def _is_float_array(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ARRAY and "FLOAT" in f.c_type else "a FLOAT array (the bias per channel)"


def _is_uint(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "UINT" else "a UINT scalar (the channel count)"
