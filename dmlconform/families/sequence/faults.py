"""Planted faults of the sequence family for the ``faulty`` backend (issue
#24 item 7): each recomputes a TOP_K or cumulative output the way a
plausible bug would, after the reference computed it.  `FAULTS`
names them; tests/test_mutants.py checks that each is caught."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.sequence.cases import attributes_of, placed, sequences
from dmlconform.families.sequence.reference import cumulative, rank_keys
from dmlconform.families.sequence.semantics import Operation, SequenceOp
from dmlconform.spec import model as m


def _sequence(spec: m.Spec, operation: Operation | None) -> SequenceOp | None:
    """``spec``'s sequence semantics where they are a top-k (``operation``
    TOP_K) or a scan (None); None: a fault here leaves it alone."""
    sem = spec.semantics
    if not isinstance(sem, SequenceOp) or (sem.operation is Operation.TOP_K) != (operation is Operation.TOP_K):
        return None
    return sem


def _write(case: Case, buffers: Buffers, name: str, values: np.ndarray) -> None:
    out = next(t for t in case.outputs if t.name == name)
    writable_view(out, buffers[name])[...] = values


def topk_ties_by_last_index(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Ties ordered by descending index (an unstable sort's usual outcome
    when it scans from the end), and the last of equal values selected."""
    sem = _sequence(spec, Operation.TOP_K)
    if sem is None:
        return
    a = attributes_of(sem, case)
    x = sequences(sem, case)  # the case's own input: in place, the buffer already holds the output
    backwards = rank_keys(x[..., ::-1])
    order = np.argsort(~backwards if not a.increasing else backwards, axis=-1, kind="stable")[..., :a.k]
    chosen = (x.shape[-1] - 1) - order
    _write(case, buffers, sem.output, placed(sem, case, np.take_along_axis(x, chosen, axis=-1)))
    if sem.indices is not None:
        _write(case, buffers, sem.indices, placed(sem, case, chosen))


def _rescan(spec: m.Spec, case: Case, buffers: Buffers, *, flip: bool = False, inclusive: bool = False,
            skip_first: bool = False) -> None:
    """The reference scan again with one thing wrong: the direction
    (``flip``), the exclusive flag ignored (``inclusive``), or the first
    term of every tally in traversal order left out (``skip_first``)."""
    sem = _sequence(spec, None)
    if sem is None:
        return
    a = attributes_of(sem, case)
    x = sequences(sem, case)  # the case's own input: in place, the buffer already holds the output
    product = sem.operation is Operation.CUMULATIVE_PRODUCT
    reverse = a.increasing if flip else not a.increasing
    if skip_first and x.shape[-1] > 1:
        x = x.copy()
        x[..., -1 if reverse else 0] = 1 if product else 0
    tally = cumulative(x, product=product, reverse=reverse, exclusive=a.exclusive and not inclusive, dtype=case.dtype)
    _write(case, buffers, sem.output, placed(sem, case, tally))


def scan_direction_reversed(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """AxisDirection read the other way round."""
    _rescan(spec, case, buffers, flip=True)


def scan_exclusive_ignored(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """HasExclusiveSum / HasExclusiveProduct ignored: every tally inclusive."""
    _rescan(spec, case, buffers, inclusive=True)


def scan_dropped_term(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """The first term of each sequence (in traversal order) left out of every tally (a loop starting at 1)."""
    _rescan(spec, case, buffers, skip_first=True)


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "topk-ties-by-last-index": topk_ties_by_last_index,
    "scan-direction-reversed": scan_direction_reversed,
    "scan-exclusive-ignored": scan_exclusive_ignored,
    "scan-dropped-term": scan_dropped_term,
}
