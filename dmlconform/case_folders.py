"""Case folders checked whole against their specs before anything runs.

DESIGN.md, "Cases": a case folder written by `gen`, by `import onnx` or by
hand (external test vectors) is replayed by ``run --cases``.  `read_cases`
checks the format (keys, types, files); this module checks what the format
cannot: that each case is a call its operator's spec describes.  A case
whose operator has no spec, whose ``dtype`` is none of its inputs', whose
attributes or tensors are not the spec's fields, whose aliases the spec does
not allow, or whose sizes break the spec's constraints is the folder's fault,
not the backend's: without this check such a case runs, and its failure is
blamed on the backend ("the backend raised KeyError"), or it passes.

The rules accept exactly what the writers write (`generate`: FLOAT members as
float32 values or exact texts such as ``"1/6"``, enum constants by name,
booleans, integers; negative cases outside the support tables, whose data
types and dimension counts are the backend's to reject) and what a hand-written
vector honestly could (a FLOAT as ``1`` or ``0.1``, a broadcast input of
stride 0, an optional input left out).  Each rule is a generator of problem
texts, ``problem: fix``; `folder_problems` adds which case, and
`folder_error` where in the manifest, as jsonschema's validators do.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from dmlconform.cases.model import Case, TensorData, buffer_elements
from dmlconform.errors import CaseFolderError, LocatedError
from dmlconform.families import family_of
from dmlconform.limits import MAX_TENSOR_ELEMENTS
from dmlconform.spec.model import (
    ConstraintKind,
    DataType,
    Field,
    FieldKind,
    Spec,
    TensorRole,
    element_name,
    field_name,
    split_element,
)
from dmlconform.spec.operator_types import ENUM_FILE

#: Problems shown at most; the rest are counted ("and K more").
SHOWN = 20
#: An exact text: an integer, a decimal or a ratio of integers, as the
#: oracle reads it (``Fraction``), with an exponent of at most three digits
#: (``"1e999999999"`` would take the oracle minutes to expand).
_EXACT_RE = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,3})?(?:/\d+)?$", re.ASCII)
_EXACT_LENGTH = 64
_SHOWN_VALUE = 40  # characters of a value or name a message quotes
_SHOWN_ID = 200    # and of a case id


@dataclass(frozen=True, slots=True)
class CaseProblem:
    """One problem of the case at ``index`` (manifest order, as its file
    names count) with id ``case_id``: ``text`` is ``problem: fix``."""

    index: int
    case_id: str
    text: str


# -- the folder ------------------------------------------------------------------------
def folder_problems(cases: Sequence[Case], specs: Mapping[str, Spec], *,
                    operators: frozenset[str] | None = None) -> Iterator[CaseProblem]:
    """Every problem of ``cases``, in manifest order.  ``specs`` by
    operator; ``operators`` (``--op``) leaves the cases of other operators
    out, unchecked; without it a case whose operator has no spec is a
    problem.  Ids are unique over the whole folder (`--case ID` and
    baselines name a case by its id)."""
    first: dict[str, int] = {}
    for index, case in enumerate(cases):
        earlier = first.setdefault(case.id, index)
        texts: list[str] = []
        if earlier != index:
            texts.append(f"case {earlier} has the same id: give every case its own id")
        if operators is None or case.operator in operators:
            spec = specs.get(case.operator)
            texts.extend(case_problems(spec, case) if spec is not None else (_no_spec(case.operator, specs),))
        yield from (CaseProblem(index, case.id, text) for text in texts)


def folder_error(problems: Sequence[CaseProblem], *, more: int = 0, manifest: str | Path,
                 lines: Sequence[int], columns: Sequence[int] = ()) -> CaseFolderError:
    """One error naming ``problems`` (the first `SHOWN` of a folder), each
    at its case's place in the manifest (``lines`` and ``columns``, from
    `store.case_lines` and `store.case_columns`; 0 where unknown), and
    counting the ``more`` left out."""
    def at(places: Sequence[int], index: int) -> int:
        return places[index] if index < len(places) else 0

    located = tuple(LocatedError(f"case {p.index} ({_name(p.case_id, _SHOWN_ID)}): {p.text}", path=manifest,
                                 line=at(lines, p.index), column=at(columns, p.index) if at(lines, p.index) else 0)
                    for p in problems)
    return CaseFolderError(located[0].message if located else "no problem", path=manifest, problems=located,
                           more=more)


def _no_spec(operator: str, specs: Mapping[str, Spec]) -> str:
    near = difflib.get_close_matches(operator, sorted(specs), n=1)
    hint = f" (did you mean {near[0]}?)" if near else ""
    return (f"operator {_name(operator)} has no spec among the {len(specs)} loaded{hint}: correct the name, point "
            "--specs at the folder holding its spec, or leave the case out")


# -- one case --------------------------------------------------------------------------
def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """Every way ``case`` is not a call of ``spec``'s operator (the rules of
    the module docstring), each a ``problem: fix`` text."""
    family, reason = family_of(spec)
    if family is not None and family.case_problems is not None:  # reviewed semantics: the family's shape rules
        yield from family.case_problems(spec, case)
    elif family is None and not (spec.formula.evaluable and spec.formula.parsed):
        yield (f"{spec.operator}'s formula cannot be evaluated ({spec.formula.reason or 'no parsed formula'}), so "
               "nothing can check this case: leave it out")
    elif family is None:
        yield f"no operator family tests {spec.operator} ({reason}), so nothing can check this case: leave it out"
    yield from _dtype_problems(case)
    yield from _claim_problems(spec, case)
    yield from _tensor_problems(spec, case)
    yield from _shape_problems(spec, case)
    yield from _constraint_problems(spec, case)
    yield from _alias_problems(spec, case)
    yield from _attribute_problems(spec, case, family_owned=family is not None and family.case_problems is not None)


def _dtype_problems(case: Case) -> Iterator[str]:
    """The case's data type is its inputs' (the primary group of `generate`,
    which always holds an input; an operator without inputs: its outputs')."""
    pool = case.inputs or case.outputs
    if pool and all(t.dtype is not case.dtype for t in pool):
        shown = ", ".join(f"{t.name} is {t.dtype.name}" for t in pool)
        yield (f"dtype {case.dtype.name} is the data type of none of its {'inputs' if case.inputs else 'outputs'} "
               f"({shown}): set \"dtype\" to {pool[0].dtype.name}")


def _claim_problems(spec: Spec, case: Case) -> Iterator[str]:
    """A case that claims its level's table supports it (``expect_supported``)
    is inside that table: each tensor's data type and dimension count in its
    row, as the cpu reference holds a call against it.  Believed, the claim
    blames a backend that rightly rejects the call (issue #33: an ARGMAX
    index output of FLOAT32 FAILed "rejected a configuration that the 6_4
    table supports: ... FLOAT32 is not supported").  A claim of false is
    left alone: a case inside the table may be negative for what the table
    does not say (an attribute outside the doc's range, a 1-D zero point of
    rows)."""
    if not case.expect_supported:
        return
    fix = 'or set "expect_supported" to false'
    table = spec.table_for(case.level, case.attributes) if spec.introduced <= case.level else None
    if table is None:
        yield (f'"expect_supported" is true, but {spec.operator} has no support table at feature level '
               f"{case.level.short} (introduced at {spec.introduced.short}): give a level it has, {fix}")
        return
    for t in (t for t in (*case.inputs, *case.outputs) if spec.tensor_field(t.name)):  # others: `_tensor_problems`
        row = table.row(field_name(t.name))
        where = f'"expect_supported" is true, but the table in force at {case.level.short} (from {table.level.short})'
        if row is None:
            yield f"{where} has no row for {_name(t.name)}: leave the tensor out, {fix}"
            continue
        if t.dtype not in row.dtypes:
            known = ", ".join(d.name for d in row.dtypes)
            yield (f"{where} does not support {t.dtype.name} for {t.name} (it supports {known}): give "
                   f"{t.name} one of those, {fix}")
        if t.sizes and len(t.sizes) not in row.dims:  # no dimensions: `_shape_problems`
            known = ", ".join(str(d) for d in row.dims)
            yield (f"{where} does not support {len(t.sizes)} dimensions for {t.name} (it supports {known}): "
                   f"give {t.name} one of those counts, {fix}")


# -- tensors ---------------------------------------------------------------------------
def _tensor_problems(spec: Spec, case: Case) -> Iterator[str]:
    """Each tensor is a tensor field of the spec, listed under its role, once;
    every tensor field that is not optional is there."""
    counts: dict[str, int] = {}
    listed = [("inputs", TensorRole.INPUT, t) for t in case.inputs]
    listed += [("outputs", TensorRole.OUTPUT, t) for t in case.outputs]
    for key, role, t in listed:
        counts[t.name] = counts.get(t.name, 0) + 1
        field = spec.tensor_field(t.name)
        if field is None:
            yield _not_a_tensor(spec, t.name)
        elif field.role is not None and field.role is not role:
            other = "outputs" if key == "inputs" else "inputs"
            yield (f"tensor {t.name} is an {field.role.value} of {spec.operator}, not an {role.value}: "
                   f"move it from \"{key}\" to \"{other}\"")
    yield from (f"tensor {_name(name)} is given {n} times: keep one" for name, n in counts.items() if n > 1)
    given = {field_name(name) for name in counts if spec.tensor_field(name)}
    for f in spec.tensors:
        if not f.optional and f.name not in given:
            role_name = f.role.value if f.role else "input"
            named = element_name(f.name, 0) if f.kind is FieldKind.TENSOR_ARRAY else f.name
            yield f"{role_name} tensor {named} is missing: {spec.operator} needs it; add it to \"{role_name}s\""
    yield from _array_problems(spec, case, set(counts))


def _not_a_tensor(spec: Spec, name: str) -> str:
    """A tensor name that binds no tensor field: an array's field named
    alone or a single tensor's with an index say the convention."""
    head, index = split_element(name)
    field = spec.field(head)
    if field is not None and field.kind is FieldKind.TENSOR_ARRAY:
        return (f"tensor {_name(name)}: {head} is an array of tensors ({field.count_field} of them); name each "
                f"{element_name(head, 0)}, {element_name(head, 1)}, ... in order")
    if field is not None and field.kind is FieldKind.TENSOR:
        return f"tensor {_name(name)}: {head} is a single tensor, not an array: name it {head}"
    return _not_a_field("tensor", name, spec.operator, [f.name for f in spec.tensors])


def _array_problems(spec: Spec, case: Case, names: set[str]) -> Iterator[str]:
    """Each tensor-array field's tensors are numbered 0 .. n - 1, and its
    count field (JOIN's ``InputCount``) says n."""
    attributes = case.attribute_map()
    for f in (f for f in spec.tensors if f.kind is FieldKind.TENSOR_ARRAY):
        indices = sorted(i for n in names if (p := split_element(n))[0] == f.name and (i := p[1]) is not None)
        if not indices:
            continue
        if indices != list(range(len(indices))):
            missing = sorted(set(range(indices[-1] + 1)) - set(indices))
            yield (f"tensors {f.name} are numbered {indices}, without {element_name(f.name, missing[0])}: number "
                   f"them 0 to {len(indices) - 1} in order")
        count = attributes.get(f.count_field or "")
        if f.count_field and count is not None and count != len(indices):
            yield (f"attribute {f.count_field}={_show(count)} but the case gives {len(indices)} tensors "
                   f"{f.name}: set {f.count_field} to {len(indices)}")


def _shape_problems(spec: Spec, case: Case) -> Iterator[str]:
    """Tensors DirectML can describe; outputs whose elements are distinct;
    inputs that broadcast to the output's sizes (the element-wise oracle
    computes over them, which also bounds its memory by the output's file;
    an input the spec ties to the output by ``same Sizes`` is left to
    `_constraint_problems`, which says it once)."""
    for t in (*case.inputs, *case.outputs):
        if not t.sizes:
            yield f"tensor {t.name} has no dimensions (sizes []): write a single value as sizes [1]"
        elif 0 in t.sizes:
            yield f"tensor {t.name} has sizes {list(t.sizes)}: every size must be at least 1 (no empty tensors)"
        elif math.prod(t.sizes) > MAX_TENSOR_ELEMENTS:
            yield (f"tensor {t.name} has sizes {list(t.sizes)}, {math.prod(t.sizes):,} elements (its file holds "
                   f"{t.buffer.size:,}; the rest repeat by its strides), over the {MAX_TENSOR_ELEMENTS:,} one case "
                   "may compute with (limits.MAX_TENSOR_ELEMENTS): give it smaller sizes, or split the case")
    for t in case.outputs:
        if t.sizes and 0 not in t.sizes and _overlaps(t):
            yield (f"output {t.name}'s sizes {list(t.sizes)} and strides {list(t.strides)} give two elements "
                   "one place in memory: give it strides under which its elements are distinct (packed or "
                   "padded)")
    if case.outputs and spec.semantics is None:  # reviewed semantics have their family's shape rules
        target = case.outputs[0]
        for t in case.inputs:
            if not _broadcasts(t.sizes, target.sizes) and not _tied(spec, t.name, target.name):
                yield (f"input {t.name}'s sizes {list(t.sizes)} do not broadcast to {target.name}'s "
                       f"{list(target.sizes)}: give it the output's sizes (stride 0 where it repeats)")


def _overlaps(t: TensorData) -> bool:
    """Whether two elements of ``t`` share a buffer element.  The cheap
    tests first: a stride 0 under a size above 1, more elements than the
    buffer holds, strides that nest (packed, padded); only an interleaved
    layout lists its offsets, no more of them than its buffer's length."""
    dims = sorted((stride, size) for size, stride in zip(t.sizes, t.strides) if size > 1)
    if any(stride == 0 for stride, _ in dims):
        return True
    count = math.prod(size for _, size in dims)
    if count > buffer_elements(t.sizes, t.strides):
        return True
    reach = 0  # the largest offset of the dimensions of smaller strides
    for stride, size in dims:
        if stride <= reach:
            offsets = np.zeros(1, dtype=np.int64)
            for step, n in dims:
                offsets = (offsets[:, None] + np.arange(n, dtype=np.int64) * step).reshape(-1)
            return int(np.unique(offsets).size) != count
        reach += (size - 1) * stride
    return False


def _tied(spec: Spec, a: str, b: str) -> bool:
    """Whether a ``same Sizes`` constraint of ``spec`` names both tensors."""
    return any(c.kind is ConstraintKind.SAME and "Sizes" in c.properties and {a, b} <= set(c.tensors)
               for c in spec.constraints)


def _broadcasts(sizes: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """numpy's rule: trailing dimensions equal or 1, no more dimensions than ``target``."""
    if len(sizes) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(sizes), reversed(target)))


