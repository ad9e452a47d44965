"""Reviewed semantics: what a doc says only in prose, as records.

Issue #24 item 1.  Where a doc has no formula (GEMM: ``Output =
FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C)`` in a sentence,
the shapes in field descriptions), a person writes the operator's semantics
in the reviewed overlay ``specs/reviewed/<OPERATOR>.yaml`` under the key
``semantics`` (`spec.reviewed` loads and checks it; extract never writes
there).  Every family's record derives from `Semantics` (its ``source``);
``semantics.family`` in the overlay names the kind (`spec.reviewed.KINDS`).
The first kind is a contraction (`Contraction`): which tensors are the
operands, which attributes transpose and scale them, the dimension
counts per feature level the harness reads the support tables as, and the
accumulator type of each tensor type (the primary reading of the
ambiguities beside it).  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dmlconform.spec.model import DataType, FeatureLevel

if TYPE_CHECKING:
    from dmlconform.spec.model import Spec

#: The ``DML_MATRIX_TRANSFORM`` constants a transpose attribute takes.
NO_TRANSFORM = "DML_MATRIX_TRANSFORM_NONE"
TRANSPOSE = "DML_MATRIX_TRANSFORM_TRANSPOSE"


@dataclass(frozen=True, slots=True)
class Semantics:
    """What every family's reviewed semantics have: ``source``, the ``doc
    path:line`` the reviewer read them from.  A family's record derives
    from this one; its family checks ``isinstance`` to claim a spec."""

    source: str

    def attach(self, spec: Spec) -> Spec:
        """``spec`` with these semantics (`spec.reviewed.with_semantics`).  A
        kind that only completes what the spec already models (a formula,
        `spec.semantics_formula`) overrides this."""
        return replace(spec, semantics=self)


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


@dataclass(frozen=True, slots=True)
class Operand:
    """One matrix operand: its tensor, and the enum attribute that transposes
    it (``transform``: None where nothing does).  A quantized operand
    (MATRIX_MULTIPLY_INTEGER) names its optional zero-point tensor,
    subtracted before the product, and its scale tensor (the _TO_FLOAT
    variant: multiplied after); A's are per tensor or per row, B's per
    tensor or per column (`cases.contraction_integer.side_view`)."""

    tensor: str
    transform: str | None = None
    zero_point: str | None = None
    scale: str | None = None


@dataclass(frozen=True, slots=True)
class Contraction(Semantics, Accumulated, DimensionCounted):
    """``output = activation(alpha * op(a) x op(b) + beta * c)`` over the
    last two dimensions, every leading dimension a batch (GEMM).

    ``c`` is the optional addend's tensor (None: none; MATRIX_MULTIPLY_
    INTEGER_TO_FLOAT's bias), read through its strides (a stride of 0 broadcasts it: ``c_broadcast``); ``alpha`` and
    ``beta`` name FLOAT attributes (None: 1); ``activation`` the fused
    activation's attribute (None: none).  ``dimension_counts`` per feature
    level (oldest first) and ``accumulators`` (tensor type -> the type sums
    are bounded in, the primary reading) are what the reviewer read in the
    doc; lint checks the first against the support tables.  ``source`` is
    ``doc path:line`` of the sentence the semantics come from."""

    a: Operand
    b: Operand
    output: str
    c: str | None = None
    c_broadcast: bool = True
    alpha: str | None = None
    beta: str | None = None
    activation: str | None = None
    dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...] = ()
    accumulators: tuple[tuple[DataType, DataType], ...] = ()

    @property
    def quantized(self) -> bool:
        """Integer operands with zero points (MATRIX_MULTIPLY_INTEGER and its
        _TO_FLOAT variant): `cases.contraction_integer` makes their cases."""
        return self.a.zero_point is not None or self.b.zero_point is not None


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
