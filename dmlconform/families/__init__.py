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
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import MappingProxyType, ModuleType
from typing import Any

from dmlconform.cases.model import Case, Fault, Planned, Reference
from dmlconform.errors import InputError
from dmlconform.families.contraction import overlay as contraction_overlay
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.families.elementwise import overlay as elementwise_overlay
from dmlconform.families.index_map import overlay as index_map_overlay
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.families.interpolation import overlay as interpolation_overlay
from dmlconform.families.interpolation import roi_overlay
from dmlconform.families.interpolation.roi_semantics import Roi
from dmlconform.families.interpolation.semantics import Resample
from dmlconform.families.normalization import overlay as normalization_overlay
from dmlconform.families.normalization.semantics import Normalization
from dmlconform.families.reduction import overlay as reduction_overlay
from dmlconform.families.reduction.semantics import Reduction
from dmlconform.families.sequence import overlay as sequence_overlay
from dmlconform.families.sequence.semantics import SequenceOp
from dmlconform.families.softmax import overlay as softmax_overlay
from dmlconform.families.softmax.semantics import Softmax
from dmlconform.families.value_scale import overlay as value_scale_overlay
from dmlconform.families.value_scale.semantics import ValueScale
from dmlconform.families.window import overlay as window_overlay
from dmlconform.families.window.semantics import Window
from dmlconform.oracles.base import FamilyOracle
from dmlconform.spec.model import DataType, FeatureLevel, Semantics, Spec
from dmlconform.spec.reviewed_checks import Kind

__all__ = ["FAMILIES", "GROUP", "Family", "Later", "LaterFaults", "Oracles", "cases_of", "faults", "family_of", "holds",
           "make", "overlay_kinds", "preload", "references", "registered"]

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


class Later:
    """The function ``name`` of module ``module`` (a dotted name: a class's
    method too), imported on its first call.  A run imports only the
    families it tests: a one-case repro of ELEMENT_WISE_ADD loads neither
    the contraction oracle nor the reduction generator (issue #31, item 6)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def load(self) -> Any:
        """The function, its module imported now."""
        found: Any = importlib.import_module(self.module)
        for part in self.name.split("."):
            found = getattr(found, part)
        return found

    def __repr__(self) -> str:
        return f"{self.module}:{self.name}"


class LaterFaults(Mapping[str, Fault]):
    """The ``FAULTS`` of module ``module``, imported on first use."""

    def __init__(self, module: str) -> None:
        self.module = module

    def _faults(self) -> Mapping[str, Fault]:
        faults: Mapping[str, Fault] = importlib.import_module(self.module).FAULTS
        return faults

    def __getitem__(self, name: str) -> Fault:
        return self._faults()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._faults())

    def __len__(self) -> int:
        return len(self._faults())


def holds(kind: type[Semantics]) -> Callable[[Spec], tuple[bool, str]]:
    """A family's ``claims`` that tests every spec whose reviewed overlay
    gives semantics of ``kind`` (and says nothing of other specs:
    `family_of`)."""
    def claims(spec: Spec) -> tuple[bool, str]:
        return (True, "ok") if isinstance(spec.semantics, kind) else (False, "")
    return claims


def _family(name: str, package: str, kind: type[Semantics], overlay: ModuleType, oracle: str, *,
            cases: str = "cases", prefix: str = "") -> Family:
    """A family of this package, ``families/<package>/``, whose overlays
    (``semantics.family: <name>``) give semantics of ``kind``; its cases,
    oracle (the class ``oracle`` of its oracle module), reference and faults
    are imported when first used (`Later`).  ``prefix`` starts the modules'
    names where a package holds two families (``roi_cases``, ``roi_oracle``, ...)."""
    here = f"{__name__}.{package}.{prefix}"
    return Family(name, holds(kind), Later(f"{here}{cases}", "generate"), Later(f"{here}oracle", f"{oracle}.of"),
                  Later(f"{here}{cases}", "generable"), Later(f"{here}{cases}", "case_problems"),
                  (name, Kind(overlay.SCHEMA, overlay.build, overlay.against_spec)),
                  kind, Later(f"{here}reference", "compute"), LaterFaults(f"{here}faults"))


#: Every family, asked in order (the element-wise formula last: it claims any spec with a formula).
FAMILIES: tuple[Family, ...] = (
    _family("contraction", "contraction", Contraction, contraction_overlay, "ContractionOracle", cases="suite"),
    _family("reduction", "reduction", Reduction, reduction_overlay, "ReductionOracle"),
    _family("softmax", "softmax", Softmax, softmax_overlay, "SoftmaxOracle"),
    _family("sequence", "sequence", SequenceOp, sequence_overlay, "SequenceOracle"),
    _family("value-scale", "value_scale", ValueScale, value_scale_overlay, "ValueScaleOracle"),
    _family("index-map", "index_map", IndexMap, index_map_overlay, "IndexMapOracle", cases="suite"),
    _family("window", "window", Window, window_overlay, "WindowOracle"),
    _family("normalization", "normalization", Normalization, normalization_overlay, "NormalizationOracle"),
    _family("interpolation", "interpolation", Resample, interpolation_overlay, "InterpolationOracle"),
    _family("roi", "interpolation", Roi, roi_overlay, "RoiOracle", prefix="roi_"),
    Family("element-wise formula", Later(f"{__name__}.elementwise.binding", "is_runnable"),
           Later(f"{__name__}.elementwise.cases", "generate"), Later(f"{__name__}.elementwise.oracle", "FormulaOracle.of"),
           Later(f"{__name__}.elementwise.binding", "is_runnable"), None,
           ("formula", Kind(elementwise_overlay.SCHEMA, elementwise_overlay.build, elementwise_overlay.against_spec)),
           None, None, LaterFaults(f"{__name__}.elementwise.faults")),
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


def preload(family: Family, *parts: str) -> None:
    """Import the modules of ``family``'s ``parts`` (``"generate"``,
    ``"oracle"``) now, while something else is waited for: a run imports
    its families' generators while its backend starts, a worker the
    oracles while its first cases are made (issue #31: a one-case repro)."""
    for part in parts:
        found = getattr(family, part)
        if isinstance(found, Later):
            found.load()


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


def make(spec: Spec, planned: Planned) -> Case:
    """The case ``planned`` stands for, made by ``spec``'s family as the
    whole suite makes it: generation keeps only its id, so only its values
    are drawn, and they depend on the seed and the id alone (`cases.draws`).
    ValueError where generation makes no case of that id, or several."""
    made = list(cases_of(spec, planned.level, seed=planned.seed, large=True, keep=lambda i, _: i == planned.id))
    if len(made) != 1:
        raise ValueError(f"{planned.id}: generation made {len(made)} cases of this id, not 1")
    return made[0]
