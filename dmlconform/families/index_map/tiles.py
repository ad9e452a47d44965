"""The shape rules of TILE (issue #34): ``Output.Sizes[i] = Input.Sizes[i] *
Repeats[i]``, and output coordinate c is input coordinate c modulo the
input's sizes (the page's example: whole rows repeated, 1 2 3 1 2 3, not
each element, 1 1 2 2 3 3).  A case holds Repeats as text, ``"1,1,3,3"``
(`slices.numbers` reads it).  What the cases module, the oracle and the
reference share; nothing here imports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.families.index_map.slices import numbers


@dataclass(frozen=True, slots=True)
class TilePlan:
    """One TILE case's input sizes and Repeats, named ``variant``."""

    variant: str
    input_sizes: tuple[int, ...]
    repeats: tuple[int, ...]

    @property
    def output_sizes(self) -> tuple[int, ...]:
        return tuple(s * r for s, r in zip(self.input_sizes, self.repeats))


def repeats_of(sem: IndexMap, attributes: Mapping[str, object]) -> tuple[int, ...]:
    """The Repeats of a case (ValueError naming a malformed or missing one)."""
    name = sem.repeats or "Repeats"
    if name not in attributes:
        raise ValueError(f"attribute {name} is missing: give one number per dimension, e.g. \"1,1,3,3\"")
    return numbers(attributes[name], name)


def tile_problem(repeats: tuple[int, ...], input_sizes: tuple[int, ...], output_sizes: tuple[int, ...]) -> str | None:
    """What makes Repeats no tiling of ``input_sizes`` into ``output_sizes`` (None: nothing)."""
    if len(repeats) != len(input_sizes) or len(output_sizes) != len(input_sizes):
        return f"Repeats {list(repeats)} must give one number per dimension of the input ({len(input_sizes)})"
    if any(r < 1 for r in repeats):
        return f"Repeats {list(repeats)} must all be larger than 0"
    wanted = tuple(s * r for s, r in zip(input_sizes, repeats))
    if wanted != output_sizes:
        return f"the output's sizes {list(output_sizes)} must be {list(wanted)} (the input's times Repeats)"
    return None


#: Input sizes and Repeats by dimension, from the last (a plan of rank r takes the last r).
_SIZES, _REPEATS = (2, 1, 2, 1, 2, 3, 1, 4), (1, 2, 1, 1, 2, 1, 3, 2)


def plans(rank: int) -> list[TilePlan]:
    """The Repeats at ``rank`` dimensions, the default first: mixed (some 1,
    some 2 or 3, size-1 dimensions repeated too), all 1 (a copy), the last
    dimension 5 times, the first 4 times."""
    sizes, repeats = _SIZES[8 - rank:], _REPEATS[8 - rank:]
    ones = (1,) * rank
    return [TilePlan("mixed", sizes, repeats), TilePlan("copy", sizes, ones),
            TilePlan("last", sizes, ones[:-1] + (5,)), TilePlan("first", sizes, (4,) + ones[1:])]
