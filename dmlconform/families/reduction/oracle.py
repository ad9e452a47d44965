"""The reduction family's oracle (REDUCE, ARGMAX, ARGMIN): expected values
in float64 (exact for integers) and a bound from the error analysis of each
function, per output element.

Issue #24 item 2; DESIGN.md "Operator families" and "Tolerances";
docs/reduction.md derives every bound and works one real case through it.

Per output element the oracle gathers the N terms of its group (the input
over the reduced axes, row-major in increasing axis order) and computes in
float64: the value T, the magnitude S of the terms it sums, and, with u the
unit roundoff of the accumulator (float32's for FLOAT16 tensors unless the
backend declares FLOAT16 accumulation) and ``g`` = gamma (worst case: FAIL
beyond) or Higham and Mary's probabilistic gamma~ (QUALITY_WARNING beyond):

* SUM, L1, SUM_SQUARE: ``g_N S`` (a sum of N rounded terms in any order,
  squares included: Higham eq. 3.5);
* AVERAGE: ``g_N S / N (1 + g_2) + g_2 |T|`` (the sum, then a division or a
  multiplication by a rounded 1/N);
* L2: ``(sqrt(1 + g_N)(1 + 2u) - 1) T`` (half the sum's relative error, and
  a square root within one ULP);
* LOG_SUM: ``-log(1 - g_N S / |s|) + log_err`` (s the sum);
* LOG_SUM_EXP: ``-log(1 - r) + log_err + u |T|``, r the relative error of
  the sum of exps (each exp within EXP_ULPS and its argument rounded, the
  sum's g_N, subnormal terms), with or without max-subtraction;
* MULTIPLY: ``g_N |T|``;
* MAX, MIN, ARGMAX, ARGMIN and every integer result: exact;

plus the oracle's own float64 error and one spacing of the output type at
the result.  Integer-valued data whose every partial result fits the
significand needs 0 ULP.  Every reading of the overlay's ambiguities that
gives another value is a STRICT alternative ``reading:<id>:<reading>``
(`families.elementwise.readings` names and marks them): NaN ignored by MAX/MIN/ARG*,
integer saturation, the literal LOG_SUM_EXP, arg indices flattened in the
order Axes are given, +0 above -0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, Alternative, finfo
from dmlconform.families.reduction.cases import axes_of, function_of, last_wins, semantics_of
from dmlconform.families.reduction.semantics import ARG_FUNCTIONS, Reduction
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
from dmlconform.plan import SUM_BLOCK
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["EXP_ULPS", "LOG_ABS", "LOG_ULPS", "ReductionBatch", "ReductionOracle", "groups", "reduced"]

#: A float32 log within 4 ULPs of its result (numpy's own is 2.7 off), as
#: a multiple of u (one ULP of y is at most 2u|y|) ...
LOG_ULPS = 8.0
#: ... and within 8u absolutely near log(1) = 0 (D3D's log2 is 2^-21 there).
LOG_ABS = 8.0
#: A float32 exp within 4 ULPs of its result (numpy's own is 2.3 off), in u.
EXP_ULPS = 8.0
_U64 = 2.0 ** -53
#: The functions whose result is exact where every partial result of integer terms fits the significand.
_EXACT = ("SUM", "L1", "SUM_SQUARE", "MULTIPLY")


@dataclass(frozen=True, slots=True, eq=False)
class ReductionOracle:
    """The oracle of one reduction operator (its reviewed semantics)."""

    spec: m.Spec
    semantics: Reduction

    @classmethod
    def of(cls, spec: m.Spec) -> ReductionOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> ReductionBatch:
        """Each case's expected values, bounds and alternatives end to end."""
        parts = [_Part.of(self.spec, self.semantics, c, float16_accumulation, flush_subnormals) for c in cases]
        offsets = np.concatenate(([0], np.cumsum([p.expected.size for p in parts], dtype=np.int64)))
        alternatives = end_to_end([p.alternatives for p in parts], [p.expected.size for p in parts])
        expected = np.concatenate([p.expected for p in parts])
        expected.setflags(write=False)
        return ReductionBatch(expected, np.concatenate([p.strict for p in parts]),
                              np.concatenate([p.relaxed for p in parts]), alternatives, offsets,
                              np.array([p.n for p in parts], np.int64), np.concatenate([p.magnitude for p in parts]))


