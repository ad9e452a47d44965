"""The normalization family's oracle (MEAN_VARIANCE_NORMALIZATION1):
expected values in float64 and a bound that carries the statistics' error
through the subtraction, the square root and the division, per element.

Issue #36 items 1 and 2; docs/normalization.md derives every line and
works one real case through it.  Per group (the N input elements over
``Axes`` one mean and variance are taken over), in float64: the mean
``mu``, the population variance ``v`` (two passes), ``d_i = x_i - mu``,
``s = sqrt(v + eps)`` and ``y_i = d_i / s``, then ``a_i y_i + b_i``.  With
``u`` the accumulator's unit roundoff (float32's for FLOAT16 tensors unless
the backend declares FLOAT16 accumulation) and ``g`` = gamma (worst case:
FAIL beyond) or Higham and Mary's probabilistic gamma~ (QUALITY_WARNING
beyond):

* the mean: the reduction family's AVERAGE bound ``e_mu``
  (`families.reduction.oracle.reduced`); ``d_i`` within
  ``e_i = e_mu + u (|d_i| + e_mu)``;
* the variance, within the larger of two honest kernels' bounds: two-pass
  (``mean((x - mu~)^2)``: ``2 mean(|d| e) + mean(e^2)`` plus the AVERAGE
  bound of the squares) and one-pass (``E[x^2] - E[x]^2``: the AVERAGE
  bound of the squares, ``2 |mu| e_mu + e_mu^2``, the rounding of ``mu~^2``
  and of the subtraction); the one-pass term grows with ``mu^2 / v``, the
  variance's condition number;
* ``v + eps`` rounded once; its relative error ``r`` gives ``1/s`` within
  ``1/sqrt(1 - r) - 1``, and the root and the division (or a reciprocal
  root within 2 ULP and a product) ``ROOT_ULPS`` more;
* ``y_i`` within ``|d_i| / s r' + e_i / s (1 + r')``; the scale's product
  and the bias's sum one rounding each; the oracle's own float64 error and
  one spacing of the output type.

The statistics are taken per group when a batch is bound, block by block
of groups (`statistics`); each element's value, bounds and readings only
when the judge asks for a range of them (`_Rows.block`) where the groups
are the last dimensions (then group order is the output's C order), at
once otherwise: no float64 temporary holds a large case's whole tensor.

NormalizeVariance FALSE leaves out the variance and the division.  A NaN
in a group makes its outputs NaN (bound 0: any NaN matches).  The sample
variance (``variance:sample``) is offered as a STRICT alternative with its
own worst-case bound where N > 1 (for N = 1 it is 0/0, a loss of range
where the primary reading gives the bias).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from dmlconform.cases.model import Case, joined
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier
from dmlconform.families.contraction import fused
from dmlconform.families.contraction.cases import Activation
from dmlconform.families.elementwise.oracle import FormulaOracle
from dmlconform.families.normalization.cases import (
    activation_of,
    axes_of,
    centres,
    divides,
    epsilon_of,
    lrn_of,
    operands,
    order_of,
    semantics_of,
    window_offsets,
)
from dmlconform.families.normalization.semantics import Normalization
from dmlconform.families.reduction.oracle import groups, reduced, reduced_each
from dmlconform.oracles.base import (
    Expectation,
    gamma,
    gamma_probable,
    kept,
    marker_at,
    spacing_above,
    unit_roundoff,
    within,
)
from dmlconform.plan import CACHED_COMPARE_ELEMENTS, ORACLE_BLOCK
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["ROOT_ULPS", "NormalizationBatch", "NormalizationOracle", "RowStatistics", "mean_variance_rows",
           "statistics"]

#: The root and the division after it, in u: a correctly rounded sqrt and division (2u), or a reciprocal square
#: root within 2 ULP (CUDA's rsqrtf, D3D's rsq; 4u) and a product (u).
ROOT_ULPS = 5.0
_U64 = 2.0 ** -53


@dataclass(frozen=True, slots=True, eq=False)
class NormalizationOracle:
    """The oracle of one normalization operator (its reviewed semantics)."""

    spec: m.Spec
    semantics: Normalization
    #: The element-wise oracles of the fused activations this run met (the run owns it, as it owns this oracle).
    activations: fused.Activations = field(default_factory=fused.Activations)

    @classmethod
    def of(cls, spec: m.Spec) -> NormalizationOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> NormalizationBatch:
        """Each case's outputs (BATCH_NORMALIZATION_TRAINING's mean and
        variance after the output), end to end per output when asked
        (`_Output.expect`).  ``flush_subnormals`` changes nothing: a flushed
        subnormal is within one spacing of the output.  A batch shares its
        attributes, so its fused activation is the first case's."""
        parts = [_sources(self.spec, self.semantics, c, float16_accumulation) for c in cases]
        outputs = tuple(_Output(tuple(p[j] for p in parts)) for j in range(len(parts[0])))
        found = activation_of(self.semantics, cases[0]) if cases else None
        activation = None if found is None else (self.activations.get(found.operator), found)
        return NormalizationBatch(outputs, activation)


