"""Planted faults of the ROI align operators for the ``faulty`` backend
(issue #36 item 7): each recomputes the output the way a plausible bug
would, after the reference computed it.  `FAULTS` names them;
tests/test_mutants.py checks that each is caught."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.interpolation.roi_cases import RoiGeometry, geometry, regions
from dmlconform.families.interpolation.roi_pooling import pooled_size, spatial_scale
from dmlconform.families.interpolation.roi_reference import roi_align, roi_pool
from dmlconform.families.interpolation.roi_semantics import Roi
from dmlconform.spec import model as m


def _planted(options: Any) -> Fault:
    """A fault that recomputes the output with the reference's keywords ``options(geometry)`` (None: no change)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Roi) or sem.pooled_size is not None:
            return
        geo = geometry(sem, case)
        keywords = options(geo)
        if keywords is None:
            return
        out = case.outputs[0]
        x = case.input(sem.input).view(buffers[sem.input])
        rois, batch = regions(sem, case, buffers)
        writable_view(out, buffers[out.name])[...] = roi_align(x, rois, batch, geo, out.sizes[2:], out.dtype,
                                                               **keywords)
    return fault


def _off_by_one(geo: RoiGeometry) -> dict[str, int]:
    """Each dimension's sample count one more than the clamped quotient."""
    return {"extra_samples": 1}


def _corners_ignored(geo: RoiGeometry) -> dict[str, bool] | None:
    """AlignRegionsToCorners TRUE computed as FALSE."""
    return {"align": False} if geo.align_corners else None


def _outside_ignored(geo: RoiGeometry) -> dict[str, bool]:
    """A sample outside the input clamped to its edge instead of reading OutOfBoundsInputValue."""
    return {"read_outside": False}


def _bins_inward(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """ROI_POOLING's bins from the ceiling of o size / pooled to the floor of (o + 1) size / pooled: rounded the
    other way."""
    sem = spec.semantics
    if not isinstance(sem, Roi) or sem.pooled_size is None:
        return
    out = case.outputs[0]
    x = case.input(sem.input).view(buffers[sem.input])
    rois = case.input(sem.rois).view(buffers[sem.rois]).reshape(-1, 5)
    writable_view(out, buffers[out.name])[...] = roi_pool(x, rois, spatial_scale(sem, case), pooled_size(sem, case),
                                                          bins_inward=True)


#: The planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "roi-sample-count-off-by-one": _planted(_off_by_one),
    "roi-align-corners-ignored": _planted(_corners_ignored),
    "roi-out-of-bounds-ignored": _planted(_outside_ignored),
    "roi-pool-bins-rounded-other-way": _bins_inward,
}
