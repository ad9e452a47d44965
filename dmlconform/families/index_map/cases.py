"""Cases of the index-map family (GATHER, GATHER_ELEMENTS, GATHER_ND,
GATHER_ND1), and its shape rules.

Issue #34 item 3; docs/index-map.md lists every case.  The cases come from
the reviewed semantics (`families.index_map.semantics.IndexMap`), the
support tables and the level alone:

* per data type of the table, a case at the representative dimension count
  (4 where the table has it) whose input holds the type's edge values (a
  float's -0, subnormals, infinities and NaN among random values; an
  integer's min and max): each must move unchanged;
* with FLOAT32 besides: every index type of the table, every attribute
  combination at the representative dimension count (every axis, every
  IndexDimensions, every batch and tuple size that fits), every dimension
  count of the table, padded, permuted (the dimensions stored in reverse
  order) and broadcast (stride 0) layouts of the tensors, indices outside
  their dimension (``out-of-range``: a value is expected only at the other
  elements), and the page's worked examples (``example<k>``);
* negative cases: an index type, a data type and a dimension count outside
  the tables.

Every indices tensor holds its boundary values first: 0, size - 1 and, of a
signed type, -1 and -size (negative indices count from the end, FL 3_0 on:
signed index types come with that table).

Ids: ``GATHER/FLOAT32/4d/axis=1/k=1/INT32/boundary/padded``.  A case's
values depend on the seed and its id alone (`draws.stream_key`), and
``keep`` is applied before any value is drawn.

The shape rules (`Call`, `call_of`, `output_sizes`, `relevant`) are the one
thing the oracle and the CPU reference share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.edges import edge_values
from dmlconform.cases.model import Case, Layout, TensorData, buffer_elements, packed_strides
from dmlconform.families.index_map import generated
from dmlconform.families.index_map.blocks import ORDER_PREFIX, ORDERS, BlockPlan, block_call, block_problem
from dmlconform.families.index_map.blocks import plans as block_plans
from dmlconform.families.index_map.pads import (
    MODE_PREFIX,
    MODES,
    SYMMETRIC_FROM,
    TYPE_PREFIX,
    PadPlan,
    pad_call,
    pad_problem,
)
from dmlconform.families.index_map.pads import plans as pad_plans
from dmlconform.families.index_map.semantics import Example, IndexMap, Operation
from dmlconform.families.index_map.slices import SliceCall, SlicePlan, plans, slice_call, slice_problem
from dmlconform.families.index_map.tiles import TilePlan, repeats_of, tile_problem
from dmlconform.families.index_map.tiles import plans as tile_plans
from dmlconform.spec.model import DataType, FeatureLevel, Spec, TensorSupport, numpy_dtype

#: The sizes the input's dimensions take in order (a gathered axis takes `AXIS_SIZE`).
_DIMS = (3, 4, 2, 3, 2, 2, 2, 2)
#: The size of the axis indexed: 5, so that 0, 4, -1 and -5 are four elements.
AXIS_SIZE = 5
#: GATHER's index dimensions, right-aligned (k of them: the last k).
_INDEX_DIMS = (2, 2, 3, 6)
#: Index types tried where a table has none of its own outside it (negative cases).
_OUTSIDE_INDEX = (DataType.INT16, DataType.INT8, DataType.UINT16)
_OUTSIDE_DATA = (DataType.FLOAT64, DataType.INT64, DataType.INT16, DataType.INT8, DataType.UINT8)


# -- the shape rules --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Call:
    """A case's attributes as the operation reads them: GATHER's ``axis``
    and ``index_dimensions``; GATHER_ELEMENTS' ``axis``; GATHER_ND's
    ``input_rank`` and ``indices_rank`` (the dimensions that count, after
    leading ones) and ``batch`` (GATHER_ND: 0)."""

    operation: Operation
    axis: int = 0
    index_dimensions: int = 0
    input_rank: int = 0
    indices_rank: int = 0
    batch: int = 0


def call_of(sem: IndexMap, case: Case) -> Call:
    """The attributes of ``case`` as `Call`."""
    attrs = case.attribute_map()

    def get(part: str) -> int:
        name = sem.attribute(part)
        value = attrs.get(name, 0) if name else 0
        return int(value) if isinstance(value, (int, float)) else 0

    return Call(sem.operation, get("axis"), get("index_dimensions"), get("input_dimension_count"),
                get("indices_dimension_count"), get("batch_dimension_count"))


def relevant(sizes: tuple[int, ...], count: int) -> tuple[int, ...]:
    """The last ``count`` of ``sizes``: the dimensions that count, after the leading ones."""
    return sizes[len(sizes) - count:] if count else ()


def right_aligned(sizes: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """``sizes`` in ``rank`` dimensions: leading ones added, or leading ones
    dropped (ValueError where a dropped one is not 1)."""
    extra = len(sizes) - rank
    if extra <= 0:
        return (1,) * -extra + sizes
    if any(s != 1 for s in sizes[:extra]):
        raise ValueError(f"the sizes {list(sizes)} do not fit {rank} dimensions: their first {extra} are not 1")
    return sizes[extra:]


def output_sizes(call: Call, input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...],
                 rank: int) -> tuple[int, ...]:
    """The output's sizes in ``rank`` dimensions by the page's rule;
    ValueError saying what is wrong where the call has none."""
    n = len(input_sizes)
    if call.operation is Operation.GATHER:
        a, k = call.axis, call.index_dimensions
        if not (0 <= a < n and 0 <= k <= len(indices_sizes)):  # k = the count: outside the field's range, as
            raise ValueError(f"Axis={a} must be in [0, {n}) and "  # Example 1 has it (`index-dimensions-range`)
                             f"IndexDimensions={k} in [0, {len(indices_sizes)}]")
        return right_aligned(input_sizes[:a] + relevant(indices_sizes, k) + input_sizes[a + 1:], rank)
    if call.operation is Operation.GATHER_ELEMENTS:
        if not 0 <= call.axis < n:
            raise ValueError(f"Axis={call.axis} must be in [0, {n})")
        if len(indices_sizes) != n or any(i != s for d, (i, s) in enumerate(zip(indices_sizes, input_sizes))
                                          if d != call.axis):
            raise ValueError(f"the indices' sizes {list(indices_sizes)} must be the input's {list(input_sizes)} "
                             f"but on Axis={call.axis}")
        return indices_sizes
    return _nd_sizes(call, input_sizes, indices_sizes, rank)


def _nd_sizes(call: Call, input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...], rank: int) -> tuple[int, ...]:
    r_in, r_idx, b = call.input_rank, call.indices_rank, call.batch
    if not (1 <= r_in <= len(input_sizes) and 1 <= r_idx <= len(indices_sizes)):
        raise ValueError(f"InputDimensionCount={r_in} must be in [1, {len(input_sizes)}] and "
                         f"IndicesDimensionCount={r_idx} in [1, {len(indices_sizes)}]")
    right_aligned(relevant(input_sizes, r_in), len(input_sizes))  # the leading ones
    data, idx = relevant(input_sizes, r_in), relevant(indices_sizes, r_idx)
    q = idx[-1]
    if not (0 <= b < min(r_in, r_idx) and b + q <= r_in and idx[:b] == data[:b]):
        raise ValueError(f"BatchDimensionCount={b} with tuples of {q} coordinates does not fit the input's "
                         f"{list(data)} and the indices' {list(idx)}")
    return right_aligned(idx[:-1] + data[b + q:], rank)


# -- the family's answers -------------------------------------------------------------------------
def semantics_of(spec: Spec) -> IndexMap:
    """``spec``'s index-map semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, IndexMap, "index-map")


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    sem = semantics_of(spec)
    if sem.operation.is_generated:
        return family.generable(lambda: generated.plans(spec, sem, level))
    return family.generable(lambda: shapes(spec, level))


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no call the page describes (a case folder's
    fault, `case_folders`): attributes outside their ranges, sizes that do
    not fit, an output of other sizes.  ``problem: fix``."""
    sem = semantics_of(spec)
    if sem.operation.is_generated:
        yield from generated.case_problems(sem, case)
        return
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    if sem.indices is None:
        yield from _copy_problems(sem, case, tensors.get(sem.input), tensors.get(sem.output))
        return
    x, idx, out = (tensors.get(n) for n in (sem.input, sem.indices, sem.output))
    if x is None or idx is None or out is None:
        return  # a missing tensor is reported as such (`case_folders`)
    if any(not isinstance(v, int) or isinstance(v, bool) for n, v in case.attributes):
        yield "every attribute of a gather is a whole number: give them as integers"
        return
    try:
        wanted = output_sizes(call_of(sem, case), x.sizes, idx.sizes, len(out.sizes))
    except ValueError as exc:
        yield f"{exc}: give attributes and sizes the page allows"
        return
    if out.sizes != wanted:
        yield f"{out.name}'s sizes {list(out.sizes)} are not {list(wanted)}: give it those"
    if idx.dtype.is_float:
        yield f"{idx.name} is {idx.dtype.name}: indices are integers, give an integer type"


def _copy_problems(sem: IndexMap, case: Case, x: TensorData | None, out: TensorData | None) -> Iterator[str]:
    """A slice's or a tile's attributes against the input's and the output's sizes."""
    if x is None or out is None:
        return
    attrs = case.attribute_map()
    try:
        if sem.operation is Operation.PAD:
            problem = pad_problem(pad_call(sem, attrs), x.sizes, out.sizes, out.dtype)
        elif sem.operation in (Operation.DEPTH_TO_SPACE, Operation.SPACE_TO_DEPTH):
            problem = block_problem(block_call(sem, attrs), x.sizes, out.sizes)
        elif sem.operation is Operation.TILE:
            problem = tile_problem(repeats_of(sem, attrs), x.sizes, out.sizes)
        else:
            problem = slice_problem(slice_call(sem, attrs), x.sizes, out.sizes)
    except ValueError as exc:
        yield str(exc)
        return
    if problem is not None:
        yield f"{problem}: give attributes the page allows"


# -- which cases --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values: the data and index types, the input's
    and the indices' sizes, the attributes (part -> value), what the
    indices hold (``boundary``: random valid ones, the boundary values
    first; ``out-of-range``: some outside their dimension; ``example``),
    the layout (``packed``, ``padded``, ``permuted``, ``broadcast``)."""

    dtype: DataType
    input_sizes: tuple[int, ...]
    indices_sizes: tuple[int, ...]
    attrs: tuple[tuple[str, int | float | str | tuple[int, ...]], ...]
    index_dtype: DataType | None
    indices: str = "boundary"
    layout: str = "packed"
    supported: bool = True
    variant: str = ""
    example: Example | None = None
    out_of_domain: tuple[str, ...] = ()
    output_sizes: tuple[int, ...] | None = None  # a slice's (a gather's follow from the rest)

    def case_id(self, operator: str) -> str:
        short = {"axis": "axis", "index_dimensions": "k", "input_dimension_count": "in",
                 "indices_dimension_count": "idx", "batch_dimension_count": "batch"}
        parts = [operator, self.dtype.name, f"{len(self.input_sizes)}d"]
        if self.index_dtype is None:  # a slice: its plan's name
            parts += [self.variant] + ([self.layout] if self.layout != "packed" else [])
            return "/".join(parts)
        parts += [f"{short[p]}={v}" for p, v in self.attrs]
        parts += [f"q={self.indices_sizes[-1]}"] if "input_dimension_count" in dict(self.attrs) else []
        parts += [self.index_dtype.name, self.indices]
        parts += [self.layout] if self.layout != "packed" else []
        return "/".join(parts + ([self.variant] if self.variant else []))


def shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    ranks = sem.dims_at(level)
    if sem.indices is None:
        (row,) = family.rows_at(spec, level, ranks, sem.input)
        if sem.operation is Operation.PAD:
            return _pad_shapes(sem, row, ranks, level)
        if sem.operation in (Operation.DEPTH_TO_SPACE, Operation.SPACE_TO_DEPTH):
            return _block_shapes(sem, row, ranks)
        return _tile_shapes(sem, row, ranks) if sem.operation is Operation.TILE else _slice_shapes(sem, row, ranks)
    data_row, index_row = family.rows_at(spec, level, ranks, sem.input, sem.indices)
    rep = 4 if 4 in ranks else ranks[-1]
    signed = [t for t in index_row.dtypes if t.is_signed]
    main_index = DataType.UINT32 if DataType.UINT32 in index_row.dtypes else index_row.dtypes[0]
    first = DataType.FLOAT32 if DataType.FLOAT32 in data_row.dtypes else data_row.dtypes[0]
    calls = lambda rank: _calls(sem.operation, rank, batched=sem.batch_dimension_count is not None)  # noqa: E731
    base = calls(rep)[0]
    out = [replace(base, dtype=t, index_dtype=signed[0] if signed else main_index, variant="edges")
           for t in data_row.dtypes]
    base = replace(base, dtype=first, index_dtype=main_index)
    out += [replace(base, index_dtype=t) for t in index_row.dtypes]
    out += [replace(s, dtype=first, index_dtype=main_index) for s in calls(rep)[1:]]
    out += [replace(calls(r)[0], dtype=first, index_dtype=main_index) for r in ranks if r != rep]
    out += [replace(base, layout=layout, index_dtype=t) for layout in ("padded", "permuted", "broadcast")
            for t in ([main_index] + signed[:1])]
    out += [replace(base, index_dtype=t, indices="out-of-range", supported=sem.out_of_range_stated)
            for t in index_row.dtypes]
    out += [s for s in _examples(sem, first, ranks, index_row.dtypes) if s.dtype in data_row.dtypes]
    out += _negatives(base, calls, ranks, data_row.dtypes, index_row.dtypes)
    return list(dict.fromkeys(out))