@dataclass(frozen=True, slots=True, eq=False)
class _Block:
    """Elements [lo, hi) of one case's output: the expected values in the
    output's type, the strict and relaxed bounds, the alternatives (indices
    counted from lo)."""

    expected: np.ndarray
    strict: np.ndarray
    relaxed: np.ndarray
    alternatives: tuple[Alternative, ...]


@dataclass(frozen=True, slots=True, eq=False)
class _Stored:
    """One case's output computed whole, in its C order (`_finish`); ``n``: its group size N."""

    whole: _Block
    n: int

    @property
    def size(self) -> int:
        return int(self.whole.expected.size)

    @property
    def dtype(self) -> np.dtype:
        return self.whole.expected.dtype

    def block(self, lo: int, hi: int) -> _Block:
        w = self.whole
        return _Block(w.expected[lo:hi], w.strict[lo:hi], w.relaxed[lo:hi], within(w.alternatives, lo, hi))


@dataclass(frozen=True, slots=True, eq=False)
class _Output:
    """One output of a batch: its cases' outputs end to end, each a
    `_Stored` or a `_Rows` (computed block by block as the judge asks)."""

    sources: tuple[_Stored | _Rows, ...]

    def offsets(self) -> np.ndarray:
        """Where each case's elements start end to end, and the total last."""
        return np.concatenate(([0], np.cumsum([s.size for s in self.sources], dtype=np.int64)))

    def expect(self, lo: int, hi: int) -> Expectation:
        blocks: list[_Block] = []
        alternatives: list[Alternative] = []
        for source, start in zip(self.sources, self.offsets().tolist()):
            a, b = max(lo, start), min(hi, start + source.size)
            if a < b:
                blocks.append(source.block(a - start, b - start))
                alternatives += [alt.part(slice(None), a - lo) for alt in blocks[-1].alternatives]
        if not blocks:  # past this output's end (the statistics outputs are shorter than the first)
            none = np.zeros(0)
            blocks.append(_Block(none.astype(self.sources[-1].dtype), none, none, ()))
        expected = joined([b.expected for b in blocks])
        expected.setflags(write=False)
        return Expectation(expected, joined([b.strict for b in blocks]), joined([b.relaxed for b in blocks]),
                           tuple(alternatives), 0, RELAXED_FACTOR, False)

    def n_at(self, flat: np.ndarray) -> np.ndarray:
        """Each element's group size N."""
        owner = np.searchsorted(self.offsets(), flat, side="right") - 1
        return np.array([float(s.n) for s in self.sources])[owner]


@dataclass(frozen=True, slots=True, eq=False)
class NormalizationBatch:
    """`NormalizationOracle` bound to a batch: each output end to end, and
    the fused activation's element-wise oracle and settings (None: none),
    composed on the first output (`fused.compose`, docs/normalization.md)."""

    outputs: tuple[_Output, ...]
    activation: tuple[FormulaOracle, Activation] | None = None
    #: Elements the judge asks for at a time (`oracles.base.compare_elements`): each block's some forty
    #: float64 passes over arrays the caches hold.
    compare_elements: ClassVar[int] = CACHED_COMPARE_ELEMENTS

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        first, *rest = (out.expect(lo, hi) for out in self.outputs)
        if self.activation is not None:
            first = fused.compose(*self.activation, first)
        return (first, *rest)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """What decides an element's bound: its group's size N."""
        return (("N", self.outputs[output].n_at(flat).tolist()),)


@dataclass(frozen=True, slots=True, eq=False)
class RowStatistics:
    """Per group (a row of `groups`), for one ``g``: the mean and its bound
    (0 where the mean is not taken), the population variance and its bound,
    and the mean of the magnitudes (the oracle's own error, `_form`)."""

    mean: np.ndarray
    mean_error: np.ndarray
    variance: np.ndarray
    variance_error: np.ndarray
    magnitude: np.ndarray

    def rows(self, lo: int, hi: int) -> RowStatistics:
        """Rows [lo, hi)."""
        return RowStatistics(*(z[lo:hi] for z in (self.mean, self.mean_error, self.variance, self.variance_error,
                                                  self.magnitude)))

    @staticmethod
    def joined(parts: Sequence[RowStatistics]) -> RowStatistics:
        """Blocks of rows, in order, as one."""
        return RowStatistics(*(joined(z) for z in zip(*((p.mean, p.mean_error, p.variance, p.variance_error,
                                                          p.magnitude) for p in parts))))


#: The probable and the worst-case gamma: the strict (QUALITY_WARNING) and the relaxed (FAIL) bound's.
_GAMMAS = (gamma_probable, gamma)


