"""Every reading of a spec's ambiguities, as alternatives the comparator accepts.

Issue #22 item 2 (docs/ambiguities.md): the oracle's expected values follow
the spec's own settings (the primary readings); each other reading of an
ambiguity is evaluated over the same elements and offered where it gives
another value, as a STRICT `Alternative` named
``reading:<ambiguity id>:<reading id>``.  A result that matches it PASSes,
and the report says which reading the backend took (`report.readings`).

Only the ambiguities that can differ on a batch cost an evaluation: NaN only
for a float output with a NaN input, the integer kinds only for integer
outputs of integer inputs, branch order always (the cases that reach an
overlap are few, but the oracle cannot tell which they are without
evaluating).  Two ambiguities can meet at one element (an integer Shrink
with a fractional Bias that also overflows; a negative Threshold that
makes branches overlap only in exact arithmetic): after the single
readings, every mix of readings of the batch's relevant ambiguities is
evaluated too, named ``reading:a:r+b:s``, where there are at most
`MAX_COMBINATIONS` of them (integer Shrink: 2 x 4 x 2 = 16); beyond that,
only mixes of the ambiguities whose single readings made a difference, if
they are few enough, else single readings only.  A mix is needed even where
no single reading differs: an implementation that casts Bias first and
lets the later branch win gives values no single reading gives.

Each ambiguity whose readings differ somewhere on the batch also gets a
marker, ``reading:<ambiguity>=<primary>`` (`marker`), and its single
readings are kept even where they agree with the primary (no element):
with them the judge can tell which reading explains each result
(`judge._reading_elements`).
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dmlconform.compare import Alternative, Tier
from dmlconform.formula.oracle import OracleResult, Prepared, evaluate_many, integer_from_float, literal, prepare
from dmlconform.formula.tree import Assign, FormulaTree, Piecewise
from dmlconform.spec import model as m

#: Most combinations of readings evaluated on one batch (the primary one included).
MAX_COMBINATIONS = 16
#: The prefix of every reading alternative's name.
PREFIX = "reading:"


@dataclass(frozen=True, slots=True)
class Settings:
    """What the oracle needs to evaluate one combination of readings."""

    nan_policy: m.NanPolicy
    overflow: m.Overflow
    branch_order: m.BranchOrder = m.BranchOrder.FIRST
    arithmetic: m.IntegerArithmetic = m.IntegerArithmetic.EXACT


#: The kinds whose readings the oracle evaluates (`Settings`).
EVALUATED = frozenset({m.AmbiguityKind.NAN, m.AmbiguityKind.INTEGER_OVERFLOW, m.AmbiguityKind.BRANCH_OVERLAP,
                       m.AmbiguityKind.INTEGER_FLOAT_ATTRIBUTE})


#: Evaluations made by one `ReadingOracle.alternatives` call, by their settings
#: (at the primary overflow): per output, the values and those with the other overflow.
_Seen = dict[Settings, list[tuple[np.ndarray, np.ndarray | None]]]


@dataclass(frozen=True, slots=True)
class Choice:
    """One reading (``picks``: (ambiguity, reading) pairs, one per
    ambiguity it departs from the primary in) and its settings."""

    picks: tuple[tuple[m.Ambiguity, m.Reading], ...]
    settings: Settings

    @property
    def name(self) -> str:
        return PREFIX + "+".join(f"{a.id}:{r.id}" for a, r in self.picks)

    @property
    def says(self) -> str:
        return "; ".join(f"{a.id}: {r.says}" for a, r in self.picks)


def primary_settings(spec: m.Spec) -> Settings:
    """The settings of the spec's expected values."""
    return Settings(spec.formula.nan_policy, spec.formula.integer_overflow)


def evaluable(spec: m.Spec) -> tuple[m.Ambiguity, ...]:
    """The spec's ambiguities with a reading the oracle can evaluate."""
    return tuple(a for a in spec.ambiguities if a.kind in EVALUATED and any(r.setting is not None for r in a.others))


def last_match(tree: FormulaTree) -> FormulaTree:
    """``tree`` with the conditional branches of each piecewise definition in
    reverse order (``otherwise`` stays last): where two hold, the later wins."""
    def flip(s: Any) -> Any:
        if not isinstance(s, Assign) or not isinstance(s.value, Piecewise):
            return s
        branches = s.value.branches
        conditional = tuple(b for b in branches if b.cond is not None)
        rest = tuple(b for b in branches if b.cond is None)
        return replace(s, value=Piecewise(tuple(reversed(conditional)) + rest))
    return FormulaTree(tuple(flip(s) for s in tree.statements))


