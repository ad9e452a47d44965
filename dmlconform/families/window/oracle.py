"""The window family's oracle (CONVOLUTION): expected values in float64 and a
bound from the error analysis of summation, per output element.

Issue #35 items 1 and 2; DESIGN.md "Tolerances for accumulating
operators"; docs/window.md works one real case through it.  Per output
element the window map (`families.window.windowmap`) gives the taps it
reads; in float64 (every product of two float32 or FLOAT16 values is exact
there) the oracle computes the value ``T = sum x w + b``, the sum of the
terms' magnitudes ``S = sum |x w| + |b|`` and the term count ``n`` (the
valid taps times the group's channels, plus the bias: it varies at the
borders and with a transposed output's phase).  With ``u`` the unit
roundoff of the accumulator (float32's for FLOAT16 tensors, the primary
reading, unless the backend declares FLOAT16 accumulation), as the
contraction family (`families.contraction.oracle`):

* FAIL beyond ``gamma_n(u) S + gamma_n(2^-53) S + spacing``: summation in
  any order (Higham, eq. 3.5), the oracle's own float64 error and one
  spacing of the output type (its rounding);
* QUALITY_WARNING beyond the probabilistic ``gamma~_n(lambda, u) S`` (Higham
  and Mary 2019) in its place;
* 0 where every value is an integer and S fits the significands of the
  accumulator and the output (every partial sum exact in any order: a
  dropped tap at a border is caught for certain), or where the result is
  not finite (compared as a value; any NaN matches).

Readings (the overlay's ambiguities) offered as STRICT alternatives where
they give another value: ``flip-axes:height-width`` (CONVOLUTION mode
reverses only the last two spatial dimensions of a 3D filter), on the
exact cases that tell it apart; ``output-padding:zero`` (the backward
output's OutputPadding elements are zero before the bias) and
``output-padding:zero-after-bias`` (zero, the bias not added).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dmlconform.cases.model import Case, joined
from dmlconform.compare import RELAXED_FACTOR, Alternative, finfo
from dmlconform.families.contraction import fused
from dmlconform.families.contraction.cases import Activation
from dmlconform.families.elementwise.oracle import FormulaOracle
from dmlconform.families.window import fold_oracle, unpool_oracle, windowmap
from dmlconform.families.window.activation import activation
from dmlconform.families.window.cases import (
    Geometry,
    geometry,
    integer_operands,
    operands,
    power,
    semantics_of,
    window,
)
from dmlconform.families.window.fold import FOLDS
from dmlconform.families.window.semantics import Window
from dmlconform.oracles.base import (
    Expectation,
    end_to_end,
    gamma,
    gamma_probable,
    reading_alternatives,
    spacing_above,
    unit_roundoff,
    within,
)
from dmlconform.plan import WINDOW_PATCHES
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["WindowBatch", "WindowOracle"]

_U64 = 2.0 ** -53


@dataclass(frozen=True, slots=True, eq=False)
class WindowOracle:
    """The oracle of one window operator (its reviewed semantics)."""

    spec: m.Spec
    semantics: Window
    #: The element-wise oracles of the fused activations this run met (`families.contraction.fused`).
    activations: fused.Activations = field(default_factory=fused.Activations)

    @classmethod
    def of(cls, spec: m.Spec) -> WindowOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> (WindowBatch | MaxBatch | unpool_oracle.UnpoolBatch
                                                     | fold_oracle.FoldBatch):
        """Each case's T, S, n and readings end to end.  ``flush_subnormals``
        changes nothing: a flushed subnormal is within one spacing of the output."""
        if self.semantics.operation == "max_pooling":
            return _max_batch(self.spec, self.semantics, cases)
        if self.semantics.operation == "max_unpooling":
            return unpool_oracle.bind(self.spec, self.semantics, cases)
        if self.semantics.operation in FOLDS:
            return fold_oracle.bind(self.spec, self.semantics, cases, float16_accumulation=float16_accumulation)
        parts = [_part(self.spec, self.semantics, c, float16_accumulation) for c in cases]
        alternatives = end_to_end([p.alternatives for p in parts], [p.expected.size for p in parts])
        expected = joined([p.expected for p in parts])
        expected.setflags(write=False)
        act = activation(self.semantics, cases[0])  # a batch shares its attributes
        return WindowBatch(expected, joined([p.strict for p in parts]), joined([p.relaxed for p in parts]),
                           alternatives, joined([p.magnitude for p in parts]), joined([p.n for p in parts]),
                           joined([p.strict if p.bias_scale is None else p.bias_scale for p in parts]),
                           None if act is None else (self.activations.get(act.operator), act))


@dataclass(frozen=True, slots=True, eq=False)
class _Part:
    """One case, flat in C order of the output."""

    expected: np.ndarray
    strict: np.ndarray
    relaxed: np.ndarray
    magnitude: np.ndarray
    n: np.ndarray
    alternatives: tuple[Alternative, ...]
    #: One honest error's size per element for the bias check (None: the
    #: strict bound); 0 leaves an element out of it: where every honest
    #: result leans one way (a rounded exponent 1/P), or where readings
    #: differ (a reading's values lean away from the primary's).
    bias_scale: np.ndarray | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Sums:
    """A convolution's sums per output element (N, M, O...): ``value`` T,
    ``magnitude`` S and ``n`` the term count (bias included), per output
    position (1, 1, O...): it broadcasts against them."""

    value: np.ndarray
    magnitude: np.ndarray
    n: np.ndarray


def convolve(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, geo: Geometry, out_spatial: tuple[int, ...],
             *, flip: tuple[bool, ...], magnitude_above: bool = False) -> Sums:
    """T, S and n of every output element through the window map, the
    filter reversed along the spatial dimensions ``flip`` says (the
    forward map: CONVOLUTION mode; the backward map, the adjoint's, with
    the same flip: the mode table's two "transposed" rows are the gather
    form of that adjoint).

    Worked a block of rows of the first spatial dimension at a time
    (`plan.WINDOW_PATCHES` patch elements), into float64 outputs made
    once: a large convolution's im2col matrix (and its magnitudes) exists
    one block at a time, not whole twice (issue #35, the ``--large`` case's
    memory).  Every element's T and S are the same sums as whole.

    ``magnitude_above``: S may be an upper bound of the sum instead of the
    sum itself (for a bound alone, not for an exactness test): where ``x``
    and ``w`` are FLOAT16 or FLOAT32 values, S is summed in float32 and
    inflated (`_above32`), a float32 GEMM in place of a float64 one (the
    ``--large`` case's time, docs/window.md)."""
    maps = tuple(windowmap.taps(x.shape[2 + j], out_spatial[j], w.shape[2 + j], stride=geo.strides[j],
                                dilation=geo.dilations[j], start=geo.start[j], transposed=geo.transposed)
                 for j in range(len(out_spatial)))
    w = w[(slice(None), slice(None), *(slice(None, None, -1) if f else slice(None) for f in flip))]
    filt = _grouped(w, geo.groups, transposed=geo.transposed)
    n_batch, c, g = x.shape[0], x.shape[1], geo.groups
    m_out, rest = g * filt.shape[1], int(np.prod(out_spatial[1:]))
    value = np.empty((n_batch, m_out, *out_spatial))
    magnitude = np.empty_like(value)
    # (N, G, M/G, positions) views the products of a block are written into
    value_at, magnitude_at = (a.reshape(n_batch, g, m_out // g, -1) for a in (value, magnitude))
    padded = windowmap.appended(np.moveaxis(x, 1, -1), len(out_spatial), channels_last=True)
    rows = max(1, WINDOW_PATCHES // max(1, n_batch * c * rest * int(np.prod(w.shape[2:]))))
    single = magnitude_above and all(a.dtype.kind == "f" and a.dtype.itemsize <= 4 for a in (x, w))
    filters = _Filters(filt, np.abs(filt).astype(np.float32) if single else None, bool(np.isfinite(filt).all()))
    every = filters.finite and bool(np.isfinite(x).all())  # then every block is: no check of each
    for lo in range(0, out_spatial[0], rows):
        hi = min(lo + rows, out_spatial[0])
        patches = _patches(padded, (maps[0].rows(lo, hi), *maps[1:]), g)
        finite = every or filters.finite and bool(np.isfinite(patches).all())
        _block(patches, filters, value_at[..., lo * rest:hi * rest], magnitude_at[..., lo * rest:hi * rest],
               finite=finite)
    n = windowmap.counts(maps) * (c // g)
    if bias is not None:
        b = bias.astype(np.float64).reshape((1, m_out) + (1,) * len(out_spatial))
        value += b
        magnitude += np.abs(b)
        n = n + 1
    return Sums(value, magnitude, n.reshape((1, 1) + n.shape))


@dataclass(frozen=True, slots=True, eq=False)
class _Filters:
    """The grouped filter (`_grouped`) as `_block` needs it: ``value`` in
    float64; ``single`` its magnitudes in float32 where S may be summed
    there (None: in float64); ``finite``: no inf or NaN in it."""

    value: np.ndarray
    single: np.ndarray | None
    finite: bool


def _block(patches: np.ndarray, filters: _Filters, value: np.ndarray, magnitude: np.ndarray, *,
           finite: bool) -> None:
    """One block's T and S written into ``value`` and ``magnitude`` (N, G,
    M/G, positions); ``patches`` (`_patches`, in the input's type) become
    their magnitudes, and go when this returns (before the next block's
    come).  S in float32 (`_above32`) where ``filters.single`` says so and
    every operand is ``finite``, else (and where float32 overflows) in float64."""
    wide = patches.astype(np.float64, copy=False)
    value[...] = _products(wide, filters.value, finite=finite)
    if filters.single is not None and finite:
        del wide  # float64 patches go before the float32 GEMM's come (the --large case's peak)
        np.abs(patches, out=patches)
        above = _above32(patches, filters.single)
        if above is not None:
            magnitude[...] = above
            return
        wide = patches.astype(np.float64)
    np.abs(wide, out=wide)
    magnitude[...] = _products(wide, np.abs(filters.value), finite=finite)


def _above32(patches: np.ndarray, single: np.ndarray) -> np.ndarray | None:
    """An upper bound of S = sum |x w| (N, G, M/G, positions) from the
    magnitudes ``patches`` (FLOAT16 or FLOAT32 values) and ``single`` (the
    filter's, float32), summed by a float32 GEMM; None where a sum
    overflowed float32 (float64 must do it: its S may be finite).

    Every term is >= 0, so whatever order and blocking the BLAS sums the n
    products in (with FMA or not), with at most n roundings of float32 on
    each, each product's underflow at most 2^-150 absolute (gradual
    underflow, numpy's default; a sum of subnormals is exact), the float32
    result S32 >= (1 - gamma_n(2^-24)) S - n 2^-150, hence
    S <= (S32 + n 2^-149) / (1 - gamma_{n+1}(2^-24)): one rounding more in
    the gamma covers this formula's own three float64 roundings.  Over S
    by at most about 2 n 2^-24 relative (7e-5 at n = 576), far below the
    bound's own slack (docs/window.md, "The --large convolution")."""
    with np.errstate(over="ignore"):
        total = np.matmul(single[None], np.swapaxes(patches.astype(np.float32, copy=False), -1, -2))
    if not np.isfinite(total).all():
        return None
    n = patches.shape[-1]
    tiny = float(finfo(np.float32).smallest_subnormal)
    inflation = 1.0 / (1.0 - float(gamma(np.array(n + 1.0), unit_roundoff(m.DataType.FLOAT32))))
    wide = total.astype(np.float64)
    wide += n * tiny
    wide *= inflation
    return wide


def _grouped(w: np.ndarray, g: int, *, transposed: bool) -> np.ndarray:
    """The filter as (G, M/G, K * C/G) float64, one row per output channel
    of each group, taps by channels (`_patches`' order)."""
    taps = int(np.prod(w.shape[2:]))
    if transposed:  # (C, M/G, K...) -> (G, M/G, K, C/G)
        grouped = w.reshape(g, w.shape[0] // g, w.shape[1], taps).transpose(0, 2, 3, 1)
    else:  # (M, C/G, K...) -> (G, M/G, K, C/G)
        grouped = w.reshape(g, w.shape[0] // g, w.shape[1], taps).transpose(0, 1, 3, 2)
    return grouped.reshape(g, grouped.shape[1], -1).astype(np.float64)


def _patches(padded: np.ndarray, maps: tuple[windowmap.Taps, ...], g: int) -> np.ndarray:
    """The im2col rows of the output positions ``maps`` covers, from the
    channels-last input with its appended zeros: (N, G, positions, K *
    C/G) in the input's type, each row the taps one output element reads."""
    gathered = windowmap.read(padded, maps, channels_last=True)  # (N, O..., K..., C)
    n_batch, c = padded.shape[0], padded.shape[-1]
    positions = int(np.prod([t.index.shape[0] for t in maps]))
    taps = int(np.prod([t.index.shape[1] for t in maps]))
    grouped = gathered.reshape(n_batch, positions, taps, g, c // g).transpose(0, 3, 1, 2, 4)
    return np.ascontiguousarray(grouped).reshape(n_batch, g, positions, taps * (c // g))


def _products(patches: np.ndarray, filt: np.ndarray, *, finite: bool) -> np.ndarray:
    """(N, G, P, KC) x (G, M, KC) -> (N, G, M, P) sums of products (the
    output's order: channels, then positions); where an operand is not
    ``finite``, as an explicit float64 sum (IEEE's inf and NaN rules whatever
    the BLAS)."""
    if finite:
        return np.matmul(filt[None], np.swapaxes(patches, -1, -2))
    return (filt[None, :, :, None, :] * patches[:, :, None, :, :]).sum(axis=-1)


def _part(spec: m.Spec, sem: Window, case: Case, float16_accumulation: bool) -> _Part:
    if sem.operation == "average_pooling":
        return _average_part(spec, sem, case, float16_accumulation)
    if sem.operation == "lp_pooling":
        return _lp_part(spec, sem, case, float16_accumulation)
    if sem.operation == "convolution_integer":
        return _integer_part(spec, sem, case)
    ops = operands(sem, case)
    geo = geometry(sem, case)
    out = case.outputs[0]
    spatial = len(out.sizes) - 2
    integral = _integral(ops)  # its exactness test needs S itself; elsewhere an upper bound of S serves
    sums = convolve(ops.x, ops.w, ops.bias, geo, out.sizes[2:], flip=(geo.flipped,) * spatial,
                    magnitude_above=not integral)
    nt = numpy_dtype(out.dtype)
    acc = _accumulator(sem, out.dtype, float16_accumulation)
    exact = ((sums.magnitude <= 2.0 ** min(_digits(acc), _digits(out.dtype))) if integral
             else np.zeros(sums.magnitude.shape, bool))  # no element of non-integer data is exact
    expected = sums.value.astype(nt)
    alternatives = _alternatives(spec, sem, case, geo, sums, exact.reshape(-1), expected.reshape(-1))
    magnitude, count = sums.magnitude, sums.n
    del sums  # T's float64 array goes before the bounds' temporaries come (a large case's peak)
    strict, relaxed = _bounds(expected, magnitude, count.astype(np.float64), unit_roundoff(acc), exact)
    return _Part(expected.reshape(-1), strict.reshape(-1), relaxed.reshape(-1), magnitude.reshape(-1),
                 _per_element(count, magnitude.shape), alternatives)


def _per_element(count: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The term count of every output element (``shape``) from each position's ``count``, flat, as int32
    (exact: a count is at most the filter's elements plus one; half the memory of float64).  Cast per
    position, then broadcast by an assignment: casting the broadcast view takes 50 times as long."""
    out = np.empty(shape, np.int32)
    out[...] = count.astype(np.int32)
    return out.reshape(-1)


def _accumulator(sem: Window, dtype: m.DataType, float16_accumulation: bool) -> m.DataType:
    """The type sums are bounded in: FLOAT16 where the backend declares it, else the reviewed reading."""
    return m.DataType.FLOAT16 if float16_accumulation and dtype is m.DataType.FLOAT16 else sem.accumulator(dtype)


def _bounds(expected: np.ndarray, magnitude: np.ndarray, n: np.ndarray, u: float,
            exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Strict and relaxed bounds of sums of ``n`` roundings over terms of
    magnitude ``magnitude`` (the module's docstring), 0 where ``exact`` or
    not finite; ``expected`` is made read-only.  ``n`` broadcasts against
    the others (a convolution's, one per output position: its gammas are
    worked out once per position, not per element)."""
    own = gamma(n, _U64) * magnitude
    with np.errstate(invalid="ignore", over="ignore"):
        relaxed = gamma(n, u) * magnitude
        relaxed += own
        strict = gamma_probable(n, u) * magnitude
        strict += own
        top = own  # its array reused for |expected| + relaxed: a large case's peak holds one float64 array fewer
        np.abs(expected, out=top)
        top += relaxed
        spacing = spacing_above(top, expected.dtype)
        relaxed += spacing
        strict += spacing
    zero = exact | ~np.isfinite(expected)
    if zero.any():  # most cases have none: two passes saved
        relaxed[zero] = 0.0
        strict[zero] = 0.0
    expected.setflags(write=False)
    return strict, relaxed


def _average_part(spec: m.Spec, sem: Window, case: Case, float16_accumulation: bool) -> _Part:
    """AVERAGE_POOLING: each window's sum through the map divided by the
    window's size (IncludePadding TRUE) or its taps inside the input
    (FALSE; 0/0 = NaN for a window wholly in padding, the primary reading
    of ``empty-window``).  The bound is the sum's, with one rounding more
    for the division (two: a reciprocal, then a product), over the divisor."""
    geo, kernel, out = geometry(sem, case), window(sem, case), case.outputs[0]
    x = case.input(sem.input).view()
    maps = _pool_maps(sem, case, x)
    patches = windowmap.gather(x.astype(np.float64), maps)
    axes = tuple(range(2 + len(kernel), 2 + 2 * len(kernel)))
    count = np.broadcast_to(windowmap.counts(maps), out.sizes).reshape(-1)
    divisor = np.full(count.shape, float(np.prod(kernel))) if geo.include_padding else count.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = patches.sum(axis=axes).reshape(-1) / divisor
        magnitude = np.abs(patches).sum(axis=axes).reshape(-1) / divisor
    expected = value.astype(numpy_dtype(out.dtype))
    n = count.astype(np.float64) + 2
    strict, relaxed = _bounds(expected, np.nan_to_num(magnitude), n,
                              unit_roundoff(_accumulator(sem, out.dtype, float16_accumulation)),
                              np.zeros(expected.shape, bool))
    readings = {"empty-window:zero": np.where(count == 0, 0.0, np.nan)} if not geo.include_padding else {}
    return _Part(expected, strict, relaxed, np.nan_to_num(magnitude), n, _offered(spec, readings, expected))


def _integer_part(spec: m.Spec, sem: Window, case: Case) -> _Part:
    """CONVOLUTION_INTEGER: the forward cross-correlation of ``x - x_zero``
    by ``w - w_zero[m]`` through the map, in float64 (every product and sum
    of 8-bit differences is an integer far below 2^53: exact), 0 ULP.
    Readings, exact too: ``padding-value:zero`` (a padded tap holds 0, not
    the zero point: the input explicitly padded with ``-x_zero`` after the
    subtraction) and ``filter-orientation:convolution`` (the filter reversed)."""
    ops, geo, out = integer_operands(sem, case), geometry(sem, case), case.outputs[0]
    spatial = ops.x.ndim - 2
    x_zero = 0.0 if ops.x_zero is None else float(ops.x_zero[0])
    x = ops.x.astype(np.float64) - x_zero
    w = ops.w.astype(np.float64)
    if ops.w_zero is not None:
        w = w - ops.w_zero.astype(np.float64).reshape((-1,) + (1,) * (w.ndim - 1))
    sums = convolve(x, w, None, geo, out.sizes[2:], flip=(False,) * spatial)
    expected = sums.value.reshape(-1).astype(numpy_dtype(out.dtype))
    readings = {"filter-orientation:convolution": convolve(x, w, None, geo, out.sizes[2:],
                                                           flip=(True,) * spatial).value.reshape(-1)}
    if x_zero and any(geo.start + geo.end):
        padded = np.pad(x, [(0, 0), (0, 0), *zip(geo.start, geo.end)], constant_values=-x_zero)
        bare = replace(geo, start=(0,) * spatial, end=(0,) * spatial)
        readings["padding-value:zero"] = convolve(padded, w, None, bare, out.sizes[2:],
                                                  flip=(False,) * spatial).value.reshape(-1)
    zero = np.zeros(expected.shape)
    expected.setflags(write=False)
    return _Part(expected, zero, zero, sums.magnitude.reshape(-1), _per_element(sums.n, sums.value.shape),
                 _offered(spec, readings, expected), zero)


def _pool_maps(sem: Window, case: Case, x: np.ndarray) -> tuple[windowmap.Taps, ...]:
    """A pooling's window map over the input ``x``: the window's taps per spatial dimension (forward)."""
    geo, kernel, out = geometry(sem, case), window(sem, case), case.outputs[0]
    return tuple(windowmap.taps(x.shape[2 + j], out.sizes[2 + j], kernel[j], stride=geo.strides[j],
                                dilation=geo.dilations[j], start=geo.start[j], transposed=False)
                 for j in range(len(kernel)))


def _lp_part(spec: m.Spec, sem: Window, case: Case, float16_accumulation: bool) -> _Part:
    """LP_POOLING: per window, the sum of the P-th powers through the map
    and its P-th root (the taps outside the input add nothing), the
    ``absolute`` reading |X|^P primary; where P is odd and a window holds a
    negative value, the ``signed-root`` and ``signed-nan`` readings (X^P as
    printed) as alternatives with bounds of their own (`_lp_bound`)."""
    x = case.input(sem.input).view()
    maps, p, out = _pool_maps(sem, case, x), power(sem, case), case.outputs[0]
    patches = windowmap.gather(x.astype(np.float64), maps)
    axes = tuple(range(patches.ndim - len(maps), patches.ndim))
    magnitude = (np.abs(patches) ** p).sum(axis=axes).reshape(-1)  # A = sum |x|^P, the absolute reading's sum
    signed = (patches ** p).sum(axis=axes).reshape(-1)  # s = sum x^P, the printed one's
    n = np.broadcast_to(windowmap.counts(maps), out.sizes).reshape(-1).astype(np.float64)
    acc = _accumulator(sem, out.dtype, float16_accumulation)
    exact_sum = bool(np.all(np.mod(x, 1) == 0)) & (magnitude <= 2.0 ** _digits(acc))
    exact = exact_sum & (magnitude <= 2.0 ** _digits(out.dtype)) & (p == 1)
    tiny = float(finfo(numpy_dtype(acc)).smallest_subnormal)
    model = _LpModel(p, unit_roundoff(acc), tiny, n, magnitude, exact_sum, exact)
    expected = _root(magnitude, p).astype(numpy_dtype(out.dtype))
    strict, _ = model.bound(magnitude, expected, probable=True)
    relaxed, _ = model.bound(magnitude, expected, probable=False)
    readings: dict[str, np.ndarray] = {}
    bounds: dict[str, np.ndarray] = {}
    if p % 2 and np.any(signed != magnitude):
        literal = _root(signed, p)
        bounds["lp-sign:signed-root"], error = model.bound(signed, literal.astype(expected.dtype), probable=False)
        readings["lp-sign:signed-root"] = literal
        if p > 1:  # pow(s, 1/P) of a sum that may be computed negative (within E of s); P = 1 needs no pow
            readings["lp-sign:signed-nan"] = np.where(signed - error < 0, np.nan, literal)
            bounds["lp-sign:signed-nan"] = bounds["lp-sign:signed-root"]  # NaN matches NaN whatever the bound
    alternatives = reading_alternatives(spec, readings, expected, bounds=bounds)
    # pow(t, fl(1/P)) leans one way for every t above 1 and the other below: no bias check where 1/P rounds
    scale = np.where(signed != magnitude, 0.0, strict) if p & (p - 1) == 0 else np.zeros_like(strict)
    return _Part(expected, strict, relaxed, magnitude, n, alternatives, scale)


def _root(s: np.ndarray, p: int) -> np.ndarray:
    """The real P-th root, sign kept (the identity at P = 1)."""
    with np.errstate(invalid="ignore"):
        return s if p == 1 else np.sign(s) * np.abs(s) ** (1.0 / p)


@dataclass(frozen=True, slots=True, eq=False)
class _LpModel:
    """The error of ``root_P(sum of P-th powers)`` in an accumulator of unit
    roundoff ``u``, derived for docs/window.md "Lp pooling":

    * each term |x|^P or x^P: exact at P = 1, else relative error
      ``t = max(gamma_{P-1}(u), 4u)`` (P - 1 products, or a pow of 2 ULP),
      plus where it underflows ``(P - 1) tiny / 2`` absolute (each product
      rounded into the subnormals; ``tiny`` the accumulator's smallest
      subnormal: a FLOAT16 x^2 below 2^-14 loses most of its digits);
    * their sum over ``n`` terms, in any order: absolute error at most
      ``E = ((1 + t)(1 + gamma_n(u)) - 1) A + gamma_{n+P}(2^-53) A`` (the
      oracle's own float64 powers and sum) plus ``n`` terms' underflow,
      A the sum of |x|^P (the terms' magnitudes, whatever the reading's
      signs; a sum's own roundings are relative even among subnormals); 0 where ``exact_sum``
      (integer data whose every partial sum fits the accumulator);
    * the root, increasing: from a sum within E of ``c``, at most
      ``spread = max(r(c + E) - r(c), r(c) - r(c - E))`` from ``r(c)``
      (Hoelder-sized, not relative, where E reaches c: cancellation of a
      signed sum), then its own rounding, ``4u`` relative (a pow of 2 ULP)
      plus ``expm1(u |ln c| / P)`` where 1/P is not a power of two (the
      rounded exponent);
    * one spacing of the output type.  0 where ``exact`` (P = 1, integer
      data within both significands)."""

    p: int
    u: float
    tiny: float
    n: np.ndarray
    magnitude: np.ndarray
    exact_sum: np.ndarray
    exact: np.ndarray

    def bound(self, centre: np.ndarray, expected: np.ndarray, *, probable: bool) -> tuple[np.ndarray, np.ndarray]:
        """The bound at the root of the sum ``centre`` (rounded: ``expected``), and the sum's spread E."""
        p, u = self.p, self.u
        term = 0.0 if p == 1 else max(float(gamma(np.array(p - 1.0), u)), 4 * u)
        summed = gamma_probable(self.n, u) if probable else gamma(self.n, u)
        error = (((1 + term) * (1 + summed) - 1) + gamma(self.n + p, _U64)) * self.magnitude
        error = error + self.n * (p - 1) * self.tiny / 2  # the terms' underflow (none at P = 1)
        error = np.where(self.exact_sum, 0.0, error)
        y = _root(centre, p)
        spread = np.maximum(_root(centre + error, p) - y, y - _root(centre - error, p))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            total = spread + (0.0 if p == 1 else 4 * u) * (np.abs(y) + spread)
            if p & (p - 1):
                total += _exponent_error(np.abs(centre) + error, np.abs(centre) - error, p, u)
            total += spacing_above(np.abs(y) + total, expected.dtype)
        zero = self.exact | ~np.isfinite(expected)
        total[zero] = 0.0
        expected.setflags(write=False)
        return total, error


def _exponent_error(high: np.ndarray, low: np.ndarray, p: int, u: float) -> np.ndarray:
    """At most ``|t^(1/P) - t^(fl(1/P))|`` over the sums t in [low, high]
    (magnitudes), fl(1/P) within a relative u of 1/P: ``t^(1/P) expm1(u
    ln(t) / P)``, increasing in t >= 1 (taken at ``high``); below 1 it is
    ``t^((1-u)/P) - t^(1/P)``, at most ``u / (1 - u)`` and ``high^((1-u)/P)``."""
    above = _root(high, p) * np.expm1(u * np.log(np.maximum(high, 1.0)) / p)
    below = np.minimum(u / (1 - u), np.maximum(high, 0.0) ** ((1 - u) / p))
    return np.where(low >= 1, above, np.maximum(above, below))


def _offered(spec: m.Spec, readings: dict[str, np.ndarray], expected: np.ndarray) -> tuple[Alternative, ...]:
    """``readings`` (NaN: no reading at that element) as alternatives."""
    if not readings:
        return ()
    primary = expected.astype(np.float64)
    return reading_alternatives(spec, {k: np.where(np.isnan(v), primary, v) for k, v in readings.items()}, expected)


def _integral(ops: object) -> bool:
    """Whether every operand value is an integer (NaN and inf are not)."""
    arrays = [getattr(ops, name) for name in ("x", "w", "bias")]
    return all(a is None or bool(np.isfinite(a).all()) and np.array_equal(np.trunc(a), a) for a in arrays)


def _digits(dtype: m.DataType) -> int:
    return int(finfo(numpy_dtype(dtype)).nmant) + 1


def _alternatives(spec: m.Spec, sem: Window, case: Case, geo: Geometry, sums: Sums, exact: np.ndarray,
                  expected: np.ndarray) -> tuple[Alternative, ...]:
    """Each reading's values where they differ from the expected ones: the
    flip of the last two spatial dimensions only (where the case is exact:
    a reading's sum has no bound of its own) and the zero OutputPadding."""
    readings: dict[str, np.ndarray] = {}
    ops = operands(sem, case)
    spatial = ops.x.ndim - 2
    if geo.flipped and spatial > 2:
        other = convolve(ops.x, ops.w, ops.bias, geo, case.outputs[0].sizes[2:],
                         flip=(False,) * (spatial - 2) + (True, True))
        readings["flip-axes:height-width"] = np.where(exact, other.value.reshape(-1), np.nan)
    if geo.transposed and any(geo.output_padding):
        readings["output-padding:zero"] = _zero_padded(sums, geo, ops.bias).reshape(-1)
        if ops.bias is not None:  # the padding applied after the bias: zeros alone
            readings["output-padding:zero-after-bias"] = _zero_padded(sums, geo, None).reshape(-1)
    return _offered(spec, readings, expected)


def _zero_padded(sums: Sums, geo: Geometry, bias: np.ndarray | None) -> np.ndarray:
    """The output with its OutputPadding elements (the last ``p`` along each
    spatial dimension) holding the bias alone (zeros with no ``bias``), NaN
    elsewhere (no reading there)."""
    shape = sums.value.shape
    padding = np.zeros(shape[2:], bool)
    for j, p in enumerate(geo.output_padding):
        if p:
            index = [slice(None)] * len(shape[2:])
            index[j] = slice(shape[2 + j] - p, None)
            padding[tuple(index)] = True
    b = np.zeros(shape[1]) if bias is None else bias.astype(np.float64)
    return np.where(padding, np.broadcast_to(b.reshape((1, -1) + (1,) * (len(shape) - 2)), shape), np.nan)


@dataclass(frozen=True, slots=True, eq=False)
class WindowBatch:
    """`WindowOracle` bound to a batch: everything end to end."""

    expected: np.ndarray
    strict: np.ndarray
    relaxed: np.ndarray
    alternatives: tuple[Alternative, ...]
    magnitude: np.ndarray
    n: np.ndarray
    bias_scale: np.ndarray
    #: CONVOLUTION's FusedActivation: its element-wise oracle and settings (None: none), composed on the sums.
    activation: tuple[FormulaOracle, Activation] | None = None

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        """The sums' expectation over [lo, hi), through the fused activation where there is one
        (`families.contraction.fused.compose`, each reading's values through it too)."""
        strict = self.strict[lo:hi]
        plain = Expectation(self.expected[lo:hi], strict, self.relaxed[lo:hi], within(self.alternatives, lo, hi), 0,
                            RELAXED_FACTOR, False, bias_scale=self.bias_scale[lo:hi])
        if self.activation is None:
            return (plain,)
        return (fused.compose(*self.activation, plain),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """What decides an element's bound: its term count n and the terms' magnitude S."""
        return (("n", [float(x) for x in self.n[flat].tolist()]),
                ("S", [float(x) for x in self.magnitude[flat].tolist()]))


# -- max pooling: exact values and indices ----------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class MaxBatch:
    """Max pooling bound to a batch: values and (where the cases have them)
    indices end to end, both exact, with the NaN reading's alternatives."""

    outputs: tuple[np.ndarray, ...]
    alternatives: tuple[tuple[Alternative, ...], ...]

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        return tuple(Expectation(values[lo:hi], None, None, within(alts, lo, hi), 0, RELAXED_FACTOR, False)
                     for values, alts in zip(self.outputs, self.alternatives))

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        return ()


def _max_batch(spec: m.Spec, sem: Window, cases: Sequence[Case]) -> MaxBatch:
    """Each case's maximum and its first index, joined end to end per output."""
    parts = [_max_part(spec, sem, c) for c in cases]
    outputs, alternatives = [], []
    for j in range(len(parts[0][0])):
        joined = np.concatenate([p[0][j] for p in parts])
        joined.setflags(write=False)
        outputs.append(joined)
        alternatives.append(end_to_end([p[1][j] for p in parts], [p[0][0].size for p in parts]))
    return MaxBatch(tuple(outputs), tuple(alternatives))


def _max_part(spec: m.Spec, sem: Window, case: Case) -> tuple[tuple[np.ndarray, ...], tuple[tuple[Alternative, ...], ...]]:
    """The maximum of each window and the flat logical index of its first
    occurrence, through the map: every element ranked (equal values one
    rank, NaN above all: the ``propagate`` reading of ``nan``), the taps
    outside the input ranked below all, the first largest rank taken.  The
    ``ignore`` reading ranks NaN below every number instead."""
    kernel, out = window(sem, case), case.outputs[0]
    x = case.input(sem.input).view()
    maps = _pool_maps(sem, case, x)
    valid = np.ones((), bool)
    for t in maps:  # (O..., K...) as the map's outer product
        valid = np.multiply.outer(valid, t.valid)
    d = len(kernel)
    valid = valid.transpose([2 * j for j in range(d)] + [2 * j + 1 for j in range(d)])
    _, rank = np.unique(x.reshape(-1), return_inverse=True)
    rank = rank.reshape(x.shape).astype(np.int64)
    flat = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    values, where = windowmap.gather(x, maps), windowmap.gather(flat, maps)
    lead, taps = x.shape[:2] + out.sizes[2:], int(np.prod(kernel))

    def pick(ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = np.where(valid, windowmap.gather(ranks, maps), -2).reshape(*lead, taps)
        first = np.argmax(r, axis=-1)[..., None]
        return (np.take_along_axis(values.reshape(*lead, taps), first, -1).reshape(-1),
                np.take_along_axis(where.reshape(*lead, taps), first, -1).reshape(-1))

    value, index = pick(rank)
    found: list[tuple[np.ndarray, ...]] = [(value,), (index,)]
    if x.dtype.kind == "f" and np.isnan(x).any():
        found = [(value, pick(np.where(np.isnan(x), -1, rank))[k]) for k, value in ((0, value), (1, index))]
    results, alternatives = [], []
    for o, options in zip(case.outputs, found):
        expected = options[0].astype(numpy_dtype(o.dtype))
        readings = {"nan:ignore": options[1]} if len(options) > 1 else {}
        results.append(expected)
        alternatives.append(_max_readings(spec, readings, expected))
    return tuple(results), tuple(alternatives)


def _max_readings(spec: m.Spec, readings: dict[str, np.ndarray], expected: np.ndarray) -> tuple[Alternative, ...]:
    """The ``nan`` readings of one output, in its type (indices exact as integers)."""
    if not readings:
        return ()
    return reading_alternatives(spec, {k: v.astype(expected.dtype) for k, v in readings.items()}, expected)
