"""Which cases a run runs: the selection (``--case``, ``-k``, ``--dtype``,
``--shard``), the cases of each selected spec made by its operator family
(only the selected ones are made), or those of a case folder (checked whole
against their specs first).  DESIGN.md "Cases"; issue 21 "Cost follows the
selection".
"""

from __future__ import annotations

import dataclasses
import fnmatch
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from dmlconform.case_folders import SHOWN, folder_error, folder_problems
from dmlconform.cases.model import Case, Planned
from dmlconform.cases.store import MANIFEST, case_columns, case_lines, read_cases, read_notes
from dmlconform.families import Family, family_of, preload
from dmlconform.gating.shard import Shard
from dmlconform.results import CaseResult
from dmlconform.spec import model as m

Pair = tuple[m.Spec, Case | Planned]


@dataclass(frozen=True, slots=True)
class Selection:
    """Which cases a run keeps: ``ids`` (--case), ``patterns`` (-k: a glob,
    or a substring), ``dtypes`` (--dtype names) and the ``shard``."""

    ids: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    dtypes: frozenset[str] = frozenset()
    shard: Shard | None = None

    def keeps(self, case_id: str, dtype: m.DataType) -> bool:
        if (self.ids and case_id not in self.ids) or (self.dtypes and dtype.name not in self.dtypes):
            return False
        return (self.shard is None or self.shard.holds(case_id)) and all(
            fnmatch.fnmatchcase(case_id, p if any(c in p for c in "*?[") else f"*{p}*") for p in self.patterns)


def prepare(specs: Sequence[tuple[Path, m.Spec]], tell: Callable[[tuple[str, ...]], None]) -> None:
    """Name the families that test ``specs`` to ``tell`` (the engine: its
    workers import those families' oracles meanwhile), then import their
    generators.  `run` does it while its backend starts, before `pairs`
    needs the backend's feature level: a one-case repro's worker and
    generator then start side by side (issue #31).  Naming them first costs
    only the families' claims (the element-wise one parses the formula,
    `families.elementwise.binding`), not a generator's import."""
    found = (family_of(spec)[0] for _, spec in specs)
    families = {f.name: f for f in found if f is not None}
    tell(tuple(families))
    for family in families.values():
        preload(family, "generate")


def pairs(specs: Sequence[tuple[Path, m.Spec]], level: m.FeatureLevel, *, seed: int, large: bool,
          cases: list[Case] | None, selection: Selection) -> tuple[list[Pair], list[str]]:
    """The (spec, case) pairs to run: the selected ``cases`` of a case folder
    (`checked_cases` checked them) or the selected cases of ``specs``'
    families (only those are generated), and the specs no family tests,
    each with why (named by file): among them those with no case at
    ``level`` (an operator introduced later, a table that lacks it)."""
    by_op = {s.operator: s for _, s in specs}
    if cases is not None:
        return [(by_op[c.operator], c) for c in cases if c.operator in by_op and selection.keeps(c.id, c.dtype)], []
    skipped: list[str] = []
    out: list[Pair] = []
    for path, spec in specs:
        family, reason = family_of(spec)
        if family is not None:
            generable, reason = family.generable(spec, level)
        if family is None or not generable:
            skipped.append(f"{path}: {reason}")
            continue
        made = family.generate(spec, level, seed=seed, keep=selection.keeps)
        out.extend((spec, c) for c in (_with_planned(family, spec, level, made, seed, selection) if large else made))
    return out, skipped


def _with_planned(family: Family, spec: m.Spec, level: m.FeatureLevel, made: Iterable[Case], seed: int,
                  selection: Selection) -> Iterator[Case | Planned]:
    """The selected cases of ``spec`` with ``--large``, in generation's
    order: those of the default suite as ``made``, those only ``--large``
    adds `Planned` (issue #33: the runner makes each where and when it runs;
    made here, the 91 of the shipped specs held 3.8 GiB before the first
    result).  Which is which comes from the ids generation offers to
    ``keep`` with and without ``large``: no value is drawn for that."""
    def offered(large: bool) -> dict[str, m.DataType]:
        seen: dict[str, m.DataType] = {}

        def note(case_id: str, dtype: m.DataType) -> bool:
            seen.setdefault(case_id, dtype)
            return False

        list(family.generate(spec, level, seed=seed, large=large, keep=note))
        return seen

    plain, every = offered(False), offered(True)
    if [i for i in every if i in plain] != list(plain):
        raise AssertionError(f"{spec.operator}: --large reorders the default cases")  # a generator bug, never input
    regular = iter(made)
    for case_id, dtype in every.items():
        if not selection.keeps(case_id, dtype):
            continue
        if case_id not in plain:
            yield Planned(case_id, spec.operator, level, dtype, seed)
            continue
        case = next(regular)
        if case.id != case_id:
            raise AssertionError(f"{spec.operator}: made {case.id} where {case_id} was offered")  # a generator bug
        yield case


def checked_cases(folder: Path, specs: Sequence[m.Spec], *, every_operator: bool) -> list[Case]:
    """The cases of ``folder``, checked whole against ``specs`` before
    anything runs (`case_folders`): every problem is an input error, shown
    at its case's line and column.  Without ``every_operator`` (--op) the cases of
    other operators are left out unchecked."""
    cases = read_cases(folder)
    by_op = {s.operator: s for s in specs}
    problems = folder_problems(cases, by_op, operators=None if every_operator else frozenset(by_op))
    shown = list(itertools.islice(problems, SHOWN))
    if shown:
        raise folder_error(shown, more=sum(1 for _ in problems), manifest=folder / MANIFEST, lines=case_lines(folder),
                           columns=case_columns(folder))
    return cases


def with_notes(results: tuple[CaseResult, ...], cases_dir: Path | None) -> tuple[CaseResult, ...]:
    """External vectors (`import onnx`) carry their origin and findings in the
    manifest: each such case's message shows them (docs/import-onnx.md)."""
    notes = read_notes(cases_dir) if cases_dir else {}
    if not notes:
        return results
    return tuple(dataclasses.replace(r, message="; ".join((r.message, *notes[r.case_id]) if r.message
                                                          else notes[r.case_id]))
                 if r.case_id in notes else r for r in results)