#: The side of the ``--large`` GATHER's input (issue #34): 2^12 x 2^12 = 2^24 elements, as many gathered.
LARGE_SIDE = 1 << 12


def large_shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """GATHER's ``--large`` case: FLOAT32 rows of a 2^12 x 2^12 input
    gathered along Axis 2 by 2^12 UINT32 indices (the boundary ones
    first), 2^24 elements out; none where the table lacks 4 dimensions,
    FLOAT32 or UINT32, or for the other operations."""
    sem = semantics_of(spec)
    ranks = sem.dims_at(level)
    if sem.operation is not Operation.GATHER or sem.indices is None or 4 not in ranks:
        return []
    data_row, index_row = family.rows_at(spec, level, ranks, sem.input, sem.indices)
    if DataType.FLOAT32 not in data_row.dtypes or DataType.UINT32 not in index_row.dtypes:
        return []
    return [Shape(DataType.FLOAT32, (1, 1, LARGE_SIDE, LARGE_SIDE), (1, 1, 1, LARGE_SIDE),
                  (("axis", 2), ("index_dimensions", 1)), DataType.UINT32, variant="large")]


def _slice_shapes(sem: IndexMap, row: TensorSupport, ranks: tuple[int, ...]) -> list[Shape]:
    """SLICE and SLICE1: per data type the default plan with the type's edge
    values; with FLOAT32 every plan at the representative dimension count,
    the default one at every other, each layout, the page's examples; a
    data type and a dimension count outside the table (negative)."""
    window = sem.operation is Operation.SLICE_WINDOW
    rep = 4 if 4 in ranks else ranks[-1]

    def of(plan: SlicePlan, dtype: DataType, **more: object) -> Shape:
        attrs = (("offsets", plan.call.offsets), ("sizes", plan.call.sizes), ("strides", plan.call.strides))
        return replace(Shape(dtype, plan.input_sizes, (), attrs, None, indices="window", variant=plan.variant,
                             output_sizes=plan.output_sizes), **more)  # type: ignore[arg-type]

    first = DataType.FLOAT32 if DataType.FLOAT32 in row.dtypes else row.dtypes[0]
    def named(rank: int, variant: str) -> SlicePlan:
        return next(p for p in plans(rank, window=window) if p.variant == variant)

    whole = named(rep, "reversed" if window else "whole")  # every element copied: every edge value moves
    default = "mixed" if window else "contiguous"
    out = [of(whole, t, variant=f"{whole.variant}/edges") for t in row.dtypes]
    out += [of(p, first, **({"supported": False, "out_of_domain": (sem.strides or "Strides",)}
                            if p.variant == "repeat" else {})) for p in plans(rep, window=window)]
    out += [of(named(r, default), first) for r in ranks if r != rep]
    out += [of(whole, first, layout=layout) for layout in ("padded", "permuted", "broadcast")]
    out += [s for s in _slice_examples(sem, first, ranks)]
    bad_data = next((t for t in _OUTSIDE_DATA if t not in row.dtypes), None)
    if bad_data is not None:
        out.append(of(whole, bad_data, supported=False, variant=f"{whole.variant}/unsupported"))
    bad_rank = next((r for r in (3, 2, 6) if r not in ranks), None)
    if bad_rank is not None:
        out.append(of(plans(bad_rank, window=window)[0], first, supported=False, variant="contiguous/unsupported"))
    return list(dict.fromkeys(out))


