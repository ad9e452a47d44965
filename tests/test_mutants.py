"""The mutant check (issue 5, part 7): deliberately wrong backends must be
caught by the default suite, each by name, while the correct `cpu` backend
passes the same cases with zero FAIL.

The mutants are the planted faults of the `faulty` backend
(`dmlconform.backends.faulty`), one at a time.  The suite is the generated
default suite (seed 0, level 6_4) of the operators each fault touches, so the
test stays fast.
"""

from __future__ import annotations

import math
from functools import cache

import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FAULTS, FaultyBackend, parse_faults
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def _suite(op: str) -> tuple[tuple[m.Spec, Case], ...]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return tuple((spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0))


#: The operators whose default suite each fault is checked against.
MUTANTS = {
    "one-ulp": ("ELEMENT_WISE_IDENTITY", "ACTIVATION_RELU"),
    "wrong-branch-at-threshold": ("ACTIVATION_SHRINK",),
    "sign-of-negative-zero": ("ELEMENT_WISE_SIGN",),
    "softplus-overflowing": ("ACTIVATION_SOFTPLUS", "ACTIVATION_PARAMETRIC_SOFTPLUS"),
    "nan-to-zero": ("ACTIVATION_SOFTSIGN", "ACTIVATION_SHRINK"),
    "wrong-in-8d": ("ACTIVATION_SOFTSIGN",),
    "in-place-corrupting": ("ACTIVATION_SOFTSIGN", "ELEMENT_WISE_ADD"),
    # the generic faults of issue #32: over the whole suite in tests/backends/test_generic_faults.py
    "zero-output": ("ACTIVATION_SOFTSIGN", "GEMM", "REDUCE"),
    "negate-output": ("ACTIVATION_SOFTSIGN", "ACTIVATION_SOFTMAX"),
    "scaled-output": ("ELEMENT_WISE_ADD", "CUMULATIVE_SUMMATION"),
    "nan-output": ("ACTIVATION_RELU", "VALUE_SCALE_2D"),
    "input-copied": ("ACTIVATION_SOFTSIGN", "TOP_K"),
    "rejects-float16": ("ACTIVATION_HARD_SIGMOID",),
    "gemm-dropped-term": ("GEMM",),
    "gemm-c-strides-ignored": ("GEMM",),
    "gemm-transa-ignored": ("GEMM",),
    "gemm-float16-accumulation": ("GEMM",),
    "reduce-dropped-term": ("REDUCE",),
    "reduce-lse-no-max-subtraction": ("REDUCE",),
    "log-softmax-of-softmax": ("ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1"),
    "reduce-wrong-axis": ("REDUCE", "ARGMAX"),
    "reduce-arg-tie-flipped": ("ARGMAX", "ARGMIN"),
    "reduce-float16-accumulation": ("REDUCE",),
    "round-half-away": ("ELEMENT_WISE_ROUND",),
    "bit-count-low-byte": ("ELEMENT_WISE_BIT_COUNT",),
    "bitwise-float-values": ("ELEMENT_WISE_BIT_AND", "ELEMENT_WISE_BIT_NOT"),
    "softmax-no-max-subtraction": ("ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1"),
    "softmax-dropped-term": ("ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1"),
    "softmax-wrong-axis": ("ACTIVATION_SOFTMAX1", "ACTIVATION_HARDMAX"),
    "hardmax-last-tie": ("ACTIVATION_HARDMAX", "ACTIVATION_HARDMAX1"),
    "topk-ties-by-last-index": ("TOP_K", "TOP_K1"),
    "scan-direction-reversed": ("CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"),
    "scan-exclusive-ignored": ("CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"),
    "scan-dropped-term": ("CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"),
    "gemm-truncated-sum": ("GEMM",),
    "gemm-activation-before-addend": ("GEMM",),
    "gemm-tf32": ("GEMM",),
    "mmi-zero-point-ignored": ("MATRIX_MULTIPLY_INTEGER", "MATRIX_MULTIPLY_INTEGER_TO_FLOAT"),
    "mmi-narrow-difference": ("MATRIX_MULTIPLY_INTEGER", "MATRIX_MULTIPLY_INTEGER_TO_FLOAT"),
    "mmi-bias-ignored": ("MATRIX_MULTIPLY_INTEGER_TO_FLOAT",),
    "value-scale-bias-wrong-axis": ("VALUE_SCALE_2D",),
    "value-scale-scale-ignored": ("VALUE_SCALE_2D",),
    "gather-negative-index-not-wrapped": ("GATHER", "GATHER_ND"),
    "gather-axis-ignored": ("GATHER", "GATHER_ELEMENTS"),
    "gather-last-index-unreachable": ("GATHER_ELEMENTS", "GATHER_ND1"),
    "gather-batch-ignored": ("GATHER_ND1",),
    "gather-64-bit-index-truncated": ("GATHER",),
    "slice-negative-stride-near-end": ("SLICE1",),
    "slice-stride-magnitude-ignored": ("SLICE", "SLICE1"),
    "tile-each-element-repeated": ("TILE",),
    "padding-reflection-symmetric-swapped": ("PADDING", "PADDING1"),
    "padding-start-end-swapped": ("PADDING", "PADDING1"),
    "depth-space-order-swapped": ("DEPTH_TO_SPACE", "SPACE_TO_DEPTH1"),
    "scatter-wrong-axis": ("SCATTER",),
    "scatter-negative-index-not-wrapped": ("SCATTER", "SCATTER_ND"),
    "scatter-nd-tuple-reversed": ("SCATTER_ND",),
    "one-hot-off-by-one": ("ONE_HOT",),
    "one-hot-negative-index-not-wrapped": ("ONE_HOT",),
    "nonzero-coordinates-wrong-order": ("NONZERO_COORDINATES",),
    "nonzero-negative-zero-counted": ("NONZERO_COORDINATES",),
    "cast-rounds-to-nearest": ("CAST",),
    "cast-float16-infinity-clamped": ("CAST",),
    "random-counter-advanced-per-element": ("RANDOM_GENERATOR",),
    "diagonal-offset-off-by-one": ("DIAGONAL_MATRIX",),
    "diagonal-span-off-by-one": ("DIAGONAL_MATRIX1",),
    "join-split-axis-ignored": ("JOIN", "SPLIT"),
    "join-split-order-swapped": ("JOIN", "SPLIT"),
    "conv-no-flip": ("CONVOLUTION",),
    "conv-flip-in-cross-correlation": ("CONVOLUTION",),
    "conv-pads-swapped": ("CONVOLUTION",),
    "conv-dilation-ignored": ("CONVOLUTION",),
    "conv-groups-mixed": ("CONVOLUTION",),
    "conv-output-padding-ignored": ("CONVOLUTION",),
    "conv-dropped-border-tap": ("CONVOLUTION",),
    "conv-float16-accumulation": ("CONVOLUTION",),
    "conv-tf32": ("CONVOLUTION",),
    "avgpool-divisor-padding-flipped": ("AVERAGE_POOLING", "AVERAGE_POOLING1"),
    "maxpool-last-tie": ("MAX_POOLING1",),
    "maxpool-padding-as-zero": ("MAX_POOLING",),
    "maxpool-buffer-index": ("MAX_POOLING2",),
    "convint-input-zero-point-ignored": ("CONVOLUTION_INTEGER",),
    "convint-filter-zero-point-per-tensor": ("CONVOLUTION_INTEGER",),
    "lp-p-as-two": ("LP_POOLING",),
    "lp-root-dropped": ("LP_POOLING1",),
    "norm-sample-variance": ("MEAN_VARIANCE_NORMALIZATION1", "MEAN_VARIANCE_NORMALIZATION"),
    "norm-epsilon-outside-sqrt": ("MEAN_VARIANCE_NORMALIZATION1", "MEAN_VARIANCE_NORMALIZATION2"),
    "norm-wrong-axes": ("MEAN_VARIANCE_NORMALIZATION1", "MEAN_VARIANCE_NORMALIZATION"),
    "norm-lrn-window-off-centre": ("LOCAL_RESPONSE_NORMALIZATION",),
    "norm-batch-sample-variance-output": ("BATCH_NORMALIZATION_TRAINING",),
    "norm-batch-variance-output-plus-epsilon": ("BATCH_NORMALIZATION_TRAINING",),
    "norm-fused-add-after-activation": ("BATCH_NORMALIZATION_TRAINING",),
    "norm-fused-activation-ignored": ("MEAN_VARIANCE_NORMALIZATION1", "BATCH_NORMALIZATION_TRAINING"),
    "resample-offsets-swapped": ("RESAMPLE1",),
    "resample-ties-other-way": ("RESAMPLE2",),
    "resample-no-edge-clamp": ("RESAMPLE",),
    "unpool-index-off-by-one": ("MAX_UNPOOLING",),
    "unpool-repeats-summed": ("MAX_UNPOOLING",),
    "unpool-plane-index": ("MAX_UNPOOLING",),
    "unpool-buffer-index": ("MAX_UNPOOLING",),
    "conv-activation-skipped": ("CONVOLUTION",),
    "conv-activation-before-bias": ("CONVOLUTION",),
    "fold-no-sum": ("FOLD",),
    "fold-padding-swapped": ("FOLD",),
    "unfold-dilation-ignored": ("UNFOLD",),
    "unfold-padding-swapped": ("UNFOLD",),
    "unfold-negative-zero-lost": ("UNFOLD",),
    "roi-sample-count-off-by-one": ("ROI_ALIGN",),
    "roi-align-corners-ignored": ("ROI_ALIGN1",),
    "roi-out-of-bounds-ignored": ("ROI_ALIGN",),
    "roi-pool-bins-rounded-other-way": ("ROI_POOLING",),
}


