"""What a newer feature level, or a newer revision of the specs, adds or removes.

DESIGN.md "Who uses it": spec writers diff the tensor-support tables between
feature levels ("what does FL 6_2 add over 5_0?") and between two revisions of
the docs.  "The spec" gives the rule every function here follows: a support
table applies from its level up to the next newer table with the same
``condition``, and an operator does not exist before ``introduced``.

Pure functions from `Spec` records to frozen diff records; rendering lives in
`diff_render.py`, reading spec trees (folders, git revisions) in
`commands/diff_commands.py`.  Every result is in a canonical order: operators
by name, conditions by field and values, tensors in table order, dimension
counts ascending, data types in `DATA_TYPE_ORDER`.
"""

from __future__ import annotations

import difflib
import enum
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dmlconform.spec.model import (
    Condition,
    Constraint,
    DataType,
    FeatureLevel,
    Field,
    Spec,
    SupportTable,
    TensorSupport,
    sort_dtypes,
)

# --------------------------------------------------------------------------- text helpers


def dims_text(dims: Iterable[int]) -> str:
    """``(1, 2, 3, 6, 7, 8)`` -> ``"1-3, 6-8"``: runs of consecutive counts as ranges."""
    return ", ".join(_run_text(run) for run in _runs(sorted(set(dims))))


