"""The shape rules of PADDING and PADDING1 (issue #34): ``Output.Sizes[i] =
Input.Sizes[i] + StartPadding[i] + EndPadding[i]``, the padding mode (a
constant, the edge, REFLECTION's fold that leaves the edge out, SYMMETRIC's
that repeats it, FL 3_0 on) and the constant (PADDING's FLOAT, PADDING1's
DML_SCALAR_UNION of PaddingValueDataType).  A case holds the paddings as
text, ``"0,0,1,2"`` (`slices.numbers` reads them), the mode and the value's
type by their constants' full names.  What the cases module, the oracle and
the reference share; nothing here imports them, and nothing here says
where an output element comes from (the oracle's `moves`, the reference's
``np.pad``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.families.index_map.slices import numbers
from dmlconform.spec.model import DataType, FeatureLevel

MODE_PREFIX = "DML_PADDING_MODE_"
TYPE_PREFIX = "DML_TENSOR_DATA_TYPE_"
#: The modes the pages describe, by their suffix (the enum also has WRAP, which no page describes).
MODES = ("CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC")
#: SYMMETRIC "was introduced in feature level DML_FEATURE_LEVEL_3_0" (the PADDING page, line 28).
SYMMETRIC_FROM = FeatureLevel.FL_3_0


@dataclass(frozen=True, slots=True)
class PadCall:
    """A padding's attributes: ``mode`` (a suffix of `MODES`), the paddings
    per dimension, the constant as the case gives it (a number) and, for
    PADDING1, the type the union holds it in (None: PADDING's FLOAT)."""

    mode: str
    start: tuple[int, ...]
    end: tuple[int, ...]
    value: float | int
    value_type: DataType | None = None

    def output_sizes(self, input_sizes: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(n + s + e for n, s, e in zip(input_sizes, self.start, self.end))


def pad_call(sem: IndexMap, attributes: Mapping[str, object]) -> PadCall:
    """The padding attributes of a case (ValueError naming a malformed or missing one)."""
    def given(part: str, fix: str) -> object:
        name = sem.attribute(part) or part
        if name not in attributes:
            raise ValueError(f"attribute {name} is missing: {fix}")
        return attributes[name]

    def array(part: str) -> tuple[int, ...]:
        value = given(part, 'give one number per dimension, e.g. "0,0,1,2"')
        return numbers(",".join(map(str, value)) if isinstance(value, tuple) else value, sem.attribute(part) or part)

    start, end = array("start_padding"), array("end_padding")
    mode = str(given("padding_mode", f"give {MODE_PREFIX}CONSTANT, EDGE, REFLECTION or SYMMETRIC"))
    if not mode.startswith(MODE_PREFIX) or mode.removeprefix(MODE_PREFIX) not in MODES:
        raise ValueError(f"{sem.padding_mode}={mode!r} is no padding mode the page describes: give "
                         f"{', '.join(MODE_PREFIX + m for m in MODES)}")
    value = given("padding_value", "give the constant, e.g. 9")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{sem.padding_value}={value!r} is not a number: give the constant as one, e.g. 9")
    value_type = None
    if sem.padding_value_type is not None:
        named = str(given("padding_value_type", f"give the output's type, e.g. {TYPE_PREFIX}FLOAT32"))
        if named.removeprefix(TYPE_PREFIX) not in DataType.__members__ or not named.startswith(TYPE_PREFIX):
            raise ValueError(f"{sem.padding_value_type}={named!r} is not a data type: give e.g. {TYPE_PREFIX}FLOAT32")
        value_type = DataType[named.removeprefix(TYPE_PREFIX)]
    return PadCall(mode.removeprefix(MODE_PREFIX), start, end, value, value_type)


def pad_problem(call: PadCall, input_sizes: tuple[int, ...], output_sizes: tuple[int, ...],
                output_type: DataType) -> str | None:
    """What makes ``call`` no padding of ``input_sizes`` into ``output_sizes``
    the page allows (None: nothing)."""
    if not len(call.start) == len(call.end) == len(input_sizes) == len(output_sizes):
        return f"StartPadding and EndPadding must give {len(input_sizes)} numbers each, one per dimension"
    if any(p < 0 for p in call.start + call.end):
        return f"the paddings {list(call.start)} and {list(call.end)} must not be negative (they are UINTs)"
    if call.output_sizes(input_sizes) != output_sizes:
        return f"the output's sizes {list(output_sizes)} must be {list(call.output_sizes(input_sizes))} " \
               "(the input's plus StartPadding plus EndPadding)"
    if call.value_type is not None and call.value_type is not output_type:
        return f"PaddingValueDataType {call.value_type.name} must match the output's DataType {output_type.name}"
    return None


@dataclass(frozen=True, slots=True)
class PadPlan:
    """One padding case's input sizes and paddings, named ``variant``."""

    variant: str
    input_sizes: tuple[int, ...]
    start: tuple[int, ...]
    end: tuple[int, ...]

    @property
    def output_sizes(self) -> tuple[int, ...]:
        return tuple(n + s + e for n, s, e in zip(self.input_sizes, self.start, self.end))


#: Input sizes and paddings by dimension, from the last (a plan of rank r takes the last r): start
#: and end differ in every padded dimension (so that swapping them shows), a size-1 dimension unpadded.
_SIZES, _START, _END = (2, 1, 3, 2, 2, 3, 4, 5), (1, 0, 0, 1, 0, 2, 1, 3), (0, 0, 2, 0, 1, 1, 3, 0)


def plans(rank: int) -> list[PadPlan]:
    """The paddings at ``rank`` dimensions, the default first: mixed (the
    table above), none (a copy), on the last two dimensions paddings equal
    to their sizes and beyond them (2n + 1 and 3n - 1: folded more than
    once), and a size-1 dimension padded on both sides (`single`)."""
    sizes, start, end = _SIZES[8 - rank:], _START[8 - rank:], _END[8 - rank:]
    zeros = (0,) * rank
    lead = max(rank - 2, 0)

    def tail(values: tuple[int, ...]) -> tuple[int, ...]:
        return zeros[:lead] + values[len(values) - (rank - lead):]

    last = sizes[lead:]
    found = [PadPlan("mixed", sizes, start, end), PadPlan("none", sizes, zeros, zeros),
             PadPlan("equal", sizes, tail(last), tail(last)),
             PadPlan("beyond", sizes, tail(tuple(2 * n + 1 for n in last)), tail(tuple(3 * n - 1 for n in last)))]
    single = sizes[:-1] + (1,)
    found.append(PadPlan("single", single, zeros[:-1] + (2,), zeros[:-1] + (3,)))
    return found
