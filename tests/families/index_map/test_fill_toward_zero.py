"""FILL_VALUE_SEQUENCE's ``float-rounding:toward-zero`` reading (issue #37,
item 4): the exact ValueStart + i * ValueDelta truncated toward zero into
the output's float type, as CAST reads a narrowing conversion.  The real
DirectML's FLOAT16 sequences over sid's lavapipe take it at every element
where it differs from ties-to-even (56 of 56, 30 of 30, 57 of 57)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, writable_view
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.index_map.generated import union_value
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from dmlconform.spec.model import DataType, FeatureLevel
from tests.conftest import REPO

OP = "FILL_VALUE_SEQUENCE"


def _spec() -> m.Spec:
    return load_spec(REPO / "specs" / f"{OP}.yaml")


class _Directed(CpuBackend):
    """The cpu reference, with a FLOAT16 sequence's exact value rounded toward zero (or away from it)."""

    def __init__(self, *, away: bool) -> None:
        super().__init__()
        self.away = away

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        super().run(spec, case, buffers)
        out = case.outputs[0]
        if out.dtype is not DataType.FLOAT16:
            return
        view = writable_view(out, buffers[out.name])
        attrs = case.attribute_map()
        start, delta = (Fraction(float(union_value(attrs[k], DataType.FLOAT16))) for k in ("ValueStart", "ValueDelta"))
        exact = np.array([float(start + i * delta) for i in range(view.size)])  # exact here: few bits
        nearest = exact.astype(np.float16)
        past = np.abs(nearest.astype(np.float64)) > np.abs(exact)
        short = np.abs(nearest.astype(np.float64)) < np.abs(exact)
        toward = np.where(past, np.nextafter(nearest, np.float16(0)), nearest)
        away = np.where(short, np.nextafter(nearest, np.copysign(np.float16(np.inf), nearest)), nearest)
        view[...] = (away if self.away else toward).reshape(view.shape)


def _results(*, away: bool) -> dict[str, tuple[Outcome, bool]]:
    cases = [c for c in cases_of(_spec(), FeatureLevel.FL_6_2, seed=0) if c.dtype is DataType.FLOAT16]
    return {r.case_id: (r.outcome, any(n == "reading:float-rounding:toward-zero" and took for n, _, took in r.readings))
            for r in run_cases([(_spec(), c) for c in cases], _Directed(away=away))}


@pytest.mark.parametrize("case", ["start=1,delta=0.1", "start=2048,delta=1", "start=0,delta=-1/3"])
def test_toward_zero_is_a_reading_and_away_from_zero_fails(case: str) -> None:
    key = f"{OP}/FLOAT16/4d/{case}"
    assert _results(away=False)[key] == (Outcome.PASS, True)
    assert _results(away=True)[key][0] is Outcome.FAIL
