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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dmlconform.case_folders import SHOWN, folder_error, folder_problems
from dmlconform.cases.model import Case
from dmlconform.cases.store import MANIFEST, case_columns, case_lines, read_cases, read_notes
from dmlconform.families import family_of
from dmlconform.gating.shard import Shard
from dmlconform.results import CaseResult
from dmlconform.spec import model as m

Pair = tuple[m.Spec, Case]


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
        out.extend((spec, c) for c in family.generate(spec, level, seed=seed, large=large, keep=selection.keeps))
    return out, skipped


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
