"""The shape rules of JOIN and SPLIT (issue #34): one tensor and a tensor
array (JOIN's ``InputTensors``, SPLIT's ``OutputTensors``) whose tensors
lie end to end along ``Axis``.

A case names the array's tensors ``InputTensors[0]``, ``InputTensors[1]``,
... (`spec.model.element_name`), its count field (``InputCount``,
``OutputCount``) their number.  The pages' pseudocode: every tensor of the
array has the single tensor's DimensionCount and its sizes on every
dimension but Axis; the sizes on Axis add up to the single tensor's.  What
the case module, the oracle and the reference share; nothing here imports
them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from dmlconform.cases.model import Case, array_tensors
from dmlconform.families.index_map.semantics import IndexMap, Operation


@dataclass(frozen=True, slots=True)
class JoinCall:
    """One JOIN or SPLIT: ``axis``, the sizes of the array's tensors in
    order (``parts``) and of the single tensor (``whole``)."""

    join: bool
    axis: int
    parts: tuple[tuple[int, ...], ...]
    whole: tuple[int, ...]

    @property
    def starts(self) -> tuple[int, ...]:
        """Where each part begins on Axis in the whole (the sizes before it added up)."""
        return tuple(itertools.accumulate((p[self.axis] for p in self.parts[:-1]), initial=0))


def is_join(sem: IndexMap) -> bool:
    return sem.operation in (Operation.JOIN, Operation.SPLIT)


def array_name(sem: IndexMap) -> str:
    """The tensor-array field: JOIN's input, SPLIT's output."""
    return sem.input if sem.operation is Operation.JOIN else sem.output


def join_call(sem: IndexMap, case: Case) -> JoinCall:
    """The call of ``case`` (ValueError naming a missing or malformed Axis)."""
    name = sem.axis or "Axis"
    axis = case.attribute_map().get(name)
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise ValueError(f"attribute {name}={axis!r} is not a whole number: give the axis, e.g. 1")
    join = sem.operation is Operation.JOIN
    array = array_tensors(case.inputs if join else case.outputs, array_name(sem))
    single = sem.output if join else sem.input
    whole = next((t.sizes for t in (*case.inputs, *case.outputs) if t.name == single), ())
    return JoinCall(join, axis, tuple(t.sizes for t in array), whole)


def join_problem(call: JoinCall) -> str | None:
    """What makes the parts no join of the whole along Axis (None: nothing)."""
    rank = len(call.whole)
    if not call.parts:
        return "the array has no tensor: give at least one"
    if not 0 <= call.axis < rank:
        return f"Axis {call.axis} must be in [0, {rank - 1}] (the DimensionCount - 1)"
    for k, part in enumerate(call.parts):
        other = tuple(s for d, s in enumerate(part) if d != call.axis)
        if len(part) != rank or other != tuple(s for d, s in enumerate(call.whole) if d != call.axis):
            return (f"tensor {k} of the array has sizes {list(part)}: it must have the sizes {list(call.whole)} "
                    f"on every dimension but Axis {call.axis}")
    total = sum(p[call.axis] for p in call.parts)
    if total != call.whole[call.axis]:
        return (f"the array's sizes on Axis {call.axis} add up to {total}, but the single tensor's is "
                f"{call.whole[call.axis]}: make them equal")
    return None


@dataclass(frozen=True, slots=True)
class JoinPlan:
    """One case's sizes before its values: the single tensor's ``whole``
    sizes, Axis and the parts' sizes on it, named ``variant``."""

    variant: str
    whole: tuple[int, ...]
    axis: int
    lengths: tuple[int, ...]

    def parts(self) -> tuple[tuple[int, ...], ...]:
        return tuple(self.whole[:self.axis] + (n,) + self.whole[self.axis + 1:] for n in self.lengths)


#: The sizes by dimension off Axis, from the last (a plan of rank r takes the last r).
_SIZES = (2, 1, 2, 1, 2, 3, 2, 3)
#: The parts' lengths on Axis by array length: unequal, one of them 1.
LENGTHS: Mapping[int, tuple[int, ...]] = {1: (3,), 2: (2, 1), 3: (2, 1, 3), 4: (1, 3, 2, 1)}


def plan(rank: int, axis: int, count: int, variant: str) -> JoinPlan:
    """``count`` parts of unequal lengths on ``axis`` at ``rank`` dimensions."""
    lengths = LENGTHS[count]
    whole = tuple(sum(lengths) if d == axis else s for d, s in enumerate(_SIZES[8 - rank:]))
    return JoinPlan(variant, whole, axis, lengths)
