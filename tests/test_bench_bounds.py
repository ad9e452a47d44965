"""The bound audit's arithmetic (`bench/bench_bounds.py`, issue #32 item 1)
on toy expectations: a bound wider than the value is flagged, the ULP
budget is measured in the output's own spacing, honest errors count NaN,
infinities and accepted alternatives as the comparator does."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import numpy as np
import pytest

from dmlconform.compare import Alternative, Tier
from dmlconform.oracles.base import Expectation
from tests.conftest import REPO


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_bounds", REPO / "bench" / "bench_bounds.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(REPO / "bench"))  # its `honest_backends`, as when it runs as a script
    sys.modules["bench_bounds"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _expectation(expected: list[float], bound: list[float] | None, *, ulp: int = 2,
                 alternatives: tuple[Alternative, ...] = ()) -> Expectation:
    e = np.array(expected, np.float32)
    b = None if bound is None else np.array(bound, np.float64)
    return Expectation(e, b, None, alternatives, ulp, 4.0, False)


def test_ulp_reach_is_the_spacing_of_the_output_type(bench: ModuleType) -> None:
    x = np.array([1.0, -1.0, 0.0, np.finfo(np.float32).max], np.float32)
    reach = bench.ulp_reach(x, 2)
    assert reach[0] == reach[1] == 2 * 2.0 ** -23
    assert reach[2] == 2 * 2.0 ** -149
    assert reach[3] == 2 * 2.0 ** 104  # above the largest float lies infinity: the distance below
    half = bench.ulp_reach(np.array([1.0], np.float16), 8)
    assert half[0] == 8 * 2.0 ** -10


def test_a_bound_wider_than_the_value_is_an_outlier(bench: ModuleType) -> None:
    """bound_strict 200 at 100 is 800 at FAIL (relaxed factor 4): a ratio of 8."""
    wide = bench.measure("OP/FLOAT32/wide", _expectation([100.0, 1.0], [200.0, 0.0]), 2, [])
    assert wide.value.max() == pytest.approx(8.0) and wide.large == pytest.approx(8.0)
    group = bench.Group()
    group.add(wide)
    row = bench.row(("OP", "FLOAT32"), group)
    assert row.outlier and row.value_worst_case == "OP/FLOAT32/wide" and row.honest_worst is None

    tight = bench.Group()
    tight.add(bench.measure("OP/FLOAT32/tight", _expectation([100.0, 1.0], None), 2, []))
    assert not bench.row(("OP", "FLOAT32"), tight).outlier  # 8 ULP: 2^-20 of the value


def test_the_honest_ratio_is_taken_where_an_honest_error_is_nearest_the_bound(bench: ModuleType) -> None:
    exp = _expectation([1.0, 2.0, 4.0], [1e-3, 1e-3, 1e-3])
    one = np.array([1.0 + 1e-4, 2.0, 4.0], np.float32)
    other = np.array([1.0, 2.0 + 2e-3, 4.0], np.float32)  # within the FAIL bound 4e-3, the nearest to it
    m = bench.measure("OP/FLOAT32/c", exp, 2, [one, other])
    error = float(np.float32(2.0 + 2e-3)) - 2.0
    assert m.honest == pytest.approx(4e-3 / error) and m.beyond == 0
    far = np.array([1.0, 2.0, 4.0 + 1e-2], np.float32)
    assert bench.measure("OP/FLOAT32/c", exp, 2, [far]).beyond == 1
    exact = bench.measure("OP/FLOAT32/c", exp, 2, [exp.expected.copy()])
    assert exact.honest is None  # every honest value exact: no ratio, not a division by zero


def test_honest_errors_follow_the_comparator(bench: ModuleType) -> None:
    expected = np.array([np.nan, np.inf, 1.0, 5.0], np.float32)
    actual = np.array([np.nan, np.inf, np.nan, 7.0], np.float32)
    alt = Alternative("reading:x=y", np.array([3]), np.array([7.0], np.float32), Tier.STRICT, "")
    error = bench.honest_error(expected, actual, (alt,), 0)
    assert error.tolist() == [0.0, 0.0, np.inf, 0.0]
    assert bench.honest_error(expected, actual, (), 0)[3] == 2.0
