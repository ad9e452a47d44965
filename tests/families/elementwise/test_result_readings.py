"""The readings that replace a result at a mask (`families.elementwise.result_readings`),
held against what the machine and the libraries do."""

from __future__ import annotations

import platform

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.catalog import load_spec
from dmlconform.families.elementwise import result_readings as rr
from dmlconform.families.elementwise.cases import generate
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

#: The types whose x86 conversion numpy's own cast performs the way the
#: reading describes (UINT32 and UINT64 take other instruction sequences).
X86_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="numpy's casts are x86's only on x86")
@pytest.mark.parametrize("dtype", X86_TYPES)
@given(data=st.data())
def test_indefinite_is_what_x86_gives(dtype: type, data: st.DataObject) -> None:
    """numpy's float -> integer cast is cvttsd2si on x86, what onnxruntime's
    Cast and torch's ``to`` give too (measured: 3e38 -> 0 in INT8, INT32_MIN in INT32)."""
    value = data.draw(st.one_of(st.floats(), st.floats(min_value=-2.0 ** 65, max_value=2.0 ** 65)), label="value")
    wide = np.int64 if np.dtype(dtype).itemsize == 8 else np.int32
    with np.errstate(invalid="ignore"):
        machine: np.ndarray = np.array([value]).astype(wide).astype(dtype)
    got = rr.to_integer(np.array([value]), np.dtype(dtype), m.Overflow.WRAP, m.FloatToInteger.INDEFINITE)
    assert got.tolist() == machine.tolist()


def test_the_measured_conversions() -> None:
    values = np.array([3e38, -3e38, np.nan, 2.0 ** 31, 300.0, -300.0, 70000.0, np.inf])
    indefinite = m.FloatToInteger.INDEFINITE
    assert rr.to_integer(values, np.dtype(np.int8), m.Overflow.WRAP, indefinite).tolist() == [0, 0, 0, 0, 44, -44,
                                                                                               112, 0]
    assert rr.to_integer(values, np.dtype(np.int32), m.Overflow.WRAP, indefinite).tolist() == [
        -2 ** 31, -2 ** 31, -2 ** 31, -2 ** 31, 300, -300, 70000, -2 ** 31]
    saturated = rr.to_integer(values, np.dtype(np.int8), m.Overflow.SATURATE, m.FloatToInteger.AS_OVERFLOW)
    assert saturated.tolist() == [127, -128, 0, 127, 127, -128, 127, 127]  # CUDA's cvt.rzi: +inf to the maximum


def test_ieee_pow_and_fmod_change_only_their_masks() -> None:
    shape = rr.ResultShape((), None, ("x", "y"))
    x = np.array([-np.inf, -0.0, -1.0, np.nan, -2.0, 2.0], dtype=np.float32)
    y = np.array([0.5, -3.0, np.inf, 0.0, 0.5, 3.0], dtype=np.float32)
    chunk = {"x": x, "y": y}
    where = rr.pow_specials(shape, chunk, {})
    assert where is not None and where.tolist() == [True, True, True, True, True, False]
    primary = np.array([np.nan, np.nan, np.nan, np.nan, np.nan, 8.0], dtype=np.float32)
    got = rr.ieee_pow(shape, chunk, {}, primary, where)
    assert got.tolist()[:3] == [np.inf, -np.inf, 1.0] and got[3] == 1.0 and np.isnan(got[4]) and got[5] == 8.0
    mod = rr.ResultShape((), rr.Modulus("a", "b", "floor"), None)
    a = np.array([1.0, -1.0, 0.0, 2.5], dtype=np.float32)
    b = np.array([np.inf, np.inf, -np.inf, 2.0], dtype=np.float32)
    infinite = rr.infinite_divisors(mod, {"a": a, "b": b})
    assert infinite is not None and infinite.tolist() == [True, True, True, False]
    fmod = rr.fmod_values(mod, {"a": a, "b": b}, np.full(4, np.nan, dtype=np.float32), infinite)
    assert fmod.tolist()[:3] == np.remainder(a, b).tolist()[:3] and np.isnan(fmod[3])  # numpy: [1, inf, -0]