def statistics(rows: np.ndarray, u: float, *, centred: bool = True) -> tuple[RowStatistics, RowStatistics]:
    """The mean and population variance of each row of ``rows`` (its terms,
    of any type: each block of rows is taken to float64) and their bounds in
    an accumulator of unit roundoff ``u``, per gamma of `_GAMMAS`; two-pass or
    one-pass, whichever bound is larger (the module docstring).  Not
    ``centred`` (UseMean FALSE): no mean, the variance the mean of the
    squares (AVERAGE's bound).  Block by block of rows (`plan.ORACLE_BLOCK`
    terms): every float64 temporary a block's, not a large case's tensor."""
    step = max(1, ORACLE_BLOCK // max(rows.shape[1], 1))
    blocks = [_statistics(rows[lo:lo + step].astype(np.float64), u, centred)
              for lo in range(0, max(rows.shape[0], 1), step)]
    return RowStatistics.joined([b[0] for b in blocks]), RowStatistics.joined([b[1] for b in blocks])


def _statistics(rows: np.ndarray, u: float, centred: bool) -> tuple[RowStatistics, RowStatistics]:
    """`statistics` of one block of float64 rows."""
    n = rows.shape[1]
    own = (n + 8) * _U64
    found: list[RowStatistics] = []
    with np.errstate(all="ignore"):
        # the squares are their own magnitudes, and the terms' magnitudes give the mean's bound and the oracle's
        # own error alike: each summed once (a large case's 2^24 terms)
        squares = rows * rows
        total = squares.sum(axis=1)
        m2, e_m2s = reduced_each(squares, "AVERAGE", u, _GAMMAS, sums=(total, total))
        absolute = np.abs(rows).sum(axis=1)
        magnitude = absolute / n
        if not centred:
            zero = np.zeros(rows.shape[0])
            return RowStatistics(zero, zero, *_own_added((m2, e_m2s[0]), own), magnitude), \
                RowStatistics(zero, zero, *_own_added((m2, e_m2s[1]), own), magnitude)
        mu, e_mus = reduced_each(rows, "AVERAGE", u, _GAMMAS, sums=(rows.sum(axis=1), absolute))
        d = rows - mu[:, None]
        v = (d * d).mean(axis=1)
        size = np.abs(d, out=d).mean(axis=1)  # mean |d|
        for g, e_mu, e_m2 in zip(_GAMMAS, e_mus, e_m2s):
            # e = e_mu + u (|d| + e_mu) = big + u |d|: its means over a row from mean |d| and mean d^2 = v
            big = e_mu * (1 + u)
            gn, g2 = (float(g(np.array([float(k)]), u)[0]) for k in (n, 2))
            q = (1 + u) ** 2 * v + 2 * (1 + u) * big * size + big * big  # mean((|d| + e)^2)
            two_pass = 2 * (big * size + u * v) + (big * big + 2 * u * big * size + u * u * v) + \
                (gn * (1 + g2) + g2) * q
            one_pass = e_m2 + 2 * np.abs(mu) * e_mu + e_mu ** 2 + u * (np.abs(mu) + e_mu) ** 2 + u * (m2 + e_m2)
            found.append(RowStatistics(mu, e_mu, v, np.maximum(two_pass, one_pass) + own * m2, magnitude))
    return found[0], found[1]


def _own_added(mean_square: tuple[np.ndarray, np.ndarray], own: float) -> tuple[np.ndarray, np.ndarray]:
    """A mean of squares as the variance about 0, its bound with the oracle's own ``own`` of it."""
    m2, e_m2 = mean_square
    return m2, e_m2 + own * m2


def _inverse_root(variance: np.ndarray, variance_error: np.ndarray, eps: float,
                  u: float) -> tuple[np.ndarray, np.ndarray]:
    """Per group: ``1 / sqrt(variance + eps)``'s relative bound (``t = v +
    eps`` rounded once, its relative error ``r``: ``1/sqrt(1 - r) - 1``,
    infinite where ``r >= 1``, and `ROOT_ULPS` more) and the root ``s``."""
    with np.errstate(all="ignore"):
        t = variance + eps
        r = (variance_error + u * (t + variance_error)) / t
        inverse = np.where(r < 1, 1 / np.sqrt(np.maximum(1 - r, 0)) - 1, np.inf)
        return (1 + inverse) * (1 + ROOT_ULPS * u) - 1, np.sqrt(t)


@dataclass(frozen=True, slots=True, eq=False)
class _Form:
    """A bound of `_Rows` as a linear form in each element's magnitudes:
    ``|a| (dev |d| + size |x| + const) + bias |b| + shifted |a y + b| +
    added |add|`` (``|a|`` 1 without a scale), ``dev``, ``size`` and
    ``const`` per group, the rest numbers.  Every step of the derivation
    (the module docstring) adds magnitudes times per-group factors, so its
    terms collect into these few: two or three passes over a block instead
    of the twenty of each step taken in turn (issue #36's large case)."""

    dev: np.ndarray
    size: np.ndarray
    const: np.ndarray
    bias: float
    shifted: float
    added: float

    def at(self, ad: np.ndarray, shared: np.ndarray | None, scale: np.ndarray | None,
           extra: np.ndarray | None) -> np.ndarray:
        """The bound over rows of elements: ``ad`` = |d|, ``shared`` = ``size |x|``
        (`shares`), ``scale`` = |a|, ``extra`` the terms outside the scale (`outside`)."""
        with np.errstate(all="ignore"):
            out = ad * self.dev[:, None]
            if shared is not None:
                out += shared
            out += self.const[:, None]
            if scale is not None:
                out *= scale
            if extra is not None:
                out += extra
            return out

    def shares(self, ax: np.ndarray) -> np.ndarray | None:
        """``size |x|`` (None where the form has no such term): the same for both gammas."""
        if not np.any(self.size):
            return None
        with np.errstate(all="ignore"):
            return ax * self.size[:, None]

    def outside(self, b: np.ndarray | None, shifted: np.ndarray | None, add: np.ndarray | None) -> np.ndarray | None:
        """``bias |b| + shifted |a y + b| + added |add|`` (given the magnitudes), None where nothing."""
        terms = [c * t for c, t in ((self.bias, b), (self.shifted, shifted), (self.added, add))
                 if c and t is not None]
        return sum(terms[1:], terms[0]) if terms else None


def _form(u: float, mean_error: np.ndarray, inverse: np.ndarray, s: np.ndarray, given: tuple[bool, bool, bool],
          centre: bool, divide: bool, own: tuple[float, np.ndarray] | None) -> _Form:
    """The bound of the module docstring as a `_Form`, per group: the mean
    within ``mean_error`` (centred), ``1/s`` within ``inverse`` relatively
    (``divide``), the scale, bias and addend where ``given``; ``own``: the
    oracle's own error ``(k, the mean of |x|)`` (None: left out, a
    reading's).  In u's and the groups' terms:

    * ``e = mean_error (1 + u) + u |d|`` (0 uncentred); ``|y| = |d| / s``;
    * ``e_y = |y| inverse + e / s (1 + inverse)`` (``e`` undivided);
    * the scale: ``|a| ((1 + u) e_y + u |y|)``; each sum after it (bias,
      addend): ``(1 + u) e + u |what it adds to| + u |term|``;
    * ``own``: ``k (|a| ((|x| + mean |x|) / s + |y|) + |b| + |add|)``
      (undivided: ``k (|a| (|x| + mean |x|) + |b| + |add|)``)."""
    a, b, add = given
    one = 1 / s if divide else np.ones_like(mean_error)
    e_d, e_c = (u, mean_error * (1 + u)) if centre else (0.0, np.zeros_like(mean_error))
    dev, const = (inverse * one + e_d * (1 + inverse) * one, e_c * (1 + inverse) * one) if divide else \
        (np.full_like(mean_error, e_d), e_c)
    bias = shifted = added = 0.0
    if a:
        dev, const = (1 + u) * dev + u * one, (1 + u) * const
    if b:
        dev, const, bias = (1 + u) * dev + u * one, (1 + u) * const, u
    if add:
        if b:
            dev, const, bias, shifted = (1 + u) * dev, (1 + u) * const, (1 + u) * bias, u
        else:
            dev, const = (1 + u) * dev + u * one, (1 + u) * const
        added = u
    size = np.zeros_like(mean_error)
    if own is not None:
        k, magnitude = own
        size = k * one
        const = const + k * magnitude * one
        dev = dev + k * one if divide else dev
        bias, added = bias + k if b else bias, added + k if add else added
    return _Form(dev, size, const, bias, shifted, added)


#: A group's scale, bias and FusedAdd addend (None: not given), as its terms are.
_Affine = tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]


