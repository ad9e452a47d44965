"""The CPU reference's operator table: one small numpy function per operator.

DESIGN.md, "The oracle and the CPU reference are two things".  These functions
are written from the operator docs' formulas, independently of the formula
engine (nothing here imports `dmlconform.formula`), and compute in the tensor's
own type as a GPU does:

* float16 is computed in float32 and rounded once to float16 by the caller
  (float32 holds every fp16 sum, product and quotient closely enough that the
  double rounding is innocuous: 24 >= 2*11 + 2 bits);
* float32 is computed in float32.  float64 intermediates are used only where
  numpy has no float32 routine or a float32 step would be wrong, each named
  at its function: ``erf``/``erfc`` (numpy has none), ``swish`` (a subnormal
  sigmoid factor), ``mean`` (``a + b``
  overflows where ``(a + b) / 2`` does not), ``dequantize`` (an int32
  difference is not exact in float32), and the softplus pair, batch
  normalization and Adam, whose float32 intermediates overflow, underflow or
  cancel to +-inf, NaN or +-0 where the result is a finite number (a loss of
  range is wrong whatever formula is evaluated: DESIGN, Ambiguities);
* integer types are computed in the integer type itself, so results wrap
  modulo 2^bits like the hardware (``integer_overflow: wrap``); ``saturate``
  clips a wider result.  A FLOAT attribute meets an integer tensor exactly:
  comparisons use floor/ceil of the attribute, arithmetic its truncation.

Piecewise formulas use ``np.select`` in the doc's order, so the first matching
branch wins (shrink at ``x == Threshold`` is 0).  NaN propagation under
``nan_policy: propagate`` is applied once by the caller (`CpuBackend`), so the
functions here state the literal formula.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dmlconform.spec.model import DataType, Overflow

Result = np.ndarray | Mapping[str, np.ndarray]


@dataclass(frozen=True, slots=True)
class Call:
    """One operator call as the op functions see it.

    ``inputs``: logical (read-only) views in their storage type, broadcast to
    the output shape; ``attrs``: the case's attributes; ``dtype``: the case's
    data type; ``out``: the storage dtype of each output."""

    inputs: Mapping[str, np.ndarray]
    attrs: Mapping[str, float | int | bool | str]
    dtype: DataType
    out: Mapping[str, np.dtype]
    overflow: Overflow = Overflow.WRAP

    def x(self, name: str = "InputTensor") -> np.ndarray:
        """An input as it is stored (integers stay integers)."""
        return self.inputs[name]

    def wide(self, name: str = "InputTensor") -> np.ndarray:
        """A float input in float64: the work type of the operators whose
        float32 intermediates lose the result's range (module docstring)."""
        return self.inputs[name].astype(np.float64)

    def f(self, name: str = "InputTensor") -> np.ndarray:
        """A float input in its work type: float32 for float16/float32,
        float64 for float64.  Read-only: the input's own view when it is
        stored in the work type already (no copy)."""
        a = self.inputs[name]
        return a.astype(np.float64 if a.dtype == np.float64 else np.float32, copy=False)

    def a(self, name: str, default: float | str | None = None) -> np.float32:
        """A FLOAT attribute: float32, as the C struct holds it."""
        value = self.attrs.get(name, default)
        if value is None:
            raise KeyError(f"attribute {name} has no value and no default")
        return float32_of(value)

    def raw(self, name: str, default: float | bool | str | None = None) -> float | int | bool | str | None:
        return self.attrs.get(name, default)

    def num(self, name: str, default: float) -> float | int | bool | str:
        """An attribute as given (a number or an exact text), ``default`` when absent."""
        value = self.attrs.get(name)
        return default if value is None else value


Op = Callable[[Call], Result]


def float32_of(value: float | bool | str) -> np.float32:
    """A FLOAT member's value: a number rounded to float32, or an exact text
    such as ``"1/6"`` rounded once (ties to even) from its exact value."""
    if not isinstance(value, str):
        return np.float32(float(value))
    exact = Fraction(value)
    near = np.float32(float(exact))  # float64 first: wrong only at a float32 tie
    if not np.isfinite(near):
        return near
    candidates = [np.nextafter(near, np.float32(-np.inf)), near, np.nextafter(near, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.uint32)) & 1))


# -- integer helpers --------------------------------------------------------
def _is_int(a: np.ndarray) -> bool:
    return a.dtype.kind in "iu"


