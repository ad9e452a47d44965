"""The oracle of the quantized contractions (MATRIX_MULTIPLY_INTEGER and
its _TO_FLOAT variant): the part that differs from GEMM's.

Issue #24 items 1 and 2; docs/contraction.md "Integer contractions".  The
semantics, written out in the reviewed overlays, are
``Output = AScale * BScale * sum_k (A - AZeroPoint)(B - BZeroPoint) + Bias``.

* MATRIX_MULTIPLY_INTEGER (INT32 output): the sum of the differences'
  products is an exact integer (int64 holds K * 255^2 for any K below
  2^47), so the expected value is exact and 0 ULP is required.  Out of
  INT32's range the page says nothing (ambiguity ``int32-overflow``): the
  primary reading's value is expected, the other's is accepted as the STRICT
  alternative ``reading:int32-overflow:<reading>``, with the marker
  ``reading:int32-overflow=<primary>`` (`families.elementwise.readings.marker`) so the
  report says which one the backend took.
* The _TO_FLOAT variant: `dequantized` turns the case into GEMM's terms
  (the differences as float64 operands, AScale * BScale as a per-element
  factor, Bias as the addend), which `families.contraction.oracle` bounds like any
  contraction with K + 3 roundings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier
from dmlconform.families.contraction.cases import Operands
from dmlconform.families.contraction.cases_integer import quantized_operands
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.oracles.base import PREFIX, Expectation, marker
from dmlconform.spec import model as m

#: The overlay's ambiguity of INT32 results out of range.
OVERFLOW = "int32-overflow"
_INT32 = np.iinfo(np.int32)


def differences(semantics: Contraction, case: Case, dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
    """A - AZeroPoint and B - BZeroPoint in ``dtype`` (exact for int64 and float64)."""
    q = quantized_operands(semantics, case)
    a = q.a.astype(dtype) - (q.a_zero.astype(dtype) if q.a_zero is not None else 0)
    b = q.b.astype(dtype) - (q.b_zero.astype(dtype) if q.b_zero is not None else 0)
    return a, b


def dequantized(semantics: Contraction, case: Case) -> tuple[Operands, np.ndarray | None]:
    """The case as GEMM's terms: the differences (float64), Bias as C, and
    AScale * BScale (float64, exact: two float32 significands) or None."""
    q = quantized_operands(semantics, case)
    a, b = differences(semantics, case, np.float64)
    scale = None
    if q.a_scale is not None and q.b_scale is not None:
        scale = q.a_scale.astype(np.float64) * q.b_scale.astype(np.float64)
    return Operands(a, b, q.bias), scale


def readings(exact: np.ndarray) -> dict[str, np.ndarray]:
    """Each reading of ``int32-overflow`` applied to exact int64 sums."""
    return {"wrap": exact.astype(np.int32),  # numpy's cast keeps the low 32 bits: modulo 2^32
            "saturate": np.clip(exact, _INT32.min, _INT32.max).astype(np.int32)}


def bind(spec: m.Spec, semantics: Contraction, cases: Sequence[Case]) -> IntegerBatch:
    """The exact sums of ``cases`` end to end, and their K."""
    sums, ks = [], []
    for case in cases:
        a, b = differences(semantics, case)
        sums.append(np.matmul(a, b).reshape(-1))
        ks.append(int(a.shape[-1]))
    sizes = [s.size for s in sums]
    ambiguity = next((x for x in spec.ambiguities if x.id == OVERFLOW), None)
    return IntegerBatch(np.concatenate(sums), np.array(ks, np.int64),
                        np.concatenate(([0], np.cumsum(sizes, dtype=np.int64))), ambiguity)


@dataclass(frozen=True, slots=True, eq=False)
class IntegerBatch:
    """Exact int64 sums of a batch end to end (``exact``), each case's K and
    where its elements start; ``ambiguity``: the overlay's overflow
    ambiguity (None: wrap, and no alternative)."""

    exact: np.ndarray
    ks: np.ndarray
    offsets: np.ndarray
    ambiguity: m.Ambiguity | None

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        """The primary reading's INT32 values over [lo, hi), 0 ULP, every
        other reading a STRICT alternative where it gives another value."""
        values = readings(self.exact[lo:hi])
        primary = self.ambiguity.primary if self.ambiguity is not None else "wrap"
        expected = values.pop(primary)
        expected.setflags(write=False)
        alternatives: list[Alternative] = []
        if self.ambiguity is not None:
            for name, other in values.items():
                index = np.flatnonzero(other != expected)
                if index.size:
                    alternatives.append(Alternative(f"{PREFIX}{self.ambiguity.id}:{name}", index, other[index],
                                                    Tier.STRICT, f"{self.ambiguity.id}: {name}"))
            if alternatives:
                alternatives.insert(0, marker(self.ambiguity, alternatives, expected))
        return (Expectation(expected, None, None, tuple(alternatives), 0, RELAXED_FACTOR, False),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """K and the exact sum (before INT32) of each element."""
        owner = np.searchsorted(self.offsets, flat, side="right") - 1
        return (("K", [float(x) for x in self.ks[owner].tolist()]),
                ("exact sum", [float(x) for x in self.exact[flat].tolist()]))
