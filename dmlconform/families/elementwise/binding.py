"""What an element-wise spec binds: its formula parsed and bound to its
fields, and whether the family's generator can make cases for it
(`is_runnable`, the family's ``claims``).  Apart from the generator
(`cases`), so that asking which family tests a spec imports the formula's
parser and not the generator: a run names its families to its workers
before it imports their generators (issue #31, the one-case repro)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from dmlconform.formula import Parsed, classified
from dmlconform.spec.model import FeatureLevel, Field, FieldKind, Spec, SupportTable, TensorRole

__all__ = ["Binding", "attribute_problem", "bind", "common_ranks", "enum_constants", "is_runnable"]

_ENUM_RE = re.compile(r"\bDML_[A-Z0-9_]+\b")


@dataclass(frozen=True, slots=True)
class Binding:
    """The parsed formula and how the spec's tensors bind to it."""

    tree: Any
    names: tuple[tuple[str, str], ...]   # tensor field -> formula name (inputs the formula reads)
    inputs: tuple[str, ...]              # input tensors, struct order
    outputs: tuple[str, ...]
    attributes: tuple[str, ...]          # attributes the formula reads


def bind(spec: Spec) -> Binding | str:
    """How ``spec``'s formula binds to its fields, or why it does not.
    `is_runnable` and then the generator (`cases.generate`) bind each spec: the binding is computed
    once for the formula text and the fields it reads (`classified`)."""
    if not spec.formula.evaluable or not spec.formula.parsed:
        return f"formula not evaluable ({spec.formula.reason or 'no parsed formula'})"
    ins = tuple(f.name for f in spec.tensors if f.role is TensorRole.INPUT and not f.optional)
    outs = tuple(f.name for f in spec.tensors if f.role is TensorRole.OUTPUT)
    return _bind_text(spec.formula.parsed, tuple(f.name for f in spec.fields), ins, outs)


@functools.lru_cache(maxsize=256)
def _bind_text(formula: str, fields: tuple[str, ...], ins: tuple[str, ...], outs: tuple[str, ...]) -> Binding | str:
    parsed = classified(formula, fields, ins, outs)
    if not isinstance(parsed, Parsed) or not parsed.evaluable:
        return f"formula does not bind to the fields ({getattr(parsed, 'reason', '')})"
    if not outs:
        return "no output tensor"
    names = tuple((tensor, name) for name, tensor in parsed.inputs)
    return Binding(parsed.tree, names, ins, outs, tuple(parsed.attributes))


def attribute_problem(spec: Spec, field: Field) -> str | None:
    if field.kind is FieldKind.STRUCT_PTR:
        return None
    if field.kind is FieldKind.ENUM and field.default is None and not enum_constants(spec, field):
        return f"enum attribute {field.name} has no default and the formula names none of its constants"
    if field.kind is FieldKind.STRUCT and field.c_type != "DML_SCALAR_UNION":
        return f"attribute {field.name} of type {field.c_type} cannot be generated"
    if field.kind in (FieldKind.ARRAY, FieldKind.STRUCT_ARRAY):
        return f"array attribute {field.name} cannot be generated"
    if field.kind is FieldKind.SCALAR and field.c_type in ("UINT", "INT") and field.default is None:
        return f"integer attribute {field.name} has no default"
    return None


def is_runnable(spec: Spec, level: FeatureLevel | None = None) -> tuple[bool, str]:
    """Whether `generate` can make cases for ``spec`` (at ``level``), and if
    not, why (a reason a spec writer can act on)."""
    bound = bind(spec)
    if isinstance(bound, str):
        return False, bound
    for field in spec.attributes:
        problem = attribute_problem(spec, field)
        if problem:
            return False, problem
    if level is not None:
        table = spec.table_at(level)
        if table is None:
            return False, f"no support table at {level.short} (introduced {spec.introduced.short})"
        if not common_ranks(table, bound):
            return False, f"the support table at {table.level.short} allows no common dimension count"
    return True, "ok"


def enum_constants(spec: Spec, field: Field) -> tuple[str, ...]:
    if field.c_type == "DML_TENSOR_DATA_TYPE":
        return ("DML_TENSOR_DATA_TYPE_",)  # the case's own data type
    found = _ENUM_RE.findall(spec.formula.parsed or "")
    return tuple(dict.fromkeys(c for c in found if c.startswith(field.c_type + "_")))


def common_ranks(table: SupportTable, bound: Binding) -> tuple[int, ...]:
    rows = [table.row(t) for t in bound.inputs + bound.outputs]
    sets = [set(r.dims) for r in rows if r is not None]
    return tuple(sorted(set.intersection(*sets))) if sets else ()
