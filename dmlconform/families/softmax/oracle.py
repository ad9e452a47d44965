"""The softmax family's oracle: expected values in float64, a bound from the
error analysis of exp, the sum and the division (softmax), of the shifted
value, the sum and the log (log-softmax), exact hardmax, and every honest
reading of the family's ambiguities as a STRICT alternative.

Issue #24 items 2 and 3; docs/softmax.md derives the bounds and works one
real case through them.  Per group of ``n`` reduced elements, with ``m``
its maximum, ``d_i = |x_i - m|``, ``e_i = exp(x_i - m)``, ``S = sum e_j``
and ``u`` the accumulator's unit roundoff (float32's for FLOAT16 tensors,
the primary reading, unless the backend declares FLOAT16 accumulation):

* one term's relative error ``r_i = E u + 2 (d_i + ln n) u``: exp within
  `EXP_ULP` ULPs (``E = 2 EXP_ULP``; measured: numpy's float32 exp 2.35 ULP,
  torch 0.56, onnxruntime 0.85), its argument rounded once or twice (the
  subtraction, a scaling by log2(e)), the shift by up to ``ln S <= ln n`` of
  implementations that compute ``exp(x - m - ln S)``;
* the sum's relative error ``sigma = g(n - 1) + sum_j r_j e_j / S`` with
  ``g`` the worst case ``gamma`` (FAIL beyond) or the probabilistic
  ``gamma~`` of Higham and Mary (QUALITY_WARNING beyond), as for GEMM;
* softmax ``y_i``: ``(r_i + sigma + 2u) y_i`` (a division, or a reciprocal
  and a product), plus the accumulator's smallest normal number (an
  ``e_i`` flushed or underflowed) and one spacing of the output type;
* log-softmax ``z_i``: ``r_i + sigma + 2u + L (|z_i| + ln S) + n N / S``
  with ``L = 2 LOG_ULP u`` (numpy's float32 log 3.5 ULP, onnxruntime's
  3.2) and ``N`` the accumulator's smallest normal number (each ``e_j``
  below it flushed or subnormal, S short by up to ``n N``): what
  ``x - m - ln(S)`` stays within, and the log of a rounded softmax where
  that softmax is normal in the accumulator, plus one spacing of the
  output type.  The log of a softmax below ``N`` lost its range before
  the log (issue #32 items 1 and 2: it allowed -103 for -335): no bound
  covers it;
* hardmax: exact (0 ULP); softmax of a group of equal values where ``n`` is
  a power of 2: exactly ``1/n``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier, finfo
from dmlconform.families.softmax.cases import axes_of, semantics_of
from dmlconform.families.softmax.semantics import Function, Softmax
from dmlconform.oracles.base import (
    PREFIX,
    Expectation,
    gamma,
    gamma_probable,
    marker,
    range_lost,
    spacing_above,
    unit_roundoff,
)
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["EXP_ULP", "LOG_ULP", "SoftmaxBatch", "SoftmaxOracle", "expected_values"]

#: exp's and log's error budgets in ULPs of the accumulator (calibrated on numpy, torch and onnxruntime: module docstring).
EXP_ULP = 3.0
LOG_ULP = 4.0
#: The oracle's own float64 error, relative, with room to spare.
_OWN = 2.0 ** -48

#: The readings the oracle evaluates: (ambiguity id, reading id) -> what it changes (`expected_values`).
READINGS = frozenset({("positive-infinity", "nan"), ("positive-infinity", "limit"),
                      ("all-negative-infinity", "uniform"), ("log-of-underflow", "literal"),
                      ("effective-rank", "trailing"), ("nan", "skipped"), ("nan", "running"),
                      ("signed-zero-tie", "total-order"), ("axes-order", "axes-order")})
Picks = frozenset[tuple[str, str]]


def _moved(x: np.ndarray, axes: Sequence[int]) -> tuple[np.ndarray, list[int]]:
    """``x`` with ``axes`` moved last, in the order given, as rows (G, n); and the permutation."""
    order = [d for d in range(x.ndim) if d not in axes] + list(axes)
    return np.transpose(x, order).reshape(-1, int(np.prod([x.shape[a] for a in axes]))), order


def _back(rows: np.ndarray, shape: tuple[int, ...], order: list[int]) -> np.ndarray:
    return np.transpose(rows.reshape(tuple(shape[d] for d in order)), np.argsort(order))


def _reduced(sem: Softmax, x: np.ndarray, axes: tuple[int, ...], picks: Picks) -> tuple[int, ...]:
    """The axes a reading reduces, in its order."""
    if ("effective-rank", "trailing") in picks and sem.effective_rank is not None:
        first = next((d for d, s in enumerate(x.shape) if s > 1), x.ndim - 1)
        return tuple(range(first + 1, x.ndim)) or (x.ndim - 1,)
    return axes if ("axes-order", "axes-order") in picks else tuple(sorted(axes))


def expected_values(sem: Softmax, x: np.ndarray, axes: tuple[int, ...], acc: m.DataType,
                    picks: Picks = frozenset()) -> np.ndarray:
    """The function of ``x`` (float64) by the primary readings, or by those
    ``picks`` names instead, in float64, shaped like ``x``."""
    rows, order = _moved(x, _reduced(sem, x, axes, picks))
    with np.errstate(all="ignore"):
        if sem.function is Function.HARDMAX:
            out = _hardmax(rows, picks)
        else:
            out = _softmax(rows, sem.function is Function.LOG_SOFTMAX, acc, picks)
    return _back(out, x.shape, order)


def _hardmax(rows: np.ndarray, picks: Picks) -> np.ndarray:
    """1 at the first largest element of each row (NaN and -0 by the readings)."""
    key = rows.copy()
    if ("signed-zero-tie", "total-order") in picks:
        key[(key == 0) & np.signbit(key)] = -np.finfo(np.float64).smallest_subnormal
    nan = np.isnan(key)
    if ("nan", "skipped") in picks or ("nan", "running") in picks:
        index = np.argmax(np.where(nan, -np.inf, key), axis=-1)
        index[nan.all(axis=-1)] = 0
        if ("nan", "running") in picks:
            index[nan[:, 0]] = 0
    else:
        index = np.argmax(key, axis=-1)  # numpy: the first NaN is the largest
    out = np.zeros(rows.shape)
    out[np.arange(rows.shape[0]), index] = 1.0
    return out


def _softmax(rows: np.ndarray, log: bool, acc: m.DataType, picks: Picks) -> np.ndarray:
    """Softmax or log-softmax of each row, the max subtracted; rows with
    NaN, +inf or only -inf by the readings."""
    top = rows.max(axis=-1, keepdims=True)
    shifted = rows - np.where(np.isfinite(top), top, 0.0)
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)
    out = shifted - np.log(total) if log else e / total
    if log and ("log-of-underflow", "literal") in picks:
        out = np.where(np.exp(out) < float(finfo(numpy_dtype(acc)).smallest_normal), -np.inf, out)
    posinf = (rows == np.inf).any(axis=-1) & ~np.isnan(rows).any(axis=-1)
    k = (rows == np.inf).sum(axis=-1, keepdims=True)
    low = -np.inf if log else 0.0
    if ("positive-infinity", "nan") in picks:
        special = np.full(rows.shape, np.nan)
    elif ("positive-infinity", "limit") in picks:
        special = np.where(rows == np.inf, -np.log(k) if log else 1.0 / k, low)
    else:  # literal: inf / inf at each +inf, finite / inf elsewhere
        special = np.where(rows == np.inf, np.nan, low)
    out = np.where(posinf[:, None], special, out)
    empty = (rows == -np.inf).all(axis=-1)
    n = rows.shape[-1]
    uniform = ("all-negative-infinity", "uniform") in picks
    out[empty] = (-np.log(n) if log else 1.0 / n) if uniform else np.nan
    out[np.isnan(rows).any(axis=-1)] = np.nan
    return out


def bounds(sem: Softmax, x: np.ndarray, axes: tuple[int, ...], expected: np.ndarray, unit: float,
           acc: m.DataType, out: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The strict and relaxed bounds of each element (module docstring);
    0 where the result is exact or not finite."""
    if sem.function is Function.HARDMAX:
        zero = np.zeros(x.shape)
        return zero, zero
    rows, order = _moved(x, tuple(sorted(axes)))
    n = rows.shape[-1]
    with np.errstate(all="ignore"):
        top = rows.max(axis=-1, keepdims=True)
        d = np.abs(rows - top)
        e = np.exp(rows - top)
        total = e.sum(axis=-1, keepdims=True)
        r = 2 * EXP_ULP * unit + 2 * (d + np.log(n)) * unit
        weighted = np.nansum(np.where(e > 0, r * e, 0.0), axis=-1, keepdims=True) / total
        value, _ = _moved(expected, tuple(sorted(axes)))
        found = []
        for g in (gamma_probable, gamma):
            sigma = float(g(np.array([max(n - 1, 0)]), unit)[0]) + weighted
            if sem.function is Function.SOFTMAX:
                b = (r + sigma + 2 * unit + _OWN) * np.abs(value) + float(finfo(numpy_dtype(acc)).smallest_normal)
            else:
                b = r + sigma + 2 * unit + 2 * LOG_ULP * unit * (np.abs(value) + np.log(total)) + _OWN * np.abs(value)
                b = b + n * float(finfo(numpy_dtype(acc)).smallest_normal) / total  # e_j flushed
            b = b + spacing_above(np.abs(value) + b, out)
            found.append(_back(b, x.shape, order))
    strict, relaxed = found
    exact = _exact_rows(rows, sem.function)
    return _fixed(strict, x, axes, exact, value, rows), _fixed(relaxed, x, axes, exact, value, rows)


