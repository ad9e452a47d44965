"""``faulty``: the CPU reference with planted faults, chosen by
``--backend-arg faults=NAME,NAME``.

A self-test backend that anyone can run from a fresh clone: it shows what a
failing backend looks like in every report, drives the baseline worked
example of the README, and is the mutant check of the default suite
(tests/test_mutants.py: each fault must be caught, by name).  Each fault
breaks one thing after the reference has computed (or, for
``rejects-float16``, before).  DESIGN.md "The oracle and the CPU reference
are two things".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from dmlconform.backends import faulty_bitwise as bitwise
from dmlconform.backends import faulty_contraction as contraction
from dmlconform.backends import faulty_reduction as reduction
from dmlconform.backends import faulty_sequence as sequence
from dmlconform.backends import faulty_softmax as softmax
from dmlconform.backends import faulty_value_scale as value_scale
from dmlconform.backends.base import BackendInfo, NotSupportedError, Support
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.errors import InputError
from dmlconform.spec import model as m

Buffers = Mapping[str, np.ndarray]


def _writable_output(case: Case, buffers: Buffers) -> np.ndarray:
    out = case.outputs[0]
    buf = buffers[out.name]
    item = buf.dtype.itemsize
    return np.lib.stride_tricks.as_strided(buf, out.sizes, tuple(s * item for s in out.strides))


def _input(case: Case) -> np.ndarray:
    return np.ascontiguousarray(case.inputs[0].view())


def one_ulp(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Every finite float result one ULP up."""
    if case.dtype.is_float:
        y = _writable_output(case, buffers)
        finite = np.isfinite(y)
        y[finite] = np.nextafter(y[finite], np.array(np.inf, y.dtype))


