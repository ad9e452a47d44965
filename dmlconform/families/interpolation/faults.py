"""Planted faults of the interpolation family for the ``faulty`` backend
(issue #36 item 7): each recomputes a resample's output the way a plausible
bug would, after the reference computed it.  `FAULTS` names them;
tests/test_mutants.py checks that each is caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.interpolation.cases import Geometry, geometry
from dmlconform.families.interpolation.reference import resample
from dmlconform.families.interpolation.semantics import DECREASING, LINEAR, NEAREST, Resample
from dmlconform.spec import model as m

#: A fault's change: the case's geometry -> the one the bug computes with and the reference's options
#: (None: no change here).
Change = Callable[[Geometry], "tuple[Geometry, dict[str, bool]] | None"]


def _planted(change: Change) -> Fault:
    """A fault that recomputes the output with ``change`` applied."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Resample):
            return
        changed = change(geometry(sem, case))
        if changed is None:
            return
        out = case.outputs[0]
        x = case.input(sem.input).view(buffers[sem.input])
        writable_view(out, buffers[out.name])[...] = resample(x, changed[0], out.sizes, out.dtype, **changed[1])
    return fault


def _offsets_swapped(geo: Geometry) -> tuple[Geometry, dict[str, bool]] | None:
    """The half-pixel map (offsets 0.5, -0.5) and the asymmetric one (0, 0) exchanged."""
    half, corner = (0.5,) * len(geo.scales), (0.0,) * len(geo.scales)
    if geo.input_offsets == half and geo.output_offsets == tuple(-v for v in half):
        return replace(geo, input_offsets=corner, output_offsets=corner), {}
    if geo.input_offsets == corner and geo.output_offsets == corner:
        return replace(geo, input_offsets=half, output_offsets=tuple(-v for v in half)), {}
    return None


def _ties_other_way(geo: Geometry) -> tuple[Geometry, dict[str, bool]] | None:
    """NEAREST_NEIGHBOR's halfway ties rounded against the rule (RoundingDirection read backwards)."""
    return (geo, {"ties_up": geo.rounding == DECREASING}) if geo.mode == NEAREST else None


def _no_edge_clamp(geo: Geometry) -> tuple[Geometry, dict[str, bool]] | None:
    """LINEAR's coordinates not clamped to the input: the edges extrapolated from their two nearest elements."""
    return (geo, {"clamp": False}) if geo.mode == LINEAR else None


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "resample-offsets-swapped": _planted(_offsets_swapped),
    "resample-ties-other-way": _planted(_ties_other_way),
    "resample-no-edge-clamp": _planted(_no_edge_clamp),
}