def _constraint_problems(spec: Spec, case: Case) -> Iterator[str]:
    """The spec's ``same`` constraints over the tensors the case has."""
    tensors = (*case.inputs, *case.outputs)
    read = {"DataType": lambda t: t.dtype.name, "DimensionCount": lambda t: len(t.sizes),
            "Sizes": lambda t: list(t.sizes)}
    for c in spec.constraints:
        present = [t for t in tensors if field_name(t.name) in c.tensors]  # with each array's tensors
        if c.kind is not ConstraintKind.SAME or len(present) < 2:
            continue
        for prop in (p for p in c.properties if p in read):
            values = [read[prop](t) for t in present]
            if any(v != values[0] for v in values):
                shown = ", ".join(f"{t.name}={v}" for t, v in zip(present, values))
                yield (f"{spec.operator} needs the same {prop} for {', '.join(t.name for t in present)} "
                       f"({shown}): make them equal")


def _alias_problems(spec: Spec, case: Case) -> Iterator[str]:
    """Each alias binds an output of the case to an input of the case, as
    the spec's ``in_place`` allows, the two alike (data type, sizes, strides)."""
    inputs = {t.name: t for t in case.inputs}
    outputs = {t.name: t for t in case.outputs}
    allowed = {(p.output, p.input) for p in spec.in_place}
    bound: set[str] = set()
    for out, inp in case.aliases:
        where = f"alias [{_name(out)}, {_name(inp)}]"
        if out not in outputs:
            yield f"{where}: {_name(out)} is not an output of the case: name one of {_names(outputs)} first"
        elif inp not in inputs:
            what = "an output; an output can alias only an input" if inp in outputs else "not an input of the case"
            yield f"{where}: {_name(inp)} is {what}: name one of {_names(inputs)} second"
        elif (out, inp) not in allowed:
            shown = ", ".join(f"[{o}, {i}]" for o, i in sorted(allowed)) or "none"
            yield f"{where}: {spec.operator} does not allow it in place (it allows: {shown}): remove the alias"
        elif out in bound:
            yield f"{where}: {out} is aliased twice: keep one alias"
        else:
            yield from _alias_mismatch(where, outputs[out], inputs[inp])
        bound.add(out)