@dataclass(frozen=True, slots=True, eq=False)
class _Rows:
    """A mean-variance normalization of one case in group order (row r holds
    group r's N terms, `groups`): each row's statistics (`statistics`, per
    gamma) taken when it is bound, each element's value, bounds and readings
    when a range of them is asked (`block`), so that every float64
    temporary is a block's, never a large case's whole tensor (a layer
    normalization of 2^12 x 2^12 traced over 2 GB whole).  ``reading``: the
    statistics of the variance reading, where one is offered."""

    spec: m.Spec
    x: np.ndarray
    affine: _Affine
    primary: tuple[RowStatistics, RowStatistics]
    reading: RowStatistics | None
    u: float
    eps: float
    divide: bool
    centre: bool
    nt: np.dtype

    @property
    def n(self) -> int:
        return int(self.x.shape[1])

    @property
    def size(self) -> int:
        return int(self.x.size)

    @property
    def dtype(self) -> np.dtype:
        return self.nt

    def block(self, lo: int, hi: int) -> _Block:
        """Elements [lo, hi) in group order: values, bounds (`_rounded`) and
        the readings' alternatives.  Computed over the whole groups that hold
        them, each group's terms a row (per-group factors broadcast, no
        gather), the bounds as `_Form`s; then cut to [lo, hi)."""
        n, u = self.n, self.u
        r0, r1 = lo // n, -(-hi // n)
        part = slice(lo - r0 * n, hi - r0 * n)
        x = self.x[r0:r1]  # in its type: each step below takes it to float64 as it reads it
        a, b, add = (_rows(t, r0, r1) for t in self.affine)
        stats = [s.rows(r0, r1) for s in self.primary]
        given = (a is not None, b is not None, add is not None)
        with np.errstate(all="ignore"):
            d = np.subtract(x, stats[1].mean[:, None], dtype=np.float64) if self.centre else x.astype(np.float64)
            ad = np.abs(d)
            ax = np.abs(x) if self.centre else ad
            scale, size_b, size_add = (None if t is None else np.abs(t) for t in (a, b, add))
            roots = [_inverse_root(st.variance, st.variance_error, self.eps, u) for st in stats]
            y = d / roots[1][1][:, None] if self.divide else d
            value, shifted = _affine_value(y, a, b, add, own=y is not d)
            expected = value.reshape(-1)[part].astype(self.nt)
            k = (n + 8) * _U64
            forms = [_form(u, st.mean_error, inverse, s, given, self.centre, self.divide, (k, st.magnitude))
                     for st, (inverse, s) in zip(stats, roots)]
            shared, extra = forms[1].shares(ax), forms[1].outside(size_b, shifted, size_add)
            bounds = [f.at(ad, shared, scale, extra).reshape(-1)[part] for f in forms]
            alternatives: tuple[Alternative, ...] = ()
            if self.reading is not None:
                alternatives = self._reading(r0, r1, d, ad, scale, (a, b, add), (size_b, size_add), stats[1],
                                             part, expected)
        return _rounded(value.reshape(-1)[part], bounds, alternatives, self.nt, expected=expected, scratch=True)

    def _reading(self, r0: int, r1: int, d: np.ndarray, ad: np.ndarray, scale: np.ndarray | None,
                 affine: _Affine, sizes: tuple[np.ndarray | None, np.ndarray | None], worst: RowStatistics,
                 part: slice, expected: np.ndarray) -> tuple[Alternative, ...]:
        """The variance reading's alternative over rows [r0, r1) (`_offered`):
        the sample variance (``v N / (N - 1)``, its bound scaled alike and
        one rounding), or without the mean the variance about it (the
        deviations then exact: ``e = 0``); the deviations ``d`` divided by
        its root, through the affine step, its bound a `_Form` from the
        worst-case mean bound ``worst``."""
        n, u = self.n, self.u
        st = self.reading.rows(r0, r1) if self.reading is not None else worst
        if self.centre:  # the sample variance
            key, variance = "variance:sample", st.variance * n / (n - 1)
            variance_error = st.variance_error * n / (n - 1) + u * variance
        else:  # the variance about the mean, the mean not subtracted
            key, variance, variance_error = "variance-without-mean:about-the-mean", st.variance, st.variance_error
        inverse, s = _inverse_root(variance, variance_error, self.eps, u)
        a, b, add = affine
        value, shifted = _affine_value(d / s[:, None], a, b, add, own=True)
        form = _form(u, worst.mean_error, inverse, s, (a is not None, b is not None, add is not None),
                     self.centre, True, None)
        bound = form.at(ad, None, scale, form.outside(sizes[0], shifted, sizes[1]))
        return _offered(self.spec, key, value.reshape(-1)[part], bound.reshape(-1)[part], self.nt, expected,
                        scratch=True)

    def whole(self, shape: tuple[int, ...], axes: tuple[int, ...]) -> _Stored:
        """Every element at once, in the output's C order (`_ungrouped`)."""
        return _ungrouped(self.block(0, self.size), self.x.shape, shape, axes, self.n)


