"""The JOIN and SPLIT pages' worked examples (issue #34 item 2): what one
gets wrong, for lint (rule DML131, `lint.examples`), and its call.

An example holds the tensor array (JOIN's ``InputTensors``, SPLIT's
``OutputTensors``) as `Example.array`, the single tensor on the other
side.  Its values are checked against the positions the oracle computes
(`join_moves.join_positions`): the array's or the single tensor's elements
end to end, in the array's order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dmlconform.families.index_map.join_moves import join_positions
from dmlconform.families.index_map.joins import JoinCall, join_problem
from dmlconform.families.index_map.semantics import Example, IndexMap, Operation


def example_call(sem: IndexMap, e: Example) -> JoinCall:
    """The call ``e`` shows (ValueError naming a missing or malformed Axis)."""
    name = sem.axis or "Axis"
    axis = dict(e.attributes).get(name)
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise ValueError(f"attribute {name}={axis!r} is not a whole number: give the axis, e.g. 1")
    join = sem.operation is Operation.JOIN
    return JoinCall(join, axis, tuple(t.sizes for t in e.array), e.output_sizes if join else e.input_sizes)


#: Where in an example a problem is: its key, and a tensor's place in the array.
At = tuple[str | int, ...]


def example_problems(sem: IndexMap, e: Example) -> list[tuple[At, str]]:
    """What ``e`` gets wrong, as (where in the example it is, the message):
    a type other than the single tensor's, sizes the page's rules reject,
    values other than the join (or split) of its given tensors."""
    join = sem.operation is Operation.JOIN
    array_key, single_key = ("inputs", "output") if join else ("outputs", "input")
    single_type = e.output_type if join else e.input_type
    found: list[tuple[At, str]] = [((array_key, k), f"{e.name} ({e.source}) prints tensor {k}'s DataType {t.type.name}, but it must be the "
                         f"{single_key}'s, {single_type.name}: the doc's type is wrong")
             for k, t in enumerate(e.array) if t.type is not single_type]
    try:
        call = example_call(sem, e)
    except ValueError as exc:
        return [*found, (("attributes",), f"{e.name} ({e.source}): {exc}")]
    problem = join_problem(call)
    if problem is not None:
        return [*found, (("attributes",), f"{e.name} ({e.source}): {problem}; the doc's example breaks its own rules: "
                                       "report it")]
    given = np.array([v for t in e.array for v in t.values] if join else e.input_values)
    printed = [np.array(e.output_values)] if join else [np.array(t.values) for t in e.array]
    for k, (positions, shown) in enumerate(zip(join_positions(call), printed)):
        got = given[positions.reshape(-1)]
        if not np.array_equal(got, shown):
            what = "the output" if join else f"output tensor {k}"
            found.append((("output",) if join else ("outputs", k),
                          f"{e.name} ({e.source}) prints {what} as {_show(shown)}, but the "
                          f"{'join' if join else 'split'} of its {'inputs' if join else 'input'} along Axis "
                          f"{call.axis} gives {_show(got)}: the doc's output is wrong"))
    return found


def _show(values: Sequence[float] | np.ndarray) -> str:
    return "{" + ", ".join(f"{float(v):g}" for v in values) + "}"