def _run(backend: CpuBackend, ops: tuple[str, ...]) -> tuple[CaseResult, ...]:
    return run_cases([pair for op in ops for pair in _suite(op)], backend)


def test_every_fault_is_checked() -> None:
    assert sorted(MUTANTS) == list(FAULTS)


#: Faults within every element's bound, caught as a QUALITY_WARNING by name (the whole-tensor bias check).
WARNED = {"gemm-truncated-sum"}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name: str) -> None:
    caught = Outcome.QUALITY_WARNING if name in WARNED else Outcome.FAIL
    failed = [r for r in _run(FaultyBackend(name), MUTANTS[name]) if r.outcome is caught]
    assert failed, f"mutant {name} survived the default suite of {', '.join(MUTANTS[name])}"


def test_reference_passes_the_mutants_suites() -> None:
    ops = sorted({op for ops in MUTANTS.values() for op in ops})
    results = _run(CpuBackend(), tuple(ops))
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert not bad, "\n".join(bad[:10])
    assert any(r.outcome is Outcome.NOT_SUPPORTED and not r.expect_supported for r in results)


@pytest.mark.slow  # about 10 s on 2 idle cores: run by .ci/run
def test_where_each_mutant_is_caught() -> None:
    """The failures point at what the mutant broke."""
    by_name = {name: [r for r in _run(FaultyBackend(name), ops) if r.outcome is Outcome.FAIL]
               for name, ops in MUTANTS.items()}
    assert all(r.dims == 8 for r in by_name["wrong-in-8d"])
    assert all(r.layout == "in_place" for r in by_name["in-place-corrupting"])
    assert all(r.dtype == "FLOAT16" and "rejected a configuration" in r.message for r in by_name["rejects-float16"])
    assert all("Threshold" in r.case_id or "boundary" in r.case_id for r in by_name["wrong-branch-at-threshold"])
    assert any(d.expected != d.expected for r in by_name["nan-to-zero"] for d in r.worst)  # NaN expected
    assert all(r.layout in ("broadcast", "padded") for r in by_name["gemm-c-strides-ignored"])
    assert all("transA" in r.case_id for r in by_name["gemm-transa-ignored"])
    assert all(r.dtype == "FLOAT16" for r in by_name["gemm-float16-accumulation"])
    assert any("/exact" in r.case_id for r in by_name["gemm-dropped-term"])
    assert any("/sum/exact" in r.case_id for r in by_name["reduce-dropped-term"])
    assert all("/square" in r.case_id or "/example" in r.case_id for r in by_name["reduce-wrong-axis"])
    assert any("/ties" in r.case_id for r in by_name["reduce-arg-tie-flipped"])
    assert all(r.dtype == "FLOAT16" for r in by_name["reduce-float16-accumulation"])
    assert all("/exclusive/" in r.case_id for r in by_name["scan-exclusive-ignored"])
    assert any("/exact" in r.case_id for r in by_name["scan-dropped-term"])
    assert any(r.case_id.endswith(("/ties", "/equal", "/example3")) for r in by_name["topk-ties-by-last-index"])
    # inf where the value is finite: a loss of range, never a reading (issue #32; a quality warning before)
    overflowed = {r.operator for r in by_name["softplus-overflowing"]
                  if any(d.verdict == "FAIL" and math.isinf(d.actual) and math.isfinite(d.expected) for d in r.worst)}
    assert overflowed == {"ACTIVATION_SOFTPLUS", "ACTIVATION_PARAMETRIC_SOFTPLUS"}


def test_fault_names() -> None:
    assert parse_faults(" wrong_in_8d,nan-to-zero,nan-to-zero ") == ("nan-to-zero", "wrong-in-8d")
    assert parse_faults("") == ()
    with pytest.raises(ValueError, match="unknown fault.s. sign-negzero; known: (.*, )?gemm-activation-before-addend, "
                                               "gemm-c-strides-ignored, gemm-dropped-term, gemm-float16-accumulation, "
                                               "gemm-tf32, gemm-transa-ignored, gemm-truncated-sum, (.*, )?in-place-corrupting"):
        parse_faults("sign-negzero")
    info = FaultyBackend("nan-to-zero,wrong-in-8d").info()
    assert info.name == "faulty" and info.device.endswith("planted faults: nan-to-zero, wrong-in-8d")