def _runs(values: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return runs


def _run_text(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"


def dtypes_text(dtypes: Iterable[DataType]) -> str:
    """Data type names in canonical order, comma separated."""
    return ", ".join(t.name for t in sort_dtypes(tuple(dtypes)))


def condition_text(condition: Condition | None) -> str:
    """``Function: ARGMIN, ARGMAX``; empty for an unconditional table."""
    return f"{condition.field}: {', '.join(condition.values)}" if condition else ""


def _condition_key(condition: Condition | None) -> tuple[str, ...]:
    return () if condition is None else (condition.field, *condition.values)


# --------------------------------------------------------------------------- support at a level


@dataclass(frozen=True, slots=True)
class TensorAt:
    """What one tensor supports under one condition, in the table in force at a
    level; ``kind`` is the table's Kind column (``Input``, ``Optional input``...)."""

    condition: Condition | None
    tensor: str
    dims: tuple[int, ...]
    dtypes: tuple[DataType, ...]
    kind: str = ""

    @property
    def optional(self) -> bool:
        return self.kind.lower().startswith("optional")


@dataclass(frozen=True, slots=True)
class TensorChange:
    """How one tensor's support differs between two tables (before -> after).

    ``old_kind``/``new_kind`` are set only when the tensor is on both sides and
    its Kind changed.  A tensor that becomes optional gains support; one that
    stops being optional loses it.
    """

    condition: Condition | None
    tensor: str
    added_dims: tuple[int, ...] = ()
    removed_dims: tuple[int, ...] = ()
    added_dtypes: tuple[DataType, ...] = ()
    removed_dtypes: tuple[DataType, ...] = ()
    old_kind: str = ""
    new_kind: str = ""

    @property
    def became_optional(self) -> bool:
        return _is_optional(self.new_kind) and not _is_optional(self.old_kind)

    @property
    def became_required(self) -> bool:
        return _is_optional(self.old_kind) and not _is_optional(self.new_kind)

    @property
    def has_additions(self) -> bool:
        return bool(self.added_dims or self.added_dtypes or self.became_optional)

    @property
    def has_removals(self) -> bool:
        return bool(self.removed_dims or self.removed_dtypes or self.became_required)

    @property
    def is_empty(self) -> bool:
        return not (self.added_dims or self.removed_dims or self.added_dtypes or self.removed_dtypes
                    or self.old_kind != self.new_kind)


def _is_optional(kind: str) -> bool:
    return kind.lower().startswith("optional")


def conditions(spec: Spec) -> tuple[Condition | None, ...]:
    """The distinct table conditions of ``spec``, unconditional first."""
    return tuple(sorted({t.condition for t in spec.support}, key=_condition_key))


def _rows_at(table: SupportTable | None, condition: Condition | None) -> tuple[TensorAt, ...]:
    if table is None:
        return ()
    return tuple(TensorAt(condition, r.tensor, tuple(sorted(set(r.dims))), sort_dtypes(r.dtypes), r.kind)
                 for r in table.rows)


def support_at(spec: Spec, level: FeatureLevel, *, condition: Condition | None = None,
               all_conditions: bool = True) -> tuple[TensorAt, ...]:
    """Every tensor's support in the tables in force at ``level`` (nothing before
    ``introduced``); with ``all_conditions=False`` only the tables under ``condition``."""
    if level < spec.introduced:
        return ()
    wanted = conditions(spec) if all_conditions else (condition,)
    return tuple(row for c in wanted for row in _rows_at(spec.table_at(level, condition=c), c))


def compare_support(before: tuple[TensorAt, ...], after: tuple[TensorAt, ...]) -> tuple[TensorChange, ...]:
    """One TensorChange per tensor whose support differs, in ``after``'s order
    and then the tensors only ``before`` has.  A tensor missing on one side
    counts as supporting nothing there."""
    old = {(r.condition, r.tensor): r for r in before}
    new = {(r.condition, r.tensor): r for r in after}
    keys = list(dict.fromkeys([*new, *old]))
    changes = (_tensor_change(key, old.get(key), new.get(key)) for key in keys)
    return tuple(c for c in changes if not c.is_empty)


def _tensor_change(key: tuple[Condition | None, str], old: TensorAt | None, new: TensorAt | None) -> TensorChange:
    old_dims, new_dims = set(old.dims if old else ()), set(new.dims if new else ())
    old_types, new_types = set(old.dtypes if old else ()), set(new.dtypes if new else ())
    kinds = (old.kind, new.kind) if old and new and old.kind != new.kind else ("", "")
    return TensorChange(
        condition=key[0], tensor=key[1],
        added_dims=tuple(sorted(new_dims - old_dims)), removed_dims=tuple(sorted(old_dims - new_dims)),
        added_dtypes=sort_dtypes(new_types - old_types), removed_dtypes=sort_dtypes(old_types - new_types),
        old_kind=kinds[0], new_kind=kinds[1],
    )


# --------------------------------------------------------------------------- level diff


@dataclass(frozen=True, slots=True)
class OperatorLevelDiff:
    """One operator's support changes between two levels; ``is_new``: it was
    introduced after the older level (everything it supports is added)."""

    operator: str
    is_new: bool
    tensors: tuple[TensorChange, ...]

    @property
    def has_removals(self) -> bool:
        return any(t.has_removals for t in self.tensors)


@dataclass(frozen=True, slots=True)
class LevelDiff:
    """What feature level ``newer`` adds over ``older`` (``older`` < ``newer``), per operator."""

    older: FeatureLevel
    newer: FeatureLevel
    operators: tuple[OperatorLevelDiff, ...]

    @property
    def has_removals(self) -> bool:
        return any(o.has_removals for o in self.operators)


def operator_level_diff(spec: Spec, old: FeatureLevel, new: FeatureLevel) -> OperatorLevelDiff | None:
    """``spec``'s changes from ``old`` to ``new``; None where nothing changed."""
    tensors = compare_support(support_at(spec, old), support_at(spec, new))
    is_new = old < spec.introduced <= new
    if not tensors and not is_new:
        return None
    return OperatorLevelDiff(spec.operator, is_new, tensors)


def level_diff(specs: Iterable[Spec], old: FeatureLevel, new: FeatureLevel) -> LevelDiff:
    """Every operator's changes from ``old`` to ``new``, by operator name.
    Precondition: ``old < new`` (the command checks it and says so)."""
    if not old < new:
        raise ValueError(f"old={old} must be older than new={new}")
    diffs = (operator_level_diff(s, old, new) for s in sorted(specs, key=lambda s: s.operator))
    return LevelDiff(old, new, tuple(d for d in diffs if d is not None))


@dataclass(frozen=True, slots=True)
class Changelog:
    """The level diffs between each two consecutive feature levels that change something, oldest first."""

    steps: tuple[LevelDiff, ...]

    @property
    def has_removals(self) -> bool:
        return any(step.has_removals for step in self.steps)


def changelog(specs: Iterable[Spec]) -> Changelog:
    """Every level's additions over the level before it, and every shrink, even
    one a later level undoes (which a diff of the two ends alone would hide)."""
    specs = tuple(specs)
    levels = list(FeatureLevel)
    steps = (level_diff(specs, a, b) for a, b in zip(levels, levels[1:], strict=False))
    return Changelog(tuple(step for step in steps if step.operators))


# --------------------------------------------------------------------------- one operator's history


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """The support in force from ``level`` under ``condition``, and how it
    differs from the previous row with the same condition (none for the first)."""

    level: FeatureLevel
    condition: Condition | None
    tensors: tuple[TensorAt, ...]
    changes: tuple[TensorChange, ...]


@dataclass(frozen=True, slots=True)
class OperatorHistory:
    """One operator's support over all levels: a row per level at which a
    table starts, grouped by condition; ``tensor_names`` are the columns."""

    operator: str
    introduced: FeatureLevel
    tensor_names: tuple[str, ...]
    rows: tuple[HistoryRow, ...]

    @property
    def has_removals(self) -> bool:
        return any(c.has_removals for row in self.rows for c in row.changes)


def history(spec: Spec) -> OperatorHistory:
    """``spec``'s support level by level (a table older than ``introduced``
    starts at ``introduced``)."""
    rows: list[HistoryRow] = []
    for condition in conditions(spec):
        levels = sorted({max(t.level, spec.introduced) for t in spec.support if t.condition == condition})
        previous: tuple[TensorAt, ...] | None = None
        for level in levels:
            now = support_at(spec, level, condition=condition, all_conditions=False)
            changes = compare_support(previous, now) if previous is not None else ()
            rows.append(HistoryRow(level, condition, now, changes))
            previous = now
    names = dict.fromkeys(t.tensor for row in rows for t in row.tensors)
    return OperatorHistory(spec.operator, spec.introduced, tuple(names), tuple(rows))


# --------------------------------------------------------------------------- operators x levels matrix


class Step(enum.Enum):
    """What happens to an operator's support at one feature level."""

    ABSENT = "absent"          # not introduced yet
    INTRODUCED = "introduced"
    SAME = "same"              # available, nothing changed
    GREW = "grew"
    SHRANK = "shrank"
    CHANGED = "changed"        # grew and shrank, or a tensor's kind changed otherwise


@dataclass(frozen=True, slots=True)
class MatrixCell:
    """``changes``: against the level before (for INTRODUCED: everything it supports, as added)."""

    level: FeatureLevel
    step: Step
    changes: tuple[TensorChange, ...] = ()


@dataclass(frozen=True, slots=True)
class MatrixRow:
    """One operator: a cell per feature level, oldest first."""

    operator: str
    introduced: FeatureLevel
    cells: tuple[MatrixCell, ...]


def _step(changes: tuple[TensorChange, ...]) -> Step:
    grew = any(c.has_additions for c in changes)
    shrank = any(c.has_removals for c in changes)
    if changes and not grew and not shrank:
        return Step.CHANGED
    return {(False, False): Step.SAME, (True, False): Step.GREW,
            (False, True): Step.SHRANK, (True, True): Step.CHANGED}[(grew, shrank)]


def matrix_row(spec: Spec) -> MatrixRow:
    cells = []
    previous: FeatureLevel | None = None
    for level in FeatureLevel:
        if level < spec.introduced:
            cells.append(MatrixCell(level, Step.ABSENT))
        elif level == spec.introduced or previous is None:
            cells.append(MatrixCell(level, Step.INTRODUCED, compare_support((), support_at(spec, level))))
        else:
            changes = compare_support(support_at(spec, previous), support_at(spec, level))
            cells.append(MatrixCell(level, _step(changes), changes))
        previous = level
    return MatrixRow(spec.operator, spec.introduced, tuple(cells))


def support_matrix(specs: Iterable[Spec]) -> tuple[MatrixRow, ...]:
    """Operators (by name) x feature levels: where each was introduced and when its support changed."""
    return tuple(matrix_row(s) for s in sorted(specs, key=lambda s: s.operator))


# --------------------------------------------------------------------------- two spec trees


class Aspect(enum.Enum):
    """Which part of a spec a change is in; the order is the report order."""

    OPERATOR = "operator"
    IDENTITY = "identity"
    FIELD = "field"
    DEFAULT = "default"
    FORMULA = "formula"
    IN_PLACE = "in_place"
    CONSTRAINT = "constraint"
    SUPPORT = "support"
    TOLERANCE = "tolerance"


class ChangeKind(enum.Enum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    RENAMED = "renamed"
    RETYPED = "retyped"
    REORDERED = "reordered"


@dataclass(frozen=True, slots=True)
class SpecChange:
    """One difference between two revisions of an operator's spec.

    ``subject`` names what changed (a field, ``4_1 InputTensor dtypes``...),
    ``old``/``new`` render the two values ("" where one side has none).  Every
    REMOVED change is a removal, which makes ``diff`` exit 1.
    """

    operator: str
    aspect: Aspect
    kind: ChangeKind
    subject: str
    old: str = ""
    new: str = ""

    @property
    def is_removal(self) -> bool:
        return self.kind is ChangeKind.REMOVED


@dataclass(frozen=True, slots=True)
class TreeDiff:
    """Differences between two spec trees, labelled as the user named them."""

    old_name: str
    new_name: str
    changes: tuple[SpecChange, ...]

    @property
    def has_removals(self) -> bool:
        return any(c.is_removal for c in self.changes)


#: A change before the operator name is filled in: (aspect, kind, subject, old, new).
_Bare = tuple[Aspect, ChangeKind, str, str, str]


def _delta(aspect: Aspect, subject: str, old: str, new: str) -> Iterator[_Bare]:
    """ADDED, REMOVED or CHANGED for one value rendered as text ("" = absent)."""
    if old == new:
        return
    kind = ChangeKind.ADDED if not old else ChangeKind.REMOVED if not new else ChangeKind.CHANGED
    yield aspect, kind, subject, old, new


def _set_delta(aspect: Aspect, subject: str, old: Iterable[str], new: Iterable[str]) -> Iterator[_Bare]:
    """One ADDED per item only ``new`` has and one REMOVED per item only ``old`` has (sorted)."""
    before, after = Counter(old), Counter(new)
    for item in sorted((before - after).elements()):
        yield aspect, ChangeKind.REMOVED, subject, item, ""
    for item in sorted((after - before).elements()):
        yield aspect, ChangeKind.ADDED, subject, "", item


def tree_diff(old: Iterable[Spec], new: Iterable[Spec], *, old_name: str, new_name: str) -> TreeDiff:
    """Operators added and removed, then every change of each common operator, by operator name."""
    before = {s.operator: s for s in old}
    after = {s.operator: s for s in new}
    changes: list[SpecChange] = []
    for name in sorted(before.keys() | after.keys()):
        if name not in after:
            changes.append(SpecChange(name, Aspect.OPERATOR, ChangeKind.REMOVED, name,
                                      f"introduced {before[name].introduced}", ""))
        elif name not in before:
            changes.append(SpecChange(name, Aspect.OPERATOR, ChangeKind.ADDED, name,
                                      "", f"introduced {after[name].introduced}"))
        else:
            changes.extend(SpecChange(name, *bare) for bare in spec_changes(before[name], after[name]))
    return TreeDiff(old_name, new_name, tuple(changes))


def spec_changes(old: Spec, new: Spec) -> Iterator[_Bare]:
    """Every difference between two revisions of one operator, aspect by aspect.
    Provenance (``sources``, ``disagreements``) is not a fact of the operator and is skipped."""
    for rule in (_identity, _fields, _defaults, _formula, _in_place, _constraints, _support, _tolerance):
        yield from rule(old, new)


def _identity(old: Spec, new: Spec) -> Iterator[_Bare]:
    yield from _delta(Aspect.IDENTITY, "struct", old.struct, new.struct)
    yield from _delta(Aspect.IDENTITY, "category", old.category, new.category)
    yield from _delta(Aspect.IDENTITY, "introduced", old.introduced.short, new.introduced.short)


# ---- fields: matched by name, then unmatched pairs of the same type as renames


def _similar(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def _renames(old: tuple[Field, ...], new: tuple[Field, ...]) -> dict[str, str]:
    """Old name -> new name for fields only one side has that look renamed: the
    same C type and kind, and the same struct position or a similar name."""
    old_names, new_names = {f.name for f in old}, {f.name for f in new}
    lost = [(i, f) for i, f in enumerate(old) if f.name not in new_names]
    gained = [(j, f) for j, f in enumerate(new) if f.name not in old_names]
    pairs = sorted(
        ((i != j, -_similar(o.name, n.name), i, j), o.name, n.name)
        for i, o in lost for j, n in gained
        if (o.c_type, o.kind) == (n.c_type, n.kind) and (i == j or _similar(o.name, n.name) >= 0.6)
    )
    out: dict[str, str] = {}
    for _, o_name, n_name in pairs:
        if o_name not in out and n_name not in out.values():
            out[o_name] = n_name
    return out


def _fields(old: Spec, new: Spec) -> Iterator[_Bare]:
    renames = _renames(old.fields, new.fields)
    by_new = {f.name: f for f in new.fields}
    for i, f in enumerate(old.fields):
        target = by_new.get(renames.get(f.name, f.name))
        if target is None:
            yield Aspect.FIELD, ChangeKind.REMOVED, f.name, f"{f.c_type}, position {i + 1}", ""
        else:
            yield from _field_changes(f, target)
    matched = set(renames.values()) | {f.name for f in old.fields}
    for j, f in enumerate(new.fields):
        if f.name not in matched:
            yield Aspect.FIELD, ChangeKind.ADDED, f.name, "", f"{f.c_type}, position {j + 1}"
    yield from _reorder(old.fields, new.fields, renames)


def _field_changes(old: Field, new: Field) -> Iterator[_Bare]:
    if old.name != new.name:
        yield Aspect.FIELD, ChangeKind.RENAMED, new.name, old.name, new.name
    if old.c_type != new.c_type:
        yield Aspect.FIELD, ChangeKind.RETYPED, new.name, old.c_type, new.c_type
    elif old.kind != new.kind:
        yield Aspect.FIELD, ChangeKind.RETYPED, f"{new.name} kind", old.kind.value, new.kind.value
    role = (old.role.value if old.role else "", new.role.value if new.role else "")
    yield from _delta(Aspect.FIELD, f"{new.name} role", *role)
    if old.optional != new.optional:
        words = ("required", "optional")
        yield Aspect.FIELD, ChangeKind.CHANGED, f"{new.name} optional", words[old.optional], words[new.optional]
    yield from _delta(Aspect.FIELD, f"{new.name} count field", old.count_field or "", new.count_field or "")


def _reorder(old: tuple[Field, ...], new: tuple[Field, ...], renames: dict[str, str]) -> Iterator[_Bare]:
    """REORDERED when fields both sides have are in another relative order
    (struct order is the binary layout)."""
    new_names = [f.name for f in new]
    old_order = [renames.get(f.name, f.name) for f in old if renames.get(f.name, f.name) in new_names]
    new_order = [name for name in new_names if name in old_order]
    if old_order != new_order:
        yield Aspect.FIELD, ChangeKind.REORDERED, "struct order", ", ".join(old_order), ", ".join(new_order)


def _value_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _default_text(f: Field) -> str:
    text = _value_text(f.default)
    return f"{text} ({f.default_exact})" if f.default_exact and text else text or (f.default_exact or "")


def _defaults(old: Spec, new: Spec) -> Iterator[_Bare]:
    """Defaults of the fields both revisions have (under the new name)."""
    renames = _renames(old.fields, new.fields)
    by_new = {f.name: f for f in new.fields}
    for f in old.fields:
        target = by_new.get(renames.get(f.name, f.name))
        if target is not None:
            yield from _delta(Aspect.DEFAULT, target.name, _default_text(f), _default_text(target))


def _formula(old: Spec, new: Spec) -> Iterator[_Bare]:
    a, b = old.formula, new.formula
    yield from _delta(Aspect.FORMULA, "source", a.source.value, b.source.value)
    yield from _delta(Aspect.FORMULA, "text", (a.text or "").strip(), (b.text or "").strip())
    yield from _delta(Aspect.FORMULA, "parsed", a.parsed or "", b.parsed or "")


def _in_place(old: Spec, new: Spec) -> Iterator[_Bare]:
    def pairs(spec: Spec) -> list[str]:
        return [f"{p.output} aliases {p.input}" for p in spec.in_place]

    yield from _set_delta(Aspect.IN_PLACE, "in place", pairs(old), pairs(new))


def constraint_text(c: Constraint) -> str:
    """``same DataType, DimensionCount: InputTensor, OutputTensor`` (the doc line is not part of it)."""
    props = f" {', '.join(c.properties)}" if c.properties else ""
    return f"{c.kind.value}{props}: {', '.join(c.tensors)}"


def _constraints(old: Spec, new: Spec) -> Iterator[_Bare]:
    yield from _set_delta(Aspect.CONSTRAINT, "constraint",
                          map(constraint_text, old.constraints), map(constraint_text, new.constraints))


def _tolerance(old: Spec, new: Spec) -> Iterator[_Bare]:
    a = {t.dtype: str(t.ulp) for t in old.tolerance}
    b = {t.dtype: str(t.ulp) for t in new.tolerance}
    for dtype in sort_dtypes(a.keys() | b.keys()):
        yield from _delta(Aspect.TOLERANCE, f"{dtype.name} ulp", a.get(dtype, ""), b.get(dtype, ""))


# ---- support tables, matched by (condition, level)


def table_name(table: SupportTable) -> str:
    """``4_1`` or ``4_1 [Function: ARGMIN, ARGMAX]``."""
    cond = condition_text(table.condition)
    return f"{table.level}" + (f" [{cond}]" if cond else "")


def _row_text(row: TensorSupport) -> str:
    return f"{row.tensor} dims {dims_text(row.dims)}; {dtypes_text(row.dtypes)}"


def _table_key(table: SupportTable) -> tuple[tuple[str, ...], FeatureLevel]:
    return _condition_key(table.condition), table.level


def _support(old: Spec, new: Spec) -> Iterator[_Bare]:
    before = {_table_key(t): t for t in old.support}
    after = {_table_key(t): t for t in new.support}
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a is not None and b is not None:
            yield from _table_changes(a, b)
        else:
            name = table_name(a or b)  # type: ignore[arg-type]  # one of them is a table
            yield from _delta(Aspect.SUPPORT, f"table {name}", _table_text(a), _table_text(b))


def _table_text(table: SupportTable | None) -> str:
    return " / ".join(_row_text(r) for r in table.rows) if table else ""


def _table_changes(old: SupportTable, new: SupportTable) -> Iterator[_Bare]:
    name = table_name(new)
    rows_before = {r.tensor: r for r in old.rows}
    rows_after = {r.tensor: r for r in new.rows}
    for tensor in dict.fromkeys([*rows_after, *rows_before]):
        a, b = rows_before.get(tensor), rows_after.get(tensor)
        subject = f"{name} {tensor}"
        if a is None or b is None:
            yield from _delta(Aspect.SUPPORT, subject, _row_text(a) if a else "", _row_text(b) if b else "")
            continue
        yield from _group_delta(f"{subject} dims", dims_text(set(a.dims) - set(b.dims)),
                                dims_text(set(b.dims) - set(a.dims)))
        yield from _group_delta(f"{subject} dtypes", dtypes_text(set(a.dtypes) - set(b.dtypes)),
                                dtypes_text(set(b.dtypes) - set(a.dtypes)))
        yield from _delta(Aspect.SUPPORT, f"{subject} kind", a.kind, b.kind)
        yield from _delta(Aspect.SUPPORT, f"{subject} dimensions", a.dimensions or "", b.dimensions or "")


def _group_delta(subject: str, removed: str, added: str) -> Iterator[_Bare]:
    """At most one REMOVED and one ADDED support record, each naming all its items."""
    if removed:
        yield Aspect.SUPPORT, ChangeKind.REMOVED, subject, removed, ""
    if added:
        yield Aspect.SUPPORT, ChangeKind.ADDED, subject, "", added
