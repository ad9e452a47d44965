"""Planted faults of JOIN and SPLIT for the ``faulty`` backend (issue #34
item 7), merged into `faults.FAULTS`: each rewrites the outputs the way a
plausible bug would, after the reference computed them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, array_tensors, writable_view
from dmlconform.families.index_map.joins import JoinCall, array_name, is_join, join_call
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.spec import model as m

#: (the call, the inputs' values in order) -> the outputs' values a bug writes, in order.
_Bug = Callable[[JoinCall, list[np.ndarray]], list[np.ndarray]]


def _planted(bug: _Bug) -> Fault:
    """A fault that recomputes JOIN's or SPLIT's outputs with ``bug`` (each
    cycled to its output's sizes where the bug's has another shape)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, IndexMap) or not is_join(sem):
            return
        call = join_call(sem, case)
        inputs = array_tensors(case.inputs, array_name(sem)) if call.join else (case.input(sem.input),)
        outputs = [t for t in case.outputs if t.name == sem.output] if call.join else \
            array_tensors(case.outputs, array_name(sem))
        wrong = bug(call, [np.array(t.view(buffers[t.name])) for t in inputs])
        for t, values in zip(outputs, wrong):
            writable_view(t, buffers[t.name])[...] = np.resize(values, t.sizes)
    return fault


def _cut(call: JoinCall, x: np.ndarray, lengths: list[int]) -> list[np.ndarray]:
    return np.split(x, np.cumsum(lengths)[:-1], axis=call.axis)


def _axis_ignored(call: JoinCall, xs: list[np.ndarray]) -> list[np.ndarray]:
    """Axis ignored: the buffers end to end, as if Axis were 0 (JOIN: the
    inputs' elements in C order one after the other; SPLIT: the input's
    elements cut into runs of each output's element count)."""
    flat = np.concatenate([x.reshape(-1) for x in xs])
    if call.join:
        return [flat]
    return np.split(flat, np.cumsum([int(np.prod(p)) for p in call.parts])[:-1])


def _order_swapped(call: JoinCall, xs: list[np.ndarray]) -> list[np.ndarray]:
    """The array taken in reverse order (JOIN: the last input first; SPLIT:
    the last output takes the input's first range)."""
    if call.join:
        return [np.concatenate(xs[::-1], axis=call.axis)]
    lengths = [p[call.axis] for p in call.parts]
    return _cut(call, xs[0], lengths[::-1])[::-1]


#: The faults by name (merged into `faults.FAULTS`).
FAULTS = {"join-split-axis-ignored": _planted(_axis_ignored),
          "join-split-order-swapped": _planted(_order_swapped)}
