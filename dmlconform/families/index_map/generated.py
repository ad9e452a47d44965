"""Cases and shape rules of the index-map family's generated operations
(issue #34): CAST (each element converted), FILL_VALUE_CONSTANT,
FILL_VALUE_SEQUENCE, DIAGONAL_MATRIX, DIAGONAL_MATRIX1 and
RANDOM_GENERATOR (`semantics.GENERATED`); docs/index-map.md lists the cases.

* CAST: every pair of the table's input and output types at the
  representative dimension count, the input holding the source type's edge
  values (0, -0, +-1, min, max, +-inf, NaN, subnormals), values at .5,
  ties of the target's rounding and values just past the target's range;
  with FLOAT32 -> FLOAT16 and FLOAT32 -> INT32 besides: every dimension
  count of the table, padded, permuted and broadcast (stride 0) layouts;
* the fills: per data type Values at the type's edges; the sequence's
  starts and steps that tell its readings apart (a step of 0.1, a start of
  2^24, a wrapping integer step), every dimension count;
* the diagonals: Offsets (DiagonalFillBegin, DiagonalFillEnd) 0, +-1, past
  either side, the INT extremes; DIAGONAL_MATRIX1 with and without its
  optional InputTensor, inverted and empty spans; the Value truncated
  toward zero (10.6) and out of an integer type's range;
* RANDOM_GENERATOR: counters of 0, one that carries across 32-bit words
  and across all 128 bits, with and without OutputStateTensor, output sizes
  that are and are not multiples of 4;
* the pages' worked examples (``example<k>``) and negative cases (a
  dimension count outside the table).

The shape rules here (`union_value`, `attribute`, `diagonal_bounds`, the
state's sizes) are what the oracle (`generated_oracle`) and the CPU
reference (`generated_reference`) share.  Ids:
``CAST/FLOAT32/4d/to=FLOAT16``, ``FILL_VALUE_SEQUENCE/FLOAT32/4d/start=1,delta=0.1``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.edges import edge_values
from dmlconform.cases.model import Case, Layout, TensorData, buffer_elements, packed_strides
from dmlconform.families.index_map.semantics import Example, IndexMap, Operation
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

#: Sizes by dimension, from the last (a shape of rank r takes the last r): 2*3*4*5 = 120 elements at 4.
_SIZES = (2, 1, 2, 1, 2, 3, 4, 5)
#: The counter and key of RANDOM_GENERATOR's state tensor: 4 counter words, then 2 key words.
STATE_WORDS = 6
INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1
_PREFIX = "DML_TENSOR_DATA_TYPE_"
PHILOX = "DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10"


# -- the shape rules ------------------------------------------------------------------------------
def union_value(raw: object, dtype: DataType) -> np.generic:
    """A ``DML_SCALAR_UNION`` member's value in ``dtype`` as a case gives it
    (a number, or an exact text such as ``"1/10"``): a float type's value
    rounded once to it, an integer type's the integer (ValueError where it is
    none or outside the type)."""
    nt = numpy_dtype(dtype)
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise ValueError(f"{raw!r} is not a number: give a number or an exact text such as \"1/10\"")
    if dtype.is_float and not isinstance(raw, str):
        return nt.type(raw)  # -0.0 keeps its sign (a Fraction would not)
    exact = Fraction(raw.strip()) if isinstance(raw, str) else Fraction(raw)
    if dtype.is_float:
        return nt.type(float(exact))
    info = np.iinfo(nt)
    if exact.denominator != 1 or not info.min <= exact <= info.max:
        raise ValueError(f"{raw!r} is no {dtype.name} value: give a whole number in [{info.min}, {info.max}]")
    return nt.type(int(exact))


def assigned(raw: int | float | str, dtype: DataType) -> int | float | str:
    """A page's whole number as C assigns it to the union's member of
    ``dtype``: modulo 2^bits into an integer type (-2 into a UINT8 member is
    254, as FILL_VALUE_SEQUENCE's Example 2 writes it); anything else as given."""
    if dtype.is_float or isinstance(raw, str) or not float(raw).is_integer():
        return raw
    bits = 8 * numpy_dtype(dtype).itemsize
    held = int(raw) % (1 << bits)
    return held - (1 << bits) if dtype.is_signed and held >= 1 << (bits - 1) else held


def attribute(sem: IndexMap, attrs: Mapping[str, object], part: str) -> object:
    """The value a case gives the attribute named for ``part`` (ValueError where missing)."""
    name = sem.attribute(part) or part
    if name not in attrs:
        raise ValueError(f"attribute {name} is missing: give it")
    return attrs[name]


def integer(value: object, name: str) -> int:
    """An INT attribute's value (ValueError where it is no INT)."""
    if isinstance(value, bool) or not isinstance(value, int) or not INT32_MIN <= value <= INT32_MAX:
        raise ValueError(f"{name}={value!r} is no INT: give a whole number in [{INT32_MIN}, {INT32_MAX}]")
    return value


def diagonal_bounds(sem: IndexMap, attrs: Mapping[str, object]) -> tuple[int, int]:
    """The span of ``column - row`` a diagonal fills, as (begin, end):
    DIAGONAL_MATRIX's ``[Offset, Offset + 1)`` (the DIAGONAL_MATRIX1 page's
    remark), DIAGONAL_MATRIX1's ``[DiagonalFillBegin, DiagonalFillEnd)``
    (inverted where begin > end: the fill is outside ``[end, begin)``)."""
    if sem.operation is Operation.DIAGONAL:
        offset = integer(attribute(sem, attrs, "offset"), sem.offset or "Offset")
        return offset, offset + 1
    return (integer(attribute(sem, attrs, "fill_begin"), sem.fill_begin or "DiagonalFillBegin"),
            integer(attribute(sem, attrs, "fill_end"), sem.fill_end or "DiagonalFillEnd"))


def value_type(sem: IndexMap, attrs: Mapping[str, object]) -> DataType | None:
    """The type ValueDataType names (None where the operator has none or it names no type)."""
    if sem.value_data_type is None:
        return None
    raw = attrs.get(sem.value_data_type)
    name = raw.removeprefix(_PREFIX) if isinstance(raw, str) else ""
    return DataType[name] if name in DataType.__members__ else None


def output_of(sem: IndexMap, case: Case) -> TensorData:
    return next(t for t in case.outputs if t.name == sem.output)


def case_problems(sem: IndexMap, case: Case) -> Iterator[str]:
    """What makes ``case`` no call its page describes: sizes (CAST's alike;
    a diagonal's at least 2 dimensions; RANDOM's state {1,...,1,6}), a
    ValueDataType other than the output's, a Value no value of that type, an
    INT attribute out of range.  ``problem: fix``."""
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    out = tensors.get(sem.output)
    if out is None:
        return
    attrs = case.attribute_map()
    x = tensors.get(sem.input) if sem.input else None
    if sem.operation is Operation.CAST and x is not None and x.sizes != out.sizes:
        yield f"{x.name}'s sizes {list(x.sizes)} are not {out.name}'s {list(out.sizes)}: give both the same sizes"
    if sem.operation is Operation.RANDOM:
        for t in (x, tensors.get(sem.state_output or "")):
            if t is not None and (t.sizes[-1:] != (STATE_WORDS,) or math.prod(t.sizes) != STATE_WORDS):
                yield f"{t.name}'s sizes {list(t.sizes)} are not {{1, ..., 1, 6}}: give it 6 elements in its last dimension"
        return
    if sem.operation in (Operation.DIAGONAL, Operation.DIAGONAL_SPAN):
        if len(out.sizes) < 2:
            yield f"{out.name} has {len(out.sizes)} dimension: a diagonal needs at least 2, give them"
        if x is not None and x.sizes != out.sizes:
            yield f"{x.name}'s sizes {list(x.sizes)} are not {out.name}'s {list(out.sizes)}: give both the same sizes"
    try:
        if sem.operation in (Operation.DIAGONAL, Operation.DIAGONAL_SPAN):
            diagonal_bounds(sem, attrs)
        if sem.value_data_type is not None:
            held = value_type(sem, attrs)
            if held is not out.dtype:
                yield f"{sem.value_data_type} names {held.name if held else attrs.get(sem.value_data_type)!r}, not " \
                      f"{out.name}'s {out.dtype.name}: the page says they must match, give {_PREFIX}{out.dtype.name}"
                return
        for part in ("value", "value_start", "value_delta"):
            if sem.attribute(part) is not None and sem.value_data_type is not None:
                union_value(attribute(sem, attrs, part), out.dtype)
    except ValueError as exc:
        yield f"{exc}"


# -- which cases ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Plan:
    """One case before its values: the case's type (CAST's source, the
    others' output), the output's type, the output's sizes, the attributes
    (part -> value), ``variant`` (its name in the id), the layout, whether
    it names its optional input (DIAGONAL_MATRIX1) or state output
    (RANDOM_GENERATOR), the state's counter and key (RANDOM_GENERATOR)."""

    dtype: DataType
    out_dtype: DataType
    sizes: tuple[int, ...]
    attrs: tuple[tuple[str, int | float | str], ...] = ()
    variant: str = ""
    layout: str = "packed"
    supported: bool = True
    with_input: bool = False
    with_state: bool = False
    state: tuple[int, ...] = ()
    example: Example | None = None

    def case_id(self, operator: str) -> str:
        parts = [operator, self.dtype.name, f"{len(self.sizes)}d"]
        if self.out_dtype is not self.dtype or operator == "CAST":  # a CAST names its target, its own type too
            parts.append(f"to={self.out_dtype.name}")
        parts += [self.variant] if self.variant else []
        parts += [self.layout] if self.layout != "packed" else []
        return "/".join(parts)


def sizes_at(rank: int) -> tuple[int, ...]:
    return _SIZES[len(_SIZES) - rank:]


def plans(spec: Spec, sem: IndexMap, level: FeatureLevel) -> list[Plan]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    ranks = sem.dims_at(level)
    tensors = (sem.input, sem.output) if sem.operation is Operation.CAST else (sem.output,)
    rows = family.rows_at(spec, level, ranks, *tensors)
    rep = 4 if 4 in ranks else ranks[-1]
    out_types = rows[-1].dtypes
    first = DataType.FLOAT32 if DataType.FLOAT32 in out_types else out_types[0]
    make = {Operation.CAST: _cast_plans, Operation.FILL_CONSTANT: _constant_plans,
            Operation.FILL_SEQUENCE: _sequence_plans, Operation.DIAGONAL: _diagonal_plans,
            Operation.DIAGONAL_SPAN: _span_plans, Operation.RANDOM: _random_plans}[sem.operation]
    out = make(rows[0].dtypes, out_types, rep, ranks)
    out += [p for p in _examples(sem, ranks, out_types)]
    bad_rank = next((r for r in (3, 5, 2, 1) if r not in ranks), None)
    if bad_rank is not None and out:
        base = out[0] if sem.operation is not Operation.CAST else next(
            (p for p in out if p.dtype is first), out[0])
        out.append(replace(base, sizes=sizes_at(bad_rank) if bad_rank > 1 else (7,), supported=False,
                           variant=(base.variant + "/" if base.variant else "") + "unsupported", layout="packed"))
    return list(dict.fromkeys(out))


def _cast_plans(sources: tuple[DataType, ...], targets: tuple[DataType, ...], rep: int,
                ranks: tuple[int, ...]) -> list[Plan]:
    out = [Plan(s, t, sizes_at(rep)) for s in sources for t in targets]
    f32 = DataType.FLOAT32
    pairs = [(f32, t) for t in (DataType.FLOAT16, DataType.INT32) if f32 in sources and t in targets]
    out += [Plan(s, t, sizes_at(r)) for r in ranks if r != rep for s, t in pairs]
    out += [Plan(s, t, sizes_at(rep), layout=lay) for lay in ("padded", "permuted", "broadcast") for s, t in pairs]
    return out


def _constant_values(dtype: DataType) -> list[tuple[str, int | float]]:
    """Values of ``dtype`` a fill must write unchanged: 13 (the example), the
    type's extremes, and a float's -0, smallest subnormal and 1/3 rounded."""
    nt = numpy_dtype(dtype)
    if not dtype.is_float:
        info = np.iinfo(nt)
        return [("13", 13), ("max", int(info.max)), ("min", int(info.min))]
    fi = np.finfo(nt)
    third = float(nt.type(1.0) / nt.type(3.0))
    return [("13", 13.0), ("max", float(fi.max)), ("lowest", float(-fi.max)), ("negative-zero", -0.0),
            ("subnormal", float(fi.smallest_subnormal)), ("third", third)]


def _constant_plans(sources: tuple[DataType, ...], targets: tuple[DataType, ...], rep: int,
                    ranks: tuple[int, ...]) -> list[Plan]:
    out = [Plan(t, t, sizes_at(rep), (("value_data_type", _PREFIX + t.name), ("value", v)), f"value={name}")
           for t in targets for name, v in _constant_values(t)]
    first = DataType.FLOAT32 if DataType.FLOAT32 in targets else targets[0]
    out += [replace(out[[p.dtype for p in out].index(first)], sizes=sizes_at(r)) for r in ranks if r != rep]
    out += [replace(out[[p.dtype for p in out].index(first)], layout="padded")]
    return out


def _sequence_steps(dtype: DataType) -> list[tuple[str, int | float | str, int | float | str]]:
    """(name, ValueStart, ValueDelta) of a sequence: the page's first
    example's, a step the readings round apart (0.1; a start of 2^24 where a
    step of 1 is lost when accumulated), steps that leave the type's range
    (an integer sequence wraps), negative steps."""
    if dtype.is_float:
        big = 2048 if dtype is DataType.FLOAT16 else 2 ** 24
        return [("start=3,delta=2", 3, 2), ("start=1,delta=0.1", 1, "1/10"), (f"start={big},delta=1", big, 1),
                ("start=0,delta=-1/3", 0, "-1/3"), ("start=-2.5,delta=0.5", -2.5, 0.5)]
    info = np.iinfo(numpy_dtype(dtype))
    steps: list[tuple[str, int | float | str, int | float | str]] = [
        ("start=3,delta=2", 3, 2), ("start=max,delta=1", int(info.max), 1),
        ("start=min,delta=max", int(info.min), int(info.max)), ("start=0,delta=5", 0, 5)]
    return steps + ([("start=10,delta=-2", 10, -2)] if dtype.is_signed else [])


def _sequence_plans(sources: tuple[DataType, ...], targets: tuple[DataType, ...], rep: int,
                    ranks: tuple[int, ...]) -> list[Plan]:
    out = [Plan(t, t, sizes_at(rep), (("value_data_type", _PREFIX + t.name), ("value_start", a),
                                      ("value_delta", d)), name)
           for t in targets for name, a, d in _sequence_steps(t)]
    first = DataType.FLOAT32 if DataType.FLOAT32 in targets else targets[0]
    base = out[[p.dtype for p in out].index(first) + 1]
    out += [replace(base, sizes=sizes_at(r)) for r in ranks if r != rep]
    out += [replace(base, layout=lay) for lay in ("padded", "permuted")]
    return out


def _diagonal_values(dtype: DataType) -> list[tuple[str, float]]:
    """DIAGONAL_MATRIX's FLOAT Value: 1 (the standard), 10.6 (the page:
    "10.6 will become 10" in an integer type), -3.75 (negative: out of an
    unsigned type's range) and 1/10 (rounded into FLOAT16)."""
    values = [("value=1", 1.0), ("value=10.6", float(np.float32(10.6))), ("value=-3.75", -3.75)]
    return values + ([("value=0.1", float(np.float32(0.1)))] if dtype.is_float else [("value=300.5", 300.5)])


def _diagonal_plans(sources: tuple[DataType, ...], targets: tuple[DataType, ...], rep: int,
                    ranks: tuple[int, ...]) -> list[Plan]:
    first = DataType.FLOAT32 if DataType.FLOAT32 in targets else targets[0]
    sizes = sizes_at(rep)
    rows, cols = sizes[-2], sizes[-1]
    offsets = (0, 1, -1, cols - 1, cols, -rows + 1, -rows, INT32_MAX, INT32_MIN)
    out = [Plan(t, t, sizes, (("offset", 0), ("value", v)), f"offset=0/{name}")
           for t in targets for name, v in _diagonal_values(t)]
    out += [Plan(first, first, sizes, (("offset", o), ("value", 1.0)), f"offset={o}/value=1") for o in offsets[1:]]
    out += [Plan(first, first, sizes_at(r), (("offset", 1), ("value", 1.0)), "offset=1/value=1")
            for r in ranks if r != rep]
    out += [Plan(first, first, sizes, (("offset", -1), ("value", 1.0)), "offset=-1/value=1", layout="padded")]
    return out


def _span_plans(sources: tuple[DataType, ...], targets: tuple[DataType, ...], rep: int,
                ranks: tuple[int, ...]) -> list[Plan]:
    first = DataType.FLOAT32 if DataType.FLOAT32 in targets else targets[0]
    sizes = sizes_at(rep)
    spans = ((0, 3), (INT32_MIN, 1), (1, 0), (2, 2), (-1, 2), (3, -2), (INT32_MIN, INT32_MAX), (INT32_MAX, INT32_MIN),
             (sizes[-1], sizes[-1] + 4), (-sizes[-2] - 3, -sizes[-2] + 1))

    def plan(t: DataType, begin: int, end: int, value: int | float, with_input: bool, **more: object) -> Plan:
        name = f"begin={begin},end={end}" + ("/input" if with_input else "")
        return replace(Plan(t, t, sizes, (("value_data_type", _PREFIX + t.name), ("value", value),
                                          ("fill_begin", begin), ("fill_end", end)), name, with_input=with_input),
                       **more)  # type: ignore[arg-type]

    out = [plan(t, 0, 1, v, w) for t in targets for v in [_constant_values(t)[1][1]] for w in (False, True)]
    out += [plan(first, b, e, 7.0, w) for b, e in spans for w in (False, True)]
    out += [plan(first, 0, 3, 7.0, True, sizes=sizes_at(r)) for r in ranks if r != rep]
    out += [plan(first, -1, 2, 7.0, True, layout=lay) for lay in ("padded", "permuted", "broadcast")]
    return out


#: RANDOM_GENERATOR's states: (name, counter words 0-3, key words 4-5).
_STATES = (("counter=0", (0, 0, 0, 0), (0, 0)),
           ("counter=carry32", (0xFFFFFFFE, 0, 0, 0), (0x12345678, 0x9ABCDEF0)),
           ("counter=carry128", (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xA4093822, 0x299F31D0)),
           ("counter=high", (0x74746C65, 0x6D536561, 0x6F46726F, 0x48656C6C), (1, 2)))


def _random_plans(sources: tuple[DataType, ...], targets: tuple[DataType, ...], rep: int,
                  ranks: tuple[int, ...]) -> list[Plan]:
    t = targets[0]
    out = [Plan(t, t, sizes_at(rep), (("generator_type", PHILOX),), f"{name}/state", with_state=True,
                state=ctr + key) for name, ctr, key in _STATES]
    ones = (1,) * (rep - 1)
    out += [Plan(t, t, ones[:-1] + (3, 7) if rep > 1 else (21,), (("generator_type", PHILOX),),
                 f"{_STATES[1][0]}/state/odd", with_state=True, state=_STATES[1][1] + _STATES[1][2])]  # 21 words
    out += [Plan(t, t, ones + (3,), (("generator_type", PHILOX),), f"{_STATES[2][0]}/state/three", with_state=True,
                 state=_STATES[2][1] + _STATES[2][2])]  # fewer words than one block
    out += [Plan(t, t, sizes_at(rep), (("generator_type", PHILOX),), f"{_STATES[1][0]}", state=_STATES[1][1] +
                 _STATES[1][2])]
    out += [Plan(t, t, sizes_at(r), (("generator_type", PHILOX),), f"{_STATES[1][0]}/state", with_state=True,
                 state=_STATES[1][1] + _STATES[1][2]) for r in ranks if r != rep]
    out += [replace(out[1], layout="padded")]
    return out


def _examples(sem: IndexMap, ranks: tuple[int, ...], types: tuple[DataType, ...]) -> Iterator[Plan]:
    """The page's worked examples at a dimension count and type of the table."""
    for e in sem.examples:
        if len(e.output_sizes) not in ranks or e.output_type not in types:
            continue
        given: dict[str, int | float | str | tuple[int, ...]] = {**dict(e.attributes), **dict(e.scalars)}
        attrs = tuple((p, _example_attribute(given[name], e.output_type, p))
                      for p in ("value_data_type", "value", "value_start", "value_delta", "offset", "fill_begin",
                                "fill_end") if (name := sem.attribute(p)) is not None and name in given)
        dtype = e.input_type if sem.operation is Operation.CAST else e.output_type
        yield Plan(dtype, e.output_type, e.output_sizes, attrs, e.name, with_input=bool(e.input_values),
                   example=e)


def _example_attribute(value: int | tuple[int, ...] | float | str, dtype: DataType, part: str) -> int | float | str:
    if part == "value_data_type":
        return _PREFIX + str(value).removeprefix(_PREFIX)
    if isinstance(value, tuple):
        raise ValueError(f"an example's {part} is one number")
    return assigned(value, dtype) if part.startswith("value") else value


# -- values and tensors ---------------------------------------------------------------------------
def generate(spec: Spec, sem: IndexMap, level: FeatureLevel, *, seed: int, negative: bool,
             keep: Callable[[str, DataType], bool] | None, large: bool = False) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (the module docstring), with ``large`` CAST's `large_plans`."""
    every = plans(spec, sem, level) + (large_plans(spec, sem, level) if large else [])
    for case_id, plan in family.selected(every, lambda p: p.case_id(spec.operator), keep, negative=negative):
        yield _case(spec, sem, level, seed, case_id, plan)


#: The ``--large`` CAST's sizes (issue #34): 2^24 elements.
LARGE_SIZES = (16, 16, 256, 256)


def large_plans(spec: Spec, sem: IndexMap, level: FeatureLevel) -> list[Plan]:
    """CAST's ``--large`` case: FLOAT32 to FLOAT16 over 2^24 elements (the
    edge values and `_specials` first, then values across both types'
    ranges); none where the table lacks the pair or 4 dimensions."""
    ranks = sem.dims_at(level)
    if sem.operation is not Operation.CAST or 4 not in ranks:
        return []
    sources, targets = (r.dtypes for r in family.rows_at(spec, level, ranks, sem.input, sem.output))
    if DataType.FLOAT32 not in sources or DataType.FLOAT16 not in targets:
        return []
    return [Plan(DataType.FLOAT32, DataType.FLOAT16, LARGE_SIZES, variant="large")]


_LAYOUTS = {"packed": Layout.PACKED, "padded": Layout.PADDED, "permuted": Layout.PADDED,
            "broadcast": Layout.BROADCAST}


def _case(spec: Spec, sem: IndexMap, level: FeatureLevel, seed: int, case_id: str, plan: Plan) -> Case:
    rng = np.random.default_rng(stream_key(seed, case_id, sem.input or sem.output))
    out_layout = "padded" if plan.layout == "broadcast" else plan.layout
    inputs: tuple[TensorData, ...] = ()
    if sem.operation is Operation.CAST:
        x = cast_values(plan.dtype, plan.out_dtype, plan.sizes, rng) if plan.example is None else \
            np.array(plan.example.input_values, dtype=numpy_dtype(plan.dtype)).reshape(plan.sizes)
        inputs = (_tensor(sem.input, plan.dtype, x, plan.sizes, plan.layout),)
    elif sem.operation is Operation.DIAGONAL_SPAN and plan.with_input:
        x = _random_values(plan.dtype, plan.sizes, rng) if plan.example is None else \
            np.array(plan.example.input_values, dtype=numpy_dtype(plan.dtype)).reshape(plan.sizes)
        inputs = (_tensor(sem.input, plan.dtype, x, plan.sizes, plan.layout),)
    elif sem.operation is Operation.RANDOM:
        state = np.array(plan.state, dtype=np.uint32).reshape((1,) * (len(plan.sizes) - 1) + (STATE_WORDS,))
        inputs = (_tensor(sem.input, DataType.UINT32, state, state.shape, "packed"),)
    outputs: tuple[TensorData, ...] = (_tensor(sem.output, plan.out_dtype, None, plan.sizes, out_layout),)
    if sem.operation is Operation.RANDOM and plan.with_state and sem.state_output:
        outputs += (_tensor(sem.state_output, DataType.UINT32, None, inputs[0].sizes, "packed"),)
    named = {sem.attribute(p): v for p, v in plan.attrs}
    attributes = tuple((f.name, named[f.name]) for f in spec.attributes if f.name in named)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=plan.dtype, inputs=inputs, outputs=outputs,
                attributes=attributes, layout=_LAYOUTS[plan.layout], expect_supported=plan.supported,
                edges=(plan.variant or "random",), seed=seed)


