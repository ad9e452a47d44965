"""Backends written straight from the doc's formula, one per reading of its
ambiguities (issue #22, "Done means"): what an honest implementer, who
never saw this harness, would write.

* ``LITERAL``: the formula as C reads it on x86: branches tested in doc
  order, NaN failing every comparison (so it takes ``otherwise``), an
  integer tensor promoted to float next to a FLOAT attribute (an integer
  pow computed with C's pow in double) and converted back as x86 does
  (numpy's ``astype``: cvttsd2si's INT_MIN out of range), integer sums
  wrapping, an integer division by zero giving a quotient of 0 (AArch64),
  C's fmod and pow with their IEEE special values.
* ``OTHER``: every other reading at once: NaN in, NaN out; the later of two
  overlapping branches wins; FLOAT attributes cast to the integer type
  first; integer results saturating; an integer division by zero giving
  every bit set (torch on CUDA), or 0 (numpy), the doc's formula for a
  modulus by +-inf (NaN).
* ``NEITHER``: takes no reading: NaN gives 1, an overflowing sum gives 0,
  a modulus by 0 or by +-inf gives 42, pow(NaN, y) gives 5.

Each is the cpu reference with its own ``run`` for some operators (an
``Op`` returning None leaves a case to the cpu reference).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, writable_view
from dmlconform.spec.model import Spec, numpy_dtype

Op = Callable[[Mapping[str, np.ndarray], Mapping[str, Any], np.dtype], np.ndarray | None]


def _store(values: np.ndarray, dtype: np.dtype, *, saturate: bool) -> np.ndarray:
    """Float or Python-integer ``values`` in ``dtype``: floats rounded once;
    integers toward zero, NaN 0, then wrapped or saturated."""
    if dtype.kind == "f":
        return values.astype(dtype)
    info = np.iinfo(dtype)
    if values.dtype == object:
        ints = values
    else:
        wide = values.astype(np.float64)
        ints = np.where(np.isnan(wide), 0.0, np.trunc(wide))
    if saturate:
        return np.clip(ints, info.min, info.max).astype(dtype)
    span = int(info.max) - int(info.min) + 1
    return (np.mod(ints - int(info.min), span) + int(info.min)).astype(dtype)


def _x86(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float ``values`` in an integer ``dtype`` as C on x86 converts them:
    cvttsd2si into int32 (int64 for 64-bit types and UINT32), its low bits
    kept (numpy's own casts are those instructions)."""
    wide = np.int64 if dtype.itemsize == 8 or dtype == np.uint32 else np.int32
    return values.astype(np.float64).astype(wide).astype(dtype)


def _nan_to(values: np.ndarray, x: np.ndarray, fill: float) -> np.ndarray:
    """``values`` with ``fill`` where ``x`` is NaN (a float input)."""
    if x.dtype.kind != "f":
        return values
    return np.where(np.isnan(x), fill, values)


def _work(x: np.ndarray) -> np.ndarray:
    """C's arithmetic type for ``x`` beside a float: float (double for double)."""
    return x.astype(np.float64 if x.dtype == np.float64 else np.float32)


