"""The ROI align operators of the interpolation package, ROI_ALIGN and
ROI_ALIGN1 (issue #36): the page's pseudocode in float64, its readings, the
float32 coordinate's error, the bound, the CPU reference at 0 FAIL, the
planted faults caught where they show, onnxruntime's RoiAlign (its MAX mode
measured against its own weighted-corner rule)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.families.interpolation.oracle import InterpolationBatch
from dmlconform.families.interpolation.roi_cases import RoiGeometry, case_problems, geometry, regions
from dmlconform.families.interpolation.roi_oracle import Reading, RoiOracle, coordinates, sample_scale
from dmlconform.families.interpolation.roi_semantics import AVERAGE
from dmlconform.families.interpolation.semantics import LINEAR
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from tests.families.window.suites import case as _case
from tests.families.window.suites import cases as _cases
from tests.families.window.suites import spec as _spec

OPS = ("ROI_ALIGN", "ROI_ALIGN1")


def _bind(op: str, suffix: str) -> InterpolationBatch:
    return RoiOracle.of(_spec(op)).bind([_case(op, suffix)], flush_subnormals=False)


def _names(batch: InterpolationBatch) -> set[str]:
    return {a.name for a in batch.alternatives}


def test_the_suites_have_every_mode_region_set_and_type() -> None:
    assert [len(_cases(op)) for op in OPS] == [112, 248]
    ids = {c.id for c in _cases("ROI_ALIGN1")}
    for want in ("FLOAT16/nearest/max/output-half-pixel/outside-value/random",
                 "FLOAT32/linear/average/corner/aligned/inverted/random", "FLOAT32/linear/max/half-pixel/at-minimum/exact",
                 "FLOAT32/linear/average/half-pixel/inside/random/rois-4d", "FLOAT16/linear/average/half-pixel/inside/random/uint64",
                 "FLOAT64/linear/average/half-pixel/inside/random/unsupported",
                 "FLOAT32/linear/average/half-pixel/inside/random/rois-5d/unsupported"):
        assert f"ROI_ALIGN1/{want}" in ids
    assert not any("output-half-pixel" in c.id or "aligned" in c.id for c in _cases("ROI_ALIGN"))


def _bilinear(plane: np.ndarray, y: float, x: float) -> np.ndarray:
    """Bilinear interpolation written out, the coordinate inside the plane."""
    y0, x0 = min(int(np.floor(y)), plane.shape[1] - 2), min(int(np.floor(x)), plane.shape[2] - 2)
    fy, fx = y - y0, x - x0
    return ((1 - fy) * ((1 - fx) * plane[:, y0, x0] + fx * plane[:, y0, x0 + 1])
            + fy * ((1 - fx) * plane[:, y0 + 1, x0] + fx * plane[:, y0 + 1, x0 + 1]))


def test_one_sample_per_output_is_the_bilinear_value_at_the_bin_centre() -> None:
    """at-maximum: MaximumSamplesPerOutput 1, so each output is one sample at its bin's centre (half-pixel map:
    x1 + (o + 1/2) size / out - 1/2)."""
    suffix = "FLOAT32/linear/average/half-pixel/at-maximum/random"
    case = _case("ROI_ALIGN", suffix)
    x = case.input("InputTensor").view().astype(np.float64)
    rois, batch = regions(_spec("ROI_ALIGN").semantics, case)  # type: ignore[arg-type]
    expected = _bind("ROI_ALIGN", suffix).expected.reshape(2, 3, 2, 3)
    for r in range(2):
        x1, y1, x2, y2 = rois[r]
        for oy in range(2):
            for ox in range(3):
                cy, cx = y1 + (oy + 0.5) * (y2 - y1) / 2 - 0.5, x1 + (ox + 0.5) * (x2 - x1) / 3 - 0.5
                cy, cx = min(max(cy, 0), 5), min(max(cx, 0), 6)
                assert np.allclose(expected[r, :, oy, ox], _bilinear(x[batch[r]], cy, cx), rtol=0, atol=1e-6)


def test_the_readings_are_offered_where_they_differ() -> None:
    inside = _names(_bind("ROI_ALIGN1", "FLOAT32/linear/average/half-pixel/inside/random"))
    assert {"reading:sample-loop:inclusive", "reading:y-scale:literal", "reading:sample-count:floor"} <= inside
    outside = _names(_bind("ROI_ALIGN1", "FLOAT32/linear/average/half-pixel/partly-outside-value/random"))
    assert {"reading:out-of-bounds:band", "reading:out-of-bounds:neighbour"} <= outside
    # a region wholly outside reads OutOfBoundsInputValue under every reading: -2.5 everywhere
    far = _bind("ROI_ALIGN1", "FLOAT32/linear/max/half-pixel/outside-value/random")
    assert np.all(far.expected == -2.5) and not far.strict.any()
    # ROI_ALIGN has no AlignRegionsToCorners, so no corners reading
    assert not any("corners" in n for n in _names(_bind("ROI_ALIGN", "FLOAT32/linear/average/half-pixel/inside/random")))


def test_sample_counts_are_clamped() -> None:
    """at-minimum: a 1 x 1.5 region over 2 x 3 outputs asks for fewer than one sample; MinimumSamplesPerOutput 3
    gives 3 x 3, the sample-count readings agree (both clamp to 3)."""
    case = _case("ROI_ALIGN1", "FLOAT32/linear/average/half-pixel/at-minimum/random")
    geo = geometry(_spec("ROI_ALIGN1").semantics, case)  # type: ignore[arg-type]
    assert (geo.min_samples, geo.max_samples) == (3, 5)
    batch = _bind("ROI_ALIGN1", "FLOAT32/linear/average/half-pixel/at-minimum/random")
    assert "reading:sample-count:floor" not in _names(batch)


def test_bounds_are_zero_where_exact_and_a_few_ulps_elsewhere() -> None:
    exact = _bind("ROI_ALIGN1", "FLOAT32/nearest/max/half-pixel/inside/exact")
    assert not exact.strict.any()
    random = _bind("ROI_ALIGN1", "FLOAT32/linear/average/half-pixel/inside/random")
    ulps = random.strict / np.spacing(np.maximum(random.magnitude, 2.0 ** -10).astype(np.float32))
    # the float32 coordinate's error (about 5 of its ULPs at 4 to 8) times the slope, and 15 roundings of M
    assert 0 < np.median(ulps) < 32 and random.strict.max() < 2.0 ** -16


GEOMETRY = RoiGeometry(AVERAGE, LINEAR, 1.0, 1.0, 0.5, -0.5, 0.0, 1, 64, False)


@settings(max_examples=200, deadline=None)
@given(lo=st.floats(-64, 64, width=32), size=st.floats(-32, 64, width=32), out=st.integers(1, 9),
       count=st.integers(1, 6), offsets=st.sampled_from([(0.5, -0.5), (0.0, -0.5), (0.0, 0.0), (0.25, 0.0)]),
       align=st.booleans())
def test_the_float32_coordinate_is_within_delta(lo: float, size: float, out: int, count: int,
                                                offsets: tuple[float, float], align: bool) -> None:
    """The float32 chain of the CPU reference (and a GPU kernel) stays within the oracle's delta of the float64 value."""
    hi = float(np.float32(lo + size))
    geo = replace(GEOMETRY, input_offset=offsets[0], output_offset=offsets[1], align_corners=align)
    c, delta = coordinates(lo, hi, out, count, sample_scale(hi - lo, out, count, geo), geo, Reading())
    f = np.float32
    total = out * count
    step = (f(hi) - f(lo)) / f(total - 1 if align else total) if total > 1 or not align else f(0)
    index = (np.arange(out)[:, None] * count + np.arange(count)[None, :]).astype(f)
    c32 = (index - f(offsets[1])) * step + f(lo) - f(offsets[0])
    assert np.all(np.abs(c32.astype(np.float64) - c) <= delta)


