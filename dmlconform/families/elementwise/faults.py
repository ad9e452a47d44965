"""Planted faults of the element-wise operators (bitwise, ROUND:
docs/bitwise.md; the softplus pair) for the ``faulty`` backend: each
rewrites an output the way a plausible bug would, after the reference
computed it.  `FAULTS` names them; tests/test_mutants.py checks that each
is caught."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.elementwise.reference import as_bits, float32_of
from dmlconform.spec import model as m


def _output(case: Case, buffers: Buffers) -> np.ndarray:
    """The first output's logical view, writable."""
    out = case.outputs[0]
    buf = buffers[out.name]
    return writable_view(out, buf)


def _input(case: Case, index: int = 0) -> np.ndarray:
    """An input's logical values as the case holds them (before any in-place write)."""
    t = case.inputs[index]
    return np.broadcast_to(t.view(), case.outputs[0].sizes)


def round_half_away(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """ROUND's HALVES_TO_NEAREST_EVEN computed with halves away from zero (C's ``round``)."""
    if spec.operator != "ELEMENT_WISE_ROUND" or not str(case.attribute_map().get("RoundingMode", "")).endswith(
            "HALVES_TO_NEAREST_EVEN"):
        return
    x = _input(case).astype(np.float64)
    _output(case, buffers)[...] = np.copysign(np.floor(np.abs(x) + 0.5), x)


def bit_count_low_byte(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """BIT_COUNT counting the set bits of the lowest byte only."""
    if spec.operator == "ELEMENT_WISE_BIT_COUNT":
        _output(case, buffers)[...] = np.bitwise_count(as_bits(np.ascontiguousarray(_input(case))) & 0xFF)


def bitwise_float_values(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """BIT_AND/OR/XOR/NOT on float tensors computed on their values converted
    to integers, not on their encodings."""
    ops = {"ELEMENT_WISE_BIT_AND": np.bitwise_and, "ELEMENT_WISE_BIT_OR": np.bitwise_or,
           "ELEMENT_WISE_BIT_XOR": np.bitwise_xor}
    if not case.dtype.is_float or (spec.operator not in ops and spec.operator != "ELEMENT_WISE_BIT_NOT"):
        return
    ints = [np.nan_to_num(_input(case, i).astype(np.float64)).clip(-2.0**62, 2.0**62).astype(np.int64)
            for i in range(len(case.inputs))]
    result = np.invert(ints[0]) if spec.operator == "ELEMENT_WISE_BIT_NOT" else ops[spec.operator](*ints)
    _output(case, buffers)[...] = result.astype(np.float64)


def _packed_input(case: Case) -> np.ndarray:
    """The first input's logical values in its own shape, contiguous."""
    return np.ascontiguousarray(case.inputs[0].view())


def wrong_branch_at_threshold(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """shrink with ``x >= Threshold`` instead of ``x > Threshold``."""
    attrs = case.attribute_map()
    if "Threshold" not in attrs or "Bias" not in attrs:
        return
    threshold, bias = np.float32(attrs["Threshold"]), np.float32(attrs["Bias"])
    x, y = _packed_input(case), _output(case, buffers)
    at = x == x.dtype.type(threshold)
    y[at] = (x[at].astype(np.float32) - bias).astype(y.dtype)


def sign_of_negative_zero(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """-1 where the input is -0 (sign(-0) = -1)."""
    if case.dtype.is_float:
        x, y = _packed_input(case), _output(case, buffers)
        if x.shape == y.shape:
            y[(x == 0) & np.signbit(x)] = -1


def softplus_overflowing(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """SOFTPLUS and PARAMETRIC_SOFTPLUS as the doc writes them, ln(1 + exp(s*x)),
    step by step in the work type (float32 for FLOAT16): exp overflows to inf
    from s*x = 88.7 where the result is about s*x, finite (a loss of range,
    never a reading: DESIGN, Ambiguities)."""
    if spec.operator not in ("ACTIVATION_SOFTPLUS", "ACTIVATION_PARAMETRIC_SOFTPLUS") or not case.dtype.is_float:
        return
    attrs = case.attribute_map()
    x = _packed_input(case)
    work = np.float64 if x.dtype == np.float64 else np.float32
    x = x.astype(work)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if spec.operator == "ACTIVATION_SOFTPLUS":
            s = work(float32_of(attrs.get("Steepness", 1.0)))
            y = np.log(work(1) + np.exp(s * x)) / s
        else:
            alpha, beta = work(float32_of(attrs.get("Alpha", 1.0))), work(float32_of(attrs.get("Beta", 1.0)))
            y = alpha * np.log(work(1) + np.exp(beta * x))
    out = _output(case, buffers)
    out[...] = y.astype(out.dtype)


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "round-half-away": round_half_away,
    "bit-count-low-byte": bit_count_low_byte,
    "bitwise-float-values": bitwise_float_values,
    "wrong-branch-at-threshold": wrong_branch_at_threshold,
    "sign-of-negative-zero": sign_of_negative_zero,
    "softplus-overflowing": softplus_overflowing,
}
