"""The interpolation family on RESAMPLE, RESAMPLE1, RESAMPLE2, RESAMPLE3 and
UPSAMPLE_2D (issue #36): the coordinate map and its float32 error, ties and their
readings, the bound of LINEAR, the CPU reference at 0 FAIL, the planted
faults caught where they show, onnxruntime's Resize and torch's interpolate."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.families.interpolation.cases import case_problems
from dmlconform.families.interpolation.oracle import InterpolationBatch, InterpolationOracle, axis_map
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from tests.families.window.suites import case as _case
from tests.families.window.suites import cases as _cases
from tests.families.window.suites import spec as _spec

OPS = ("RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3", "UPSAMPLE_2D")


def _bind(op: str, suffix: str) -> InterpolationBatch:
    return InterpolationOracle.of(_spec(op)).bind([_case(op, suffix)], flush_subnormals=False)


def test_the_suites_have_every_mode_map_and_type() -> None:
    assert [len(_cases(op)) for op in OPS] == [186, 270, 336, 360, 30]
    ids = {c.id for c in _cases("RESAMPLE2")}
    for want in ("FLOAT16/4d/nearest/asymmetric/ties-down/up2/exact", "INT8/4d/linear/half-pixel/ties-up/down0.6/random",
                 "FLOAT32/1d/linear/half-pixel/ties-up/up2/random", "FLOAT32/4d/nearest/quarter/ties-up/down0.6/exact",
                 "FLOAT32/4d/linear/half-pixel/ties-up/clamped/exact", "FLOAT64/4d/nearest/half-pixel/ties-up/up2/random/unsupported",
                 "FLOAT32/5d/nearest/half-pixel/ties-up/up2/random/unsupported"):
        assert f"RESAMPLE2/{want}" in ids


def test_nearest_ties_go_up_and_the_other_way_is_a_reading() -> None:
    """Asymmetric up2: c = o / 2, every odd o halfway; RESAMPLE1 takes the element above (primary) and offers the
    one below as the ``ties:down`` reading, at exactly those elements."""
    case = _case("RESAMPLE1", "FLOAT32/4d/nearest/asymmetric/up2/exact")
    x = case.input("InputTensor").view()
    batch = _bind("RESAMPLE1", "FLOAT32/4d/nearest/asymmetric/up2/exact")
    up = np.minimum((np.arange(12) + 1) // 2, 5)
    assert np.array_equal(batch.expected.reshape(2, 3, 10, 12), x[:, :, np.minimum((np.arange(10) + 1) // 2, 4)][..., up])
    names = [a.name for a in batch.alternatives]
    # exact ties, no coordinate-rounding alternative; the last tie (c = 5.5 of 6) rounds out of the input
    assert names == ["reading:out-of-range=edge", "reading:ties=up", "reading:out-of-range:zero", "reading:ties:down"]
    down = batch.alternatives[3]
    rows, cols = np.unravel_index(down.index, (2, 3, 10, 12))[2:]
    assert np.all((rows % 2 == 1) | (cols % 2 == 1))


def test_rounding_direction_decides_exact_ties() -> None:
    """RESAMPLE2 DECREASING: the tie goes down, no ``ties`` alternative; the literal floor is a reading."""
    batch = _bind("RESAMPLE2", "FLOAT32/4d/nearest/asymmetric/ties-down/up2/exact")
    x = _case("RESAMPLE2", "FLOAT32/4d/nearest/asymmetric/ties-down/up2/exact").input("InputTensor").view()
    assert np.array_equal(batch.expected.reshape(2, 3, 10, 12), x[:, :, np.arange(10) // 2][..., np.arange(12) // 2])
    assert not [a for a in batch.alternatives if not a.name.startswith("reading:")]


def test_linear_bounds_are_zero_where_exact_and_a_few_ulps_elsewhere() -> None:
    exact = _bind("RESAMPLE1", "FLOAT32/4d/linear/half-pixel/up2/exact")
    assert exact.strict is not None and not exact.strict.any()
    random = _bind("RESAMPLE1", "FLOAT32/4d/linear/half-pixel/up1.5/random")
    assert random.strict is not None
    ulps = random.strict / np.spacing(np.maximum(random.magnitude, 2.0 ** -10).astype(np.float32))
    assert np.median(ulps) < 32  # the float32 coordinate's error times the slope, and 13 roundings of M
    assert 0 < random.strict.max() < 2.0 ** -16  # tight: values in [-1, 1]; a weight off by 2^-16 shows


@settings(max_examples=200, deadline=None)
@given(scale=st.sampled_from([0.25, 0.5, 0.6, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 7.0, 10.0 / 3.0]),
       offset=st.sampled_from([0.0, 0.25, 0.5]), size=st.integers(1, 4096))
def test_the_float32_coordinate_is_within_delta(scale: float, offset: float, size: int) -> None:
    """Both ways a kernel computes the coordinate in float32 (a division; a product with a rounded reciprocal)
    land within delta of the float64 one, and delta is 0 only where they land on it."""
    s = float(np.float32(scale))
    a = axis_map(size, s, offset, -offset)
    o = np.arange(size, dtype=np.float32)
    f32 = np.float32
    division = (o + f32(offset)) / f32(s) - f32(offset)
    product = (o + f32(offset)) * (f32(1) / f32(s)) - f32(offset)
    for got in (division, product):
        err = np.abs(got.astype(np.float64) - a.c)
        assert np.all(err <= a.delta)
    assert np.all((a.delta > 0) | (division == a.c))


def test_a_case_folder_with_an_antialiasing_filter_in_play_is_refused() -> None:
    spec = _spec("RESAMPLE3")
    case = _case("RESAMPLE3", "FLOAT32/4d/linear/half-pixel/ties-up/antialiased/down2/exact")
    attrs = dict(case.attributes)
    attrs["Scales"] = "1,1,0.25,0.5"
    (problem,) = case_problems(spec, replace(case, attributes=tuple(attrs.items())))
    assert problem.startswith("Antialiased with a scale below 0.5")
    attrs["Scales"] = "1,1,two,1"
    (problem,) = case_problems(spec, replace(case, attributes=tuple(attrs.items())))
    assert problem == "Scales='1,1,two,1' is not a list of numbers; write them comma-separated, e.g. \"1,1,2,2\""


@pytest.mark.parametrize("op", OPS)
def test_the_cpu_reference_passes(op: str) -> None:
    results = Counter(r.outcome for r in run_cases([(_spec(op), c) for c in _cases(op)], CpuBackend()))
    assert results == {Outcome.PASS: len(_cases(op)) - 2, Outcome.NOT_SUPPORTED: 2}


def _failed(fault: str, op: str) -> list[str]:
    pairs = [(_spec(op), c) for c in _cases(op)]
    return [r.case_id for r in run_cases(pairs, FaultyBackend(fault)) if r.outcome is Outcome.FAIL]


def test_the_faults_are_caught_where_they_show() -> None:
    swapped = _failed("resample-offsets-swapped", "RESAMPLE1")
    assert any("/half-pixel/" in i for i in swapped) and any("/asymmetric/" in i for i in swapped)
    assert not any("/quarter/" in i or "/scale1/" in i for i in swapped)  # scale 1: both maps are the identity
    ties = _failed("resample-ties-other-way", "RESAMPLE2")
    assert ties and all("/nearest/" in i for i in ties)
    assert "RESAMPLE2/FLOAT32/4d/nearest/asymmetric/ties-up/up2/exact" in ties
    assert not _failed("resample-ties-other-way", "RESAMPLE1")  # ties open: the other way is a reading
    clamp = _failed("resample-no-edge-clamp", "RESAMPLE1")
    assert clamp and all("/linear/" in i for i in clamp)
    assert any("/clamped/" in i for i in clamp) and not any("/scale1/" in i for i in clamp)  # c in range there


def test_onnxruntime_resize() -> None:
    """Resize: 0 FAIL; the offsets it cannot express, the clamped output and linear scales outside its rule
    NOT_SUPPORTED with the reason."""
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec("RESAMPLE1"), c) for c in _cases("RESAMPLE1")], OnnxRuntimeBackend())
    assert not [r.case_id for r in results if r.outcome is Outcome.FAIL]
    refused = [r for r in results if r.refused]
    assert all("/quarter/" in r.case_id or "/clamped/" in r.case_id or "/linear/" in r.case_id for r in refused)
    assert any("half_pixel (0.5, -0.5) and asymmetric (0, 0)" in r.message for r in refused)


def test_torch_interpolate() -> None:
    """interpolate: every FAIL is UINT8 LINEAR, whose kernel rounds each separable pass to uint8."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec("RESAMPLE1"), c) for c in _cases("RESAMPLE1")], TorchBackend())
    failed = [r.case_id for r in results if r.outcome is Outcome.FAIL]
    assert failed and all("/UINT8/" in i and "/linear/" in i for i in failed)
    assert any(r.outcome is Outcome.PASS and "/linear/" in r.case_id for r in results)
    assert any(r.outcome is Outcome.PASS and "/nearest/" in r.case_id for r in results)


