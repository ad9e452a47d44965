"""The shape rules of SLICE and SLICE1 (issue #34): the window each
dimension is copied from, where its copy starts and how far it may go.

SLICE: ``Output[c] = Input[Offsets + Strides * c]``, Sizes the output's
sizes, Strides at least 1.  SLICE1: a window (InputWindowOffsets,
InputWindowSizes) copied with InputWindowStrides, from its far end where a
stride is negative; the output may take fewer elements than the window
holds (1 <= OutputSizes[i] <= 1 + (WindowSize[i] - 1) / |Stride[i]|).  A
case holds an array attribute as text, ``"0,0,1,2"`` (the case format's
numbers and strings), read by `numbers`.  What the cases module, the
oracle and the reference share; nothing here imports them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dmlconform.families.index_map.semantics import IndexMap, Operation


@dataclass(frozen=True, slots=True)
class SliceCall:
    """A slice's attributes: per dimension the offset, the size (SLICE's
    output size, SLICE1's window size) and the stride; ``window`` for SLICE1."""

    window: bool
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]

    def starts(self) -> tuple[int, ...]:
        """Where each dimension's copy starts: the offset, or the window's far end for a negative stride."""
        return tuple(o + (n - 1 if s < 0 and self.window else 0)
                     for o, n, s in zip(self.offsets, self.sizes, self.strides))

    def reach(self) -> tuple[int, ...]:
        """The output sizes the attributes allow at most (SLICE: exactly its Sizes)."""
        if not self.window:
            return self.sizes
        return tuple(1 + (n - 1) // abs(s) if s else 0 for n, s in zip(self.sizes, self.strides))


def numbers(value: object, name: str) -> tuple[int, ...]:
    """An array attribute as a case holds it (``"0,-2,1"``, or one whole
    number) -> its numbers; ValueError naming it, the value and the fix."""
    text = str(value).strip()
    if isinstance(value, bool) or not all(re.fullmatch("-?[0-9]{1,9}", p.strip()) for p in text.split(",")):
        raise ValueError(f"{name}={value!r} is not a list of whole numbers; write them comma-separated, e.g. \"0,1,-2\"")
    return tuple(int(p) for p in text.split(","))


def slice_call(sem: IndexMap, attributes: Mapping[str, object]) -> SliceCall:
    """The slice attributes of a case (ValueError naming a malformed or missing one)."""
    found = []
    for part in ("offsets", "sizes", "strides"):
        name = sem.attribute(part) or part
        if name not in attributes:
            raise ValueError(f"attribute {name} is missing: give one number per dimension, e.g. \"0,0,1,2\"")
        found.append(numbers(attributes[name], name))
    return SliceCall(sem.operation is Operation.SLICE_WINDOW, *found)


def slice_problem(call: SliceCall, input_sizes: tuple[int, ...], output_sizes: tuple[int, ...]) -> str | None:
    """What makes ``call`` no slice of an input of ``input_sizes`` into an
    output of ``output_sizes`` the page allows (None: nothing)."""
    rank = len(input_sizes)
    if not len(call.offsets) == len(call.sizes) == len(call.strides) == rank == len(output_sizes):
        return f"the offsets, sizes and strides must give {rank} numbers each, one per dimension"
    for d, (o, n, s, size) in enumerate(zip(call.offsets, call.sizes, call.strides, input_sizes)):
        last = o + (n - 1) * s if not call.window else o + n - 1
        if o < 0 or n < 1 or (s == 0 and call.window) or (s < 0 and not call.window) or last >= size:
            return f"dimension {d}: offset {o}, size {n} and stride {s} read outside the input's {size} elements " \
                   "(or copy none)"
    reach = call.reach()
    if any(not 1 <= out <= most for out, most in zip(output_sizes, reach)):
        return f"the output's sizes {list(output_sizes)} must be within 1 .. {list(reach)}"
    return None


@dataclass(frozen=True, slots=True)
class SlicePlan:
    """One slice case's sizes and attributes, named ``variant``."""

    variant: str
    input_sizes: tuple[int, ...]
    call: SliceCall
    output_sizes: tuple[int, ...]


#: The input's sizes of a plan, by dimension (the slicing happens on the last two).
_SIZES = (2, 3, 2, 2, 2, 2, 7, 9)


def plans(rank: int, *, window: bool) -> list[SlicePlan]:
    """The attribute combinations at ``rank`` dimensions, the default
    first: on the last two dimensions (7 and 9 elements) a contiguous
    window, strides of 2 and 3, one element at each end, the whole tensor;
    SLICE1 besides: negative strides (reversed, -2 and -3), a window the
    output takes fewer of, a window whose far end the stride does not reach."""
    sizes = _SIZES[len(_SIZES) - rank:]
    lead = rank - min(rank, 2)
    keep = tuple(sizes[:lead])

    def plan(variant: str, offsets: tuple[int, ...], counts: tuple[int, ...], strides: tuple[int, ...],
             out: tuple[int, ...] | None = None) -> SlicePlan:
        call = SliceCall(window, (0,) * lead + offsets, keep + counts, (1,) * lead + strides)
        return SlicePlan(variant, sizes, call, call.reach() if out is None else keep + out)

    tail = sizes[lead:]
    same = lambda v: (v,) * len(tail)  # noqa: E731
    two = lambda a, b: (a, b)[2 - len(tail):] if len(tail) == 2 else (b,)  # noqa: E731
    found = [plan("contiguous", same(1), tuple(s - 2 for s in tail), same(1)),
             plan("strided", same(0), tail if window else tuple((s + 1) // 2 for s in tail), same(2)),
             plan("ends", tuple(s - 1 for s in tail), same(1), same(3)),
             plan("whole", same(0), tail, same(1))]
    if not window:  # a stride of 0 (`stride-zero`): the offset's element repeated
        found.append(plan("repeat", tuple(s // 2 for s in tail), same(3), same(0)))
    else:
        found += [plan("reversed", same(0), tail, same(-1)),
                  plan("negative", same(1), tuple(s - 1 for s in tail), two(-2, -3)),
                  plan("mixed", same(0), tail, two(2, -1)),
                  plan("partial", same(0), tail, same(-1), tuple(s // 2 for s in tail)),
                  plan("unreached", same(0), tuple(s - 1 for s in tail), two(-3, 4))]
    return found
