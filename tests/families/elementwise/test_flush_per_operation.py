"""Subnormals flushed per operation (`families.elementwise.flushing`): the
patterns sid's lavapipe showed under DirectML (issue #37), each accepted from
a backend that declares flushing, not from one that does not, and a wrong
value still rejected."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.compare import Tier, Verdict, compare
from dmlconform.families.elementwise import flushing
from dmlconform.families.elementwise.formula_oracle import OracleResult, evaluate
from dmlconform.formula import parse
from dmlconform.spec.model import NanPolicy

TINY = float(np.finfo(np.float32).smallest_normal)
LEAKY_RELU = parse("f(x) = x, if x >= 0\n       Alpha * x, otherwise")


def _verdicts(got: OracleResult, actual: list[Any], *, flush: bool = True, dtype: Any = np.float32,
              without_the_reading: bool = False) -> list[int]:
    alternatives = tuple(a for a in got.alternatives if not (without_the_reading and a.name.startswith(flushing.NAME)))
    return compare(got.expected, np.asarray(actual, dtype=dtype), policy=got.policy(flush_subnormals=flush),
                   bound_strict=got.bound_strict, alternatives=alternatives).status.tolist()


def test_a_select_returns_the_operand_its_comparison_flushed() -> None:
    """Leaky ReLU of -1.1754942e-38 (subnormal) over sid's lavapipe gives the input: x >= 0 saw -0, the select
    moved x unflushed.  Neither the flushed inputs (-0) nor a flushed output (the exact -1.2e-40 as 0) is it."""
    sub = np.float32(-1.1754942e-38)
    got = evaluate(LEAKY_RELU, {"x": np.float32([sub, -1.0, 2.0])}, {"Alpha": 0.01}, dtype=np.float32,
                   flush_subnormals=True)
    (alt,) = [a for a in got.alternatives if a.name == flushing.NAME]
    assert alt.tier is Tier.FLUSH and alt.index.tolist() == [0] and alt.values.tolist() == [float(sub)]
    assert _verdicts(got, [sub, -0.01, 2.0]) == [Verdict.PASS] * 3
    assert _verdicts(got, [sub, -0.01, 2.0], without_the_reading=True)[0] == Verdict.FAIL
    assert _verdicts(got, [sub, -0.01, 2.0], flush=False)[0] == Verdict.FAIL
    assert _verdicts(got, [-1.0, -0.01, 2.0])[0] == Verdict.FAIL  # a wrong value
    assert _verdicts(got, [sub, -0.01, 3.0])[2] == Verdict.FAIL  # no reading where nothing flushed


def test_an_input_and_the_result_flushed_in_one_element() -> None:
    """(a + b) / 2 of the largest subnormal and the smallest normal is about 2^-126, a normal number; a flushed,
    (0 + 2^-126) / 2 is subnormal, flushed too: 0 (ELEMENT_WISE_MEAN over sid's lavapipe)."""
    largest = np.nextafter(np.float32(TINY), np.float32(0))
    got = evaluate(parse("f(a, b) = (a + b) / 2"), {"a": np.float32([largest]), "b": np.float32([TINY])},
                   dtype=np.float32, flush_subnormals=True)
    assert got.expected.tolist() == [TINY]
    assert _verdicts(got, [0.0]) == [Verdict.PASS]
    assert _verdicts(got, [0.0], without_the_reading=True) == [Verdict.FAIL]
    assert _verdicts(got, [TINY / 4]) == [Verdict.FAIL]


def test_a_subnormal_quotient_flushed_inside_the_formula() -> None:
    """a - b * floor(a / b) of a = -2^-126, b = 1.5: the quotient is subnormal; flushed, floor(-0) is -0 and
    the result is a (seen in ELEMENT_WISE_MODULUS_FLOOR over sid's lavapipe)."""
    got = evaluate(parse("f(a, b) = a - b * floor(a / b)"), {"a": np.float32([-TINY]), "b": np.float32([1.5])},
                   dtype=np.float32, flush_subnormals=True)
    assert got.expected.tolist() == [np.float32(1.5)]
    assert _verdicts(got, [-TINY]) == [Verdict.PASS]
    assert _verdicts(got, [-TINY], without_the_reading=True) == [Verdict.FAIL]
    assert _verdicts(got, [TINY]) == [Verdict.FAIL]


def test_max_of_a_subnormal_and_nan_flushed_is_zero() -> None:
    """D3D's max returns the number; flushed, 0.  NaN (the formula) and the subnormal (IEEE) pass too."""
    got = evaluate(parse("f(a, b) = max(a, b)"), {"a": np.float32([1e-39]), "b": np.float32([np.nan])},
                   dtype=np.float32, flush_subnormals=True)
    for honest in (0.0, 1e-39, np.nan):
        assert _verdicts(got, [honest]) == [Verdict.PASS], honest
    assert _verdicts(got, [0.0], without_the_reading=True) == [Verdict.FAIL]
    assert _verdicts(got, [0.0], flush=False) == [Verdict.FAIL]
    assert _verdicts(got, [1.0]) == [Verdict.FAIL]


def test_a_comparison_into_an_integer_type_sees_the_flushed_operand() -> None:
    """1.4e-45 == 0 is 1 when the comparison flushes: the integer output gets the reading too."""
    got = evaluate(parse("f(a, b) = a == b"), {"a": np.float32([1.4e-45, 1.0]), "b": np.float32([0.0, 1.0])},
                   dtype=np.uint8, flush_subnormals=True, nan_policy=NanPolicy.FORMULA)
    assert got.expected.tolist() == [0, 1]
    assert _verdicts(got, [1, 1], dtype=np.uint8) == [Verdict.PASS] * 2
    assert _verdicts(got, [1, 1], dtype=np.uint8, without_the_reading=True)[0] == Verdict.FAIL
    assert _verdicts(got, [1, 1], dtype=np.uint8, flush=False)[0] == Verdict.FAIL
    assert _verdicts(got, [2, 0], dtype=np.uint8) == [Verdict.FAIL] * 2


def test_a_kernel_s_own_order_that_loses_a_normal_result_is_not_a_reading() -> None:
    """Scaled ELU with Alpha = 2^-126: DirectML's Gamma * (Alpha * (e^x - 1)) flushes the subnormal product
    and gives -0 where the doc's Gamma * (Alpha * e^x - Alpha) is about -1.2e-38, a normal number."""
    elu = parse("f(x) = Gamma * x, if x > 0\n       Gamma * (Alpha * exp(x) - Alpha), otherwise")
    got = evaluate(elu, {"x": np.float32([-20.0])}, {"Alpha": TINY, "Gamma": 1.0507}, dtype=np.float32,
                   flush_subnormals=True)
    assert abs(got.expected[0]) >= TINY
    assert _verdicts(got, [-0.0]) == [Verdict.FAIL]


def test_no_reading_without_a_declaration() -> None:
    got = evaluate(LEAKY_RELU, {"x": np.float32([-1e-39])}, {"Alpha": 0.01}, dtype=np.float32)
    assert not got.alternatives


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_reading_is_only_where_a_flush_changed_a_value(data: st.DataObject) -> None:
    """Every element the reading names has a subnormal input or a subnormal Alpha * x, and its value is
    the formula's with those zeros."""
    x = np.float32(data.draw(st.lists(st.floats(-2.0 ** -100, 2.0 ** -100, width=32), min_size=1, max_size=8), label="x"))
    alpha = data.draw(st.floats(-4, 4, width=32), label="Alpha")
    got = evaluate(LEAKY_RELU, {"x": x}, {"Alpha": alpha}, dtype=np.float32, flush_subnormals=True)
    a32 = np.float32(alpha)
    for alt in got.alternatives:
        if alt.name != flushing.NAME:
            continue
        at = x[alt.index].astype(np.float64)
        product = at * float(a32)
        assert (((np.abs(at) < TINY) & (at != 0)) | ((np.abs(product) < TINY) & (product != 0))).all()
        flushed = np.where(np.abs(at) < TINY, 0.0, at)
        literal = np.where(flushed >= 0, at, np.where(np.abs(product) < TINY, 0.0, product))
        assert (alt.values.astype(np.float64) == np.float32(literal).astype(np.float64)).all()
