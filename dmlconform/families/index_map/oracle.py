"""The index-map family's oracle: each output element is one input element,
found by coordinates computed from the page's semantics; compared bit for
bit.

Issue #34 item 1; DESIGN.md "Operator families" (index map).  For every
output coordinate `source_map` computes the coordinate of the input element
it is (from the attributes, the indices' values and the page's right
alignment of sizes), as a position among the input's elements in C order,
and whether every index it read lies inside its dimension.  The expected
output is the input's elements at those positions: no gather, take or pad
of numpy (the CPU reference's tools) computes it, only the coordinates.

* **Exact**: no bound and a ULP budget of 0; the sign of zero counts and
  every bit pattern must move unchanged (any NaN matches any NaN: payloads
  aside, as the comparator does).
* **Negative indices** of a signed index type count from the end of their
  dimension (-1 the last element): FL 3_0's rule, and signed index types
  come only with FL 3_0's tables.
* **An index outside its dimension** has no expected value: there the
  bound is infinite and NaN is accepted too (the GATHER page: "incorrect
  outputs, but no failure"); every other element of the same output must
  be right.  Where a batch has such elements, the other elements' bound
  is NaN, which no error is within: they stay exact (a bound of 0 would
  let -0 pass for +0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier
from dmlconform.families.index_map import generated_oracle, join_examples, nonzero_oracle, scatter_oracle
from dmlconform.families.index_map.blocks import block_call, block_problem
from dmlconform.families.index_map.cases import Call, call_of, output_sizes, relevant, semantics_of
from dmlconform.families.index_map.join_moves import JoinBatch
from dmlconform.families.index_map.joins import is_join
from dmlconform.families.index_map.moves import block_map, constant, pad_map
from dmlconform.families.index_map.onehot import onehot_problem
from dmlconform.families.index_map.onehot_oracle import onehot_expected
from dmlconform.families.index_map.pads import PadCall, pad_call, pad_problem
from dmlconform.families.index_map.scatters import scatter_call, scatter_problem
from dmlconform.families.index_map.semantics import Example, IndexMap, Operation
from dmlconform.families.index_map.slices import SliceCall, slice_call, slice_problem
from dmlconform.families.index_map.tiles import tile_problem
from dmlconform.oracles.base import BatchExpectation, Expectation, within
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["IndexMapOracle", "SourceMap", "example_problems", "source_map"]

#: The alternative offered where an index lies outside its dimension.
ANY_VALUE = "out-of-range-index"

Coordinate = int | np.ndarray  # one dimension's coordinate: a number, or an array broadcast over the output
#: (coordinates in the indices, the size of the dimension the index counts in) -> (coordinate, inside).
Reader = Callable[[Sequence[Coordinate], int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True, slots=True, eq=False)
class SourceMap:
    """Per output element (the output's shape): ``position``, the C-order
    position among the input's elements of the element it is (0 where an
    index is outside), and ``valid``, whether every index read lies inside
    its dimension."""

    position: np.ndarray
    valid: np.ndarray


def _position(coordinates: Sequence[Coordinate], sizes: tuple[int, ...]) -> np.ndarray:
    """The C-order position of ``coordinates`` in a tensor of ``sizes``:
    the sum of each coordinate times the elements after its dimension."""
    total: Coordinate = 0
    after = 1
    for c, size in zip(reversed(coordinates), reversed(sizes)):
        total = total + np.asarray(c, dtype=np.int64) * after
        after *= size
    return np.asarray(total, dtype=np.int64)


def _inside(raw: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """An index read (its own type) as a coordinate of a dimension of
    ``size`` (negative ones of a signed type from the end) and whether it
    lies inside; 0 where it does not."""
    if raw.dtype.kind == "u":
        valid = raw < np.uint64(size)
        return np.where(valid, raw, 0).astype(np.int64), valid
    v = raw.astype(np.int64)
    v = np.where(v < 0, v + size, v)
    valid = (v >= 0) & (v < size)
    return np.where(valid, v, 0), valid


def _aligned(coordinates: list[Coordinate], length: int) -> list[Coordinate]:
    """Output coordinates as those of ``length`` dimensions right-aligned to
    them: leading ones dropped, or leading zeros (of size-1 dimensions) added."""
    extra = length - len(coordinates)
    lead: list[Coordinate] = [0] * max(extra, 0)
    return lead + coordinates if extra >= 0 else coordinates[-extra:]


def source_map(call: Call, input_sizes: tuple[int, ...], indices: np.ndarray,
               output_sizes: tuple[int, ...]) -> SourceMap:
    """Where each output element of ``call`` comes from (`SourceMap`),
    ``indices`` the indices' logical values (their sizes)."""
    out: list[Coordinate] = list(np.indices(output_sizes, sparse=True))
    flat = indices.reshape(-1)

    def read(coordinates: Sequence[Coordinate], size: int) -> tuple[np.ndarray, np.ndarray]:
        return _inside(flat[_position(coordinates, indices.shape)], size)

    if call.operation is Operation.GATHER:
        a, k = call.axis, call.index_dimensions
        full = _aligned(out, len(input_sizes) + k - 1)
        v, valid = read([0] * (indices.ndim - k) + full[a:a + k], input_sizes[a])
        source = full[:a] + [v] + full[a + k:]
    elif call.operation is Operation.GATHER_ELEMENTS:
        v, valid = read(out, input_sizes[call.axis])
        source = out[:call.axis] + [v] + out[call.axis + 1:]
    else:
        source, valid = _nd_source(call, input_sizes, indices, out, read)
    position = np.broadcast_to(_position(source, input_sizes), output_sizes)
    return SourceMap(position, np.broadcast_to(valid, output_sizes))


