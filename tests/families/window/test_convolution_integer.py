"""The window family on CONVOLUTION_INTEGER (issue #35): exact integer sums
of zero-point differences (0 ULP), the padding-value and filter-orientation
readings, the CPU reference at 0 FAIL, the planted faults caught by name,
onnxruntime's ConvInteger."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.families.window.oracle import WindowOracle
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from tests.families.window.suites import case as _case
from tests.families.window.suites import cases as _cases
from tests.families.window.suites import spec as _spec

OP = "CONVOLUTION_INTEGER"


def test_the_suite_has_every_geometry_zero_point_and_type() -> None:
    ids = {c.id for c in _cases(OP)}
    assert len(ids) == 34
    for want in ("INT8/4d/k5-over/random/zp-tensor", "UINT8/4d/k3/random/zp-none", "UINT8/4d/k3/extremes/zp-channel",
                 "INT8/4d/k3/random/zp-tensor/filter-UINT8", "UINT8/3d/k3/random/zp-tensor",
                 "INT8/4d/k3/random/zp-tensor/padded", "INT16/4d/k3/random/zp-tensor/unsupported"):
        assert f"{OP}/{want}" in ids
    case = _case(OP, "UINT8/4d/k3/extremes/zp-channel")
    assert case.input("FilterZeroPointTensor").sizes == (1, 6, 1, 1) and case.outputs[0].dtype.name == "INT32"


def test_the_corner_subtracts_the_zero_points_and_padding_adds_nothing() -> None:
    """k3 with padding 1: output 0 of channel 0 reads the 2x2 corner of every input channel; the padded taps add
    (zp - zp) x (w - wzp) = 0 (primary), or (0 - zp) x (w - wzp) under padding-value:zero, offered exactly."""
    case = _case(OP, "INT8/4d/k3/random/zp-tensor")
    xz, wz = (int(case.input(n).view().ravel()[0]) for n in ("InputZeroPointTensor", "FilterZeroPointTensor"))
    x = case.input("InputTensor").view().astype(np.int64) - xz
    w = case.input("FilterTensor").view().astype(np.int64) - wz
    batch = WindowOracle.of(_spec(OP)).bind([case], flush_subnormals=False)
    assert batch.expected[0] == (x[0, :, :2, :2] * w[0, :, 1:, 1:]).sum()
    assert batch.relaxed.max() == 0
    zero = next(a for a in batch.alternatives if a.name == "reading:padding-value:zero")
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-xz)
    assert zero.values[list(zero.index).index(0)] == (padded[0, :, :3, :3] * w[0]).sum()
    k1 = WindowOracle.of(_spec(OP)).bind([_case(OP, "INT8/4d/k1/random/zp-tensor")], flush_subnormals=False)
    assert not k1.alternatives  # no padding, and a 1x1 filter reversed is itself: both readings agree


def test_the_cpu_reference_passes_and_the_faults_are_caught() -> None:
    pairs = [(_spec(OP), c) for c in _cases(OP)]
    good = Counter(r.outcome for r in run_cases(pairs, CpuBackend()))
    assert good == {Outcome.PASS: len(pairs) - 2, Outcome.NOT_SUPPORTED: 2}
    ignored = {r.case_id for r in run_cases(pairs, FaultyBackend("convint-input-zero-point-ignored"))
               if r.outcome is Outcome.FAIL}
    assert len(ignored) == 30 and not any("zp-none" in i for i in ignored)
    per_tensor = {r.case_id for r in run_cases(pairs, FaultyBackend("convint-filter-zero-point-per-tensor"))
                  if r.outcome is Outcome.FAIL}
    assert per_tensor and all("zp-channel" in i for i in per_tensor)


def test_onnxruntime_conv_integer() -> None:
    """ConvInteger passes what it takes but INT8 input x UINT8 filter, wrong by tens of thousands (an
    onnxruntime bug); per-channel filter zero points it refuses."""
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec(OP), c) for c in _cases(OP)], OnnxRuntimeBackend())
    assert [r.case_id for r in results if r.outcome is Outcome.FAIL] == [f"{OP}/INT8/4d/k3/random/zp-tensor/filter-UINT8"]
    refused = [r for r in results if r.refused]
    assert len(refused) == 4 and all("per-channel" in r.message for r in refused)
