"""Struct members: documented fields (``### -field X``, ``### `X` ``, bare
`` `X` `` paragraphs), their ``Type:`` lines, typical defaults, and the struct
prototype that fixes their order and C types.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from dmlconform.spec import markdown as md
from dmlconform.spec import model as m
from dmlconform.spec.extract_domain import describes_other, read_domain

Warn = Callable[[int, str], None]

_FIELD_HEADING = re.compile(r"^(?:#{2,4}\s*-field\s+([A-Za-z_]\w*)(?::\S*)?|#{2,4}\s*`([A-Za-z_]\w*)`|`([A-Za-z_]\w*)`)\s*$")
_STRUCTS = {"DML_TENSOR_DESC", "DML_OPERATOR_DESC", "DML_SCALE_BIAS", "DML_SIZE_2D", "DML_SCALAR_UNION"}
_SCALARS = {"FLOAT", "UINT", "INT", "BOOL", "float", "UINT64", "INT64", "DOUBLE", "double"}


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """A C type: ``const`` base ``*``, with SAL annotations."""

    base: str
    const: bool = False
    pointer: bool = False
    maybenull: bool = False
    count: str | None = None

    @property
    def c_type(self) -> str:
        return f"{'const ' if self.const else ''}{self.base}{'*' if self.pointer else ''}"


@dataclass(frozen=True, slots=True)
class RawField:
    """A documented member as the page states it."""

    name: str
    line: int
    type: TypeInfo | None
    default: float | int | bool | str | None
    default_exact: str | None
    text: str
    domain: m.Domain | None = None     # the values the text allows (`extract_domain`)
    typical: float | None = None       # a value the text calls typical, not a default


def parse_type_line(text: str) -> TypeInfo | None:
    """``Type: \\_Maybenull\\_ **const [DML_TENSOR_DESC](…)\\***`` and the other
    shapes of INDEX.md -> TypeInfo.  The pointer star is what is left after the
    bold markers around the type are accounted for."""
    s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    s = re.sub(r"</?[a-zA-Z][^>]*>", " ", s)
    s = html.unescape(s)
    s = re.sub(r"\\(.)", r"\1", s)
    count = re.search(r"_Field_size_\s*\(\s*([A-Za-z_]\w*)\s*\)", s)
    maybenull = "_Maybenull_" in s
    s = re.sub(r"_Field_size_\s*\([^)]*\)|_Maybenull_|_In_|_Out_|_Inout_", " ", s)
    names = [(mo.group(0), mo.end()) for mo in re.finditer(r"[A-Za-z_]\w*", s) if mo.group(0) != "const"]
    if not names:
        return None
    base, end = names[-1]
    stars_after = len(re.findall(r"\*", s[end:]))
    bold_before = s[:end].count("**") * 2 if "**" in s[:end] else 0
    pointer = stars_after - min(bold_before, 2) > 0 or (stars_after > 0 and not bold_before)
    return TypeInfo(base, const=bool(re.search(r"\bconst\b", s)), pointer=pointer,
                    maybenull=maybenull, count=count.group(1) if count else None)


_DEFAULT_PATTERNS = (
    re.compile(r"typical default for this value is\s+\**(-?[\d.]+|TRUE|FALSE|true|false)\**(?:\s*\(([^)]*)\))?"),
    re.compile(r"recommend(?:ed)? a value of\s+(-?[\d.]+)\s+as default"),
    re.compile(r"value of\s+(-?[\d.]+)\s+is recommended as default"),
    re.compile(r"default value is\s+\**(-?[\d.]+|TRUE|FALSE|true|false)\**"),
)


def parse_default(text: str) -> tuple[float | int | bool | None, str | None]:
    """(typical default, exact form) from a field's text; "0.166667 (1/6)"
    keeps "1/6" as the exact value."""
    for pattern in _DEFAULT_PATTERNS:
        mo = pattern.search(text)
        if not mo:
            continue
        token = mo.group(1).rstrip(".")
        exact = mo.group(2).strip() if pattern.groups > 1 and mo.group(2) else None
        if exact is not None and not re.fullmatch(r"-?\d+(\.\d+)?(/\d+)?", exact):
            exact = None
        if token.upper() in ("TRUE", "FALSE"):
            return token.upper() == "TRUE", None
        try:
            value: float | int = float(token)
        except ValueError:
            continue
        if exact is not None and abs(float(Fraction(exact)) - value) > 1e-3 * max(1.0, abs(value)):
            exact = None
        return value, exact
    return None, None


def raw_fields(lines: list[md.Line], warn: Warn, *, path: str = "") -> list[RawField]:
    """Documented members of a Members / -struct-fields section, in page order
    (``path``: the page as a domain's ``source`` names it)."""
    out: list[RawField] = []
    current: tuple[str, int] | None = None
    body: list[md.Line] = []

    def close() -> None:
        if current is None:
            return
        name, line = current
        type_lines = [ln for ln in body if re.match(r"^\s*Type:", ln.text)]
        info = parse_type_line(type_lines[0].text.split(":", 1)[1]) if type_lines else None
        if not type_lines:
            warn(line, f"field {name} has no 'Type:' line")
        elif info is None:
            warn(type_lines[0].number, f"field {name}: cannot read the type in {type_lines[0].text.strip()!r}")
        prose = " ".join(md.plain(ln.text) for ln in body if ln not in type_lines)
        default, exact = parse_default(prose)
        if not prose.strip():
            warn(line, f"field {name} has no description text")
        facts = read_domain(name, prose, body, line=line, path=path,
                            warn=warn if info is None or info.base != "DML_TENSOR_DESC" else _quiet)
        out.append(RawField(name, line, info, default, exact, prose, facts.domain, facts.typical))

    for line in md.outside_code(lines):
        mo = _FIELD_HEADING.match(line.text.strip()) if not line.text.startswith("    ") else None
        if mo:
            close()
            current, body = (next(g for g in mo.groups() if g), line.number), []
        elif current is not None:
            body.append(line)
    close()
    return out


def _quiet(line: int, message: str) -> None:
    """A tensor's text is read for a misplaced attribute text (`_relocated`),
    but limits on a tensor's values are no attribute domain: not warned about."""


def owned_lines(lines: list[md.Line]) -> list[tuple[md.Line, str | None]]:
    """Each line of a members section with the field it documents (None
    before the first field)."""
    owner: str | None = None
    out = []
    for line in lines:
        mo = _FIELD_HEADING.match(line.text.strip())
        if mo:
            owner = next(g for g in mo.groups() if g)
        out.append((line, owner))
    return out


@dataclass(frozen=True, slots=True)
class ProtoMember:
    name: str
    type: TypeInfo


_MEMBER = re.compile(r"^\s*((?:_\w+_(?:\([^)]*\))?\s+)*)(const\s+)?([A-Za-z_]\w*)\s*(\*?)\s*([A-Za-z_]\w*)\s*;")


def parse_prototype(text: str, struct: str) -> list[ProtoMember] | None:
    """Members of ``struct NAME { … };`` in declaration order; None when the
    text does not declare ``struct``."""
    mo = re.search(rf"struct\s+{re.escape(struct)}\s*\{{(.*?)\}}", text, re.S)
    if not mo:
        return None
    members = []
    for raw in mo.group(1).splitlines():
        line = re.sub(r"//.*", "", raw)
        mm = _MEMBER.match(line)
        if not mm:
            continue
        annotations = mm.group(1) or ""
        count = re.search(r"_Field_size_\s*\(\s*(\w+)\s*\)", annotations)
        members.append(ProtoMember(mm.group(5), TypeInfo(
            mm.group(3), const=bool(mm.group(2)), pointer=bool(mm.group(4)),
            maybenull="_Maybenull_" in annotations, count=count.group(1) if count else None)))
    return members


def _kind(t: TypeInfo, count: str | None) -> m.FieldKind:
    if t.base == "DML_TENSOR_DESC":
        return m.FieldKind.TENSOR_ARRAY if count else m.FieldKind.TENSOR
    if t.base in _STRUCTS:
        if not t.pointer:
            return m.FieldKind.STRUCT
        return m.FieldKind.STRUCT_ARRAY if count else m.FieldKind.STRUCT_PTR
    if t.pointer:
        return m.FieldKind.ARRAY
    if t.base in _SCALARS:
        return m.FieldKind.SCALAR
    return m.FieldKind.ENUM


def _role(name: str, support: tuple[m.SupportTable, ...]) -> m.TensorRole:
    kinds = {r.kind for t in support for r in t.rows if r.tensor == name}
    if kinds:
        return m.TensorRole.OUTPUT if any("output" in k.lower() for k in kinds) else m.TensorRole.INPUT
    return m.TensorRole.OUTPUT if name.startswith("Output") else m.TensorRole.INPUT


def _is_array_row(name: str, support: tuple[m.SupportTable, ...]) -> bool:
    return any(r.kind.startswith("Array of") for t in support for r in t.rows if r.tensor == name)


def _guess_count(name: str, previous: list[m.Field]) -> str | None:
    """The count field of an array member with no ``_Field_size_``: the nearest
    preceding UINT member whose name ends in Count."""
    for f in reversed(previous):
        if f.c_type == "UINT" and f.name.endswith("Count"):
            return f.name
    return None


def build_fields(raw: list[RawField], proto: list[ProtoMember] | None, support: tuple[m.SupportTable, ...],
                 warn: Warn, line: int) -> tuple[m.Field, ...]:
    """Fields in struct order: the prototype fixes order and C type; the page
    adds annotations (``_Maybenull_``, ``_Field_size_``) and defaults."""
    raw = _relocated(raw, warn)
    documented = {f.name: f for f in raw}
    seen: set[str] = set()
    for f in raw:
        if f.name in seen:
            warn(f.line, f"field {f.name} is documented twice")
        seen.add(f.name)
    if proto is None:
        members = [(f.name, f.type) for f in raw if f.type is not None]
    else:
        members = [(p.name, p.type) for p in proto]
        declared = {p.name for p in proto}
        for f in raw:
            if f.name not in declared:
                warn(f.line, f"documented field {f.name} is not a member of the struct prototype: dropped")
        for p in proto:
            if p.name not in documented:
                warn(line, f"struct member {p.name} is not documented on the page")
    fields: list[m.Field] = []
    for name, ptype in members:
        doc = documented.get(name)
        dtype = doc.type if doc else None
        if proto is not None and doc is not None and dtype is not None and dtype.c_type != ptype.c_type:
            warn(doc.line, f"field {name}: the Type line says {dtype.c_type!r} but the struct declares {ptype.c_type!r}; "
                           "taking the struct's")
        count = ptype.count or (dtype.count if dtype else None)
        maybenull = ptype.maybenull or bool(dtype and dtype.maybenull)
        kind = _kind(ptype, count)
        if kind is m.FieldKind.ARRAY and count is None:
            count = _guess_count(name, fields)
            if count:
                warn(doc.line if doc else line, f"field {name}: array without _Field_size_; its count is taken to be {count}")
        if kind is m.FieldKind.TENSOR and count is None and _is_array_row(name, support):
            count = _guess_count(name, fields)
            warn(doc.line if doc else line, f"field {name}: the tensor-support table says 'Array of' but the type has "
                                            f"no _Field_size_; its count is taken to be {count}")
        if count and kind is m.FieldKind.TENSOR:
            kind = m.FieldKind.TENSOR_ARRAY
        is_tensor = kind in (m.FieldKind.TENSOR, m.FieldKind.TENSOR_ARRAY)
        fields.append(m.Field(
            name=name, c_type=ptype.c_type, kind=kind,
            role=_role(name, support) if is_tensor else None,
            optional=maybenull, count_field=count,
            default=doc.default if doc else None, default_exact=doc.default_exact if doc else None,
            domain=doc.domain if doc and not is_tensor else None, typical=doc.typical if doc and not is_tensor else None,
        ))
    return tuple(fields)


def _relocated(raw: list[RawField], warn: Warn) -> list[RawField]:
    """The fields with a tensor's text that describes an attribute ("The
    Steepness coefficient. A typical default for this value is 1.0. This
    value cannot be less than 1." under OutputTensor, ACTIVATION_SOFTPLUS)
    moved to that attribute, where it states nothing of its own."""
    attributes = {f.name: f for f in raw if f.type is None or f.type.base != "DML_TENSOR_DESC"}
    out = list(raw)
    for i, f in enumerate(raw):
        target = describes_other(f.text, tuple(attributes)) if f.type and f.type.base == "DML_TENSOR_DESC" else None
        if target is None:
            continue
        t = attributes[target]
        if t.default is not None or t.domain is not None or f.default is None and f.domain is None:
            continue
        warn(f.line, f"field {f.name}: its text describes {target} ({f.text.strip()[:60]!r}...): its default and range "
                     f"are taken as {target}'s")
        out[i] = replace(f, default=None, default_exact=None, domain=None, typical=None)
        j = next(k for k, g in enumerate(raw) if g is t)
        out[j] = replace(t, default=f.default, default_exact=f.default_exact, domain=f.domain,
                         typical=t.typical if t.typical is not None else f.typical)
    return out
