"""The contraction family's oracle (GEMM): expected values in float64 and a
bound from the error analysis of summation, per output element.

Issue #24 item 2; DESIGN.md "Operator families" and "Tolerances";
docs/contraction.md derives the model and works one real case through it.

Per output element the oracle computes, in float64 (every product of two
float32 or FLOAT16 values is exact there), the value
``T = Alpha * sum_k A[m,k] B[k,n] + Beta * C[m,n]``, the sum of the terms'
magnitudes ``S = |Alpha| sum_k |A[m,k] B[k,n]| + |Beta| |C[m,n]|`` and the
count of roundings an implementation may make along any path,
``n = K + 2`` (K products summed in any order, the scaling by Alpha, the
addend).  With ``u`` the unit roundoff of the accumulator (float32's for
FLOAT16 tensors, the primary reading of the reviewed ambiguity, unless the
backend declares FLOAT16 accumulation):

* FAIL beyond ``gamma_n(u) S + e64 + spacing``: the worst case of summation
  in any order, with or without FMA (Higham, "Accuracy and Stability of
  Numerical Algorithms", 2nd ed., eq. 3.5), plus the oracle's own float64
  error ``e64 = gamma_K(2^-53) S`` and one spacing of the output type at
  the result (its rounding, and the expected value's);
* QUALITY_WARNING beyond ``gamma~_n(lambda, u) S + e64 + spacing``, the
  probabilistic bound of Higham and Mary (SIAM J. Sci. Comput. 41(5), 2019,
  Theorem 2.8) with ``lambda = LAMBDA``: rounding errors that behave like
  independent ones stay within it but for a probability of
  ``2 exp(-lambda^2 / 2)`` per element;
* PASS within it.

Where every value is an integer and ``S`` fits the significand of the
accumulator and of the output, every partial sum is exact in any order:
the bound is 0 and the result must be exact (0 ULP).  NaN and infinite
results are compared as values (any NaN matches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, finfo
from dmlconform.families.contraction import fused
from dmlconform.families.contraction import oracle_integer as integer
from dmlconform.families.contraction.cases import Activation, Operands, activation, operands, scales
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.families.elementwise.oracle import FormulaOracle
from dmlconform.oracles.base import Expectation, gamma, gamma_probable, spacing_above, unit_roundoff
from dmlconform.plan import CONTRACTION_PRODUCTS
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["ContractionBatch", "ContractionOracle"]

#: Roundings beyond the K products' sum: the scaling by Alpha and the addend Beta * C.
ROUNDINGS_BEYOND_K = 2
#: The same for MATRIX_MULTIPLY_INTEGER_TO_FLOAT: each operand's dequantization ((A - AZeroPoint) * AScale,
#: one rounding each, or the integer sum's conversion and the scales' product), the scaling and the bias.
ROUNDINGS_QUANTIZED = 3
_U64 = 2.0 ** -53


@dataclass(frozen=True, slots=True, eq=False)
class ContractionOracle:
    """The oracle of one contraction operator (its reviewed semantics)."""

    spec: m.Spec
    semantics: Contraction
    activations: fused.Activations = field(default_factory=fused.Activations)

    @classmethod
    def of(cls, spec: m.Spec) -> ContractionOracle:
        if not isinstance(spec.semantics, Contraction):
            raise ValueError(f"{spec.operator}: no reviewed contraction semantics (specs/reviewed/{spec.operator}.yaml)")
        return cls(spec, spec.semantics)

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> ContractionBatch | integer.IntegerBatch:
        """Each case's T, S and exactness end to end, and its K.
        ``flush_subnormals`` changes nothing here: a flushed subnormal is
        within one spacing of the output type."""
        if not cases[0].outputs[0].dtype.is_float:
            return integer.bind(self.spec, self.semantics, cases)
        act = activation(self.semantics, cases[0])  # a batch shares its attributes
        parts = [_terms(self.semantics, case, float16_accumulation) for case in cases]
        sizes = [p.expected.size for p in parts]
        expected = _joined([p.expected for p in parts])
        expected.setflags(write=False)
        return ContractionBatch(expected, _joined([p.magnitude for p in parts]),
                                _joined([p.exact for p in parts]), np.array([p.k for p in parts], np.int64),
                                np.array([p.roundings for p in parts], np.int64),
                                np.concatenate(([0], np.cumsum(sizes, dtype=np.int64))), parts[0].unit,
                                cases[0].outputs[0].dtype,
                                None if act is None else (self.activations.get(act.operator), act))


def _joined(arrays: list[np.ndarray]) -> np.ndarray:
    """The cases' arrays end to end: a lone case's own array, not a copy
    (a large case's arrays are a good part of the run's memory)."""
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


@dataclass(frozen=True, slots=True, eq=False)
class _Terms:
    """One case, flat in C order of the output: T rounded to the output
    type, S (an upper bound, float32) and exactness; its K, ``roundings``
    (n, the roundings along any evaluation) and ``unit`` (u)."""

    expected: np.ndarray
    magnitude: np.ndarray
    exact: np.ndarray
    k: int
    roundings: int
    unit: float


def accumulator(semantics: Contraction, dtype: m.DataType, float16_accumulation: bool) -> m.DataType:
    """The type sums are bounded in: FLOAT16 where the backend declares it
    accumulates FLOAT16 tensors so, else the reviewed reading."""
    if float16_accumulation and dtype is m.DataType.FLOAT16:
        return m.DataType.FLOAT16
    return semantics.accumulator(dtype)


def _terms(semantics: Contraction, case: Case, float16_accumulation: bool) -> _Terms:
    if semantics.quantized:
        ops, scale = integer.dequantized(semantics, case)
        alpha, beta, extra = 1.0, 1.0, ROUNDINGS_QUANTIZED
    else:
        ops, scale = operands(semantics, case), None
        (alpha, beta), extra = scales(semantics, case), ROUNDINGS_BEYOND_K
    value, magnitude = _products(ops)
    if scale is not None:  # AScale * BScale, per row and column: exact in float64, float32 for S
        value *= scale
        magnitude *= np.abs(scale).astype(magnitude.dtype)
    value *= alpha
    magnitude *= abs(alpha)
    integers = _integral(ops) and float(alpha).is_integer() and float(beta).is_integer() and scale is None
    if ops.c is not None:
        c = np.broadcast_to(ops.c, value.shape)
        value += np.multiply(c, beta, dtype=np.float64)  # exact: a float32 or FLOAT16 value times Beta
        magnitude += abs(beta) * np.abs(c).astype(magnitude.dtype, copy=False)
    magnitude = _upper(magnitude, int(ops.a.shape[-1]) + extra - ROUNDINGS_BEYOND_K)
    acc = accumulator(semantics, case.outputs[0].dtype, float16_accumulation)
    digits = min(_digits(acc), _digits(case.outputs[0].dtype))
    exact = np.logical_and(integers, magnitude <= 2.0 ** digits).reshape(-1)
    expected = value.reshape(-1).astype(numpy_dtype(case.outputs[0].dtype))
    k = int(ops.a.shape[-1])
    return _Terms(expected, magnitude.reshape(-1), exact, k, k + extra, unit_roundoff(acc))


def _products(ops: Operands) -> tuple[np.ndarray, np.ndarray]:
    """sum_k A B in float64 and sum_k |A B| in float32 (float64 for wider
    operands), batches broadcast.  Finite operands go through matmul: T in
    float64 (products of float32 or FLOAT16 values exact, sums within
    gamma_K(2^-53) S); S needs no more than float32 (`_upper` makes it an
    upper bound), and a float32 matmul costs half a float64 one.  A NaN or
    inf among the operands goes through the explicit sum of products, so
    that IEEE's rules for inf and NaN hold whatever the BLAS."""
    a, b = ops.a, ops.b
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return _explicit(a, b)
    value = np.matmul(a.astype(np.float64), b.astype(np.float64))
    work = np.float64 if max(a.dtype.itemsize, b.dtype.itemsize) > 4 else np.float32
    return value, np.matmul(np.abs(a).astype(work, copy=False), np.abs(b).astype(work, copy=False))