def _alias_mismatch(where: str, out: TensorData, inp: TensorData) -> Iterator[str]:
    for what, a, b in (("data type", out.dtype.name, inp.dtype.name), ("sizes", list(out.sizes), list(inp.sizes)),
                       ("strides", list(out.strides), list(inp.strides))):
        if a != b:
            yield (f"{where}: {out.name} has {what} {a} but {inp.name} {b}: give {out.name} the {what} of "
                   f"{inp.name} (in place, they are one buffer)")


# -- attributes ------------------------------------------------------------------------
def _attribute_problems(spec: Spec, case: Case, *, family_owned: bool = False) -> Iterator[str]:
    """Each attribute is an attribute field of the spec, given once, with a
    value of its kind; every field but a null pointer (``ScaleBias``,
    ``FusedActivation``, which cases leave out) is given.  Where a family
    with shape rules tests the operator (``family_owned``), what the case
    format holds only as text is the family's to check: array fields
    (``Axes`` as "2,0") and a pointer given as text (GEMM's
    ``FusedActivation``)."""
    fields = {f.name: f for f in spec.attributes}
    union = _union_type(spec, case)
    seen: set[str] = set()
    for name, value in case.attributes:
        field = fields.get(name)
        if name in seen:
            yield f"attribute {_name(name)} is given twice: keep one"
        elif field is None:
            yield _unknown_attribute(spec, name)
        elif not (family_owned and _read_by_family(field, value)):
            problem = _value_problem(field, value, union)
            if problem:
                yield f"attribute {name}={_show(value)} {problem}"
        seen.add(name)
    for f in spec.attributes:
        if f.name not in seen and f.kind is not FieldKind.STRUCT_PTR and not (family_owned and f.kind is FieldKind.ARRAY):
            yield _missing(spec, f)