def _tile_shapes(sem: IndexMap, row: TensorSupport, ranks: tuple[int, ...]) -> list[Shape]:
    """TILE: per data type the mixed Repeats with the type's edge values;
    with FLOAT32 every plan at the representative dimension count, the
    mixed one at every other, each layout, the page's example; a data type
    and a dimension count outside the table (negative)."""
    rep = 4 if 4 in ranks else ranks[-1]

    def of(plan: TilePlan, dtype: DataType, **more: object) -> Shape:
        return replace(Shape(dtype, plan.input_sizes, (), (("repeats", plan.repeats),), None, indices="tile",
                             variant=plan.variant, output_sizes=plan.output_sizes), **more)  # type: ignore[arg-type]

    first = DataType.FLOAT32 if DataType.FLOAT32 in row.dtypes else row.dtypes[0]
    mixed = tile_plans(rep)[0]
    out = [of(mixed, t, variant="mixed/edges") for t in row.dtypes]
    out += [of(p, first) for p in tile_plans(rep)]
    out += [of(tile_plans(r)[0], first) for r in ranks if r != rep]
    out += [of(mixed, first, layout=layout) for layout in ("padded", "permuted", "broadcast")]
    for e in sem.examples:
        repeats = dict(e.attributes).get(sem.repeats or "Repeats")
        if isinstance(repeats, tuple) and len(e.input_sizes) in ranks and \
                tile_problem(repeats, e.input_sizes, e.output_sizes) is None:
            out.append(Shape(first, e.input_sizes, (), (("repeats", repeats),), None, indices="example",
                             variant=e.name, example=e, output_sizes=e.output_sizes))
    bad_data = next((t for t in _OUTSIDE_DATA if t not in row.dtypes), None)
    if bad_data is not None:
        out.append(of(mixed, bad_data, supported=False, variant="mixed/unsupported"))
    bad_rank = next((r for r in (3, 2, 6) if r not in ranks), None)
    if bad_rank is not None:
        out.append(of(tile_plans(bad_rank)[0], first, supported=False, variant="mixed/unsupported"))
    return list(dict.fromkeys(out))


def _pad_shapes(sem: IndexMap, row: TensorSupport, ranks: tuple[int, ...], level: FeatureLevel) -> list[Shape]:
    """PADDING and PADDING1, per mode: per data type the mixed paddings
    with the type's edge values; with FLOAT32 every plan at the
    representative dimension count, the mixed one at every other, each
    layout; CONSTANT besides: the constants that show a conversion (`_constants`);
    the page's examples.  Negative: SYMMETRIC before FL 3_0, REFLECTION of
    a one-element dimension (nothing to fold over: its element, or a clean
    rejection), a data type and a dimension count outside the table."""
    rep = 4 if 4 in ranks else ranks[-1]
    first = DataType.FLOAT32 if DataType.FLOAT32 in row.dtypes else row.dtypes[0]

    def of(plan: PadPlan, dtype: DataType, mode: str, value: float | int = 9, **more: object) -> Shape:
        attrs: tuple[tuple[str, int | float | str | tuple[int, ...]], ...] = (
            ("start_padding", plan.start), ("end_padding", plan.end), ("padding_mode", MODE_PREFIX + mode),
            ("padding_value", value))
        if sem.padding_value_type is not None:
            attrs += (("padding_value_type", TYPE_PREFIX + dtype.name),)
        early = mode == "SYMMETRIC" and level < SYMMETRIC_FROM
        shape = Shape(dtype, plan.input_sizes, (), attrs, None, indices="pad", variant=f"{mode.lower()}/{plan.variant}",
                      output_sizes=plan.output_sizes, supported=not early,
                      out_of_domain=(sem.padding_mode or "PaddingMode",) if early else ())
        if mode == "REFLECTION" and any(n == 1 and s + e for n, s, e in zip(plan.input_sizes, plan.start, plan.end)):
            shape = replace(shape, supported=False, out_of_domain=(sem.start_padding or "StartPadding",))
        return replace(shape, **more)  # type: ignore[arg-type]

    out: list[Shape] = []
    for mode in MODES:
        mixed = pad_plans(rep)[0]
        out += [of(mixed, t, mode, variant=f"{mode.lower()}/mixed/edges") for t in row.dtypes]
        out += [of(p, first, mode) for p in pad_plans(rep)]
        out += [of(pad_plans(r)[0], first, mode) for r in ranks if r != rep]
        out += [of(mixed, first, mode, layout=layout) for layout in ("padded", "permuted", "broadcast")]
        if mode == "CONSTANT":
            out += [of(mixed, t, mode, v, variant=f"constant/mixed/{name}")
                    for t in row.dtypes for name, v in _constants(t, union=sem.padding_value_type is not None)]
    out += list(_pad_examples(sem, first, ranks, level))
    bad_data = next((t for t in _OUTSIDE_DATA if t not in row.dtypes), None)
    if bad_data is not None:
        out.append(of(pad_plans(rep)[0], bad_data, "EDGE", supported=False, variant="edge/mixed/unsupported"))
    bad_rank = next((r for r in (3, 2, 6) if r not in ranks), None)
    if bad_rank is not None:
        out.append(of(pad_plans(bad_rank)[0], first, "EDGE", supported=False, variant="edge/mixed/unsupported"))
    return list(dict.fromkeys(out))


