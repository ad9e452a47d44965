"""`oracles.base.spacing_above`, the one-spacing room every family's bound
adds, past the output type's range: a bound stays a bound (infinite, never NaN)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from dmlconform.families.contraction.oracle import ContractionBatch
from dmlconform.oracles.base import spacing_above
from dmlconform.spec import model as m


@pytest.mark.parametrize("nt", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16])
def test_one_spacing_at_or_above_the_value_and_the_largest_past_the_range(nt: type) -> None:
    top = float(ml_dtypes.finfo(nt).max)
    x = np.array([0.0, 1.0, 3.0, top, top * 1.5 if np.isfinite(top * 1.5) else np.inf, np.inf])
    got = spacing_above(x, np.dtype(nt)).astype(np.float64)
    assert not np.isnan(got).any()
    assert got[3] == got[4] == got[5] == np.inf  # np.spacing of the largest value is infinite too
    below = float(np.nextafter(np.asarray(top, dtype=nt), np.asarray(0, dtype=nt)))
    assert np.isfinite(spacing_above(np.array([below]), np.dtype(nt))).all()
    assert got[1] == float(np.spacing(np.asarray(1.0, dtype=nt))) and got[2] >= got[1]


def test_a_gemm_bound_past_float32s_range_is_a_bound_not_nan() -> None:
    """T near float32's largest value with a large S: |T| plus the worst case
    overflows float32, whose spacing of infinity was NaN and FAILed every
    value but the expected one's bits."""
    expected = np.float32([3.0e38, 1.0])
    magnitude = np.float32([3.0e38, np.inf])  # the second: S overflowed float32 (no bound there)
    batch = ContractionBatch(expected, magnitude, np.zeros(2, bool), np.array([512]), np.array([514]),
                             np.array([0, 2]), 2.0 ** -24, m.DataType.FLOAT32)
    (exp,) = batch.expect(0, 2)
    assert exp.bound_strict is not None and exp.bound_relaxed is not None
    assert not np.isnan(exp.bound_strict).any() and not np.isnan(exp.bound_relaxed).any()
    assert 0 < exp.bound_strict[0] < np.inf and exp.bound_relaxed[1] == np.inf
