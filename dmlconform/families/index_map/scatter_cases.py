"""Cases of the scatters, SCATTER and SCATTER_ND (issue #34 item 3;
docs/index-map.md "Scatters").

* per data type of the table, a case at the representative dimension count
  (4 where the table has it) whose input and updates hold the type's edge
  values (-0, subnormals, infinities, NaN with a payload; an integer's min
  and max): each must land unchanged;
* with FLOAT32 besides: every index type of the table, every Axis (SCATTER:
  as many indices as the axis holds, or fewer) and every tuple size and
  dimension count that counts (SCATTER_ND) at the representative dimension
  count, every dimension count of the table, padded, permuted and broadcast
  (an input of stride 0 along a dimension) layouts;
* ``duplicates``: indices that write three updates to one element (the
  pages call that invalid and give no winner: the first, the last or
  another of them is accepted, and reported, `scatter_oracle`); SCATTER's
  ``wider``: more indices on Axis than the axis holds;
* ``out-of-range``: indices outside their dimension, outside the pages'
  domain (they are silent): a clean rejection passes, and so does a result
  right away from the lines such an update could land on;
* the pages' worked examples; negative cases: an index type, a data type
  and a dimension count outside the tables.

Valid indices hold the boundary values: 0, size - 1 and, of a signed type,
-1 and -size (from the end, FL 3_0 on: signed index types come with that
table); no two of them write one element but in ``duplicates`` cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData
from dmlconform.families.index_map import cases as gathers
from dmlconform.families.index_map.scatters import (
    ScatterCall,
    aligned,
    last,
    scatter_call,
    scatter_problem,
    updates_sizes,
)
from dmlconform.families.index_map.semantics import Example, IndexMap, Operation
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

#: The size of the axis (SCATTER) or of the tuple's dimensions' first (SCATTER_ND) written to.
AXIS_SIZE = 5
_DIMS = (3, 4, 2, 3, 2, 2, 2, 2)
#: SCATTER's indices on Axis: as many as the axis holds, fewer, more (duplicates forced).
_WIDTHS = {"same": AXIS_SIZE, "narrower": 2, "wider": 7}
#: How many updates a duplicated element receives: first, other and last tell apart.
DUPLICATES = 3
_LAYOUTS = {"packed": Layout.PACKED, "padded": Layout.PADDED, "permuted": Layout.PADDED,
            "broadcast": Layout.BROADCAST}


@dataclass(frozen=True, slots=True)
class ScatterShape:
    """One scatter case before its values: types, the input's and the
    indices' sizes, the call, what the indices hold (``boundary``,
    ``duplicates``, ``out-of-range``, ``example``), the layout."""

    dtype: DataType
    index_dtype: DataType
    input_sizes: tuple[int, ...]
    indices_sizes: tuple[int, ...]
    call: ScatterCall
    indices: str = "boundary"
    layout: str = "packed"
    supported: bool = True
    variant: str = ""
    example: Example | None = None

    def case_id(self, operator: str) -> str:
        parts = [operator, self.dtype.name, f"{len(self.input_sizes)}d"]
        if self.call.nd:
            parts += [f"in={self.call.input_rank}", f"idx={self.call.indices_rank}", f"q={self.indices_sizes[-1]}"]
        else:
            parts += [f"axis={self.call.axis}"]
        return joined_id(parts + [self.index_dtype.name, self.indices], self.layout, self.variant)

    @property
    def updates_sizes(self) -> tuple[int, ...]:
        return updates_sizes(self.call, self.input_sizes, self.indices_sizes)



def joined_id(parts: list[str], layout: str, variant: str) -> str:
    """A case id: ``parts``, the layout (but packed) and the variant, joined by ``/``."""
    return "/".join(parts + ([layout] if layout != "packed" else []) + ([variant] if variant else []))


def tensors_named(case: Case, *names: str | None) -> list[TensorData | None]:
    """``case``'s tensors (inputs and outputs) of ``names``, None where it has none of a name."""
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    return [tensors.get(n or "") for n in names]


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no scatter the page describes.  ``problem: fix``."""
    sem = gathers.semantics_of(spec)
    x, idx, upd, out = tensors_named(case, sem.input, sem.indices, sem.updates, sem.output)
    if x is None or idx is None or upd is None or out is None:
        return  # a missing tensor is reported as such (`case_folders`)
    if any(not isinstance(v, int) or isinstance(v, bool) for _, v in case.attributes):
        yield "every attribute of a scatter is a whole number: give them as integers"
        return
    problem = scatter_problem(scatter_call(sem, case.attribute_map()), x.sizes, idx.sizes, upd.sizes, out.sizes)
    if problem is not None:
        yield f"{problem}: give attributes and sizes the page allows"
    if idx.dtype.is_float:
        yield f"{idx.name} is {idx.dtype.name}: indices are integers, give an integer type"


# -- which cases ------------------------------------------------------------------------------------
def shapes(spec: Spec, level: FeatureLevel) -> list[ScatterShape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = gathers.semantics_of(spec)
    ranks = sem.dims_at(level)
    data_row, index_row = family.rows_at(spec, level, ranks, sem.input, sem.indices or "IndicesTensor")
    rep = 4 if 4 in ranks else ranks[-1]
    nd = sem.operation is Operation.SCATTER_ND
    signed = [t for t in index_row.dtypes if t.is_signed]
    main = DataType.UINT32 if DataType.UINT32 in index_row.dtypes else index_row.dtypes[0]
    first = DataType.FLOAT32 if DataType.FLOAT32 in data_row.dtypes else data_row.dtypes[0]
    calls = (lambda r: _nd_calls(r)) if nd else (lambda r: _element_calls(r))
    base = replace(calls(rep)[0], dtype=first, index_dtype=main)
    out = [replace(base, dtype=t, index_dtype=signed[0] if signed else main, variant="edges") for t in data_row.dtypes]
    out += [replace(base, index_dtype=t) for t in index_row.dtypes]
    out += [replace(s, dtype=first, index_dtype=main) for s in calls(rep)[1:]]
    out += [replace(calls(r)[0], dtype=first, index_dtype=main) for r in ranks if r != rep]
    out += [replace(base, layout=layout, index_dtype=t) for layout in ("padded", "permuted", "broadcast")
            for t in ([main] + signed[:1])]
    out += [replace(base, indices="duplicates", index_dtype=t) for t in ([main] + signed[:1])]
    if not nd:
        wide = _elements(rep, rep // 2, "wider")
        out += [replace(wide, dtype=first, index_dtype=t, indices="duplicates") for t in ([main] + signed[:1])]
    wild = next((s for s in calls(rep) if s.call.nd and s.indices_sizes[-1] == s.call.input_rank), base)
    out += [replace(wild, dtype=first, index_dtype=t, indices="out-of-range", supported=False)
            for t in index_row.dtypes]  # SCATTER_ND: tuples of every coordinate (a bad one frees one line)
    out += [s for s in _examples(sem, first, ranks, index_row.dtypes) if s.dtype in data_row.dtypes]
    out += outside_tables(base, lambda r: calls(r)[0], ranks, data_row.dtypes, index_row.dtypes)
    return list(dict.fromkeys(out))


def outside_tables(base: Any, at_rank: Callable[[int], Any], ranks: tuple[int, ...],
                   data_types: tuple[DataType, ...], index_types: tuple[DataType, ...]) -> list[Any]:
    """The negative cases of ``base`` (a shape with ``dtype``, ``index_dtype``,
    ``supported`` and ``variant``): an index type, a data type and a
    dimension count (``at_rank``'s default shape) outside the tables."""
    out = []
    bad_index = next((t for t in gathers._OUTSIDE_INDEX if t not in index_types), None)
    if bad_index is not None:
        out.append(replace(base, index_dtype=bad_index, supported=False, variant="unsupported"))
    bad_data = next((t for t in gathers._OUTSIDE_DATA if t not in data_types), None)
    if bad_data is not None:
        out.append(replace(base, dtype=bad_data, supported=False, variant="unsupported"))
    bad_rank = next((r for r in (3, 5, 2) if r not in ranks), None)
    if bad_rank is not None:
        out.append(replace(at_rank(bad_rank), dtype=base.dtype, index_dtype=base.index_dtype, supported=False,
                           variant="unsupported"))
    return out


def _element_calls(rank: int) -> list[ScatterShape]:
    """SCATTER at ``rank`` dimensions: Axis rank // 2 first, then every
    other; as many indices on Axis as it holds, then fewer."""
    axes = [rank // 2] + [a for a in range(rank) if a != rank // 2]
    return [_elements(rank, a, w) for w in ("same", "narrower") for a in axes if w == "same" or a in (0, rank - 1)]


def _elements(rank: int, axis: int, width: str) -> ScatterShape:
    x = tuple(AXIS_SIZE if d == axis else _DIMS[d] for d in range(rank))
    idx = tuple(_WIDTHS[width] if d == axis else s for d, s in enumerate(x))
    return ScatterShape(DataType.FLOAT32, DataType.UINT32, x, idx, ScatterCall(False, axis=axis),
                        variant="" if width == "same" else width)


def _nd_calls(rank: int) -> list[ScatterShape]:
    """SCATTER_ND at ``rank`` dimensions: (dimensions that count of the
    input, of the indices, tuple size), the default first; those whose
    tuples fit the positions they pick and whose updates fit ``rank``."""
    combos = [(rank, 2, 1), (rank, 2, rank), (rank, 3, 2), (rank, 1, min(2, rank)), (max(rank - 1, 1), 2, 1),
              (rank, rank, 1), (rank, 2, rank - 1)]
    out = []
    for r_in, r_idx, q in dict.fromkeys(combos):
        if not (1 <= r_in <= rank and 1 <= r_idx <= rank and 1 <= q <= r_in and r_idx - 1 + r_in - q <= rank):
            continue
        data = tuple(AXIS_SIZE if j == 0 else _DIMS[j] for j in range(r_in))
        lead = {1: (), 2: (4 if q == 1 else 6,)}.get(r_idx, (2, 3) + (1,) * (r_idx - 3))
        tuples = lead + (q,)
        if math.prod(tuples[:-1]) > math.prod(data[:q]):
            continue  # more tuples than positions: duplicates forced
        out.append(ScatterShape(DataType.FLOAT32, DataType.UINT32, aligned(data, rank), aligned(tuples, rank),
                                ScatterCall(True, input_rank=r_in, indices_rank=r_idx)))
    return out


def _examples(sem: IndexMap, dtype: DataType, ranks: tuple[int, ...],
              index_types: tuple[DataType, ...]) -> Iterator[ScatterShape]:
    """The pages' worked examples whose sizes follow their rules, at a
    dimension count and index type of the table."""
    for e in sem.examples:
        call = scatter_call(sem, dict(e.attributes))
        if len(e.input_sizes) in ranks and e.indices_type in index_types and \
                scatter_problem(call, e.input_sizes, e.indices_sizes, e.updates_sizes, e.output_sizes) is None:
            yield ScatterShape(dtype, e.indices_type or DataType.UINT32, e.input_sizes, e.indices_sizes, call,
                               indices="example", variant=e.name, example=e)


# -- values and tensors -------------------------------------------------------------------------------
def _draw(dtype: DataType, sizes: tuple[int, ...], rng: np.random.Generator, values: tuple[float, ...] | None,
          broadcast: int | None = None) -> np.ndarray:
    """An example's ``values``, or random ones with the type's edge values (`cases.data_values`)."""
    if values is not None:
        return np.array(values, dtype=numpy_dtype(dtype)).reshape(sizes)
    return gathers.data_values(gathers.Shape(dtype, sizes, (), (), None), rng, broadcast)


def case_of(spec: Spec, sem: IndexMap, level: FeatureLevel, seed: int, case_id: str, shape: ScatterShape) -> Case:
    names = (sem.input, sem.indices or "IndicesTensor", sem.updates or "UpdatesTensor")
    rngs = [np.random.default_rng(stream_key(seed, case_id, n)) for n in names]
    e = shape.example
    broadcast = gathers._broadcast_dim(shape.input_sizes) if shape.layout == "broadcast" else None
    x = _draw(shape.dtype, shape.input_sizes, rngs[0], e.input_values if e else None, broadcast)
    idx = np.array(e.indices_values, dtype=numpy_dtype(shape.index_dtype)).reshape(shape.indices_sizes) if e \
        else index_values(shape, rngs[1])
    upd = _draw(shape.dtype, shape.updates_sizes, rngs[2], e.updates_values if e else None)
    layout = "padded" if shape.layout == "broadcast" else shape.layout
    inputs: tuple[TensorData, ...] = (
        gathers.tensor(names[0], shape.dtype, x, shape.input_sizes, layout if broadcast is None else "broadcast",
                       broadcast),
        gathers.tensor(names[1], shape.index_dtype, idx, shape.indices_sizes, layout),
        gathers.tensor(names[2], shape.dtype, upd, shape.updates_sizes, layout))
    parts = {sem.axis: shape.call.axis, sem.input_dimension_count: shape.call.input_rank,
             sem.indices_dimension_count: shape.call.indices_rank}
    attributes = tuple((f.name, parts[f.name]) for f in spec.attributes if f.name in parts)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=inputs,
                outputs=(gathers.tensor(sem.output, shape.dtype, None, shape.input_sizes, layout),),
                attributes=attributes, layout=_LAYOUTS[shape.layout], expect_supported=shape.supported,
                edges=(shape.indices, shape.variant or "random"), seed=seed)


def index_values(shape: ScatterShape, rng: np.random.Generator) -> np.ndarray:
    """The indices in their type: positions no two of which write one
    element (but in ``duplicates`` cases: three to one element per line or
    block), the boundaries first, some of a signed type counted from the
    end; for ``out-of-range`` a third of them outside their dimension."""
    nt = numpy_dtype(shape.index_dtype)
    signed = shape.index_dtype.is_signed
    if shape.call.nd:
        v, size = _nd_positions(shape, rng)
    else:
        v, size = _element_positions(shape, rng)
    if signed:  # from the end: the boundaries' every other occurrence (-size and -1), the rest at random
        negative = rng.random(v.shape) < 0.5
        for edge in (0 * size, size - 1):
            at = (v == edge).reshape(-1)
            negative.reshape(-1)[at] = (np.cumsum(at)[at] % 2) == 1
        v = np.where(negative, v - size, v)
    if shape.indices == "out-of-range":
        v = gathers._out_of_range(v, np.broadcast_to(size, v.shape), nt, rng)
    return v.astype(nt)


def _element_positions(shape: ScatterShape, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """SCATTER: per line along Axis, distinct positions drawn from a
    permutation of the axis (0 and size - 1 first in the first two lines);
    ``duplicates``: the line's first position three times."""
    axis, size = shape.call.axis, shape.input_sizes[shape.call.axis]
    m = shape.indices_sizes[axis]
    lines = math.prod(shape.indices_sizes) // m
    perm = rng.random((lines, size)).argsort(axis=1)
    if shape.indices == "duplicates":
        chosen = _with_duplicates(perm, m, size)
        chosen = np.take_along_axis(chosen, rng.random(chosen.shape).argsort(axis=1), axis=1)
    else:
        chosen = perm[:, :m].copy()
        if m < size:  # the first two lines hold 0 and size - 1 (a whole axis holds them anyway)
            chosen[:2] = np.array([0, size - 1] + list(range(1, size - 1)))[:m]
    moved = chosen.reshape(shape.indices_sizes[:axis] + shape.indices_sizes[axis + 1:] + (m,))
    return np.moveaxis(moved, -1, axis), np.array(size, dtype=np.int64)


def _with_duplicates(perm: np.ndarray, m: int, size: int) -> np.ndarray:
    """Per line, ``m`` positions of which the first appears `DUPLICATES`
    times and the rest are distinct where the axis has room (cycled where not)."""
    order = np.concatenate([np.zeros(DUPLICATES, dtype=np.int64), np.arange(1, m - DUPLICATES + 1) % size])[:m]
    return perm[:, order]


def _nd_positions(shape: ScatterShape, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """SCATTER_ND: distinct tuples drawn from a permutation of the
    positions they can pick (the first all 0, the second all size - 1);
    ``duplicates``: the first position three times."""
    data = last(shape.input_sizes, shape.call.input_rank)
    tuples = last(shape.indices_sizes, shape.call.indices_rank)
    q = tuples[-1]
    grid = data[:q]
    count = math.prod(tuples[:-1])
    perm = rng.permutation(math.prod(grid))
    if shape.indices == "duplicates":
        order = np.concatenate([np.zeros(DUPLICATES, dtype=np.int64), np.arange(1, count) % perm.size])[:count]
        picks = rng.permutation(perm[order])
    else:
        rest = perm[(perm != 0) & (perm != perm.size - 1)]
        picks = np.concatenate([[0, perm.size - 1] if perm.size > 1 else [0], rest])[:count]
    coords = np.stack(np.unravel_index(picks, grid), axis=-1)
    return coords.reshape(shape.indices_sizes).astype(np.int64), np.array(grid, dtype=np.int64)
