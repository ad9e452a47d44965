"""The index-map oracle's JOIN and SPLIT: per output element the position
of the input element it is, from coordinates alone (no concatenate or
split of numpy, the CPU reference's tools); compared bit for bit.

Issue #34 item 1; docs/index-map.md "JOIN and SPLIT".  The inputs' elements
are numbered end to end (input 0 in C order, then input 1, ...).  JOIN:
output coordinate c on Axis lies in the range of input k (the last whose
start is at most c) at c - start[k]; SPLIT: output j's coordinate c on
Axis is the input's c + start[j].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case, array_tensors, packed_strides
from dmlconform.compare import RELAXED_FACTOR
from dmlconform.families.index_map.joins import JoinCall, array_name, join_call
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.oracles.base import Expectation
from dmlconform.spec.model import numpy_dtype


def _position(coordinates: Sequence[np.ndarray], strides: Sequence[np.ndarray | int]) -> np.ndarray:
    total: np.ndarray = np.zeros((), dtype=np.int64)
    for c, s in zip(coordinates, strides):
        total = total + c * s
    return total


def join_positions(call: JoinCall) -> tuple[np.ndarray, ...]:
    """Per output (JOIN: the one; SPLIT: each in the array's order) the
    position of each element's source among the inputs' elements end to
    end (the output's shape)."""
    a = call.axis
    starts = np.array(call.starts, dtype=np.int64)
    if not call.join:
        strides = packed_strides(call.whole)
        found = []
        for part, start in zip(call.parts, starts):
            out = list(np.indices(part, sparse=True))
            out[a] = out[a] + start
            found.append(np.broadcast_to(_position(out, strides), part))
        return tuple(found)
    out = list(np.indices(call.whole, sparse=True))
    k = np.searchsorted(starts, out[a], side="right") - 1  # the input whose range on Axis holds the coordinate
    offsets = np.cumsum([0] + [int(np.prod(p)) for p in call.parts[:-1]], dtype=np.int64)
    table = np.array([packed_strides(p) for p in call.parts], dtype=np.int64)  # (input, dimension)
    out[a] = out[a] - starts[k]
    position = offsets[k] + _position(out, [table[k, d] for d in range(len(call.whole))])
    return (np.broadcast_to(position, call.whole),)


def join_expected(sem: IndexMap, case: Case) -> dict[str, np.ndarray]:
    """``case``'s expected outputs by name, in their type and shape."""
    call = join_call(sem, case)
    sources = array_tensors(case.inputs, array_name(sem)) if call.join else (case.input(sem.input),)
    values = np.concatenate([np.ascontiguousarray(t.view()).reshape(-1) for t in sources])
    names = [sem.output] if call.join else [t.name for t in array_tensors(case.outputs, array_name(sem))]
    dtype = numpy_dtype(case.outputs[0].dtype)
    return {n: values[p].astype(dtype) for n, p in zip(names, join_positions(call))}


@dataclass(frozen=True, slots=True, eq=False)
class JoinBatch:
    """The expected outputs of a batch end to end, one array per output in
    the cases' output order; every element exact."""

    expected: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, sem: IndexMap, cases: Sequence[Case]) -> JoinBatch:
        found = [join_expected(sem, case) for case in cases]
        names = [t.name for t in cases[0].outputs] if cases else []
        expected = tuple(np.concatenate([f[n].reshape(-1) for f in found]) for n in names)
        for e in expected:
            e.setflags(write=False)
        return cls(expected)

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        return tuple(Expectation(e[lo:hi], None, None, (), 0, RELAXED_FACTOR, True) for e in self.expected)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """Nothing beside an element: it is one input element, named by the diff's coordinates."""
        return ()
