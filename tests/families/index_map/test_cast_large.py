"""CAST's ``--large`` path (issue #34, "Done means"): numpy's narrowing
``astype`` and the readings derived from it (`conversions.narrowed`) are
bit for bit the exact path's (`conversions.to_float`) over every class of
bit patterns (signs, every exponent, ties, neighbours of ties, sticky bits,
subnormals, overflow, infinities, NaN); the large case, judged block by
block (`generated_oracle.CastBatch`), still tells the readings apart and
FAILs a wrong value."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case, writable_view
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.index_map.conversions import NARROWING, narrowed, readings, to_float
from dmlconform.plan import COMPARE_ELEMENTS
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from dmlconform.spec.model import DataType as D
from dmlconform.spec.model import numpy_dtype
from tests.conftest import REPO

#: (source, target, unsigned type of the source's bits, significand bits of the source, of the target).
PAIRS = ((D.FLOAT32, D.FLOAT16, np.uint32, 23, 10), (D.FLOAT64, D.FLOAT32, np.uint64, 52, 23))
LARGE = "CAST/FLOAT32/4d/to=FLOAT16/large"


def _exact(x: np.ndarray, target: D) -> dict[str, np.ndarray]:
    """The exact path's three values (integer rounding, `to_float`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return {"nearest": to_float(x, target), "float-rounding:toward-zero": to_float(x, target, nearest=False),
                "float-overflow:saturate": to_float(x, target, saturate=True)}


def _same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Equal bit patterns, or both NaN of the same sign (NaN payloads aside)."""
    u = f"u{got.dtype.itemsize}"
    both_nan = np.isnan(got) & np.isnan(want) & (np.signbit(got) == np.signbit(want))
    return (got.view(u) == want.view(u)) | both_nan


def _assert_narrowed_exact(x: np.ndarray, target: D) -> None:
    nearest, others = narrowed(x, target)
    want = _exact(x, target)
    for key, got in {"nearest": nearest, **others}.items():
        assert got.dtype == numpy_dtype(target), key
        bad = np.flatnonzero(~_same_bits(got, want[key]))
        assert not bad.size, f"{key}: x={x[bad[:4]]!r} gives {got[bad[:4]]!r}, the exact path {want[key][bad[:4]]!r}"


def _classes(bits: type[np.unsignedinteger], mantissa: int, exponents: np.ndarray) -> np.ndarray:
    """Bit patterns of both signs at ``exponents`` whose significand holds, at
    every rounding position p, each tail class (zero, one below half, half,
    half + sticky, all ones) under a kept part of zero, odd, or all ones."""
    one = bits(1)
    found = []
    for p in range(1, mantissa + 1):
        half = one << bits(p - 1)
        below = (one << bits(p)) - one
        tails = np.array([0, half - one, half, half | one, below], dtype=bits)
        top = (one << bits(mantissa)) - one
        kept = np.array([0, one << bits(p), top & ~below], dtype=bits)
        found.append((kept[:, None] | tails[None, :]).reshape(-1))
    significands = np.unique(np.concatenate(found))
    width = 8 * np.dtype(bits).itemsize
    signs = np.array([0, one << bits(width - 1)], dtype=bits)
    fields = exponents.astype(bits) << bits(mantissa)
    return (signs[:, None, None] | fields[None, :, None] | significands[None, None, :]).reshape(-1)


def test_the_narrowings_are_exactly_the_pairs_numpy_rounds_once() -> None:
    assert NARROWING == {(s, t) for s, t, *_ in PAIRS}


def test_float32_to_float16_is_exact_over_every_exponent_and_tail_class() -> None:
    x = _classes(np.uint32, 23, np.arange(256)).view(np.float32)
    _assert_narrowed_exact(x, D.FLOAT16)


def test_float64_to_float32_is_exact_over_the_exponents_around_float32s_range() -> None:
    # float32's subnormals reach 2^-149 and its range 2^128: the float64 exponents around them, and the ends
    exponents = np.concatenate([np.arange(0, 4), np.arange(1023 - 160, 1023 + 132), np.arange(2044, 2048)])
    x = _classes(np.uint64, 52, exponents).view(np.float64)
    _assert_narrowed_exact(x, D.FLOAT32)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(PAIRS), st.data())
def test_narrowed_matches_the_exact_path_on_any_bit_pattern(pair: tuple, data: st.DataObject) -> None:
    source, target, bits, mantissa, kept = pair
    width = 8 * np.dtype(bits).itemsize
    raw = data.draw(st.lists(st.integers(0, 2 ** width - 1), min_size=1, max_size=32), label="bits")
    # a tie of the target's rounding at a random place: the kept bits' lowest, then 10...0 below
    ties = data.draw(st.lists(st.integers(0, 2 ** (width - mantissa - 1) - 1), max_size=8), label="tie heads")
    tie_bits = [(h << mantissa) | (1 << (mantissa - kept - 1)) for h in ties]
    x = np.array(raw + tie_bits, dtype=bits).view(numpy_dtype(source))
    _assert_narrowed_exact(x, target)


def test_readings_takes_the_narrowing_for_its_pairs_only() -> None:
    x = np.array([1.0 + 2.0 ** -11, 70000.0, -np.inf], dtype=np.float64)
    _, wide = readings(x, D.FLOAT64, D.FLOAT16)  # not a narrowing pair: through float32 is a reading there
    assert "float-rounding:through-float32" in wide
    _, narrow = readings(x.astype(np.float32), D.FLOAT32, D.FLOAT16)
    assert sorted(narrow) == ["float-overflow:saturate", "float-rounding:toward-zero"]
    assert narrow["float-rounding:toward-zero"].tolist() == [1.0, 65504.0, -np.inf]
    assert narrow["float-overflow:saturate"].tolist() == [1.0, 65504.0, -np.inf]


# -- the large case, block by block ---------------------------------------------------------------
@cache
def _large() -> tuple[m.Spec, Case]:
    spec = load_spec(REPO / "specs" / "CAST.yaml")
    (case,) = cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, large=True, keep=lambda i, _: i == LARGE)
    return spec, case


class _TowardZero(CpuBackend):
    """Converts to FLOAT16 truncating toward zero (an honest reading)."""

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        super().run(spec, case, buffers)
        x = np.asarray(case.inputs[0].view(buffers[case.inputs[0].name]))
        _, others = narrowed(x, D.FLOAT16)
        writable_view(case.outputs[0], buffers[case.outputs[0].name])[...] = others["float-rounding:toward-zero"]


#: Where `_OneNegated` starts looking: deep in a later comparison block.
NEGATED_FROM = 17 * COMPARE_ELEMENTS + 12345


class _OneNegated(CpuBackend):
    """The reference's result with its first finite non-zero element from `NEGATED_FROM` on negated."""

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        super().run(spec, case, buffers)
        out = writable_view(case.outputs[0], buffers[case.outputs[0].name]).reshape(-1)
        tail = out[NEGATED_FROM:]
        at = NEGATED_FROM + int(np.flatnonzero(np.isfinite(tail) & (tail != 0))[0])
        out[at] = -out[at]


