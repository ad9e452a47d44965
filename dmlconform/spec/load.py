"""Spec files in, `Spec` records out, with every problem located at file:line:col.

The YAML goes through PyYAML's safe reader, scanner, parser and composer, so
each node keeps its position; we build plain Python data ourselves from the node
tree (no ``yaml.load``, no custom tags, no anchors/aliases, no duplicate keys)
and keep a map from each JSON path to its (line, column).  The JSON Schema then
checks the data, and each schema error is placed with that map.  DESIGN.md
"The spec".

Plain scalars follow the YAML 1.2 core schema, not PyYAML's YAML 1.1 default:
a hand-written ``introduced: 2_0`` is the string ``"2_0"`` (1.1 reads the int
20), ``date: 2020-01-01`` a string (1.1: a timestamp), ``optional: yes`` a
string the schema rejects (1.1: true) and ``default: 1e-5`` a number (1.1: a
string).  `spec.store` quotes whatever either version could misread.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, NoReturn, TypeVar

import yaml

from dmlconform import limits, plan, userfiles
from dmlconform.cachedir import cache_dir
from dmlconform.errors import LocatedError, SpecError
from dmlconform.spec import model as m
from dmlconform.spec.files import REVIEWED

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed spec file: the data and where each value sits (1-based).

    ``positions`` maps a JSON path to its value's position, ``key_positions``
    a mapping member's path to the position of its key (an unknown key is
    reported at the key, a bad value at the value).
    """

    path: str
    data: Any
    positions: dict[JsonPath, tuple[int, int]]
    key_positions: dict[JsonPath, tuple[int, int]] = field(default_factory=dict)

    def where(self, json_path: JsonPath, *, key: bool = False) -> tuple[int, int]:
        """Line and column of the value at ``json_path`` (of its key with
        ``key=True``) or of its nearest parent."""
        p = tuple(json_path)
        if key and p in self.key_positions:
            return self.key_positions[p]
        while p not in self.positions and p:
            p = p[:-1]
        return self.positions.get(p, (1, 1))


@dataclass(frozen=True, slots=True)
class Problem:
    """A schema problem: what is wrong, and where in the document
    (``at_key``: at the key of ``json_path`` rather than its value)."""

    json_path: JsonPath
    message: str
    validator: str
    value: Any = None
    at_key: bool = False


#: Deepest nesting a spec may have (`limits.MAX_NESTING`); spec files need about 6 levels.
MAX_DEPTH = limits.MAX_NESTING

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"