def _nd_source(call: Call, input_sizes: tuple[int, ...], indices: np.ndarray, out: list[Coordinate],
               read: Reader) -> tuple[list[Coordinate], np.ndarray]:
    """GATHER_ND(1): the batch coordinates, then the tuple's indices, then
    the trailing coordinates, right-aligned in the input."""
    data = relevant(input_sizes, call.input_rank)
    idx = relevant(indices.shape, call.indices_rank)
    b, q = call.batch, idx[-1]
    o = _aligned(out, len(idx) - 1 + len(data) - b - q)
    where = [0] * (indices.ndim - call.indices_rank) + o[:len(idx) - 1]
    picked: list[Coordinate] = []
    valid: np.ndarray = np.asarray(True)
    for j in range(q):
        v, ok = read(where + [j], data[b + j])
        picked.append(v)
        valid = valid & ok
    rel = o[:b] + picked + o[len(idx) - 1:]
    return [0] * (len(input_sizes) - call.input_rank) + rel, valid


def slice_map(call: SliceCall, input_sizes: tuple[int, ...], output_sizes: tuple[int, ...]) -> SourceMap:
    """Where each output element of a slice comes from: per dimension the
    copy's start (the window's far end for SLICE1's negative strides) plus
    the stride times the output coordinate; every element defined."""
    out: list[Coordinate] = list(np.indices(output_sizes, sparse=True))
    source = [start + stride * c for start, stride, c in zip(call.starts(), call.strides, out)]
    position = np.broadcast_to(_position(source, input_sizes), output_sizes)
    return SourceMap(position, np.ones(output_sizes, dtype=bool))


def tile_map(input_sizes: tuple[int, ...], output_sizes: tuple[int, ...]) -> SourceMap:
    """Where each output element of a tile comes from: its coordinate
    modulo the input's size, per dimension; every element defined."""
    out: list[Coordinate] = list(np.indices(output_sizes, sparse=True))
    position = np.broadcast_to(_position([c % n for c, n in zip(out, input_sizes)], input_sizes), output_sizes)
    return SourceMap(position, np.ones(output_sizes, dtype=bool))


