"""The index-map family's cases, by operator: JOIN and SPLIT, whose
tensor arrays the one-input cases module does not hold, from
`join_cases`; every other operator from `cases` (`families._family`
imports this module as the family's cases)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dmlconform.cases.model import Case
from dmlconform.families.index_map import cases, join_cases
from dmlconform.families.index_map.cases import semantics_of
from dmlconform.families.index_map.joins import is_join
from dmlconform.spec.model import DataType, FeatureLevel, Spec


def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (`cases.generate`, `join_cases.generate`)."""
    if is_join(semantics_of(spec)):
        return join_cases.generate(spec, level, seed=seed, negative=negative, keep=keep)
    return cases.generate(spec, level, seed=seed, large=large, negative=negative, keep=keep)


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return (join_cases if is_join(semantics_of(spec)) else cases).generable(spec, level)


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no call the page describes (`case_folders`)."""
    return (join_cases if is_join(semantics_of(spec)) else cases).case_problems(spec, case)
