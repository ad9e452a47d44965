"""The reviewed overlay of a spec: ``specs/reviewed/<OPERATOR>.yaml``,
written by hand, never by extract.

Issue #24 item 1; the folder is the one the ambiguity overlays use
(docs/ambiguities.md, branch ``ambig``: its ``ambiguities`` key).  This
module owns the ``semantics`` key (`spec.semantics.Contraction`): in the
overlay `load.read_overlay` parsed and checked once, it checks their shape
and then checks them against the spec's fields (names, kinds, roles) and
support tables (dimension counts per level, data types), every problem
located at its line and column of the overlay.  `load.load_spec` attaches
the semantics to the spec it loads; `lint` reports the same problems
(through `load_spec`).  ``ambiguities`` are `load`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from dmlconform.errors import LocatedError, SpecError
from dmlconform.spec import load
from dmlconform.spec import model as m
from dmlconform.spec.semantics import Contraction, Operand

_IDENT = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
_SOURCE = {"type": "string", "pattern": "^[^:\\n]+:[1-9][0-9]*$"}
_DTYPES = [t.name for t in m.DATA_TYPE_ORDER]
_OPERAND = {"type": "object", "additionalProperties": False, "required": ["tensor"],
            "properties": {"tensor": _IDENT, "transform": _IDENT}}
_SEMANTICS = {
    "type": "object", "additionalProperties": False, "required": ["family", "source", "a", "b", "output"],
    "properties": {
        "family": {"enum": ["contraction"]}, "source": _SOURCE, "a": _OPERAND, "b": _OPERAND, "output": _IDENT,
        "c": {"type": "object", "additionalProperties": False, "required": ["tensor"],
              "properties": {"tensor": _IDENT, "scale": _IDENT, "broadcast": {"enum": ["strides", "none"]}}},
        "alpha": _IDENT, "fused_activation": _IDENT,
        "dimension_counts": {"type": "object", "propertyNames": {"enum": [lv.short for lv in m.FeatureLevel]},
                             "additionalProperties": {"type": "array", "minItems": 1, "uniqueItems": True,
                                                      "items": {"type": "integer", "minimum": 1, "maximum": 8}}},
        "accumulators": {"type": "object", "propertyNames": {"enum": _DTYPES},
                         "additionalProperties": {"enum": _DTYPES}},
    },
}
#: A JSON path into the overlay (`load.JsonPath`: load imports this module, so it is not read from there).
JsonPath = tuple[str | int, ...]
Located = tuple[JsonPath, str]


def with_semantics(spec: m.Spec, doc: load.Document) -> m.Spec:
    """``spec`` with the semantics of its overlay ``doc`` (read and checked
    as an overlay by `load.read_overlay`), where it has any; a problem in
    them is a SpecError at its place in the overlay."""
    semantics = doc.data.get("semantics")
    if semantics is None:
        return spec
    problems = list(_shape_problems(semantics)) or list(_against_spec(semantics, spec))
    if problems:
        raise _error(doc, problems)
    return replace(spec, semantics=build(semantics))


def _shape_problems(semantics: Any) -> Iterator[Located]:
    """What the `_SEMANTICS` schema finds, at paths from the overlay's top."""
    for error in sorted(_validator().iter_errors(semantics), key=lambda e: [str(p) for p in e.absolute_path]):
        leaf = min(error.context, key=lambda e: -len(e.absolute_path)) if error.context else error
        where = ("semantics", *leaf.absolute_path)
        yield where, f"{'.'.join(str(p) for p in where)}: {leaf.message}"


@functools.cache
def _validator() -> Any:
    import jsonschema  # noqa: PLC0415 - jsonschema (~0.1 s) only where an overlay is read

    return jsonschema.validators.validator_for(_SEMANTICS)(_SEMANTICS)


def build(data: dict[str, Any]) -> Contraction:
    """Shape-checked ``semantics`` data -> `Contraction`."""
    c = data.get("c") or {}
    dims = sorted((m.FeatureLevel.parse(level), tuple(sorted(counts)))
                  for level, counts in data.get("dimension_counts", {}).items())
    return Contraction(
        source=data["source"], a=_operand(data["a"]), b=_operand(data["b"]), output=data["output"],
        c=c.get("tensor"), c_broadcast=c.get("broadcast", "strides") == "strides", alpha=data.get("alpha"),
        beta=c.get("scale"), activation=data.get("fused_activation"), dimension_counts=tuple(dims),
        accumulators=tuple(sorted(((m.DataType[k], m.DataType[v]) for k, v in data.get("accumulators", {}).items()),
                                  key=lambda kv: kv[0].value)))


def _operand(d: dict[str, Any]) -> Operand:
    return Operand(d["tensor"], d.get("transform"))