def _constants(dtype: DataType, *, union: bool) -> list[tuple[str, float | int]]:
    """The constants beyond 9 that show how PaddingValue reaches the type:
    a float's -0 (its sign kept); PADDING1's integer union the type's
    extreme (every bit of a 64-bit value kept); PADDING's FLOAT for an
    integer type a fraction, truncated toward zero (the page: "10.6 will
    become 10")."""
    if dtype.is_float:
        return [("negative-zero", -0.0)]
    if union:
        info = np.iinfo(numpy_dtype(dtype))
        return [("extreme", int(info.min) if dtype.is_signed else int(info.max))]
    return [("fraction", -10.6 if dtype.is_signed else 10.6)]


def _pad_examples(sem: IndexMap, dtype: DataType, ranks: tuple[int, ...], level: FeatureLevel) -> Iterator[Shape]:
    """The page's worked examples, at a dimension count of the table (SYMMETRIC's from FL 3_0)."""
    for e in sem.examples:
        given = dict(e.attributes)
        mode = str(given.get(sem.padding_mode or "", ""))
        attrs: tuple[tuple[str, int | float | str | tuple[int, ...]], ...] = tuple(
            (p, given.get(n, 0)) for p in ("start_padding", "end_padding", "padding_mode", "padding_value",
                                           "padding_value_type") if (n := sem.attribute(p)) is not None)
        try:
            call = pad_call(sem, {sem.attribute(p) or p: v for p, v in attrs})
        except ValueError:
            continue
        if len(e.input_sizes) in ranks and pad_problem(call, e.input_sizes, e.output_sizes, dtype) is None and \
                not (mode.endswith("SYMMETRIC") and level < SYMMETRIC_FROM):
            yield Shape(dtype, e.input_sizes, (), attrs, None, indices="example", variant=e.name, example=e,
                        output_sizes=e.output_sizes)


def _block_shapes(sem: IndexMap, row: TensorSupport, ranks: tuple[int, ...]) -> list[Shape]:
    """The depth/space moves, per order (the *1's both, the others' DCR):
    per data type BlockSize 2 with the type's edge values; with FLOAT32
    every plan and each layout; the page's examples.  Negative: a data
    type outside the table (before 5_0).  No dimension count outside it:
    the pages name the four dimensions, and a call of three or five has
    no meaning to compute."""
    to_space = sem.operation is Operation.DEPTH_TO_SPACE
    first = DataType.FLOAT32 if DataType.FLOAT32 in row.dtypes else row.dtypes[0]
    orders = ORDERS if sem.order is not None else {"DEPTH_COLUMN_ROW": "DCR"}

    def of(plan: BlockPlan, dtype: DataType, order: str, **more: object) -> Shape:
        attrs: tuple[tuple[str, int | float | str | tuple[int, ...]], ...] = (("block_size", plan.block),)
        attrs += (("order", ORDER_PREFIX + order),) if sem.order is not None else ()
        call = block_call(sem, {sem.attribute(p) or p: v for p, v in attrs})
        return replace(Shape(dtype, plan.input_sizes, (), attrs, None, indices="block",
                             variant=f"{ORDERS[order].lower()}/{plan.variant}",
                             output_sizes=call.output_sizes(plan.input_sizes)), **more)  # type: ignore[arg-type]

    out: list[Shape] = []
    for order in orders:
        b2 = block_plans(to_space)[0]
        out += [of(b2, t, order, variant=f"{ORDERS[order].lower()}/b2/edges") for t in row.dtypes]
        out += [of(p, first, order) for p in block_plans(to_space)]
        out += [of(b2, first, order, layout=layout) for layout in ("padded", "permuted", "broadcast")]
    for e in sem.examples:
        given = dict(e.attributes)
        attrs = tuple((p, given[n]) for p in ("block_size", "order") if (n := sem.attribute(p)) in given)
        try:
            call = block_call(sem, given)
        except ValueError:
            continue
        if block_problem(call, e.input_sizes, e.output_sizes) is None and e.input_type in row.dtypes:
            out.append(Shape(e.input_type, e.input_sizes, (), attrs, None, indices="example", variant=e.name,
                             example=e, output_sizes=e.output_sizes))
    bad_data = next((t for t in _OUTSIDE_DATA if t not in row.dtypes), None)
    if bad_data is not None:
        out.append(of(block_plans(to_space)[0], bad_data, next(iter(orders)), supported=False, variant="b2/unsupported"))
    return list(dict.fromkeys(out))


def _slice_examples(sem: IndexMap, dtype: DataType, ranks: tuple[int, ...]) -> Iterator[Shape]:
    """The page's worked examples, at a dimension count of the table."""
    for e in sem.examples:
        given = dict(e.attributes)
        attrs = tuple((p, given[n]) for p in ("offsets", "sizes", "strides") if (n := sem.attribute(p)) in given)
        call = SliceCall(sem.operation is Operation.SLICE_WINDOW, *(tuple(v) for _, v in attrs))  # type: ignore[arg-type]
        if len(e.input_sizes) in ranks and slice_problem(call, e.input_sizes, e.output_sizes) is None:
            yield Shape(dtype, e.input_sizes, (), attrs, None, indices="example", variant=e.name, example=e,
                        output_sizes=e.output_sizes)