def _int_bounds(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _int_saturated(value: float, dtype: np.dtype, *, how: Callable[[float], int] = math.trunc) -> np.generic:
    """``value`` rounded by ``how`` and clipped into ``dtype`` (clip bounds)."""
    lo, hi = _int_bounds(dtype)
    if math.isnan(value):
        return dtype.type(0)
    if math.isinf(value):
        return dtype.type(hi if value > 0 else lo)
    return dtype.type(min(max(how(value), lo), hi))


def _int_wrapped(value: float, dtype: np.dtype) -> np.generic:
    """Truncated ``value`` modulo 2^bits (a bias added with wrap-around)."""
    lo, hi = _int_bounds(dtype)
    if not math.isfinite(value):
        return dtype.type(0)
    return dtype.type((math.trunc(value) - lo) % (hi - lo + 1) + lo)


def _compare_attr(x: np.ndarray, op: str, t: float) -> np.ndarray:
    """``x op t`` for a float attribute ``t``, exact for every input type:
    for integers ``x > t`` is ``x > floor(t)`` and ``x < t`` is ``x < ceil(t)``."""
    if not _is_int(x):
        t32 = np.float32(t)
        return {">": np.greater, "<": np.less, ">=": np.greater_equal, "<=": np.less_equal}[op](x, t32)
    if math.isnan(t):
        return np.zeros(x.shape, dtype=bool)
    lo, hi = _int_bounds(x.dtype)
    k = t if not math.isfinite(t) else math.floor(t) if op in (">", "<=") else math.ceil(t)
    if op in (">", ">="):
        if k > hi or (op == ">" and k == hi):
            return np.zeros(x.shape, dtype=bool)
        if k < lo or (op == ">=" and k == lo):
            return np.ones(x.shape, dtype=bool)
    else:
        if k < lo or (op == "<" and k == lo):
            return np.zeros(x.shape, dtype=bool)
        if k > hi or (op == "<=" and k == hi):
            return np.ones(x.shape, dtype=bool)
    fn = {">": np.greater, "<": np.less, ">=": np.greater_equal, "<=": np.less_equal}[op]
    return fn(x, x.dtype.type(k))


def _saturating(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray,
                overflow: Overflow) -> np.ndarray:
    """Integer ``fn(a, b)`` wrapping in the type, or clipped from int64 when
    ``overflow`` is saturate (types up to 32 bits; 64-bit types wrap)."""
    if overflow is Overflow.WRAP or a.dtype.itemsize >= 8:
        return fn(a, b)
    lo, hi = _int_bounds(a.dtype)
    return np.clip(fn(a.astype(np.int64), b.astype(np.int64)), lo, hi).astype(a.dtype)


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C integer division (toward zero); a division by zero gives 0."""
    zero = b == 0
    safe = np.where(zero, b.dtype.type(1), b)
    q = np.floor_divide(a, safe)
    if a.dtype.kind == "i":
        fix = (np.remainder(a, safe) != 0) & ((a < 0) != (safe < 0))
        q = q + fix.astype(q.dtype)
    return np.where(zero, a.dtype.type(0), q)


def _int_pow(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``a ** e`` in ``a``'s integer type by binary powering (wraps like the
    hardware); a negative exponent truncates 1/a**n: 0 unless |a| == 1."""
    e64 = e.astype(np.int64) if e.dtype != np.uint64 else e
    n = np.abs(e64).astype(np.uint64)
    one = a.dtype.type(1)
    out, base = np.full(a.shape, one, dtype=a.dtype), a.copy()
    for _ in range(64):
        if not n.any():
            break
        out = np.where((n & np.uint64(1)) != 0, out * base, out)
        base = base * base
        n = n >> np.uint64(1)
    if e.dtype.kind == "i":
        neg = e64 < 0
        unit = np.where((a == one) | ((a == a.dtype.type(-1)) if a.dtype.kind == "i" else False), out, a.dtype.type(0))
        out = np.where(neg, unit, out)
    return out


# -- erf: numpy has none, so float64 series and continued fraction ----------
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erfc64(x: np.ndarray) -> np.ndarray:
    """erfc in float64: ``1 - erf`` below 3, a continued fraction above
    (accurate in relative terms in the tail, which GELU of large negative x
    needs)."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    big = np.where(ax >= 3.0, ax, 3.0)
    # erfc(z) = exp(-z^2)/sqrt(pi) * 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + ...))))
    frac = np.zeros_like(big)
    for k in range(60, 0, -1):
        frac = (k / 2.0) / (big + frac)
    tail = np.exp(-big * big) / math.sqrt(math.pi) / (big + frac)
    tail = np.where(np.isinf(ax), 0.0, tail)
    small = 1.0 - _erf_series(np.where(ax < 3.0, ax, 0.0))
    pos = np.where(ax >= 3.0, tail, small)
    return np.where(x < 0, 2.0 - pos, np.where(np.isnan(x), np.nan, pos))


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (1*3*...*(2n+1)),
    every term positive (no cancellation); for |x| < 3."""
    term = x.copy()
    total = x.copy()
    x2 = x * x
    for n in range(1, 90):
        term = term * (2.0 * x2) / (2 * n + 1)
        total = total + term
    return _TWO_OVER_SQRT_PI * np.exp(-x2) * total


def erf64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    inner = _erf_series(np.where(ax < 3.0, x, 0.0))
    outer = np.sign(x) * (1.0 - erfc64(np.where(ax >= 3.0, ax, 3.0)))
    return np.where(ax < 3.0, inner, outer)


# -- activations --------------------------------------------------------------
def _sigmoid(v: np.ndarray) -> np.ndarray:
    # 1 / (1 + exp(-x)); for x < 0 the same value as exp(x) / (1 + exp(x)),
    # which does not overflow exp(-x) to inf (and so keeps the subnormal tail).
    one = v.dtype.type(1)
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, one / (one + e), e / (one + e))