def test_case_problems_name_the_fault() -> None:
    spec = _spec("ROI_ALIGN1")
    case = _case("ROI_ALIGN1", "FLOAT32/linear/average/half-pixel/inside/random")
    attrs = tuple((k, 99 if k == "MinimumSamplesPerOutput" else v) for k, v in case.attributes)
    assert list(case_problems(spec, replace(case, attributes=attrs))) == [
        "MinimumSamplesPerOutput=99, MaximumSamplesPerOutput=64: give 1 <= MinimumSamplesPerOutput <= "
        "MaximumSamplesPerOutput"]
    assert list(case_problems(spec, case)) == []


@pytest.mark.parametrize("op", OPS)
def test_the_cpu_reference_passes(op: str) -> None:
    results = Counter(r.outcome for r in run_cases([(_spec(op), c) for c in _cases(op)], CpuBackend()))
    assert results == {Outcome.PASS: len(_cases(op)) - 2, Outcome.NOT_SUPPORTED: 2}


def _failed(fault: str, op: str) -> list[str]:
    return [r.case_id for r in run_cases([(_spec(op), c) for c in _cases(op)], FaultyBackend(fault))
            if r.outcome is Outcome.FAIL]


def test_the_faults_are_caught_where_they_show() -> None:
    off_by_one = _failed("roi-sample-count-off-by-one", "ROI_ALIGN1")
    assert "ROI_ALIGN1/FLOAT32/linear/average/half-pixel/at-minimum/exact" in off_by_one
    assert "ROI_ALIGN1/FLOAT32/linear/average/half-pixel/inside/exact" in off_by_one
    corners = _failed("roi-align-corners-ignored", "ROI_ALIGN1")
    assert corners and all("/aligned/" in c for c in corners)
    outside = _failed("roi-out-of-bounds-ignored", "ROI_ALIGN")
    assert "ROI_ALIGN/FLOAT32/linear/average/half-pixel/outside-value/random" in outside
    assert all("outside" in c for c in outside)


