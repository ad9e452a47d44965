"""The interpolation family's oracle (RESAMPLE, RESAMPLE1, RESAMPLE2,
RESAMPLE3, UPSAMPLE_2D): the coordinate map and the weights in float64, the bound of a
weighted sum with positive weights, per output element.

Issue #36 items 1 and 2; docs/interpolation.md derives the bound and works
one real case through it.  Per dimension the source coordinate of output
index o is ``c = (o - OutputPixelOffset) / Scale - InputPixelOffset``
(float64, the attributes' float32 values).  An implementation computes it
in float32: ``delta = u32 (3 |o - OutputPixelOffset| / Scale + |c|)``
bounds its error (the subtraction, a division or a rounded reciprocal and
its product, the last subtraction), and is 0 where every step is exact (a
power-of-two scale, each intermediate a float32 value).

* NEAREST_NEIGHBOR: the element at the rounded coordinate, exact (bound
  0).  Where ``c`` lies within ``delta`` of a rounding boundary (a halfway
  tie the float32 arithmetic may put on either side), each neighbour is
  accepted (``coordinate-rounding`` alternatives, reported); at an exact
  tie the operator's rule decides (RoundingDirection), or, where the page
  leaves ties open (RESAMPLE, RESAMPLE1), the ``ties`` readings.
* LINEAR: ``v = sum over the 2^d corners of prod w x`` with the weights
  ``w1 = c' - floor(c')`` (c' clamped to the edges) and ``w0 = 1 - w1``,
  all positive, summing to 1.  FAIL beyond ``gamma_{3d+1}(u) M + sum_k
  delta_k D_k + spacing``: ``M`` the largest corner magnitude (d
  interpolation steps of 3 roundings each over values within M, whatever
  the form, ``a + w (b - a)`` or ``w0 a + w1 b``), plus per dimension
  ``delta_k`` times the slope ``D_k`` along it (the difference across
  the element's cell, and across the next cell where ``delta`` reaches
  it, weighted along the other dimensions: the piecewise linear value
  moves no faster), ``u`` float32's unit roundoff (FLOAT16's where the
  backend declares FLOAT16 arithmetic).  0 where the case is exact:
  ``delta`` 0, integer data and dyadic weights whose products and sums fit
  the significands.  Integer outputs: the value rounded to nearest (even),
  either neighbour where ``v`` lies within the bound of a rounding
  boundary, the ``integer-rounding`` readings as alternatives.
* UPSAMPLE_2D is RESAMPLE with scales 1 but for height and width; its
  LINEAR cases also offer the asymmetric map (``upsample-map``) where
  both maps give exact values.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases.model import Case, joined
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier, finfo
from dmlconform.families.interpolation.cases import Geometry, geometry, semantics_of
from dmlconform.families.interpolation.semantics import DECREASING, INCREASING, LINEAR, Resample
from dmlconform.oracles.base import (
    Expectation,
    end_to_end,
    gamma,
    joined_blocks,
    reading_alternatives,
    spacing_above,
    unit_roundoff,
    within,
)
from dmlconform.plan import ORACLE_BLOCK
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["InterpolationBatch", "InterpolationOracle", "Part", "batch_of"]

_U32 = 2.0 ** -24
_U64 = 2.0 ** -53
#: The most combinations of per-dimension index choices offered at one element's coordinate rounding.
_MAX_COMBINATIONS = 64


@dataclass(frozen=True, slots=True, eq=False)
class InterpolationOracle:
    """The oracle of one resample operator (its reviewed semantics)."""

    spec: m.Spec
    semantics: Resample

    @classmethod
    def of(cls, spec: m.Spec) -> InterpolationOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> InterpolationBatch:
        """Each case's values, bounds and alternatives end to end.  ``flush_subnormals``
        changes nothing: a flushed subnormal is within one spacing of the output."""
        return batch_of([_part(self.spec, self.semantics, c, float16_accumulation) for c in cases])


def batch_of(parts: Sequence[Part]) -> InterpolationBatch:
    """The cases' parts end to end (the ROI operators' oracle's too); one
    case's own arrays are kept, not copied (a large case's)."""
    alternatives = end_to_end([p.alternatives for p in parts], [p.expected.size for p in parts])
    expected = joined([p.expected for p in parts])
    expected.setflags(write=False)
    strict = None if any(p.strict is None for p in parts) else joined([p.strict for p in parts if p.strict is not None])
    return InterpolationBatch(expected, strict, alternatives, joined([p.magnitude for p in parts]))


@dataclass(frozen=True, slots=True, eq=False)
class Part:
    """One case, flat in C order of the output; ``strict`` None where exact (NEAREST, integers)."""

    expected: np.ndarray
    strict: np.ndarray | None
    magnitude: np.ndarray
    alternatives: tuple[Alternative, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Axis:
    """One dimension's map: the float64 source coordinate of each output
    index and the bound ``delta`` of its float32 evaluation."""

    c: np.ndarray
    delta: np.ndarray


def axis_map(size_out: int, scale: float, input_offset: float, output_offset: float) -> Axis:
    """The coordinates and their float32 error bound (the module's docstring)."""
    o = np.arange(size_out, dtype=np.float64)
    shifted = o - output_offset
    c = shifted / scale - input_offset
    f32 = np.float32
    exact = (np.frexp(scale)[0] == 0.5) & (shifted.astype(f32) == shifted) & (c.astype(f32) == c)
    delta = np.where(exact, 0.0, _U32 * (1 + 2.0 ** -20) * (3 * np.abs(shifted) / scale + np.abs(c)))
    return Axis(c, delta)


def axes_of(geo: Geometry, out_sizes: tuple[int, ...]) -> tuple[Axis, ...]:
    return tuple(axis_map(n, s, i, o) for n, s, i, o in zip(out_sizes, geo.scales, geo.input_offsets,
                                                              geo.output_offsets))


def _part(spec: m.Spec, sem: Resample, case: Case, float16_accumulation: bool) -> Part:
    geo, out = geometry(sem, case), case.outputs[0]
    x = case.input(sem.input).view().astype(np.float64)
    axes = axes_of(geo, out.sizes)
    if geo.mode == LINEAR:
        part = _linear_blocks(spec, x, axes, out.dtype, float16_accumulation)
        if sem.scale_size is None or part.strict is None:
            return part
        corner = replace(geo, input_offsets=(0.0,) * x.ndim, output_offsets=(0.0,) * x.ndim)
        other = _linear_blocks(spec, x, axes_of(corner, out.sizes), out.dtype, float16_accumulation)
        exact = (part.strict == 0) & (other.strict is not None) & (other.strict == 0)
        readings = {"upsample-map:asymmetric": np.where(exact, other.expected, part.expected).astype(np.float64)}
        return replace(part, alternatives=reading_alternatives(spec, readings, part.expected))
    return _nearest_part(spec, sem, geo, x, axes, out.dtype)


# -- nearest neighbour ------------------------------------------------------------------------------


def round_half(c: np.ndarray, up: bool) -> np.ndarray:
    """c rounded to the nearest integer, halfway ties up (floor(c + 1/2)) or down (ceil(c - 1/2))."""
    return np.floor(c + 0.5) if up else np.ceil(c - 0.5)


def _gather(x: np.ndarray, indices: Sequence[np.ndarray]) -> np.ndarray:
    """x at the outer product of per-dimension indices (clamped to the edges), flat."""
    clamped = [np.clip(i, 0, n - 1).astype(np.int64) for i, n in zip(indices, x.shape)]
    return x[np.ix_(*clamped)].reshape(-1)


def _nearest_part(spec: m.Spec, sem: Resample, geo: Geometry, x: np.ndarray, axes: tuple[Axis, ...],
                  dtype: m.DataType) -> Part:
    """The element at each rounded coordinate (ties by RoundingDirection,
    up where the page leaves them open: the ``ties`` ambiguity's primary);
    alternatives at the boundaries the float32 coordinate may cross, and
    the readings."""
    up = geo.rounding != DECREASING
    rule = [round_half(a.c, up) for a in axes]
    nt = numpy_dtype(dtype)
    expected = _gather(x, rule).astype(nt)
    readings: dict[str, np.ndarray] = {}
    if geo.rounding is None:
        readings["ties:down"] = _gather(x, [round_half(a.c, False) for a in axes])
    else:
        literal = [(np.ceil if geo.rounding == INCREASING else np.floor)(a.c) for a in axes]
        readings["rounding-direction:literal"] = _gather(x, literal)
    outside = np.zeros(expected.shape, bool)
    for k, (r, n) in enumerate(zip(rule, x.shape)):
        bad = (r < 0) | (r > n - 1)
        shape = [1] * len(rule)
        shape[k] = -1
        outside = outside | np.broadcast_to(bad.reshape(shape), [a.c.size for a in axes]).reshape(-1)
    if outside.any():
        readings["out-of-range:zero"] = np.where(outside, 0.0, expected.astype(np.float64))
    alternatives = reading_alternatives(spec, readings, expected)
    choices = [_index_choices(a, up, geo.rounding) for a in axes]
    extra = _combinations(x, choices, expected, "coordinate-rounding",
                          "the float32 coordinate lies within its rounding error of a rounding boundary: "
                          "either neighbour")
    return Part(expected, None, np.abs(expected.astype(np.float64)), alternatives + extra)


def _index_choices(a: Axis, up: bool, rounding: str | None) -> list[np.ndarray]:
    """The indices one dimension may take where the float32 coordinate is
    anywhere in [c - delta, c + delta]: the rule's (and the literal
    reading's, RESAMPLE2/3) at both ends."""
    rules = [lambda c: round_half(c, up)]
    if rounding is not None:
        rules.append(np.ceil if rounding == INCREASING else np.floor)
    return [rule(a.c + side * a.delta) for rule in rules for side in (-1.0, 1.0)]


def _combinations(x: np.ndarray, choices: list[list[np.ndarray]], expected: np.ndarray, name: str,
                  reason: str) -> tuple[Alternative, ...]:
    """Each combination of per-dimension index choices, as an alternative
    where it differs from ``expected`` (only the dimensions whose choices
    differ are combined, at most `_MAX_COMBINATIONS`)."""
    distinct = [_unique_arrays(c) for c in choices]
    total = int(np.prod([len(d) for d in distinct]))
    if total <= 1:
        return ()
    out: list[Alternative] = []
    for combo in itertools.islice(itertools.product(*distinct), _MAX_COMBINATIONS):
        values = _gather(x, combo).astype(expected.dtype)
        where = np.flatnonzero(values != expected)
        if where.size:
            out.append(Alternative(f"{name}#{len(out) + 1}", where, values[where], Tier.STRICT, reason))
    return tuple(out)


def _unique_arrays(arrays: list[np.ndarray]) -> list[np.ndarray]:
    found: list[np.ndarray] = []
    for a in arrays:
        if not any(np.array_equal(a, f) for f in found):
            found.append(a)
    return found


# -- linear -------------------------------------------------------------------------------------------


def _cells(n: int, a: Axis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One dimension's two neighbours of each (clamped) coordinate and the weight of the upper one."""
    cc = np.clip(a.c, 0, n - 1)
    low = np.clip(np.floor(cc), 0, max(n - 2, 0)).astype(np.int64)
    return low, np.minimum(low + 1, n - 1), cc - low


def _along(y: np.ndarray, k: int, a: Axis, step: str) -> np.ndarray:
    """One dimension's pass: ``weighted`` w0 y[i0] + w1 y[i1], ``max`` the
    larger magnitude of the neighbours with a weight, ``slope`` the
    difference across the cell, and across the cell beside it where the
    coordinate lies within its error ``delta`` of that cell (the function's
    slope wherever the float32 coordinate may land)."""
    n = y.shape[k]
    if step != "slope" and a.c.size == n and np.array_equal(a.c, np.arange(n)):
        return y if step == "weighted" else np.abs(y)  # the identity map (a scale of 1): nothing moves
    low, high, w1 = _cells(n, a)
    shape = [1] * y.ndim
    shape[k] = -1
    w1 = w1.reshape(shape)
    a0, a1 = np.take(y, low, axis=k), np.take(y, high, axis=k)
    if step == "weighted":  # (1 - w1) a0 + w1 a1, in place: a large case's passes are memory-bound
        a0 *= 1 - w1
        a1 *= w1
        a0 += a1
        return a0
    if step == "max":  # the larger magnitude of the neighbours with a weight
        np.abs(a0, out=a0)
        np.abs(a1, out=a1)
        np.copyto(a0, 0.0, where=np.broadcast_to(w1 >= 1, a0.shape))
        np.copyto(a1, 0.0, where=np.broadcast_to(w1 <= 0, a1.shape))
        return np.maximum(a0, a1, out=a0)
    delta = a.delta.reshape(shape)
    below, above = np.take(y, np.maximum(low - 1, 0), axis=k), np.take(y, np.minimum(high + 1, n - 1), axis=k)
    slope = np.maximum(np.abs(a1 - a0), np.maximum(np.where(w1 <= delta, np.abs(a0 - below), 0),
                                                   np.where(w1 >= 1 - delta, np.abs(above - a1), 0)))
    moving = ((a.c >= -a.delta) & (a.c <= n - 1 + a.delta)).reshape(shape)  # clamped beyond: the value stays
    return np.where(moving, slope, 0)


def _separable(x: np.ndarray, axes: tuple[Axis, ...], step: str, at: int = -1) -> np.ndarray:
    """The value (``weighted`` along every dimension), the largest corner
    magnitude (``max``), or the slope along dimension ``at`` (``slope``
    there, weighted elsewhere: by positive weights, an upper bound of the
    slope's magnitude), flat."""
    y = x
    for k, a in enumerate(axes):
        if step == "slope":
            y = _along(y, k, a, "slope" if k == at else "weighted")
        else:
            y = _along(y, k, a, step)
    return y.reshape(-1)


def _outer(per_axis: list[np.ndarray]) -> np.ndarray:
    """Per-dimension values summed over the outer product, flat."""
    total = np.zeros(())
    for v in per_axis:
        total = np.add.outer(total, v)
    return total.reshape(-1)


def _dyadic_bits(axes: tuple[Axis, ...], sizes: tuple[int, ...]) -> np.ndarray:
    """Per output element: the fraction bits of its weights' product (inf
    where a weight is no dyadic fraction of at most 20 bits)."""
    total = np.zeros((), np.float64)
    for a, n in zip(axes, sizes):
        w = np.clip(a.c, 0, n - 1) % 1
        bits = np.full(w.shape, np.inf)
        for b in range(21):
            bits = np.where(np.isinf(bits) & ((w * 2.0 ** b) % 1 == 0), b, bits)
        total = np.add.outer(total, bits)
    return total.reshape(-1)


def _linear_blocks(spec: m.Spec, x: np.ndarray, axes: tuple[Axis, ...], dtype: m.DataType,
                   float16_accumulation: bool) -> Part:
    """`_linear_part`, past `plan.ORACLE_BLOCK` outputs block by block
    along the first dimension that moves nothing (a scale of 1: output i
    reads input i) with only ones before it, about `plan.ORACLE_BLOCK`
    outputs a block: every float64 temporary is a block's, not the whole
    output's (a 4x upsample of 1x32x256x256 traced 1.57 GB at once)."""
    sizes = tuple(a.c.size for a in axes)
    k = next((d for d, (a, n) in enumerate(zip(axes, x.shape)) if a.c.size == n > 1 and not a.delta.any()
              and np.array_equal(a.c, np.arange(n))), None)
    if k is None or math.prod(sizes) <= ORACLE_BLOCK or math.prod(sizes[:k]) != 1:
        return _linear_part(spec, x, axes, dtype, float16_accumulation)
    inner = math.prod(sizes[k + 1:])
    step = max(1, ORACLE_BLOCK // max(inner, 1))
    # the magnitudes are the input's own (or 0): float32 where every input value is one, half the bytes (RESAMPLE1's
    # large case traced 6.28x its tensors with them in float64)
    kept = np.float32 if np.array_equal(x.astype(np.float32), x, equal_nan=True) else np.float64
    expected, strict, magnitude = (np.empty(math.prod(sizes), t) for t in (numpy_dtype(dtype), np.float64, kept))
    parts = []
    for lo in range(0, sizes[k], step):  # each block written in place: no list of blocks beside the whole
        hi = min(lo + step, sizes[k])
        block = tuple(Axis(a.c[lo:hi] - lo, a.delta[lo:hi]) if d == k else a for d, a in enumerate(axes))
        part = _linear_part(spec, x[(slice(None),) * k + (slice(lo, hi),)], block, dtype, float16_accumulation)
        expected[lo * inner:hi * inner], magnitude[lo * inner:hi * inner] = part.expected, part.magnitude
        if part.strict is not None:
            strict[lo * inner:hi * inner] = part.strict
        parts.append((part.alternatives, lo * inner, part.strict is None))
    expected.setflags(write=False)
    return Part(expected, None if any(exact for _, _, exact in parts) else strict, magnitude,
                 joined_blocks([(alternatives, offset) for alternatives, offset, _ in parts]))


def _linear_part(spec: m.Spec, x: np.ndarray, axes: tuple[Axis, ...], dtype: m.DataType,
                 float16_accumulation: bool) -> Part:
    d = x.ndim
    value, big = _separable(x, axes, "weighted"), _separable(x, axes, "max")
    u = unit_roundoff(m.DataType.FLOAT16) if float16_accumulation and dtype is m.DataType.FLOAT16 else _U32
    bound = (gamma(np.array(3.0 * d + 1), u) + gamma(np.array(3.0 * d), _U64)) * big
    for k, a in enumerate(axes):
        if a.delta.any():  # the value's change over the coordinate's float32 error: at most delta times the slope
            alone = _outer([a.delta if j == k else np.zeros(b.c.shape) for j, b in enumerate(axes)])
            bound += alone * _separable(x, axes, "slope", k)
    exact = _exact(x, axes, big, dtype)
    nt = numpy_dtype(dtype)
    if not dtype.is_float:
        return _integer_part(spec, value, np.where(exact, 0.0, bound), nt)
    expected = value.astype(nt)
    strict = bound + spacing_above(np.abs(value) + bound, nt)
    strict[exact] = 0.0
    expected.setflags(write=False)
    return Part(expected, strict, big, ())


def _exact(x: np.ndarray, axes: tuple[Axis, ...], big: np.ndarray, dtype: m.DataType) -> np.ndarray:
    """Per output element: whether its value is exact in any order (the
    module's docstring): no coordinate error, integer data, dyadic weights
    whose products and sums fit the significand."""
    if not np.all(np.mod(x, 1) == 0) or any(a.delta.all() for a in axes):
        return np.zeros(big.shape, bool)  # (the common case at once: a large random case pays nothing here)
    digits = min(int(finfo(numpy_dtype(dtype)).nmant) + 1 if dtype.is_float else 24, 24)
    return (_outer([a.delta for a in axes]) == 0) & (big * 2.0 ** (_dyadic_bits(axes, x.shape) + 1) < 2.0 ** digits)


def _integer_part(spec: m.Spec, value: np.ndarray, bound: np.ndarray, nt: np.dtype) -> Part:
    """An integer output: ``value`` rounded to nearest even (the primary
    reading of ``integer-rounding``), the other neighbour where ``value``
    lies within ``bound`` of the boundary, the readings (half away from
    zero, toward zero) as alternatives."""
    info = np.iinfo(nt)

    def to(values: np.ndarray) -> np.ndarray:
        return np.clip(values, info.min, info.max).astype(nt)

    expected = to(np.rint(value))
    readings = {"integer-rounding:half-away": np.trunc(value + np.copysign(0.5, value)),
                "integer-rounding:truncate": np.trunc(value)}
    alternatives = reading_alternatives(spec, readings, expected)
    extra = []
    for k, near in enumerate((np.rint(value - bound), np.rint(value + bound), np.trunc(value - bound),
                              np.trunc(value + bound))):
        where = np.flatnonzero(to(near) != expected)
        if where.size:
            extra.append(Alternative(f"value-rounding#{k + 1}", where, to(near)[where], Tier.STRICT,
                                     "the value lies within its arithmetic error of a rounding boundary"))
    expected.setflags(write=False)
    return Part(expected, None, np.abs(value), alternatives + tuple(extra))


@dataclass(frozen=True, slots=True, eq=False)
class InterpolationBatch:
    """`InterpolationOracle` bound to a batch: everything end to end."""

    expected: np.ndarray
    strict: np.ndarray | None
    alternatives: tuple[Alternative, ...]
    magnitude: np.ndarray

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        strict = None if self.strict is None else self.strict[lo:hi]
        return (Expectation(self.expected[lo:hi], strict, None, within(self.alternatives, lo, hi), 0,
                            RELAXED_FACTOR, False),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """What decides an element's bound: the largest corner magnitude M."""
        return (("M", [float(v) for v in self.magnitude[flat].tolist()]),)
