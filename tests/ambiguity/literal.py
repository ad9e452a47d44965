"""Backends written straight from the doc's formula, one per reading of its
ambiguities (issue #22, "Done means"): what an honest implementer, who
never saw this harness, would write.

* ``LITERAL``: the formula as C reads it: branches tested in doc order,
  NaN failing every comparison (so it takes ``otherwise``), an integer
  tensor promoted to float next to a FLOAT attribute and converted back
  toward zero, integer sums wrapping.
* ``OTHER``: every other reading at once: NaN in, NaN out; the later of two
  overlapping branches wins; FLOAT attributes cast to the integer type
  first; integer results saturating.
* ``NEITHER``: takes no reading: NaN gives 1, an overflowing sum gives 0.

Each is the cpu reference with its own ``run`` for the four operators.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.cpu import CpuBackend, writable_view
from dmlconform.cases.model import Case, numpy_dtype
from dmlconform.spec.model import Spec

Op = Callable[[Mapping[str, np.ndarray], Mapping[str, Any], np.dtype], np.ndarray]


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
    return _store(out, dtype, saturate=False)


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
    return _nan_to(shrink_literal(ins, attrs, dtype), ins["InputTensor"], 1.0).astype(dtype)


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


LITERAL: dict[str, Op] = {"ACTIVATION_SHRINK": shrink_literal, "ACTIVATION_THRESHOLDED_RELU": trelu_literal,
                          "ELEMENT_WISE_SIGN": sign_literal, "ELEMENT_WISE_ADD": add_literal}
OTHER: dict[str, Op] = {"ACTIVATION_SHRINK": shrink_other, "ACTIVATION_THRESHOLDED_RELU": trelu_other,
                        "ELEMENT_WISE_SIGN": sign_other, "ELEMENT_WISE_ADD": add_other}
NEITHER: dict[str, Op] = {"ACTIVATION_SHRINK": shrink_neither, "ACTIVATION_THRESHOLDED_RELU": trelu_neither,
                          "ELEMENT_WISE_SIGN": sign_neither, "ELEMENT_WISE_ADD": add_neither}


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
        writable_view(out, buffers[out.name])[...] = result
