"""Planted faults of the normalization family for the ``faulty`` backend
(issue #36 item 7): each recomputes the output the way a plausible bug
would, after the reference computed it.  `FAULTS` names them;
tests/test_mutants.py checks that each is caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.normalization.cases import axes_of, centres, divides, epsilon_of, lrn_of, operands
from dmlconform.families.normalization.reference import lrn, mean_variance
from dmlconform.families.normalization.semantics import Normalization
from dmlconform.spec import model as m


def _planted(axes: Callable[[tuple[int, ...], int], tuple[int, ...]] | None = None, **change: Any) -> Fault:
    """A fault that recomputes the output with the reference's ``change``
    (or with the axes ``axes(axes, rank)`` gives)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Normalization) or sem.operation != "mean_variance":
            return
        ops, given = operands(sem, case, dict(buffers)), axes_of(sem, case)
        used = given if axes is None else axes(given, ops.x.ndim)
        out = case.outputs[0]
        writable_view(out, buffers[out.name])[...] = mean_variance(ops, used, epsilon_of(sem, case),
                                                                   divides(sem, case), out.dtype,
                                                                   centre=centres(sem, case), **change)
    return fault


def _off_centre(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """LOCAL_RESPONSE_NORMALIZATION's window one element later than centred (a loop starting at the element)."""
    sem = spec.semantics
    if not isinstance(sem, Normalization) or sem.operation != "lrn":
        return
    out = case.outputs[0]
    x = case.input(sem.input).view(buffers[sem.input])
    writable_view(out, buffers[out.name])[...] = lrn(x, axes_of(sem, case), *lrn_of(sem, case), out.dtype, shift=-1)


def _last_only(axes: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """Only the last dimension normalized, whatever Axes says (a kernel written for layer normalization)."""
    return (rank - 1,)


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "norm-sample-variance": _planted(ddof=1),
    "norm-epsilon-outside-sqrt": _planted(outside=True),
    "norm-wrong-axes": _planted(_last_only),
    "norm-lrn-window-off-centre": _off_centre,
}
