"""Planted faults of FOLD and UNFOLD for the ``faulty`` backend (issue #35
item 7): each rewrites the output the reference computed the way a
plausible bug would.  `FAULTS` names them (merged into the window family's
`families.window.faults.FAULTS`); tests/families/window/test_fold.py checks
that each is caught by name."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.window.fold import Geometry, blocks, geometry, sides
from dmlconform.families.window.fold_reference import fold, unfold
from dmlconform.families.window.semantics import Window
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype


def _planted(operation: str, change: Callable[[Geometry], Geometry]) -> Fault:
    """A fault recomputing ``operation``'s output (FOLD in float64) with ``change`` applied to the geometry."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Window) or sem.operation != operation:
            return
        geo, s = geometry(sem, case.attribute_map()), sides(sem, case)
        x = case.input(sem.input).view(buffers[sem.input])
        out = case.outputs[0]
        y = unfold(x, change(geo), counts=blocks(geo, s.image.sizes[2:])) if operation == "unfold" else fold(x.astype(np.float64), change(geo),
                                                                       s.image.sizes)
        writable_view(out, buffers[out.name])[...] = y.astype(numpy_dtype(out.dtype))
    return fault


def _last_wins(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """FOLD storing each block element where its tap lands instead of adding it: the last patch wins."""
    sem = spec.semantics
    if not isinstance(sem, Window) or sem.operation != "fold":
        return
    geo, s = geometry(sem, case.attribute_map()), sides(sem, case)
    n, c, *spatial = s.image.sizes
    counts = blocks(geo, tuple(spatial))
    taps = case.input(sem.input).view(buffers[sem.input]).reshape(n, c, math.prod(geo.window), *counts)
    padded = np.zeros((n, c, *(z + a + b for z, a, b in zip(spatial, geo.start, geo.end))), taps.dtype)
    for k, offset in enumerate(itertools.product(*(range(w) for w in geo.window))):
        where = tuple(slice(o * d, o * d + (b - 1) * st + 1, st)
                      for o, d, b, st in zip(offset, geo.dilations, counts, geo.strides))
        padded[(slice(None), slice(None), *where)] = taps[:, :, k]
    out = case.outputs[0]
    crop = tuple(slice(a, a + z) for a, z in zip(geo.start, spatial))
    writable_view(out, buffers[out.name])[...] = padded[(slice(None), slice(None), *crop)]


def _plus_zero(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """UNFOLD's copy made through an add of +0 (a gather fused with a zero bias): -0 becomes +0."""
    sem = spec.semantics
    if not isinstance(sem, Window) or sem.operation != "unfold":
        return
    out = case.outputs[0]
    view = writable_view(out, buffers[out.name])
    view[...] = view + np.zeros((), view.dtype)


def _swapped(geo: Geometry) -> Geometry:
    return replace(geo, start=geo.end, end=geo.start)


def _undilated(geo: Geometry) -> Geometry:
    return replace(geo, dilations=(1,) * len(geo.dilations))


FAULTS: Mapping[str, Fault] = {
    "fold-no-sum": _last_wins,
    "fold-padding-swapped": _planted("fold", _swapped),
    "unfold-dilation-ignored": _planted("unfold", _undilated),
    "unfold-padding-swapped": _planted("unfold", _swapped),
    "unfold-negative-zero-lost": _plus_zero,
}
