"""Spec files in, `Spec` records out, with every problem located at file:line:col.

The YAML goes through ``yaml.compose`` with the safe loader, so each node keeps
its position; we build plain Python data ourselves from the node tree (no
``yaml.load``, no custom tags, no anchors/aliases, no duplicate keys) and keep a
map from each JSON path to its (line, column).  The JSON Schema then checks the
data, and each schema error is placed with that map.  DESIGN.md "The spec".
"""

from __future__ import annotations

import difflib
import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import yaml

from dmlconform.errors import LocatedError, SpecError
from dmlconform.spec import model as m

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed spec file: the data and where each value sits (1-based)."""

    path: str
    data: Any
    positions: dict[JsonPath, tuple[int, int]]

    def where(self, json_path: JsonPath) -> tuple[int, int]:
        """Line and column of the value at ``json_path`` or of its nearest parent."""
        p = tuple(json_path)
        while p not in self.positions and p:
            p = p[:-1]
        return self.positions.get(p, (1, 1))


@dataclass(frozen=True, slots=True)
class Problem:
    """A schema problem: what is wrong, and where in the document."""

    json_path: JsonPath
    message: str
    validator: str
    value: Any = None


def _located(path: str, node: yaml.Node | yaml.MarkedYAMLError | None, message: str) -> LocatedError:
    mark = getattr(node, "start_mark", None) or getattr(node, "problem_mark", None)
    if mark is None:
        return LocatedError(message, path=path)
    return LocatedError(message, path=path, line=mark.line + 1, column=mark.column + 1)


_SCALAR_TAGS = {
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null",
}


class _Builder:
    """Turns a composed node tree into JSON-like data plus a position map."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.positions: dict[JsonPath, tuple[int, int]] = {}
        self.constructor = yaml.SafeLoader("")  # only used for its scalar constructors

    def build(self, node: yaml.Node, at: JsonPath, depth: int = 0) -> Any:
        if depth > 64:
            raise _located(self.path, node, "nesting deeper than 64 levels")
        if getattr(node, "anchor", None):
            raise _located(self.path, node, "YAML anchors and aliases are not allowed in spec files")
        self.positions[at] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, at, depth)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, at + (i,), depth + 1) for i, item in enumerate(node.value)]
        if node.tag not in _SCALAR_TAGS:
            raise _located(self.path, node, f"unsupported YAML tag {node.tag!r}; use plain strings, numbers, booleans, lists and mappings")
        try:
            return self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            raise _located(self.path, node, f"bad scalar {node.value!r}: {exc}") from None

    def _mapping(self, node: yaml.MappingNode, at: JsonPath, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                raise _located(self.path, key_node, "mapping keys must be plain strings (no merge keys or complex keys)")
            key = key_node.value
            if key in out:
                raise _located(self.path, key_node, f"duplicate key {key!r}")
            out[key] = self.build(value_node, at + (key,), depth + 1)
        return out


def parse_document(text: str, *, path: str) -> Document:
    """YAML text -> Document.  Raises SpecError (never a YAML or Python error)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        problem = exc.problem or str(exc)
        raise SpecError(f"not valid YAML: {problem}", path=path,
                        line=exc.problem_mark.line + 1 if exc.problem_mark else 0,
                        column=exc.problem_mark.column + 1 if exc.problem_mark else 0) from None
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise SpecError(f"not valid YAML: {exc}", path=path) from None
    if node is None:
        raise SpecError("empty file: a spec is a YAML mapping with at least "
                        "operator, struct, category, introduced, fields, formula, support", path=path, line=1, column=1)
    builder = _Builder(path)
    try:
        data = builder.build(node, ())
    except LocatedError as exc:
        raise SpecError(exc.message, path=path, line=exc.line, column=exc.column) from None
    except RecursionError:
        raise SpecError("nesting too deep", path=path) from None
    return Document(path=path, data=data, positions=builder.positions)


@functools.cache
def schema() -> dict[str, Any]:
    """The JSON Schema of spec files (shipped as dmlconform/spec/schema.json)."""
    text = resources.files("dmlconform.spec").joinpath("schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@functools.cache
def _validator() -> Any:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema())
    return cls(schema())


def _enum_hint(value: Any, choices: list[Any]) -> str:
    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else f"; expected one of {', '.join(map(str, choices))}"


def _describe(error: Any) -> str:
    """One readable sentence for a jsonschema error, naming the value and the fix."""
    where = ".".join(str(p) for p in error.absolute_path) or "the top level"
    if error.validator == "enum":
        return f"{where}: {error.instance!r} is not allowed{_enum_hint(error.instance, error.validator_value)}"
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        allowed = ", ".join(sorted(error.schema.get("properties", {})))
        return f"{where}: unknown key {', '.join(map(repr, extra))} (allowed keys: {allowed})"
    if error.validator == "required":
        return f"{where}: {error.message}"
    if error.validator == "type":
        return f"{where}: {error.instance!r} has the wrong type; expected {error.validator_value}"
    return f"{where}: {error.message}"


def _problem_path(error: Any) -> JsonPath:
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        if extra:
            return path + (extra[0],)
    if error.validator == "propertyNames":
        return path
    return path


def schema_problems(doc: Document) -> Iterator[Problem]:
    """Every schema violation of ``doc``, in document order."""
    errors = []
    for error in _validator().iter_errors(doc.data):
        leaves = [error]
        if error.context:  # oneOf/anyOf: report the most specific branch errors
            leaves = sorted(error.context, key=lambda e: -len(e.absolute_path))[:1]
        errors.extend(leaves)
    for error in errors:
        yield Problem(_problem_path(error), _describe(error), error.validator, error.instance)


def _tuple(items: Any) -> tuple[Any, ...]:
    return tuple(items or ())


def _field(d: dict[str, Any]) -> m.Field:
    return m.Field(
        name=d["name"], c_type=d["c_type"], kind=m.FieldKind(d["kind"]),
        role=m.TensorRole(d["role"]) if "role" in d else None,
        optional=bool(d.get("optional", False)), count_field=d.get("count_field"),
        default=d.get("default"), default_exact=d.get("default_exact"),
    )


def _table(d: dict[str, Any]) -> m.SupportTable:
    cond = d.get("condition")
    rows = tuple(
        m.TensorSupport(
            tensor=r["tensor"], kind=r["kind"], dims=tuple(r["dims"]),
            dtypes=tuple(m.DataType.parse(t) for t in r["dtypes"]), dimensions=r.get("dimensions"),
        )
        for r in d["rows"]
    )
    condition = m.Condition(cond["field"], tuple(cond["values"])) if cond else None
    return m.SupportTable(level=m.FeatureLevel.parse(d["level"]), rows=rows, condition=condition)


def build_spec(data: dict[str, Any]) -> m.Spec:
    """Schema-valid data -> Spec.  Precondition: ``schema_problems`` found nothing."""
    formula = data["formula"]
    return m.Spec(
        operator=data["operator"], struct=data["struct"], category=data["category"],
        introduced=m.FeatureLevel.parse(data["introduced"]),
        introduced_also=tuple(m.FeatureLevel.parse(x) for x in data.get("introduced_also", ())),
        fields=tuple(_field(f) for f in data["fields"]),
        formula=m.Formula(m.FormulaSource(formula["source"]), formula.get("text"), formula.get("parsed")),
        support=tuple(_table(t) for t in data["support"]),
        in_place=tuple(m.InPlace(p["output"], p["input"]) for p in data.get("in_place", ())),
        constraints=tuple(
            m.Constraint(m.ConstraintKind(c["kind"]), _tuple(c["tensors"]), _tuple(c.get("properties")), c.get("doc_line"))
            for c in data.get("constraints", ())
        ),
        tolerance=tuple(m.Tolerance(m.DataType.parse(k), v["ulp"]) for k, v in data.get("tolerance", {}).items()),
        sources=tuple(m.SourcePage(s["path"], s["variant"], s.get("date")) for s in data.get("sources", ())),
        disagreements=tuple(
            m.Disagreement(d["fact"], d["chosen"], d["other"], d["other_path"]) for d in data.get("disagreements", ())
        ),
    )


def problems_error(doc: Document, problems: list[Problem]) -> SpecError:
    located = tuple(
        LocatedError(p.message, path=doc.path, line=doc.where(p.json_path)[0], column=doc.where(p.json_path)[1])
        for p in problems
    )
    first = located[0]
    return SpecError(first.message, path=doc.path, line=first.line, column=first.column, problems=located)


def loads_spec(text: str, *, path: str = "<string>") -> m.Spec:
    """Spec text -> Spec; raises SpecError listing every problem, one per line."""
    doc = parse_document(text, path=path)
    if not isinstance(doc.data, dict):
        raise SpecError(f"a spec must be a YAML mapping, not {type(doc.data).__name__}", path=path, line=1, column=1)
    problems = list(schema_problems(doc))
    if problems:
        raise problems_error(doc, problems)
    return build_spec(doc.data)


def read_text(path: Path) -> str:
    """A spec file's text; unreadable or non-UTF-8 files become SpecError."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except OSError as exc:
        raise SpecError(f"cannot read: {exc.strerror or exc}", path=path) from None


def load_spec(path: Path) -> m.Spec:
    return loads_spec(read_text(path), path=str(path))


def spec_files(paths: "list[Path] | tuple[Path, ...]") -> list[Path]:
    """Spec files named by ``paths`` (files, or folders searched for *.yaml), sorted."""
    found: set[Path] = set()
    for p in paths:
        if p.is_dir():
            found.update(q for q in p.rglob("*.yaml") if q.is_file())
        else:
            found.add(p)
    return sorted(found)