def test_upsample_2d_is_a_resample_of_height_and_width() -> None:
    """ScaleSize "Width,Height" scales the last two dimensions; NEAREST takes o // S; LINEAR offers the
    asymmetric map (ONNX Upsample's) as the ``upsample-map`` reading on its exact values."""
    case = _case("UPSAMPLE_2D", "FLOAT32/4d/nearest/3x2/exact")
    assert dict(case.attributes)["ScaleSize"] == "2,3" and case.outputs[0].sizes == (2, 3, 12, 10)
    x = case.input("InputTensor").view()
    batch = _bind("UPSAMPLE_2D", "FLOAT32/4d/nearest/3x2/exact")
    assert np.array_equal(batch.expected.reshape(2, 3, 12, 10), x[:, :, np.arange(12) // 3][..., np.arange(10) // 2])
    linear = _bind("UPSAMPLE_2D", "FLOAT32/4d/linear/2x2/exact")
    assert linear.strict is not None and not linear.strict.any()
    assert [a.name for a in linear.alternatives] == ["reading:upsample-map=half-pixel",
                                                     "reading:upsample-map:asymmetric"]
    results = Counter(r.outcome for r in run_cases([(_spec("UPSAMPLE_2D"), c) for c in _cases("UPSAMPLE_2D")],
                                                   CpuBackend()))
    assert results == {Outcome.PASS: 28, Outcome.NOT_SUPPORTED: 2}
    swapped = _failed("resample-offsets-swapped", "UPSAMPLE_2D")
    assert swapped and all("/nearest/" in i for i in swapped)  # LINEAR's asymmetric map is a reading