def _ort_max(x: np.ndarray, rois: np.ndarray, batch: np.ndarray, pooled: tuple[int, int], ratio: int) -> np.ndarray:
    """onnxruntime's RoiAlign max mode (half_pixel), as its kernel computes it: per sample the largest of the four
    weighted corners w_k v_k, not the interpolated value; 0 outside [-1, size]."""
    out = np.zeros((rois.shape[0], x.shape[1], *pooled))
    h, w = x.shape[2:]
    for r in range(rois.shape[0]):
        x1, y1, x2, y2 = rois[r] - 0.5
        for oy in range(pooled[0]):
            for ox in range(pooled[1]):
                gy = ratio or int(np.ceil((y2 - y1) / pooled[0]))
                gx = ratio or int(np.ceil((x2 - x1) / pooled[1]))
                best = np.full(x.shape[1], -np.inf)
                for iy in range(gy):
                    for ix in range(gx):
                        yy = y1 + oy * (y2 - y1) / pooled[0] + (iy + 0.5) * (y2 - y1) / pooled[0] / gy
                        xx = x1 + ox * (x2 - x1) / pooled[1] + (ix + 0.5) * (x2 - x1) / pooled[1] / gx
                        if yy < -1 or yy > h or xx < -1 or xx > w:
                            best = np.maximum(best, 0)
                            continue
                        yy, xx = min(max(yy, 0), h - 1), min(max(xx, 0), w - 1)
                        y0, x0 = int(yy), int(xx)
                        y1_, x1_ = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
                        fy, fx = yy - y0, xx - x0
                        plane = x[batch[r]]
                        terms = [(1 - fy) * (1 - fx) * plane[:, y0, x0], (1 - fy) * fx * plane[:, y0, x1_],
                                 fy * (1 - fx) * plane[:, y1_, x0], fy * fx * plane[:, y1_, x1_]]
                        best = np.maximum(best, np.max(terms, axis=0))
                out[r, :, oy, ox] = best
    return out


