"""Operator families: for each, which specs it tests, how it makes their
cases, its oracle, its CPU reference, its planted faults and the kind of
reviewed semantics its overlays give.  DESIGN.md "Operator families";
docs/architecture.md "How to add an operator family".

A family is a package ``families/<family>/`` and one `Family` record in
`FAMILIES`; a family of another package is a `Family` record registered
under the entry-point group `GROUP` (`registered` asks those first).  Every
other registry is read off them: the overlay kinds spec loading knows
(`overlay_kinds`, through `catalog`), the ``cpu`` backend's references
(`references`) and the ``faulty`` backend's planted faults (`faults`).  The runner and ``run`` ask `family_of(spec)` which
family tests a spec (the first that claims it), then use its ``generate``
for cases and its ``oracle`` (behind the protocol of `oracles.base`) for
expected values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import MappingProxyType

from dmlconform.cases.model import Case, Fault, Reference
from dmlconform.errors import InputError
from dmlconform.families.contraction import cases as contraction_cases
from dmlconform.families.contraction import faults as contraction_faults
from dmlconform.families.contraction import oracle as contraction_oracle
from dmlconform.families.contraction import overlay as contraction_overlay
from dmlconform.families.contraction import reference as contraction_reference
from dmlconform.families.contraction import suite as contraction_suite
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.families.elementwise import cases as elementwise_cases
from dmlconform.families.elementwise import faults as elementwise_faults
from dmlconform.families.elementwise import oracle as elementwise_oracle
from dmlconform.families.elementwise import overlay as elementwise_overlay
from dmlconform.families.reduction import cases as reduction_cases
from dmlconform.families.reduction import faults as reduction_faults
from dmlconform.families.reduction import oracle as reduction_oracle
from dmlconform.families.reduction import overlay as reduction_overlay
from dmlconform.families.reduction import reference as reduction_reference
from dmlconform.families.reduction.semantics import Reduction
from dmlconform.families.sequence import cases as sequence_cases
from dmlconform.families.sequence import faults as sequence_faults
from dmlconform.families.sequence import oracle as sequence_oracle
from dmlconform.families.sequence import overlay as sequence_overlay
from dmlconform.families.sequence import reference as sequence_reference
from dmlconform.families.sequence.semantics import SequenceOp
from dmlconform.families.softmax import cases as softmax_cases
from dmlconform.families.softmax import faults as softmax_faults
from dmlconform.families.softmax import oracle as softmax_oracle
from dmlconform.families.softmax import overlay as softmax_overlay
from dmlconform.families.softmax import reference as softmax_reference
from dmlconform.families.softmax.semantics import Softmax
from dmlconform.families.value_scale import cases as value_scale_cases
from dmlconform.families.value_scale import faults as value_scale_faults
from dmlconform.families.value_scale import oracle as value_scale_oracle
from dmlconform.families.value_scale import overlay as value_scale_overlay
from dmlconform.families.value_scale import reference as value_scale_reference
from dmlconform.families.value_scale.semantics import ValueScale
from dmlconform.families.window import cases as window_cases
from dmlconform.families.window import faults as window_faults
from dmlconform.families.window import oracle as window_oracle
from dmlconform.families.window import overlay as window_overlay
from dmlconform.families.window import reference as window_reference
from dmlconform.families.window.semantics import Window
from dmlconform.oracles.base import FamilyOracle
from dmlconform.spec.model import DataType, FeatureLevel, Semantics, Spec
from dmlconform.spec.reviewed import Kind

__all__ = ["FAMILIES", "GROUP", "Family", "Oracles", "cases_of", "faults", "family_of", "overlay_kinds", "references",
           "registered"]

@dataclass(frozen=True, slots=True)
class Family:
    """One operator family.

    ``claims(spec)`` says whether it tests a spec (and if not, why; "" where
    the spec is of no kind the family knows); ``generate(spec, level, seed=,
    large=, negative=, keep=)`` makes its cases (the ``large`` ones too
    where asked, without the negative ones where not ``negative``, only
    those ``keep(id, data type)`` accepts, when given); ``oracle(spec)`` is its `FamilyOracle`;
    ``generable(spec, level)`` says whether it makes cases at ``level`` (and
    if not, why); ``case_problems(spec, case)`` what makes a case from a
    folder no call the family checks (None: the element-wise rules of
    `case_folders`).

    ``overlay`` is the kind of reviewed semantics its overlays give
    (``semantics.family`` in ``specs/reviewed/<OP>.yaml``: its name and
    `Kind`); ``semantics`` the record type that kind builds and
    ``reference`` the ``cpu`` backend's computation of a spec with that
    record (None: the family's specs are computed from their formula, the
    element-wise reference); ``faults`` the ``faulty`` backend's planted
    faults of its operators, by name."""

    name: str
    claims: Callable[[Spec], tuple[bool, str]]
    generate: Callable[..., Iterator[Case]]
    oracle: Callable[[Spec], FamilyOracle]
    generable: Callable[[Spec, FeatureLevel], tuple[bool, str]]
    case_problems: Callable[[Spec, Case], Iterator[str]] | None = None
    overlay: tuple[str, Kind] | None = None
    semantics: type[Semantics] | None = None
    reference: Reference | None = None
    faults: Mapping[str, Fault] = field(default_factory=dict)


#: Every family, asked in order (the element-wise formula last: it claims any spec with a formula).
FAMILIES: tuple[Family, ...] = (
    Family("contraction", contraction_cases.claims, contraction_suite.generate, contraction_oracle.ContractionOracle.of,
           contraction_suite.generable, contraction_suite.case_problems,
           ("contraction", Kind(contraction_overlay.SCHEMA, contraction_overlay.build, contraction_overlay.against_spec)),
           Contraction, contraction_reference.compute, contraction_faults.FAULTS),
    Family("reduction", reduction_cases.claims, reduction_cases.generate, reduction_oracle.ReductionOracle.of,
           reduction_cases.generable, reduction_cases.case_problems,
           ("reduction", Kind(reduction_overlay.SCHEMA, reduction_overlay.build, reduction_overlay.against_spec)),
           Reduction, reduction_reference.compute, reduction_faults.FAULTS),
    Family("softmax", softmax_cases.claims, softmax_cases.generate, softmax_oracle.SoftmaxOracle.of,
           softmax_cases.generable, softmax_cases.case_problems,
           ("softmax", Kind(softmax_overlay.SCHEMA, softmax_overlay.build, softmax_overlay.against_spec)),
           Softmax, softmax_reference.compute, softmax_faults.FAULTS),
    Family("sequence", sequence_cases.claims, sequence_cases.generate, sequence_oracle.SequenceOracle.of,
           sequence_cases.generable, sequence_cases.case_problems,
           ("sequence", Kind(sequence_overlay.SCHEMA, sequence_overlay.build, sequence_overlay.against_spec)),
           SequenceOp, sequence_reference.compute, sequence_faults.FAULTS),
    Family("value-scale", value_scale_cases.claims, value_scale_cases.generate, value_scale_oracle.ValueScaleOracle.of,
           value_scale_cases.generable, value_scale_cases.case_problems,
           ("value-scale", Kind(value_scale_overlay.SCHEMA, value_scale_overlay.build, value_scale_overlay.against_spec)),
           ValueScale, value_scale_reference.compute, value_scale_faults.FAULTS),
    Family("window", window_cases.claims, window_cases.generate, window_oracle.WindowOracle.of,
           window_cases.generable, window_cases.case_problems,
           ("window", Kind(window_overlay.SCHEMA, window_overlay.build, window_overlay.against_spec)),
           Window, window_reference.compute, window_faults.FAULTS),
    Family("element-wise formula", elementwise_oracle.claims, elementwise_cases.generate,
           elementwise_oracle.FormulaOracle.of, elementwise_cases.is_runnable, None,
           ("formula", Kind(elementwise_overlay.SCHEMA, elementwise_overlay.build, elementwise_overlay.against_spec)),
           None, None, elementwise_faults.FAULTS),
)


#: The entry-point group under which another package registers a `Family` record
#: (``[project.entry-points."dmlconform.families"]``: ``name = "module:RECORD"``).
GROUP = "dmlconform.families"


@functools.cache
def registered() -> tuple[Family, ...]:
    """Every family: those registered under `GROUP` (by entry-point name),
    then `FAMILIES`.  A registered family is asked first, so it may claim
    what a built-in one would; one that cannot be loaded, or is no `Family`,
    is an InputError naming it (a run without it would test less than it says)."""
    plugged = []
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        try:
            family = point.load()
        except Exception as exc:  # noqa: BLE001 - a third party's module may raise anything on import: one error naming it
            raise InputError(f"operator family {point.name!r} ({point.value}) could not be loaded: "
                             f"{type(exc).__name__}: {exc}") from None
        if not isinstance(family, Family):
            raise InputError(f"operator family {point.name!r} ({point.value}) is a {type(family).__name__}, not a "
                             "dmlconform.families.Family record")
        plugged.append(family)
    names = [f.name for f in (*plugged, *FAMILIES)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"operator families registered twice: {', '.join(twice)}")
    return (*plugged, *FAMILIES)


def overlay_kinds() -> Mapping[str, Kind]:
    """``semantics.family`` -> its kind, for every family that has one."""
    return MappingProxyType({f.overlay[0]: f.overlay[1] for f in registered() if f.overlay is not None})


def references() -> Mapping[type[Semantics], Reference]:
    """The CPU reference of each kind of reviewed semantics that has its own."""
    return MappingProxyType({f.semantics: f.reference for f in registered()
                             if f.semantics is not None and f.reference is not None})


def faults() -> Mapping[str, Fault]:
    """Every family's planted faults, by name (a name is one family's only)."""
    found: dict[str, Fault] = {}
    for family in registered():
        for name, fault in family.faults.items():
            if name in found:
                raise InputError(f"fault {name!r} is planted by two families; name it after its family")
            found[name] = fault
    return MappingProxyType(found)


def family_of(spec: Spec) -> tuple[Family | None, str]:
    """The family that tests ``spec`` and "ok", or None and why none does
    (each family's reason, the first one's when they agree; a family that
    says nothing, the spec being of no kind it knows, is left out)."""
    reasons = []
    for family in registered():
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
