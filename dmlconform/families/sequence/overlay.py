"""The sequence kind of reviewed semantics (``family: sequence``: TOP_K,
TOP_K1, CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT): its schema, its record
(`families.sequence.semantics.SequenceOp`) and its checks against the spec.
`families.Family.overlay` names it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from dmlconform.families.sequence.semantics import Operation, SequenceOp
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["family", "source", "operation", "input", "output", "axis"],
    "properties": {
        "family": {"const": "sequence"}, "source": rc.SOURCE,
        "operation": {"enum": [o.value for o in Operation]},
        "input": rc.IDENT, "output": rc.IDENT, "indices": rc.IDENT, "axis": rc.IDENT, "k": rc.IDENT,
        "direction": rc.IDENT, "exclusive": rc.IDENT,
        "dimension_counts": rc.DIMENSION_COUNTS,
        "accumulators": {"type": "object", "propertyNames": {"enum": rc.DTYPES},
                         "additionalProperties": {"enum": rc.DTYPES}},
    },
}


def build(data: dict[str, Any]) -> SequenceOp:
    """Shape-checked ``semantics`` data -> `SequenceOp`."""
    return SequenceOp(
        source=data["source"], operation=Operation(data["operation"]), input=data["input"], output=data["output"],
        axis=data["axis"], indices=data.get("indices"), k=data.get("k"), direction=data.get("direction"),
        exclusive=data.get("exclusive"), dimension_counts=rc.dimension_counts(data),
        accumulators=rc.accumulators(data))


def _is_uint(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "UINT" else "a UINT scalar"


def _is_bool(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "BOOL" else "a BOOL scalar"


def _is_direction(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ENUM and f.c_type == "DML_AXIS_DIRECTION" else "a DML_AXIS_DIRECTION"


_TENSORS = (("input", m.TensorRole.INPUT), ("output", m.TensorRole.OUTPUT), ("indices", m.TensorRole.OUTPUT))
_ATTRIBUTES: tuple[tuple[str, Callable[[m.Field], str | None]], ...] = (
    ("axis", _is_uint), ("k", _is_uint), ("direction", _is_direction), ("exclusive", _is_bool))
#: Which keys each operation needs (the others it must not name).
_NEEDS = {Operation.TOP_K: {"indices", "k"}, Operation.CUMULATIVE_SUM: {"exclusive", "direction"},
          Operation.CUMULATIVE_PRODUCT: {"exclusive", "direction"}}
_OPTIONAL = {Operation.TOP_K: {"direction"}}


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """The keys the operation needs, the names, kinds and roles of the
    fields named, every field named, and the dimension counts against the
    support tables."""
    operation = Operation(data["operation"])
    yield from _keys_problems(data, operation)
    yield from rc.named_fields(data, spec, (((key,), role) for key, role in _TENSORS),
                               (((key,), check) for key, check in _ATTRIBUTES)).problems
    yield from rc.dims_problems(data, spec, [data[k] for k, _ in _TENSORS if k in data])
    yield from rc.accumulator_problems(data, spec)


def _keys_problems(data: dict[str, Any], operation: Operation) -> Iterator[rc.Located]:
    needs, optional = _NEEDS[operation], _OPTIONAL.get(operation, set())
    for key in sorted(needs - set(data) - optional):
        yield rc.AT, f"a {operation.value} names its {key}; add semantics.{key}"
    others = {k for k, _ in _ATTRIBUTES} | {"indices"}
    for key in sorted((others - needs - optional - {"axis"}) & set(data)):
        yield rc.AT + (key,), f"a {operation.value} has no {key}; drop semantics.{key}"