# -- ACTIVATION_SHRINK -------------------------------------------------------------
def shrink_literal(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    x = _work(ins["InputTensor"])
    bias, threshold = np.float32(attrs["Bias"]), np.float32(attrs["Threshold"])
    out = np.where(x > threshold, x - bias, np.where(x < -threshold, x + bias, np.float32(0)))
    return out.astype(dtype) if dtype.kind == "f" else _x86(out, dtype)


def shrink_numpy(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    """Issue #32 item 5: the formula in float64 and numpy's own cast (its
    contiguous loop vectorised by 4 with a scalar tail, so an element's
    conversion depends on its position: x86-vector or indefinite)."""
    x = ins["InputTensor"].astype(np.float64)
    bias, threshold = float(np.float32(attrs["Bias"])), float(np.float32(attrs["Threshold"]))
    return np.where(x > threshold, x - bias, np.where(x < -threshold, x + bias, 0.0)).astype(dtype)


def shrink_other(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    x = ins["InputTensor"]
    if dtype.kind == "f":
        w = _work(x)
        bias, threshold = np.float32(attrs["Bias"]), np.float32(attrs["Threshold"])
        out = np.where(w < -threshold, w + bias, np.where(w > threshold, w - bias, np.float32(0)))
        return _store(_nan_to(out, x, np.nan), dtype, saturate=True)
    bias, threshold = int(np.float32(attrs["Bias"])), int(np.float32(attrs["Threshold"]))
    xo = x.astype(object)
    out = np.where(xo < -threshold, xo + bias, np.where(xo > threshold, xo - bias, 0))
    return _store(np.asarray(out, dtype=object), dtype, saturate=True)


def shrink_neither(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    out = shrink_literal(ins, attrs, dtype)
    assert out is not None
    return _nan_to(out, ins["InputTensor"], 1.0).astype(dtype)


# -- ACTIVATION_THRESHOLDED_RELU -----------------------------------------------------
def trelu_literal(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    x = _work(ins["InputTensor"])
    return _store(np.where(x > np.float32(attrs["Alpha"]), x, np.float32(0)), dtype, saturate=False)


def trelu_other(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    return _nan_to(trelu_literal(ins, attrs, dtype), ins["InputTensor"], np.nan).astype(dtype)


def trelu_neither(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    return _nan_to(trelu_literal(ins, attrs, dtype), ins["InputTensor"], 1.0).astype(dtype)


# -- ELEMENT_WISE_SIGN ---------------------------------------------------------------
def sign_literal(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    x = ins["InputTensor"]
    return np.where(x < 0, -1, np.where(x > 0, 1, 0)).astype(dtype)


def sign_other(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    return _nan_to(sign_literal(ins, attrs, dtype), ins["InputTensor"], np.nan).astype(dtype)


def sign_neither(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    return _nan_to(sign_literal(ins, attrs, dtype), ins["InputTensor"], 1.0).astype(dtype)


# -- ELEMENT_WISE_ADD ----------------------------------------------------------------
def add_literal(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    a, b = ins["ATensor"], ins["BTensor"]
    if dtype.kind == "f":
        return (a + b).astype(dtype)
    return _store(np.asarray(a.astype(object) + b.astype(object), dtype=object), dtype, saturate=False)


def add_other(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    a, b = ins["ATensor"], ins["BTensor"]
    if dtype.kind == "f":
        return (a + b).astype(dtype)
    return _store(np.asarray(a.astype(object) + b.astype(object), dtype=object), dtype, saturate=True)


def add_neither(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    out = add_literal(ins, attrs, dtype)
    if dtype.kind == "f":
        return out
    exact = ins["ATensor"].astype(object) + ins["BTensor"].astype(object)
    return np.where(exact == out.astype(object), out, 0).astype(dtype)


# -- ELEMENT_WISE_DIVIDE, ELEMENT_WISE_MODULUS_FLOOR --------------------------------
def _integer_division(a: np.ndarray, b: np.ndarray, dtype: np.dtype, zero: str, *, modulus: bool) -> np.ndarray:
    """Floor modulus (or truncated quotient) of exact integers, wrapped
    into ``dtype``; where b = 0: ``zero`` is "quotient" (a quotient of 0),
    "ones" (every bit set, as CUDA gives: 2^32 - 1 for a 64-bit a in
    [0, 2^32)), "zero" or "42"."""
    ao, bo = a.astype(object), b.astype(object)
    safe = np.where(bo == 0, 1, bo)
    if modulus:
        exact = ao - safe * (ao // safe)  # Python's // is floor division: the floor modulus
    else:
        q = abs(ao) // abs(safe)
        exact = np.where((ao < 0) == (safe < 0), q, -q)
    ones = np.where((ao >= 0) & (ao < 2 ** 32), 2 ** 32 - 1, -1) if dtype.itemsize == 8 else -1  # CUDA's 32-bit path
    by_zero = {"quotient": ao if modulus else 0, "ones": ones, "zero": 0, "42": 42}[zero]
    out = np.where(bo == 0, by_zero, exact)
    return _store(np.asarray(out, dtype=object), dtype, saturate=False)


def _float_modulus(a: np.ndarray, b: np.ndarray, dtype: np.dtype, infinite: float | None) -> np.ndarray:
    """numpy's floor modulus (C's fmod, b added where the signs differ);
    ``infinite``, if given, where b is +-inf and a finite."""
    out = np.remainder(a, b)
    if infinite is not None:
        out = np.where(np.isinf(b) & np.isfinite(a), infinite, out)
    return out.astype(dtype)


def mod_literal(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    a, b = ins["ATensor"], ins["BTensor"]
    return _float_modulus(a, b, dtype, None) if dtype.kind == "f" else _integer_division(a, b, dtype, "quotient",
                                                                                          modulus=True)


def mod_other(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    a, b = ins["ATensor"], ins["BTensor"]
    return _float_modulus(a, b, dtype, np.nan) if dtype.kind == "f" else _integer_division(a, b, dtype, "ones",
                                                                                            modulus=True)


def mod_zero(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray | None:
    if dtype.kind == "f":
        return None
    return _integer_division(ins["ATensor"], ins["BTensor"], dtype, "zero", modulus=True)


def mod_neither(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    a, b = ins["ATensor"], ins["BTensor"]
    return _float_modulus(a, b, dtype, 42.0) if dtype.kind == "f" else _integer_division(a, b, dtype, "42",
                                                                                          modulus=True)


def divide(zero: str) -> Op:
    def run(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray | None:
        if dtype.kind == "f":
            return None
        return _integer_division(ins["ATensor"], ins["BTensor"], dtype, zero, modulus=False)
    return run


# -- ELEMENT_WISE_POW ----------------------------------------------------------------
def pow_literal(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    x, y = ins["InputTensor"], ins["ExponentTensor"]
    if dtype.kind == "f":
        return np.power(x, y).astype(dtype)
    return _x86(np.power(x.astype(np.float64), y.astype(np.float64)), dtype)  # C's pow(double, double)


def pow_other(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray | None:
    x, y = ins["InputTensor"], ins["ExponentTensor"]
    if dtype.kind == "f":  # the real x^y: NaN in, NaN out; NaN for -inf (a negative base) to a non-integer power
        with np.errstate(invalid="ignore"):
            real = np.power(x, y)
        nan = np.isnan(x) | np.isnan(y) | (np.isneginf(x) & np.isfinite(y) & (np.trunc(y) != y))
        return np.where(nan, np.nan, real).astype(dtype)
    out = np.frompyfunc(_saturating_pow(np.iinfo(dtype)), 2, 1)(x.astype(object), y.astype(object))
    return np.asarray(out, dtype=object).astype(dtype)


def _saturating_pow(info: np.iinfo) -> Callable[[int, int], int]:
    """Exact integer pow (0 for a negative power of |a| > 1), saturated."""
    def one(a: int, n: int) -> int:
        if n < 0:
            value = 0 if abs(a) != 1 else a ** (-n % 2 or 2)
        elif abs(a) <= 1 or n * max(abs(a).bit_length(), 1) <= 128:
            value = a ** n
        else:
            value = info.max + 1 if a > 0 or n % 2 == 0 else info.min - 1
        return int(min(max(value, int(info.min)), int(info.max)))
    return one


def pow_neither(ins: Mapping[str, np.ndarray], attrs: Mapping[str, Any], dtype: np.dtype) -> np.ndarray:
    out = pow_literal(ins, attrs, dtype)
    if dtype.kind != "f":
        return out
    return np.where(np.isnan(ins["InputTensor"]), 5.0, out).astype(dtype)


LITERAL: dict[str, Op] = {"ACTIVATION_SHRINK": shrink_literal, "ACTIVATION_THRESHOLDED_RELU": trelu_literal,
                          "ELEMENT_WISE_SIGN": sign_literal, "ELEMENT_WISE_ADD": add_literal,
                          "ELEMENT_WISE_MODULUS_FLOOR": mod_literal, "ELEMENT_WISE_DIVIDE": divide("quotient"),
                          "ELEMENT_WISE_POW": pow_literal}
OTHER: dict[str, Op] = {"ACTIVATION_SHRINK": shrink_other, "ACTIVATION_THRESHOLDED_RELU": trelu_other,
                        "ELEMENT_WISE_SIGN": sign_other, "ELEMENT_WISE_ADD": add_other,
                        "ELEMENT_WISE_MODULUS_FLOOR": mod_other, "ELEMENT_WISE_DIVIDE": divide("ones"),
                        "ELEMENT_WISE_POW": pow_other}
#: numpy's own computation and cast (`shrink_numpy`).
NUMPY: dict[str, Op] = {"ACTIVATION_SHRINK": shrink_numpy}
#: numpy's reading of an integer modulus by zero: 0.
ZERO: dict[str, Op] = {"ELEMENT_WISE_MODULUS_FLOOR": mod_zero}
NEITHER: dict[str, Op] = {"ACTIVATION_SHRINK": shrink_neither, "ACTIVATION_THRESHOLDED_RELU": trelu_neither,
                          "ELEMENT_WISE_SIGN": sign_neither, "ELEMENT_WISE_ADD": add_neither,
                          "ELEMENT_WISE_MODULUS_FLOOR": mod_neither, "ELEMENT_WISE_DIVIDE": divide("42"),
                          "ELEMENT_WISE_POW": pow_neither}


class LiteralBackend(CpuBackend):
    """The cpu reference, except for the operators of ``ops``, which it
    computes with its own function (inputs broadcast to the output)."""

    def __init__(self, ops: Mapping[str, Op]) -> None:
        super().__init__()
        self.ops = dict(ops)

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        if spec.operator not in self.ops:
            super().run(spec, case, buffers)
            return
        verdict = self.supports(spec, case)
        if not verdict.supported:
            raise NotSupportedError(verdict.reason)
        out = case.outputs[0]
        ins = {t.name: np.broadcast_to(t.view(buffers.get(t.name, t.buffer)), out.sizes) for t in case.inputs}
        with np.errstate(all="ignore"):
            result = self.ops[spec.operator](ins, dict(case.attributes), numpy_dtype(out.dtype))
        if result is None:
            super().run(spec, case, buffers)
            return
        writable_view(out, buffers[out.name])[...] = result
