"""The index-map family's cases, joined: the gathers, slices and tile
(`families.index_map.cases`) and the scatters
(`families.index_map.scatter_cases`) and ONE_HOT
(`families.index_map.onehot_cases`) and NONZERO_COORDINATES
(`families.index_map.nonzero_cases`) and JOIN and SPLIT, whose tensor
arrays the one-input cases module does not hold (`families.index_map.join_cases`),
each operator's from its module.  `families.FAMILIES` names this module as
the family's cases."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType

from dmlconform.cases import family
from dmlconform.cases.model import Case
from dmlconform.families.index_map import cases, join_cases, nonzero_cases, onehot_cases, scatter_cases
from dmlconform.families.index_map.joins import is_join
from dmlconform.families.index_map.semantics import Operation
from dmlconform.spec.model import DataType, FeatureLevel, Spec


def _module(spec: Spec) -> ModuleType:
    """The module of ``spec``'s cases."""
    sem = cases.semantics_of(spec)
    if is_join(sem):
        return join_cases
    operation = sem.operation
    if operation.is_scatter:
        return scatter_cases
    if operation is Operation.NONZERO:
        return nonzero_cases
    return onehot_cases if operation is Operation.ONE_HOT else cases


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    module = _module(spec)
    if module in (cases, join_cases):  # the gathers, slices, tile, paddings, moves, generated ones, JOIN, SPLIT
        return module.generable(spec, level)
    return family.generable(lambda: module.shapes(spec, level))


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no call the page describes (`cases.case_problems`)."""
    return _module(spec).case_problems(spec, case)


def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (`cases.generate`; the others'
    from their ``shapes`` and ``case_of``), only those ``keep(id, data
    type)`` accepts, without the negative ones where not ``negative``;
    identical for a ``seed``.  ``large``: GATHER's and CAST's large cases."""
    module = _module(spec)
    if module is cases:
        return cases.generate(spec, level, seed=seed, large=large, negative=negative, keep=keep)
    if module is join_cases:
        return join_cases.generate(spec, level, seed=seed, negative=negative, keep=keep)
    family.check_seed(seed)
    sem = cases.semantics_of(spec)
    found = family.selected(module.shapes(spec, level), lambda s: s.case_id(spec.operator), keep, negative=negative)
    return (module.case_of(spec, sem, level, seed, case_id, shape) for case_id, shape in found)