@dataclass(frozen=True, slots=True, eq=False)
class ReductionBatch:
    """`ReductionOracle` bound to a batch: everything end to end, each
    case's start in ``offsets`` (the total last) and its term count N."""

    expected: np.ndarray
    strict: np.ndarray
    relaxed: np.ndarray
    alternatives: tuple[Alternative, ...]
    offsets: np.ndarray
    ns: np.ndarray
    magnitude: np.ndarray

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        return (Expectation(self.expected[lo:hi], self.strict[lo:hi], self.relaxed[lo:hi],
                            within(self.alternatives, lo, hi, empty=True), 0, RELAXED_FACTOR, False),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """What decides an element's bound: its term count N and the terms' magnitude S."""
        owner = np.searchsorted(self.offsets, flat, side="right") - 1
        return (("N", [float(x) for x in self.ns[owner].tolist()]),
                ("S", [float(x) for x in self.magnitude[flat].tolist()]))


def groups(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """The terms of every output element, one row each in the output's C
    order, row-major over ``axes`` in the order given."""
    k = len(axes)
    moved = np.moveaxis(x, tuple(axes), tuple(range(x.ndim - k, x.ndim)))
    n = math.prod(x.shape[a] for a in axes)
    return moved.reshape(-1, n)


@dataclass(frozen=True, slots=True, eq=False)
class _Part:
    """One case: expected values, both bounds, the magnitudes S, the alternatives (indices local) and N."""

    expected: np.ndarray
    strict: np.ndarray
    relaxed: np.ndarray
    magnitude: np.ndarray
    alternatives: tuple[Alternative, ...]
    n: int

    @classmethod
    def of(cls, spec: m.Spec, sem: Reduction, case: Case, half: bool, flush: bool) -> _Part:
        function, axes = function_of(sem, case), axes_of(sem, case)
        x = case.inputs[0].view()
        rows = groups(x, sorted(axes))
        out = case.outputs[0].dtype
        readings: dict[str, np.ndarray] = {}
        if function in ARG_FUNCTIONS:
            value = _arg(rows, function, last_wins(sem, case))
            readings = _arg_readings(x, rows, axes, function, last_wins(sem, case))
            zero = np.zeros(value.shape)
            expected, strict, relaxed, s = value.astype(numpy_dtype(out)), zero, zero, zero
        elif not case.dtype.is_float:
            expected, readings = _integer(rows, function, out)
            zero = np.zeros(expected.shape)
            strict, relaxed, s = zero, zero, zero
        else:
            acc = m.DataType.FLOAT16 if half and case.dtype is m.DataType.FLOAT16 else sem.accumulator(case.dtype)
            value, s, bounds = _float(rows.astype(np.float64), function, acc, out, flush)
            expected, (strict, relaxed) = value.astype(numpy_dtype(out)), bounds
            readings = _float_readings(rows.astype(np.float64), function, value, acc)
        return cls(expected, strict, relaxed, s, _alternatives(spec, readings, expected), rows.shape[1])


def _arg(rows: np.ndarray, function: str, last: bool) -> np.ndarray:
    """The index of the first (or last) extreme term of each row; NaN is
    the extreme (numpy's argmax and argmin take the first NaN)."""
    pick = np.argmax if function == "ARGMAX" else np.argmin
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], np.int64)
    if last:
        return rows.shape[1] - 1 - pick(rows[:, ::-1], axis=1)
    return pick(rows, axis=1)


