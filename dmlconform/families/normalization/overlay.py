"""The normalization kind of reviewed semantics (``family: normalization``,
MEAN_VARIANCE_NORMALIZATION1): its schema, its record
(`families.normalization.semantics.Normalization`) and its checks against
the spec.  `families.Family.overlay` names it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from dmlconform.families.normalization.semantics import OPERATIONS, Normalization
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

_TENSORS = ("input", "output", "scale", "bias", "fused_add", "output_mean", "output_variance")
_OUTPUTS = ("output", "output_mean", "output_variance")
_ATTRIBUTES = ("axes", "axis_count", "cross_channel", "epsilon", "normalize_variance", "use_mean", "axis", "p",
               "local_size", "alpha", "beta", "offset", "fused_activation")
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["family", "source", "operation", "input", "output"],
    "properties": {
        "family": {"const": "normalization"}, "source": rc.SOURCE, "operation": {"enum": list(OPERATIONS)},
        **{role: rc.IDENT for role in (*_TENSORS, *_ATTRIBUTES)},
        "accumulators": {"type": "object", "propertyNames": {"enum": rc.DTYPES},
                         "additionalProperties": {"enum": rc.DTYPES}},
    },
}


def build(data: dict[str, Any]) -> Normalization:
    """Shape-checked ``semantics`` data -> `Normalization`."""
    roles = {role: data.get(role) for role in ("scale", "bias", "axes", "axis_count", "cross_channel",
                                               "normalize_variance", "use_mean", "axis", "p", "local_size", "alpha",
                                               "beta", "offset", "fused_activation", "fused_add", "output_mean",
                                               "output_variance")}
    return Normalization(source=data["source"], operation=data["operation"], input=data["input"],
                         output=data["output"], epsilon=data.get("epsilon", ""), accumulators=rc.accumulators(data),
                         **roles)


_CHECKS: tuple[tuple[tuple[str, ...], Callable[[m.Field], str | None]], ...] = (
    (("axes",), rc.is_uint_array), (("axis_count",), rc.is_uint), (("epsilon",), rc.is_float),
    (("normalize_variance",), rc.is_bool), (("cross_channel",), rc.is_bool), (("use_mean",), rc.is_bool),
    (("axis",), rc.is_uint), (("p",), rc.is_uint), (("local_size",), rc.is_uint), (("alpha",), rc.is_float),
    (("beta",), rc.is_float), (("offset",), rc.is_float),
    (("fused_activation",), rc.is_pointer))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """Names, kinds and roles of the fields the semantics name, every field
    named, the axes given one way (an array and its count, or CrossChannel),
    and the accumulators' types."""
    roles = [((name,), m.TensorRole.OUTPUT if name in _OUTPUTS else m.TensorRole.INPUT) for name in _TENSORS]
    yield from rc.named_fields(data, spec, roles, _CHECKS).problems
    batch = data.get("operation") == "batch_training"
    if batch != all(k in data for k in ("scale", "bias", "output_mean", "output_variance")) or (
            batch and any(k in data for k in ("axes", "axis_count", "cross_channel", "axis"))):
        yield rc.AT, ("operation batch_training names scale, bias, output_mean and output_variance and no axes (the "
                      "scale's sizes give them); the others no output_mean or output_variance")
        return
    if batch:
        yield from rc.accumulator_problems(data, spec)
        return
    lrn = data.get("operation") == "lrn"
    if lrn != all(k in data for k in ("cross_channel", "local_size", "alpha", "beta", "offset")) or \
            lrn == ("epsilon" in data):
        yield rc.AT, "operation lrn names cross_channel, local_size, alpha, beta and offset, and no epsilon; the others " \
                     "an epsilon"
        return
    ways = [("axes" in data) and ("axis_count" in data), "cross_channel" in data, "axis" in data]
    if sum(ways) != 1 or ("axes" in data) != ("axis_count" in data) or (data.get("operation") == "lp") != ways[2] \
            or (data.get("operation") == "lp") != ("p" in data):
        yield rc.AT, ("give the normalized axes one way: axes and axis_count (an array), cross_channel (a BOOL), or "
                      "axis and p (operation lp only)")
    yield from rc.accumulator_problems(data, spec)
