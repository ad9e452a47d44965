"""Readings that must agree across the cases of a run (issue #32 item 4,
docs/ambiguities.md "Readings that must agree").

Most readings may differ element by element: real hardware takes one
conversion in a vectorised loop's body and another in its scalar tail.  A
few are one order the doc defines once: ARGMAX is the index of the element
MAX gives, so a backend whose MAX skips NaN while its ARGMAX picks it is
wrong whatever each gives alone.  Such ambiguities carry a `Tie`
(``tie:`` in the reviewed overlay): every ambiguity of one group is a
side per operator (and per value of an attribute, REDUCE's Function).  A
case tells its side's reading where one reading explains every element
its readings differ at (`CaseResult.readings`); a side that took several
(element by element, or case by case) agrees with any.  Where two sides
of one group and input type each took a single reading and those differ,
every case that told one FAILs, its message naming both readings and the
sides.  Plain data in, plain data out, after the run (the cases of both
sides must be in it: a run of MAX alone cannot disagree with ARGMAX).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from dmlconform.cases.model import Case
from dmlconform.results import CaseResult, Outcome
from dmlconform.spec import model as m

PREFIX = "reading:"


@dataclass(slots=True)
class _Side:
    """What one side's cases took: the readings that alone explained a
    case (``single``), whether a case needed several (``several``), and the
    positions of the cases that told a single one."""

    single: set[str] = field(default_factory=set)
    several: bool = False
    told: list[int] = field(default_factory=list)

    @property
    def reading(self) -> str | None:
        """The one reading this side took, None where it took several or none."""
        return next(iter(self.single)) if len(self.single) == 1 and not self.several else None


def agreed(pairs: Iterable[tuple[m.Spec, Case]], results: Sequence[CaseResult]) -> tuple[CaseResult, ...]:
    """``results`` with the cases FAILed whose tied readings disagree with
    another side's (module docstring); every other result unchanged."""
    cases = {case.id: (spec, case) for spec, case in pairs}
    groups: dict[tuple[str, str], dict[str, _Side]] = {}
    for position, result in enumerate(results):
        if result.case_id not in cases or result.outcome not in (Outcome.PASS, Outcome.QUALITY_WARNING):
            continue
        spec, case = cases[result.case_id]
        for ambiguity in spec.ambiguities:
            if ambiguity.tie is None:
                continue
            took = _took(ambiguity, result.readings)
            if not took:
                continue
            key = (ambiguity.tie.group, case.inputs[0].dtype.name if case.inputs else case.dtype.name)
            side = groups.setdefault(key, {}).setdefault(ambiguity.tie.side(spec.operator, dict(case.attributes)),
                                                         _Side())
            if len(took) == 1:
                side.single |= took
                side.told.append(position)
            else:
                side.several = True
    out = list(results)
    for (group, dtype), sides in sorted(groups.items()):
        taken = {name: side.reading for name, side in sides.items() if side.reading is not None}
        if len(set(taken.values())) < 2:
            continue
        message = _message(group, dtype, taken)
        for side in sides.values():
            for position in side.told:
                out[position] = replace(out[position], outcome=Outcome.FAIL, message=message)
    return tuple(out)


def _took(ambiguity: m.Ambiguity, readings: tuple[tuple[str, int, int], ...]) -> frozenset[str]:
    """The readings of ``ambiguity`` that explain every element of a case
    where its readings differ; where none does, every reading that explains
    one (several: the case mixed them); empty where no element tells."""
    marker = f"{PREFIX}{ambiguity.id}={ambiguity.primary}"
    counts = {name: (elements, explained) for name, elements, explained in readings}
    elements = counts.get(marker, (0, 0))[0]
    if not elements:
        return frozenset()
    explained = {ambiguity.primary: counts[marker][1]}
    for reading in ambiguity.others:
        explained[reading.id] = counts.get(f"{PREFIX}{ambiguity.id}:{reading.id}", (0, 0))[1]
    whole = frozenset(r for r, n in explained.items() if n == elements)
    if len(whole) > 1:
        return frozenset()  # the case does not tell the readings apart
    return whole or frozenset(r for r, n in explained.items() if n)


def _message(group: str, dtype: str, taken: dict[str, str]) -> str:
    """``nan-max-min readings disagree on FLOAT32: ignore (REDUCE MAX), propagate (ARGMAX, ...)``."""
    by_reading: dict[str, list[str]] = {}
    for side, reading in sorted(taken.items()):
        by_reading.setdefault(reading, []).append(side)
    parts = "; ".join(f"{reading} ({', '.join(sides)})" for reading, sides in sorted(by_reading.items()))
    return (f"{group} readings disagree on {dtype}: {parts}; the doc makes them one order, so one reading must "
            f"hold for all (docs/ambiguities.md)")