def _explicit(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sum_k A B and sum_k |A B| as explicit float64 sums of products, a
    block of A's rows of one batch at a time (`plan.CONTRACTION_PRODUCTS`
    products at most, or one row where a row alone has more)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a3 = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b3 = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    rows, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    value, magnitude = np.empty((a3.shape[0], rows, n)), np.empty((a3.shape[0], rows, n))
    step = max(1, CONTRACTION_PRODUCTS // max(k * n, 1))
    for i in range(a3.shape[0]):
        right = b3[i].astype(np.float64)
        for lo in range(0, rows, step):
            products = a3[i, lo:lo + step, :, None].astype(np.float64) * right[None, :, :]
            value[i, lo:lo + step] = products.sum(axis=1)
            magnitude[i, lo:lo + step] = np.abs(products, out=products).sum(axis=1)
    return value.reshape(batch + (rows, n)), magnitude.reshape(batch + (rows, n))


def _upper(s: np.ndarray, k: int) -> np.ndarray:
    """S as a float32 upper bound.  ``s`` was summed from non-negative
    terms with K + 3 roundings of float32 (or fewer of float64) at most, so
    it is at least (1 - gamma_{K+3}(2^-24)) times the true S less what its
    products lost below float32's normal range (2^-150 each at most, K
    2^-149 in all, added); divided by that factor, with 2^-20 to spare for
    this multiplication's own rounding, it is above it (infinite where
    float32 overflows: no bound there)."""
    factor = np.float32((1 + 2.0 ** -20) / (1 - float(gamma(np.array([k + 3]), 2.0 ** -24)[0])))
    with np.errstate(over="ignore"):
        return (s.astype(np.float32, copy=False) + np.float32(k * 2.0 ** -149)) * factor


def _integral(ops: Operands) -> bool:
    """Whether every operand value is an integer (NaN and inf are not).
    Each operand's first elements are looked at first: random data stops there."""
    for x in (ops.a, ops.b, ops.c):
        if x is not None and not (np.all(np.mod(x.flat[:64], 1) == 0) and np.all(np.mod(x, 1) == 0)):
            return False
    return True


def _digits(dtype: m.DataType) -> int:
    return int(finfo(numpy_dtype(dtype)).nmant) + 1


@dataclass(frozen=True, slots=True, eq=False)
class ContractionBatch:
    """`ContractionOracle` bound to a batch: T rounded to the output type,
    S and exactness end to end, each case's K and where its elements start
    (``offsets``, the total last)."""

    expected: np.ndarray
    magnitude: np.ndarray
    exact: np.ndarray
    ks: np.ndarray
    roundings: np.ndarray
    offsets: np.ndarray
    unit: float
    out: m.DataType
    #: The fused activation's element-wise oracle and settings (None: none), composed on the result.
    activation: tuple[FormulaOracle, Activation] | None = None

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        """Expected values in the output type and both bounds over [lo, hi):
        ``coefficient * S`` plus one spacing of the output type, 0 where the
        result must be exact or is not finite.  Two float64 arrays, filled
        in place (a large case's temporaries are its memory, and fresh
        memory is slow to touch: bench/bench_gemm.py)."""
        expected = self.expected[lo:hi]
        n = self.roundings.astype(np.float64)
        own = gamma(n, _U64)  # the oracle's own float64 sums
        relaxed = self._times_s(gamma(n, self.unit) + own, lo, hi, np.empty(expected.shape))
        # spacing(|round(T)|) >= spacing(|T|): the same binade or above; the strict array holds the sum until then
        spacing = spacing_above(np.add(np.abs(expected), relaxed), expected.dtype)
        strict = self._times_s(gamma_probable(n, self.unit) + own, lo, hi, np.empty(expected.shape))
        strict += spacing
        relaxed += spacing
        zero = ~np.isfinite(expected)
        zero |= self.exact[lo:hi]
        if zero.any():
            strict[zero] = 0.0
            relaxed[zero] = 0.0
        plain = Expectation(expected, strict, relaxed, (), 0, RELAXED_FACTOR, False, bias_scale=strict)
        return (plain if self.activation is None else fused.compose(*self.activation, plain),)

    def _times_s(self, coefficients: np.ndarray, lo: int, hi: int, out: np.ndarray) -> np.ndarray:
        """``out`` holding each case's coefficient times S over [lo, hi)
        (a loop over the batch's cases, not its elements)."""
        for i, coefficient in enumerate(coefficients.tolist()):
            start, stop = max(int(self.offsets[i]), lo), min(int(self.offsets[i + 1]), hi)
            if start < stop:
                np.multiply(self.magnitude[start:stop], coefficient, out=out[start - lo:stop - lo])
        return out

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """What decides an element's bound: its product count K and the sum of the terms' magnitudes S."""
        owner = np.searchsorted(self.offsets, flat, side="right") - 1
        return (("K", [float(x) for x in self.ks[owner].tolist()]),
                ("S", [float(x) for x in self.magnitude[flat].tolist()]))