@dataclass(frozen=True, slots=True, eq=False)
class ReadingOracle:
    """A spec's ambiguities bound to its prepared formula (``flipped``: the
    formula with the later branch winning, where a reading asks for it),
    made once per run beside the `FormulaOracle`."""

    spec: m.Spec
    ambiguities: tuple[m.Ambiguity, ...]
    formula: Prepared
    flipped: Prepared | None

    @classmethod
    def of(cls, spec: m.Spec, tree: FormulaTree, formula: Prepared) -> ReadingOracle:
        """``spec``'s readings over its parsed ``tree``, prepared as ``formula``."""
        found = evaluable(spec)
        flips = any(r.setting is m.BranchOrder.LAST for a in found for r in a.readings)
        return cls(spec, found, formula, prepare(last_match(tree)) if flips else None)

    def relevant(self, chunk: Mapping[str, np.ndarray], dtype: m.DataType) -> tuple[m.Ambiguity, ...]:
        """The ambiguities that can differ on ``chunk`` into ``dtype`` (module docstring)."""
        integer_in = bool(chunk) and all(a.dtype.kind in "iub" for a in chunk.values())
        has_nan = any(a.dtype.kind == "f" and bool(np.isnan(a).any()) for a in chunk.values())
        keep = {
            m.AmbiguityKind.NAN: dtype.is_float and has_nan,
            m.AmbiguityKind.BRANCH_OVERLAP: True,
            m.AmbiguityKind.INTEGER_FLOAT_ATTRIBUTE: not dtype.is_float and integer_in,
            m.AmbiguityKind.INTEGER_OVERFLOW: not dtype.is_float,
        }
        return tuple(a for a in self.ambiguities if keep[a.kind])

    def alternatives(self, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any], *, dtype: m.DataType,
                     outputs: Sequence[str | None], primary: Sequence[OracleResult],
                     signed_zero: Sequence[bool]) -> list[tuple[Alternative, ...]]:
        """Per output, the alternatives of every other reading that gives
        another value than ``primary`` somewhere: first one marker per
        ambiguity (`marker`), then the single readings, then combinations
        of the ambiguities that made a difference."""
        seen: _Seen = {primary_settings(self.spec): [(r.expected, r.other_overflow) for r in primary]}
        singles: list[list[Alternative]] = [[] for _ in outputs]
        mattered: list[m.Ambiguity] = []
        markers: list[list[Alternative]] = [[] for _ in outputs]
        relevant = self.relevant(chunk, dtype)
        for a in relevant:
            mine: list[list[Alternative]] = [[] for _ in outputs]
            choices = [Choice(((a, r),), self._settings(((a, r),))) for r in a.others if r.setting is not None]
            if self._add(choices, chunk, attrs, dtype, outputs, primary, signed_zero, mine, seen, keep_empty=True):
                mattered.append(a)
            for k, alts in enumerate(mine):
                if any(alt.index.size for alt in alts):  # each reading stays, even where it agrees with the primary
                    markers[k].append(marker(a, alts, primary[k].expected))
                    singles[k].extend(alts)
        combos: list[list[Alternative]] = [[] for _ in outputs]
        mixes = self._combinations(list(relevant)) or self._combinations(mattered)
        self._add(mixes, chunk, attrs, dtype, outputs, primary, signed_zero, combos, seen)
        return [tuple(markers[k] + singles[k] + combos[k]) for k in range(len(outputs))]

    def _combinations(self, mattered: list[m.Ambiguity]) -> list[Choice]:
        """Every mix of readings of two or more of ``mattered``, fewest first."""
        options = [[None, *[r for r in a.others if r.setting is not None]] for a in mattered]
        if len(mattered) < 2 or np.prod([len(o) for o in options]) > MAX_COMBINATIONS:
            return []
        picks = [tuple((a, r) for a, r in zip(mattered, combo) if r is not None)
                 for combo in itertools.product(*options)]
        return [Choice(p, self._settings(p)) for p in sorted((p for p in picks if len(p) >= 2), key=len)]

    def _settings(self, picks: tuple[tuple[m.Ambiguity, m.Reading], ...]) -> Settings:
        settings = primary_settings(self.spec)
        for _, reading in picks:
            settings = _with(settings, reading.setting)
        return settings

    def _add(self, choices: list[Choice], chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any],
             dtype: m.DataType, outputs: Sequence[str | None], primary: Sequence[OracleResult],
             signed_zero: Sequence[bool], found: list[list[Alternative]], seen: _Seen, *,
             keep_empty: bool = False) -> bool:
        """Evaluate ``choices``, add an alternative per output where one
        differs from the primary values (``keep_empty``: also where it does
        not, with no element: the report then knows the reading agreed);
        whether any differed."""
        differed = False
        for choice in choices:
            results = self._values(choice.settings, chunk, attrs, dtype, outputs, seen)
            for k, (mine, theirs) in enumerate(zip(results, primary)):
                where = np.flatnonzero(_differs(mine, theirs.expected, signed_zero=signed_zero[k]))
                differed = differed or bool(where.size)
                if where.size or keep_empty:
                    found[k].append(Alternative(choice.name, where, mine[where], Tier.STRICT, choice.says))
        return differed

    def _values(self, settings: Settings, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any],
                dtype: m.DataType, outputs: Sequence[str | None], seen: _Seen) -> list[np.ndarray]:
        """Each output's values under ``settings``.  One evaluation gives
        both overflow readings (`OracleResult.other_overflow`): ``seen``
        holds each evaluation of the call by its settings at the primary
        overflow, so wrap and saturate cost one (a third of a whole run's
        reading evaluations, measured)."""
        base = replace(settings, overflow=self.spec.formula.integer_overflow)
        if base.arithmetic is m.IntegerArithmetic.ATTRIBUTE_TO_INTEGER and all(
                self._to_integer(n, v) == v for n, v in attrs.items()):
            base = replace(base, arithmetic=m.IntegerArithmetic.EXACT)  # whole attributes: the cast changes nothing
        if base not in seen:
            seen[base] = self._evaluate(base, chunk, attrs, dtype, outputs)
        same = settings.overflow is base.overflow
        return [mine if same or other is None else other for mine, other in seen[base]]

    def _evaluate(self, settings: Settings, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any],
                  dtype: m.DataType, outputs: Sequence[str | None]) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """Each output's values under ``settings``, in its type, and with
        the other overflow (None for a float type)."""
        formula = self.flipped if settings.branch_order is m.BranchOrder.LAST else None
        arithmetic = settings.arithmetic
        if arithmetic is m.IntegerArithmetic.ATTRIBUTE_TO_INTEGER:
            attrs = {n: self._to_integer(n, v) for n, v in attrs.items()}
        elif arithmetic is m.IntegerArithmetic.FLOAT64:
            chunk = {n: a.astype(np.float64) for n, a in chunk.items()}
        elif arithmetic is m.IntegerArithmetic.FLOAT32:
            return self._float32(formula, chunk, attrs, dtype, outputs, settings.overflow)
        results = evaluate_many(formula or self.formula, chunk, attrs, outputs=outputs, dtype=dtype,
                                nan_policy=settings.nan_policy, overflow=settings.overflow)
        return [(r.expected, r.other_overflow) for r in results]

    def _float32(self, formula: Prepared | None, chunk: Mapping[str, np.ndarray], attrs: Mapping[str, Any],
                 dtype: m.DataType, outputs: Sequence[str | None],
                 overflow: m.Overflow) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """The formula computed step by step in float32, converted toward
        zero (with ``overflow``, and with the other one)."""
        inputs = {n: a.astype(np.float32) for n, a in chunk.items()}
        used = formula or self.formula
        other = m.Overflow.SATURATE if overflow is m.Overflow.WRAP else m.Overflow.WRAP
        found = [literal(used, inputs, attrs, dtype=np.float32, output=o) for o in outputs]
        return [(integer_from_float(v, dtype, overflow), integer_from_float(v, dtype, other)) for v in found]

    def _to_integer(self, name: str, value: Any) -> Any:
        """A FLOAT attribute as a C cast to an integer makes it (toward zero)."""
        field = self.spec.field(name)
        if field is None or field.c_type != "FLOAT" or isinstance(value, (bool, str, enum.Enum)):
            return value
        as_float = float(np.float32(float(value)))
        return int(as_float) if np.isfinite(as_float) else value


