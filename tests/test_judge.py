"""judge: an element's ULP distance is None exactly where one value is NaN
and the other is not, whatever the distance comes out as."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.catalog import load_spec
from dmlconform.families.elementwise.cases import generate
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO


class _Writes(CpuBackend):
    """The reference, then ``value`` written over every output element."""

    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value

    def run(self, spec, case, buffers) -> None:  # type: ignore[no-untyped-def]
        super().run(spec, case, buffers)
        buffers[case.outputs[0].name][...] = self.value


def _edges(dtype: str):  # type: ignore[no-untyped-def]
    spec = load_spec(REPO / "specs" / "ELEMENT_WISE_IDENTITY.yaml")
    case = next(c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)
                if c.id == f"ELEMENT_WISE_IDENTITY/{dtype}/1d/edges")
    return spec, case


@pytest.mark.parametrize("dtype, value, far", [
    ("FLOAT64", 2.0, 2 ** 62),           # 0 and 2 in float64 are 2**62 ULP apart: a real distance
    ("INT64", 2 ** 63 - 1, 2 ** 64 - 1),  # INT64_MIN and INT64_MAX: the largest uint64, as NaN vs number gets
])
def test_far_apart_numbers_keep_their_distance(dtype: str, value: object, far: int) -> None:
    result = run_cases([_edges(dtype)], _Writes(value))[0]
    assert result.outcome is Outcome.FAIL
    numbers = [d for d in result.worst if not math.isnan(d.expected)]
    assert all(d.ulp is not None for d in numbers)
    assert max(d.ulp for d in numbers) >= far   # type: ignore[type-var]
    assert result.max_ulp == max(d.ulp for d in numbers)


def test_nan_against_a_number_has_no_distance() -> None:
    result = run_cases([_edges("FLOAT32")], _Writes(np.float32(0.5)))[0]
    nan = [d for d in result.worst if math.isnan(d.expected)]
    assert nan and all(d.ulp is None for d in nan)
    assert all(d.ulp is not None for d in result.worst if not math.isnan(d.expected))