def test_a_division_by_zero_gives_every_bit_set_or_zero() -> None:
    shape = rr.ResultShape(("b",), None, None, "a")
    values = np.array([7, 5, 0], dtype=np.uint8)
    chunk = {"a": values, "b": np.array([0, 1, 0], dtype=np.uint8)}
    where = np.array([True, False, True])
    assert rr.division_by_zero(shape, chunk, values, where, m.DivisionByZero.ALL_ONES).tolist() == [255, 5, 255]
    assert rr.division_by_zero(shape, chunk, values, where, m.DivisionByZero.ZERO).tolist() == [0, 5, 0]
    assert rr.division_by_zero(shape, chunk, values, where, m.DivisionByZero.QUOTIENT_ZERO) is values


def test_cuda_divides_a_small_64_bit_dividend_in_32_bits() -> None:
    """Measured (torch 2.11 on an H200): int64 remainder, fmod and trunc
    division by 0 give 4294967295 for a in [0, 2^32) and -1 otherwise."""
    a = np.array([-2 ** 63, -5, -1, 0, 7, 2 ** 31, 2 ** 32, 2 ** 63 - 1], dtype=np.int64)
    got = rr.division_by_zero(rr.ResultShape(("b",), None, None, "a"), {"a": a, "b": np.zeros_like(a)}, a.copy(),
                              np.ones(a.size, dtype=bool), m.DivisionByZero.ALL_ONES)
    assert got.tolist() == [-1, -1, -1, 4294967295, 4294967295, 4294967295, -1, -1]


def test_wide_saturation_is_what_cuda_gives() -> None:
    """Measured (torch 2.11 on an H200): ``to(int8)`` of 3e38, -3e38, NaN,
    2^31, 300, -300, 70000, inf is -1, 0, 0, -1, 44, -44, 112, -1."""
    values = np.array([3e38, -3e38, np.nan, 2.0 ** 31, 300.0, -300.0, 70000.0, np.inf])
    wide = m.FloatToInteger.WIDE_SATURATE
    assert rr.to_integer(values, np.dtype(np.int8), m.Overflow.WRAP, wide).tolist() == [-1, 0, 0, -1, 44, -44, 112, -1]
    assert rr.to_integer(values, np.dtype(np.int32), m.Overflow.WRAP, wide).tolist() == [
        2 ** 31 - 1, -2 ** 31, 0, 2 ** 31 - 1, 300, -300, 70000, 2 ** 31 - 1]
    assert rr.to_integer(values, np.dtype(np.uint8), m.Overflow.WRAP, wide).tolist() == [255, 0, 0, 255, 44, 212,
                                                                                          112, 255]


class _AtNegativeInfinity(CpuBackend):
    """The reference, with ``value`` where the input is -inf."""

    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def run(self, spec, case, buffers) -> None:  # type: ignore[no-untyped-def]
        super().run(spec, case, buffers)
        x = buffers[case.inputs[0].name]
        out = buffers[case.outputs[0].name]
        out[np.isneginf(x)] = self.value


@pytest.mark.parametrize("value, outcome, reading", [
    (np.nan, Outcome.PASS, "formula"),    # torch on CUDA: x^-0.5 as rsqrt(x), NaN at -inf like any negative base
    (0.0, Outcome.PASS, "ieee-754"),      # IEEE 754's pow(-inf, -0.5) = +0 (C, numpy)
    (1.0, Outcome.FAIL, None),            # neither
])
def test_minus_infinity_to_a_fractional_power(value: float, outcome: Outcome, reading: str | None) -> None:
    """pow(-inf, -0.5): the real power of a negative base to a non-integer
    power is NaN (the ``formula`` reading), IEEE 754 says +0."""
    spec = load_spec(REPO / "specs" / "ELEMENT_WISE_CONSTANT_POW.yaml")
    case = next(c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)
                if c.id == "ELEMENT_WISE_CONSTANT_POW/FLOAT32/4d/ambiguity(ieee-pow)/Exponent=-0.5")
    assert np.isneginf(case.inputs[0].buffer).any()
    result = run_cases([(spec, case)], _AtNegativeInfinity(value))[0]
    assert result.outcome is outcome, result.message
    if reading is not None:  # the -inf element's reading (`CaseResult.readings`: key, differ, took)
        took = {key for key, differ, count in result.readings if key.startswith("reading:ieee-pow") and count}
        assert took == {f"reading:ieee-pow{'=' if reading == 'formula' else ':'}{reading}"}, result.readings