def _fixed(b: np.ndarray, x: np.ndarray, axes: tuple[int, ...], exact: np.ndarray, value: np.ndarray,
           rows: np.ndarray) -> np.ndarray:
    """``b`` with 0 at exact rows and at elements whose value or input is not finite."""
    rb, order = _moved(b, tuple(sorted(axes)))
    rb = rb.copy()
    rb[exact] = 0.0
    rb[~np.isfinite(value) | ~np.isfinite(rows)] = 0.0
    rb[(np.isnan(rows) | (rows == np.inf)).any(axis=-1)] = 0.0  # NaN and +inf groups: exact values
    return _back(rb, x.shape, order)


def _exact_rows(rows: np.ndarray, function: Function) -> np.ndarray:
    """Rows whose softmax is exact: every value alike and finite, n a power of 2 (1/n)."""
    n = rows.shape[-1]
    alike = np.isfinite(rows).all(axis=-1) & (rows == rows[:, :1]).all(axis=-1)
    return alike & (function is Function.SOFTMAX) & (n & (n - 1) == 0)


@dataclass(frozen=True, slots=True, eq=False)
class SoftmaxOracle:
    """The oracle of one operator of the family (its reviewed semantics)."""

    spec: m.Spec
    semantics: Softmax

    @classmethod
    def of(cls, spec: m.Spec) -> SoftmaxOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> SoftmaxBatch:
        """Every case's expected values, bounds and readings, end to end.
        ``flush_subnormals`` changes nothing: the bound holds the
        accumulator's smallest normal number."""
        parts = [self._case(case, float16_accumulation) for case in cases]
        offsets = np.concatenate(([0], np.cumsum([p[0].size for p in parts]))).astype(np.int64)
        alternatives = tuple(replace_index(alt, int(lo)) for p, lo in zip(parts, offsets) for alt in p[3])
        expected = np.concatenate([p[0] for p in parts])
        expected.setflags(write=False)
        return SoftmaxBatch(expected, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]),
                            alternatives)

    def _case(self, case: Case, float16_accumulation: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                       list[Alternative]]:
        sem = self.semantics
        acc = m.DataType.FLOAT16 if float16_accumulation and case.dtype is m.DataType.FLOAT16 \
            else sem.accumulator(case.dtype)
        x = case.inputs[0].view().astype(np.float64)
        axes = axes_of(sem, case)
        nt = numpy_dtype(case.outputs[0].dtype)
        value = expected_values(sem, x, axes, acc)
        with np.errstate(over="ignore", invalid="ignore"):
            expected = value.astype(nt)
        strict, relaxed = bounds(sem, x, axes, value, unit_roundoff(acc), acc, nt)
        alts = self._readings(x, axes, acc, expected, nt)
        return expected.reshape(-1), strict.reshape(-1), relaxed.reshape(-1), alts

    def _readings(self, x: np.ndarray, axes: tuple[int, ...], acc: m.DataType, expected: np.ndarray,
                  nt: np.dtype) -> list[Alternative]:
        """Per ambiguity with a reading that gives another value here: its
        marker, then each such reading (`families.elementwise.readings`)."""
        flat = expected.reshape(-1)
        found: list[Alternative] = []
        for ambiguity in self.spec.ambiguities:
            if not _may_differ(ambiguity.id, x, axes):
                continue
            alts = []
            for reading in ambiguity.others:
                if (ambiguity.id, reading.id) not in READINGS:
                    continue
                with np.errstate(over="ignore", invalid="ignore"):
                    mine = expected_values(self.semantics, x, axes, acc, frozenset({(ambiguity.id, reading.id)}))
                    mine = mine.astype(nt).reshape(-1)
                differ = _differs(mine, flat)
                if (ambiguity.id, reading.id) in _EVALUATIONS:
                    differ &= ~range_lost(mine, flat)
                where = np.flatnonzero(differ)
                alts.append(Alternative(f"{PREFIX}{ambiguity.id}:{reading.id}", where, mine[where], Tier.STRICT,
                                        f"{ambiguity.id}: {reading.says}"))
            if any(a.index.size for a in alts):
                found += [marker(ambiguity, alts, flat), *alts]
        return found


