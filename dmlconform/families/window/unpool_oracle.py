"""MAX_UNPOOLING's oracle: each output element is one input value or 0, exact.

docs/window.md "MAX_UNPOOLING".  Per output element, the inputs whose
index names it (the indices grouped by a stable sort, so each group keeps
the logical input order): none, the element is 0; one, its value; several,
the ``repeated-index`` ambiguity: the last of them (the primary reading),
the ``first`` or any one ``between`` as STRICT alternatives (one per rank,
where the group has that many).  An index at or past the output's element
count writes nothing (a negative case: refused, or the rest right).  Every
value is compared at 0 ULP: a copied value has no rounding to allow for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier
from dmlconform.families.window.semantics import Window
from dmlconform.families.window.unpool import operands
from dmlconform.oracles.base import PREFIX, Expectation, end_to_end, marker, within
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype


@dataclass(frozen=True, slots=True, eq=False)
class UnpoolBatch:
    """MAX_UNPOOLING bound to a batch: the output end to end, with the ``repeated-index`` readings."""

    expected: np.ndarray
    alternatives: tuple[Alternative, ...]

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        return (Expectation(self.expected[lo:hi], None, None, within(self.alternatives, lo, hi), 0, RELAXED_FACTOR,
                            False),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        return ()


def bind(spec: m.Spec, sem: Window, cases: Sequence[Case]) -> UnpoolBatch:
    """Each case's output and readings, joined end to end."""
    parts = [_part(spec, sem, c) for c in cases]
    expected = np.concatenate([p[0] for p in parts])
    expected.setflags(write=False)
    return UnpoolBatch(expected, end_to_end([p[1] for p in parts], [p[0].size for p in parts]))


def _part(spec: m.Spec, sem: Window, case: Case) -> tuple[np.ndarray, tuple[Alternative, ...]]:
    """One case: the output flat in C order, and its alternatives."""
    ops = operands(sem, case)
    nt = numpy_dtype(case.outputs[0].dtype)
    keep = np.flatnonzero(ops.indices < ops.size)  # an index past the end writes nothing
    order = keep[np.argsort(ops.indices[keep], kind="stable")]  # grouped by target, logical order within
    target = ops.indices[order]
    starts = np.flatnonzero(np.r_[True, target[1:] != target[:-1]]) if target.size else np.zeros(0, np.int64)
    ends = np.r_[starts[1:], target.size] - 1 if starts.size else starts  # every index past the end: no group
    counts = ends - starts + 1
    where = target[starts]

    def written(pick: np.ndarray) -> np.ndarray:
        out = np.zeros(ops.size, nt)
        out[where] = ops.x[order[pick]]
        return out

    expected = written(ends)
    picks = [("first", starts)] + [("between", np.where(counts > rank + 1, starts + rank, ends))
                                   for rank in range(1, int(counts.max(initial=0)) - 1)]
    return expected, _readings(spec, [(name, written(pick)) for name, pick in picks], expected)


def _readings(spec: m.Spec, readings: list[tuple[str, np.ndarray]], expected: np.ndarray) -> tuple[Alternative, ...]:
    """Each reading's output as a STRICT alternative where it differs (``between`` once per rank: several
    alternatives of one name), behind one marker of the primary reading (`oracles.base.marker`)."""
    ambiguity = next((a for a in spec.ambiguities if a.id == "repeated-index"), None)
    if ambiguity is None:
        return ()
    singles = []
    for name, values in readings:
        where = np.flatnonzero((values != expected) & ~(_nan(values) & _nan(expected)))
        reading = ambiguity.reading(name)
        if where.size and reading is not None:
            singles.append(Alternative(f"{PREFIX}{ambiguity.id}:{name}", where, values[where], Tier.STRICT,
                                       f"{ambiguity.id}: {reading.says}"))
    return (marker(ambiguity, singles, expected), *singles) if singles else ()


def _nan(values: np.ndarray) -> np.ndarray:
    return np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)
