"""Cases of ONE_HOT (issue #34 item 3; docs/index-map.md "ONE_HOT").

* per data type of the table, a case at the representative dimension count
  (4 where the table has it) whose OffValue and OnValue are two of the
  type's edge values (+0 and -0 must stay apart);
* with FLOAT32 besides: every index type of the table, every Axis and a
  depth of 1 at the representative dimension count, every dimension count
  of the table, a values tensor of three elements (the third unused, as the
  page's Example 3), padded, permuted and broadcast (indices of stride 0)
  layouts;
* ``past-axis``: indices at or past the depth (depth, depth + 1, the type's
  greatest, 2^32 + 1 of a 64-bit type): the page says their sequence is all
  OffValue;
* ``below-axis`` (signed index types): indices below -depth, of which the
  page says nothing (a negative case: a clean rejection passes, and so does
  the reading of them as ignored, all OffValue);
* the page's worked examples; negative cases: an index type, a data type and
  a dimension count outside the tables.

Valid indices hold 0, depth - 1 and, of a signed type, -1 and -depth first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout
from dmlconform.families.index_map import cases as gathers
from dmlconform.families.index_map.onehot import onehot_problem
from dmlconform.families.index_map.scatter_cases import joined_id, outside_tables, tensors_named
from dmlconform.families.index_map.semantics import Example, IndexMap
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

DEPTH = 5
_DIMS = (3, 4, 2, 3, 2, 2, 2, 2)
_LAYOUTS = {"packed": Layout.PACKED, "padded": Layout.PADDED, "permuted": Layout.PADDED,
            "broadcast": Layout.BROADCAST}


@dataclass(frozen=True, slots=True)
class OneHotShape:
    """One ONE_HOT case before its values: types, the output's sizes, Axis,
    the values' sizes, what the indices hold (``boundary``, ``past-axis``,
    ``below-axis``, ``example``), the layout."""

    dtype: DataType
    index_dtype: DataType
    output_sizes: tuple[int, ...]
    axis: int
    values_sizes: tuple[int, ...]
    indices: str = "boundary"
    layout: str = "packed"
    supported: bool = True
    variant: str = ""
    example: Example | None = None

    @property
    def indices_sizes(self) -> tuple[int, ...]:
        return tuple(1 if d == self.axis else s for d, s in enumerate(self.output_sizes))

    def case_id(self, operator: str) -> str:
        parts = [operator, self.dtype.name, f"{len(self.output_sizes)}d", f"axis={self.axis}",
                 f"depth={self.output_sizes[self.axis]}", self.index_dtype.name, self.indices]
        return joined_id(parts, self.layout, self.variant)



def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no ONE_HOT the page describes.  ``problem: fix``."""
    sem = gathers.semantics_of(spec)
    idx, values, out = tensors_named(case, sem.indices, sem.input, sem.output)
    if idx is None or values is None or out is None:
        return
    axis = case.attribute_map().get(sem.axis or "Axis", 0)
    if not isinstance(axis, int) or isinstance(axis, bool):
        yield "Axis is a whole number: give it as an integer"
        return
    problem = onehot_problem(axis, idx.sizes, values.sizes, out.sizes)
    if problem is not None:
        yield f"{problem}: give sizes the page allows"
    if idx.dtype.is_float:
        yield f"{idx.name} is {idx.dtype.name}: indices are integers, give an integer type"


def _plain(rank: int, axis: int, depth: int = DEPTH) -> OneHotShape:
    out = tuple(depth if d == axis else _DIMS[d] for d in range(rank))
    return OneHotShape(DataType.FLOAT32, DataType.UINT32, out, axis, (1,) * (rank - 1) + (2,))


