"""VALUE_SCALE_2D's oracle: ``Scale * Input + Bias[c]`` in float64, the
bound the element-wise oracle gives for ``a*x + b``, and the honest readings
as STRICT alternatives.

Issue #24 items 2 and 3; docs/value-scale.md derives the bound and works one
real case through it.  With ``u`` the tensor type's unit roundoff,
``p = |Scale * Input|`` and ``y`` the exact result:

* a product rounded, then a sum rounded (no FMA), in the tensor type or
  wider, is off by at most ``u p + u |y|`` (Higham ch. 2: the product's
  relative error times ``p``, then the sum's one rounding); one fused
  multiply-add by ``u |y|``; so ``u (p + |y|)`` bounds both (the
  element-wise oracle's running bound of ``a*x + b``,
  `formula.bounds`);
* FLOAT16 tensors computed natively round Scale and Bias (FLOAT) to
  FLOAT16 first: ``u (p + |Bias|)`` more, and where they fall below its
  normal range half a smallest subnormal ``s`` each: ``s (|Input| + 1)``
  (a Scale of 1.7e-8 becomes 0);
* a product in the subnormal range loses up to one smallest subnormal of
  the tensor type; a backend that flushes subnormals up to
  ``(1 + |Scale|)`` times the smallest normal number;
* NaN, infinities and results beyond the largest value are exact (0): a
  product that overflows alone (``separate``) is a reading, not an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier, finfo
from dmlconform.families.value_scale.cases import Operands, operands, semantics_of
from dmlconform.families.value_scale.semantics import ValueScale, exact, per_channel
from dmlconform.oracles.base import PREFIX, Expectation, marker, unit_roundoff
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["ValueScaleBatch", "ValueScaleOracle", "separate"]

#: The strict ULP budget beside the bound (the spec's ``tolerance`` and ``--tolerances`` take precedence).
ULP = 2


def separate(x: np.ndarray, ops: Operands, work: np.dtype, out: np.dtype) -> np.ndarray:
    """``Scale * Input`` rounded in ``work``, then ``+ Bias`` rounded in
    ``work``, then to ``out`` (Scale and Bias rounded to ``work`` first): the
    ``separate`` reading in float32, and native FLOAT16 arithmetic."""
    with np.errstate(all="ignore"):
        scale, bias = work.type(ops.scale), per_channel(ops.bias.astype(work), x.ndim, ops.axis)
        return ((scale * x.astype(work)).astype(work) + bias).astype(work).astype(out)


def bound(x: np.ndarray, ops: Operands, y: np.ndarray, dtype: m.DataType, *, flush: bool) -> np.ndarray:
    """The strict bound of each element (module docstring); 0 where the input or result is not finite."""
    u = unit_roundoff(dtype)
    info = finfo(numpy_dtype(dtype))
    with np.errstate(all="ignore"):
        p = np.abs(np.float64(ops.scale) * x)
        b = u * (p + np.abs(y)) + float(info.smallest_subnormal)
        if dtype.bits < 32:  # Scale and Bias rounded to the type: relative error u, or half a subnormal
            bias = np.abs(per_channel(ops.bias.astype(np.float64), x.ndim, ops.axis))
            b = b + u * (p + bias) + float(info.smallest_subnormal) * (np.abs(x) + 1)
        if flush:
            b = b + (1 + abs(ops.scale)) * float(info.smallest_normal)
        finite = np.isfinite(x) & np.isfinite(y) & (np.abs(y) <= float(info.max))
    return np.where(finite, b, 0.0)


@dataclass(frozen=True, slots=True, eq=False)
class ValueScaleOracle:
    """The oracle of VALUE_SCALE_2D (its reviewed semantics)."""

    spec: m.Spec
    semantics: ValueScale

    @classmethod
    def of(cls, spec: m.Spec) -> ValueScaleOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> ValueScaleBatch:
        """Every case's expected values, bounds and readings, end to end.
        ``float16_accumulation`` changes nothing: the bound holds native
        FLOAT16 arithmetic already."""
        parts = [self._case(case, flush_subnormals) for case in cases]
        offsets = np.cumsum([0] + [p[0].size for p in parts])
        alternatives = tuple(Alternative(a.name, a.index + int(lo), a.values, a.tier, a.reason)
                             for p, lo in zip(parts, offsets) for a in p[2])
        joined = [np.concatenate([p[k] for p in parts]) for k in (0, 1, 3)]
        for array in joined:
            array.setflags(write=False)
        return ValueScaleBatch(joined[0], joined[1], alternatives, joined[2], self.semantics.input)

    def _case(self, case: Case, flush: bool) -> tuple[np.ndarray, np.ndarray, list[Alternative], np.ndarray]:
        ops = operands(self.semantics, case)
        x = case.inputs[0].view()
        nt = numpy_dtype(case.outputs[0].dtype)
        x64 = x.astype(np.float64)
        y = exact(x64, ops.scale, ops.bias, ops.axis)
        with np.errstate(over="ignore", invalid="ignore"):
            expected = y.astype(nt).reshape(-1)
        strict = bound(x64, ops, y, case.dtype, flush=flush).reshape(-1)
        return expected, strict, self._readings(case, x, ops, expected, nt), x64.reshape(-1)

    def _readings(self, case: Case, x: np.ndarray, ops: Operands, expected: np.ndarray,
                  nt: np.dtype) -> list[Alternative]:
        """Per ambiguity with a reading that gives another value here: its
        marker, then each such reading (`families.elementwise.readings`)."""
        work = numpy_dtype(self.semantics.accumulator(case.dtype))
        values = {("rounding", "separate"): lambda: separate(x, ops, np.dtype(work), nt)}
        if case.dtype is m.DataType.FLOAT16:
            values[("float16-working-type", "float16")] = lambda: separate(x, ops, np.dtype(np.float16), nt)
        found: list[Alternative] = []
        for ambiguity in self.spec.ambiguities:
            alts = []
            for reading in ambiguity.others:
                make = values.get((ambiguity.id, reading.id))
                if make is None:
                    continue
                mine = make().reshape(-1)
                where = np.flatnonzero((mine != expected) & ~(np.isnan(mine) & np.isnan(expected)))
                alts.append(Alternative(f"{PREFIX}{ambiguity.id}:{reading.id}", where, mine[where], Tier.STRICT,
                                        f"{ambiguity.id}: {reading.says}"))
            if any(a.index.size for a in alts):
                found += [marker(ambiguity, alts, expected), *alts]
        return found


@dataclass(frozen=True, slots=True, eq=False)
class ValueScaleBatch:
    """`ValueScaleOracle` bound to a batch: expected values, the strict
    bound, the alternatives (indices end to end) and the inputs (float64)."""

    expected: np.ndarray
    strict: np.ndarray
    alternatives: tuple[Alternative, ...]
    inputs: np.ndarray
    input_name: str

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        """The expectation over elements [lo, hi), alternatives cut to that range."""
        alts = []
        for alt in self.alternatives:
            keep = (alt.index >= lo) & (alt.index < hi)
            alts.append(Alternative(alt.name, alt.index[keep] - lo, alt.values[keep], alt.tier, alt.reason))
        return (Expectation(self.expected[lo:hi], self.strict[lo:hi], None, tuple(alts), ULP, RELAXED_FACTOR,
                            False),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """The input at the same place (element-wise)."""
        return ((self.input_name, [float(v) for v in self.inputs[flat]]),)
