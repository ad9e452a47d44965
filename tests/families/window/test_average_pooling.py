"""The window family on AVERAGE_POOLING and AVERAGE_POOLING1 (issue #35):
the divisor by IncludePadding, the window wholly in padding, the CPU
reference at 0 FAIL, the planted fault caught, onnxruntime's AveragePool."""

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

OPS = ("AVERAGE_POOLING", "AVERAGE_POOLING1")


def test_the_suites_have_every_geometry_both_ways() -> None:
    assert [len(_cases(op)) for op in OPS] == [68, 76]  # AVERAGE_POOLING1 adds dilation2
    ids = {c.id for c in _cases("AVERAGE_POOLING1")}
    for want in ("FLOAT32/4d/dilation2-excl/exact", "FLOAT16/4d/all-padding-incl/random", "FLOAT32/5d/k3-excl/exact",
                 "FLOAT32/4d/k3-excl/random/padded", "FLOAT64/4d/k3/random/unsupported"):
        assert f"AVERAGE_POOLING1/{want}" in ids


def test_the_divisor_follows_include_padding() -> None:
    """k3 with padding 1, exact data: a corner averages 4 values (excl) or divides their sum by 9 (incl)."""
    oracle = WindowOracle.of(_spec("AVERAGE_POOLING"))
    excl, incl = (_case("AVERAGE_POOLING", f"FLOAT32/4d/k3-{w}/exact") for w in ("excl", "incl"))
    for case, divisor in ((excl, 4), (incl, 9)):
        corner = case.input("InputTensor").view()[0, 0, :2, :2].sum(dtype=np.float64)
        assert oracle.bind([case], flush_subnormals=False).expected[0] == np.float32(corner / divisor)


def test_a_window_wholly_in_padding_is_nan_or_zero() -> None:
    case = _case("AVERAGE_POOLING", "FLOAT32/4d/all-padding-excl/random")
    batch = WindowOracle.of(_spec("AVERAGE_POOLING")).bind([case], flush_subnormals=False)
    assert np.isnan(batch.expected[0]) and not np.isnan(batch.expected[4])
    (marker, zero) = batch.alternatives
    assert zero.name == "reading:empty-window:zero" and zero.values.tolist() == [0.0] * zero.index.size
    assert zero.index.size == 2 * 3 * 5  # per image and channel: the first row and the first column of 3x3


@pytest.mark.parametrize("op", OPS)
def test_the_cpu_reference_passes_and_the_fault_is_caught(op: str) -> None:
    pairs = [(_spec(op), c) for c in _cases(op)]
    good = Counter(r.outcome for r in run_cases(pairs, CpuBackend()))
    assert good == {Outcome.PASS: len(pairs) - 2, Outcome.NOT_SUPPORTED: 2}
    bad = [r.case_id for r in run_cases(pairs, FaultyBackend("avgpool-divisor-padding-flipped"))
           if r.outcome is Outcome.FAIL]
    assert any("-excl/" in i for i in bad) and any("-incl/" in i for i in bad)
    assert not any("/k1-" in i or "k2-s2" in i or "stride3" in i for i in bad)  # no padding: nothing to flip


@pytest.mark.parametrize("op", OPS)
def test_onnxruntime_average_pool(op: str) -> None:
    """AveragePool passes all but the windows reaching over their padding, which ONNX forbids (pads below the
    kernel): a configuration the table supports, refused with the reason (onnxruntime implements a subset of the
    tables: NOT_SUPPORTED, counted as refused)."""
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec(op), c) for c in _cases(op)], OnnxRuntimeBackend())
    refused = [r for r in results if r.refused]
    assert len(refused) == 8 and all("all-padding" in r.case_id and "below it" in r.message for r in refused)
    assert all(r.outcome is Outcome.NOT_SUPPORTED for r in refused)
    assert Counter(r.outcome for r in results)[Outcome.PASS] == len(results) - 10


@pytest.mark.parametrize("op", OPS)
def test_torch_avg_pool(op: str) -> None:
    """avg_pool passes every case it takes; it refuses IncludePadding FALSE with a padding torch's own (symmetric,
    at most half the window) cannot express, Dilations, and 5D FLOAT16 (no Half kernel on the CPU)."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec(op), c) for c in _cases(op)], TorchBackend())
    assert Counter(r.outcome for r in results)[Outcome.PASS] == 57
    refused = [r for r in results if r.refused]
    assert all("-excl/" in r.case_id or "dilation" in r.case_id or "/5d/" in r.case_id for r in refused)
    assert {r.outcome for r in results} == {Outcome.PASS, Outcome.NOT_SUPPORTED}
