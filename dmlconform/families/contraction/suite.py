"""The contraction family's entry points (`families.Family`): its cases,
float (`families.contraction.cases`: GEMM) or quantized
(`families.contraction.cases_integer`: MATRIX_MULTIPLY_INTEGER and its
_TO_FLOAT variant), as the spec's semantics say."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dmlconform.cases import family
from dmlconform.cases.model import Case
from dmlconform.families.contraction import cases_integer
from dmlconform.families.contraction.cases import activation, float_cases, semantics_of, shape_problems, shapes
from dmlconform.spec.model import DataType, FeatureLevel, Spec


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level`` (a table and a
    dimension count there), and if not, why."""
    sem = semantics_of(spec)
    if sem.quantized:
        return family.generable(lambda: cases_integer.shapes(spec, sem, level))
    return family.generable(lambda: shapes(spec, level, large=False))


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no contraction ``spec``'s semantics describe
    (`cases.shape_problems`, a quantized operand's side tensors, and a fused
    activation `cases.activation` cannot read)."""
    sem = semantics_of(spec)
    yield from shape_problems(sem, case)
    if sem.quantized:
        yield from cases_integer.side_problems(sem, case)
    try:
        activation(sem, case)
    except ValueError as exc:
        yield str(exc)


def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (`cases` and `cases_integer` say
    which), only those ``keep(id, data type)`` accepts, without the negative
    ones where not ``negative``; identical for a ``seed``."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    if sem.quantized:
        yield from cases_integer.generate(spec, sem, level, seed=seed, negative=negative, keep=keep)
    else:
        yield from float_cases(spec, sem, level, seed=seed, large=large, negative=negative, keep=keep)