def _negatives(base: Shape, calls: Callable[[int], list[Shape]], ranks: tuple[int, ...],
               data_types: tuple[DataType, ...], index_types: tuple[DataType, ...]) -> list[Shape]:
    """An index type, a data type and a dimension count outside the tables."""
    out = []
    bad_index = next((t for t in _OUTSIDE_INDEX if t not in index_types), None)
    if bad_index is not None:
        out.append(replace(base, index_dtype=bad_index, supported=False, variant="unsupported"))
    bad_data = next((t for t in _OUTSIDE_DATA if t not in data_types), None)
    if bad_data is not None:
        out.append(replace(base, dtype=bad_data, supported=False, variant="unsupported"))
    bad_rank = next((r for r in (3, 5, 2) if r not in ranks), None)
    if bad_rank is not None:
        out.append(replace(calls(bad_rank)[0], dtype=base.dtype,
                           index_dtype=base.index_dtype, supported=False, variant="unsupported"))
    return out


def _operation_of(shape: Shape) -> Operation:
    """The operation a shape's attributes belong to."""
    parts = {p for p, _ in shape.attrs}
    if "index_dimensions" in parts:
        return Operation.GATHER
    return Operation.GATHER_ND if "input_dimension_count" in parts else Operation.GATHER_ELEMENTS


def _calls(op: Operation, rank: int, *, batched: bool = False) -> list[Shape]:
    """The attribute combinations at ``rank`` dimensions, the default first
    (types filled in by the caller); GATHER_ND's with batch dimensions only
    where ``batched`` (GATHER_ND1)."""
    if op is Operation.GATHER:
        return [_gather(rank, a, k) for k in (1, 0, 2, 3) if k < rank for a in _axes(rank)
                if k == 1 or a in (0, rank - 1) or rank <= 4]
    if op is Operation.GATHER_ELEMENTS:
        return [_elements(rank, a, w) for w in ("same", "wider", "narrower") for a in _axes(rank)
                if w == "same" or a == rank - 1 or rank <= 4]
    combos = [(rank, rank, 0, rank), (rank, 2, 0, 1), (rank, 3, 0, 2), (rank, rank, 0, rank - 1),
              (rank, 1, 0, min(2, rank)), (max(rank - 1, 1), 2, 0, max(rank - 1, 1)),
              (rank, 3, 1, 1), (rank, rank, 1, 2), (rank, rank, 1, 3), (rank, rank, 2, 1), (rank, rank, 2, 2)]
    return [_nd(rank, *c, batched=batched) for c in dict.fromkeys(combos) if _nd_fits(rank, *c) and (batched or not c[2])]


