"""The spec linter: mistakes in spec files, each placed at file:line:column.

DESIGN.md "The spec" and "Data flow" (``specs/*.yaml --lint--> findings``).
Each rule is a generator over ``(spec, document)`` that yields bare
``(json_path, message)`` pairs; the framework places each pair with
``Document.where`` and wraps it in a `Finding` (the jsonschema pattern of bare
errors located by the caller).  A file that is not valid YAML yields one
DML001 finding; schema problems yield DML002-DML004 and stop the model-based
rules for that file, since `load.build_spec` needs schema-valid data.
Nothing here writes; `lint_paths` is the only function that reads files.
"""

from __future__ import annotations

import difflib
import enum
import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dmlconform import userfiles
from dmlconform.catalog import load_spec
from dmlconform.errors import FormulaError, InputError, SpecError
from dmlconform.formula import parse
from dmlconform.formula.boundaries import overlaps
from dmlconform.formula.tree import FormulaTree, names, otherwise_branches
from dmlconform.lint import examples as lint_examples
from dmlconform.spec import load
from dmlconform.spec import model as m
from dmlconform.spec.files import is_overlay
from dmlconform.spec.load import Document, JsonPath

Located = tuple[JsonPath, str]
Check = Callable[[m.Spec, Document], Iterator[Located]]

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem at one place; printed ``path:line:column: CODE message``."""

    code: str
    path: str
    line: int
    column: int
    message: str
    severity: str

    @property
    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        """(path, line, column, code), then the rest so that the order is total."""
        return (self.path, self.line, self.column, self.code, self.message, self.severity)


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule's stable code, short name, one-line summary and default severity."""

    code: str
    name: str
    summary: str
    severity: str


# --- file and schema rules (DML0xx) -------------------------------------------------

YAML_SYNTAX = Rule("DML001", "yaml-syntax", "the file is not readable UTF-8 YAML (or is empty)", ERROR)
SCHEMA = Rule("DML002", "schema", "the data breaks the spec JSON Schema (`dmlconform schema`)", ERROR)
UNKNOWN_LEVEL = Rule("DML003", "unknown-feature-level", "a feature level that does not exist (misspelt, unquoted or not short form)", ERROR)
UNKNOWN_DTYPE = Rule("DML004", "unknown-data-type", "a tensor data type that does not exist (misspelt or not upper case)", ERROR)
FILE_NAME = Rule("DML005", "file-name", "the file is not named `<operator>.yaml`", ERROR)
DUPLICATE_OPERATOR = Rule("DML006", "duplicate-operator", "two spec files describe the same operator", ERROR)
DOC_EXAMPLE = Rule("DML131", "doc-example", "a worked example of the doc (transcribed in a reviewed overlay) disagrees with its own input", WARNING)


def _problem_kind(problem: load.Problem) -> str:
    """Which enum a schema ``enum`` problem is about: "level", "dtype" or ""."""
    if problem.validator != "enum":
        return ""
    p = problem.json_path
    if p == ("introduced",) or (len(p) == 2 and p[0] == "introduced_also"):
        return "level"
    if len(p) == 3 and p[0] == "support" and p[2] == "level":
        return "level"
    if len(p) == 6 and p[0] == "support" and p[2] == "rows" and p[4] == "dtypes":
        return "dtype"
    return "dtype" if p[:1] == ("tolerance",) and len(p) <= 2 else ""  # a tolerance key


_LOOKALIKES = str.maketrans({"O": "0", "o": "0", "l": "1", "I": "1", ".": "_", "-": "_", " ": "_"})


def _closest(value: str, choices: list[str]) -> str | None:
    """The most similar choice (ties: the first in ``choices``), or None below 0.5."""
    ratio = {c: difflib.SequenceMatcher(None, value, c).ratio() for c in choices}
    best = max(choices, key=lambda c: (ratio[c], -choices.index(c)), default=None)
    return best if best is not None and ratio[best] >= 0.5 else None


def _level_hint(value: Any) -> str:
    """The fix for an unknown feature level, as a sentence fragment."""
    shorts = [level.short for level in m.FeatureLevel]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for short in shorts:
            if str(value) in (short.replace("_", ""), short.replace("_", ".")):
                return f"write '{short}' (as written, YAML reads the number {value!r})"
    text = str(value)
    for candidate in (text, text.translate(_LOOKALIKES)):
        try:
            level = m.FeatureLevel.parse(candidate)
        except ValueError:
            continue
        return f"write the short form '{level.short}'" if candidate == text else f"did you mean {level.short}?"
    close = _closest(text, shorts)
    known = ", ".join(shorts)
    return f"did you mean {close}? (known: {known})" if close else f"use one of {known}"


def _dtype_hint(value: Any) -> str:
    """The fix for an unknown data type, as a sentence fragment."""
    try:
        return f"write {m.DataType.parse(str(value)).name}"
    except ValueError:
        pass
    names = [t.name for t in m.DATA_TYPE_ORDER]
    close = _closest(str(value).upper(), names)
    known = ", ".join(names)
    return f"did you mean {close}? (known: {known})" if close else f"use one of {known}"


def _dotted(path: JsonPath) -> str:
    return ".".join(str(p) for p in path) or "the top level"