def _arg_readings(x: np.ndarray, rows: np.ndarray, axes: tuple[int, ...], function: str,
                  last: bool) -> dict[str, np.ndarray]:
    """The indices other readings give: NaN ignored, indices flattened in
    the given order of Axes, +0 above -0."""
    found = {"arg-axes-order:given": _arg(groups(x, axes), function, last)}
    if rows.dtype.kind == "f":
        wide = rows.astype(np.float64)
        if np.isnan(wide).any():
            fill = -np.inf if function == "ARGMAX" else np.inf
            found["nan-max-min:ignore"] = _arg(np.where(np.isnan(wide), fill, wide), function, last)
        zero = wide == 0
        if zero.any():
            ordered = np.where(zero & np.signbit(wide), -5e-324, wide)
            found["signed-zero-ties:ordered"] = _arg(np.where(zero & ~np.signbit(wide), 5e-324, ordered), function,
                                                     last)
    return found


def _integer(rows: np.ndarray, function: str, out: m.DataType) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Integer results, exact (Python integers), wrapped into ``out`` (the
    primary reading) and saturated (the other)."""
    nt = numpy_dtype(out)
    if function in ("MAX", "MIN"):
        return (rows.max(axis=1) if function == "MAX" else rows.min(axis=1)).astype(nt), {}
    exact = rows.astype(object)
    if function == "L1":
        exact = np.abs(exact)
    if function == "SUM_SQUARE":
        exact = exact * exact
    total = [math.prod(r) if function == "MULTIPLY" else sum(r) for r in exact.tolist()]
    info = np.iinfo(nt)
    span = 1 << info.bits
    wrapped = [(t - int(info.min)) % span + int(info.min) for t in total]
    saturated = [min(max(t, int(info.min)), int(info.max)) for t in total]
    return np.array(wrapped, dtype=nt), {"integer-overflow:saturate": np.array(saturated, dtype=nt)}


def _float(rows: np.ndarray, function: str, acc: m.DataType, out: m.DataType,
           flush: bool) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """T, S and the (strict, relaxed) bounds of float terms (module docstring)."""
    with np.errstate(all="ignore"):
        value, s = _value(rows, function)
        u = unit_roundoff(acc)
        digits = min(_digits(acc), _digits(out))
        integral = _integral(rows)
        exact = integral & (np.abs(value if function == "MULTIPLY" else s) <= 2.0 ** digits)
        bounds = []
        for g in (gamma_probable, gamma):
            e = _error(rows, function, value, s, exact, u, g, flush, acc)
            e = e + _own_error(rows, function, value, s)
            bounds.append(e)
        step = spacing_above(np.abs(value) + bounds[1], numpy_dtype(out))
        clean = (exact & (function in _EXACT)) | ~np.isfinite(value) | ~np.isfinite(s)
        if function in ("MAX", "MIN"):
            clean = np.ones(value.shape, bool)
        strict, relaxed = (np.where(clean, 0.0, b + step) for b in bounds)
    return value, np.where(np.isfinite(s), s, 0.0), (strict, relaxed)


def _own_error(rows: np.ndarray, function: str, value: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The oracle's own float64 error at T, carried through the step that
    follows the sum (DESIGN, accumulation tolerances): ``k = (N + 8) 2^-53``
    of S on a sum (S/N on an average), relative after a square root, the
    sum's relative error after a log (LOG_SUM), and ``k (1 + |T|)`` for
    LOG_SUM_EXP, whose float64 log-add-exp steps each err by a few units
    of T.  Taking S itself as the error after a log or a root gave a
    LOG_SUM_EXP near 104 a bound of 6.2e30 (issue #32: a backend writing 0
    passed)."""
    k = (rows.shape[1] + 8) * _U64
    t = np.abs(value)
    if function == "AVERAGE":
        return k * (s / rows.shape[1] + t)
    if function == "L2":
        return k * t
    if function == "LOG_SUM":
        r = k * s / np.abs(rows.sum(axis=1))
        return np.where(r < 0.5, -np.log1p(-np.minimum(r, 0.5)), np.inf) + k * t
    if function == "LOG_SUM_EXP":
        return k * (1 + t)
    return k * (s + t)


def _integral(rows: np.ndarray) -> bool:
    """Whether every finite term is an integer, looked at a block of
    `plan.SUM_BLOCK` terms at a time: random data stops at the first block,
    and whole data (REDUCE's ``exact-nonzero/large``) never holds more than
    a block's temporaries (its run's peak memory 7.00x -> 5.00x its
    tensors' bytes, within tests/test_large_cases.py's 6x)."""
    flat = rows.reshape(-1)
    for lo in range(0, flat.size, SUM_BLOCK):
        part = flat[lo:lo + SUM_BLOCK]
        if not np.all(np.mod(part[np.isfinite(part)], 1) == 0):
            return False
    return True


