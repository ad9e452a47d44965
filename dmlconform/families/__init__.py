"""Operator families: for each, which specs it tests, how it makes their
cases, its oracle, its CPU reference, its planted faults and the kind of
reviewed semantics its overlays give.  DESIGN.md "Operator families";
docs/architecture.md "How to add an operator family".

A family is a package ``families/<family>/`` and one `Family` record in
`FAMILIES`; a family of another package is a `Family` record registered
under the entry-point group `GROUP` (`registered` asks those first).  Every
other registry is read off them: the overlay kinds spec loading knows
(`overlay_kinds`, through `catalog`), the ``cpu`` backend's references
(`reference_of`) and the ``faulty`` backend's planted faults (`faults`).  The runner and ``run`` ask `family_of(spec)` which
family tests a spec (the first that claims it), then use its ``generate``
for cases and its ``oracle`` (behind the protocol of `oracles.base`) for
expected values.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any

from dmlconform.cases.model import Case, Fault, Planned, Reference
from dmlconform.errors import InputError
from dmlconform.oracles.base import FamilyOracle
from dmlconform.spec.model import DataType, FeatureLevel, Semantics, Spec
from dmlconform.spec.reviewed_checks import Kind

__all__ = ["FAMILIES", "GROUP", "Family", "Later", "LaterFaults", "LaterKind", "Oracles", "cases_of", "faults", "family_of", "holds",
           "make", "overlay_kinds", "preload", "reference_of", "registered"]

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
    `Kind`, or the `LaterKind` of the module that makes it); ``reference``
    the ``cpu`` backend's computation of the specs it claims (None: they are
    computed from their formula, the element-wise reference); ``faults``
    the ``faulty`` backend's planted faults of its operators, by name."""

    name: str
    claims: Callable[[Spec], tuple[bool, str]]
    generate: Callable[..., Iterator[Case]]
    oracle: Callable[[Spec], FamilyOracle]
    generable: Callable[[Spec, FeatureLevel], tuple[bool, str]]
    case_problems: Callable[[Spec, Case], Iterator[str]] | None = None
    overlay: tuple[str, Kind | LaterKind] | None = None
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


class LaterKind:
    """The overlay kind of module ``module`` (its ``SCHEMA``, ``build`` and
    ``against_spec``), imported and made when an overlay first names it
    (`overlay_kinds`): a run reads the overlays of the operators it tests,
    and a process that reads none (a worker) imports no family's overlay
    nor semantics (issue #31: about 25 ms a process)."""

    __slots__ = ("module",)

    def __init__(self, module: str) -> None:
        self.module = module

    def load(self) -> Kind:
        """The kind, made once per module (`Kind` is equal only to itself)."""
        return _kind(self.module)

    def __repr__(self) -> str:
        return f"{self.module}:SCHEMA,build,against_spec"


@functools.cache
def _kind(module: str) -> Kind:
    found = importlib.import_module(module)
    return Kind(found.SCHEMA, found.build, found.against_spec)


def holds(kind: type[Semantics]) -> Callable[[Spec], tuple[bool, str]]:
    """A family's ``claims`` that tests every spec whose reviewed overlay
    gives semantics of ``kind`` (and says nothing of other specs:
    `family_of`)."""
    def claims(spec: Spec) -> tuple[bool, str]:
        return (True, "ok") if isinstance(spec.semantics, kind) else (False, "")
    return claims


def _holds_named(module: str, name: str) -> Callable[[Spec], tuple[bool, str]]:
    """`holds` of the record type ``name`` of module ``module``, without
    importing it: a spec's semantics are such a record only once that module
    is imported (its overlay's kind built them, or unpickling brought it)."""
    def claims(spec: Spec) -> tuple[bool, str]:
        found = sys.modules.get(module)
        return holds(getattr(found, name))(spec) if found is not None else (False, "")
    return claims


def _family(name: str, package: str, kind: str, oracle: str, *, cases: str = "cases", prefix: str = "") -> Family:
    """A family of this package, ``families/<package>/``, whose overlays
    (``semantics.family: <name>``) give semantics of its record type
    ``kind`` (a class of its semantics module); its overlay kind, cases,
    oracle (the class ``oracle`` of its oracle module), reference and faults
    are imported when first used (`LaterKind`, `Later`).  ``prefix`` starts
    the modules' names where a package holds two families (``roi_cases``,
    ``roi_oracle``, ...)."""
    here = f"{__name__}.{package}.{prefix}"
    return Family(name, _holds_named(f"{here}semantics", kind), Later(f"{here}{cases}", "generate"),
                  Later(f"{here}oracle", f"{oracle}.of"), Later(f"{here}{cases}", "generable"),
                  Later(f"{here}{cases}", "case_problems"), (name, LaterKind(f"{here}overlay")),
                  Later(f"{here}reference", "compute"), LaterFaults(f"{here}faults"))


#: Every family, asked in order (the element-wise formula last: it claims any spec with a formula).
FAMILIES: tuple[Family, ...] = (
    _family("contraction", "contraction", "Contraction", "ContractionOracle", cases="suite"),
    _family("reduction", "reduction", "Reduction", "ReductionOracle"),
    _family("softmax", "softmax", "Softmax", "SoftmaxOracle"),
    _family("sequence", "sequence", "SequenceOp", "SequenceOracle"),
    _family("value-scale", "value_scale", "ValueScale", "ValueScaleOracle"),
    _family("index-map", "index_map", "IndexMap", "IndexMapOracle", cases="suite"),
    _family("window", "window", "Window", "WindowOracle"),
    _family("normalization", "normalization", "Normalization", "NormalizationOracle"),
    _family("interpolation", "interpolation", "Resample", "InterpolationOracle"),
    _family("roi", "interpolation", "Roi", "RoiOracle", prefix="roi_"),
    Family("element-wise formula", Later(f"{__name__}.elementwise.binding", "is_runnable"),
           Later(f"{__name__}.elementwise.cases", "generate"), Later(f"{__name__}.elementwise.oracle", "FormulaOracle.of"),
           Later(f"{__name__}.elementwise.binding", "is_runnable"), None,
           ("formula", LaterKind(f"{__name__}.elementwise.overlay")), None, LaterFaults(f"{__name__}.elementwise.faults")),
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
    """``semantics.family`` -> its kind, for every family that has one (a
    `LaterKind` made when first looked up)."""
    return _Kinds({f.overlay[0]: f.overlay[1] for f in registered() if f.overlay is not None})


class _Kinds(Mapping[str, Kind]):
    """`overlay_kinds`: each kind made when looked up."""

    def __init__(self, given: Mapping[str, Kind | LaterKind]) -> None:
        self.given = given

    def __getitem__(self, name: str) -> Kind:
        found = self.given[name]
        return found.load() if isinstance(found, LaterKind) else found

    def __iter__(self) -> Iterator[str]:
        return iter(self.given)

    def __len__(self) -> int:
        return len(self.given)


def reference_of(spec: Spec) -> Reference:
    """The CPU reference of ``spec``, a spec with reviewed semantics: its
    family's (`family_of`); an InputError where that family has none."""
    family, why = family_of(spec)
    if family is None or family.reference is None:
        raise InputError(f"{spec.operator}: no CPU reference for its semantics "
                         f"({why if family is None else f'family {family.name} has none'})")
    return family.reference


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