def shapes(spec: Spec, level: FeatureLevel) -> list[OneHotShape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = gathers.semantics_of(spec)
    ranks = sem.dims_at(level)
    values_row, index_row = family.rows_at(spec, level, ranks, sem.input, sem.indices or "IndicesTensor")
    rep = 4 if 4 in ranks else ranks[-1]
    signed = [t for t in index_row.dtypes if t.is_signed]
    main = DataType.UINT32 if DataType.UINT32 in index_row.dtypes else index_row.dtypes[0]
    first = DataType.FLOAT32 if DataType.FLOAT32 in values_row.dtypes else values_row.dtypes[0]
    base = replace(_plain(rep, rep - 1), dtype=first, index_dtype=main)
    out = [replace(base, dtype=t, index_dtype=signed[0] if signed else main, variant="edges")
           for t in values_row.dtypes]
    out += [replace(base, index_dtype=t) for t in index_row.dtypes]
    out += [replace(_plain(rep, a), dtype=first, index_dtype=main) for a in range(rep - 1)]
    out += [replace(_plain(rep, rep - 1, 1), dtype=first, index_dtype=main)]
    out += [replace(_plain(r, r - 1), dtype=first, index_dtype=main) for r in ranks if r != rep]
    column = tuple(3 if d == rep - 2 else 1 for d in range(rep)) if rep > 1 else (3,)
    out += [replace(base, values_sizes=column, variant="three-values")]
    out += [replace(base, layout=layout, index_dtype=t) for layout in ("padded", "permuted", "broadcast")
            for t in ([main] + signed[:1])]
    out += [replace(base, index_dtype=t, indices="past-axis") for t in index_row.dtypes]
    out += [replace(base, index_dtype=t, indices="below-axis", supported=False) for t in signed]
    for e in sem.examples:
        if len(e.output_sizes) in ranks and e.indices_type in index_row.dtypes and e.output_type in values_row.dtypes:
            given = dict(e.attributes).get(sem.axis or "Axis", 0)
            axis = given if isinstance(given, int) else -1
            if onehot_problem(axis, e.indices_sizes, e.input_sizes, e.output_sizes) is None:
                out.append(OneHotShape(e.output_type, e.indices_type, e.output_sizes, axis, e.input_sizes,
                                       indices="example", variant=e.name, example=e))
    out += outside_tables(base, lambda r: replace(_plain(r, r - 1), dtype=first, index_dtype=main), ranks,
                          values_row.dtypes, index_row.dtypes)
    return list(dict.fromkeys(out))


def case_of(spec: Spec, sem: IndexMap, level: FeatureLevel, seed: int, case_id: str, shape: OneHotShape) -> Case:
    idx_name = sem.indices or "IndicesTensor"
    e = shape.example
    if e is not None:
        values = np.array(e.input_values, dtype=numpy_dtype(shape.dtype)).reshape(shape.values_sizes)
        idx = np.array(e.indices_values, dtype=numpy_dtype(shape.index_dtype)).reshape(shape.indices_sizes)
    else:
        draw = "boundary" if shape.variant == "edges" else "out-of-range"  # out-of-range: random, no zeros
        values = gathers.data_values(gathers.Shape(shape.dtype, shape.values_sizes, (), (), None, indices=draw),
                                     np.random.default_rng(stream_key(seed, case_id, sem.input)))
        idx = index_values(shape, np.random.default_rng(stream_key(seed, case_id, idx_name)))
    broadcast = gathers._broadcast_dim(shape.indices_sizes) if shape.layout == "broadcast" else None
    if broadcast is not None:
        idx = np.broadcast_to(np.take(idx, [0], axis=broadcast), idx.shape).copy()
    layout = "padded" if shape.layout == "broadcast" else shape.layout
    inputs = (gathers.tensor(idx_name, shape.index_dtype, idx, shape.indices_sizes,
                             "broadcast" if broadcast is not None else layout, broadcast),
              gathers.tensor(sem.input, shape.dtype, values, shape.values_sizes, layout))
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=inputs,
                outputs=(gathers.tensor(sem.output, shape.dtype, None, shape.output_sizes, layout),),
                attributes=((sem.axis or "Axis", shape.axis),), layout=_LAYOUTS[shape.layout],
                expect_supported=shape.supported, edges=(shape.indices, shape.variant or "random"), seed=seed)


def index_values(shape: OneHotShape, rng: np.random.Generator) -> np.ndarray:
    """The indices in their type: random ones in [-depth, depth) (a signed
    type) or [0, depth), 0, depth - 1, -1 and -depth first; ``past-axis``:
    a third at or past the depth; ``below-axis``: a third below -depth."""
    nt = numpy_dtype(shape.index_dtype)
    info = np.iinfo(nt)
    depth = shape.output_sizes[shape.axis]
    low = -depth if shape.index_dtype.is_signed else 0
    flat = rng.integers(low, depth, size=int(np.prod(shape.indices_sizes)), dtype=np.int64)
    first = [0, depth - 1] + ([-1, -depth] if low else [])
    flat[:len(first)] = np.array(first)[:flat.size]
    if shape.indices in ("past-axis", "below-axis"):
        bad = [depth, depth + 1, int(info.max)] + ([2 ** 32 + 1] if nt.itemsize == 8 else []) \
            if shape.indices == "past-axis" else [-depth - 1, int(info.min)]
        wide = flat.astype(object)
        picks = np.arange(1, flat.size, 3)
        for j, p in enumerate(picks):
            wide[p] = bad[j % len(bad)]
        return np.array(wide.tolist(), dtype=nt).reshape(shape.indices_sizes)
    return flat.astype(nt).reshape(shape.indices_sizes)