def wrong_branch_at_threshold(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """shrink with ``x >= Threshold`` instead of ``x > Threshold``."""
    attrs = case.attribute_map()
    if "Threshold" not in attrs or "Bias" not in attrs:
        return
    threshold, bias = np.float32(attrs["Threshold"]), np.float32(attrs["Bias"])
    x, y = _input(case), _writable_output(case, buffers)
    at = x == x.dtype.type(threshold)
    y[at] = (x[at].astype(np.float32) - bias).astype(y.dtype)


def sign_of_negative_zero(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """-1 where the input is -0 (sign(-0) = -1)."""
    if case.dtype.is_float:
        x, y = _input(case), _writable_output(case, buffers)
        if x.shape == y.shape:
            y[(x == 0) & np.signbit(x)] = -1


def nan_to_zero(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """NaN results written as 0."""
    if case.dtype.is_float:
        y = _writable_output(case, buffers)
        y[np.isnan(y)] = 0


def wrong_in_8d(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Right everywhere except in 8-D tensors, where the first element is off."""
    if case.dimension_count == 8:
        y = _writable_output(case, buffers)
        y.flat[0] = y.flat[0] + y.dtype.type(1) if not np.isnan(y.flat[0]) else y.dtype.type(1)


def in_place_corrupting(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """In-place cases computed element by element in the wrong direction: the
    output overwrites inputs that later elements still read."""
    if case.aliases:
        y = _writable_output(case, buffers)
        if y.size > 1:
            y.flat[1:] = y.flat[:-1].copy()


#: Each fault by name: what it breaks after the reference computed.
#: ``rejects-float16`` is not here: it refuses to run (see `FaultyBackend.supports`).
BREAKS: dict[str, Callable[[m.Spec, Case, Buffers], None]] = {
    "one-ulp": one_ulp,
    "wrong-branch-at-threshold": wrong_branch_at_threshold,
    "sign-of-negative-zero": sign_of_negative_zero,
    "nan-to-zero": nan_to_zero,
    "wrong-in-8d": wrong_in_8d,
    "in-place-corrupting": in_place_corrupting,
    "gemm-dropped-term": contraction.dropped_term,
    "gemm-c-strides-ignored": contraction.c_strides_ignored,
    "gemm-transa-ignored": contraction.transa_ignored,
    "gemm-float16-accumulation": contraction.float16_accumulation,
    "reduce-dropped-term": reduction.dropped_term,
    "reduce-wrong-axis": reduction.wrong_axis,
    "reduce-arg-tie-flipped": reduction.tie_flipped,
    "reduce-float16-accumulation": reduction.float16_accumulation,
    "round-half-away": bitwise.round_half_away,
    "bit-count-low-byte": bitwise.bit_count_low_byte,
    "bitwise-float-values": bitwise.bitwise_float_values,
    "softmax-no-max-subtraction": softmax.no_max_subtraction,
    "softmax-dropped-term": softmax.dropped_term,
    "softmax-wrong-axis": softmax.wrong_axis,
    "hardmax-last-tie": softmax.hardmax_last_tie,
    "topk-ties-by-last-index": sequence.topk_ties_by_last_index,
    "scan-direction-reversed": sequence.scan_direction_reversed,
    "scan-exclusive-ignored": sequence.scan_exclusive_ignored,
    "scan-dropped-term": sequence.scan_dropped_term,
    "gemm-truncated-sum": contraction.truncated_sum,
    "gemm-activation-before-addend": contraction.activation_before_addend,
    "gemm-tf32": contraction.tf32_products,
    "mmi-zero-point-ignored": contraction.zero_point_ignored,
    "mmi-narrow-difference": contraction.narrow_difference,
    "mmi-bias-ignored": contraction.bias_ignored,
    "value-scale-bias-wrong-axis": value_scale.bias_wrong_axis,
    "value-scale-scale-ignored": value_scale.scale_ignored,
}

REJECTS_FLOAT16 = "rejects-float16"

#: Every fault name, sorted.
FAULTS: tuple[str, ...] = tuple(sorted([*BREAKS, REJECTS_FLOAT16]))


def parse_faults(text: str) -> tuple[str, ...]:
    """``"nan-to-zero, wrong-in-8d"`` -> the names, sorted and unique
    (``_`` may stand for ``-``); an unknown name is a ValueError listing the known ones."""
    names = sorted({part.strip().replace("_", "-") for part in text.split(",") if part.strip()})
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        raise ValueError(f"unknown fault(s) {', '.join(unknown)}; known: {', '.join(FAULTS)}")
    return tuple(names)


class FaultyBackend(CpuBackend):
    """The CPU reference with the faults named in ``faults`` (comma-separated).

    Naming none is a usage error listing them (as the external backend
    without ``cmd=``), rather than a clean run or a run of all of them: a
    run that plants nothing passes and looks like a test of something, and
    all the faults at once make most cases fail for mixed reasons, which
    shows nothing a single named fault does not show better.  ``cpu`` is
    this backend without faults.
    """

    def __init__(self, faults: str = "", feature_level: str | m.FeatureLevel | None = None) -> None:
        super().__init__(feature_level)
        try:
            self.faults = parse_faults(faults)
        except ValueError as exc:  # a bad --backend-arg faults=: usage, exit 2
            raise InputError(f"faulty backend: faults={faults!r}: {exc}") from None
        if not self.faults:
            raise InputError(f"faulty backend: name the faults to plant: --backend-arg faults=NAME[,NAME...] "
                             f"(known: {', '.join(FAULTS)}); the cpu backend is this one without faults")

    def info(self) -> BackendInfo:
        base = super().info()
        planted = ", ".join(self.faults) or "none"
        return BackendInfo(name="faulty", device=f"{base.device}, planted faults: {planted}", version=base.version,
                           feature_level=base.feature_level, flush_subnormals=False)

    def supports(self, spec: m.Spec, case: Case) -> Support:
        if REJECTS_FLOAT16 in self.faults and case.dtype is m.DataType.FLOAT16:
            return Support(False, "FLOAT16 is not implemented")
        return super().supports(spec, case)

    def run(self, spec: m.Spec, case: Case, buffers: Buffers) -> None:
        if REJECTS_FLOAT16 in self.faults and case.dtype is m.DataType.FLOAT16:
            raise NotSupportedError("FLOAT16 is not implemented")
        super().run(spec, case, buffers)
        with np.errstate(all="ignore"):
            for name in self.faults:
                if name in BREAKS:
                    BREAKS[name](spec, case, buffers)