def _hard_sigmoid(v: np.ndarray, alpha: np.float32, beta: np.float32) -> np.ndarray:
    return np.maximum(v.dtype.type(0), np.minimum(alpha * v + beta, v.dtype.type(1)))


def _elu(c: Call) -> np.ndarray:
    x = c.f()
    return np.where(x >= 0, x, c.a("Alpha", 1.0) * np.expm1(x))


def _celu(c: Call) -> np.ndarray:
    x, alpha = c.f(), c.a("Alpha", 1.0)
    zero = x.dtype.type(0)
    return np.maximum(zero, x) + np.minimum(zero, alpha * np.expm1(x / alpha))


def _scaled_elu(c: Call) -> np.ndarray:
    x, alpha, gamma = c.f(), c.a("Alpha", 1.67326319217681884765625), c.a("Gamma", 1.05070102214813232421875)
    return np.where(x > 0, gamma * x, gamma * (alpha * np.exp(x) - alpha))


def _shrink(c: Call) -> np.ndarray:
    x = c.x()
    bias, threshold = float(c.a("Bias", 0.0)), float(c.a("Threshold", 0.5))
    if _is_int(x):
        return np.select([_compare_attr(x, ">", threshold), _compare_attr(x, "<", -threshold)],
                         [_int_add(x, -bias), _int_add(x, bias)], x.dtype.type(0))
    x = c.f()
    b32 = np.float32(bias)
    return np.select([x > np.float32(threshold), x < -np.float32(threshold)], [x - b32, x + b32], x.dtype.type(0))


def _int_add(x: np.ndarray, value: float) -> np.ndarray:
    """``x + value`` for a FLOAT ``value``: the exact sum truncated toward
    zero, wrapped into ``x``'s type.  With value = k + f (k its truncation,
    |f| < 1 of value's sign) and y = x + k: trunc(y + f) is y, or one step
    toward zero when f pulls y's magnitude down.  Exact through int64 for
    types up to 32 bits; 64-bit types add k in the type (wrapping)."""
    if not math.isfinite(value):
        return np.zeros(x.shape, dtype=x.dtype)
    k = math.trunc(value)
    f = value - k
    if x.dtype.itemsize >= 8:
        return x + _int_wrapped(k, x.dtype)
    if abs(k) >= 2 ** 32:  # float32 values this large are integers (f == 0): only k mod 2^32 matters
        k = k % 2 ** 32
    y = x.astype(np.int64) + np.int64(k)
    if f > 0:
        y = np.where(y < 0, y + 1, y)
    elif f < 0:
        y = np.where(y > 0, y - 1, y)
    return y.astype(x.dtype)


def _thresholded_relu(c: Call) -> np.ndarray:
    x = c.f()
    return np.where(x > c.a("Alpha", 1.0), x, x.dtype.type(0))


def _leaky_relu(c: Call) -> np.ndarray:
    x = c.f()
    return np.where(x >= 0, x, c.a("Alpha", 0.01) * x)


def _prelu(c: Call) -> np.ndarray:
    x, s = _native_or_float(c, "InputTensor", "SlopeTensor")
    return np.where(x >= 0, x, s * x)


def _relu(c: Call) -> np.ndarray:
    (x,) = _native_or_float(c, "InputTensor")
    return np.maximum(x.dtype.type(0), x)


def _relu_grad(c: Call) -> np.ndarray:
    x, dy = _native_or_float(c, "InputTensor", "InputGradientTensor")
    return np.where(x > 0, dy, dy.dtype.type(0))


def _log1p_exp_tail(y: np.ndarray) -> np.ndarray:
    """ln(1 + exp(y)) - max(y, 0) = log1p(exp(-|y|)): the part of a softplus
    that never overflows (0 <= it <= ln 2)."""
    return np.log1p(np.exp(-np.abs(y)))


def _softplus(c: Call) -> np.ndarray:
    # ln(1 + exp(s*x)) / s = [s*x > 0] x + log1p(exp(-|s*x|)) / s: the linear
    # part is x itself, so neither exp(s*x) nor the product s*x (3.4e38 * 2)
    # overflows where the result does not.  float64 (module docstring).
    x, s = c.wide(), np.float64(c.a("Steepness", 1.0))
    sx = s * x
    return np.where(sx > 0, x, 0.0) + _log1p_exp_tail(sx) / s


