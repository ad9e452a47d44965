"""Cases of NONZERO_COORDINATES (issue #34 item 3; docs/index-map.md
"NONZERO_COORDINATES").

* per data type of the table, a case at the representative dimension count
  (4 where the table has it) whose input holds the type's edge values among
  zeros (-0 is zero, the page says; NaN, subnormals and infinities are not);
* with FLOAT32 besides: N from the effective rank to the dimension count
  over an input with leading ones, every dimension count of the table, an
  input all zeros (count 0) and one with none, padded, permuted and
  broadcast (stride 0) layouts, the page's example;
* negative cases: a data type and a dimension count outside the tables.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout
from dmlconform.families.index_map import cases as gathers
from dmlconform.families.index_map.nonzero import columns, effective_rank
from dmlconform.families.index_map.scatter_cases import joined_id, tensors_named
from dmlconform.families.index_map.semantics import Example, IndexMap
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

_DIMS = (3, 4, 2, 3, 2, 2, 2, 2)
_LAYOUTS = {"packed": Layout.PACKED, "padded": Layout.PADDED, "permuted": Layout.PADDED,
            "broadcast": Layout.BROADCAST}


@dataclass(frozen=True, slots=True)
class NonzeroShape:
    """One case before its values: the data type, the input's sizes, N,
    what the input holds (``mixed``, ``zeros``, ``nonzero``, ``example``),
    the layout."""

    dtype: DataType
    input_sizes: tuple[int, ...]
    n: int
    values: str = "mixed"
    layout: str = "packed"
    supported: bool = True
    variant: str = ""
    example: Example | None = None

    @property
    def coordinates_sizes(self) -> tuple[int, ...]:
        rank = max(2, len(self.input_sizes))
        return (1,) * (rank - 2) + (math.prod(self.input_sizes), self.n)

    def case_id(self, operator: str) -> str:
        parts = [operator, self.dtype.name, f"{len(self.input_sizes)}d", f"n={self.n}", self.values]
        return joined_id(parts, self.layout, self.variant)



def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no NONZERO_COORDINATES the page describes.  ``problem: fix``."""
    sem = gathers.semantics_of(spec)
    x, coords, count = tensors_named(case, sem.input, sem.output, sem.count)
    if x is None or coords is None or count is None:
        return
    try:
        columns(x.sizes, coords.sizes, count.sizes)
    except ValueError as exc:
        yield f"{exc}: give sizes the page allows"
    for t in (coords, count):
        if t.dtype is not DataType.UINT32:
            yield f"{t.name} is {t.dtype.name}: the page asks for UINT32"


def _plain(rank: int, n: int | None = None) -> NonzeroShape:
    sizes = _DIMS[:rank] if rank > 1 else (7,)
    return NonzeroShape(DataType.FLOAT32, sizes, rank if n is None else n)


def shapes(spec: Spec, level: FeatureLevel) -> list[NonzeroShape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = gathers.semantics_of(spec)
    ranks = sem.dims_at(level)
    (row,) = family.rows_at(spec, level, ranks, sem.input)
    rep = 4 if 4 in ranks else ranks[-1]
    first = DataType.FLOAT32 if DataType.FLOAT32 in row.dtypes else row.dtypes[0]
    base = replace(_plain(rep), dtype=first)
    out = [replace(base, dtype=t, variant="edges") for t in row.dtypes]
    lead = (1, 1) + _DIMS[:rep - 2] if rep > 2 else (1,) * (rep - 1) + (5,)
    out += [NonzeroShape(first, lead, n) for n in range(max(effective_rank(lead), 1), rep + 1)]
    out += [replace(_plain(r), dtype=first) for r in ranks if r != rep]
    out += [replace(base, values=v) for v in ("zeros", "nonzero")]
    out += [replace(base, layout=layout) for layout in ("padded", "permuted", "broadcast")]
    for e in sem.examples:
        if len(e.input_sizes) in ranks and e.input_type in row.dtypes:
            out.append(NonzeroShape(e.input_type, e.input_sizes, e.output_sizes[-1], values="example",
                                    variant=e.name, example=e))
    bad_data = next((t for t in (DataType.FLOAT64, DataType.INT64, DataType.UINT64) if t not in row.dtypes), None)
    if bad_data is not None:
        out.append(replace(base, dtype=bad_data, supported=False, variant="unsupported"))
    bad_rank = next((r for r in (3, 6, 2) if r not in ranks), None)
    if bad_rank is not None:
        out.append(replace(_plain(bad_rank), dtype=first, supported=False, variant="unsupported"))
    return list(dict.fromkeys(out))


def input_values(shape: NonzeroShape, rng: np.random.Generator, broadcast: int | None) -> np.ndarray:
    """The input: the example's values, or random ones with the type's edge
    values (``mixed``: about half of the elements +0 or -0), all zeros, or
    none zero."""
    nt = numpy_dtype(shape.dtype)
    if shape.example is not None:
        return np.array(shape.example.input_values, dtype=nt).reshape(shape.input_sizes)
    x = gathers.data_values(gathers.Shape(shape.dtype, shape.input_sizes, (), (), None,
                                          indices="out-of-range" if shape.values == "nonzero" else "boundary"),
                            rng, broadcast)
    if shape.values == "zeros":
        return np.zeros_like(x) * (-1 if shape.dtype.is_float else 1)  # -0 where the type has it
    if shape.values == "mixed":
        zero = rng.random(x.shape) < 0.5
        if broadcast is not None:
            zero = np.broadcast_to(np.take(zero, [0], axis=broadcast), x.shape)
        signs = np.where(rng.random(x.shape) < 0.5, -1, 1) if shape.dtype.is_float else 1
        x = np.where(zero, (np.zeros_like(x) * signs).astype(nt), x)
    return x


def case_of(spec: Spec, sem: IndexMap, level: FeatureLevel, seed: int, case_id: str, shape: NonzeroShape) -> Case:
    broadcast = gathers._broadcast_dim(shape.input_sizes) if shape.layout == "broadcast" else None
    x = input_values(shape, np.random.default_rng(stream_key(seed, case_id, sem.input)), broadcast)
    layout = "padded" if shape.layout == "broadcast" else shape.layout
    rank = len(shape.input_sizes)
    outputs = (gathers.tensor(sem.count or "OutputCountTensor", DataType.UINT32, None, (1,) * rank, layout),
               gathers.tensor(sem.output, DataType.UINT32, None, shape.coordinates_sizes, layout))
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype,
                inputs=(gathers.tensor(sem.input, shape.dtype, x, shape.input_sizes,
                                       "broadcast" if broadcast is not None else layout, broadcast),),
                outputs=outputs, layout=_LAYOUTS[shape.layout], expect_supported=shape.supported,
                edges=(shape.values, shape.variant or "random"), seed=seed)
