"""The oracle of the index-map family's generated operations (CAST, the
fills, the diagonals, RANDOM_GENERATOR): each output element from its
coordinates alone, exact, and every reading's value as a STRICT alternative
(docs/index-map.md).

* CAST: the input element at the same coordinate, converted exactly
  (`conversions`): rounded once to a float type (ties to even; an infinity
  beyond its range), truncated toward zero into an integer type (the
  DIAGONAL_MATRIX page: "10.6 will become 10"), an integer wrapped; the
  other readings (`conversions.readings`) are alternatives.
* FILL_VALUE_CONSTANT: the Value everywhere.  FILL_VALUE_SEQUENCE: ValueStart
  + i * ValueDelta, i the element's C-order position, exactly, rounded
  once (integers: modulo 2^bits, as the page's UINT8 example 10, 8, 6, 4
  with a step of -2 = 254 shows); readings ``sequence-precision``:
  ``multiply-add`` (float32 i * Delta, then + Start), ``fused`` (i in
  float32, one float32 rounding, then the output's), ``accumulated`` (Value
  += Delta in the output's type, the sdk-api page's pseudocode).
* DIAGONAL_MATRIX: Value where column - row = Offset, else 0;
  DIAGONAL_MATRIX1: the page's pseudocode, ``topX = x - y`` against
  [DiagonalFillBegin, DiagonalFillEnd) (inverted: outside), else the input
  element or 0.  DIAGONAL_MATRIX's FLOAT Value is converted as CAST does.
* RANDOM_GENERATOR: Philox 4x32-10 (`philox`), and the state advanced by
  ceil(n / 4); readings ``counter-order`` and ``output-layout``.

The comparison is exact (a ULP budget of 0, the sign of zero counts); any
NaN matches any NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier
from dmlconform.families.index_map import conversions, philox
from dmlconform.families.index_map.generated import (
    assigned,
    attribute,
    diagonal_bounds,
    output_of,
    union_value,
)
from dmlconform.families.index_map.semantics import Example, IndexMap, Operation
from dmlconform.oracles.base import Expectation, reading_alternatives, within
from dmlconform.plan import ORACLE_BLOCK
from dmlconform.spec import model as m
from dmlconform.spec.model import DataType, numpy_dtype

#: Per output: (the expected values, flat; the readings' values, flat, by "<ambiguity>:<reading>").
Outputs = list[tuple[np.ndarray, dict[str, np.ndarray]]]


def _coordinates(sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The row and column of every element of a stack of matrices (the last two dimensions)."""
    grid = np.indices(sizes, sparse=True)
    return np.broadcast_to(grid[-2], sizes), np.broadcast_to(grid[-1], sizes)


def span_mask(sizes: tuple[int, ...], begin: int, end: int) -> np.ndarray:
    """The DIAGONAL_MATRIX1 page's ``useValue``: ``(end >= begin) ^ (topX >=
    begin) ^ (topX < end)`` with ``topX = x - y``, in exact integers."""
    row, col = _coordinates(sizes)
    top = col.astype(np.int64) - row
    return (end >= begin) ^ (top >= begin) ^ (top < end)


def _exact_sequence(start: np.generic, delta: np.generic, count: int, dtype: DataType,
                    index: np.ndarray | None = None, *, nearest: bool = True) -> np.ndarray:
    """ValueStart + i * ValueDelta for i in [0, count) exactly (Python
    integers scaled by a common power of two), rounded once to a float
    ``dtype`` (ties to even, or toward zero where not ``nearest``) or wrapped
    into an integer one; ``index``: other multipliers than i (the fused
    reading's i in float32)."""
    i = np.arange(count, dtype=object) if index is None else index.astype(object)
    if not dtype.is_float:
        bits = 8 * numpy_dtype(dtype).itemsize
        total = (int(start) + i * int(delta)) % (1 << bits)
        total = np.where(total >= (1 << (bits - 1)), total - (1 << bits), total) if dtype.is_signed else total
        return np.array(total.tolist(), dtype=numpy_dtype(dtype)) if count else np.zeros(0, numpy_dtype(dtype))
    s, d = Fraction(float(start)), Fraction(float(delta))
    scale = max(s.denominator, d.denominator)  # both powers of two
    exact = int(s * scale) + i * int(d * scale)  # the exact sum times `scale`
    negative = np.array([v < 0 for v in exact], dtype=bool) if count else np.zeros(0, bool)
    mags, shifts = [], []
    for v in np.abs(exact) if count else []:
        extra = max(int(v).bit_length() - 62, 0)  # keep 62 bits and a sticky bit: enough for any rounding to 53
        mags.append((int(v) >> extra) | (1 if int(v) & ((1 << extra) - 1) else 0))
        shifts.append(extra - int(math.log2(scale)))
    value = conversions.round_parts(negative, np.array(mags, dtype=np.uint64), np.array(shifts, dtype=np.int64),
                                    dtype, nearest=nearest)
    return conversions.to_float(value, dtype, nearest=nearest)