def expected_of(sem: IndexMap, case: Case, buffers: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``case``'s expected output (its logical shape and type; 0 where an
    index is outside) and where it is defined."""
    x = case.input(sem.input).view(None if buffers is None else buffers.get(sem.input))
    out = next(t for t in case.outputs if t.name == sem.output)
    if sem.operation is Operation.PAD:
        return padded(pad_call(sem, case.attribute_map()), np.ascontiguousarray(x), out.dtype)
    if sem.operation is Operation.ONE_HOT:  # onehot_oracle.py: OffValue or OnValue, every element defined
        idx = case.input(sem.indices or "IndicesTensor").view(None if buffers is None else buffers.get(sem.indices or ""))
        axis = int(case.attribute_map().get(sem.axis or "Axis", 0))
        hot = onehot_expected(axis, np.ascontiguousarray(idx), x, out.sizes).astype(numpy_dtype(out.dtype))
        return hot, np.ones(out.sizes, dtype=bool)
    if sem.operation is Operation.TILE:
        found = tile_map(x.shape, out.sizes)
    elif sem.operation in (Operation.DEPTH_TO_SPACE, Operation.SPACE_TO_DEPTH):
        found = SourceMap(block_map(block_call(sem, case.attribute_map()), x.shape), np.ones(out.sizes, dtype=bool))
    elif sem.indices is None:
        found = slice_map(slice_call(sem, case.attribute_map()), x.shape, out.sizes)
    else:
        idx = case.input(sem.indices).view(None if buffers is None else buffers.get(sem.indices))
        found = source_map(call_of(sem, case), x.shape, np.ascontiguousarray(idx), out.sizes)
    values = np.ascontiguousarray(x).reshape(-1)
    expected = values[found.position] if values.size else np.zeros(out.sizes, dtype=x.dtype)
    expected = np.where(found.valid, expected, np.zeros((), dtype=expected.dtype))
    return expected.astype(numpy_dtype(out.dtype)), found.valid


@dataclass(frozen=True, slots=True, eq=False)
class IndexMapOracle:
    """The oracle of one index-map operator (its reviewed semantics)."""

    spec: m.Spec
    semantics: IndexMap

    @classmethod
    def of(cls, spec: m.Spec) -> IndexMapOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> BatchExpectation:
        """Each case's expected output end to end; ``flush_subnormals`` and
        ``float16_accumulation`` change nothing (the comparator accepts a
        flushed subnormal from a backend that declares flushing).  A
        scatter's from `scatter_oracle`, with its readings; NONZERO_COORDINATES'
        from `nonzero_oracle` (two outputs); the generated operations'
        (CAST, fills, diagonals, random) from `generated_oracle`; JOIN's and
        SPLIT's (tensor arrays) from `join_moves`."""
        if is_join(self.semantics):
            return JoinBatch.of(self.semantics, cases)
        if self.semantics.operation.is_generated:
            return generated_oracle.bind(self.spec, self.semantics, cases, flush_subnormals=flush_subnormals)
        if self.semantics.operation is Operation.NONZERO:
            return nonzero_oracle.bind(self.semantics, cases)
        if self.semantics.operation.is_scatter:
            expected, valid, readings = scatter_oracle.bind(self.spec, self.semantics, cases)
            expected.setflags(write=False)
            return IndexMapBatch(expected, None if valid.all() else valid, readings)
        found = [expected_of(self.semantics, case) for case in cases]
        expected = np.concatenate([e.reshape(-1) for e, _ in found])
        valid = np.concatenate([v.reshape(-1) for _, v in found])
        expected.setflags(write=False)
        return IndexMapBatch(expected, None if valid.all() else valid)


