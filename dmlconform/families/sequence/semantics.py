"""Reviewed semantics of the sequence family: operators that work along one
axis of a tensor, sequence by sequence (TOP_K, TOP_K1,
CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT).

Issue #24 item 1; docs/sequence.md.  The TOP_K pages call "a sequence"
the elements along *Axis* of the input; the cumulative pages traverse the
same sequences.  One record (`SequenceOp`) holds what a reviewer read in the
prose: which operation, which tensors and attributes play which part, and
the dimension counts per level.  Nothing here does I/O.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dmlconform.spec.model import DataType, FeatureLevel, Semantics
from dmlconform.spec.semantics import Accumulated, DimensionCounted

#: The ``DML_AXIS_DIRECTION`` constants.
INCREASING = "DML_AXIS_DIRECTION_INCREASING"
DECREASING = "DML_AXIS_DIRECTION_DECREASING"


class Operation(enum.Enum):
    """What is done to each sequence."""

    TOP_K = "top-k"                            # the K largest (or smallest) values and their indices
    CUMULATIVE_SUM = "cumulative-sum"          # the running sum
    CUMULATIVE_PRODUCT = "cumulative-product"  # the running product

    @property
    def is_scan(self) -> bool:
        return self is not Operation.TOP_K


@dataclass(frozen=True, slots=True)
class SequenceOp(Semantics, Accumulated, DimensionCounted):
    """One operator along ``axis`` (a UINT attribute).  ``input`` and
    ``output`` the tensors (for TOP_K the values); ``indices`` TOP_K's
    index output; ``k`` TOP_K's K; ``direction`` the DML_AXIS_DIRECTION
    attribute (None: TOP_K, always the largest first); ``exclusive`` the
    BOOL that leaves the current element out of a running tally.
    ``dimension_counts`` per feature level (oldest first), as the reviewer
    read the support tables; ``accumulators`` the type a FLOAT16 running
    tally is bounded in (the primary reading of ``float16-accumulator``)."""

    operation: Operation
    input: str
    output: str
    axis: str
    indices: str | None = None
    k: str | None = None
    direction: str | None = None
    exclusive: str | None = None
    dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...] = ()
    accumulators: tuple[tuple[DataType, DataType], ...] = ()
