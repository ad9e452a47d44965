"""The oracle of FOLD and UNFOLD: the window map read both ways.

Issue #35 items 1 and 2; docs/window.md "Fold and unfold".  The window map
(`families.window.windowmap`, forward, one "output" per block) gives, per
block and window tap, the image position it covers (or the padding):

* UNFOLD copies: the block tensor's element (n, c K + k, b) is the image's
  element at tap k of block b, +0 in the padding; exact, compared bit for
  bit (the sign of zero counts; NaN matches NaN);
* FOLD sums: each image element is the float64 sum ``T`` of the block
  elements whose tap covers it, with ``S`` the sum of their magnitudes and
  ``n`` their count (0 where no block covers it: +0).  The bound is the
  window family's (`families.window.oracle`): FAIL beyond ``gamma_n(u) S +
  gamma_n(2^-53) S`` plus a spacing of the output type, ``u`` the
  accumulator's (float32 for FLOAT16 unless the backend declares FLOAT16
  accumulation); QUALITY_WARNING beyond the probabilistic bound; 0 where
  every value is an integer and S fits both significands (a dropped or
  doubled block element is caught for certain).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, finfo
from dmlconform.families.window import windowmap
from dmlconform.families.window.fold import blocks, example_case, geometry, sides
from dmlconform.families.window.semantics import Window, WindowExample
from dmlconform.oracles.base import Expectation, gamma, gamma_probable, spacing_above, unit_roundoff
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

_U64 = 2.0 ** -53


@dataclass(frozen=True, slots=True, eq=False)
class Coverage:
    """Per block element {N, C x K, L} flat, the flat image element it lands on (``valid``), for one case."""

    target: np.ndarray
    valid: np.ndarray
    image_size: int


def coverage(sem: Window, case: Case) -> Coverage:
    """The window map of ``case`` from the block tensor to the image."""
    geo, s = geometry(sem, case.attribute_map()), sides(sem, case)
    n, c, *spatial = s.image.sizes
    counts = blocks(geo, tuple(spatial))
    maps = [windowmap.taps(size, count, k, stride=st, dilation=d, start=a, transposed=False)
            for size, count, k, st, d, a in zip(spatial, counts, geo.window, geo.strides, geo.dilations, geo.start)]
    d = len(maps)
    position: np.ndarray = np.zeros((), np.int64)
    valid: np.ndarray = np.ones((), bool)
    for t, size in zip(maps, spatial):  # (B..., K...) in the map's outer-product order, then (K..., B...)
        position = np.add.outer(position * size, np.minimum(t.index, size - 1))
        valid = np.logical_and.outer(valid, t.valid)
    order = [2 * j + 1 for j in range(d)] + [2 * j for j in range(d)]
    position, valid = position.transpose(order).reshape(-1), valid.transpose(order).reshape(-1)
    channel = np.arange(n * c, dtype=np.int64)[:, None] * math.prod(spatial)
    target = (channel + position[None, :]).reshape(-1)
    return Coverage(target, np.broadcast_to(valid, (n * c, valid.size)).reshape(-1), n * c * math.prod(spatial))


def bind(spec: m.Spec, sem: Window, cases: Sequence[Case], *, float16_accumulation: bool) -> FoldBatch:
    """Each case's expected values, bounds, S and n end to end."""
    parts = [(_unfold if sem.operation == "unfold" else _fold)(sem, c, float16_accumulation) for c in cases]
    joined = [np.concatenate([p[j] for p in parts]) for j in range(4)]
    for a in joined:
        a.setflags(write=False)
    return FoldBatch(joined[0], joined[1], joined[2], joined[3], signed_zero=sem.operation == "unfold")


Part = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _unfold(sem: Window, case: Case, float16_accumulation: bool) -> Part:
    """The image's elements copied through the map (+0 in the padding), bound 0."""
    cover = coverage(sem, case)
    x = case.input(sem.input).view().reshape(-1)
    values = np.where(cover.valid, x[np.where(cover.valid, cover.target, 0)], np.zeros((), x.dtype))
    zero = np.zeros(values.shape)
    return values, zero, zero, cover.valid.astype(np.float64)