@dataclass(frozen=True, slots=True, eq=False)
class IndexMapBatch:
    """`IndexMapOracle` bound to a batch: the expected output end to end and
    where an index was inside its dimension (None: everywhere); ``readings``:
    the alternatives of an ambiguity's other readings (a scatter's
    duplicates), their indices end to end."""

    expected: np.ndarray
    valid: np.ndarray | None
    readings: tuple[Alternative, ...] = ()

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        expected = self.expected[lo:hi]
        alternatives = within(self.readings, lo, hi)
        if self.valid is None:
            return (Expectation(expected, None, None, alternatives, 0, RELAXED_FACTOR, True),)
        valid = self.valid[lo:hi]
        bound = np.where(valid, np.nan, np.inf)  # NaN: no error is within it (exact); inf: any value
        bad = np.flatnonzero(~valid)
        if expected.dtype.kind == "f" and bad.size:
            alternatives += (Alternative(ANY_VALUE, bad, np.full(bad.size, np.nan, dtype=expected.dtype), Tier.STRICT,
                                        "an index outside its dimension: no value is expected there"),)
        return (Expectation(expected, bound, bound, alternatives, 0, RELAXED_FACTOR, True),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """Whether the element's indices lay inside their dimensions (1) or not (0)."""
        if self.valid is None:
            return ()
        return (("index inside", [float(v) for v in self.valid[flat].tolist()]),)


def example_problems(sem: IndexMap, e: Example) -> list[tuple[str, str]]:
    """What a page's worked example gets wrong, as (the overlay key it is
    at, the message): sizes its own rules reject or that are not its
    output's, values other than the index map of its input, an output type
    other than the input's (the pages: "DataType must match")."""
    if sem.operation.is_generated:
        return generated_oracle.example_problems(sem, e)
    if is_join(sem):  # lint asks `join_examples` itself, for the array's tensors' places
        return [(str(at[0]), message) for at, message in join_examples.example_problems(sem, e)]
    found: list[tuple[str, str]] = []
    if e.output_type is not e.input_type and sem.operation is not Operation.NONZERO:  # its outputs: UINT32
        found.append(("output", f"{e.name} ({e.source}) prints the output's DataType {e.output_type.name}, but it must "
                                f"be the input's, {e.input_type.name}: the doc's type is wrong"))
    shown = ", ".join(f"{n}={v}" for n, v in e.attributes)
    given = {n: v for n, v in e.attributes if isinstance(v, (int, tuple))}  # a padding's enums and floats aside
    if sem.operation is Operation.TILE:
        return found + _tile_example_problems(sem, e, given, shown)
    if sem.operation is Operation.PAD:
        return found + _pad_example_problems(sem, e, shown)
    if sem.operation in (Operation.DEPTH_TO_SPACE, Operation.SPACE_TO_DEPTH):
        return found + _block_example_problems(sem, e, shown)
    if sem.operation.is_scatter:
        return found + _scatter_example_problems(sem, e, given, shown)
    if sem.operation is Operation.ONE_HOT:
        return found + _onehot_example_problems(sem, e, given, shown)
    if sem.operation is Operation.NONZERO:
        return found + _nonzero_example_problems(e)
    if sem.indices is None:
        return found + _slice_example_problems(sem, e, given, shown)
    call = Call(sem.operation, *(int(given.get(sem.attribute(p) or "", 0)) for p in (  # type: ignore[arg-type]
        "axis", "index_dimensions", "input_dimension_count", "indices_dimension_count", "batch_dimension_count")))
    try:
        sizes = output_sizes(call, e.input_sizes, e.indices_sizes, len(e.output_sizes))
    except ValueError as exc:
        return [*found, ("attributes", f"{e.name} ({e.source}): with {shown}, {exc}; the doc's example breaks its own "
                                       "rules: report it")]
    if sizes != e.output_sizes:
        return [*found, ("output", f"{e.name} ({e.source}) prints the output's sizes {list(e.output_sizes)}, but with "
                                   f"{shown} the page's rule gives {list(sizes)}: the doc's sizes are wrong")]
    indices = np.array(e.indices_values, dtype=numpy_dtype(e.indices_type or m.DataType.UINT32))
    return found + _values_problems(e, source_map(call, e.input_sizes, indices.reshape(e.indices_sizes), sizes))


def _slice_example_problems(sem: IndexMap, e: Example, given: dict[str, int | tuple[int, ...]],
                            shown: str) -> list[tuple[str, str]]:
    arrays = [given.get(sem.attribute(p) or "", ()) for p in ("offsets", "sizes", "strides")]
    call = SliceCall(sem.operation is Operation.SLICE_WINDOW,
                     *(v if isinstance(v, tuple) else (v,) for v in arrays))
    problem = slice_problem(call, e.input_sizes, e.output_sizes)
    if problem is not None:
        return [("attributes", f"{e.name} ({e.source}): with {shown}, {problem}; the doc's example breaks its own "
                               "rules: report it")]
    return _values_problems(e, slice_map(call, e.input_sizes, e.output_sizes))


def _tile_example_problems(sem: IndexMap, e: Example, given: dict[str, int | tuple[int, ...]],
                           shown: str) -> list[tuple[str, str]]:
    repeats = given.get(sem.repeats or "Repeats", ())
    problem = tile_problem(repeats if isinstance(repeats, tuple) else (repeats,), e.input_sizes, e.output_sizes)
    if problem is not None:
        return [("attributes", f"{e.name} ({e.source}): with {shown}, {problem}; the doc's example breaks its own "
                               "rules: report it")]
    return _values_problems(e, tile_map(e.input_sizes, e.output_sizes))


def _scatter_example_problems(sem: IndexMap, e: Example, given: dict[str, int | tuple[int, ...]],
                              shown: str) -> list[tuple[str, str]]:
    call = scatter_call(sem, given)
    problem = scatter_problem(call, e.input_sizes, e.indices_sizes, e.updates_sizes, e.output_sizes)
    if problem is not None:
        return [("attributes", f"{e.name} ({e.source}): with {shown}, {problem}; the doc's example breaks its own "
                               "rules: report it")]
    if e.indices_type is None or e.indices_type.is_float:
        return [("indices", f"{e.name} ({e.source}) prints the indices' DataType "
                            f"{e.indices_type.name if e.indices_type else 'none'}: indices are integers, the doc's "
                            "type is wrong")]
    wanted = scatter_oracle.example_problem(
        call, np.array(e.input_values).reshape(e.input_sizes),
        np.array(e.indices_values, dtype=numpy_dtype(e.indices_type)).reshape(e.indices_sizes),
        np.array(e.updates_values).reshape(e.updates_sizes), np.array(e.output_values))
    if wanted is None:
        return []
    return [("output", f"{e.name} ({e.source}) prints {_show(e.output_values)}, but the scatter of its input "
                       f"gives {_show(wanted)}: the doc's output is wrong")]


def _onehot_example_problems(sem: IndexMap, e: Example, given: dict[str, int | tuple[int, ...]],
                             shown: str) -> list[tuple[str, str]]:
    given_axis = given.get(sem.axis or "Axis", 0)
    axis = given_axis if isinstance(given_axis, int) else -1
    problem = onehot_problem(axis, e.indices_sizes, e.input_sizes, e.output_sizes)
    if problem is not None:
        return [("attributes", f"{e.name} ({e.source}): with {shown}, {problem}; the doc's example breaks its own "
                               "rules: report it")]
    idx = np.array(e.indices_values, dtype=numpy_dtype(e.indices_type or m.DataType.UINT32)).reshape(e.indices_sizes)
    got = onehot_expected(axis, idx, np.array(e.input_values), e.output_sizes).reshape(-1)
    if np.array_equal(got, np.array(e.output_values)):
        return []
    return [("output", f"{e.name} ({e.source}) prints {_show(e.output_values)}, but the one-hot map of its indices "
                       f"gives {_show(got)}: the doc's output is wrong")]


def _nonzero_example_problems(e: Example) -> list[tuple[str, str]]:
    """NONZERO_COORDINATES' example: its rows before the count (those after are undefined)."""
    try:
        count, rows, defined = nonzero_oracle.nonzero_rows(np.array(e.input_values).reshape(e.input_sizes),
                                                           e.output_sizes[-1])
    except ValueError as exc:
        return [("output", f"{e.name} ({e.source}): {exc}; the doc's example breaks its own rules: report it")]
    printed = np.array(e.output_values).reshape(-1, e.output_sizes[-1])
    if printed.shape == rows.shape and np.array_equal(printed[defined], rows[defined]):
        return []
    return [("output", f"{e.name} ({e.source}) prints {_show(printed[:count].reshape(-1))} before the count "
                       f"{count}, but the coordinates are {_show(rows[:count].reshape(-1))}: the doc's output is "
                       "wrong")]


def _values_problems(e: Example, where: SourceMap) -> list[tuple[str, str]]:
    """The example's output against the index map of its input."""
    got = np.array(e.input_values)[where.position.reshape(-1)]
    if where.valid.all() and np.array_equal(got, np.array(e.output_values)):
        return []
    return [("output", f"{e.name} ({e.source}) prints {_show(e.output_values)}, but the index map of its input "
                       f"gives {_show(got)}: the doc's output is wrong")]


def _show(values: Sequence[float] | np.ndarray) -> str:
    return "{" + ", ".join(f"{float(v):g}" for v in values) + "}"


def padded(call: PadCall, x: np.ndarray, dtype: m.DataType) -> tuple[np.ndarray, np.ndarray]:
    """A padding's expected output in ``dtype`` (`moves`: each element the
    input's at its folded coordinate, or the constant) and where it is
    defined (everywhere)."""
    position, is_constant = pad_map(call, x.shape)
    values = x.reshape(-1)
    moved = values[position] if values.size else np.zeros(position.shape, dtype=x.dtype)
    expected = np.where(is_constant, constant(call, dtype), moved).astype(numpy_dtype(dtype))
    return expected, np.ones(expected.shape, dtype=bool)


def _pad_example_problems(sem: IndexMap, e: Example, shown: str) -> list[tuple[str, str]]:
    try:
        call = pad_call(sem, {**dict(e.attributes), sem.padding_value or "": dict(e.attributes).get(
            sem.padding_value or "", 0)})
    except ValueError as exc:
        return [("attributes", f"{e.name} ({e.source}): {exc}")]
    problem = pad_problem(call, e.input_sizes, e.output_sizes, e.output_type)
    if problem is not None:
        return [("attributes", f"{e.name} ({e.source}): with {shown}, {problem}; the doc's example breaks its own "
                               "rules: report it")]
    got, _ = padded(call, np.array(e.input_values, dtype=numpy_dtype(e.input_type)).reshape(e.input_sizes),
                    e.output_type)
    if np.array_equal(got.reshape(-1), np.array(e.output_values, dtype=got.dtype)):
        return []
    return [("output", f"{e.name} ({e.source}) prints {_show(e.output_values)}, but the padding of its input "
                       f"gives {_show(got.reshape(-1))}: the doc's output is wrong")]


def _block_example_problems(sem: IndexMap, e: Example, shown: str) -> list[tuple[str, str]]:
    try:
        call = block_call(sem, dict(e.attributes))
    except ValueError as exc:
        return [("attributes", f"{e.name} ({e.source}): {exc}")]
    problem = block_problem(call, e.input_sizes, e.output_sizes)
    if problem is not None:
        return [("attributes", f"{e.name} ({e.source}): with {shown}, {problem}; the doc's example breaks its own "
                               "rules: report it")]
    return _values_problems(e, SourceMap(block_map(call, e.input_sizes), np.ones(e.output_sizes, dtype=bool)))
