"""What the case generators of the reviewed-semantics families share
(contraction, softmax, reduction, sequence; issue #24 follow-up).

Each family makes its cases from its semantics, the support tables and the
level (`cases.contraction`, `cases.softmax`, `cases.reduction`,
`cases.sequence`).  Three things they all did alike live here once: the
support rows a family's shapes start from (and the one reason there are
none), the ``generable`` answer built on that reason, the padded
layout's strides, and the check that a spec has the family's semantics
(`semantics_as`, which the oracles' ``of`` use too) and the seed's.  Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from dmlconform.errors import InputError
from dmlconform.spec.model import FeatureLevel, Spec, TensorSupport
from dmlconform.spec.semantics import Semantics

S = TypeVar("S", bound=Semantics)


def semantics_as(spec: Spec, kind: type[S], family: str) -> S:
    """``spec``'s reviewed semantics where they are a ``kind`` (the
    ``family``'s record); InputError naming the overlay to write otherwise."""
    if not isinstance(spec.semantics, kind):
        raise InputError(f"{spec.operator}: no reviewed {family} semantics (specs/reviewed/{spec.operator}.yaml)")
    return spec.semantics


def rows_at(spec: Spec, level: FeatureLevel, ranks: tuple[int, ...], *tensors: str) -> list[TensorSupport]:
    """The support rows of ``tensors`` at ``level``, for a family whose
    dimension counts there are ``ranks``; InputError (the reason
    `generable` gives) where there is no table, no row of one of them or
    no dimension count at ``level``."""
    table = spec.table_at(level)
    rows = [table.row(t) for t in tensors] if table is not None else []
    found = [r for r in rows if r is not None]
    if not ranks or len(found) != len(tensors):
        raise InputError(f"{spec.operator}: no cases at {level.short}: no support table or dimension count there")
    return found


def generable(shapes: Callable[[], object]) -> tuple[bool, str]:
    """A family's ``generable(spec, level)`` answer from making its shapes
    (``shapes``): (True, "ok"), or (False, the InputError's reason)."""
    try:
        shapes()
    except InputError as exc:
        return False, str(exc)
    return True, "ok"


def check_seed(seed: object) -> None:
    """A family's ``generate`` takes a whole number >= 0 as its seed (the
    streams of `cases.draws.stream_key`); InputError showing the value otherwise."""
    if not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed={seed!r} must be an integer >= 0")


def padded_strides(sizes: tuple[int, ...], *, gap: int = 3) -> tuple[int, ...]:
    """Strides of the families' ``padded`` layout: row-major, with ``gap``
    elements after every innermost row (the gaps hold a value that shows
    wherever an implementation reads them)."""
    strides, step = [], 1
    for i, size in enumerate(reversed(sizes)):
        strides.append(step)
        step = step * size + (gap if i == 0 else 0)
    return tuple(reversed(strides))
