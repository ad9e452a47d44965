"""The shape rules of the scatters (issue #34): SCATTER (the page's alias
DML_SCATTER_ELEMENTS_OPERATOR_DESC) and SCATTER_ND.

* SCATTER: the indices and the updates have the input's sizes but on Axis
  (the page: "must match InputTensor.Sizes for every dimension except
  Axis"; the updates "must match IndicesTensor.Sizes"); update element u is
  written at u's coordinate with the one on Axis replaced by the index at u.
* SCATTER_ND: the indices' last dimension is a tuple of q coordinates into
  the first q of the input's dimensions that count (InputDimensionCount);
  the updates' sizes are the indices' leading ones (IndicesDimensionCount
  of them, the tuple dimension left out) then the input's after the first
  q, right-aligned.  (The page's formula writes the input's trailing
  segment from DimensionCount - q; its own example takes it from q on, as
  GATHER_ND does: docs/index-map.md "Doc mistakes".)

`ScatterCall` is what the cases module, the oracle and the reference share;
nothing here imports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dmlconform.families.index_map.semantics import IndexMap, Operation


@dataclass(frozen=True, slots=True)
class ScatterCall:
    """A scatter's attributes: ``nd`` (SCATTER_ND), SCATTER's ``axis``,
    SCATTER_ND's ``input_rank`` and ``indices_rank`` (the dimensions that
    count, after leading ones)."""

    nd: bool
    axis: int = 0
    input_rank: int = 0
    indices_rank: int = 0


def scatter_call(sem: IndexMap, attributes: Mapping[str, object]) -> ScatterCall:
    """A case's attributes as `ScatterCall` (a missing one reads 0)."""
    def get(part: str) -> int:
        name = sem.attribute(part)
        value = attributes.get(name, 0) if name else 0
        return int(value) if isinstance(value, (int, float)) else 0

    if sem.operation is Operation.SCATTER_ND:
        return ScatterCall(True, input_rank=get("input_dimension_count"), indices_rank=get("indices_dimension_count"))
    return ScatterCall(False, axis=get("axis"))


def last(sizes: tuple[int, ...], count: int) -> tuple[int, ...]:
    """The last ``count`` of ``sizes`` (the dimensions that count)."""
    return sizes[len(sizes) - count:] if count else ()


def aligned(sizes: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """``sizes`` right-aligned in ``rank`` dimensions (leading ones added)."""
    return (1,) * (rank - len(sizes)) + sizes


def updates_sizes(call: ScatterCall, input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The updates' sizes the page asks for; ValueError saying what does not fit."""
    n = len(input_sizes)
    if len(indices_sizes) != n:
        raise ValueError(f"the indices have {len(indices_sizes)} dimensions, the input {n}: give them the same count")
    if not call.nd:
        if not 0 <= call.axis < n:
            raise ValueError(f"Axis={call.axis} must be in [0, {n})")
        if any(i != s for d, (i, s) in enumerate(zip(indices_sizes, input_sizes)) if d != call.axis):
            raise ValueError(f"the indices' sizes {list(indices_sizes)} must be the input's {list(input_sizes)} "
                             f"but on Axis={call.axis}")
        return indices_sizes
    r_in, r_idx = call.input_rank, call.indices_rank
    if not (1 <= r_in <= n and 1 <= r_idx <= n):
        raise ValueError(f"InputDimensionCount={r_in} and IndicesDimensionCount={r_idx} must be in [1, {n}]")
    for sizes, count, name in ((input_sizes, r_in, "input"), (indices_sizes, r_idx, "indices")):
        if any(s != 1 for s in sizes[:n - count]):
            raise ValueError(f"the {name}' sizes {list(sizes)} have dimensions other than 1 before the last {count}")
    data, idx = last(input_sizes, r_in), last(indices_sizes, r_idx)
    q = idx[-1]
    if not 1 <= q <= r_in:
        raise ValueError(f"tuples of {q} coordinates do not fit InputDimensionCount={r_in}: give 1 to {r_in}")
    block = idx[:-1] + data[q:]
    if len(block) > n:
        raise ValueError(f"the updates' sizes {list(block)} do not fit {n} dimensions")
    return aligned(block, n)


def scatter_problem(call: ScatterCall, input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...],
                    given_updates: tuple[int, ...], output: tuple[int, ...]) -> str | None:
    """What makes a scatter's sizes no call the page describes (None: nothing)."""
    try:
        wanted = updates_sizes(call, input_sizes, indices_sizes)
    except ValueError as exc:
        return str(exc)
    if given_updates != wanted:
        return f"the updates' sizes {list(given_updates)} must be {list(wanted)}"
    if output != input_sizes:
        return f"the output's sizes {list(output)} must be the input's {list(input_sizes)}"
    return None