def test_onnxruntime_roi_align() -> None:
    """AVERAGE passes; MAX fails on every case where a sample lands inside the input, and its outputs are
    onnxruntime's own rule, the largest weighted corner (docs/interpolation.md "ROI_ALIGN1 on onnxruntime")."""
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    backend = OnnxRuntimeBackend()
    results = run_cases([(_spec("ROI_ALIGN"), c) for c in _cases("ROI_ALIGN")], backend)
    outcomes = {r.case_id: r.outcome for r in results}
    ran = {k: v for k, v in outcomes.items() if v is not Outcome.NOT_SUPPORTED}
    assert ran and all(v is Outcome.PASS for k, v in ran.items() if "/average/" in k)
    assert {k for k, v in ran.items() if v is Outcome.FAIL} == {k for k in ran if "/max/" in k and "/outside" not in k}
    case = _case("ROI_ALIGN", "FLOAT32/linear/max/half-pixel/inside/random")
    buffers = {t.name: t.buffer.copy() for t in (*case.inputs, *case.outputs)}
    backend.run(_spec("ROI_ALIGN"), case, buffers)
    actual = case.outputs[0].view(buffers["OutputTensor"]).astype(np.float64)
    rois, batch = regions(_spec("ROI_ALIGN").semantics, case)  # type: ignore[arg-type]
    assert np.allclose(actual, _ort_max(case.input("InputTensor").view().astype(np.float64), rois, batch, (2, 3), 0),
                       rtol=0, atol=1e-6)


# -- ROI_POOLING ------------------------------------------------------------------------------------


def test_roi_pooling_is_the_pages_integer_formula() -> None:
    """inside: every bin by the page's integer arithmetic, written out; exact (bound 0)."""
    case = _case("ROI_POOLING", "FLOAT32/inside/random")
    batch = _bind("ROI_POOLING", "FLOAT32/inside/random")
    x = case.input("InputTensor").view()
    got = batch.expected.reshape(3, 3, 2, 3)
    for r, (b, x1, y1, x2, y2) in enumerate(case.input("ROITensor").view().reshape(-1, 5).astype(int)):
        height, width = y2 - y1 + 1, x2 - x1 + 1
        for oy in range(2):
            for ox in range(3):
                sy, ey = (oy * height) // 2 + y1, ((oy + 1) * height + 1) // 2 + y1
                sx, ex = (ox * width) // 3 + x1, ((ox + 1) * width + 2) // 3 + x1
                assert np.array_equal(got[r, :, oy, ox], x[b, :, sy:ey, sx:ex].max(axis=(1, 2)))
    assert not batch.strict.any()


def test_roi_pooling_readings() -> None:
    halves = _names(_bind("ROI_POOLING", "FLOAT32/half-coordinates/random"))
    assert {"reading:rounding:half-even", "reading:rounding:half-up", "reading:bin-end:inclusive"} <= halves
    outside = _bind("ROI_POOLING", "FLOAT32/outside/random")
    assert not outside.expected.any() and "reading:empty-bin:lowest" in _names(outside)


def test_roi_pooling_cpu_fault_and_onnxruntime() -> None:
    results = Counter(r.outcome for r in run_cases([(_spec("ROI_POOLING"), c) for c in _cases("ROI_POOLING")],
                                                   CpuBackend()))
    assert results == {Outcome.PASS: 14, Outcome.NOT_SUPPORTED: 2}
    assert "ROI_POOLING/FLOAT32/inside/random" in _failed("roi-pool-bins-rounded-other-way", "ROI_POOLING")
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    ran = {r.case_id: r.outcome for r in run_cases([(_spec("ROI_POOLING"), c) for c in _cases("ROI_POOLING")],
                                                   OnnxRuntimeBackend()) if r.outcome is not Outcome.NOT_SUPPORTED}
    assert len(ran) == 8 and set(ran.values()) == {Outcome.PASS}


def test_torch_without_torchvision_refuses_with_the_reason() -> None:
    """torch has ROI align and pooling only in torchvision.ops: NOT_SUPPORTED naming it where it is missing."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    try:
        import torchvision  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("torchvision is installed: the refusal does not apply")
    from dmlconform.backends.torch.backend import TorchBackend

    pairs = [(_spec(op), _case(op, s)) for op, s in (("ROI_ALIGN1", "FLOAT32/linear/average/half-pixel/inside/random"),
                                                      ("ROI_POOLING", "FLOAT32/inside/random"))]
    results = run_cases(pairs, TorchBackend())
    assert [r.outcome for r in results] == [Outcome.NOT_SUPPORTED] * 2
    assert all("torchvision is not installed" in r.message for r in results)
