"""The contraction kind of reviewed semantics (``family: contraction``,
GEMM): its schema, its record (`spec.semantics.Contraction`) and its checks
against the spec.  `families.Family.overlay` names it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dmlconform.families.contraction.semantics import Contraction, Operand
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

_OPERAND = {"type": "object", "additionalProperties": False, "required": ["tensor"],
            "properties": {"tensor": rc.IDENT, "transform": rc.IDENT, "zero_point": rc.IDENT, "scale": rc.IDENT}}
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["family", "source", "a", "b", "output"],
    "properties": {
        "family": {"const": "contraction"}, "source": rc.SOURCE, "a": _OPERAND, "b": _OPERAND, "output": rc.IDENT,
        "c": {"type": "object", "additionalProperties": False, "required": ["tensor"],
              "properties": {"tensor": rc.IDENT, "scale": rc.IDENT, "broadcast": {"enum": ["strides", "none"]}}},
        "alpha": rc.IDENT, "fused_activation": rc.IDENT,
        "dimension_counts": rc.DIMENSION_COUNTS,
        "accumulators": {"type": "object", "propertyNames": {"enum": rc.DTYPES},
                         "additionalProperties": {"enum": rc.DTYPES}},
    },
}


def build(data: dict[str, Any]) -> Contraction:
    """Shape-checked ``semantics`` data -> `Contraction`."""
    c = data.get("c") or {}
    return Contraction(
        source=data["source"], a=_operand(data["a"]), b=_operand(data["b"]), output=data["output"],
        c=c.get("tensor"), c_broadcast=c.get("broadcast", "strides") == "strides", alpha=data.get("alpha"),
        beta=c.get("scale"), activation=data.get("fused_activation"), dimension_counts=rc.dimension_counts(data),
        accumulators=rc.accumulators(data))


def _operand(d: dict[str, Any]) -> Operand:
    return Operand(d["tensor"], d.get("transform"), d.get("zero_point"), d.get("scale"))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """Names, kinds and roles of the fields the semantics name, every field
    named, and the dimension counts (of the matrices: zero points and scales
    have their own, which the tables check) and types against the support
    tables."""
    roles = [(("a", "tensor"), m.TensorRole.INPUT), (("b", "tensor"), m.TensorRole.INPUT),
             (("c", "tensor"), m.TensorRole.INPUT), (("output",), m.TensorRole.OUTPUT)]
    roles += [((side, part), m.TensorRole.INPUT) for side in ("a", "b") for part in ("zero_point", "scale")]
    named = rc.named_fields(data, spec, roles, ((("a", "transform"), _is_transform), (("b", "transform"), _is_transform),
                                                (("alpha",), rc.is_float), (("c", "scale"), rc.is_float),
                                                (("fused_activation",), rc.is_pointer)))
    yield from named.problems
    side = {rc.get(data, (s, part)) for s in ("a", "b") for part in ("zero_point", "scale")}  # own dimension counts
    matrices = [n for n in named.names if n not in side and (f := spec.field(n)) is not None and f.is_tensor]
    yield from rc.dims_problems(data, spec, matrices)
    yield from rc.accumulator_problems(data, spec)


def _is_transform(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ENUM and f.c_type == "DML_MATRIX_TRANSFORM" else "a DML_MATRIX_TRANSFORM"