def _parametric_softplus(c: Call) -> np.ndarray:
    # Alpha * ln(1 + exp(Beta*x)) = [Beta*x > 0] (Alpha*Beta) x + Alpha * log1p(exp(-|Beta*x|)):
    # Alpha*Beta of two float32 values is exact in float64, so Alpha = 2^-126, Beta = 2 at x = 3.4e38
    # gives 8, not 2^-126 * inf.  float64 (module docstring).
    x = c.wide()
    alpha, beta = np.float64(c.a("Alpha", 1.0)), np.float64(c.a("Beta", 1.0))
    bx = beta * x
    return np.where(bx > 0, (alpha * beta) * x, 0.0) + alpha * _log1p_exp_tail(bx)


def _gelu(c: Call) -> np.ndarray:
    # 0.5 * x * (1 + erf(x / sqrt 2)) == 0.5 * x * erfc(-x / sqrt 2); float64
    # because numpy has no erf (see the module docstring).
    x = c.f().astype(np.float64)
    return 0.5 * x * erfc64(-x / math.sqrt(2.0))


def _swish(x: np.ndarray, c: Call) -> np.ndarray:
    # x * Sigmoid(s * x).  float64 for float32: where s*x < -87 the sigmoid
    # factor is a float32 subnormal with few significant bits while the
    # product still has many (x * sigmoid(x) at x = -94 is ~1e-39).
    wide = x.astype(np.float64)
    return wide * _sigmoid(np.float64(c.a("SigmoidInputScale", 1.0)) * wide)


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Op:
    return lambda c: fn(c.f())


def _attr_unary(fn: Callable[[np.ndarray, Call], np.ndarray]) -> Op:
    return lambda c: fn(c.f(), c)


ACTIVATIONS: Mapping[str, Op] = {
    "ACTIVATION_CELU": _celu,
    "ACTIVATION_ELU": _elu,
    "ACTIVATION_GELU": _gelu,
    "ACTIVATION_HARD_SIGMOID": _attr_unary(lambda x, c: _hard_sigmoid(x, c.a("Alpha", 0.2), c.a("Beta", 0.5))),
    "ACTIVATION_HARD_SWISH": _attr_unary(
        lambda x, c: x * _hard_sigmoid(x, c.a("Alpha", "1/6"), c.a("Beta", 0.5))),
    "ACTIVATION_IDENTITY": _unary(lambda x: x),
    "ACTIVATION_LEAKY_RELU": _leaky_relu,
    "ACTIVATION_LINEAR": _attr_unary(lambda x, c: c.a("Alpha") * x + c.a("Beta")),
    "ACTIVATION_PARAMETERIZED_RELU": _prelu,
    "ACTIVATION_PARAMETRIC_SOFTPLUS": _parametric_softplus,
    "ACTIVATION_RELU": _relu,
    "ACTIVATION_RELU_GRAD": _relu_grad,
    "ACTIVATION_SCALED_ELU": _scaled_elu,
    "ACTIVATION_SCALED_TANH": _attr_unary(lambda x, c: c.a("Alpha", 1.0) * np.tanh(c.a("Beta", 0.5) * x)),
    "ACTIVATION_SHRINK": _shrink,
    "ACTIVATION_SIGMOID": _unary(_sigmoid),
    "ACTIVATION_SOFTPLUS": _softplus,
    "ACTIVATION_SOFTSIGN": _unary(lambda x: x / (x.dtype.type(1) + np.abs(x))),
    "ACTIVATION_SWISH": _attr_unary(_swish),
    "ACTIVATION_TANH": _unary(np.tanh),
    "ACTIVATION_THRESHOLDED_RELU": _thresholded_relu,
}


# -- element-wise: unary float math -------------------------------------------
MATH: Mapping[str, Callable[[np.ndarray], np.ndarray]] = {
    "ELEMENT_WISE_ACOS": np.arccos, "ELEMENT_WISE_ACOSH": np.arccosh, "ELEMENT_WISE_ASIN": np.arcsin,
    "ELEMENT_WISE_ASINH": np.arcsinh, "ELEMENT_WISE_ATAN": np.arctan, "ELEMENT_WISE_ATANH": np.arctanh,
    "ELEMENT_WISE_CEIL": np.ceil, "ELEMENT_WISE_COS": np.cos, "ELEMENT_WISE_COSH": np.cosh,
    "ELEMENT_WISE_ERF": erf64, "ELEMENT_WISE_EXP": np.exp, "ELEMENT_WISE_FLOOR": np.floor,
    "ELEMENT_WISE_LOG": np.log, "ELEMENT_WISE_RECIP": np.reciprocal, "ELEMENT_WISE_SIN": np.sin,
    "ELEMENT_WISE_SINH": np.sinh, "ELEMENT_WISE_SQRT": np.sqrt, "ELEMENT_WISE_TAN": np.tan,
    "ELEMENT_WISE_TANH": np.tanh,
}


