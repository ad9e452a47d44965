"""Operator families: for each, which specs it tests, how it makes their
cases and its oracle.  DESIGN.md "Operator families"; docs/architecture.md
"How to add an operator family".

A family is a `Family` record in `FAMILIES`.  The runner and `run` ask
`family_of(spec)` which one tests a spec (the first that claims it), then
use its ``generate`` for cases and its ``oracle`` (behind the protocol of
`oracles.base`) for expected values.  Today one family exists, the
element-wise formula; the next ones (contraction, index map, window,
normalization, interpolation) go beside it, each a module of this package.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from dmlconform.cases import contraction as contraction_cases
from dmlconform.cases import generate as formula_cases
from dmlconform.cases import reduction as reduction_cases
from dmlconform.cases import sequence as sequence_cases
from dmlconform.cases import softmax as softmax_cases
from dmlconform.cases import value_scale as value_scale_cases
from dmlconform.cases.model import Case
from dmlconform.oracles import contraction, elementwise, reduction, sequence
from dmlconform.oracles import softmax as softmax_oracle
from dmlconform.oracles import value_scale as value_scale_oracle
from dmlconform.oracles.base import BatchExpectation, Expectation, FamilyOracle
from dmlconform.spec.model import DataType, FeatureLevel, Spec

__all__ = ["FAMILIES", "BatchExpectation", "Expectation", "Family", "FamilyOracle", "Oracles", "cases_of", "family_of"]


@dataclass(frozen=True, slots=True)
class Family:
    """One operator family: ``claims(spec)`` says whether it tests a spec
    (and if not, why; "" where the spec is of no kind the family knows), ``generate(spec, level, seed=, large=, keep=)`` makes
    its cases (only those ``keep(id, data type)`` accepts, when given),
    ``oracle(spec)`` its `FamilyOracle`; ``generable(spec, level)`` says
    whether it makes cases at ``level`` (and if not, why), and
    ``case_problems(spec, case)`` what makes a case from a folder no call its
    family checks (None: the element-wise rules of `cases.validate`)."""

    name: str
    claims: Callable[[Spec], tuple[bool, str]]
    generate: Callable[..., Iterator[Case]]
    oracle: Callable[[Spec], FamilyOracle]
    generable: Callable[[Spec, FeatureLevel], tuple[bool, str]]
    case_problems: Callable[[Spec, Case], Iterator[str]] | None = None


#: Every family, asked in order.
FAMILIES: tuple[Family, ...] = (
    Family("contraction", contraction.claims, contraction_cases.generate, contraction.ContractionOracle.of,
           contraction_cases.generable, contraction_cases.case_problems),
    Family("reduction", reduction.claims, reduction_cases.generate, reduction.ReductionOracle.of,
           reduction_cases.generable, reduction_cases.case_problems),
    Family("softmax", softmax_cases.claims, softmax_cases.generate, softmax_oracle.SoftmaxOracle.of, softmax_cases.generable,
           softmax_cases.case_problems),
    Family("sequence", sequence.claims, sequence_cases.generate, sequence.SequenceOracle.of, sequence_cases.generable,
           sequence_cases.case_problems),
    Family("value-scale", value_scale_cases.claims, value_scale_cases.generate, value_scale_oracle.ValueScaleOracle.of,
           value_scale_cases.generable, value_scale_cases.case_problems),
    Family("element-wise formula", elementwise.claims, formula_cases.generate, elementwise.FormulaOracle.of,
           formula_cases.is_runnable),
)


def family_of(spec: Spec) -> tuple[Family | None, str]:
    """The family that tests ``spec`` and "ok", or None and why none does
    (each family's reason, the first one's when they agree; a family that
    says nothing, the spec being of no kind it knows, is left out)."""
    reasons = []
    for family in FAMILIES:
        claimed, reason = family.claims(spec)
        if claimed:
            return family, "ok"
        reasons.append(reason)
    return None, "; ".join(dict.fromkeys(r for r in reasons if r)) or "no operator family tests it yet"


@dataclass
class Oracles:
    """The oracles of one run, made once per operator (a run owns this
    cache; nothing is kept between runs)."""

    made: dict[str, FamilyOracle] = field(default_factory=dict)

    def get(self, spec: Spec) -> FamilyOracle:
        """The oracle of ``spec``; ValueError when no family tests it."""
        if spec.operator not in self.made:
            family, reason = family_of(spec)
            if family is None:
                raise ValueError(f"{spec.operator}: no oracle: {reason}")
            self.made[spec.operator] = family.oracle(spec)
        return self.made[spec.operator]


def cases_of(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` that ``keep`` accepts, made by its
    family (none when no family tests it)."""
    family, _ = family_of(spec)
    return family.generate(spec, level, seed=seed, large=large, keep=keep) if family is not None else iter(())
