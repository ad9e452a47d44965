"""Planted faults of the normalization family for the ``faulty`` backend
(issue #36 item 7): each recomputes the output the way a plausible bug
would, after the reference computed it.  `FAULTS` names them;
tests/test_mutants.py checks that each is caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.normalization.cases import (
    activation_of,
    axes_of,
    centres,
    divides,
    epsilon_of,
    lrn_of,
    operands,
)
from dmlconform.families.normalization.reference import lrn, mean_variance, moments
from dmlconform.families.normalization.semantics import Normalization
from dmlconform.spec import model as m


def _planted(axes: Callable[[tuple[int, ...], int], tuple[int, ...]] | None = None, **change: Any) -> Fault:
    """A fault that recomputes the output with the reference's ``change``
    (or with the axes ``axes(axes, rank)`` gives)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Normalization) or sem.operation not in ("mean_variance", "batch_training"):
            return
        ops, given = operands(sem, case, dict(buffers)), axes_of(sem, case)
        used = given if axes is None else axes(given, ops.x.ndim)
        out = case.outputs[0]
        writable_view(out, buffers[out.name])[...] = mean_variance(ops, used, epsilon_of(sem, case),
                                                                   divides(sem, case), out.dtype,
                                                                   centre=centres(sem, case),
                                                                   **{"fused": activation_of(sem, case), **change})
    return fault


def _off_centre(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """LOCAL_RESPONSE_NORMALIZATION's window one element later than centred (a loop starting at the element)."""
    sem = spec.semantics
    if not isinstance(sem, Normalization) or sem.operation != "lrn":
        return
    out = case.outputs[0]
    x = case.input(sem.input).view(buffers[sem.input])
    writable_view(out, buffers[out.name])[...] = lrn(x, axes_of(sem, case), *lrn_of(sem, case), out.dtype, shift=-1)


def _statistic(output: str, *, ddof: int = 0, epsilon: bool = False) -> Fault:
    """BATCH_NORMALIZATION_TRAINING's mean or variance output (``output``: the semantics' role) rewritten: the
    variance divided by N - ``ddof``, or (``epsilon``) with Epsilon added."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Normalization) or getattr(sem, output) is None:
            return
        ops = operands(sem, case, dict(buffers))
        mean, variance = moments(ops.x, axes_of(sem, case), case.dtype, ddof=ddof)
        target = next(o for o in case.outputs if o.name == getattr(sem, output))
        value = mean if output == "output_mean" else variance
        if epsilon:
            value = (value.astype(np.float32) + np.float32(epsilon_of(sem, case))).astype(value.dtype)
        writable_view(target, buffers[target.name])[...] = value
    return fault


def _last_only(axes: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """Only the last dimension normalized, whatever Axes says (a kernel written for layer normalization)."""
    return (rank - 1,)


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "norm-sample-variance": _planted(ddof=1),
    "norm-epsilon-outside-sqrt": _planted(outside=True),
    "norm-wrong-axes": _planted(_last_only),
    "norm-lrn-window-off-centre": _off_centre,
    "norm-batch-sample-variance-output": _statistic("output_variance", ddof=1),
    "norm-batch-variance-output-plus-epsilon": _statistic("output_variance", epsilon=True),
    "norm-fused-add-after-activation": _planted(add_after=True),
    "norm-fused-activation-ignored": _planted(fused=None),
}