def reduced(rows: np.ndarray, function: str, u: float,
            g: Callable[[np.ndarray, float], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``function`` (AVERAGE, SUM, L1, SUM_SQUARE, L2) of each row of
    float64 terms, and the bound of computing it with unit roundoff ``u``
    (``g`` = `gamma` or `gamma_probable`) plus the oracle's own float64
    error: the statistics of the normalization family (a mean, a mean of
    squares, an Lp norm) are these reductions."""
    value, (bound,) = reduced_each(rows, function, u, (g,))
    return value, bound


def reduced_each(rows: np.ndarray, function: str, u: float,
                 gs: Sequence[Callable[[np.ndarray, float], np.ndarray]], *,
                 sums: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """`reduced` with the bound for each gamma of ``gs``, the value taken
    once (the normalization family's statistics want both gammas' bounds of
    a large case's 2^24 terms).  ``sums``: of an AVERAGE, each row's sum of
    the terms and of their magnitudes where the caller has them (the
    normalization family's squares are their own magnitudes, and its mean of
    |x| is the second), not taken again."""
    if sums is not None and function == "AVERAGE":
        value, s = sums[0] / rows.shape[1], sums[1]
    else:
        value, s = _value(rows, function)
    exact = np.zeros(value.shape, bool)
    with np.errstate(all="ignore"):
        own = _own_error(rows, function, value, s)
        return value, [_error(rows, function, value, s, exact, u, g, False, m.DataType.FLOAT32) + own for g in gs]


def _value(rows: np.ndarray, function: str) -> tuple[np.ndarray, np.ndarray]:
    """T and the magnitude S of the terms that are summed (|T| where none are)."""
    n = rows.shape[1]
    absolute = np.abs(rows).sum(axis=1)
    if function in ("SUM", "AVERAGE"):
        total = rows.sum(axis=1)
        return (total / n if function == "AVERAGE" else total), absolute
    if function == "L1":
        return absolute, absolute
    if function in ("SUM_SQUARE", "L2"):
        squares = (rows * rows).sum(axis=1)
        return (np.sqrt(squares) if function == "L2" else squares), squares
    if function == "LOG_SUM":
        return np.log(rows.sum(axis=1)), absolute
    if function == "LOG_SUM_EXP":
        return np.logaddexp.reduce(rows, axis=1), np.exp(rows).sum(axis=1)
    if function == "MULTIPLY":
        product = rows.prod(axis=1)
        return product, np.abs(product)
    return (rows.max(axis=1) if function == "MAX" else rows.min(axis=1)), np.zeros(rows.shape[0])


def _error(rows: np.ndarray, function: str, value: np.ndarray, s: np.ndarray, exact: np.ndarray, u: float,
           g: Callable[[np.ndarray, float], np.ndarray], flush: bool, acc: m.DataType) -> np.ndarray:
    """The error bound before the output's rounding, with ``g(k, u)`` the
    gamma of k roundings (docs/reduction.md derives each line)."""
    n = rows.shape[1]
    gn, g2 = (float(g(np.array([float(k)]), u)[0]) for k in (n, 2))
    summed = np.where(exact, 0.0, gn * s)
    t = np.abs(value)
    if function in ("SUM", "L1", "SUM_SQUARE"):
        return summed
    if function == "AVERAGE":
        return summed / n * (1 + g2) + g2 * t
    if function == "L2":
        return np.where(exact, 2 * u * t, (math.sqrt(1 + gn) * (1 + 2 * u) - 1) * t)
    if function == "MULTIPLY":
        return np.where(exact, 0.0, gn * t)
    log_err = (LOG_ULPS * t + LOG_ABS) * u
    if function == "LOG_SUM":
        r = gn * s / np.abs(rows.sum(axis=1))
        return np.where(r < 1, -np.log1p(-np.minimum(r, 0.5)), np.inf) + log_err
    if function == "LOG_SUM_EXP":
        return _exp_error(rows, s, u, gn, flush, acc) + log_err + u * t
    return np.zeros(value.shape)


def _exp_error(rows: np.ndarray, s: np.ndarray, u: float, gn: float, flush: bool, acc: m.DataType) -> np.ndarray:
    """-log(1 - r), r the relative error of the computed sum of exps: each
    exp within EXP_ULPS, its argument (x, or x - max) rounded twice (the
    subtraction, a scaling by log2(e)), the sum's g_N, and the absolute
    error of terms that are subnormal (or flushed) in the accumulator after
    the maximum is subtracted (the literal reading's underflow is its own
    alternative, `_float_readings`).  A term of -inf is exactly 0 in any
    implementation: it adds no error."""
    top = rows.max(axis=1, keepdims=True)
    finite = np.isfinite(rows)
    argument = np.where(finite, np.maximum(np.abs(rows), np.abs(rows - top)), 0.0).max(axis=1)
    each = (1 + EXP_ULPS * u) * np.exp(2 * u * argument) - 1
    info = finfo(numpy_dtype(acc))
    tiny = float(info.smallest_normal if flush else info.smallest_subnormal)
    shifted = np.exp(rows - np.where(np.isfinite(top), top, 0.0)).sum(axis=1)  # >= 1 where the maximum is finite
    slack = rows.shape[1] * tiny / shifted
    r = (1 + each) * (1 + gn) * (1 + slack) - 1
    return np.where(r < 0.5, -np.log1p(-np.minimum(r, 0.5)), np.inf)


def _float_readings(rows: np.ndarray, function: str, value: np.ndarray, acc: m.DataType) -> dict[str, np.ndarray]:
    """The values other readings give: NaN ignored (MAX, MIN), the literal LOG_SUM_EXP."""
    found: dict[str, np.ndarray] = {}
    nan = np.isnan(rows)
    if function in ("MAX", "MIN") and nan.any():
        fill = -np.inf if function == "MAX" else np.inf
        clean = np.where(nan, fill, rows)
        picked = clean.max(axis=1) if function == "MAX" else clean.min(axis=1)
        found["nan-max-min:ignore"] = np.where(nan.all(axis=1), np.nan, picked)
    if function == "LOG_SUM_EXP":
        info = finfo(numpy_dtype(acc))
        over = value > math.log(float(info.max))
        under = rows.max(axis=1) < math.log(float(info.smallest_subnormal)) - math.log(2)  # exp(x) rounds to 0
        if over.any() or under.any():  # kept only where it keeps the exact result's range (`_alternatives`)
            found["log-sum-exp-overflow:literal"] = np.where(over, np.inf, np.where(under, -np.inf, value))
    return found


#: Readings that evaluate the primary's formula another way rather than give it another meaning:
#: kept only where they keep the exact result's range (`oracles.base.range_lost`).
_EVALUATIONS = frozenset({"log-sum-exp-overflow:literal"})


def _alternatives(spec: m.Spec, readings: dict[str, np.ndarray], expected: np.ndarray) -> tuple[Alternative, ...]:
    """Each reading as a STRICT alternative where it gives another value (`oracles.base.reading_alternatives`)."""
    return reading_alternatives(spec, readings, expected, evaluations=_EVALUATIONS)


def _digits(dtype: m.DataType) -> int:
    return int(finfo(numpy_dtype(dtype)).nmant) + 1


def exact_values(x: np.ndarray, axes: Sequence[int], function: str, *, last: bool = False) -> np.ndarray:
    """``function`` over ``axes`` of ``x`` in float64 (ARGMAX/ARGMIN: the
    indices), one per output element in C order: what lint holds the doc's
    worked examples against (`lint.examples`)."""
    rows = groups(np.asarray(x, dtype=np.float64), sorted(axes))
    if function in ARG_FUNCTIONS:
        return _arg(rows, function, last).astype(np.float64)
    with np.errstate(all="ignore"):
        return _value(rows, function)[0]