def _read_by_family(field: Field, value: object) -> bool:
    """What the case format holds only as text, which a family with shape
    rules checks itself: an array, a pointer given as text, and a
    DML_SIZE_2D as ``"Width,Height"``."""
    text = isinstance(value, str)
    return field.kind is FieldKind.ARRAY or (field.kind is FieldKind.STRUCT_PTR and text) or \
        (field.kind is FieldKind.STRUCT and field.c_type == "DML_SIZE_2D" and text)


def _missing(spec: Spec, field: Field) -> str:
    """An attribute field the case leaves out: give it (its default, where
    the spec has one), unless the format cannot hold it."""
    if not _holdable(field):
        return (f"attribute {field.name} is missing, and cases cannot hold a {field.c_type} ({field.kind.value}): "
                "leave the case out")
    default = field.default_exact if field.default_exact is not None else field.default
    hint = f" (the spec's default: [{json.dumps(field.name)}, {json.dumps(default)}])" if default is not None else ""
    return f"attribute {field.name} is missing: {spec.operator} needs it; give it{hint}"


def _unknown_attribute(spec: Spec, name: str) -> str:
    """A name that is a tensor, a member of a pointer field, or nothing."""
    head = name.partition(".")[0]
    field = spec.field(head)
    if field is not None and field.is_tensor:
        return f"attribute {_name(name)} is a tensor of {spec.operator}: give it under \"inputs\" or \"outputs\""
    if field is not None and field.kind is FieldKind.STRUCT_PTR:
        return (f"attribute {_name(name)} sets the pointer {head}, which cases leave null (the oracle does not "
                "model it): remove it")
    return _not_a_field("attribute", name, spec.operator, [f.name for f in spec.attributes])