#: Readings that evaluate the formula another way rather than give it another meaning: kept only
#: where they keep the exact result's range (`oracles.base.range_lost`).
_EVALUATIONS = frozenset({("log-of-underflow", "literal")})


def _may_differ(ambiguity: str, x: np.ndarray, axes: tuple[int, ...]) -> bool:
    """Whether the readings of ``ambiguity`` can differ on input ``x``
    (only those are evaluated: a sixth of the family's whole run on cpu,
    0.29 s -> 0.24 s for its 446 cases)."""
    tests: dict[str, Callable[[], bool]] = {
        "positive-infinity": lambda: bool((x == np.inf).any()),
        "all-negative-infinity": lambda: bool((x == -np.inf).any()),
        "nan": lambda: bool(np.isnan(x).any()),
        "signed-zero-tie": lambda: bool(((x == 0) & np.signbit(x)).any()),
        "axes-order": lambda: list(axes) != sorted(axes),
        "effective-rank": lambda: sum(s > 1 for s in x.shape) > 2,
    }
    test = tests.get(ambiguity)
    return test() if test is not None else True


def _differs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where ``a`` is another value than ``b`` (NaN is NaN; -0 is 0)."""
    return (a != b) & ~(np.isnan(a) & np.isnan(b))


def replace_index(alt: Alternative, offset: int) -> Alternative:
    """``alt`` with its indices counted from ``offset`` further on."""
    return Alternative(alt.name, alt.index + offset, alt.values, alt.tier, alt.reason)


@dataclass(frozen=True, slots=True, eq=False)
class SoftmaxBatch:
    """`SoftmaxOracle` bound to a batch: expected values, both bounds and
    the alternatives (indices end to end)."""

    expected: np.ndarray
    strict: np.ndarray
    relaxed: np.ndarray
    alternatives: tuple[Alternative, ...]

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        """The expectation over elements [lo, hi), alternatives cut to that range."""
        alts = []
        for alt in self.alternatives:
            keep = (alt.index >= lo) & (alt.index < hi)
            alts.append(Alternative(alt.name, alt.index[keep] - lo, alt.values[keep], alt.tier, alt.reason))
        return (Expectation(self.expected[lo:hi], self.strict[lo:hi], self.relaxed[lo:hi], tuple(alts), 0,
                            RELAXED_FACTOR, False),)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """Nothing per element: a softmax element depends on its whole group."""
        return ()