def _axes(rank: int) -> list[int]:
    """Axis rank // 2 first (the default case), then every other."""
    return [rank // 2] + [a for a in range(rank) if a != rank // 2]


def _gather(rank: int, a: int, k: int) -> Shape:
    """GATHER at ``rank`` dimensions, Axis ``a``, IndexDimensions ``k``: the
    k - 1 dimensions the output has more than the input are leading ones
    (of the input's, then of the indices' relevant ones), as the page's
    right alignment asks.  Where the input has fewer than k - 1 dimensions
    before Axis to give, its original rank + k - 1 exceeds the output's
    DimensionCount, which the page forbids ("must be less than or equal"):
    a negative case, its relevant leading index sizes 1 (rejected cleanly,
    or computed with those ones cropped; DirectML's own CreateOperator
    takes it and writes past a heap block: docs/results/directml-linux.md)."""
    x = [AXIS_SIZE if d == a else _DIMS[d] for d in range(rank)]
    idx = list(_INDEX_DIMS[len(_INDEX_DIMS) - k:]) if k else []
    ones = max(k - 1, 0)
    for d in range(min(a, ones)):
        x[d] = 1
    for d in range(max(0, ones - a)):
        idx[d] = 1
    shape = Shape(DataType.FLOAT32, tuple(x), right_aligned(tuple(idx), rank),
                  (("axis", a), ("index_dimensions", k)), DataType.UINT32)
    if ones > a:
        return replace(shape, supported=False, out_of_domain=("Axis", "IndexDimensions"))
    return shape


def _elements(rank: int, a: int, width: str) -> Shape:
    """GATHER_ELEMENTS: the indices of the input's sizes but on Axis ``a``
    (as many, 7 or 2 there)."""
    x = tuple(AXIS_SIZE if d == a else _DIMS[d] for d in range(rank))
    wide = {"same": AXIS_SIZE, "wider": 7, "narrower": 2}[width]
    idx = tuple(wide if d == a else s for d, s in enumerate(x))
    return Shape(DataType.FLOAT32, x, idx, (("axis", a),), DataType.UINT32, variant="" if width == "same" else width)


def _nd_fits(rank: int, r_in: int, r_idx: int, b: int, q: int) -> bool:
    return 1 <= r_in <= rank and 1 <= r_idx <= rank and b < min(r_in, r_idx) and b <= r_idx - 1 and \
        1 <= q <= r_in - b and r_idx - 1 + r_in - b - q <= rank


def _nd(rank: int, r_in: int, r_idx: int, b: int, q: int, *, batched: bool) -> Shape:
    """GATHER_ND(1): ``r_in`` input dimensions that count (batch ones of 2,
    then `AXIS_SIZE` and the others), ``r_idx`` of the indices (the
    batch's, then 3s, then the tuple size ``q``), ``b`` batch dimensions."""
    data = (2,) * b + tuple(AXIS_SIZE if j == 0 else _DIMS[j] for j in range(r_in - b))
    idx = data[:b] + (3,) * (r_idx - 1 - b) + (q,)
    attrs = (("input_dimension_count", r_in), ("indices_dimension_count", r_idx))
    return Shape(DataType.FLOAT32, right_aligned(data, rank), right_aligned(idx, rank),
                 attrs + ((("batch_dimension_count", b),) if batched else ()), DataType.UINT32)


def _examples(sem: IndexMap, dtype: DataType, ranks: tuple[int, ...], index_types: tuple[DataType, ...]) -> Iterator[Shape]:
    """The page's worked examples whose sizes follow its rules (lint names
    the others) at a dimension count and index type of the table."""
    parts = [p for p in ("axis", "index_dimensions", "input_dimension_count", "indices_dimension_count",
                         "batch_dimension_count") if sem.attribute(p)]
    for e in sem.examples:
        given = dict(e.attributes)
        attrs = tuple((p, given[name]) for p in parts if (name := sem.attribute(p)) in given)
        shape = Shape(dtype, e.input_sizes, e.indices_sizes, attrs, e.indices_type, indices="example",
                      variant=e.name, example=e)
        k = dict(attrs).get("index_dimensions")
        if k is not None and k == len(e.indices_sizes):  # beyond the field's [0, DimensionCount)
            shape = replace(shape, supported=False, out_of_domain=(sem.index_dimensions or "IndexDimensions",))
        if len(e.input_sizes) in ranks and e.indices_type in index_types and _fits(shape, e.output_sizes):
            yield shape


def _fits(shape: Shape, printed: tuple[int, ...]) -> bool:
    """Whether ``shape``'s sizes follow the page's rules and give ``printed``."""
    try:
        return _output_of(shape) == printed
    except ValueError:
        return False


def _output_of(shape: Shape) -> tuple[int, ...]:
    if shape.output_sizes is not None:
        return shape.output_sizes
    attrs: dict[str, int] = {p: v for p, v in shape.attrs if isinstance(v, int)}
    call = Call(_operation_of(shape), attrs.get("axis", 0), attrs.get("index_dimensions", 0),
                attrs.get("input_dimension_count", 0), attrs.get("indices_dimension_count", 0),
                attrs.get("batch_dimension_count", 0))
    return output_sizes(call, shape.input_sizes, shape.indices_sizes, len(shape.input_sizes))


# -- values and tensors -----------------------------------------------------------------------
def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (the module docstring), only those
    ``keep(id, data type)`` accepts, without the negative ones where not
    ``negative``; identical for a ``seed``.  ``large`` adds GATHER's
    2^24-element case (`large_shapes`) and CAST's (`generated.large_plans`)."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    if sem.operation.is_generated:
        yield from generated.generate(spec, sem, level, seed=seed, large=large, negative=negative, keep=keep)
        return
    every = shapes(spec, level) + (large_shapes(spec, level) if large else [])
    for case_id, shape in family.selected(every, lambda s: s.case_id(spec.operator), keep, negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)


def _case(spec: Spec, sem: IndexMap, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    out_sizes = _output_of(shape)
    broadcast = _broadcast_dim(shape.input_sizes) if shape.layout == "broadcast" else None
    x = data_values(shape, np.random.default_rng(stream_key(seed, case_id, sem.input)), broadcast)
    layout = "padded" if shape.layout == "broadcast" else shape.layout
    inputs: tuple[TensorData, ...] = (
        tensor(sem.input, shape.dtype, x, shape.input_sizes, layout if broadcast is None else "broadcast", broadcast),)
    if sem.indices is not None and shape.index_dtype is not None:
        idx = index_values(shape, np.random.default_rng(stream_key(seed, case_id, sem.indices)))
        inputs += (tensor(sem.indices, shape.index_dtype, idx, shape.indices_sizes, layout),)
    named: dict[str | None, int | float | str] = {
        sem.attribute(p): ",".join(map(str, v)) if isinstance(v, tuple) else v for p, v in shape.attrs}
    named[sem.dimension_count] = len(shape.input_sizes)
    attributes = tuple((f.name, named[f.name]) for f in spec.attributes if f.name in named)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=inputs,
                outputs=(tensor(sem.output, shape.dtype, None, out_sizes, layout),), attributes=attributes,
                layout=_LAYOUTS[shape.layout], expect_supported=shape.supported,
                edges=(shape.indices, shape.variant or "random"), seed=seed, out_of_domain=shape.out_of_domain)


_LAYOUTS = {"packed": Layout.PACKED, "padded": Layout.PADDED, "permuted": Layout.PADDED,
            "broadcast": Layout.BROADCAST}


def _broadcast_dim(sizes: tuple[int, ...]) -> int | None:
    return next((d for d, s in enumerate(sizes) if s > 1), None)


def data_values(shape: Shape, rng: np.random.Generator, broadcast: int | None = None) -> np.ndarray:
    """The input in its type: the example's values, or random ones with
    the type's edge values first (a float's NaN also with a payload), alike
    along ``broadcast`` where given."""
    nt = numpy_dtype(shape.dtype)
    if shape.example is not None:
        return np.array(shape.example.input_values, dtype=nt).reshape(shape.input_sizes)
    count = math.prod(shape.input_sizes)
    if shape.dtype.is_float:
        with np.errstate(over="ignore"):
            flat = (rng.uniform(-4.0, 4.0, size=count) * 2.0 ** rng.integers(-8, 9, size=count)).astype(nt)
        special = [e.value for e in edge_values(shape.dtype)] + [_payload_nan(nt)]
    else:
        info = np.iinfo(nt)
        flat = rng.integers(info.min, info.max, size=count, dtype=nt, endpoint=True)
        special = [e.value for e in edge_values(shape.dtype)]
    if shape.indices != "out-of-range":
        flat[:len(special)] = np.array(special, dtype=nt)[:count]
        flat = rng.permutation(flat)
    else:  # finite values without zeros: an element at a bad index may be any value (`oracle`), the rest exact
        flat[flat == 0] = 1
    x = flat.reshape(shape.input_sizes)
    if broadcast is not None:
        x = np.broadcast_to(np.take(x, [0], axis=broadcast), x.shape).copy()
    return x


def _payload_nan(nt: np.dtype) -> np.generic:
    """A quiet NaN with a payload of 1 in its low bit: it must move unchanged (the comparison takes any NaN)."""
    bits = np.array([np.nan], dtype=nt).view(f"u{nt.itemsize}") | 1
    return bits.view(nt)[0]


def index_values(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """The indices in their type: the example's, or random valid ones (of
    a signed type from -size on) with the boundary values first; for
    ``out-of-range`` a third of them outside (size, size + 1, the type's
    greatest, 2^32 + 1 for a 64-bit type; -size - 1 and the least for a
    signed one)."""
    index_dtype = shape.index_dtype or DataType.UINT32  # a gather's shape always names it
    nt = numpy_dtype(index_dtype)
    if shape.example is not None:
        return np.array(shape.example.indices_values, dtype=nt).reshape(shape.indices_sizes)
    size = _indexed_sizes(shape)
    signed = index_dtype.is_signed
    low = np.where(signed, -size, 0)
    v = low + np.floor(rng.random(size.shape) * (size - low)).astype(np.int64)
    flat = v.reshape(-1)  # the first index tuples (one index each but GATHER_ND's) at each boundary in turn
    q = shape.indices_sizes[-1] if "input_dimension_count" in dict(shape.attrs) else 1
    n = min(flat.size, (4 if signed else 2) * q)
    s = size.reshape(-1)[:n]
    flat[:n] = np.choose(np.arange(n) // q, [0 * s, s - 1, 0 * s - 1, -s])
    if shape.indices == "out-of-range":
        return _out_of_range(v.reshape(size.shape), size, nt, rng)
    return v.reshape(size.shape).astype(nt)


def _out_of_range(v: np.ndarray, size: np.ndarray, nt: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """``v`` with a third of its elements, and at least one of each kind of
    bad index where there is room, outside their dimension (each kind in
    turn, the first element left inside), in type ``nt``.  ``rng`` is
    unused: the bad ones are placed, not drawn."""
    info = np.iinfo(nt)
    bad = [lambda s: s, lambda s: s + 1, lambda s: int(info.max)]
    bad += [lambda s: 2 ** 32 + 1] if nt.itemsize == 8 else []
    bad += [lambda s: -s - 1, lambda s: int(info.min)] if info.min < 0 else []
    out = v.astype(object).reshape(-1)
    sizes = size.reshape(-1)
    count = max(len(bad), out.size // 3)  # every kind where there is room, the first index left inside
    picks = np.linspace(1, out.size - 1, min(count, out.size - 1)).astype(np.int64) if out.size > 1 else [0]
    for j, p in enumerate(picks):
        out[p] = bad[j % len(bad)](int(sizes[p]))
    return np.array(out.tolist(), dtype=nt).reshape(v.shape)


def _indexed_sizes(shape: Shape) -> np.ndarray:
    """Per element of the indices (their sizes), the size of the input
    dimension it indexes."""
    attrs = {p: v for p, v in shape.attrs if isinstance(v, int)}
    idx = np.zeros(shape.indices_sizes, dtype=np.int64)
    if "input_dimension_count" not in attrs:
        return idx + shape.input_sizes[attrs["axis"]]
    data = relevant(shape.input_sizes, attrs["input_dimension_count"])
    b, q = attrs.get("batch_dimension_count", 0), shape.indices_sizes[-1]
    return idx + np.array(data[b:b + q], dtype=np.int64)


def layout_strides(sizes: tuple[int, ...], layout: str) -> tuple[int, ...]:
    """Element strides of ``layout``: packed, padded (gaps after each row) or
    permuted (the dimensions stored in reverse order: the first innermost)."""
    if layout == "padded":
        return family.padded_strides(sizes)
    if layout == "permuted":
        return tuple(reversed(packed_strides(tuple(reversed(sizes)))))
    return packed_strides(sizes)


def tensor(name: str, dtype: DataType, values: np.ndarray | None, sizes: tuple[int, ...], layout: str,
           broadcast: int | None = None) -> TensorData:
    """A read-only tensor of ``layout`` holding ``values`` (the gaps of a
    padded one: the type's greatest value or NaN, which show where read),
    or an output's zeroed buffer; ``broadcast``: stride 0 along that
    dimension (``values`` alike along it)."""
    nt = numpy_dtype(dtype)
    if broadcast is not None and values is not None:
        return family.input_tensor(name, dtype, values, broadcast_dim=broadcast)
    strides = layout_strides(sizes, layout)
    gap = np.nan if dtype.is_float else np.iinfo(nt).max
    buf = np.full(buffer_elements(sizes, strides), gap if values is not None else 0, dtype=nt)
    if values is not None:
        view = np.lib.stride_tricks.as_strided(buf, sizes, tuple(s * nt.itemsize for s in strides), writeable=True)
        view[...] = values
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)
