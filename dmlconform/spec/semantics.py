"""Reviewed semantics: what a doc says only in prose, as records.

Issue #24 item 1.  Where a doc has no formula (GEMM: ``Output =
FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C)`` in a sentence,
the shapes in field descriptions), a person writes the operator's semantics
in the reviewed overlay ``specs/reviewed/<OPERATOR>.yaml`` under the key
``semantics`` (`spec.reviewed` loads and checks it; extract never writes
there).  Every family's record derives from `Semantics` (its ``source``);
``semantics.family`` in the overlay names the kind (`Family.overlay` of
`families.FAMILIES`).
Each family's record lives in its package
(`families.<family>.semantics`).  Nothing here does I/O.
"""

from __future__ import annotations

from dmlconform.spec.model import DataType, FeatureLevel


class Accumulated:
    """A family record with ``accumulators`` (tensor type -> the type sums
    or running tallies are bounded in, the primary reading of the
    accumulator ambiguity): its `accumulator` in one place.  A mixin
    without fields (the dataclass declares ``accumulators`` itself, in its
    own field order)."""

    __slots__ = ()
    accumulators: tuple[tuple[DataType, DataType], ...]

    def accumulator(self, dtype: DataType) -> DataType:
        """The type sums of ``dtype`` tensors are bounded in (its own where the reviewer named none)."""
        return accumulator_of(self.accumulators, dtype)


class DimensionCounted:
    """A family record with ``dimension_counts`` (per feature level, oldest
    first, as the reviewer read the support tables): its `dims_at` in one
    place.  A mixin without fields, like `Accumulated`."""

    __slots__ = ()
    dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...]

    def dims_at(self, level: FeatureLevel) -> tuple[int, ...]:
        """The dimension counts in force at ``level`` (none below the first)."""
        return dims_at(self.dimension_counts, level)


def accumulator_of(accumulators: tuple[tuple[DataType, DataType], ...], dtype: DataType) -> DataType:
    """The type sums of ``dtype`` tensors are bounded in by a family's
    ``accumulators`` (tensor type -> accumulator; its own where none is named)."""
    return dict(accumulators).get(dtype, dtype)


def dims_at(dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...],
            level: FeatureLevel) -> tuple[int, ...]:
    """The dimension counts of a family's ``dimension_counts`` (per level,
    oldest first) in force at ``level`` (none below the first)."""
    found: tuple[int, ...] = ()
    for since, dims in dimension_counts:
        if since <= level:
            found = dims
    return found