def _native_or_float(c: Call, *names: str) -> list[np.ndarray]:
    """Inputs as stored when integer, in the float work type otherwise."""
    return [c.x(n) if _is_int(c.x(n)) else c.f(n) for n in names]


def _abs(c: Call) -> np.ndarray:
    (x,) = _native_or_float(c, "InputTensor")
    return np.abs(x)


def _negate(c: Call) -> np.ndarray:
    (x,) = _native_or_float(c, "InputTensor")
    return np.negative(x)


def _sign(c: Call) -> np.ndarray:
    # -1 if x < 0, 1 if x > 0, 0 otherwise: -0 and NaN give +0 (the doc).
    (x,) = _native_or_float(c, "InputTensor")
    if _is_int(x):
        return np.sign(x)
    return np.select([x < 0, x > 0], [x.dtype.type(-1), x.dtype.type(1)], x.dtype.type(0))


def _identity(c: Call) -> np.ndarray:
    return c.x().copy()


def _int_attr(value: float | str | None, default: float) -> int | float:
    """An attribute met by an integer tensor, truncated toward zero (a
    Python int; infinities stay float)."""
    v = default if value is None else float(Fraction(value)) if isinstance(value, str) else value
    return v if isinstance(v, int) or not math.isfinite(v) else math.trunc(v)


def _int_minmax(x: np.ndarray | float, k: float, fn: Callable[[float, float], float]) -> np.ndarray | int | float:
    """``fn(x, k)`` (max or min) for an integer tensor and an exact bound that
    may lie outside the type: the result is then the bound itself (a Python
    number, fitted to the type by `_fit`)."""
    if not isinstance(x, np.ndarray) or math.isnan(k):
        return x if isinstance(x, np.ndarray) else fn(x, k)
    lo, hi = _int_bounds(x.dtype)
    keep, take = (k <= lo, k > hi) if fn is max else (k >= hi, k < lo)
    if keep:
        return x
    if take:
        return k
    return (np.maximum if fn is max else np.minimum)(x, x.dtype.type(k))


def _fit(v: np.ndarray | float, like: np.ndarray, overflow: Overflow) -> np.ndarray:
    """A result of `_int_minmax` as an array of ``like``'s type: an
    out-of-range bound wraps or saturates per ``overflow``."""
    if isinstance(v, np.ndarray):
        return v
    if overflow is Overflow.SATURATE or not math.isfinite(v):
        return np.full(like.shape, _int_saturated(float(v), like.dtype))
    return np.full(like.shape, _int_wrapped(v, like.dtype))


def _float_bounds(c: Call, x: np.ndarray) -> tuple[np.generic, np.generic]:
    lo, hi = c.num("Min", -math.inf), c.num("Max", math.inf)
    minmax_type = c.raw("MinMaxDataType")
    if isinstance(minmax_type, str) and "FLOAT16" in minmax_type.upper():  # the DML_SCALAR_UNION holds a half
        return x.dtype.type(np.float16(float(lo))), x.dtype.type(np.float16(float(hi)))
    return x.dtype.type(float32_of(lo)), x.dtype.type(float32_of(hi))


def _clip(c: Call) -> np.ndarray:
    # max(Min, min(x, Max)).  Integer tensors: the exact result truncated
    # toward zero, which is clipping by the truncated bounds (trunc is
    # monotonic and keeps integers), fitted per integer_overflow.
    (x,) = _native_or_float(c, "InputTensor")
    if _is_int(x):
        inner = _int_minmax(x, _int_attr(c.raw("Max"), math.inf), min)
        return _fit(_int_minmax(inner, _int_attr(c.raw("Min"), -math.inf), max), x, c.overflow)
    lo, hi = _float_bounds(c, x)
    return np.maximum(lo, np.minimum(x, hi))


def _clip_grad(c: Call) -> np.ndarray:
    x, g = _native_or_float(c, "InputTensor", "InputGradientTensor")
    lo, hi = c.num("Min", -math.inf), c.num("Max", math.inf)
    lo32: float
    hi32: float
    if _is_int(x) and not isinstance(lo, (float, str)) and not isinstance(hi, (float, str)):
        lo32, hi32 = int(lo), int(hi)  # a DML_SCALAR_UNION in the integer type: exact, even 2^63 - 1
    else:
        lo32, hi32 = float(float32_of(lo)), float(float32_of(hi))
    zero = g.dtype.type(0)
    return np.select([_compare_attr(x, "<=", lo32), _compare_attr(x, ">=", hi32)], [zero, zero], g)


def _threshold(c: Call) -> np.ndarray:
    # max(x, Min); integer tensors as in `_clip`.
    (x,) = _native_or_float(c, "InputTensor")
    if _is_int(x):
        return _fit(_int_minmax(x, _int_attr(c.raw("Min"), -math.inf), max), x, c.overflow)
    return np.maximum(x, c.a("Min"))


