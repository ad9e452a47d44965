"""Edge values per data type and branch boundaries as values.

DESIGN.md, "Cases" (edge values the generator must cover, per data type).
Every fact comes from ``finfo``/``iinfo`` of the target type, never from a
hand-written table per type (STYLE.md, "Numerics").  Each edge value carries
the name of its edge class, which `Case.edges` reports for coverage.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from math import ceil, floor

import numpy as np

from dmlconform.compare import finfo
from dmlconform.spec.model import DataType, numpy_dtype

#: Edge classes of a float type, in the order `edge_values` yields them.
FLOAT_CLASSES: tuple[str, ...] = (
    "+0", "-0", "subnormal_min", "-subnormal_min", "subnormal_max", "-subnormal_max", "normal_min",
    "-normal_min", "+1", "-1", "max", "-max", "inf", "-inf", "nan", "-nan",
)
#: Edge classes of a signed integer type (unsigned: those that exist).
INT_CLASSES: tuple[str, ...] = ("0", "+1", "-1", "min", "min+1", "max", "max-1")


@functools.cache
def np_dtype(dtype: DataType) -> np.dtype:
    """The numpy dtype that holds ``dtype`` (INT4/UINT4 are not supported:
    they have no ``.npy`` form that loads without pickle)."""
    if dtype in (DataType.INT4, DataType.UINT4):
        raise ValueError(f"dtype={dtype.name} has no plain numpy type; cases use 8-bit and wider types")
    return numpy_dtype(dtype)


@dataclass(frozen=True, slots=True)
class EdgeValue:
    """One value of the target type and the edge class it belongs to."""

    name: str
    value: np.generic


@functools.cache
def edge_values(dtype: DataType) -> tuple[EdgeValue, ...]:
    """The named edge values of ``dtype`` (DESIGN.md, "Cases"); computed once
    per type (immutable)."""
    nt = np_dtype(dtype)
    if dtype.is_float:
        return _float_edges(nt)
    info = np.iinfo(nt)
    pairs = (("0", 0), ("+1", 1), ("-1", -1), ("min", info.min), ("min+1", info.min + 1),
             ("max", info.max), ("max-1", info.max - 1))
    seen: set[int] = set()
    out = []
    for name, value in pairs:
        if info.min <= value <= info.max and value not in seen:
            seen.add(value)
            out.append(EdgeValue(name, nt.type(value)))
    return tuple(out)


def _float_edges(nt: np.dtype) -> tuple[EdgeValue, ...]:
    fi = finfo(nt)
    tiny = np.asarray(fi.smallest_subnormal, dtype=nt)
    normal = np.asarray(fi.smallest_normal, dtype=nt)
    largest_sub = np.nextafter(normal, np.asarray(0, dtype=nt))
    big = np.asarray(fi.max, dtype=nt)
    one, inf, nan = (np.asarray(v, dtype=nt) for v in (1.0, np.inf, np.nan))
    values = (np.asarray(0.0, dtype=nt), -np.asarray(0.0, dtype=nt), tiny, -tiny, largest_sub, -largest_sub,
              normal, -normal, one, -one, big, -big, inf, -inf, nan, np.negative(nan))
    return tuple(EdgeValue(n, nt.type(v)) for n, v in zip(FLOAT_CLASSES, values, strict=True))


def boundary_points(exact: Fraction | None, value: float, dtype: DataType, points: np.ndarray | None) -> np.ndarray:
    """A boundary as values of ``dtype``: for floats ``points`` (from
    `Boundary.points`), for integers the integers around the exact value (the
    two nearest on each side), clipped to the type's range."""
    nt = np_dtype(dtype)
    if dtype.is_float:
        return np.asarray(points if points is not None else [], dtype=nt)
    x = exact if exact is not None else Fraction(value)
    info = np.iinfo(nt)
    near = sorted({floor(x) - 1, floor(x), ceil(x), ceil(x) + 1})
    return np.asarray([v for v in near if info.min <= v <= info.max], dtype=nt)
