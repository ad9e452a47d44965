"""Planted faults of the reduction family for the ``faulty`` backend (issue
#24 item 7): each recomputes a REDUCE, ARGMAX or ARGMIN output the way a
plausible bug would, after the reference computed it.
`FAULTS` names them; tests/test_mutants.py checks that each
is caught, and where."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.reduction.cases import axes_of, function_of, last_wins
from dmlconform.families.reduction.reference import arg, reduce
from dmlconform.families.reduction.semantics import ARG_FUNCTIONS, Reduction
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype


def _reduction(spec: m.Spec) -> Reduction | None:
    """``spec``'s reduction semantics (None: a fault here leaves it alone)."""
    return spec.semantics if isinstance(spec.semantics, Reduction) else None


def _write(case: Case, buffers: Buffers, values: np.ndarray) -> None:
    """``values`` (the output's logical shape) written into the output's buffer."""
    out = case.outputs[0]
    buf = buffers[out.name]
    view = writable_view(out, buf)
    view[...] = values.astype(numpy_dtype(out.dtype)).reshape(out.sizes)


def _compute(sem: Reduction, case: Case, x: np.ndarray, axes: tuple[int, ...], *, last: bool) -> np.ndarray:
    """The reference's result over ``x`` and ``axes`` (float32 for FLOAT16 terms)."""
    function = function_of(sem, case)
    if function in ARG_FUNCTIONS:
        return arg(x, axes, function, last=last)
    return reduce(x.astype(np.float32) if case.dtype is m.DataType.FLOAT16 else x, axes, function)


def dropped_term(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """The last term of the last reduced axis left out of every group (a loop bound off by one)."""
    sem = _reduction(spec)
    axes = tuple(sorted(axes_of(sem, case))) if sem is not None else ()
    if sem is None or not axes or case.inputs[0].sizes[axes[-1]] < 2:
        return
    x = case.inputs[0].view(buffers.get(case.inputs[0].name))
    shorter = np.take(x, np.arange(x.shape[axes[-1]] - 1), axis=axes[-1])
    _write(case, buffers, _compute(sem, case, shorter, axes, last=last_wins(sem, case)))


def wrong_axis(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """One reduced axis swapped for another of the same length (the axis
    numbered from the other end, as a caller mixing up orders would): the
    result has the right shape and the wrong values."""
    sem = _reduction(spec)
    axes = axes_of(sem, case) if sem is not None else ()
    sizes = case.inputs[0].sizes
    other = next((b for b in range(len(sizes)) if len(axes) == 1 and b != axes[0] and sizes[b] == sizes[axes[0]]),
                 None)
    if sem is None or other is None:
        return
    x = case.inputs[0].view(buffers.get(case.inputs[0].name))
    wrong = _compute(sem, case, x, (other,), last=last_wins(sem, case))
    if wrong.ndim < x.ndim:  # an arg result drops the axis: give it back
        wrong = np.expand_dims(wrong, other)
    _write(case, buffers, np.swapaxes(wrong, axes[0], other))


def tie_flipped(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """ARGMAX/ARGMIN ties resolved the other way (the last index where the first is asked, and back)."""
    sem = _reduction(spec)
    if sem is None or function_of(sem, case) not in ARG_FUNCTIONS:
        return
    x = case.inputs[0].view(buffers.get(case.inputs[0].name))
    _write(case, buffers, _compute(sem, case, x, tuple(sorted(axes_of(sem, case))), last=not last_wins(sem, case)))


def lse_no_max_subtraction(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """LOG_SUM_EXP as log(sum(exp(x))) in float32 without subtracting the largest term: +inf where
    exp overflows (x near 104), -inf where every exp underflows (issue #32 item 2)."""
    sem = _reduction(spec)
    if sem is None or function_of(sem, case) != "LOG_SUM_EXP" or not case.dtype.is_float:
        return
    x = case.inputs[0].view(buffers.get(case.inputs[0].name))
    work = np.float64 if case.dtype is m.DataType.FLOAT64 else np.float32
    with np.errstate(over="ignore", divide="ignore"):
        _write(case, buffers, np.log(np.exp(x.astype(work)).sum(axis=tuple(sorted(axes_of(sem, case))),
                                                                 keepdims=True, dtype=work)))


def float16_accumulation(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """FLOAT16 terms of SUM, AVERAGE, L1 and SUM_SQUARE summed in FLOAT16 one at a time, while declaring float32."""
    sem = _reduction(spec)
    if sem is None or case.dtype is not m.DataType.FLOAT16 or function_of(sem, case) not in _SUMMED:
        return
    function, axes = function_of(sem, case), tuple(sorted(axes_of(sem, case)))
    x = case.inputs[0].view(buffers.get(case.inputs[0].name))
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    terms = np.transpose(x, kept + axes).reshape(tuple(x.shape[i] for i in kept) + (-1,))
    terms = _SUMMED[function](terms).astype(np.float16)
    total = np.zeros(terms.shape[:-1], np.float16)
    for k in range(terms.shape[-1]):
        total = (total + terms[..., k]).astype(np.float16)
    if function == "AVERAGE":
        total = (total / np.float16(terms.shape[-1])).astype(np.float16)
    _write(case, buffers, np.expand_dims(total, tuple(range(len(kept), x.ndim))))


#: The summing functions, by what they sum.
_SUMMED: dict[str, Callable[[np.ndarray], np.ndarray]] = {"SUM": lambda t: t, "AVERAGE": lambda t: t, "L1": np.abs, "SUM_SQUARE": lambda t: t * t}


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "reduce-dropped-term": dropped_term,
    "reduce-wrong-axis": wrong_axis,
    "reduce-arg-tie-flipped": tie_flipped,
    "reduce-float16-accumulation": float16_accumulation,
    "reduce-lse-no-max-subtraction": lse_no_max_subtraction,
}
