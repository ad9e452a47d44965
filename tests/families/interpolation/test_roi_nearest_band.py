"""ROI_ALIGN's NEAREST samples within the ``out-of-bounds:band`` reading
(issue #37, item 4): a sample whose coordinate lies between an edge and one
element past it reads the edge element (as the LINEAR path's clamped
coordinate does), and only one beyond the band is OutOfBoundsInputValue.
The real DirectML's kernels (over vkd3d and lavapipe, both Mesas) take that
reading at every element of the partly-outside NEAREST cases."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.families.interpolation.roi_cases import RoiGeometry
from dmlconform.families.interpolation.roi_oracle import Reading, evaluate
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.window.suites import case as _case
from tests.families.window.suites import spec as _spec

CASE = "ROI_ALIGN/FLOAT32/nearest/max/half-pixel/partly-outside-value/random"
#: The real libdirectml.so's output of CASE (seed 0) over bookworm's and sid's lavapipe alike, read back.
DIRECTML = np.array([
    -0.4124021828174591, 0.822670578956604, 0.822670578956604, 0.2507816553115845, 0.822670578956604,
    0.822670578956604, -0.46300747990608215, -0.2885534465312958, 0.6271659135818481, 0.15802647173404694,
    0.2908865511417389, 0.6271659135818481, -0.14267727732658386, 0.2944076359272003, 0.2944076359272003,
    0.7068221569061279, 0.8234173655509949, 0.8234173655509949, 0.48101338744163513, 0.654217541217804, -2.5,
    0.48101338744163513, 0.654217541217804, -2.5, 0.8692354559898376, -0.3063652813434601, -2.5,
    0.8692354559898376, -0.3063652813434601, -2.5, 0.7899650931358337, -0.6014930009841919, -2.5,
    0.7899650931358337, -0.6014930009841919, -2.5], np.float32)


class _Recorded(CpuBackend):
    """Gives a recorded output for CASE (the CPU reference's description)."""

    def __init__(self, output: np.ndarray) -> None:
        super().__init__()
        self.output = output

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        buffers[case.outputs[0].name][...] = self.output


def _outcome(output: np.ndarray) -> tuple[Outcome, tuple[str, ...]]:
    (result,) = run_cases([(_spec("ROI_ALIGN"), _case("ROI_ALIGN", CASE.split("/", 1)[1]))], _Recorded(output))
    return result.outcome, tuple(name for name, _, took in result.readings if took)


def test_directmls_output_passes_in_the_band_reading() -> None:
    outcome, took = _outcome(DIRECTML)
    assert outcome is Outcome.PASS
    assert "reading:out-of-bounds:band" in took


def test_a_wrong_value_still_fails() -> None:
    wrong = DIRECTML.copy()
    wrong[1] = DIRECTML[0]  # output (0, 0, 0, 1) given its neighbour's maximum: no reading's
    assert _outcome(wrong)[0] is Outcome.FAIL
    wrong = DIRECTML.copy()
    wrong[20] = 0.654217541217804  # every sample of (0, 0, 1, 2) lies beyond the band: the value, not an edge
    assert _outcome(wrong)[0] is Outcome.FAIL


def test_nearest_samples_in_the_band_read_the_edge_and_beyond_it_the_value() -> None:
    plane = np.arange(1.0, 5.0).reshape(1, 1, 1, 4)  # one row of 4: 1 2 3 4
    geo = RoiGeometry(reduction="DML_REDUCE_FUNCTION_MAX", mode="DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR",
                      scale_x=1.0, scale_y=1.0, input_offset=0.0, output_offset=0.0, out_of_bounds=-9.0,
                      min_samples=1, max_samples=1, align_corners=False)
    # one sample per output at x = x1 + o: -1.6 (beyond), -0.6 (band: the first element), 3.6 (band: the last)
    rois = np.array([[-1.6, 0.0, 3.4, 1.0]])
    band = evaluate(plane, rois, np.array([0]), geo, (1, 6), Reading(out_of_bounds="band"), 2.0 ** -24)
    assert band.value.reshape(-1).tolist() == [-9.0, 1.0, 1.0, 2.0, 3.0, 4.0]
    sample = evaluate(plane, rois, np.array([0]), geo, (1, 6), Reading(), 2.0 ** -24)
    assert sample.value.reshape(-1).tolist() == [-9.0, -9.0, 1.0, 2.0, 3.0, 4.0]