def _schema_finding(doc: Document, problem: load.Problem) -> Finding:
    """A schema problem as a finding: DML003/DML004 for an unknown level or type."""
    kind, value = _problem_kind(problem), problem.value
    line, column = doc.where(problem.json_path, key=problem.at_key)
    if kind == "level":
        rule = UNKNOWN_LEVEL
        message = f"unknown feature level {value!r} at {_dotted(problem.json_path)}; {_level_hint(value)}"
    elif kind == "dtype":
        rule = UNKNOWN_DTYPE
        where = "as a tolerance key" if problem.json_path[0] == "tolerance" else f"at {_dotted(problem.json_path)}"
        message = f"unknown data type {value!r} {where}; {_dtype_hint(value)}"
    else:
        rule, message = SCHEMA, problem.message
    return Finding(rule.code, doc.path, line, column, message, rule.severity)


# --- helpers over the model ---------------------------------------------------------

ConditionKey = tuple[str, tuple[str, ...]] | None


def _condition_key(table: m.SupportTable) -> ConditionKey:
    c = table.condition
    return None if c is None else (c.field, tuple(sorted(c.values)))


def _condition_text(table: m.SupportTable) -> str:
    c = table.condition
    return "" if c is None else f" (where {c.field} in [{', '.join(c.values)}])"


def _table_groups(spec: m.Spec) -> list[list[tuple[int, m.SupportTable]]]:
    """Tables grouped by condition, each group oldest level first, with their index."""
    groups: dict[ConditionKey, list[tuple[int, m.SupportTable]]] = {}
    for i, table in enumerate(spec.support):
        groups.setdefault(_condition_key(table), []).append((i, table))
    ordered = sorted(groups.items(), key=lambda kv: repr(kv[0]))
    return [sorted(group, key=lambda it: (it[1].level, it[0])) for _, group in ordered]


def _rows(spec: m.Spec) -> Iterator[tuple[int, int, m.SupportTable, m.TensorSupport]]:
    for i, table in enumerate(spec.support):
        for j, row in enumerate(table.rows):
            yield i, j, table, row


def _names(dtypes: Iterable[m.DataType]) -> str:
    return ", ".join(t.name for t in m.sort_dtypes(tuple(dtypes))) or "none"


def _ints(values: Iterable[int]) -> str:
    return ", ".join(str(v) for v in sorted(set(values))) or "none"


# --- semantic rules (DML1xx) --------------------------------------------------------