def _readings(result: CaseResult) -> dict[str, tuple[int, int]]:
    return {name: (n, took) for name, n, took in result.readings}


@pytest.mark.slow
def test_the_large_cast_passes_and_counts_the_primary_reading() -> None:
    (result,) = run_cases([_large()], CpuBackend())
    assert result.outcome is Outcome.PASS, result.message
    rounding = _readings(result)["reading:float-rounding=nearest-even"]
    assert rounding[0] > 2 ** 22 and rounding[1] == rounding[0]  # about half the elements tell the readings apart
    assert _readings(result)["reading:float-rounding:toward-zero"][1] == 0


@pytest.mark.slow
def test_the_large_cast_tells_truncation_toward_zero_apart() -> None:
    (result,) = run_cases([_large()], _TowardZero())
    assert result.outcome is Outcome.PASS, result.message
    n, took = _readings(result)["reading:float-rounding:toward-zero"]
    assert took == n > 2 ** 22
    # the primary explains only the elements past FLOAT16's range, where truncation meets saturation
    primary = _readings(result)["reading:float-rounding=nearest-even"]
    assert primary[0] == n and primary[1] < n // 2


@pytest.mark.slow
def test_a_wrong_value_in_the_large_cast_fails() -> None:
    (result,) = run_cases([_large()], _OneNegated())
    assert result.outcome is Outcome.FAIL
    assert "Mismatched elements: 1 / 16777216" in result.message, result.message
    (diff,) = result.worst
    assert np.ravel_multi_index(diff.index, _large()[1].outputs[0].sizes) >= NEGATED_FROM
    assert diff.actual == -diff.expected != 0


@pytest.mark.slow
def test_the_planted_clamp_of_infinities_fails_the_large_cast() -> None:
    (result,) = run_cases([_large()], FaultyBackend("cast-float16-infinity-clamped"))
    assert result.outcome is Outcome.FAIL, result.message
