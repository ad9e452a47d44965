"""GEMM's FusedActivation: the element-wise oracle of the activation composed
on the contraction's expectation.

Issue #24 item 2; docs/contraction.md "FusedActivation".  The GEMM result
is known to lie within [T - B, T + B] (B the contraction's strict or
relaxed bound, `families.contraction.oracle`).  The activations the cases use are
monotone (`families.contraction.cases.MONOTONE`), so the activated result lies
between the activation's values at the two ends.  The element-wise oracle
of the activation's spec (`families.elementwise.oracle.FormulaOracle`) evaluates
it at the rounded result and at both ends (each rounded outward to the
output type), once for all of them, so:

* expected: the activation at T rounded to the output type;
* bound (each tier): the larger distance from the expected value to the
  activation at an end of that tier's interval, plus the activation's own
  bound (largest over the three points), times the tier's factor for the
  relaxed one;
* the ULP budget: the activation spec's ``tolerance`` for the type, else its
  oracle's.

Where the activation reads its input (the ambiguity
``fused-activation-rounding``: the unrounded sum, primary, or the result
rounded to the output type) changes nothing here: both inputs lie within
the interval, so the bound holds either reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from dmlconform.families.contraction.cases import Activation
from dmlconform.families.elementwise.formula_oracle import OracleResult, evaluate
from dmlconform.families.elementwise.oracle import FormulaOracle
from dmlconform.oracles.base import Expectation
from dmlconform.packaged import shipped_specs
from dmlconform.spec import model as m
from dmlconform.spec.load import read_spec


@dataclass
class Activations:
    """The element-wise oracles of the fused activations one run met, by
    operator (a run owns this cache: `families.contraction.oracle.ContractionOracle`);
    their specs are the shipped ones."""

    made: dict[str, FormulaOracle] = field(default_factory=dict)

    def get(self, operator: str) -> FormulaOracle:
        if operator not in self.made:
            spec, _ = read_spec(shipped_specs() / f"{operator}.yaml")  # an activation's formula: no family semantics
            self.made[operator] = FormulaOracle.of(spec)
        return self.made[operator]


def compose(oracle: FormulaOracle, activation: Activation, exp: Expectation) -> Expectation:
    """``exp`` (the family's, in the output type) through ``activation``;
    each of its alternatives (a reading) goes through it too, with its own
    bound (0 where it has none): a reading stays a reading after the activation."""
    composed = _compose(oracle, activation, exp)
    if not exp.alternatives:
        return composed
    alternatives = []
    for alt in exp.alternatives:
        bound = alt.bound if alt.bound is not None else np.zeros(alt.values.shape)
        one = _compose(oracle, activation, Expectation(alt.values, bound, None, (), 0, exp.relaxed_factor, False))
        alternatives.append(replace(alt, values=one.expected, bound=one.bound_strict))
    return replace(composed, alternatives=tuple(alternatives))


def _compose(oracle: FormulaOracle, activation: Activation, exp: Expectation) -> Expectation:
    """`compose` of ``exp``'s values and bounds (its alternatives aside)."""
    mid = exp.expected
    nt = mid.dtype
    strict = exp.bound_strict if exp.bound_strict is not None else np.zeros(mid.shape)
    relaxed = exp.bound_relaxed if exp.bound_relaxed is not None else strict * exp.relaxed_factor
    points = np.concatenate([mid, _outward(mid, -strict), _outward(mid, strict), _outward(mid, -relaxed),
                             _outward(mid, relaxed)])
    result = _activated(oracle, activation, points, nt)
    n = mid.size
    values = result.expected.reshape(5, n).astype(np.float64)
    own = (result.bound_strict if result.bound_strict is not None else np.zeros(5 * n)).reshape(5, n)
    expected = result.expected[:n].copy()
    expected.setflags(write=False)
    with np.errstate(invalid="ignore"):
        spread_strict = np.fmax(np.abs(values[1] - values[0]), np.abs(values[2] - values[0]))
        spread_relaxed = np.fmax(np.abs(values[3] - values[0]), np.abs(values[4] - values[0]))
    spread_strict = np.where(np.isfinite(values[0]), np.nan_to_num(spread_strict, nan=0.0), 0.0)
    spread_relaxed = np.where(np.isfinite(values[0]), np.nan_to_num(spread_relaxed, nan=0.0), 0.0)
    own_strict = own[:3].max(axis=0)
    own_relaxed = np.maximum(own_strict, own[3:].max(axis=0))
    ulp = {t.dtype: t.ulp for t in oracle.spec.tolerance}.get(_dtype(nt), result.ulp)
    return Expectation(expected, spread_strict + own_strict, spread_relaxed + result.relaxed_factor * own_relaxed,
                       (), ulp, max(exp.relaxed_factor, result.relaxed_factor), False)


def _outward(mid: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """``mid + bound`` rounded away from ``mid`` to ``mid``'s type (``mid``
    itself where it or the bound is not finite)."""
    nt = mid.dtype
    with np.errstate(all="ignore"):
        exact = mid.astype(np.float64) + bound
        end = exact.astype(nt)
        short = np.where(bound >= 0, end.astype(np.float64) < exact, end.astype(np.float64) > exact)
        end = np.where(short, np.nextafter(end, np.where(bound >= 0, np.inf, -np.inf).astype(nt)), end)
    return np.where(np.isfinite(mid) & np.isfinite(end), end, mid).astype(nt)


def _activated(oracle: FormulaOracle, activation: Activation, x: np.ndarray, nt: np.dtype) -> OracleResult:
    """The activation's oracle on ``x`` (its input tensor), rounded to ``nt``."""
    spec = oracle.spec
    name = oracle.inputs.get("InputTensor", "InputTensor")
    return evaluate(oracle.formula, {name: x}, dict(activation.attributes), dtype=_dtype(nt),
                    nan_policy=spec.formula.nan_policy, overflow=spec.formula.integer_overflow)


def _dtype(nt: np.dtype) -> m.DataType:
    return m.DataType.FLOAT16 if nt == np.float16 else m.DataType.FLOAT32
