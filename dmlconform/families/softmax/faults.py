"""Planted faults of the softmax family for the ``faulty`` backend (issue
#24 item 7): each recomputes a softmax, log-softmax or hardmax output the
way a plausible bug would, after the reference computed it.
`FAULTS` names them; tests/test_mutants.py checks that each
is caught, and tests/families/softmax/ where."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.softmax.cases import axes_of
from dmlconform.families.softmax.reference import FUNCTIONS
from dmlconform.families.softmax.semantics import Function, Softmax
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

#: One group computation: (x in the working type, rows of the reduced axes moved last) -> the same shape.
Rows = Callable[[np.ndarray], np.ndarray]


def _apply(spec: m.Spec, case: Case, buffers: Buffers, functions: set[Function], rows_fn: Rows,
           axes: Callable[[Softmax, Case], tuple[int, ...]] = axes_of) -> None:
    """``rows_fn`` over the groups of ``axes`` (sorted), written into the output (only for ``functions``)."""
    sem = spec.semantics
    if not isinstance(sem, Softmax) or sem.function not in functions:
        return
    reduced = tuple(sorted(axes(sem, case)))
    x = case.input(sem.input).view(buffers[sem.input])
    work = np.float32 if case.dtype is m.DataType.FLOAT16 else numpy_dtype(case.dtype)
    kept = [d for d in range(x.ndim) if d not in reduced]
    moved = np.transpose(x.astype(work), kept + list(reduced))
    rows = moved.reshape(-1, int(np.prod([x.shape[a] for a in reduced])))
    y = np.transpose(rows_fn(rows).reshape(moved.shape), np.argsort(kept + list(reduced)))
    out = case.outputs[0]
    buf = buffers[out.name]
    writable_view(out, buf)[...] = y


def _unshifted(rows: np.ndarray) -> np.ndarray:
    e = np.exp(rows)
    return e / e.sum(axis=1, keepdims=True)


def _dropped(rows: np.ndarray) -> np.ndarray:
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return e / e[:, :-1].sum(axis=1, keepdims=True) if rows.shape[1] > 1 else e / e


def _last_tie(rows: np.ndarray) -> np.ndarray:
    out = np.zeros_like(rows)
    last = rows.shape[1] - 1 - np.argmax(rows[:, ::-1], axis=1)
    out[np.arange(rows.shape[0]), last] = 1
    return out


def _log_of(fn: Rows) -> Rows:
    return lambda rows: np.log(fn(rows))


def no_max_subtraction(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """exp(x) / sum(exp(x)) as the page writes it, in the working type: overflows for inputs near 100."""
    _apply(spec, case, buffers, {Function.SOFTMAX}, _unshifted)
    _apply(spec, case, buffers, {Function.LOG_SOFTMAX}, _log_of(_unshifted))


def _shifted(rows: np.ndarray) -> np.ndarray:
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def log_of_softmax(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Log-softmax as log(softmax(x)), the softmax (max subtracted) rounded to the working type
    first: -inf where it underflows, for an exact result such as -156 (issue #32 item 2)."""
    _apply(spec, case, buffers, {Function.LOG_SOFTMAX}, _log_of(_shifted))


def dropped_term(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """The last element of each group left out of the sum (a loop bound off by one)."""
    _apply(spec, case, buffers, {Function.SOFTMAX}, _dropped)
    _apply(spec, case, buffers, {Function.LOG_SOFTMAX}, _log_of(_dropped))


def _wrong_axes(sem: Softmax, case: Case) -> tuple[int, ...]:
    """The first dimension of size above 1 that should not be reduced (the right ones where there is none)."""
    right = axes_of(sem, case)
    sizes = case.outputs[0].sizes
    return next(((d,) for d, s in enumerate(sizes) if s > 1 and d not in right), right)


def wrong_axis(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """The function computed over another dimension than the one the case reduces."""
    sem = spec.semantics
    if isinstance(sem, Softmax):
        fn = FUNCTIONS[sem.function]
        _apply(spec, case, buffers, set(Function), lambda rows: fn(rows, (1,)), _wrong_axes)


def hardmax_last_tie(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Hardmax's 1 at the last largest element of a group instead of the first."""
    _apply(spec, case, buffers, {Function.HARDMAX}, _last_tie)


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "softmax-no-max-subtraction": no_max_subtraction,
    "log-softmax-of-softmax": log_of_softmax,
    "softmax-dropped-term": dropped_term,
    "softmax-wrong-axis": wrong_axis,
    "hardmax-last-tie": hardmax_last_tie,
}