def _fold(sem: Window, case: Case, float16_accumulation: bool) -> Part:
    """T, S and n per image element by a float64 scatter-add of the block
    elements through the map, and the bound of the module's docstring."""
    cover, out = coverage(sem, case), case.outputs[0]
    x = case.input(sem.input).view().reshape(-1).astype(np.float64)
    where, terms = cover.target[cover.valid], x[cover.valid]
    with np.errstate(invalid="ignore"):
        value = np.bincount(where, weights=terms, minlength=cover.image_size)
        magnitude = np.bincount(where, weights=np.abs(terms), minlength=cover.image_size)
    n = np.bincount(where, minlength=cover.image_size).astype(np.float64)
    acc = m.DataType.FLOAT16 if float16_accumulation and out.dtype is m.DataType.FLOAT16 else sem.accumulator(out.dtype)
    expected = value.astype(numpy_dtype(out.dtype))
    own = gamma(n, _U64) * magnitude
    with np.errstate(invalid="ignore", over="ignore"):
        relaxed = gamma(n, unit_roundoff(acc)) * magnitude + own
        strict = gamma_probable(n, unit_roundoff(acc)) * magnitude + own
        spacing = spacing_above(np.abs(expected.astype(np.float64)) + relaxed, expected.dtype)
    digits = min(_digits(acc), _digits(out.dtype))
    exact = bool(np.all(np.mod(x, 1) == 0)) & (magnitude <= 2.0 ** digits)
    zero = exact | ~np.isfinite(expected)
    return expected, np.where(zero, 0.0, strict + spacing), np.where(zero, 0.0, relaxed + spacing), n


def _digits(dtype: m.DataType) -> int:
    return int(finfo(numpy_dtype(dtype)).nmant) + 1 if dtype.is_float else 64


@dataclass(frozen=True, slots=True, eq=False)
class FoldBatch:
    """`bind`'s result: expected values, strict and relaxed bounds and n, end to end."""

    expected: np.ndarray
    strict: np.ndarray
    relaxed: np.ndarray
    n: np.ndarray
    signed_zero: bool

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        if self.signed_zero:  # UNFOLD: a copy, bit for bit
            return (Expectation(self.expected[lo:hi], None, None, (), 0, RELAXED_FACTOR, True),)
        return (Expectation(self.expected[lo:hi], self.strict[lo:hi], self.relaxed[lo:hi], (), 0, RELAXED_FACTOR,
                            False, bias_scale=self.strict[lo:hi]),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """What decides an element's bound: its term count n (UNFOLD: 1 read, 0 padding)."""
        return (("n", [float(v) for v in self.n[flat].tolist()]),)


def example_problems(spec: m.Spec, sem: Window, e: WindowExample) -> Iterator[tuple[str, str]]:
    """Where the output a page prints for its worked example ``e`` is not the
    oracle's (key in the overlay's example, message); nothing where it is."""
    try:
        case = example_case(spec, sem, e, level=spec.introduced)
    except ValueError as exc:
        yield "attributes", f"{e.name}: {exc}"
        return
    want = math.prod(case.outputs[0].sizes)
    if e.output_sizes != case.outputs[0].sizes or len(e.output_values) != want:
        yield "output", (f"{e.name} prints {len(e.output_values)} values of sizes {list(e.output_sizes)}; its input and "
                         f"attributes give {list(case.outputs[0].sizes)}: the doc's output is wrong")
        return
    (got,) = bind(spec, sem, [case], float16_accumulation=False).expect(0, want)
    printed = np.array(e.output_values)
    wrong = np.flatnonzero(got.expected.astype(np.float64) != printed)
    if wrong.size:
        i = int(wrong[0])
        yield "output", (f"{e.name} prints {printed[i]:g} at flat element {i} ({wrong.size} of {want} differ), but its "
                         f"input and attributes give {float(got.expected[i]):g}: the doc's output is wrong")