def _against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[Located]:
    """Names, kinds and roles of the fields the semantics name, every field
    named, and the dimension counts and types against the support tables."""
    at: JsonPath = ("semantics",)
    roles = (("a", "tensor"), m.TensorRole.INPUT), (("b", "tensor"), m.TensorRole.INPUT), \
        (("c", "tensor"), m.TensorRole.INPUT), (("output",), m.TensorRole.OUTPUT)
    named: list[str] = []
    found: list[Located] = []
    for path, role in roles:
        name = _get(data, path)
        if name is not None:
            named.append(name)
            found.extend(_tensor_problem(spec, at + path, name, role))
    for path, check in ((("a", "transform"), _is_transform), (("b", "transform"), _is_transform),
                        (("alpha",), _is_float), (("c", "scale"), _is_float), (("fused_activation",), _is_pointer)):
        name = _get(data, path)
        if name is not None:
            named.append(name)
            found.extend(_attribute_problem(spec, at + path, name, check))
    yield from found
    left = [f.name for f in spec.fields if f.name not in named]
    if left and not found:  # a misnamed field is its own problem: the one it meant is not "left out" twice
        yield at, f"semantics leave out field{'s' if len(left) > 1 else ''} {', '.join(left)} of {spec.operator}; " \
                  "name every tensor and attribute"
    yield from _dims_problems(data, spec, [n for n in named if (f := spec.field(n)) is not None and f.is_tensor])
    yield from _accumulator_problems(data, spec)


def _get(data: dict[str, Any], path: tuple[str, ...]) -> str | None:
    value: Any = data
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else None


def _tensor_problem(spec: m.Spec, where: JsonPath, name: str, role: m.TensorRole) -> Iterator[Located]:
    field = spec.field(name)
    tensors = ", ".join(f.name for f in spec.tensors)
    if field is None or not field.is_tensor:
        yield where, f"{name} is not a tensor of {spec.operator} (its tensors: {tensors})"
    elif field.role is not role:
        yield where, f"{name} is an {field.role.value if field.role else 'unknown'} of {spec.operator}, " \
                     f"not an {role.value}; name one of its {role.value}s"


def _is_transform(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.ENUM and f.c_type == "DML_MATRIX_TRANSFORM" else "a DML_MATRIX_TRANSFORM"


def _is_float(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "FLOAT" else "a FLOAT scalar"


def _is_pointer(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.STRUCT_PTR else "an operator description pointer"


def _attribute_problem(spec: m.Spec, where: JsonPath, name: str, check: Any) -> Iterator[Located]:
    field = spec.field(name)
    if field is None or field.is_tensor:
        names = ", ".join(f.name for f in spec.attributes)
        yield where, f"{name} is not an attribute of {spec.operator} (its attributes: {names})"
        return
    wanted = check(field)
    if wanted is not None:
        yield where, f"{name} is {field.c_type} ({field.kind.value}) in the spec; name {wanted} here"


def _dims_problems(data: dict[str, Any], spec: m.Spec, tensors: list[str]) -> Iterator[Located]:
    """``dimension_counts`` lists every table's level, with the counts of
    every named tensor's row there."""
    given = data.get("dimension_counts", {})
    tables = {t.level.short: t for t in spec.support if t.condition is None}
    for level, counts in given.items():
        where: JsonPath = ("semantics", "dimension_counts", level)
        table = tables.get(level)
        if table is None:
            yield where, f"{spec.operator} has no support table at {level} (tables: {', '.join(tables)}); " \
                         "give the levels of its tables"
            continue
        differ: dict[tuple[int, ...], list[str]] = {}
        for name in tensors:
            row = table.row(name)
            if row is not None and tuple(sorted(row.dims)) != tuple(sorted(counts)):
                differ.setdefault(tuple(sorted(row.dims)), []).append(name)
        for dims, names in differ.items():
            yield where, f"at {level} the table gives {', '.join(names)} dimension counts {list(dims)}, here " \
                         f"{sorted(counts)}; write the table's"
    missing = [level for level in tables if level not in given]
    if missing:
        yield ("semantics", "dimension_counts"), f"dimension_counts leave out the table{'s' if len(missing) > 1 else ''}" \
                                                 f" at {', '.join(missing)}; give every table's level"


def _accumulator_problems(data: dict[str, Any], spec: m.Spec) -> Iterator[Located]:
    allowed = {t for table in spec.support for row in table.rows for t in row.dtypes}
    for name in data.get("accumulators", {}):
        if m.DataType[name] not in allowed:
            yield ("semantics", "accumulators", name), \
                f"{name} is no tensor type of {spec.operator} (its tables allow " \
                f"{', '.join(t.name for t in m.sort_dtypes(allowed))}); name one of those"


def _at(doc: load.Document, where: JsonPath, message: str) -> LocatedError:
    line, column = doc.where(where)
    return LocatedError(message, path=doc.path, line=line, column=column)


def _error(doc: load.Document, problems: list[Located]) -> SpecError:
    located = tuple(_at(doc, where, message) for where, message in problems)
    first = located[0]
    return SpecError(first.message, path=doc.path, line=first.line, column=first.column, problems=located)
