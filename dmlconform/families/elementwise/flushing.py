"""Subnormals flushed per operation: a reading of a backend that declares flushing.

DESIGN.md, "Comparison, verdicts and reports": subnormal flushing is accepted
only from a backend that declares it.  The oracle's first two flush readings
flush the case's subnormal inputs everywhere (`floatrun.FloatRun.flushed`)
or a subnormal result (`compare`).  Hardware flushes per operation instead:
Direct3D's float32 rule (learn.microsoft.com, "Floating-point rules
(Direct3D 11)") flushes denorms to sign-preserved zero on the input and the
output of every floating-point mathematical operation, and makes an
exception of data movement that does not manipulate the data; Vulkan lets a
driver flush what any instruction reads or makes.  So a comparison may see
a flushed operand while a select returns the same operand unflushed
(``x, if x >= 0`` of -1e-39 gives -1e-39: Leaky ReLU on sid's lavapipe), an
input and the result may both be flushed in one element (``(a + b) / 2``),
and ``max(1e-39, NaN)`` gives 0.  The DirectML pages say nothing of
subnormals.

`FlushingEvaluator` evaluates the doc's formula that way: the operands and
the result of every arithmetic operation and function (min and max
included) and the operands of every comparison flushed below the computing
type's smallest normal; selects, negation and the inputs as such are moves.
The values it gives are a reading only where it flushed something
(`FlushedValues.index`, made by `floatrun.FloatRun.flushed_each`); a formula written in another order than the
kernel's is not covered (Alpha * (e^x - 1) flushed where the doc writes
Alpha * e^x - Alpha: a loss of range, not a reading).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.compare import Tier, finfo, is_float
from dmlconform.formula.evaluate import Evaluator, Settings, Val, any_true
from dmlconform.formula.tree import Call

#: The alternative's name, tier and reason (`floatrun.AltSpec`'s fields).
NAME = "flushed_per_operation"
TIER = Tier.FLUSH
REASON = ("subnormal operands and results of each arithmetic operation, function and comparison flushed to "
          "zero, selects passing values as they are (Direct3D's float32 rule; the backend declares flushing)")


class FlushingEvaluator(Evaluator):
    """An untracked `Evaluator` that flushes per operation (module docstring),
    noting in ``touched`` the elements where a flush changed a value."""

    def __init__(self, env: Mapping[str, Val], settings: Settings, *, tiny: float) -> None:
        super().__init__(env, settings)
        self.tiny = tiny
        self.touched: Any = np.False_

    def flush(self, val: Val) -> Val:
        """``val`` with its subnormals (below ``tiny``, not 0) made zeros of their sign."""
        if isinstance(val.v, str):  # an enum constant
            return val
        x = self.num(val.v)
        with np.errstate(invalid="ignore"):
            small = (np.abs(x) < self.tiny) & (x != 0)
        if not any_true(small):
            return val
        self.touched = self.touched | small
        flushed = np.asarray(np.where(small, np.copysign(0.0, x), x), dtype=self.s.work)
        return Val(flushed, owned=bool(np.ndim(flushed)))

    def arith(self, op: str, a: Val, b: Val, *, final: bool = False) -> Val:
        return self.flush(super().arith(op, self.flush(a), self.flush(b), final=final))

    def compare(self, op: str, a: Val, b: Val) -> Val:
        return super().compare(op, self.flush(a), self.flush(b))

    def call(self, node: Call, args: list[Val]) -> Val:
        return self.flush(super().call(node, [self.flush(a) for a in args]))


@dataclass(frozen=True, slots=True, eq=False)
class FlushedValues:
    """The per-operation flushed evaluation at the flat elements ``index``
    (where it flushed something), in float64: ``values``
    (`floatrun.FloatRun.flushed_each`)."""

    index: np.ndarray
    values: np.ndarray


def threshold(target: np.dtype, inputs: Sequence[np.dtype]) -> float:
    """The smallest normal of the type the formula computes in: a float
    ``target``'s, or (a comparison into an integer type) the float
    ``inputs``'."""
    types = [target] if is_float(target) else list(inputs)
    return max(float(finfo(t).smallest_normal) for t in types)
