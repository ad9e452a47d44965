"""NONZERO_COORDINATES' oracle (`families.index_map.oracle` binds it): the
count of the input's non-zero elements, and per row the coordinates of
one, in ascending element index (the page: "guaranteed to be ordered by
ascending element index").

From bit patterns and positions alone (the CPU reference calls
``np.nonzero``): an element is zero where its bits are those of +0 or -0
(the page: "both negative and positive 0 ... are treated as zero"; NaN is
not zero); a row's coordinate in dimension d is (position // elements
after d) % size of d, its last N kept (the example: N 3 over {1,1,2,4}
writes the last three).  Rows past the count have no expected value (the
page: "undefined ... You shouldn't rely on the values"): any value passes
there, every other element is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR
from dmlconform.families.index_map.nonzero import columns
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.oracles.base import Expectation


def nonzero_rows(x: np.ndarray, n: int) -> tuple[int, np.ndarray, np.ndarray]:
    """The count, the coordinates (M x ``n``, uint32; 0 past the count) and
    which rows are defined, of the input ``x`` (its sizes)."""
    flat = np.ascontiguousarray(x).reshape(-1)
    bits = flat.view(f"u{flat.dtype.itemsize}")
    if flat.dtype.kind == "f":  # the sign bit off: -0 is 0
        bits = bits & np.array(~(1 << (8 * flat.dtype.itemsize - 1)) & ((1 << (8 * flat.dtype.itemsize)) - 1),
                               dtype=bits.dtype)
    positions = np.arange(flat.size, dtype=np.int64)[bits != 0]
    after = np.cumprod((1,) + x.shape[::-1])[:-1][::-1]  # the elements after each dimension
    coordinates = (positions[:, None] // after[None, :]) % np.array(x.shape, dtype=np.int64)[None, :]
    rows = np.zeros((flat.size, n), dtype=np.uint32)
    rows[:positions.size] = coordinates[:, x.ndim - n:]
    return positions.size, rows, np.arange(flat.size) < positions.size


@dataclass(frozen=True, slots=True, eq=False)
class NonzeroBatch:
    """The batch's counts and coordinates end to end, and which
    coordinates are defined (rows before the count)."""

    counts: np.ndarray
    coordinates: np.ndarray
    defined: np.ndarray

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        coords = self.coordinates[lo:hi]
        bound = np.where(self.defined[lo:hi], np.nan, np.inf)  # NaN: exact; inf: any value
        return (Expectation(self.counts[lo:hi], None, None, (), 0, RELAXED_FACTOR, True),
                Expectation(coords, bound, bound, (), 0, RELAXED_FACTOR, True))

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """Whether the element's row is before the count (1) or not (0)."""
        if output != 1:
            return ()
        return (("row before the count", [float(v) for v in self.defined[flat].tolist()]),)


def bind(sem: IndexMap, cases: Sequence[Case]) -> NonzeroBatch:
    """The expectations of ``cases``."""
    counts, coordinates, defined = [], [], []
    for case in cases:
        x = case.input(sem.input).view()
        outs = {t.name: t for t in case.outputs}
        n = columns(x.shape, outs[sem.output].sizes, outs[sem.count or "OutputCountTensor"].sizes)
        count, rows, ok = nonzero_rows(x, n)
        counts.append(np.array([count], dtype=np.uint32))
        coordinates.append(rows.reshape(-1))
        defined.append(np.repeat(ok, n))
    batch = NonzeroBatch(np.concatenate(counts), np.concatenate(coordinates), np.concatenate(defined))
    for a in (batch.counts, batch.coordinates):
        a.setflags(write=False)
    return batch
