"""The shape rules of ONE_HOT (issue #34): the indices have the output's
sizes but 1 on Axis (the page: "The size of the Axis dimension must be
1"); the values tensor any sizes with at least two elements, its element
0 the OffValue, "the 1st element along the fastest-changing dimension of
size >1" the OnValue (its C-order position 1: every dimension after that
one has size 1); the output's size on Axis any value above 0 (the depth).
What the cases module, the oracle and the reference share; nothing here
imports them.
"""

from __future__ import annotations

import math

#: The C-order positions of OffValue and OnValue in the values tensor.
OFF, ON = 0, 1


def onehot_problem(axis: int, indices: tuple[int, ...], values: tuple[int, ...],
                   output: tuple[int, ...]) -> str | None:
    """What makes sizes and Axis no ONE_HOT call the page describes (None: nothing)."""
    n = len(output)
    if len(indices) != n or len(values) != n:
        return f"the indices ({len(indices)}), values ({len(values)}) and output ({n}) must have one DimensionCount"
    if not 0 <= axis < n:
        return f"Axis={axis} must be in [0, {n})"
    wanted = tuple(1 if d == axis else s for d, s in enumerate(output))
    if indices != wanted:
        return f"the indices' sizes {list(indices)} must be the output's {list(output)} with 1 on Axis={axis}"
    if math.prod(values) < 2:
        return f"the values' sizes {list(values)} hold {math.prod(values)} element(s); give at least 2"
    return None