#: YAML 1.2 core schema forms of plain scalars (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
#: Unlike YAML 1.1 (PyYAML's default), ``2_0`` and ``2020-01-01`` stay strings,
#: ``yes``/``on`` are not booleans and ``1e-5`` is a number.
_CORE_FORMS: tuple[tuple[str, str, str], ...] = (
    (_NULL, r"~|null|Null|NULL|", "~nN"),
    (_BOOL, r"true|True|TRUE|false|False|FALSE", "tTfF"),
    (_INT, r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
    (_FLOAT, r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
             r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)", "-+.0123456789"),
)
_CORE_RE = {tag: re.compile(rf"^(?:{pattern})$") for tag, pattern, _ in _CORE_FORMS}


_Resolver = TypeVar("_Resolver", bound=type[yaml.resolver.BaseResolver])


def with_core_resolvers(cls: _Resolver) -> _Resolver:
    """Adds the YAML 1.2 core forms to the implicit resolvers of ``cls`` (a
    Resolver, Loader or Dumper class); class decorator."""
    for tag, _, first in _CORE_FORMS:
        cls.add_implicit_resolver(tag, _CORE_RE[tag], list(first) + ([""] if tag == _NULL else []))
    return cls


@with_core_resolvers
class CoreResolver(yaml.resolver.BaseResolver):
    """Plain scalars resolved by the YAML 1.2 core schema alone.  `spec.store`
    quotes every string that this *or* YAML 1.1 would read as something else,
    so a written spec reads the same here and in any YAML 1.1 tool."""

    # Class-level, as PyYAML keeps its resolvers: this class's own table, filled once by the decorator.
    # typeshed declares it an instance variable, which PyYAML never sets: the ignore is for that.
    yaml_implicit_resolvers: ClassVar[dict[str, list[tuple[str, re.Pattern[str]]]]] = {}  # type: ignore[misc]


class _Guard:
    """Refuses anchors, aliases and deep nesting while composing (an alias would
    otherwise share one node many times: a billion-laughs bomb)."""

    path: str
    depth: int

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()  # type: ignore[attr-defined]  # a mixin: the loader's Parser has it
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _located(self.path, event, "YAML anchors and aliases (&name, *name) are not "
                                             "allowed here; write the value out")
        if self.depth >= MAX_DEPTH:
            raise _located(self.path, event, f"nesting deeper than {MAX_DEPTH} levels")
        self.depth += 1
        try:
            return super().compose_node(parent, index)  # type: ignore[misc]  # the loader's Composer
        finally:
            self.depth -= 1


class _Loader(_Guard, yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser,
              yaml.composer.Composer, CoreResolver):
    """Pure-Python events; words every syntax error with its position."""

    def __init__(self, text: str, *, path: str) -> None:
        yaml.reader.Reader.__init__(self, text)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        CoreResolver.__init__(self)
        self.path = path
        self.depth = 0


try:
    from yaml._yaml import CParser as _CParser  # libyaml, shipped in PyYAML's wheels
except ImportError:  # pragma: no cover - a PyYAML built without libyaml
    _CParser = None  # type: ignore[assignment,misc]  # the class or None: no annotation can say both


if _CParser is not None:
    class _FastLoader(_Guard, yaml.composer.Composer, CoreResolver, _CParser):
        """Events from libyaml (several times faster), composed and guarded in
        Python as above.  Only used while it raises nothing: on any YAML error
        the pure-Python loader reads the text again, for the same message."""

        def __init__(self, text: str, *, path: str) -> None:
            _CParser.__init__(self, text)
            yaml.composer.Composer.__init__(self)
            CoreResolver.__init__(self)
            self.path = path
            self.depth = 0


def _compose(text: str, path: str) -> yaml.Node | None:
    """The node tree of ``text``: libyaml when present and content, else Python."""
    if _CParser is not None:
        try:
            fast = _FastLoader(text, path=path)
            try:
                return fast.get_single_node()
            finally:
                fast.dispose()
        except (yaml.YAMLError, LocatedError, ValueError, RecursionError):
            pass  # reread below for the exact, located message
    loader = _Loader(text, path=path)  # the reader checks every character here
    try:
        return loader.get_single_node()
    except (ValueError, OverflowError):  # PyYAML's scanner: chr() of an escape beyond U+10FFFF
        mark = loader.get_mark()
        raise LocatedError("an escape in a double-quoted string names no Unicode character (beyond "
                           "\\U0010FFFF): write the character itself, or a valid escape",
                           path=path, line=mark.line + 1, column=mark.column + 1) from None
    finally:
        loader.dispose()


def _located(path: str, node: Any, message: str) -> LocatedError:
    """``message`` at the start of ``node`` (a node, an event or a YAML error)."""
    mark = getattr(node, "start_mark", None) or getattr(node, "problem_mark", None)
    if mark is None:
        return LocatedError(message, path=path)
    return LocatedError(message, path=path, line=mark.line + 1, column=mark.column + 1)


def _yaml_error(path: str, text: str, exc: yaml.YAMLError) -> SpecError:
    """One line for a YAML syntax error, at the problem; an unclosed bracket or
    quote also names where it opened."""
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        return SpecError(f"not valid YAML: special character {char} is not allowed; "
                         "write it as an escape in a double-quoted string",
                         path=path, line=line, column=column)
    if not isinstance(exc, yaml.MarkedYAMLError):
        return SpecError(f"not valid YAML: {exc}", path=path)
    message = exc.problem or "syntax error"
    if exc.context and exc.context.startswith("while "):
        if exc.context_mark:
            message += f" ({exc.context} at {exc.context_mark.line + 1}:{exc.context_mark.column + 1})"
    elif exc.context:
        message = f"{exc.context}, {message}"
    if "'\\t'" in message:
        message += "; indent with spaces, not tabs"
    mark = exc.problem_mark or exc.context_mark
    return SpecError(f"not valid YAML: {message}", path=path,
                     line=mark.line + 1 if mark else 0, column=mark.column + 1 if mark else 0)


def _int(text: str) -> int:
    sign, digits = (-1, text[1:]) if text[:1] == "-" else (1, text.lstrip("+"))
    if digits[:2] in ("0o", "0x"):
        return sign * int(digits[2:], 8 if digits[1] == "o" else 16)
    return sign * int(digits, 10)


def _float(text: str) -> float:
    if text.lower().lstrip("+-") in (".inf", ".nan"):
        return float(text.replace(".", ""))
    return float(text)


#: How each allowed scalar tag's text becomes a value.  An explicitly tagged
#: scalar (``!!int 12``) must have the same YAML 1.2 core form as a plain one.
_CONSTRUCT: dict[str, Callable[[str], Any]] = {
    _STR: str, _INT: _int, _FLOAT: _float,
    _BOOL: lambda text: text.lower() == "true", _NULL: lambda text: None,
}
_COLLECTION_TAGS: dict[type[yaml.Node], str] = {yaml.MappingNode: "tag:yaml.org,2002:map", yaml.SequenceNode: "tag:yaml.org,2002:seq"}


def _unsupported(path: str, node: yaml.Node) -> LocatedError:
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    return _located(path, node, f"unsupported YAML tag {tag!r}; use plain strings, "
                                "numbers, booleans, lists and mappings")


class _Builder:
    """Turns a composed node tree into JSON-like data plus position maps."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.positions: dict[JsonPath, tuple[int, int]] = {}
        self.key_positions: dict[JsonPath, tuple[int, int]] = {}

    def build(self, node: yaml.Node, at: JsonPath) -> Any:
        self.positions[at] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node)
        if node.tag != _COLLECTION_TAGS.get(type(node)):
            raise _unsupported(self.path, node)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, at)
        return [self.build(item, at + (i,)) for i, item in enumerate(node.value)]

    def _scalar(self, node: yaml.Node) -> Any:
        construct = _CONSTRUCT.get(node.tag)
        if construct is None:
            raise _unsupported(self.path, node)
        form = _CORE_RE.get(node.tag)
        if form is not None and not form.match(node.value):  # the float form includes ints
            raise _located(self.path, node, f"{_short(node.value)} is not a valid {node.tag.rsplit(':', 1)[-1]}")
        try:
            return construct(node.value)
        except ValueError:  # more digits than sys.get_int_max_str_digits()
            raise _located(self.path, node, f"{_short(node.value)} has too many digits "
                                            f"({len(node.value)})") from None

    def _mapping(self, node: yaml.MappingNode, at: JsonPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _located(self.path, key_node, "mapping keys must be plain strings, not lists or mappings")
            self._scalar(key_node)  # rejects tags such as !!python/name on keys
            key = key_node.value
            if key in out:
                first = self.key_positions[at + (key,)]
                raise _located(self.path, key_node, f"duplicate key {key!r} (first at {first[0]}:{first[1]})")
            self.key_positions[at + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = self.build(value_node, at + (key,))
        return out


def _is_empty(node: yaml.Node | None) -> bool:
    """No document, or one holding only an empty plain scalar (``---`` alone)."""
    return node is None or (isinstance(node, yaml.ScalarNode) and node.value == "" and not node.style)


def parse_document(text: str, *, path: str) -> Document:
    """YAML text -> Document.  Raises SpecError (never a YAML or Python error)."""
    try:
        node = _compose(text, path)
        if node is None or _is_empty(node):
            raise SpecError("empty file: a spec is a YAML mapping with at least "
                            "operator, struct, category, introduced, fields, formula, support",
                            path=path, line=1, column=1)
        builder = _Builder(path)
        data = builder.build(node, ())
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    except SpecError:
        raise
    except LocatedError as exc:
        raise SpecError(exc.message, path=path, line=exc.line, column=exc.column) from None
    return Document(path=path, data=data, positions=builder.positions, key_positions=builder.key_positions)


def _short(value: Any, limit: int = 40) -> str:
    """``repr(value)``, cut to about ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@functools.cache
def schema() -> dict[str, Any]:
    """The JSON Schema of spec files (shipped as dmlconform/spec/schema.json)."""
    return json.loads(_schema_bytes())


@functools.cache
def _validator() -> Any:
    import jsonschema  # noqa: PLC0415 - jsonschema (~0.1 s): a spec text that passed before (`_passed`) skips it

    cls = jsonschema.validators.validator_for(schema())
    return cls(schema())


def _enum_hint(value: Any, choices: list[Any]) -> str:
    """``; did you mean 'X'?`` for the closest choice, ties going to the longer
    common prefix, then to the later choice (``3_2`` -> ``3_1``); else the list."""
    text = str(value)

    def score(indexed: tuple[int, str]) -> tuple[float, int, int]:
        i, choice = indexed
        prefix = len(os.path.commonprefix([text, choice]))
        return difflib.SequenceMatcher(None, text, choice).ratio(), prefix, i

    best = max(enumerate(map(str, choices)), key=score, default=None)
    if best is not None and score(best)[0] >= 0.5:
        return f"; did you mean {best[1]!r}?"
    if len(choices) > 20:  # a long list (every operator) helps nobody: its size and where to look
        return f"; it is none of the {len(choices)} known names, and none is near it"
    return f"; expected one of {', '.join(map(str, choices))}"


#: JSON Schema type names as a YAML writer knows them.
_TYPE_NAMES = {
    "object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
    "number": "a number", "boolean": "a boolean", "null": "null",
}


def yaml_type(value: Any) -> str:
    """What ``value`` is, in YAML words: ``a mapping``, ``an integer``, ``null``..."""
    for kind, name in (
        (bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
        (dict, "a mapping"), (list, "a list"), (type(None), "null"),
    ):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _got(value: Any) -> str:
    kind = yaml_type(value)
    return kind if isinstance(value, (dict, list)) or value is None else f"{kind} {_short(value)}"


def _describe(error: Any) -> str:
    """One readable sentence for a jsonschema error, naming the value and the fix."""
    where = ".".join(str(p) for p in error.absolute_path) or "top level"
    if error.validator == "enum":
        what = "key " if "propertyNames" in error.relative_schema_path else ""
        hint = _enum_hint(error.instance, error.validator_value)
        return f"{where}: {what}{_short(error.instance)} is not allowed{hint}"
    if error.validator == "type":
        wanted: list[str] = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        expected = " or ".join(_TYPE_NAMES.get(t, t) for t in wanted)
        return f"{where}: expected {expected}, got {_got(error.instance)}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    if error.validator == "pattern":
        shown = str(error.validator_value).replace("(?!\\n)$", "$")  # the guard against a trailing newline
        return f"{where}: {_short(error.instance)} does not match the pattern {shown}"
    return f"{where}: {error.message}"


def _unknown_keys(doc: Document, error: Any) -> Iterator[Problem]:
    """One problem per unknown key, at the key."""
    at = tuple(error.absolute_path)
    where = ".".join(str(p) for p in at) or "top level"
    allowed = ", ".join(error.schema.get("properties", {}))
    for key in error.instance:
        if key not in error.schema.get("properties", {}):
            yield Problem(at + (key,), f"{where}: unknown key {_short(key)} (allowed keys: {allowed})",
                          error.validator, key, at_key=True)


def _problems(doc: Document, error: Any) -> Iterator[Problem]:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict) \
            and error.schema.get("additionalProperties") is False:
        yield from _unknown_keys(doc, error)
    elif "propertyNames" in error.relative_schema_path:
        at = tuple(error.absolute_path) + (error.instance,)
        yield Problem(at, _describe(error), error.validator, error.instance, at_key=True)
    else:
        yield Problem(tuple(error.absolute_path), _describe(error), error.validator, error.instance)


def schema_problems(doc: Document, *, validator: Any = None) -> Iterator[Problem]:
    """Every schema violation of ``doc``, in document order (``validator``:
    the spec schema's unless given, e.g. the overlay's), then, where the
    schema holds, what it cannot say of the ambiguities (`_ambiguity_problems`)."""
    problems: list[Problem] = []
    for error in (validator or _validator()).iter_errors(doc.data):
        leaves = [error]
        if error.context:  # oneOf/anyOf: report the most specific branch errors
            leaves = sorted(error.context, key=lambda e: -len(e.absolute_path))[:1]
        for leaf in leaves:
            problems.extend(_problems(doc, leaf))
    if not problems and isinstance(doc.data, dict):
        problems.extend(_ambiguity_problems(doc.data.get("ambiguities", ())))
    yield from sorted(problems, key=lambda p: doc.where(p.json_path, key=p.at_key))


def _ambiguity_problems(items: list[dict[str, Any]]) -> Iterator[Problem]:
    """What the schema cannot say of schema-valid ``ambiguities``: ids
    unique, ``primary`` one of the readings, each reading's setting the one
    its kind names (`model.SETTING_OF`; ``other`` has none) and no two
    readings alike."""
    seen: set[str] = set()
    for i, a in enumerate(items):
        at: JsonPath = ("ambiguities", i)
        if a["id"] in seen:
            yield Problem(at + ("id",), f"ambiguity id {a['id']!r} is used twice; give each ambiguity its own id",
                          "ambiguity", a["id"])
        seen.add(a["id"])
        ids = [r["id"] for r in a["readings"]]
        if a["primary"] not in ids:
            yield Problem(at + ("primary",), f"primary {a['primary']!r} is not one of the readings "
                          f"({', '.join(ids)}); name one of them", "ambiguity", a["primary"])
        yield from _reading_problems(a, at)


def _reading_problems(a: dict[str, Any], at: JsonPath) -> Iterator[Problem]:
    kind = m.AmbiguityKind(a["kind"])
    key = m.SETTING_OF[kind][0] if kind in m.SETTING_OF else None
    keys = {k for k, _ in m.SETTING_OF.values()}
    ids: set[str] = set()
    settings: set[str] = set()
    for j, r in enumerate(a["readings"]):
        where = at + ("readings", j)
        if r["id"] in ids:
            yield Problem(where + ("id",), f"reading id {r['id']!r} is used twice in ambiguity {a['id']!r}",
                          "ambiguity", r["id"])
        ids.add(r["id"])
        for other in sorted(keys & set(r) - {key}):
            fix = f"give {key}" if key else "kind other has no setting: drop it"
            yield Problem(where + (other,), f"a reading of kind {kind.value} sets {other}; {fix}", "ambiguity",
                          r[other], at_key=True)
        if key is not None and key in r:
            if r[key] in settings:
                yield Problem(where + (key,), f"two readings of {a['id']!r} set {key}: {r[key]}; "
                              "readings must differ", "ambiguity", r[key])
            settings.add(r[key])


def _tuple(items: Any) -> tuple[Any, ...]:
    return tuple(items or ())


def _field(d: dict[str, Any]) -> m.Field:
    return m.Field(
        name=d["name"], c_type=d["c_type"], kind=m.FieldKind(d["kind"]),
        role=m.TensorRole(d["role"]) if "role" in d else None,
        optional=bool(d.get("optional", False)), count_field=d.get("count_field"),
        default=d.get("default"), default_exact=d.get("default_exact"),
        domain=_domain(d["domain"]) if "domain" in d else None, typical=d.get("typical"),
    )


def _domain(d: dict[str, Any]) -> m.Domain:
    return m.Domain(
        min=d.get("min"), max=d.get("max"), min_inclusive=d.get("min_inclusive", True),
        max_inclusive=d.get("max_inclusive", True), min_symbol=d.get("min_symbol"),
        max_symbol=d.get("max_symbol"), text=d.get("text", ""), source=d.get("source"),
    )


def _table(d: dict[str, Any]) -> m.SupportTable:
    cond = d.get("condition")
    rows = tuple(
        m.TensorSupport(
            tensor=r["tensor"], kind=r["kind"], dims=tuple(int(n) for n in r["dims"]),
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
        operator_type=data.get("operator_type"),
        fields=tuple(_field(f) for f in data["fields"]),
        formula=m.Formula(
            m.FormulaSource(formula["source"]), formula.get("text"), formula.get("parsed"),
            evaluable=formula.get("evaluable", False), reason=formula.get("reason"),
            notes=tuple(formula.get("notes", ())), nan_policy=m.NanPolicy(formula.get("nan_policy", "propagate")),
            integer_overflow=m.Overflow(formula.get("integer_overflow", "wrap")),
            signed_zero=formula.get("signed_zero"),
        ),
        support=tuple(_table(t) for t in data["support"]),
        in_place=tuple(m.InPlace(p["output"], p["input"]) for p in data.get("in_place", ())),
        constraints=tuple(
            m.Constraint(m.ConstraintKind(c["kind"]), _tuple(c["tensors"]), _tuple(c.get("properties")),
                         None if c.get("doc_line") is None else int(c["doc_line"]))
            for c in data.get("constraints", ())
        ),
        tolerance=tuple(m.Tolerance(m.DataType.parse(k), int(v["ulp"])) for k, v in data.get("tolerance", {}).items()),
        sources=tuple(m.SourcePage(s["path"], s["variant"], s.get("date")) for s in data.get("sources", ())),
        disagreements=tuple(
            m.Disagreement(d["fact"], d["chosen"], d["other"], d["other_path"]) for d in data.get("disagreements", ())
        ),
        ambiguities=tuple(build_ambiguity(a) for a in data.get("ambiguities", ())),
    )


def build_ambiguity(d: dict[str, Any], *, reviewed: bool = False) -> m.Ambiguity:
    """Schema-valid ambiguity data -> `Ambiguity` (``reviewed``: from the overlay)."""
    kind = m.AmbiguityKind(d["kind"])
    setting = m.SETTING_OF.get(kind)
    readings = tuple(
        m.Reading(r["id"], r["says"], setting[1](r[setting[0]]) if setting and setting[0] in r else None)
        for r in d["readings"])
    tie = m.Tie(d["tie"]["group"], d["tie"].get("by", "")) if "tie" in d else None
    return m.Ambiguity(d["id"], kind, d["question"], d["source"], readings, d["primary"], reviewed, tie)


def problems_error(doc: Document, problems: list[Problem] | tuple[Problem, ...]) -> SpecError:
    """One SpecError holding every problem, each at its place; ``problems`` must not be empty."""
    located = tuple(
        LocatedError(p.message, path=doc.path, line=line, column=column)
        for p in problems
        for line, column in [doc.where(p.json_path, key=p.at_key)]
    )
    first = located[0]
    return SpecError(first.message, path=doc.path, line=first.line, column=first.column, problems=located)


def loads_spec(text: str, *, path: str = "<string>") -> m.Spec:
    """Spec text -> Spec; raises SpecError listing every problem, one per
    line.  A text that passed the schema before is neither parsed nor
    validated again (`_passed`): its data comes from the cache, and a run
    reads every spec on every start."""
    entry = _passed(text)
    data = _recall(entry)
    if data is None:
        doc = parse_document(text, path=path)
        if not isinstance(doc.data, dict):
            line, column = doc.where(())
            raise SpecError(f"a spec must be a YAML mapping, not {_got(doc.data)}", path=path, line=line,
                            column=column)
        problems = list(schema_problems(doc))
        if problems:
            raise problems_error(doc, problems)
        data = doc.data
        _remember(entry, data)
    return build_spec(data)


def _passed(text: str) -> Path | None:
    """The cache file (`cachedir`) that holds the data of this exact text,
    parsed by this exact code and found valid by this exact schema: named by
    a digest of all three (`_parser_key`), so any change of one misses it.
    Measured on the 176 committed specs (2 busy cores): parsing them takes
    0.45 s and validating them 0.7 s, reading these files 0.04 s (issue
    #31, item 6: validation alone was skipped before, parsing was 0.45 s of
    every run's start).  None where there is no cache folder to use."""
    try:
        # surrogatepass: a lone surrogate (which the parser refuses) gets a digest too, a string's own
        digest = hashlib.sha256(_parser_key() + b"\0" + text.encode("utf-8", "surrogatepass")).hexdigest()
        return cache_dir() / "parsed-specs" / f"{digest}.json"
    except (RuntimeError, OSError):  # no home folder to put a cache in; this module's source unreadable
        return None


def _recall(entry: Path | None) -> dict[str, Any] | None:
    """The data `_remember` kept in ``entry``; None where there is none or
    it cannot be read whole (a file cut short, another program's): then
    the text is parsed and validated again.  JSON, never pickle: a cache
    file is data, whoever wrote it."""
    if entry is None or not entry.is_file():  # none yet, or none we wrote (a FIFO there would block the read)
        return None
    try:
        data = json.loads(entry.read_bytes())
    except (OSError, ValueError):  # ValueError: not JSON, or not UTF-8
        return None
    return data if isinstance(data, dict) else None


def _remember(entry: Path | None, data: dict[str, Any]) -> None:
    """Keep the data of a text that passed in ``entry``, where the cache
    folder can be written (else nothing: the next load parses and
    validates again).  JSON holds the data exactly: string keys, and
    strings, whole numbers, floats (NaN and infinities too), booleans,
    null and lists as values, all `_Builder` makes.  Written to a temp file
    then renamed, so a reader finds the whole file or none; not synced (an
    fsync each took 0.8 s for the 176 specs here): one lost in a crash is
    parsed again."""
    if entry is None:
        return
    tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, entry)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return
    _pruned(entry.parent)


@functools.cache
def _pruned(folder: Path) -> None:
    """Bound the cache: once per process that writes to it, the files of
    ``folder`` beyond the `plan.CACHED_SPECS` newest are removed: each version
    of the parser and each text edited or made up (the tests make many)
    leaves its own, and a development machine's grew to 25,134 files, 105
    MB, in two days.  A text whose file went is parsed again on its next
    load, no more."""
    with contextlib.suppress(OSError):
        found = []
        with os.scandir(folder) as entries:
            for e in entries:
                with contextlib.suppress(OSError):
                    if e.name.endswith(".json") and e.is_file(follow_symlinks=False):
                        found.append((e.stat(follow_symlinks=False).st_mtime_ns, e.path))
        for _, path in sorted(found, reverse=True)[plan.CACHED_SPECS:]:
            with contextlib.suppress(OSError):
                os.unlink(path)


@functools.cache
def _parser_key() -> bytes:
    """What a text's cached data depends on besides the text: the schema
    that passed it, this module (the parser that made the data) and
    PyYAML's version (its scanner)."""
    return b"\0".join((_schema_bytes(), Path(__file__).read_bytes(), yaml.__version__.encode()))


@functools.cache
def _schema_bytes() -> bytes:
    return resources.files("dmlconform.spec").joinpath("schema.json").read_bytes()


def read_text(path: Path, *, limit: limits.FileLimit = limits.SPEC) -> str:
    """A spec file's text (``limit``: of another YAML file we read, such as a
    baseline).  A file that is not a regular file, is over ``limit``, cannot
    be read or is not UTF-8 becomes a SpecError (at the bad byte).

    Line ends are left as they are: the YAML reader treats CR LF as one break."""
    try:
        return userfiles.read_text(path, limit)
    except LocatedError as exc:
        raise SpecError(exc.message, path=path, line=exc.line, column=exc.column) from None


def read_spec(path: Path) -> tuple[m.Spec, Document | None]:
    """The spec in ``path``, with the reviewed ambiguities of its overlay
    (``reviewed/<file name>`` beside it, where there is one) merged in, and
    that overlay (None where there is none), whose ``semantics`` the
    families read (`catalog.load_spec` attaches them)."""
    spec = loads_spec(read_text(path), path=str(path))
    overlay = overlay_path(path)
    if not overlay.is_file():
        return spec, None
    doc = read_overlay(overlay, operator=spec.operator)
    return merge_overlay(spec, tuple(build_ambiguity(a, reviewed=True) for a in doc.data["ambiguities"])), doc


def corrected(spec: m.Spec, doc: Document) -> m.Spec:
    """``spec`` with the overlay's ``corrections``: where the doc's own text
    contradicts itself or leaves a table's column empty, the reviewer's
    reading (a reviewed ambiguity, named by ``ambiguity``, whose primary
    reading the correction is) replaces the extracted fact; the extracted
    spec keeps the doc as printed, and lint still reports it there
    (`catalog.load_spec` applies them; `read_spec` gives the spec as printed,
    which `extract --check` compares with the pages).

    * ``empty_dtypes``: the data types of every support row whose column is
      empty;
    * ``drop_same``: the ``same`` constraints over exactly these properties.

    A correction that corrects nothing (the doc was fixed) or names no
    ambiguity of the spec is a SpecError at its place: delete it."""
    ambiguities = {a.id for a in spec.ambiguities}
    for i, fix in enumerate(doc.data.get("corrections", [])):
        where = ("corrections", i)
        if fix["ambiguity"] not in ambiguities:
            _correction_error(doc, (*where, "ambiguity"), f"corrections names ambiguity {fix['ambiguity']!r}, which "
                              f"the spec and overlay do not have: add it to ambiguities or name one of "
                              f"{', '.join(sorted(ambiguities))}")
        if "empty_dtypes" in fix:
            dtypes = tuple(m.DataType[t] for t in fix["empty_dtypes"])
            tables = tuple(replace(t, rows=tuple(replace(r, dtypes=dtypes) if not r.dtypes else r for r in t.rows))
                           for t in spec.support)
            if tables == spec.support:
                _correction_error(doc, (*where, "empty_dtypes"), "empty_dtypes corrects nothing: no support row "
                                  "has an empty data-type column; delete this correction")
            spec = replace(spec, support=tables)
        if "drop_same" in fix:
            props = tuple(fix["drop_same"])
            kept = tuple(c for c in spec.constraints
                         if not (c.kind is m.ConstraintKind.SAME and c.properties == props))
            if kept == spec.constraints:
                _correction_error(doc, (*where, "drop_same"), f"drop_same corrects nothing: no same constraint over "
                                  f"{list(props)}; delete this correction")
            spec = replace(spec, constraints=kept)
    return spec


def _correction_error(doc: Document, where: tuple[str | int, ...], message: str) -> NoReturn:
    line, column = doc.where(where)
    raise SpecError(message, path=doc.path, line=line, column=column)


def overlay_path(spec_path: Path) -> Path:
    """Where the reviewed overlay of the spec in ``spec_path`` lives."""
    return spec_path.parent / REVIEWED / spec_path.name


def read_overlay(path: Path, *, operator: str) -> Document:
    """The overlay ``path`` of ``operator``'s spec, parsed once and checked:
    a mapping of ``operator``, ``ambiguities`` (the spec schema's items) and
    ``semantics`` (`spec.reviewed` checks its content).  Every problem is a
    SpecError at its place in the overlay."""
    try:
        doc = parse_document(read_text(path), path=str(path))
    except SpecError as exc:
        if not exc.message.startswith("empty file"):
            raise
        raise SpecError("empty file: an overlay is a YAML mapping of operator and ambiguities (docs/ambiguities.md); "
                        "fill it in or delete it", path=str(path), line=1, column=1) from None
    if not isinstance(doc.data, dict):
        line, column = doc.where(())
        raise SpecError(f"an overlay must be a YAML mapping of operator and ambiguities, not {_got(doc.data)}",
                        path=str(path), line=line, column=column)
    problems = list(schema_problems(doc, validator=overlay_validator()))
    if problems:
        raise problems_error(doc, problems)
    if doc.data["operator"] != operator:
        line, column = doc.where(("operator",))
        raise SpecError(f"overlay of {operator} names operator {doc.data['operator']}; an overlay has the name of "
                        f"its spec file: write operator: {operator}", path=str(path), line=line, column=column)
    return doc


def merge_overlay(spec: m.Spec, reviewed: tuple[m.Ambiguity, ...]) -> m.Spec:
    """``spec`` with ``reviewed`` ambiguities: one with the id of a derived
    one replaces it (the reviewer's word wins), the others follow."""
    mine = {a.id: a for a in reviewed}
    kept = tuple(mine.pop(a.id, a) for a in spec.ambiguities)
    return replace(spec, ambiguities=kept + tuple(a for a in reviewed if a.id in mine))


#: The overlay's ``corrections`` (`corrected`).
_CORRECTIONS = {"type": "array", "maxItems": 8, "items": {
    "type": "object", "additionalProperties": False, "required": ["ambiguity"], "minProperties": 2,
    "properties": {"ambiguity": {"type": "string"},
                   "empty_dtypes": {"type": "array", "minItems": 1, "uniqueItems": True,
                                    "items": {"$ref": "#/$defs/dtype"}},
                   "drop_same": {"type": "array", "minItems": 1, "uniqueItems": True,
                                 "items": {"enum": ["DataType", "DimensionCount", "Sizes"]}}}}}


@functools.cache
def overlay_validator() -> Any:
    """The overlay's schema: ``operator`` and ``ambiguities`` of the spec schema, and
    ``semantics`` (a mapping here; `spec.reviewed` checks what is in it)."""
    import jsonschema  # noqa: PLC0415 - see _validator

    full = schema()
    overlay = {key: full[key] for key in ("$schema", "$defs")}
    overlay.update(type="object", additionalProperties=False, required=["operator", "ambiguities"],
                   properties={**{k: full["properties"][k] for k in ("operator", "ambiguities")},
                               "semantics": {"type": "object"},  # `spec.reviewed` checks it
                               "corrections": _CORRECTIONS})
    return jsonschema.validators.validator_for(overlay)(overlay)