def _sequence(sem: IndexMap, case: Case, dtype: DataType, count: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    attrs = case.attribute_map()
    start = union_value(attribute(sem, attrs, "value_start"), dtype)
    delta = union_value(attribute(sem, attrs, "value_delta"), dtype)
    primary = _exact_sequence(start, delta, count, dtype)
    if not dtype.is_float:
        wide = int(start) + np.arange(count, dtype=object) * int(delta)
        info = np.iinfo(numpy_dtype(dtype))
        clipped = np.clip(wide, int(info.min), int(info.max))
        return primary, {"integer-overflow:saturate": np.array(clipped.tolist(), dtype=numpy_dtype(dtype))}
    i32 = np.arange(count, dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        product_add = (i32 * np.float32(delta) + np.float32(start)).astype(np.float32)
        accumulated = np.add.accumulate(np.concatenate([[start], np.full(max(count - 1, 0), delta)]).astype(
            numpy_dtype(dtype)), dtype=numpy_dtype(dtype))[:count]
    fused = conversions.to_float(_exact_sequence(np.float32(start), np.float32(delta), count, DataType.FLOAT32,
                                                 index=i32.astype(np.int64)), dtype)
    return primary, {"sequence-precision:multiply-add": conversions.to_float(product_add, dtype),
                     "sequence-precision:fused": fused, "sequence-precision:accumulated": accumulated,
                     "float-rounding:toward-zero": _exact_sequence(start, delta, count, dtype, nearest=False)}


def _filled(mask: np.ndarray, value: np.ndarray, rest: np.ndarray) -> np.ndarray:
    return np.where(mask, value, rest).reshape(-1)


def _diagonal(sem: IndexMap, case: Case, dtype: DataType, sizes: tuple[int, ...],
              x: np.ndarray | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    attrs = case.attribute_map()
    begin, end = diagonal_bounds(sem, attrs)
    mask = span_mask(sizes, begin, end)
    nt = numpy_dtype(dtype)
    rest = np.zeros(sizes, dtype=nt) if x is None else np.asarray(x, dtype=nt)
    raw = attribute(sem, attrs, "value")
    if sem.operation is Operation.DIAGONAL_SPAN:
        return _filled(mask, np.asarray(union_value(raw, dtype)), rest), {}
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise ValueError(f"Value={raw!r} is no FLOAT: give a number")
    value = np.array([float(Fraction(raw) if isinstance(raw, str) else raw)], dtype=np.float32)  # a FLOAT member
    primary, others = conversions.readings(value, DataType.FLOAT32, dtype)
    return _filled(mask, primary, rest), {k: _filled(mask, v, rest) for k, v in others.items()}


def _random(sem: IndexMap, case: Case) -> Outputs:
    state = tuple(int(v) for v in np.asarray(case.input(sem.input).view()).reshape(-1))
    out = output_of(sem, case)
    count = math.prod(out.sizes)
    found = [(philox.bits(state, count), {"counter-order:high-first": philox.bits(state, count, low_first=False),
                                          "output-layout:word-planes": philox.bits(state, count, planes=True)})]
    if sem.state_output is not None and any(t.name == sem.state_output for t in case.outputs):
        found.append((philox.next_state(state, count), {
            "counter-order:high-first": philox.next_state(state, count, low_first=False)}))
    return found


def expected_of(sem: IndexMap, case: Case) -> Outputs:
    """Per output of ``case`` (its order): the expected values (flat, the
    output's type, C order) and each reading's."""
    if sem.operation is Operation.RANDOM:
        return _random(sem, case)
    out = output_of(sem, case)
    dtype, count = out.dtype, math.prod(out.sizes)
    x = np.asarray(case.input(sem.input).view()) if sem.input and any(t.name == sem.input for t in case.inputs) \
        else None
    if sem.operation is Operation.CAST:
        assert x is not None
        return [_converted(x.reshape(-1), case.input(sem.input).dtype, dtype)]
    if sem.operation is Operation.FILL_CONSTANT:
        value = union_value(attribute(sem, case.attribute_map(), "value"), dtype)
        return [(np.full(count, value, dtype=numpy_dtype(dtype)), {})]
    if sem.operation is Operation.FILL_SEQUENCE:
        return [_sequence(sem, case, dtype, count)]
    return [_diagonal(sem, case, dtype, out.sizes, x)]


def _converted(x: np.ndarray, source: DataType, target: DataType) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """`conversions.readings` of ``x`` block by block (`plan.ORACLE_BLOCK`
    elements): its exact rounding holds a dozen 64-bit temporaries of its
    input's size, which stay in the cache this way."""
    parts = [conversions.readings(x[lo:lo + ORACLE_BLOCK], source, target)
             for lo in range(0, max(x.size, 1), ORACLE_BLOCK)]
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([p[0] for p in parts]), {k: np.concatenate([p[1][k] for p in parts]) for k in parts[0][1]}


@dataclass(frozen=True, slots=True, eq=False)
class GeneratedBatch:
    """Expected values end to end per output and the alternatives of every
    reading (indices end to end): the fills', the diagonals' and
    RANDOM_GENERATOR's."""

    expected: tuple[np.ndarray, ...]
    alternatives: tuple[tuple[Alternative, ...], ...]
    signed_zero: bool

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        found = []
        for values, alts in zip(self.expected, self.alternatives):
            top = min(hi, values.size)
            found.append(Expectation(values[lo:top], None, None, within(alts, lo, top), 0, RELAXED_FACTOR,
                                     self.signed_zero))
        return tuple(found)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """Nothing: these operations read no input that decides an element."""
        return ()


def bind(spec: m.Spec, sem: IndexMap, cases: Sequence[Case], *,
         flush_subnormals: bool = False) -> GeneratedBatch | CastBatch:
    """The batch's expectation: each case's outputs, end to end per output;
    CAST's block by block (`CastBatch`)."""
    if sem.operation is Operation.CAST and cases:
        return CastBatch.of(spec, sem, cases, flush_subnormals=flush_subnormals)
    found = [expected_of(sem, case) for case in cases]
    outputs = len(found[0]) if found else 0
    expected: list[np.ndarray] = []
    alternatives: list[tuple[Alternative, ...]] = []
    for j in range(outputs):
        values = np.concatenate([f[j][0] for f in found])
        keys = sorted({k for f in found for k in f[j][1]})
        readings = {k: np.concatenate([f[j][1].get(k, f[j][0]) for f in found]) for k in keys}
        values.setflags(write=False)
        expected.append(values)
        alternatives.append(reading_alternatives(spec, readings, values))
    return GeneratedBatch(tuple(expected), tuple(alternatives), True)


@dataclass(frozen=True, slots=True, eq=False)
class CastBatch:
    """CAST's expectation, computed per range the judge asks for: its input
    end to end (the batch's cases share their types), converted with every
    reading (`conversions.readings`) range by range, so that no
    alternative's indices or values over a whole ``--large`` case exist at
    once (issue #34: 9.9x its tensors' bytes at peak, 3.8x after).  For a backend
    that flushes subnormals, a subnormal input read as a zero of its sign
    too (`_flushed`)."""

    spec: m.Spec
    inputs: np.ndarray
    source: DataType
    target: DataType
    flush_subnormals: bool

    @classmethod
    def of(cls, spec: m.Spec, sem: IndexMap, cases: Sequence[Case], *, flush_subnormals: bool) -> CastBatch:
        flats = [np.asarray(c.input(sem.input).view()).reshape(-1) for c in cases]
        inputs = flats[0] if len(flats) == 1 else np.concatenate(flats)  # one case: its own view, no copy
        return cls(spec, inputs, cases[0].input(sem.input).dtype, cases[0].outputs[0].dtype, flush_subnormals)

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        x = self.inputs[lo:hi]
        values, readings = _converted(x, self.source, self.target)
        values.setflags(write=False)
        alternatives = reading_alternatives(self.spec, readings, values)
        if self.flush_subnormals and x.dtype.kind == "f":
            alternatives += _flushed(x, self.target)
        return (Expectation(values, None, None, alternatives, 0, RELAXED_FACTOR, True),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """The input element at the same place."""
        if output:
            return ()
        return (("input", [float(v) for v in self.inputs[flat].tolist()]),)


def _flushed(x: np.ndarray, target: DataType) -> tuple[Alternative, ...]:
    """A subnormal input read as a zero of its sign (a backend that flushes
    subnormals on input, as GPUs do): its converted zero."""
    tiny = np.finfo(x.dtype).smallest_normal
    where = np.flatnonzero((x != 0) & (np.abs(x) < tiny))
    if not where.size:
        return ()
    zeros = np.copysign(np.zeros(where.size), x[where].astype(np.float64))
    values, _ = conversions.readings(zeros, DataType.FLOAT64, target)
    return (Alternative("flushed-subnormal-input", where, values, Tier.STRICT,
                        "a subnormal input flushed to zero by a backend that declares flushing"),)


def example_problems(sem: IndexMap, e: Example) -> list[tuple[str, str]]:
    """What a generated operation's worked example gets wrong: its output's
    values against this oracle's, for its attributes (a Value of
    DIAGONAL_MATRIX1 other than what its output shows, a sequence that is not
    Start + i * Delta)."""
    given: dict[str, int | float | str | tuple[int, ...]] = {**dict(e.attributes), **dict(e.scalars)}
    dtype = e.output_type
    count = math.prod(e.output_sizes)
    named: dict[str, int | float | str] = {}
    for p in ("value", "value_start", "value_delta", "offset", "fill_begin", "fill_end"):
        n = sem.attribute(p)
        v = given.get(n or "")
        if n is not None and v is not None and not isinstance(v, tuple):
            named[p] = assigned(v, dtype) if p.startswith("value") else v
    try:
        if sem.operation is Operation.FILL_SEQUENCE:
            start, delta = (union_value(named[p], dtype) for p in ("value_start", "value_delta"))
            got = _exact_sequence(start, delta, count, dtype)
        elif sem.operation is Operation.FILL_CONSTANT:
            got = np.full(count, union_value(named["value"], dtype), dtype=numpy_dtype(dtype))
        elif sem.operation in (Operation.DIAGONAL, Operation.DIAGONAL_SPAN):
            if sem.operation is Operation.DIAGONAL:
                begin, end = int(named["offset"]), int(named["offset"]) + 1
            else:
                begin, end = int(named["fill_begin"]), int(named["fill_end"])
            rest = np.array(e.input_values, dtype=np.float64).reshape(e.output_sizes) if e.input_values else \
                np.zeros(e.output_sizes)
            value = float(named["value"])
            got = np.where(span_mask(e.output_sizes, begin, end), value, rest).reshape(-1)
        else:
            return []
    except (KeyError, ValueError, TypeError) as exc:
        return [("attributes", f"{e.name} ({e.source}): {exc}; the doc's example breaks its own rules: report it")]
    printed = np.array(e.output_values, dtype=np.float64)
    if np.array_equal(np.asarray(got, dtype=np.float64), printed):
        return []
    shown = ", ".join(f"{n}={v}" for n, v in sorted(given.items()))
    return [("output", f"{e.name} ({e.source}) prints {_show(printed)}, but with {shown} the page's pseudocode gives "
                       f"{_show(got)}: the doc's output is wrong")]


def _show(values: np.ndarray) -> str:
    return "{" + ", ".join(f"{float(v):g}" for v in np.asarray(values).reshape(-1)) + "}"

