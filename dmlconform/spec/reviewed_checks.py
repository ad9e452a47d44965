"""What every kind of reviewed semantics shares (`spec.reviewed`): a kind
itself (`Kind`: a family's schema, builder and checks, kept apart from the
overlay reader so that the families' registry loads no YAML), schema
pieces, and the checks of the names the semantics give against the spec's
fields and support tables.  Each yields ``(path, message)`` pairs, the path
a JSON path from the overlay's top, that `spec.reviewed` locates."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from dmlconform.spec import model as m
from dmlconform.spec.model import Semantics

IDENT = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
SOURCE = {"type": "string", "pattern": "^[^:\\n]+:[1-9][0-9]*$"}
DTYPES = [t.name for t in m.DATA_TYPE_ORDER]
#: ``dimension_counts``: feature level -> the dimension counts the reviewer read in that level's table.
DIMENSION_COUNTS = {"type": "object", "propertyNames": {"enum": [lv.short for lv in m.FeatureLevel]},
                    "additionalProperties": {"type": "array", "minItems": 1, "uniqueItems": True,
                                             "items": {"type": "integer", "minimum": 1, "maximum": 8}}}
#: A JSON path into the overlay (`load.JsonPath`: load imports these modules, so it is not read from there).
JsonPath = tuple[str | int, ...]
Located = tuple[JsonPath, str]
AT: JsonPath = ("semantics",)


def get(data: dict[str, Any], path: tuple[str, ...]) -> str | None:
    """The name at ``path`` of ``data`` (None where there is none)."""
    value: Any = data
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else None


def dimension_counts(data: dict[str, Any]) -> tuple[tuple[m.FeatureLevel, tuple[int, ...]], ...]:
    """``dimension_counts`` of shape-checked ``data``, oldest level first."""
    return tuple(sorted((m.FeatureLevel.parse(level), tuple(sorted(counts)))
                        for level, counts in data.get("dimension_counts", {}).items()))


def accumulators(data: dict[str, Any]) -> tuple[tuple[m.DataType, m.DataType], ...]:
    """``accumulators`` of shape-checked ``data`` (tensor type -> accumulator type), in type order."""
    return tuple(sorted(((m.DataType[k], m.DataType[v]) for k, v in data.get("accumulators", {}).items()),
                        key=lambda kv: kv[0].value))


def tensor_problem(spec: m.Spec, where: JsonPath, name: str, role: m.TensorRole) -> Iterator[Located]:
    """``name`` is a tensor of ``spec`` in ``role``."""
    field = spec.field(name)
    tensors = ", ".join(f.name for f in spec.tensors)
    if field is None or not field.is_tensor:
        yield where, f"{name} is not a tensor of {spec.operator} (its tensors: {tensors})"
    elif field.role is not role:
        yield where, f"{name} is an {field.role.value if field.role else 'unknown'} of {spec.operator}, " \
                     f"not an {role.value}; name one of its {role.value}s"


def is_float(f: m.Field) -> str | None:
    """None where ``f`` is a FLOAT scalar, else what it should be."""
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "FLOAT" else "a FLOAT scalar"


def is_uint(f: m.Field) -> str | None:
    """None where ``f`` is a UINT scalar, else what it should be."""
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "UINT" else "a UINT scalar"


def is_uint_array(f: m.Field) -> str | None:
    """None where ``f`` is an array of UINT, else what it should be."""
    return None if f.kind is m.FieldKind.ARRAY and "UINT" in f.c_type else "a UINT array"


def is_bool(f: m.Field) -> str | None:
    """None where ``f`` is a BOOL scalar, else what it should be."""
    return None if f.kind is m.FieldKind.SCALAR and f.c_type == "BOOL" else "a BOOL scalar"


def is_enum(f: m.Field) -> str | None:
    """None where ``f`` is an enum, else what it should be."""
    return None if f.kind is m.FieldKind.ENUM else "an enum"


def is_pointer(f: m.Field) -> str | None:
    """None where ``f`` is an operator description pointer, else what it should be."""
    return None if f.kind is m.FieldKind.STRUCT_PTR else "an operator description pointer"


def attribute_problem(spec: m.Spec, where: JsonPath, name: str,
                      check: Callable[[m.Field], str | None]) -> Iterator[Located]:
    """``name`` is an attribute of ``spec`` that ``check`` accepts."""
    field = spec.field(name)
    if field is None or field.is_tensor:
        names = ", ".join(f.name for f in spec.attributes)
        yield where, f"{name} is not an attribute of {spec.operator} (its attributes: {names})"
        return
    wanted = check(field)
    if wanted is not None:
        yield where, f"{name} is {field.c_type} ({field.kind.value}) in the spec; name {wanted} here"


#: (path under ``semantics``, the role the tensor named there must have)
TensorPaths = Iterable[tuple[tuple[str, ...], m.TensorRole]]
#: (path under ``semantics``, the check of the attribute named there)
AttributePaths = Iterable[tuple[tuple[str, ...], Callable[[m.Field], str | None]]]


@dataclass(frozen=True, slots=True)
class Named:
    """The fields the semantics name (tensors first, in path order) and
    what is wrong with them (`named_fields`)."""

    names: tuple[str, ...]
    problems: tuple[Located, ...]


def named_fields(data: dict[str, Any], spec: m.Spec, tensors: TensorPaths, attributes: AttributePaths) -> Named:
    """Each name given at a path of ``tensors`` is a tensor of ``spec`` in
    its role, each at a path of ``attributes`` an attribute its check
    accepts (a path with no name is skipped); where all are right, every
    field of ``spec`` is named (a misnamed field is its own problem: the
    one it meant is not "left out" twice).  The one loop of every kind."""
    names: list[str] = []
    found: list[Located] = []
    for path, role in tensors:
        name = get(data, path)
        if name is not None:
            names.append(name)
            found.extend(tensor_problem(spec, AT + path, name, role))
    for path, check in attributes:
        name = get(data, path)
        if name is not None:
            names.append(name)
            found.extend(attribute_problem(spec, AT + path, name, check))
    if not found:
        found.extend(left_out(spec, names))
    return Named(tuple(names), tuple(found))


def left_out(spec: m.Spec, named: Iterable[str]) -> Iterator[Located]:
    """Every field of ``spec`` is among ``named``; a tensor array's count
    field (JOIN's ``InputCount``) is named with its array (a case gives it
    as the array's length, `spec.model.element_name`)."""
    named = set(named)
    named |= {f.count_field for f in spec.fields if f.name in named and f.kind is m.FieldKind.TENSOR_ARRAY
              and f.count_field}
    left = [f.name for f in spec.fields if f.name not in named]
    if left:
        yield AT, f"semantics leave out field{'s' if len(left) > 1 else ''} {', '.join(left)} of {spec.operator}; " \
                  "name every tensor and attribute"


def dims_problems(data: dict[str, Any], spec: m.Spec, tensors: list[str]) -> Iterator[Located]:
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


def accumulator_problems(data: dict[str, Any], spec: m.Spec) -> Iterator[Located]:
    """``accumulators`` names only types the tables allow."""
    allowed = {t for table in spec.support for row in table.rows for t in row.dtypes}
    for name in data.get("accumulators", {}):
        if m.DataType[name] not in allowed:
            yield ("semantics", "accumulators", name), \
                f"{name} is no tensor type of {spec.operator} (its tables allow " \
                f"{', '.join(t.name for t in m.sort_dtypes(allowed))}); name one of those"


@dataclass(frozen=True, slots=True, eq=False)
class Kind:
    """One kind of semantics: the JSON schema of its ``semantics`` mapping
    (``family`` its name), ``build`` (shape-checked data -> its record) and
    ``against_spec`` (the problems of the data against the spec).  Each
    family gives its own (`families.Family.overlay`); equal only to itself,
    so that its schema's validator is made once."""

    schema: dict[str, Any]
    build: Callable[[dict[str, Any]], Semantics]
    against_spec: Callable[[dict[str, Any], m.Spec], Iterator[Located]]
