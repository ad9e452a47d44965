"""The contraction family's reviewed semantics: `Contraction` (GEMM,
MATRIX_MULTIPLY_INTEGER and its _TO_FLOAT variant), as the overlay's
``semantics`` (family ``contraction``, `families.contraction.overlay`) gives
it: which tensors are the operands, which attributes transpose and scale
them, the dimension counts per feature level the harness reads the support
tables as, and the accumulator type of each tensor type (the primary
reading of the ambiguities beside it).  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from dmlconform.spec.model import DataType, FeatureLevel, Semantics
from dmlconform.spec.semantics import Accumulated, DimensionCounted

#: The ``DML_MATRIX_TRANSFORM`` constants a transpose attribute takes.
NO_TRANSFORM = "DML_MATRIX_TRANSFORM_NONE"
TRANSPOSE = "DML_MATRIX_TRANSFORM_TRANSPOSE"



@dataclass(frozen=True, slots=True)
class Operand:
    """One matrix operand: its tensor, and the enum attribute that transposes
    it (``transform``: None where nothing does).  A quantized operand
    (MATRIX_MULTIPLY_INTEGER) names its optional zero-point tensor,
    subtracted before the product, and its scale tensor (the _TO_FLOAT
    variant: multiplied after); A's are per tensor or per row, B's per
    tensor or per column (`families.contraction.cases_integer.side_view`)."""

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
        _TO_FLOAT variant): `families.contraction.cases_integer` makes their cases."""
        return self.a.zero_point is not None or self.b.zero_point is not None