def _with(settings: Settings, value: enum.Enum | None) -> Settings:
    """``settings`` with the one setting ``value`` is a value of (its enum says which)."""
    if isinstance(value, m.NanPolicy):
        return replace(settings, nan_policy=value)
    if isinstance(value, m.Overflow):
        return replace(settings, overflow=value)
    if isinstance(value, m.BranchOrder):
        return replace(settings, branch_order=value)
    if isinstance(value, m.IntegerArithmetic):
        return replace(settings, arithmetic=value)
    return settings


def marker_name(ambiguity: m.Ambiguity) -> str:
    """``reading:<ambiguity>=<primary reading>``: the marker's name."""
    return f"{PREFIX}{ambiguity.id}={ambiguity.primary}"


def marker(ambiguity: m.Ambiguity, alternatives: list[Alternative], expected: np.ndarray) -> Alternative:
    """The primary values at every element where a reading of ``ambiguity``
    (``alternatives``) gives another value.  It accepts nothing new (its
    values are the expected ones); it is there to be counted: placed before
    every other alternative, the elements it finds already passing are
    those that took the primary reading (`judge`, `report.readings`)."""
    index = np.unique(np.concatenate([alt.index for alt in alternatives]))
    return Alternative(marker_name(ambiguity), index, expected[index], Tier.STRICT,
                       f"{ambiguity.id}: the primary reading ({ambiguity.primary})")


def _differs(values: np.ndarray, expected: np.ndarray, *, signed_zero: bool) -> np.ndarray:
    """Where ``values`` is another value than ``expected`` (NaN is NaN; the
    sign of zero only where it counts)."""
    differ = values != expected
    if values.dtype.kind in "iub":
        return differ
    wide, wanted = values.astype(np.float64), expected.astype(np.float64)
    differ &= ~(np.isnan(wide) & np.isnan(wanted))
    if signed_zero:
        differ |= (wide == 0) & (wanted == 0) & (np.signbit(wide) != np.signbit(wanted))
    return differ