def _union_type(spec: Spec, case: Case) -> DataType:
    """The type a ``DML_SCALAR_UNION`` holds: the one a data-type attribute
    names (``MinMaxDataType``), else the case's."""
    for f in spec.attributes:
        if f.kind is FieldKind.ENUM and f.c_type == "DML_TENSOR_DATA_TYPE":
            value = case.attribute_map().get(f.name)
            name = value.removeprefix("DML_TENSOR_DATA_TYPE_") if isinstance(value, str) else ""
            if name in DataType.__members__:
                return DataType[name]
    return case.dtype


def _holdable(field: Field) -> bool:
    """Whether a case can give ``field``: scalars, enums and scalar unions
    (the format holds no arrays, structs or pointers)."""
    scalar = field.kind is FieldKind.SCALAR and field.c_type.upper() in ("BOOL", "FLOAT", "INT", "UINT")
    return scalar or field.kind is FieldKind.ENUM or field.c_type == "DML_SCALAR_UNION"


def _value_problem(field: Field, value: Any, union: DataType) -> str | None:
    """Why ``value`` is not a value of ``field`` (None: it is), as
    ``is ...: fix``."""
    if not _holdable(field):
        return (f"cannot be given: {field.name} is a {field.c_type} ({field.kind.value}), and cases hold scalar "
                "attributes only; leave the case out")
    scalar = field.c_type.upper() if field.kind is FieldKind.SCALAR else ""
    if field.kind is FieldKind.ENUM:
        return _enum_problem(field.c_type, value)
    if scalar == "BOOL":
        return None if isinstance(value, bool) else "is not a boolean: write true or false"
    if scalar == "FLOAT":
        return _float_problem(value, DataType.FLOAT32)
    if scalar in ("INT", "UINT"):
        return _integer_problem(value, DataType.INT32 if scalar == "INT" else DataType.UINT32)
    return _float_problem(value, union) if union.is_float else _integer_problem(value, union)  # a scalar union


