"""LOCAL_RESPONSE_NORMALIZATION in the normalization family (issue #36): the
suite, the reference at 0 FAIL, the window's centring for an even
LocalSize (torch takes the other reading, reported), the planted
off-centre window caught, and the engines."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.families.normalization.oracle import window_sums
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from tests.families.normalization import suites

OP = "LOCAL_RESPONSE_NORMALIZATION"


def _run(backend: object) -> list:
    return run_cases([(suites.spec(OP), c) for c in suites.cases(OP)], backend)  # type: ignore[arg-type]


def test_the_suite_and_the_reference() -> None:
    ids = {c.id for c in suites.cases(OP)}
    assert len(ids) == 23
    for want in ("FLOAT32/4d/cross-channel/size=4/strong/random", "FLOAT32/4d/spatial/size=2/strong/random",
                 "FLOAT32/4d/cross-channel/size=3/default/random", "FLOAT16/4d/spatial/size=4/strong/random",
                 "FLOAT32/4d/cross-channel/size=0/strong/random"):
        assert f"{OP}/{want}" in ids
    assert Counter(r.outcome for r in _run(CpuBackend())) == {Outcome.PASS: 21, Outcome.NOT_SUPPORTED: 2}


def test_the_window_lies_floor_before_and_ceil_after() -> None:
    """Size 4 over 6 channels of ones: element 0 sees channels 0..2 (1 before, clipped; 2 after), element 5 sees
    4..5; the other centring sees 0..1 and 3..5."""
    ones = np.ones((1, 6, 1, 1))
    assert window_sums(ones, (1,), 4, False).reshape(-1).tolist() == [3, 4, 4, 4, 3, 2]
    assert window_sums(ones, (1,), 4, True).reshape(-1).tolist() == [2, 3, 4, 4, 4, 3]


def test_the_off_centre_window_is_caught() -> None:
    failed = {r.case_id for r in _run(FaultyBackend("norm-lrn-window-off-centre")) if r.outcome is Outcome.FAIL}
    assert f"{OP}/FLOAT32/4d/cross-channel/size=3/strong/random" in failed
    assert f"{OP}/FLOAT32/4d/spatial/size=5/strong/random" in failed


def test_onnxruntime_takes_lrn_for_cross_channel_float32() -> None:
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = _run(OnnxRuntimeBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 6, Outcome.NOT_SUPPORTED: 17}


def test_torch_centres_even_windows_the_other_way_and_passes_by_that_reading() -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = _run(TorchBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: 11, Outcome.NOT_SUPPORTED: 12}
    took = {r.case_id for r in results for name, _, n in r.readings if name == "reading:lrn-centre:ceil-before" and n}
    assert f"{OP}/FLOAT32/4d/cross-channel/size=4/strong/random" in took