def _real_power(x: np.ndarray, e: np.ndarray | np.floating | float) -> np.ndarray:
    """The real ``x ^ e``: numpy's power, but NaN for a base of -inf to a
    finite non-integer power, as for any negative base (IEEE 754 gives +inf
    or +0 there: the other reading of ``ieee-pow``)."""
    out = np.asarray(np.power(x, e))
    negative = np.isneginf(x) & np.isfinite(e) & (np.trunc(e) != e)
    return np.where(negative, np.nan, out).astype(out.dtype) if negative.any() else out


def _constant_pow(c: Call) -> np.ndarray:
    return _real_power(c.f(), c.a("Exponent"))


def _pow(c: Call) -> np.ndarray:
    x, e = c.x(), c.x("ExponentTensor")
    if _is_int(x) and _is_int(e):
        return _int_pow(x, e)
    if _is_int(x):  # float exponent on an integer base: exact in float64, then truncated
        return np.trunc(np.power(x.astype(np.float64), e.astype(np.float64)))
    return _real_power(c.f(), e.astype(c.f().dtype))


def _is_infinity(c: Call) -> np.ndarray:
    x = c.x()
    mode = str(c.raw("InfinityMode", "DML_IS_INFINITY_MODE_EITHER")).upper()
    mode = {"0": "EITHER", "1": "POSITIVE", "2": "NEGATIVE"}.get(mode, mode)
    if mode.endswith("POSITIVE"):
        return np.isposinf(x)
    if mode.endswith("NEGATIVE"):
        return np.isneginf(x)
    return np.isinf(x)


# -- element-wise: binary ------------------------------------------------------
def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], *, saturate: bool = False) -> Op:
    def op(c: Call) -> np.ndarray:
        a, b = _native_or_float(c, "ATensor", "BTensor")
        if saturate and _is_int(a):
            return _saturating(fn, a, b, c.overflow)
        return fn(a, b)
    return op


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _trunc_div(a, b) if _is_int(a) else a / b


def _mean(c: Call) -> np.ndarray:
    # (a + b) / 2 without the overflow of a + b: int64 for integers (then
    # truncated toward zero), float64 for float32 (one rounding at the end).
    a, b = c.x("ATensor"), c.x("BTensor")
    if _is_int(a):
        wide = np.uint64 if a.dtype.kind == "u" else np.int64
        return _trunc_div(a.astype(wide) + b.astype(wide), np.full(a.shape, 2, dtype=wide)).astype(a.dtype)
    return (a.astype(np.float64) + b.astype(np.float64)) / 2.0