def _float_problem(value: Any, dtype: DataType) -> str | None:
    """A number, or an exact text, finite in ``dtype``."""
    fix = f"give a finite {dtype.name} value as a number (0.5) or an exact text (\"1/6\")"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return f"is not a number: {fix}"
    if isinstance(value, str):
        exact = _exact(value)
        if exact is None:
            return f"is not a number: {fix}"
        value = exact
    largest = Fraction(float(np.finfo(np.dtype(dtype.name.lower())).max))
    if isinstance(value, float) and not math.isfinite(value):
        return f"is not finite: {fix}"
    if abs(Fraction(value)) > largest:
        return f"is beyond {dtype.name}'s largest value {float(largest):.8g}: {fix}"
    return None


def _exact(text: str) -> Fraction | None:
    """The value of an exact text (``"1/6"``, ``"0.1"``), None for any
    other string (one the oracle could not read, or would take long to)."""
    if len(text) > _EXACT_LENGTH or not _EXACT_RE.match(text):
        return None
    number, _, denominator = text.partition("/")
    if denominator and int(denominator) == 0:
        return None
    return Fraction(number) / (int(denominator) if denominator else 1)


def _integer_problem(value: Any, dtype: DataType) -> str | None:
    """An integer in ``dtype``'s range."""
    half = 1 << (dtype.bits - 1)
    low, high = (-half, half - 1) if dtype.is_signed else (0, 2 * half - 1)
    if isinstance(value, bool) or not isinstance(value, int):
        return f"is not an integer: give an integer from {low} to {high} ({dtype.name})"
    if not low <= value <= high:
        return f"is outside {dtype.name}'s range: give an integer from {low} to {high}"
    return None


def _enum_problem(c_type: str, value: Any) -> str | None:
    """The full name of a constant of ``c_type`` (the oracle compares names)."""
    known = _constants(c_type)
    if isinstance(value, str) and value in known:
        return None
    if isinstance(value, str) and f"{c_type}_{value}" in known:
        return f"is a suffix: write the full name {c_type}_{value}"
    near = difflib.get_close_matches(value, known, n=1) if isinstance(value, str) else []
    hint = f"; did you mean {near[0]}?" if near else ""
    what = f"a constant of {c_type}" if isinstance(value, str) else "a constant's name"
    return f"is not {what}: give one of {', '.join(known) or 'none known'} by name{hint}"


@functools.cache
def _constants(c_type: str) -> tuple[str, ...]:
    """The constants of enum ``c_type``, sorted: the data types for
    ``DML_TENSOR_DATA_TYPE``, else the shipped table of attribute enums
    (`spec.operator_types`)."""
    if c_type == "DML_TENSOR_DATA_TYPE":
        return tuple(sorted(f"{c_type}_{t.name}" for t in DataType))

    text = resources.files("dmlconform").joinpath(*ENUM_FILE).read_text(encoding="utf-8")
    return tuple(sorted(name for name in json.loads(text) if name.startswith(c_type + "_")))


# -- wording ---------------------------------------------------------------------------
def _not_a_field(what: str, name: str, operator: str, names: list[str]) -> str:
    near = difflib.get_close_matches(name, names, n=1)
    fix = f"did you mean {near[0]}?" if near else "remove it"
    return f"{what} {_name(name)} is not a field of {operator} (its {what}s: {', '.join(names) or 'none'}): {fix}"


def _names(tensors: Mapping[str, TensorData]) -> str:
    return ", ".join(tensors) or "none"


def _name(name: str, limit: int = _SHOWN_VALUE) -> str:
    """A name as typed, JSON-quoted where it is empty or not printable."""
    return _cut(name if name.isprintable() and name else json.dumps(name), limit)


def _show(value: Any) -> str:
    """A value as the manifest writes it (JSON), cut to a readable length."""
    return _cut(json.dumps(value))


def _cut(text: str, limit: int = _SHOWN_VALUE) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."