def _rows(terms: np.ndarray | None, r0: int, r1: int) -> np.ndarray | None:
    """Rows [r0, r1) of an operand in group order, in float64; one row where
    its rows are one broadcast row (stride 0: a scale over the normalized
    dimensions), which broadcasts against the block's (None: not given)."""
    if terms is None:
        return None
    if terms.shape[0] > 1 and terms.strides[0] == 0:
        return terms[:1].astype(np.float64)
    return terms[r0:r1].astype(np.float64)


def _affine_value(y: np.ndarray, a: np.ndarray | None, b: np.ndarray | None, add: np.ndarray | None, *,
                  own: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """``a y + b (+ add)`` in float64, and ``|a y + b|`` where the addend follows a bias (the last sum's
    operand, in its bound: `_Form`), else None.  ``own``: ``y`` is the caller's to overwrite (each step in
    place, no temporary); else the first step makes a new array and the rest take it in place."""
    scaled, writable = y, own
    if a is not None:
        scaled, writable = np.multiply(a, y, out=y if own else None), True
    shifted = None
    for term in (b, add):
        if term is not None:
            if term is add and b is not None:
                shifted = np.abs(scaled)
            scaled, writable = np.add(scaled, term, out=scaled if writable else None), True
    return scaled, shifted


def _sources(spec: m.Spec, sem: Normalization, case: Case, float16_accumulation: bool) -> tuple[_Stored | _Rows, ...]:
    """One case, per output in its C order: a mean-variance normalization over
    the last dimensions block by block when asked (group order is then C
    order), any other computed whole."""
    ops, axes = operands(sem, case), axes_of(sem, case)
    nt = numpy_dtype(case.outputs[0].dtype)
    u = _unit(sem, case, float16_accumulation)
    if sem.operation == "lp":
        terms = groups(ops.x.astype(np.float64), axes)
        value, bounds, offered = _lp(spec, terms, order_of(sem, case), epsilon_of(sem, case), u, nt)
        return (_finish(value, bounds, offered, ops.x.shape, axes, nt, terms.shape[1]),)
    if sem.operation == "lrn":
        return (_lrn(spec, sem, case, ops.x.astype(np.float64), u, nt),)
    rows = mean_variance_rows(spec, sem, case, float16_accumulation)
    last = axes == tuple(range(ops.x.ndim - len(axes), ops.x.ndim))
    output = rows if last else rows.whole(ops.x.shape, axes)
    if sem.output_mean is None or sem.output_variance is None:
        return (output,)
    return (output, *_moments(spec, rows.x, u, nt))


def _unit(sem: Normalization, case: Case, float16_accumulation: bool) -> float:
    """The accumulator's unit roundoff: float32's for FLOAT16 tensors unless the backend declares FLOAT16 sums."""
    acc = m.DataType.FLOAT16 if float16_accumulation and case.dtype is m.DataType.FLOAT16 else \
        sem.accumulator(case.dtype)
    return unit_roundoff(acc)


def mean_variance_rows(spec: m.Spec, sem: Normalization, case: Case, float16_accumulation: bool = False) -> _Rows:
    """A mean-variance normalization (MVN, MVN1, MVN2, BATCH_NORMALIZATION_TRAINING's output) of ``case``
    in group order: each group's statistics taken, each element's value and bound when asked (`_Rows.block`)."""
    ops, axes = operands(sem, case), axes_of(sem, case)
    u = _unit(sem, case, float16_accumulation)
    eps, divide, centre = epsilon_of(sem, case), divides(sem, case), centres(sem, case)
    x = np.ascontiguousarray(groups(ops.x, axes))
    n = x.shape[1]
    primary = statistics(x, u, centred=centre)
    # the sample variance's reading (the primary's worst-case statistics), or without the mean the variance about it
    reading = (primary[1] if centre else statistics(x, u)[1]) if divide and (n > 1 or not centre) else None
    scale, bias, add = (None if t is None else groups(t, axes) for t in (ops.scale, ops.bias, ops.add))
    return _Rows(spec, x, (scale, bias, add), primary, reading, u, eps, divide, centre,
                 numpy_dtype(case.outputs[0].dtype))


def _moments(spec: m.Spec, rows: np.ndarray, u: float, nt: np.dtype) -> tuple[_Stored, _Stored]:
    """BATCH_NORMALIZATION_TRAINING's mean and variance outputs, one per row
    of ``rows`` (the scale's C order): the reduction family's AVERAGE bound
    (`reduced`) for the mean, `statistics`' for the population variance, and
    the sample variance (``variance-output:sample``, where N > 1) as a STRICT
    alternative with its own worst-case bound; the oracle's own float64 error
    and one spacing of the output type (`_finish`)."""
    n = rows.shape[1]
    k = (n + 8) * _U64
    pair = statistics(rows, u)
    st = pair[1]
    found: tuple[Alternative, ...] = ()
    if n > 1:
        with np.errstate(all="ignore"):
            scaled = st.variance * n / (n - 1)
            found = _offered(spec, "variance-output:sample", scaled[:, None],
                             (st.variance_error * n / (n - 1) + u * scaled)[:, None], nt, st.variance[:, None])
    shape = (rows.shape[0], 1)
    with np.errstate(all="ignore"):
        means = [(s.mean_error + k * s.magnitude)[:, None] for s in pair]
    return (_finish(st.mean[:, None], means, (), shape, (1,), nt, n),
            _finish(st.variance[:, None], [s.variance_error[:, None] for s in pair], found, shape, (1,), nt, n))


def _rounded(value: np.ndarray, bounds: list[np.ndarray], alternatives: tuple[Alternative, ...],
             nt: np.dtype, *, expected: np.ndarray | None = None, scratch: bool = False) -> _Block:
    """Expected values rounded to ``nt`` (flat; ``expected``: already
    rounded), the (strict, relaxed) ``bounds`` with one spacing of it (0
    where the value is not finite); ``scratch``: the bounds are this call's
    to overwrite (no copies of a block's)."""
    with np.errstate(invalid="ignore", over="ignore"):  # beyond the type's range: infinite (a FLOAT16 variance)
        if expected is None:
            expected = value.reshape(-1).astype(nt)
        step = spacing_above(np.add(np.abs(expected), bounds[1].reshape(-1), dtype=np.float64), nt)
    done = None if _finite(expected) else ~np.isfinite(expected)
    found = []
    for z in bounds:
        z = z.reshape(-1) if scratch else z.reshape(-1).copy()
        if not _finite(z):  # a NaN bound is infinite, an infinite one the largest float64 (as np.nan_to_num makes them)
            odd = ~np.isfinite(z)
            z[odd] = np.nan_to_num(z[odd], nan=np.inf)
        z += step
        if done is not None:
            z[done] = 0.0
        found.append(z)
    return _Block(expected, found[0], found[1], alternatives)


def _ungrouped(block: _Block, rows_shape: tuple[int, ...], shape: tuple[int, ...], axes: tuple[int, ...],
               n: int) -> _Stored:
    """A block of every element in group order -> the output's C order, the alternatives' indices mapped."""
    expected, strict, relaxed = (_ungroup(z, shape, axes) for z in (block.expected, block.strict, block.relaxed))
    alternatives = tuple(Alternative(alt.name, _flat_index(alt.index, rows_shape, shape, axes), alt.values,
                                     alt.tier, alt.reason, alt.bound) for alt in block.alternatives)
    return _Stored(_Block(expected, strict, relaxed, alternatives), n)


def _finish(value: np.ndarray, bounds: list[np.ndarray], alternatives: tuple[Alternative, ...],
            shape: tuple[int, ...], axes: tuple[int, ...], nt: np.dtype, n: int) -> _Stored:
    """Values and bounds in group order -> the output's C order (`_rounded`, `_ungrouped`)."""
    return _ungrouped(_rounded(value, bounds, alternatives, nt), value.shape, shape, axes, n)


def _offered(spec: m.Spec, key: str, value: np.ndarray, e: np.ndarray, nt: np.dtype,
             expected: np.ndarray, *, scratch: bool = False) -> tuple[Alternative, ...]:
    """The reading ``key`` (``<ambiguity>:<reading>``: its ``value`` and
    worst-case bound ``e``, float64) as a STRICT alternative with that bound,
    in the output type ``nt``, where it differs from ``expected`` (float64 or ``nt``;
    indices in group order: `_part` maps them).  Nothing where the spec
    lacks the reading.  ``scratch``: ``value`` and ``e`` are this call's to
    overwrite (no fresh arrays of a block's size)."""
    ambiguity_id, reading_id = key.split(":")
    ambiguity = next((x for x in spec.ambiguities if x.id == ambiguity_id), None)
    reading = ambiguity.reading(reading_id) if ambiguity is not None else None
    if ambiguity is None or reading is None:
        return ()
    value, e = value.reshape(-1), e.reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        values = value.astype(nt)
        primary = expected.reshape(-1).astype(nt, copy=False)
        room = np.abs(value, out=value if scratch else None)
        room += e
        bound = np.add(e, spacing_above(room, nt), out=e if scratch else room)
    differ = values != primary
    if not _finite(values):  # the masks only where there is a NaN or an infinity
        nan = np.isnan(values)
        bound[nan] = 0.0  # a NaN the reading gives (a NaN in its window) matches any NaN
        differ &= ~(nan & np.isnan(primary))
    if not _finite(bound):
        differ &= np.isfinite(bound)
    where, (values, bound, primary) = kept(differ, values, bound, primary)
    if not where.size:
        return ()
    alt = Alternative(f"reading:{ambiguity.id}:{reading.id}", where, values, Tier.STRICT,
                      f"{ambiguity.id}: {reading.says}", bound)
    return marker_at(ambiguity, where, primary), alt


def _finite(z: np.ndarray) -> bool:
    """Whether every element of ``z`` is finite (then no mask of the others is made)."""
    return bool(np.isfinite(z).all())


def _lp(spec: m.Spec, rows: np.ndarray, p: int, eps: float, u: float,
        nt: np.dtype) -> tuple[np.ndarray, list[np.ndarray], tuple[Alternative, ...]]:
    """LP_NORMALIZATION in group order: ``x / max(||x||_P, eps)`` (the
    primary reading of ``lp-epsilon``), its (strict, relaxed) bounds and the
    other readings (``norm + eps``; ``sqrt(norm^2 + eps)``, for P = 2 ``sqrt(sum x^2 + eps)``) as
    alternatives with their worst-case bounds.  The norm is the reduction
    family's L1 or L2 with its bound; a maximum is exact, a sum one rounding,
    the division (or a reciprocal and a product) two."""
    function = "L1" if p == 1 else "L2"

    def divided(t: np.ndarray, e_t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(all="ignore"):
            r = np.where(e_t < t, e_t / (t - e_t), np.inf)
            y = rows / t[:, None]
            return y, np.abs(y) * ((1 + r[:, None]) * (1 + 2 * u) - 1)

    bounds, value = [], np.zeros(rows.shape)
    for g in (gamma_probable, gamma):
        norm, e_norm = reduced(rows, function, u, g) if p in (1, 2) else _norm(rows, p, u, g)
        value, e = divided(np.maximum(norm, eps), e_norm)
        bounds.append(e + (rows.shape[1] + 8) * _U64 * np.abs(value))
    if p not in (1, 2):  # outside the page's "either 1 or 2": a negative case, computed as the P-norm where it runs
        return value, bounds, ()
    norm, e_norm = reduced(rows, function, u, gamma)
    plus = norm + eps
    found = _offered(spec, "lp-epsilon:add", *divided(plus, e_norm + u * (plus + e_norm)), nt, value)
    if p == 2:
        squares, e_sq = reduced(rows, "SUM_SQUARE", u, gamma)
    else:  # Epsilon inside the root of the squared norm for P = 1 too (DirectML's kernels, issue #37)
        squares, e_sq = norm * norm, (2 * norm + e_norm) * e_norm + u * norm * norm
    with np.errstate(all="ignore"):
        t = squares + eps
        r = (e_sq + u * (t + e_sq)) / t
        root = np.sqrt(t)
        e_root = root * (np.sqrt(1 + r) * (1 + 2 * u) - 1)
    found += _offered(spec, "lp-epsilon:inside-root", *divided(root, e_root), nt, value)
    return value, bounds, found


#: A float32 pow within 4 ULPs of its result, as a multiple of u, plus the log's growth with |beta ln base|.
POW_ULPS = 8.0


def window_sums(squares: np.ndarray, dims: tuple[int, ...], size: int, ceil_before: bool) -> np.ndarray:
    """The sum of ``squares`` over a window of ``size`` along each of ``dims``, centred as `window_offsets`
    says, zero outside the tensor: padding, then one slice per offset."""
    before, after = window_offsets(size, ceil_before)
    padded = np.pad(squares, [(before, after) if d in dims else (0, 0) for d in range(squares.ndim)])
    total = np.zeros(squares.shape)
    for shift in np.ndindex(*(size for _ in dims)):
        index = [slice(None)] * squares.ndim
        for d, k in zip(dims, shift):
            index[d] = slice(k, k + squares.shape[d])
        total += padded[tuple(index)]
    return total


def _lrn(spec: m.Spec, sem: Normalization, case: Case, x: np.ndarray, u: float,
         nt: np.dtype) -> _Stored:
    """LOCAL_RESPONSE_NORMALIZATION: ``x (Bias + Alpha / S * T)^-Beta``, T the window's sum of squares (n terms,
    all positive: ``g_n T``), the coefficient, product and sum one rounding each, the power relatively
    ``|(1 -+ r)^-Beta - 1|`` for the base's relative error r plus ``POW_ULPS u (1 + |Beta ln base|)``, the
    product with x one rounding.  Readings, each a STRICT alternative with this bound: the window centred
    ceil((S-1)/2) before (``lrn-centre``, even S), the cross-channel region over height and width too
    (``lrn-region``), the spatial coefficient Alpha / S^2 (``lrn-spatial-divisor``)."""
    size, alpha, beta, offset = lrn_of(sem, case)
    dims = axes_of(sem, case)
    squares = x * x
    if size < 1:  # outside "at least 1" (a negative case): Alpha / 0 times an empty sum, NaN where it runs
        nan = np.full((1, x.size), np.nan)
        return _finish(nan, [nan, nan], (), (1, x.size), (0, 1), nt, 0)

    def result(total: np.ndarray, n: int, coefficient: float, g: Callable[[np.ndarray, float], np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray]:
        gn = float(g(np.array([float(max(n, 1))]), u)[0])
        with np.errstate(all="ignore"):
            scaled = coefficient * total
            base = offset + scaled
            e_base = abs(coefficient) * total * (gn + 3 * u) + u * np.abs(base) + (n + 8) * _U64 * np.abs(scaled)
            r = e_base / np.abs(base)
            power = base ** -beta
            low, high = np.maximum(1 - r, 0) ** -beta, (1 + r) ** -beta
            rel = np.maximum(np.abs(low - 1), np.abs(high - 1)) + POW_ULPS * u * (1 + np.abs(beta * np.log(base)))
            y = x * power
            return y.reshape(-1), (np.abs(y) * ((1 + rel) * (1 + u) - 1)).reshape(-1)

    n = size ** len(dims)
    value = np.zeros(x.size)
    bounds: list[np.ndarray] = []
    for g in (gamma_probable, gamma):
        value, e = result(window_sums(squares, dims, size, False), n, alpha / size, g)
        bounds.append(e)
    readings: list[tuple[str, np.ndarray, int, float]] = []
    if size % 2 == 0:
        readings.append(("lrn-centre:ceil-before", window_sums(squares, dims, size, True), n, alpha / size))
    if dims == (1,):
        every = tuple(range(1, x.ndim))
        readings.append(("lrn-region:channels-and-spatial", window_sums(squares, every, size, False),
                         size ** len(every), alpha / size))
    else:
        readings.append(("lrn-spatial-divisor:window-size", window_sums(squares, dims, size, False), n,
                         alpha / size ** 2))
    found: tuple[Alternative, ...] = ()
    for key, total, terms, coefficient in readings:
        found += _offered(spec, key, *result(total, terms, coefficient, gamma), nt, value)
    # the output's own C order, as one row: no regrouping
    return _finish(value[None, :], [b[None, :] for b in bounds], found, (1, x.size), (0, 1), nt, n)


def _norm(rows: np.ndarray, p: int, u: float,
          g: Callable[[np.ndarray, float], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``(sum |x|^p)^(1/p)`` for P beyond 2 and its bound: each power ``p - 1`` roundings, the sum's, the root's
    (relative ``(1 + g_{N + p - 1})^(1/p) (1 + 2u) - 1``)."""
    with np.errstate(all="ignore"):
        norm = (np.abs(rows) ** p).sum(axis=1) ** (1.0 / p)
        k = float(g(np.array([float(rows.shape[1] + p - 1)]), u)[0])
        return norm, norm * ((1 + k) ** (1.0 / p) * (1 + 2 * u) - 1)


def _ungroup(z: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...]) -> np.ndarray:
    """Rows of `groups` back to the tensor's C order, flat."""
    k = len(axes)
    moved_shape = tuple(s for i, s in enumerate(shape) if i not in axes) + tuple(shape[a] for a in axes)
    back = np.moveaxis(z.reshape(moved_shape), tuple(range(len(shape) - k, len(shape))), axes)
    return np.ascontiguousarray(back).reshape(-1)


def _flat_index(index: np.ndarray, rows_shape: tuple[int, ...], shape: tuple[int, ...],
                axes: tuple[int, ...]) -> np.ndarray:
    """Flat indices into the group rows -> flat indices in the tensor's C order."""
    order = _ungroup(np.arange(int(np.prod(rows_shape)), dtype=np.float64).reshape(rows_shape), shape, axes)
    position = np.empty(order.size, np.int64)
    position[order.astype(np.int64)] = np.arange(order.size, dtype=np.int64)
    return position[index]
