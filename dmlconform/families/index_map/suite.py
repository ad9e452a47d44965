"""The index-map family's cases, joined: the gathers, slices and tile
(`families.index_map.cases`) and the scatters
(`families.index_map.scatter_cases`), each operator's from its module.
`families.FAMILIES` names this module as the family's cases."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dmlconform.cases.model import Case
from dmlconform.families.index_map import cases, scatter_cases
from dmlconform.spec.model import DataType, FeatureLevel, Spec


def _scatter(spec: Spec) -> bool:
    return cases.semantics_of(spec).operation.is_scatter


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return (scatter_cases if _scatter(spec) else cases).generable(spec, level)


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no call the page describes (`cases.case_problems`)."""
    return (scatter_cases if _scatter(spec) else cases).case_problems(spec, case)


def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (`cases.generate`)."""
    module = scatter_cases if _scatter(spec) else cases
    return module.generate(spec, level, seed=seed, large=large, negative=negative, keep=keep)