def _table_before_introduced(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for i, table in enumerate(spec.support):
        if table.level < spec.introduced:
            yield ("support", i, "level"), (
                f"support table for {table.level.short} is older than introduced: {spec.introduced.short}; "
                f"fix the table's level or `introduced`")


def _dropped_support(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for group in _table_groups(spec):
        for (_, old), (i, new) in zip(group, group[1:]):
            if old.level == new.level:
                continue  # a duplicate table, reported by DML103
            for j, row in enumerate(new.rows):
                before = old.row(row.tensor)
                if before is None:
                    continue
                lost_types = [t for t in before.dtypes if t not in row.dtypes]
                lost_dims = [d for d in before.dims if d not in row.dims]
                where = f"{row.tensor} at {new.level.short}{_condition_text(new)}"
                if lost_types:
                    yield ("support", i, "rows", j, "dtypes"), (
                        f"{where} drops {_names(lost_types)}, which the {old.level.short} table allowed; "
                        f"a newer level keeps older support: add {_names(lost_types)} or fix the {old.level.short} row")
                if lost_dims:
                    yield ("support", i, "rows", j, "dims"), (
                        f"{where} drops dimension counts {_ints(lost_dims)}, which the {old.level.short} table allowed; "
                        f"add them or fix the {old.level.short} row")


def _duplicate_tables(spec: m.Spec, doc: Document) -> Iterator[Located]:
    seen: dict[tuple[m.FeatureLevel, ConditionKey], int] = {}
    for i, table in enumerate(spec.support):
        key = (table.level, _condition_key(table))
        if key in seen:
            yield ("support", i, "level"), (
                f"a second support table for {table.level.short}{_condition_text(table)} "
                f"(the first is support.{seen[key]}); merge them or fix the level")
        else:
            seen[key] = i


def _empty_rows(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for i, j, table, row in _rows(spec):
        for key, what in (("dtypes", "data types"), ("dims", "dimension counts")):
            if not getattr(row, key):
                yield ("support", i, "rows", j, key), (
                    f"{row.tensor} at {table.level.short}{_condition_text(table)} lists no {what}, so no "
                    f"configuration of it is supported and no case can be generated; fill in the doc's {what}")


def _repeated_tables(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for group in _table_groups(spec):
        for (_, old), (i, new) in zip(group, group[1:]):
            if old.level != new.level and old.rows == new.rows:
                yield ("support", i, "level"), (
                    f"the {new.level.short} table{_condition_text(new)} repeats the {old.level.short} table row for "
                    f"row; a table is in force until the next one, so this heading adds nothing: drop it, or add "
                    f"what {new.level.short} really changed")


def _duplicate_rows(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for i, table in enumerate(spec.support):
        seen: set[str] = set()
        for j, row in enumerate(table.rows):
            if row.tensor in seen:
                yield ("support", i, "rows", j, "tensor"), (
                    f"{row.tensor} has a second row in the {table.level.short} table; keep one row per tensor")
            seen.add(row.tensor)


def _field_names(spec: m.Spec) -> str:
    return ", ".join(f.name for f in spec.fields) or "none"


def _tensor_problem(spec: m.Spec, name: str, role: m.TensorRole | None = None) -> str | None:
    """Why ``name`` cannot be used where a tensor (of ``role``) is expected; None if it can."""
    f = spec.field(name)
    if f is None:
        close = difflib.get_close_matches(name, [t.name for t in spec.tensors], n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}?" if close else f"tensors: {', '.join(t.name for t in spec.tensors) or 'none'}"
        return f"{name!r} is not a field of {spec.struct}; {hint}"
    if not f.is_tensor:
        return f"{name!r} is a {f.c_type} attribute, not a tensor"
    if role is not None and f.role is not None and f.role != role:
        return f"{name!r} is an {f.role.value} tensor, not an {role.value}"
    return None


def _constraint_names(spec: m.Spec) -> Iterator[Located]:
    for k, c in enumerate(spec.constraints):
        for n, name in enumerate(c.tensors):
            if c.kind is m.ConstraintKind.SAME:
                problem = _tensor_problem(spec, name)
            else:  # an unstructured sentence may mention attributes too
                problem = None if spec.field(name) else f"{name!r} is not a field of {spec.struct}; fields: {_field_names(spec)}"
            if problem:
                yield ("constraints", k, "tensors", n), f"constraint names {problem}"


def _in_place_names(spec: m.Spec) -> Iterator[Located]:
    for k, p in enumerate(spec.in_place):
        for key, name, role in (("output", p.output, m.TensorRole.OUTPUT), ("input", p.input, m.TensorRole.INPUT)):
            problem = _tensor_problem(spec, name, role)
            if problem:
                yield ("in_place", k, key), f"in_place {key} {problem}"


def _table_names(spec: m.Spec) -> Iterator[Located]:
    for i, j, _, row in _rows(spec):
        problem = _tensor_problem(spec, row.tensor)
        if problem:
            yield ("support", i, "rows", j, "tensor"), f"support row names {problem}"
    for i, table in enumerate(spec.support):
        cond = table.condition
        f = spec.field(cond.field) if cond else None
        if cond is not None and (f is None or f.is_tensor):
            what = "a tensor" if f else "not a field"
            yield ("support", i, "condition", "field"), (
                f"table condition field {cond.field!r} is {what}; name an attribute of {spec.struct} ({_field_names(spec)})")


def _unknown_names(spec: m.Spec, doc: Document) -> Iterator[Located]:
    yield from _constraint_names(spec)
    yield from _in_place_names(spec)
    yield from _table_names(spec)


# --- formula identifiers --------------------------------------------------------------

#: Capitalised words the docs' formulas use as function, step or operator names
#: or for statistics computed from the input, never as struct fields (from the
#: DirectML docs' description code blocks).
FORMULA_WORDS: frozenset[str] = frozenset({
    "Add", "AvgPool", "AvgPoolGrad", "Broadcast", "Example", "For", "HardSigmoid", "MaxPool",
    "MaxPoolGrad", "Mean", "ReduceArgMax", "Resample", "ResampleGrad", "RoiAlign1", "ROIAlignGrad",
    "Sigmoid", "Slice", "SliceGrad", "Softmax", "Tanh", "Transposed", "Variance",
})

_IDENT = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*")
_COMMENT = re.compile(r"//[^\n]*")
_ONE_D = re.compile(r"\b\d+-D\b")
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*((?:\[[^\]\n]*\]\s*)*)(?:[-+*/^|&]?=)(?!=)", re.M)
_PARAMS = re.compile(r"^\s*[A-Za-z_]\w*\s*\(([^)\n]*)\)\s*=(?!=)", re.M)
_PROSE = re.compile(r"^\s*[A-Z][^=<>()\[\]\n]*:\s*$", re.M)
_ALL_CAPS = re.compile(r"^[A-Z][A-Z0-9_]+$")


def _bound_names(code: str) -> set[str]:
    """Names the formula itself defines: assigned names, the subscripts of an
    assignment's target and the parameters of ``f(...) =``."""
    bound: set[str] = set()
    for match in _ASSIGN.finditer(code):
        bound.add(match.group(1))
        bound.update(_IDENT.findall(match.group(2)))
    for match in _PARAMS.finditer(code):
        bound.update(_IDENT.findall(match.group(1)))
    return bound


def formula_identifiers(text: str) -> tuple[str, ...]:
    """Capitalised names a formula text uses as values it does not define itself.

    A conservative scan until the formula engine's parser replaces it: it skips
    `//` comments and every word in them, prose lines such as ``For 1-D
    InputTensor:``, calls (``Max(InputTensor)``), members (``.Sizes``,
    ``->DimensionCount``), ALL-CAPS constants, tensor properties,
    `FORMULA_WORDS` and names the text binds itself (see `_bound_names`).
    Sorted, without duplicates.
    """
    comment_words = set(_IDENT.findall(" ".join(_COMMENT.findall(text))))
    code = _PROSE.sub("", _ONE_D.sub("", _COMMENT.sub("", text)))
    skip = comment_words | _bound_names(code) | FORMULA_WORDS | set(m.TENSOR_PROPERTIES)
    found: set[str] = set()
    for match in _IDENT.finditer(code):
        word, before, after = match.group(), code[:match.start()].rstrip(), code[match.end():].lstrip()
        if not word[0].isupper() or word in skip or _ALL_CAPS.match(word):
            continue
        if before.endswith((".", "->")) or after.startswith("("):
            continue
        found.add(word)
    return tuple(sorted(found))


def is_example_diagram(text: str) -> bool:
    """Whether a formula text is a worked example (``input --> output``), not a formula."""
    return "-->" in text


def _names_field(spec: m.Spec, word: str) -> bool:
    """``word`` is a field, the doc's short form ``Input`` of ``InputTensor``, one
    element ``Scale`` of an array ``Scales``, or a coordinate ``InputTensorX``."""
    f = spec.field(word) or spec.field(word + "Tensor") or spec.field(word + "s")
    if f is not None:
        return f.name != word + "s" or f.kind is m.FieldKind.ARRAY
    tensor = spec.field(word[:-1])
    return tensor is not None and tensor.is_tensor and word[-1] in "XYZ"


def _formula_names(spec: m.Spec, doc: Document) -> Iterator[Located]:
    text = spec.formula.text
    if not text or is_example_diagram(text):
        return
    unknown = [w for w in formula_identifiers(text) if not _names_field(spec, w)]
    if not unknown:
        return
    names = sorted(f.name for f in spec.fields)
    shown = []
    for word in unknown:
        close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
        shown.append(f"{word} (did you mean {close[0]}?)" if close else word)
    yield ("formula", "text"), (
        f"formula uses {', '.join(shown)}, which {'is' if len(unknown) == 1 else 'are'} neither a tensor nor an "
        f"attribute of {spec.struct} (fields: {_field_names(spec)}); fix the formula or the fields")


def _formula_examples(spec: m.Spec, doc: Document) -> Iterator[Located]:
    if spec.formula.text and is_example_diagram(spec.formula.text):
        yield ("formula", "text"), (
            "formula text is a worked example (it has a --> arrow), not a formula; take the doc's formula "
            "or, where the doc has none, set source: none and drop the text")


def _parsed_tree(spec: m.Spec) -> FormulaTree | None:
    """The spec's parsed formula as a tree, or None (unparsed or unparsable)."""
    parsed = _parse_once(spec.formula.parsed) if spec.formula.parsed else None
    return None if isinstance(parsed, str) else parsed


@functools.lru_cache(maxsize=512)
def _parse_once(text: str) -> FormulaTree | str:
    """Three rules read the same formula: parse each text once (trees are
    frozen).  The tree, or where and why the text does not parse."""

    try:
        return parse(text)
    except FormulaError as exc:
        return f"line {exc.line}, column {exc.column}: {exc.message}"


def _formula_syntax(spec: m.Spec, doc: Document) -> Iterator[Located]:
    f = spec.formula
    problem = _parse_once(f.parsed) if f.parsed else None
    if isinstance(problem, str):
        yield ("formula", "parsed"), (f"formula.parsed does not parse ({problem}); "
                                      "regenerate it with `dmlconform extract`")
    elif f.text and f.parsed is None and (f.reason or "").startswith("does not parse"):
        yield ("formula", "text"), (f"the doc's formula {f.reason}; it is neither a formula the harness can read "
                                    "nor recognisable pseudocode: fix the doc's formula text")


def _formula_overlaps(spec: m.Spec, doc: Document) -> Iterator[Located]:
    tree = _parsed_tree(spec)
    if tree is None:
        return

    for o in overlaps(tree):
        if not o.same_value:
            yield ("formula", "parsed"), (f"piecewise {o.message()}: the result depends on the order the doc "
                                          "lists the branches in (implementations that test in another order "
                                          "differ); state which branch wins or make the conditions disjoint")


def _nan_ambiguity(spec: m.Spec, doc: Document) -> Iterator[Located]:
    tree = _parsed_tree(spec)
    if tree is None or spec.formula.nan_policy is not m.NanPolicy.PROPAGATE:
        return
    attributes = {f.name for f in spec.attributes}
    constant_otherwise = [b for b in otherwise_branches(tree) if not (names(b.value) - attributes)]
    if constant_otherwise:  # an `otherwise` value that does not carry the input's NaN along
        yield ("formula", "parsed"), (
            "on NaN input every comparison is false, so the formula taken literally gives its `otherwise` value, "
            "while nan_policy: propagate expects NaN; the doc does not say which: keep propagate (IEEE) or set "
            "nan_policy: formula, and say why")


def _primary_setting(spec: m.Spec, kind: m.AmbiguityKind) -> enum.Enum | None:
    """The setting the oracle's expected values take for ``kind``: the
    formula's own where the spec states one (docs/ambiguities.md)."""
    settings: dict[m.AmbiguityKind, enum.Enum] = {
        m.AmbiguityKind.NAN: spec.formula.nan_policy,
        m.AmbiguityKind.INTEGER_OVERFLOW: spec.formula.integer_overflow,
        m.AmbiguityKind.BRANCH_OVERLAP: m.BranchOrder.FIRST,
        m.AmbiguityKind.INTEGER_FLOAT_ATTRIBUTE: m.IntegerArithmetic.EXACT,
        m.AmbiguityKind.FLOAT_TO_INTEGER: m.FloatToInteger.AS_OVERFLOW,
        m.AmbiguityKind.DIVISION_BY_ZERO: m.DivisionByZero.QUOTIENT_ZERO,
        m.AmbiguityKind.INFINITE_DIVISOR: m.InfiniteDivisor.FORMULA,
        m.AmbiguityKind.IEEE_POW: m.IeeePow.FORMULA,
    }
    return settings.get(kind)


def _ambiguity_primary(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for i, a in enumerate(spec.ambiguities):
        wanted = _primary_setting(spec, a.kind)
        primary = a.reading(a.primary)
        if wanted is None or primary is None or primary.setting == wanted:
            continue
        key = m.SETTING_OF[a.kind][0]
        shown = primary.setting.value if primary.setting is not None else "nothing"
        yield ("ambiguities", i, "primary"), (
            f"ambiguity {a.id!r}: the primary reading {a.primary!r} sets {key}: {shown}, but the oracle's expected "
            f"values take {key}: {wanted.value}; make the reading with {key}: {wanted.value} primary, or change "
            f"the spec's setting")


# --- attribute, aliasing and type-set rules -------------------------------------------

#: Categories whose FLOAT attributes the docs give a typical default for.
#: (Not element_wise: no element-wise page gives a default for its FLOAT
#: attributes, clip's Min/Max and constant_pow's Exponent among them.)
DEFAULT_CATEGORIES: tuple[str, ...] = ("activation",)


def _missing_default(spec: m.Spec, doc: Document) -> Iterator[Located]:
    if spec.category not in DEFAULT_CATEGORIES:
        return
    for k, f in enumerate(spec.fields):
        if f.kind is m.FieldKind.SCALAR and f.c_type == "FLOAT" and f.default is None and f.typical is None:
            yield ("fields", k, "name"), (
                f"FLOAT attribute {f.name} has no typical default; case generation then has no "
                f"default value to test: add `default:` from the doc, if it gives one")


def _empty(dom: m.Domain) -> bool:
    """Whether no number lies within ``dom``'s numeric bounds."""
    if dom.min is None or dom.max is None:
        return False
    return dom.min > dom.max or (dom.min == dom.max and not (dom.min_inclusive and dom.max_inclusive))


def _outside_domain(spec: m.Spec, doc: Document) -> Iterator[Located]:
    """A field's default or typical value outside its own domain, or a
    domain no value fits (issue #22 item 4): the generator would have to
    test a value the doc forbids, or has none to test."""
    for k, f in enumerate(spec.fields):
        if isinstance(f.typical, float) and not math.isfinite(f.typical):
            yield ("fields", k, "typical"), (f"{f.name}: typical={f.typical!r} is not a finite number; give the "
                                             f"doc's value or leave it out")
        dom = f.domain
        if dom is None:
            continue
        bad = [(key, getattr(dom, key)) for key in ("min", "max")
               if isinstance(getattr(dom, key), float) and not math.isfinite(getattr(dom, key))]
        for key, value in bad:
            yield ("fields", k, "domain", key), (f"{f.name}: domain {key}={value!r} is not a finite number; "
                                                 f"give a finite bound or leave it out")
        if bad:
            continue
        said = f" (the doc: {dom.text!r}{', ' + dom.source if dom.source else ''})" if dom.text else ""
        if _empty(dom):
            yield ("fields", k, "domain"), (f"{f.name}: the domain {dom.render()} holds no value{said}; "
                                            f"fix min or max")
            continue
        for key in ("default", "typical"):
            value = getattr(f, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or dom.contains(value) \
                    or (key == "typical" and not math.isfinite(value)):
                continue
            yield ("fields", k, key), (f"{f.name}: {key}={value!r} lies outside its domain {dom.render()}{said}; "
                                       f"fix the {key} or the domain")


def _same_dtype_groups(spec: m.Spec) -> list[tuple[str, ...]]:
    return [c.tensors for c in spec.constraints
            if c.kind is m.ConstraintKind.SAME and "DataType" in c.properties]


def _in_place_dtypes(spec: m.Spec, doc: Document) -> Iterator[Located]:
    linked = _same_dtype_groups(spec)
    for p in spec.in_place:
        if any(p.output in g and p.input in g for g in linked):
            continue  # a same-DataType constraint covers the pair (DML108)
        for i, table in enumerate(spec.support):
            out_row, in_row = table.row(p.output), table.row(p.input)
            if out_row is None or in_row is None or set(out_row.dtypes) == set(in_row.dtypes):
                continue
            j = table.rows.index(out_row)
            yield ("support", i, "rows", j, "dtypes"), (
                f"{p.output} may alias {p.input} (in_place), but at {table.level.short} {p.output} allows "
                f"{_names(out_row.dtypes)} and {p.input} allows {_names(in_row.dtypes)}; aliasing needs one type: "
                f"fix the rows or the in_place claim")


def _same_dtype_sets(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for group in _same_dtype_groups(spec):
        for i, table in enumerate(spec.support):
            rows = [(table.rows.index(r), r) for r in (table.row(t) for t in group) if r is not None]
            if len(rows) < 2:
                continue
            _, first = rows[0]
            for j, row in rows[1:]:
                if set(row.dtypes) != set(first.dtypes):
                    yield ("support", i, "rows", j, "dtypes"), (
                        f"{row.tensor} and {first.tensor} must have the same DataType (constraint), but at "
                        f"{table.level.short}{_condition_text(table)} {row.tensor} allows {_names(row.dtypes)} "
                        f"and {first.tensor} allows {_names(first.dtypes)}; make the two rows list the same types")


def _tolerance_dtypes(spec: m.Spec, doc: Document) -> Iterator[Located]:
    allowed = {t for _, _, _, row in _rows(spec) for t in row.dtypes}
    for tol in spec.tolerance:
        if tol.dtype not in allowed:
            yield ("tolerance", tol.dtype.name), (
                f"tolerance for {tol.dtype.name}, which no support table allows ({_names(allowed)}); remove it")
        elif not tol.dtype.is_float and tol.ulp != 0:
            yield ("tolerance", tol.dtype.name, "ulp"), (
                f"tolerance for integer type {tol.dtype.name} is ulp: {tol.ulp}; integers compare exactly: use ulp: 0")


def _list_order(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for i, j, table, row in _rows(spec):
        if list(row.dims) != sorted(set(row.dims)):
            yield ("support", i, "rows", j, "dims"), (
                f"{row.tensor} dims {list(row.dims)} at {table.level.short} are not sorted and unique; "
                f"write {sorted(set(row.dims))}")
        for k, t in enumerate(row.dtypes):
            if t in row.dtypes[:k]:
                yield ("support", i, "rows", j, "dtypes", k), (
                    f"{row.tensor} lists {t.name} twice at {table.level.short}; remove the duplicate")


# --- doc-level and structural rules ----------------------------------------------------

def _introduced_also(spec: m.Spec, doc: Document) -> Iterator[Located]:
    if spec.introduced_also:
        also = ", ".join(level.short for level in spec.introduced_also)
        yield ("introduced_also",), (
            f"the doc also claims introduction at {also} (introduced: {spec.introduced.short}); "
            f"check the page's Availability sections and keep one level")


def _disagreements(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for k, d in enumerate(spec.disagreements):
        yield ("disagreements", k), (
            f"doc revisions disagree on {d.fact}: this spec has {d.chosen!r}, {d.other_path} has {d.other!r}; "
            f"confirm the chosen value")


def _count_fields(spec: m.Spec, doc: Document) -> Iterator[Located]:
    for k, f in enumerate(spec.fields):
        if f.count_field is None:
            continue
        target = spec.field(f.count_field)
        if target is None:
            yield ("fields", k, "count_field"), (
                f"{f.name}'s count_field {f.count_field!r} is not a field of {spec.struct}; fields: {_field_names(spec)}")
        elif target.kind is not m.FieldKind.SCALAR or target.c_type != "UINT":
            yield ("fields", k, "count_field"), (
                f"{f.name}'s count_field {f.count_field} is a {target.c_type} {target.kind.value}; "
                f"an element count is a UINT scalar")


def _kind_problem(f: m.Field, rows: list[tuple[m.SupportTable, m.TensorSupport]]) -> tuple[int, str] | None:
    """The first row (index into ``rows``) whose Kind contradicts ``f``, and why.

    Optionality may grow with the levels (an input becomes optional at 6_2), so
    an optional field needs one row that says so; a required one needs none."""
    role = f.role.value if f.role else ""
    array = f.kind is m.FieldKind.TENSOR_ARRAY
    for k, (_, row) in enumerate(rows):
        kind = row.kind.lower()
        if role and role not in kind:
            return k, f"the field is an {role}: fix the row's kind or the field's role"
        if array != kind.startswith("array of"):
            return k, ("the field is an array of tensors: fix the row's kind" if array else
                       "the field is a single tensor: make it `kind: tensor_array` with a count_field, or fix the row")
        if kind.startswith("optional") and not f.optional:
            return k, "the field is not optional: mark it `optional: true` (or fix the row)"
    if f.optional and not array and not any(r.kind.startswith("Optional") for _, r in rows):
        newest = max(range(len(rows)), key=lambda k: (rows[k][0].level, k))
        return newest, "the field is optional and no table says so: fix the rows or the field"
    return None


def _row_kinds(spec: m.Spec, doc: Document) -> Iterator[Located]:
    """At most one finding per tensor, at its first contradicting row."""
    for f in spec.tensors:
        placed = [(i, j) for i, j, _, row in _rows(spec) if row.tensor == f.name]
        rows = [(spec.support[i], spec.support[i].rows[j]) for i, j in placed]
        problem = _kind_problem(f, rows) if rows else None
        if problem is None:
            continue
        k, why = problem
        table, row = rows[k]
        i, j = placed[k]
        yield ("support", i, "rows", j, "kind"), (
            f"{row.tensor} is Kind {row.kind!r} at {table.level.short}{_condition_text(table)} "
            f"(one of its {len(rows)} rows), but {why}")


def _unsupported_tensors(spec: m.Spec, doc: Document) -> Iterator[Located]:
    if not spec.support:
        yield ("support",), f"{spec.operator} has no support table; add the doc's tensor-support tables"
        return
    covered = {row.tensor for _, _, _, row in _rows(spec)}
    for k, f in enumerate(spec.fields):
        if f.is_tensor and f.name not in covered:
            yield ("fields", k, "name"), (
                f"tensor {f.name} has no row in any support table, so its types and dimension counts are "
                f"unknown; add a row")


def _support_gaps(spec: m.Spec, doc: Document) -> Iterator[Located]:
    """Only the oldest table of all: a conditional table may start later, as when
    a level adds a new value of the condition's attribute."""
    if not spec.support:
        return
    i, oldest = min(enumerate(spec.support), key=lambda it: (it[1].level, it[0]))
    if oldest.level > spec.introduced:
        yield ("support", i, "level"), (
            f"no support table covers {spec.introduced.short} (introduced) up to {oldest.level.short}, the "
            f"oldest table: add the older table or fix `introduced`")


# --- the rule table and the framework ---------------------------------------------------

_CHECKS: tuple[tuple[Rule, Check], ...] = (
    (Rule("DML101", "table-before-introduced", "a support table for a level older than `introduced`", ERROR),
     _table_before_introduced),
    (Rule("DML102", "dropped-support", "a newer level's table drops a data type or dimension count an older table had", ERROR),
     _dropped_support),
    (Rule("DML103", "duplicate-table", "two support tables with the same level and condition", ERROR), _duplicate_tables),
    (Rule("DML104", "unknown-name", "a constraint, in_place, support row or condition names a field that is not there or is of the wrong sort", ERROR),
     _unknown_names),
    (Rule("DML105", "formula-name", "the formula uses a name that is neither a tensor nor an attribute", WARNING),
     _formula_names),
    (Rule("DML106", "missing-default", "a FLOAT attribute of an activation operator without a typical default", WARNING),
     _missing_default),
    (Rule("DML107", "in-place-types", "in-place aliasing between tensors whose data type sets differ", ERROR), _in_place_dtypes),
    (Rule("DML108", "same-type-sets", "tensors a `same` DataType constraint links list different data types", ERROR),
     _same_dtype_sets),
    (Rule("DML109", "tolerance", "a tolerance for a type no table allows, or a non-zero ULP tolerance for an integer type", ERROR),
     _tolerance_dtypes),
    (Rule("DML110", "list-order", "dims not sorted and unique, or a data type listed twice", ERROR), _list_order),
    (Rule("DML111", "introduced-also", "the doc claims more than one introduction level", WARNING), _introduced_also),
    (Rule("DML112", "doc-disagreement", "two doc revisions disagree on a fact", WARNING), _disagreements),
    (Rule("DML113", "count-field", "a count_field that is missing or not a UINT scalar", ERROR), _count_fields),
    (Rule("DML114", "row-kind", "a support row's Kind disagrees with its field's role, optionality or array-ness", ERROR),
     _row_kinds),
    (Rule("DML115", "unsupported-tensor", "a tensor field with no row in any support table, or no table at all", ERROR),
     _unsupported_tensors),
    (Rule("DML116", "duplicate-row", "a tensor with two rows in one support table", ERROR), _duplicate_rows),
    (Rule("DML117", "support-gap", "no support table covers the levels from `introduced` to the oldest table", WARNING),
     _support_gaps),
    (Rule("DML118", "formula-example", "the formula text is a worked example (input --> output), not a formula", WARNING),
     _formula_examples),
    (Rule("DML119", "empty-row", "a support row that lists no data types or no dimension counts", ERROR), _empty_rows),
    (Rule("DML120", "repeated-table", "a table identical to the previous level's table (same condition)", WARNING),
     _repeated_tables),
    (Rule("DML121", "formula-syntax", "the formula neither parses nor reads as recognisable pseudocode", WARNING),
     _formula_syntax),
    (Rule("DML122", "overlapping-branches", "piecewise branches that can both hold with different values", WARNING),
     _formula_overlaps),
    (Rule("DML123", "nan-ambiguity", "an `otherwise` branch independent of the input turns NaN into a number, but the spec propagates NaN",
          WARNING), _nan_ambiguity),
    (Rule("DML124", "default-outside-domain", "an attribute's default or typical value lies outside its domain, the domain is empty, or a bound or typical value is not finite",
          ERROR), _outside_domain),
    (Rule("DML125", "ambiguity-primary", "an ambiguity's primary reading is not the one the oracle's expected values take",
          ERROR), _ambiguity_primary),
)

#: Every rule, in code order: the table `lint --list` prints.
RULES: tuple[Rule, ...] = (YAML_SYNTAX, SCHEMA, UNKNOWN_LEVEL, UNKNOWN_DTYPE, FILE_NAME, DUPLICATE_OPERATOR) + tuple(
    rule for rule, _ in _CHECKS) + (DOC_EXAMPLE,)


def _finding(rule: Rule, doc: Document, json_path: JsonPath, message: str) -> Finding:
    """A finding at the value of ``json_path``, or at its key where the value
    starts on a later line (a block mapping or list under the key)."""
    line, column = doc.where(json_path)
    key_at = doc.key_positions.get(tuple(json_path))
    if key_at is not None and key_at[0] < line:
        line, column = key_at
    return Finding(rule.code, doc.path, line, column, message, rule.severity)


def _error_finding(error: SpecError, *, path: str) -> Finding:
    return Finding(YAML_SYNTAX.code, path, max(error.line, 1), max(error.column, 1), error.message, YAML_SYNTAX.severity)


def _semantic_findings(doc: Document) -> Iterator[Finding]:
    """Every model-based rule over schema-valid ``doc``."""
    try:
        spec = load.build_spec(doc.data)
    except (KeyError, TypeError, ValueError) as exc:  # schema-valid but not buildable: a schema gap
        yield _finding(SCHEMA, doc, (), f"cannot build the spec model: {exc}")
        return
    for rule, check in _CHECKS:
        for json_path, message in check(spec, doc):
            yield _finding(rule, doc, json_path, message)


def _document_findings(doc: Document) -> list[Finding]:
    problems = list(load.schema_problems(doc))
    if problems:
        return [_schema_finding(doc, problem) for problem in problems]
    return list(_semantic_findings(doc))


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(set(findings), key=lambda f: f.sort_key)


def _parse(text: str, *, path: str) -> Document | Finding:
    try:
        return load.parse_document(text, path=path)
    except SpecError as exc:
        return _error_finding(exc, path=path)


def lint_text(text: str, *, path: str) -> list[Finding]:
    """Every finding in one spec file's ``text``, sorted by (path, line, column, code).

    Never raises on bad input: unparsable text is a DML001 finding.
    """
    doc = _parse(text, path=path)
    if isinstance(doc, Finding):
        return [doc]
    return _sorted(_document_findings(doc))


def _operator(doc: Document) -> str | None:
    data = doc.data
    value = data.get("operator") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _file_name(doc: Document, path: Path) -> Iterator[Finding]:
    operator = _operator(doc)
    if operator is not None and path.name != f"{operator}.yaml":
        yield _finding(FILE_NAME, doc, ("operator",),
                       f"file name {path.name!r} does not match operator {operator}; rename it to {operator}.yaml")


def _duplicates(docs: list[Document]) -> Iterator[Finding]:
    by_operator: dict[str, list[Document]] = {}
    for doc in docs:
        operator = _operator(doc)
        if operator is not None:
            by_operator.setdefault(operator, []).append(doc)
    for operator, group in sorted(by_operator.items()):
        first = group[0]
        for doc in group[1:]:
            yield _finding(DUPLICATE_OPERATOR, doc, ("operator",),
                           f"operator {operator} is also specified in {first.path}; keep one file per operator")


def _selection(paths: list[Path]) -> tuple[list[Path], list[Finding]]:
    """The spec files to lint, and a DML001 finding for each path named that
    is not one (a FIFO, a folder named *.yaml, a dangling or outside link).
    Nothing to lint at all is an input error (exit 2): a lint that read no
    file must not pass."""
    found = userfiles.find_files(paths, ".yaml")
    if not found.files and found.refused:
        first = found.refused[0]
        raise SpecError(first.reason, path=first.path, problems=tuple(r.error() for r in found.refused))
    if not found.files:
        named = ", ".join(repr(str(p)) for p in paths)
        raise InputError(f"no spec file (*.yaml) in {named}: nothing to lint; name spec files or a folder "
                         "that holds them")
    refused = [Finding(YAML_SYNTAX.code, str(r.path), 1, 1, r.reason, YAML_SYNTAX.severity) for r in found.refused]
    return list(found.files), refused


def lint_paths(paths: list[Path]) -> list[Finding]:
    """Every finding in the spec files named by ``paths`` (files, or folders
    searched for *.yaml), plus the cross-file rules DML005 and DML006."""
    files, findings = _selection(paths)
    docs: list[Document] = []
    for path in files:
        try:
            doc = _parse(load.read_text(path), path=str(path))
        except SpecError as exc:
            doc = _error_finding(exc, path=str(path))
        if isinstance(doc, Finding):
            findings.append(doc)
            continue
        if is_overlay(path):
            findings.extend(_overlay_findings(doc, path))
            continue
        docs.append(doc)
        findings.extend(_document_findings(doc))
        findings.extend(_file_name(doc, path))
    findings.extend(_duplicates(docs))
    return _sorted(findings)


def _overlay_findings(doc: Document, path: Path) -> list[Finding]:
    """A reviewed overlay (docs/ambiguities.md) checked as `catalog.load_spec`
    reads it: its schema and ambiguities (DML002), then against its spec's
    file (`catalog.load_spec` merges it; a problem there is a DML002 finding at
    the overlay)."""
    problems = list(load.schema_problems(doc, validator=load.overlay_validator()))
    if problems:
        return [_schema_finding(doc, problem) for problem in problems]
    spec_path = path.parent.parent / path.name
    if not spec_path.is_file():
        return [_finding(SCHEMA, doc, (), f"overlay {path.name} has no spec {spec_path}: name the overlay after "
                                          "its spec file, in the reviewed folder beside it")]
    try:
        spec = load_spec(spec_path)
    except SpecError as exc:
        if exc.path != str(path):
            return []  # the spec's own problems are its findings
        return [Finding(SCHEMA.code, exc.path, exc.line, exc.column, exc.message, SCHEMA.severity)]
    return [_finding(DOC_EXAMPLE, doc, where, message) for where, message in lint_examples.findings(spec)]


def rule_for(code: str, rules: Iterable[Rule] = RULES) -> Rule | None:
    """The rule with ``code``, or None."""
    return next((r for r in rules if r.code == code), None)