def _mod_floor(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # a - b * floor(a / b): Python's modulo.  An infinite b gives the
    # formula's own NaN (inf * floor(+-0)), as for truncate.  Integer b == 0: a (the formula
    # with the undefined a / 0 taken as 0, as for divide).
    if _is_int(a):
        zero = b == 0
        return np.where(zero, a, np.remainder(a, np.where(zero, b.dtype.type(1), b)))
    return np.where(np.isinf(b), np.nan, np.remainder(a, b))


def _mod_trunc(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # a - b * trunc(a / b): C's fmod (exact); an infinite b gives the formula's
    # NaN (inf * trunc(+-0)), not fmod's a; integer b == 0 gives a.
    if _is_int(a):
        zero = b == 0
        return np.where(zero, a, np.fmod(a, np.where(zero, b.dtype.type(1), b)))
    return np.where(np.isinf(b), np.nan, np.fmod(a, b))


def _difference_square(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = a - b
    return d * d


def _shift(left: bool) -> Op:
    def op(c: Call) -> np.ndarray:
        a, b = c.x("ATensor"), c.x("BTensor")
        bits = a.dtype.itemsize * 8
        big = b.astype(np.uint64) >= bits  # a negative count reads as a huge unsigned one
        unsigned = np.dtype(f"u{a.dtype.itemsize}")
        u = np.ascontiguousarray(a).view(unsigned)  # logical shifts: the encoding, not the sign
        n = np.where(big, 0, b).astype(unsigned)
        shifted = (np.left_shift(u, n) if left else np.right_shift(u, n)).view(a.dtype)
        return np.where(big, a.dtype.type(0), shifted)
    return op


def _truth(x: np.ndarray) -> np.ndarray:
    return x != 0


BINARY: Mapping[str, Op] = {
    "ELEMENT_WISE_ADD": _binary(np.add, saturate=True),
    "ELEMENT_WISE_ADD1": _binary(np.add, saturate=True),
    "ELEMENT_WISE_SUBTRACT": _binary(np.subtract, saturate=True),
    "ELEMENT_WISE_MULTIPLY": _binary(np.multiply, saturate=True),
    "ELEMENT_WISE_DIVIDE": _binary(_divide),
    "ELEMENT_WISE_MAX": _binary(np.maximum),
    "ELEMENT_WISE_MIN": _binary(np.minimum),
    "ELEMENT_WISE_MEAN": _mean,
    "ELEMENT_WISE_MODULUS_FLOOR": _binary(_mod_floor),
    "ELEMENT_WISE_MODULUS_TRUNCATE": _binary(_mod_trunc),
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _binary(_difference_square, saturate=False),
    "ELEMENT_WISE_ATAN_YX": _binary(np.arctan2),
    "ELEMENT_WISE_BIT_SHIFT_LEFT": _shift(True),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": _shift(False),
    "ELEMENT_WISE_LOGICAL_AND": lambda c: _truth(c.x("ATensor")) & _truth(c.x("BTensor")),
    "ELEMENT_WISE_LOGICAL_OR": lambda c: _truth(c.x("ATensor")) | _truth(c.x("BTensor")),
    "ELEMENT_WISE_LOGICAL_XOR": lambda c: _truth(c.x("ATensor")) != _truth(c.x("BTensor")),
    "ELEMENT_WISE_LOGICAL_NOT": lambda c: ~_truth(c.x()),
    "ELEMENT_WISE_LOGICAL_EQUALS": lambda c: np.equal(c.x("ATensor"), c.x("BTensor")),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": lambda c: np.greater(c.x("ATensor"), c.x("BTensor")),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": lambda c: np.greater_equal(c.x("ATensor"), c.x("BTensor")),
    "ELEMENT_WISE_LOGICAL_LESS_THAN": lambda c: np.less(c.x("ATensor"), c.x("BTensor")),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": lambda c: np.less_equal(c.x("ATensor"), c.x("BTensor")),
}


# -- the rest -------------------------------------------------------------------
def _if(c: Call) -> np.ndarray:
    # a if cond != 0 else b, in the values' own type (NaN is a value here).
    return np.where(c.x("ConditionTensor") != 0, c.x("ATensor"), c.x("BTensor"))


def _dequantize(c: Call) -> np.ndarray:
    # (input - zero_point) * scale; float64 because the integer difference is
    # not exact in float32 (one rounding at the end instead of two).
    x, zp = c.x().astype(np.float64), c.x("ZeroPointTensor").astype(np.float64)
    return (x - zp) * c.x("ScaleTensor").astype(np.float64)


def _batch_norm(c: Call) -> np.ndarray:
    # Scale * ((Input - Mean) / sqrt(Variance + Epsilon)) + Bias; a null
    # FusedActivation (the only one a case can name) is the identity.
    # float64 (module docstring): Input - Mean of two float32 values, its
    # quotient by sqrt(2^-149) and the product with Scale all fit, so only a
    # result beyond float32's range rounds to +-inf.
    x, mean, var = c.wide(), c.wide("MeanTensor"), c.wide("VarianceTensor")
    scale, bias = c.wide("ScaleTensor"), c.wide("BiasTensor")
    return scale * ((x - mean) / np.sqrt(var + np.float64(c.a("Epsilon", 0.0)))) + bias


def _adam(c: Call) -> Mapping[str, np.ndarray]:
    # float64 (module docstring): G * G of a float32 G fits, and so does the
    # step size at a tiny TrainingStep.  The outputs are rounded once, each
    # from the exact M and V (the step reads V, not V rounded to its type).
    x, m, v = c.wide("InputParametersTensor"), c.wide("InputFirstMomentTensor"), c.wide("InputSecondMomentTensor")
    g, t = c.wide("GradientTensor"), c.wide("TrainingStepTensor")
    lr, b1, b2, eps = (np.float64(c.a(n)) for n in ("LearningRate", "Beta1", "Beta2", "Epsilon"))
    m = b1 * m + (1.0 - b1) * g
    v = b2 * v + (1.0 - b2) * g * g
    with np.errstate(divide="ignore", invalid="ignore"):
        den = _one_minus_power(b1, t)
        # Beta1 = 1 divides by an exact 0: +-inf, or NaN where the numerator is 0 too, which it is for
        # a tiny T in any float type, float64 included (the oracle's exact arithmetic has no x / 0 and
        # keeps float64's value): there the doc's formula as written, in float64
        num = np.sqrt(np.where(den == 0, 1.0 - np.power(b2, t), _one_minus_power(b2, t)))
        alpha = num / den
    x = x - lr * alpha * m / (np.sqrt(v) + eps)
    return {"OutputParametersTensor": x, "OutputFirstMomentTensor": m, "OutputSecondMomentTensor": v}


def _one_minus_power(b: np.float64, t: np.ndarray) -> np.ndarray:
    """1 - b^t, as -expm1(t ln b) for 0 < b != 1: at t = 3.3e-34, b^t rounds
    to 1 even in float64 and 1 - b^t to 0 (the step size 0 / 0 = NaN), where
    the value is 3.5e-38.  Otherwise the doc's formula as written, in
    float64 (C's pow: 1^t = 1 for every t)."""
    if b > 0 and b != 1:
        return -np.expm1(t * np.log(b))
    return 1.0 - np.power(b, t)


def _value_scale_2d(c: Call) -> np.ndarray:
    # Scale * Input + Bias, Bias one value per channel (dimension 1 of NCHW).
    x = c.f()
    bias = c.raw("Bias", 0.0)
    b = np.asarray(bias if isinstance(bias, (tuple, list)) else [bias], dtype=np.float32)
    if b.size > 1 and x.ndim == 4:
        b = b.reshape(1, -1, 1, 1)
    return c.a("Scale", 1.0) * x + b


OTHER: Mapping[str, Op] = {
    "ELEMENT_WISE_ABS": _abs,
    "ELEMENT_WISE_NEGATE": _negate,
    "ELEMENT_WISE_SIGN": _sign,
    "ELEMENT_WISE_IDENTITY": _identity,
    "ELEMENT_WISE_CLIP": _clip,
    "ELEMENT_WISE_CLIP1": _clip,
    "ELEMENT_WISE_CLIP_GRAD": _clip_grad,
    "ELEMENT_WISE_CLIP_GRAD1": _clip_grad,
    "ELEMENT_WISE_THRESHOLD": _threshold,
    "ELEMENT_WISE_CONSTANT_POW": _constant_pow,
    "ELEMENT_WISE_POW": _pow,
    "ELEMENT_WISE_IS_INFINITY": _is_infinity,
    "ELEMENT_WISE_IF": _if,
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": _dequantize,
    "BATCH_NORMALIZATION": _batch_norm,
    "ADAM_OPTIMIZER": _adam,
    "VALUE_SCALE_2D": _value_scale_2d,
}


# -- the reviewed-formula operators (bitwise, IS_NAN, ROUND: docs/bitwise.md) -----------------
#
# Written plainly from the pages, sharing nothing with the formula engine.  Bitwise operators
# work on each element's encoding whatever its type ("the tensor data type is ignored except for
# determining the width of each element"), so every tensor is viewed as the unsigned integer type
# of its width.  ROUND works in float64, where ``floor(|x| + 0.5)`` is exact for every FLOAT32 and
# FLOAT16 value.


def as_bits(a: np.ndarray) -> np.ndarray:
    """``a``'s elements as the unsigned integers of their encoding (a view)."""
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _bitwise(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[Call], np.ndarray]:
    def op(c: Call) -> np.ndarray:
        a, b = c.x("ATensor"), c.x("BTensor")
        return fn(as_bits(a), as_bits(b)).view(a.dtype)
    return op


def _bit_not(c: Call) -> np.ndarray:
    x = c.x()
    return np.invert(as_bits(x)).view(x.dtype)


def _bit_count(c: Call) -> np.ndarray:
    return np.bitwise_count(as_bits(c.x()))


def _is_nan(c: Call) -> np.ndarray:
    return np.isnan(c.x())


def _round(c: Call) -> np.ndarray:
    """The three DML_ROUNDING_MODEs; halves away from zero for TOWARD_INFINITY
    (the ROUND page and DML_ROUNDING_MODE's table: -2.5 -> -3, 2.5 -> 3)."""
    x = c.x().astype(np.float64)
    mode = str(c.raw("RoundingMode", "DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"))
    if mode.endswith("TOWARD_ZERO"):
        y = np.trunc(x)
    elif mode.endswith("TOWARD_INFINITY"):
        y = np.copysign(np.floor(np.abs(x) + 0.5), x)
    else:
        y = np.rint(x)
    return y.astype(c.x().dtype)


BITWISE_OPS: Mapping[str, Callable[[Call], np.ndarray]] = {
    "ELEMENT_WISE_BIT_AND": _bitwise(np.bitwise_and),
    "ELEMENT_WISE_BIT_OR": _bitwise(np.bitwise_or),
    "ELEMENT_WISE_BIT_XOR": _bitwise(np.bitwise_xor),
    "ELEMENT_WISE_BIT_NOT": _bit_not,
    "ELEMENT_WISE_BIT_COUNT": _bit_count,
    "ELEMENT_WISE_IS_NAN": _is_nan,
    "ELEMENT_WISE_ROUND": _round,
}


#: Every operator the CPU reference computes, by spec operator name.
OPS: Mapping[str, Op] = types.MappingProxyType({
    **ACTIVATIONS,
    **{name: _unary(fn) for name, fn in MATH.items()},
    **BINARY,
    **OTHER,
    **BITWISE_OPS,
})

#: Operators whose ``ScaleBias`` member, when a case gives one, applies to the
#: input first: f(x * Scale + Bias) (the DML_SCALE_BIAS doc).
SCALE_BIAS_OPS: frozenset[str] = frozenset(
    {*MATH, "ELEMENT_WISE_ABS", "ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1",
     "ELEMENT_WISE_THRESHOLD", "ELEMENT_WISE_CONSTANT_POW", "ELEMENT_WISE_POW"})