def _random_values(dtype: DataType, sizes: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Small random values of ``dtype`` (a diagonal's input: every element must come through)."""
    nt = numpy_dtype(dtype)
    v = rng.integers(-50, 100, size=sizes) if dtype.is_signed else rng.integers(0, 100, size=sizes)
    return (v / 4 if dtype.is_float else v).astype(nt)


def _specials(source: DataType, target: DataType) -> list[float | int]:
    """Values of a CAST from ``source`` to ``target`` that tell conversions
    apart: ties (.5), the target's range bounds and just past them, ties of
    the target's rounding (2049 in FLOAT16, 2^24 + 1 in FLOAT32, 2^53 + 1
    in FLOAT64) and the last values before an overflow."""
    out: list[float | int] = [0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 3.7, -3.7]
    if target.is_float:
        fi = np.finfo(numpy_dtype(target))
        p = fi.nmant + 1
        out += [2 ** p + 1, 2 ** p + 3, -(2 ** p + 1), 2 ** (p + 1) + 2]
        if target is DataType.FLOAT16:
            out += [65504, 65519, 65520, -65520, 65535, 70000, 6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8, 1e-9]
        if target is DataType.FLOAT32:
            out += [3.4028235677973366e38, 3.4028235e38 * 1.0000001, 1e-45, 7e-46, 1e-300]
    else:
        info = np.iinfo(numpy_dtype(target))
        lo, hi = int(info.min), int(info.max)
        out += [hi, hi + 1, hi + 0.5, lo, lo - 1, lo - 0.5, -1, 2 * hi + 2, 2.0 ** 31, 2.0 ** 32, 2.0 ** 63,
                2.0 ** 64, -2.0 ** 63, 1e20, -1e20]
    nt = numpy_dtype(source)
    kept = []
    for v in out:
        if source.is_float:
            with np.errstate(over="ignore"):
                kept.append(nt.type(v))
        else:
            info = np.iinfo(nt)
            if float(v).is_integer() and info.min <= int(v) <= info.max:
                kept.append(nt.type(int(v)))
    return kept


def cast_values(source: DataType, target: DataType, sizes: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """A CAST's input: the source type's edge values and `_specials`, then
    random values, half across the source's range, half around the
    target's (a float in [-1.25 max, 1.25 max] of an integer target, random
    bits of a float one)."""
    nt = numpy_dtype(source)
    count = math.prod(sizes)
    special = [e.value for e in edge_values(source)] + _specials(source, target)
    if source.is_float:
        wide = rng.uniform(-1, 1, size=count) * 2.0 ** rng.integers(-30, 40, size=count)
        if target.is_float:
            fi = np.finfo(numpy_dtype(target))
            near = rng.uniform(-2, 2, size=count) * 2.0 ** rng.integers(fi.minexp - fi.nmant, fi.maxexp, size=count)
        else:
            hi = float(np.iinfo(numpy_dtype(target)).max)
            near = rng.uniform(-1.25, 1.25, size=count) * hi
        with np.errstate(over="ignore"):
            flat = np.where(rng.random(count) < 0.5, wide, near).astype(nt)
    else:
        info = np.iinfo(nt)
        flat = rng.integers(info.min, info.max, size=count, dtype=nt, endpoint=True)
    take = min(len(special), count)
    flat[:take] = np.array(special[:take], dtype=nt)
    return rng.permutation(flat).reshape(sizes)


def _tensor(name: str, dtype: DataType, values: np.ndarray | None, sizes: tuple[int, ...], layout: str) -> TensorData:
    """A read-only tensor of ``layout`` (its sizes ``sizes``) holding
    ``values`` (the gaps of a padded one: NaN or the type's greatest, which
    show where read), or an output's zeroed buffer."""
    if values is not None and layout == "broadcast":
        dim = next((d for d, s in enumerate(values.shape) if s > 1), 0)
        alike = np.broadcast_to(np.take(values, [0], axis=dim), values.shape).copy()
        return family.input_tensor(name, dtype, alike, broadcast_dim=dim)
    nt = numpy_dtype(dtype)
    strides = _strides(sizes, layout)
    gap = np.nan if dtype.is_float else np.iinfo(nt).max
    buf = np.full(buffer_elements(sizes, strides), gap if values is not None else 0, dtype=nt)
    if values is not None:
        np.lib.stride_tricks.as_strided(buf, sizes, tuple(s * nt.itemsize for s in strides), writeable=True)[...] = values
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)


def _strides(sizes: tuple[int, ...], layout: str) -> tuple[int, ...]:
    if layout == "padded":
        return family.padded_strides(sizes)
    if layout == "permuted":
        return tuple(reversed(packed_strides(tuple(reversed(sizes)))))
    return packed_strides(sizes)
