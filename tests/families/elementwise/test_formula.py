"""The formula language's additions for the reviewed-formula operators
(docs/bitwise.md): popcount at the input's width, roundaway, and bitwise
operations on float tensors' encodings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dmlconform.errors import FormulaError
from dmlconform.families.elementwise.formula_oracle import evaluate, on_encodings
from dmlconform.formula import parse


def test_popcount_counts_the_inputs_encoding_not_the_outputs() -> None:
    """popcount(-1) of an INT16 tensor is 16 also when the output is UINT8
    (the width was the output's: 8)."""
    got = evaluate(parse("f(x) = popcount(x)"), {"x": np.int16([-1, 0, 5, -128])}, dtype=np.uint8).expected
    assert got.tolist() == [16, 0, 2, 9]


def test_popcount_of_float_tensors_counts_their_encoding() -> None:
    got = evaluate(parse("f(x) = popcount(x)"), {"x": np.float16([-1.0, 0.0, 1.0, -0.0])}, dtype=np.uint8).expected
    assert got.tolist() == [5, 0, 4, 1]  # 0xBC00, 0x0000, 0x3C00, 0x8000


def test_roundaway_rounds_halves_away_from_zero_exactly() -> None:
    x = np.float32([-2.5, -1.5, -0.5, 0.49999997, 0.5, 1.5, 2.5, 8388607.5, np.inf, -0.25])
    got = evaluate(parse("f(x) = roundaway(x)"), {"x": x}, dtype=np.float32).expected
    assert got.tolist() == [-3, -2, -1, 0, 1, 2, 3, 8388608, np.inf, -0.0]
    big = np.float64([2.0 ** 52 + 1])  # floor(x + 0.5) would give 2**52 + 2
    assert evaluate(parse("f(x) = roundaway(x)"), {"x": big}, dtype=np.float64).expected.tolist() == [2.0 ** 52 + 1]


def test_roundaway_of_an_integer_quotient_rounds_the_exact_quotient() -> None:
    got = evaluate(parse("f(a, b) = roundaway(a / b)"), {"a": np.int32([5, -5, 7]), "b": np.int32([2, 2, 2])},
                   dtype=np.int32).expected
    assert got.tolist() == [3, -3, 4]


def test_float_and_works_on_encodings_and_keeps_every_bit() -> None:
    a, b = np.float32([-1.0, -0.0, 1.5, np.nan]), np.float32([3.0, -2.0, np.inf, 1.0])
    r = evaluate(parse("f(a, b) = a & b"), {"a": a, "b": b}, dtype=np.float32)
    want = (a.view(np.uint32) & b.view(np.uint32)).view(np.float32)
    assert r.expected.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert r.signed_zero and r.ulp == 0


@given(st.lists(st.integers(0, 2 ** 16 - 1), min_size=1, max_size=20, unique=False).map(np.uint16))
def test_xor_from_and_or_not_is_xor_on_every_float16_encoding(bits: np.ndarray) -> None:
    """BIT_XOR's formula ``(a | b) & ~(a & b)`` on float16 encodings (NaNs,
    subnormals, -0 among them) is numpy's xor, bit for bit."""
    a, b = bits.view(np.float16), bits[::-1].copy().view(np.float16)
    r = evaluate(parse("f(a, b) = (a | b) & ~(a & b)"), {"a": a, "b": b}, dtype=np.float16)
    assert r.expected.view(np.uint16).tolist() == (bits ^ bits[::-1]).tolist()


def test_only_formulas_of_bitwise_operations_read_encodings() -> None:
    assert on_encodings(parse("f(a, b) = (a | b) & ~(a & b)"))
    assert not on_encodings(parse("f(a, b) = (a & b) + 1"))
    assert not on_encodings(parse("f(a, b) = a << b"))
    with pytest.raises(FormulaError, match="needs integer tensors"):
        evaluate(parse("f(a, b) = (a & b) + a"), {"a": np.float32([1]), "b": np.float32([1])}, dtype=np.float32)


@given(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]).flatmap(
    lambda t: st.lists(st.integers(int(np.iinfo(t).min), int(np.iinfo(t).max)), min_size=1, max_size=16).map(
        lambda xs: np.asarray(xs, dtype=t))))
def test_popcount_is_the_count_of_ones_of_the_twos_complement_encoding(x: np.ndarray) -> None:
    bits = x.dtype.itemsize * 8
    want = [bin(int(v) % (1 << bits)).count("1") for v in x.tolist()]
    assert evaluate(parse("f(x) = popcount(x)"), {"x": x}, dtype=np.uint8).expected.tolist() == want


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_roundaway_is_half_away_from_zero_on_every_float32(v: float) -> None:
    """Against exact decimal arithmetic (ROUND_HALF_UP rounds halves away from zero)."""
    from decimal import ROUND_HALF_UP, Decimal

    want = float(Decimal(v).to_integral_value(rounding=ROUND_HALF_UP))
    got = evaluate(parse("f(x) = roundaway(x)"), {"x": np.float32([v])}, dtype=np.float32).expected[0]
    assert got == want
