"""The oracle against closed forms computed another way (mpmath), its NaN,
limit and signed-zero semantics, attributes as float32, integer types, and
the error bound an honest implementation needs (issue 4, part 3 and 5)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.compare import Tier, Verdict, compare, ulp_distance
from dmlconform.errors import FormulaError, InputError
from dmlconform.families.elementwise.formula_oracle import evaluate
from dmlconform.formula import parse
from dmlconform.oracles.base import range_lost
from dmlconform.spec.model import NanPolicy, Overflow
from tests.formula import closed_forms as cf

SOFTSIGN = parse("f(x) = x / (1 + abs(x))")
SHRINK = parse("f(x) = x - Bias, if x > Threshold\n       x + Bias, if x < -Threshold\n       0,        otherwise")
SIGN = parse("f(x) = -1, if x < 0\n        1, if x > 0\n        0, otherwise // This includes negative zero.")
HARD_SIGMOID = parse("f(x) = max(0, min(Alpha * x + Beta, 1))")
SWISH = parse("f(x) = x * Sigmoid(SigmoidInputScale * x)")
DTYPES = [np.float32, np.float16]


def values_of(dtype: type, *, max_size: int = 40) -> st.SearchStrategy[np.ndarray]:
    width = 8 * np.dtype(dtype).itemsize
    return st.lists(st.floats(width=width, allow_nan=False, allow_infinity=False), min_size=1, max_size=max_size).map(
        lambda xs: np.asarray(xs, dtype=dtype))


attribute = st.floats(-4, 4, width=32, allow_subnormal=False)


def exactly(result: np.ndarray, want: np.ndarray) -> None:
    bad = np.flatnonzero(ulp_distance(result, want) != 0)
    assert bad.size == 0, f"out={result[bad[:5]]}, but should be {want[bad[:5]]}"


# -- closed forms --------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_softsign(dtype: type, data: st.DataObject) -> None:
    x = data.draw(values_of(dtype), label="x")
    exactly(evaluate(SOFTSIGN, {"x": x}, dtype=dtype).expected, cf.expected(cf.softsign, x, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_shrink(dtype: type, data: st.DataObject) -> None:
    x = data.draw(values_of(dtype), label="x")
    bias, threshold = data.draw(attribute, label="Bias"), data.draw(attribute, label="Threshold")
    got = evaluate(SHRINK, {"x": x}, {"Bias": bias, "Threshold": threshold}, dtype=dtype).expected
    exactly(got, cf.expected(cf.shrink(bias, threshold), x, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_sign(dtype: type, data: st.DataObject) -> None:
    x = data.draw(values_of(dtype), label="x")
    got = evaluate(SIGN, {"x": x}, dtype=dtype, nan_policy=NanPolicy.FORMULA)
    exactly(got.expected, cf.expected(cf.sign, x, dtype))
    assert got.signed_zero and got.ulp == 0


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_hard_sigmoid(dtype: type, data: st.DataObject) -> None:
    x = data.draw(values_of(dtype), label="x")
    alpha, beta = data.draw(attribute, label="Alpha"), data.draw(attribute, label="Beta")
    got = evaluate(HARD_SIGMOID, {"x": x}, {"Alpha": alpha, "Beta": beta}, dtype=dtype).expected
    exactly(got, cf.expected(cf.hard_sigmoid(alpha, beta), x, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_swish(dtype: type, data: st.DataObject) -> None:
    x = data.draw(values_of(dtype), label="x")
    scale = data.draw(attribute, label="SigmoidInputScale")
    got = evaluate(SWISH, {"x": x}, {"SigmoidInputScale": scale}, dtype=dtype).expected
    exactly(got, cf.expected(cf.swish(scale), x, dtype))


def test_swish_just_above_a_subnormal_tie() -> None:
    """x = 2**-149, SigmoidInputScale = 1.82e-21: x / (1 + exp(-s x)) is
    x / 2 * (1 + 2.3e-66), just above half the smallest subnormal, so it
    rounds up to x; the closed form must see that too (hypothesis found it)."""
    x = np.float32([2.0 ** -149])
    got = evaluate(SWISH, {"x": x}, {"SigmoidInputScale": 1.82e-21}, dtype=np.float32).expected
    assert got.tolist() == [2.0 ** -149]
    exactly(got, cf.expected(cf.swish(1.82e-21), x, np.float32))


def test_swish_just_below_a_subnormal_tie_past_256_bits() -> None:
    """x = 2787 * 2**-149, SigmoidInputScale = -5.09e-38: s x = -2e-79, so
    x * Sigmoid(s x) is x / 2 * (1 - 1e-79), just below the tie at 1393.5
    subnormal steps; at 256 bits exp(2e-79) is 1 and the value sat on the
    tie, rounded to even (1394).  The exact evaluation widens where it
    lands on a tie (hypothesis found it in CI)."""
    x = np.float32([3.905e-42])
    got = evaluate(SWISH, {"x": x}, {"SigmoidInputScale": -5.094702508303895e-38}, dtype=np.float32).expected
    assert got.view(np.int32).tolist() == [1393]
    exactly(got, cf.expected(cf.swish(-5.094702508303895e-38), x, np.float32))


def test_a_real_tie_still_rounds_to_even() -> None:
    """x / 2 of an odd count of subnormal steps is a true tie: the wider
    evaluation changes nothing."""
    half = parse("f(x) = x * 0.5")
    x = np.float32([2787 * 2.0 ** -149, 2789 * 2.0 ** -149])
    got = evaluate(half, {"x": x}, dtype=np.float32).expected
    assert got.view(np.int32).tolist() == [1394, 1394]


def test_float64_is_not_always_enough() -> None:
    """1 + 2**-24 is a float32 tie; adding 2**-80 in float64 lands on the tie
    again, and rounding it to even would go down.  The exact sum is above the
    tie: the oracle sees the doubt and recomputes."""
    add3 = parse("f(a, b, c) = a + b + c")
    inputs = {"a": np.float64([1.0, 1.0]), "b": np.float64([2.0 ** -24, 2.0 ** -24]), "c": np.float64([2.0 ** -80, 0])}
    result = evaluate(add3, inputs, dtype=np.float32)
    assert result.expected.tolist() == [1 + 2 ** -23, 1.0]
    assert result.refined == 1
    assert evaluate(add3, inputs, dtype=np.float32, refine=False).expected.tolist() == [1.0, 1.0]


def test_wide_swish_is_correctly_rounded() -> None:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(20000) * np.exp2(rng.integers(-6, 8, 20000))).astype(np.float32)
    result = evaluate(SWISH, {"x": x}, {"SigmoidInputScale": 1.7}, dtype=np.float32)
    sample = np.unique(np.concatenate([np.arange(0, x.size, 97), np.flatnonzero(np.abs(x) > 20)[:300]]))
    exactly(result.expected[sample], cf.expected(cf.swish(1.7), x[sample], np.float32))


def test_bfloat16_rounds_once() -> None:
    """ml_dtypes' float64 -> bfloat16 cast rounds through float32; the oracle
    does not.  1 + 2**-8 + 2**-30 must round up."""
    x = np.asarray([1 + 2 ** -8 + 2 ** -30], dtype=np.float64)
    got = evaluate(parse("f(x) = x"), {"x": x}, dtype="bfloat16").expected
    assert float(got[0]) == 1 + 2 ** -7


# -- the traps of the issue -------------------------------------------------------
def test_first_match_wins() -> None:
    got = evaluate(SHRINK, {"x": np.float32([0.0])}, {"Threshold": -1.0, "Bias": 0.5}, dtype=np.float32)
    assert got.expected.tolist() == [-0.5]


def test_literal_formula_and_its_limit() -> None:
    x = np.float32([np.inf, -np.inf, 2.0])
    soft = evaluate(SOFTSIGN, {"x": x}, dtype=np.float32)
    assert np.isnan(soft.expected[:2]).all() and soft.ambiguous.tolist() == [True, True, False]
    (limit,) = soft.alternatives
    assert (limit.name, limit.tier, limit.index.tolist(), limit.values.tolist()) == ("limit", Tier.RELAXED, [0, 1], [1.0, -1.0])
    verdict = compare(soft.expected, np.float32([1.0, -1.0, 2 / 3]), policy=soft.policy(),
                      bound_strict=soft.bound_strict, alternatives=soft.alternatives)
    assert verdict.status.tolist() == [Verdict.QUALITY_WARNING, Verdict.QUALITY_WARNING, Verdict.PASS]
    sw = evaluate(SWISH, {"x": x}, {"SigmoidInputScale": 1.0}, dtype=np.float32)
    assert sw.expected[0] == np.inf and np.isnan(sw.expected[1])
    (limit,) = sw.alternatives
    assert limit.index.tolist() == [1] and limit.values[0] == 0 and np.signbit(limit.values[0])


def test_an_underflow_of_computed_operands_reaches_the_bound() -> None:
    """A quotient of computed values that underflows in the target type (batch
    normalization's (x - Mean) / sqrt(Variance + Epsilon), then times a huge
    Scale): the step-by-step float32 result is within the bound.  A product
    of a computed value that underflows under a square root that then
    divides (Adam's (1 - Beta2) * G * G): the step-by-step -inf where the
    value is -1.9e31 lost the range, and FAILs (issue #32: a reading is never
    a loss of range)."""
    norm = parse("Output = Scale * ((x - Mean) / sqrt(Variance + Epsilon)) + Bias")
    f32 = np.float32
    inputs = {"x": f32([1.4e-45]), "Mean": f32([1.1754944e-38]), "Variance": f32([-3.40282326e38]),
              "Scale": f32([3.4028235e38]), "Bias": f32([-8.02818255e-30])}
    got = evaluate(norm, inputs, {"Epsilon": 3.4028235e38}, dtype=np.float32)
    actual = f32([-8.02818255e-30])  # the quotient underflowed to 0: only Bias is left
    assert got.bound_strict[0] >= abs(float(got.expected[0]) - float(actual[0]))
    assert compare(got.expected, actual, policy=got.policy(), bound_strict=got.bound_strict,
                   alternatives=got.alternatives).status.tolist() == [Verdict.PASS]
    adam = parse("W = Beta2 * V + (1.0 - Beta2) * G * G\nOut = M / (sqrt(W) + Epsilon)")
    inputs = {"V": f32([-0.0]), "G": f32([-2.6482125e-26]), "M": f32([-441262.7])}
    got = evaluate(adam, inputs, {"Beta2": 0.25, "Epsilon": 1.1754944e-38}, dtype=np.float32, output="Out")
    assert -1e32 < got.expected[0] < -1e31 and got.alternatives == ()
    assert compare(got.expected, f32([-np.inf]), policy=got.policy(), bound_strict=got.bound_strict,
                   alternatives=got.alternatives).status.tolist() == [Verdict.FAIL]


def test_a_step_by_step_evaluation_is_accepted_only_where_it_keeps_the_range() -> None:
    """Softplus ln(1 + exp(x)) step by step in float32: inf at x = 100, where
    the value is 100, is a loss of range and no alternative (DESIGN,
    Ambiguities; issue #32); 0 at x = -100 and -103, where the value is a
    float32 subnormal, stays the accepted ``target_literal`` (and is within
    the bound's absolute slack there anyway)."""
    softplus = parse("f(x) = ln(1 + exp(Steepness * x)) / Steepness")
    x = np.float32([100.0, -100.0, -103.0, 1.0])
    got = evaluate(softplus, {"x": x}, {"Steepness": 1.0}, dtype=np.float32)
    assert got.expected[0] == 100 and 0 < got.expected[1] < np.finfo(np.float32).smallest_normal
    (alt,) = got.alternatives
    assert (alt.name, alt.index.tolist(), alt.values.tolist()) == ("target_literal", [1, 2], [0.0, 0.0])
    literal = np.float32([np.inf, 0.0, 0.0, got.expected[3]])
    verdict = compare(got.expected, literal, policy=got.policy(), bound_strict=got.bound_strict,
                      bound_relaxed=got.bound_relaxed, alternatives=got.alternatives)
    assert verdict.status.tolist() == [Verdict.FAIL, Verdict.PASS, Verdict.PASS, Verdict.PASS]


def test_an_underflow_in_the_last_step_is_the_results_own_rounding() -> None:
    """A product that underflows as the last step of the output is the one
    rounding of the result: no slack beyond it and no step-by-step
    alternative; the same product inside a larger formula gets the slack."""
    x = np.float32([1e-30, 3.0])
    last = evaluate(parse("f(x) = x * Scale"), {"x": x}, {"Scale": 1e-20}, dtype=np.float32)
    assert last.alternatives == () and not last.ambiguous.any()
    assert last.bound_strict[0] < float(np.finfo(np.float32).smallest_subnormal)
    inner = evaluate(parse("f(x) = (x * Scale) * Big"), {"x": x}, {"Scale": 1e-20, "Big": 1e30}, dtype=np.float32)
    assert inner.bound_strict[0] > 1e-30  # the underflowed 1e-50 may be off by half a subnormal spacing, times 1e30


def test_min_max_with_nan_accepts_both_and_reports() -> None:
    got = evaluate(HARD_SIGMOID, {"x": np.float32([np.nan, 0.0])}, {"Alpha": 0.2, "Beta": 0.5}, dtype=np.float32)
    assert np.isnan(got.expected[0]) and got.ambiguous.tolist() == [True, False]
    (alt,) = got.alternatives
    assert (alt.name, alt.tier, alt.values.tolist()) == ("ieee_minmax", Tier.STRICT, [1.0])
    chose_one = compare(got.expected, np.float32([1.0, 0.5]), policy=got.policy(), alternatives=got.alternatives)
    assert chose_one.verdict is Verdict.PASS
    assert chose_one.alternatives[0].matched_alternative == 1


def test_sign_of_nan_and_negative_zero() -> None:
    got = evaluate(SIGN, {"x": np.float32([np.nan, -0.0, 0.0])}, dtype=np.float32, nan_policy=NanPolicy.FORMULA)
    assert got.expected.tolist() == [0.0, 0.0, 0.0] and not np.signbit(got.expected).any()
    wrong = compare(got.expected, np.float32([0.0, -0.0, 0.0]), policy=got.policy())
    assert wrong.status.tolist() == [Verdict.PASS, Verdict.FAIL, Verdict.PASS]


def test_nan_policies() -> None:
    attrs = {"Threshold": 0.5, "Bias": 0.5}
    x = np.float32([np.nan])
    assert np.isnan(evaluate(SHRINK, {"x": x}, attrs, dtype=np.float32).expected[0])
    assert evaluate(SHRINK, {"x": x}, attrs, dtype=np.float32, nan_policy=NanPolicy.FORMULA).expected[0] == 0


def test_attributes_are_float32() -> None:
    scale = parse("f(x) = Alpha * x")
    one = {"x": np.float64([1.0])}
    assert evaluate(scale, one, {"Alpha": 0.2}, dtype=np.float64).expected[0] == 0.20000000298023224
    assert evaluate(scale, one, {"Alpha": "1/6"}, dtype=np.float64).expected[0] == float(np.float32(1 / 6))
    assert evaluate(scale, one, {"Alpha": Fraction(1, 3)}, dtype=np.float64).expected[0] == float(np.float32(1 / 3))
    assert evaluate(scale, one, {"Alpha": np.float64(0.2)}, dtype=np.float64).expected[0] == 0.2


def test_flush_alternative() -> None:
    x = np.float32([1e-40, 1.0])
    got = evaluate(parse("f(x) = x + 1e-38"), {"x": x}, dtype=np.float32, flush_subnormals=True)
    (alt,) = [a for a in got.alternatives if a.name == "flushed_inputs"]
    assert alt.tier is Tier.FLUSH and alt.index.tolist() == [0] and alt.values[0] == np.float32(1e-38)
    (each,) = [a for a in got.alternatives if a.name == "flushed_per_operation"]  # 1e-38 is subnormal too
    assert each.tier is Tier.FLUSH and each.index.tolist() == [0] and each.values[0] == 0


def test_inputs_are_checked() -> None:
    with pytest.raises(InputError, match="no value for Alpha, Beta"):
        evaluate(HARD_SIGMOID, {"x": np.float32([1])}, dtype=np.float32)
    with pytest.raises(InputError, match="inputs y are not read by the formula"):
        evaluate(SOFTSIGN, {"x": np.float32([1]), "y": np.float32([1])}, dtype=np.float32)


def test_broadcasting_inputs() -> None:
    got = evaluate(parse("f(a, b) = a - b"), {"a": np.float32([[1], [2]]), "b": np.float32([0.5, 0.25, 0])},
                   dtype=np.float32)
    assert got.expected.shape == (2, 3) and got.expected[1].tolist() == [1.5, 1.75, 2.0]


# -- integer types -----------------------------------------------------------------
def test_integer_saturate_or_wrap() -> None:
    a, b = np.int8([100, -100]), np.int8([100, -100])
    add = parse("f(a, b) = a + b")
    saturate, wrap = Overflow.SATURATE, Overflow.WRAP
    assert evaluate(add, {"a": a, "b": b}, dtype=np.int8, overflow=saturate).expected.tolist() == [127, -128]
    assert evaluate(add, {"a": a, "b": b}, dtype=np.int8, overflow=wrap).expected.tolist() == [-56, 56]
    assert evaluate(add, {"a": a, "b": b}, dtype=np.int8).expected.tolist() == [-56, 56]  # wrap by default
    absolute = parse("f(x) = abs(x)")
    assert evaluate(absolute, {"x": np.int8([-128])}, dtype=np.int8, overflow=saturate).expected.tolist() == [127]
    assert evaluate(absolute, {"x": np.int8([-128])}, dtype=np.int8, overflow=wrap).expected.tolist() == [-128]


def test_integer_division_truncates_and_is_exact() -> None:
    got = evaluate(parse("f(a, b) = a / b"), {"a": np.int32([-7, 7]), "b": np.int32([2, -2])}, dtype=np.int32)
    assert got.expected.tolist() == [-3, -3]
    big = np.int64([2 ** 62 + 1])
    mul = evaluate(parse("f(a, b) = (a - b) * (a - b)"), {"a": big, "b": np.int64([2 ** 62])}, dtype=np.int64)
    assert mul.expected.tolist() == [1]


def test_comparisons_of_floats_into_uint8() -> None:
    got = evaluate(parse("f(a, b) = (a > b)"), {"a": np.float32([1, np.nan, 2]), "b": np.float32([0, 0, 3])},
                   dtype=np.uint8, nan_policy=NanPolicy.FORMULA)
    assert got.expected.tolist() == [1, 0, 0] and got.expected.dtype == np.uint8


def test_bit_operators_need_integers() -> None:
    shift = parse("f(a, b) = (a << b)")
    assert evaluate(shift, {"a": np.uint8([1, 255]), "b": np.uint8([3, 1])}, dtype=np.uint8,
                    overflow=Overflow.WRAP).expected.tolist() == [8, 254]
    with pytest.raises(FormulaError, match="needs integer tensors"):
        evaluate(shift, {"a": np.float32([1]), "b": np.float32([1])}, dtype=np.float32)


def test_shift_counts_beyond_the_width_give_zero_without_big_integers() -> None:
    """Shifts are logical on the native encoding: a count of the width or more
    (or a negative count, huge in its unsigned encoding) gives 0, at once."""
    left, right = parse("f(a, b) = (a << b)"), parse("f(a, b) = (a >> b)")
    a = np.uint64([1, 3, 2 ** 63, 5])
    b = np.uint64([63, 64, 1, 2 ** 64 - 1])
    assert evaluate(left, {"a": a, "b": b}, dtype=np.uint64).expected.tolist() == [2 ** 63, 0, 0, 0]
    assert evaluate(right, {"a": a, "b": b}, dtype=np.uint64).expected.tolist() == [0, 0, 2 ** 62, 0]
    signed = {"a": np.int8([-8, -1, 5, -128]), "b": np.int8([1, 7, -1, 0])}
    assert evaluate(right, signed, dtype=np.int8).expected.tolist() == [124, 1, 0, -128]  # zeros shift in
    assert evaluate(left, signed, dtype=np.int8).expected.tolist() == [-16, -128, 0, -128]


def test_integer_pow_with_huge_exponents_wraps_without_big_integers() -> None:
    pow_ = parse("f(input, exponent) = pow(input, exponent)")
    x = np.int64([3, -3, 2, -1, 5, 0, 1, -1, 2])
    e = np.int64([2 ** 62 + 1, 2 ** 62 + 1, 64, 2 ** 63 - 1, -2, -5, -7, -(2 ** 63), 63])
    want = [3, -3, 0, -1, 0, 0, 1, 1, -(2 ** 63)]  # pow(3, 2**62 + 1, 2**64) == 3
    assert evaluate(pow_, {"input": x, "exponent": e}, dtype=np.int64).expected.tolist() == want
    big = {"input": np.uint64([3, 2 ** 64 - 1]), "exponent": np.uint64([2 ** 64 - 1, 2 ** 64 - 1])}
    assert evaluate(pow_, big, dtype=np.uint64).expected.tolist() == [pow(3, 2 ** 64 - 1, 2 ** 64), 2 ** 64 - 1]
    small = {"input": np.int8([3, -3, 2]), "exponent": np.int8([127, 127, 100])}
    assert evaluate(pow_, small, dtype=np.int8, overflow=Overflow.SATURATE).expected.tolist() == [127, -128, 127]
    assert evaluate(pow_, small, dtype=np.int8).expected.tolist() == [pow(3, 127, 256) - 256, 256 - pow(3, 127, 256), 0]


def test_integer_floor_of_a_quotient_is_floor_division() -> None:
    """MODULUS_FLOOR on integers is floor modulo (Python's %), not the
    truncated remainder; trunc(a / b) keeps C's."""
    a, b = np.int32([49, -49, 7, -7, 5, 6]), np.int32([-200, 200, 2, 2, 0, -4])
    floor = parse("f(a, b) = a - (b * floor(a / b))")
    trunc = parse("f(a, b) = a - (b * trunc(a / b))")
    assert evaluate(floor, {"a": a, "b": b}, dtype=np.int32).expected.tolist() == [-151, 151, 1, 1, 5, -2]
    assert evaluate(trunc, {"a": a, "b": b}, dtype=np.int32).expected.tolist() == [49, -49, 1, -1, 5, 2]
    ceil = parse("f(a, b) = ceil(a / b)")
    rnd = parse("f(a, b) = round(a / b)")
    assert evaluate(ceil, {"a": a, "b": b}, dtype=np.int32).expected.tolist() == [0, 0, 4, -3, 0, -1]
    assert evaluate(rnd, {"a": a, "b": b}, dtype=np.int32).expected.tolist() == [0, 0, 4, -4, 0, -2]


# -- error bound -------------------------------------------------------------------
def honest_hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    a, b = np.float32(alpha), np.float32(beta)
    return np.maximum(np.float32(0), np.minimum(a * x + b, np.float32(1)))


def test_cancellation_gets_its_slack_and_nowhere_else() -> None:
    """Near x = -Beta/Alpha the float32 result of Alpha*x + Beta is off by far
    more than a few ULPs of the tiny exact value; the bound accepts exactly
    that, and a wrong value elsewhere still fails."""
    alpha, beta = 0.3, 0.7
    root = -np.float32(beta) / np.float32(alpha)
    x = (root + np.arange(-200, 200, dtype=np.float32) * np.spacing(root)).astype(np.float32)
    result = evaluate(HARD_SIGMOID, {"x": x}, {"Alpha": alpha, "Beta": beta}, dtype=np.float32)
    honest = honest_hard_sigmoid(x, alpha, beta)
    ulp_only = compare(result.expected, honest, policy=result.policy())
    with_bound = compare(result.expected, honest, policy=result.policy(), bound_strict=result.bound_strict)
    assert ulp_only.verdict is Verdict.FAIL
    assert with_bound.verdict is Verdict.PASS
    far = np.float32([0.25, 1.0, 2.0])
    far_result = evaluate(HARD_SIGMOID, {"x": far}, {"Alpha": alpha, "Beta": beta}, dtype=np.float32)
    off = (honest_hard_sigmoid(far, alpha, beta) * np.float32(1 + 2 ** -20)).astype(np.float32)
    bad = compare(far_result.expected, off, policy=far_result.policy(), bound_strict=far_result.bound_strict)
    assert bad.status.tolist()[0] != Verdict.PASS


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_honest_implementations_pass(dtype: type) -> None:
    """numpy in the target type itself (every step rounded) is an honest
    implementation of each formula: it PASSes everywhere, except where an
    intermediate overflows the type (swish's exp for large negative x): there
    it matches the literal evaluation in that type: no worse than a
    QUALITY_WARNING, unless the overflow lost the range (swish's -0 at
    x = -52, where the value is -1.3e-37, a float32 normal): a FAIL (issue #32)."""
    rng = np.random.default_rng(3)
    limit = 100.0 if dtype == np.float32 else 16.0
    x = rng.uniform(-limit, limit, 4000).astype(dtype)
    t = dtype
    cases = [
        (SOFTSIGN, {}, lambda v: v / (t(1) + np.abs(v))),
        (SWISH, {"SigmoidInputScale": 1.7}, lambda v: v * (t(1) / (t(1) + np.exp(-(t(np.float32(1.7)) * v))))),
        (HARD_SIGMOID, {"Alpha": 0.2, "Beta": 0.5},
         lambda v: np.maximum(t(0), np.minimum(t(np.float32(0.2)) * v + t(0.5), t(1)))),
        (SHRINK, {"Bias": 0.3, "Threshold": 0.7},
         lambda v: np.where(v > t(np.float32(0.7)), v - t(np.float32(0.3)),
                            np.where(v < -t(np.float32(0.7)), v + t(np.float32(0.3)), t(0)))),
    ]
    with np.errstate(all="ignore"):
        for tree, attrs, impl in cases:
            result = evaluate(tree, {"x": x}, attrs, dtype=dtype)
            actual = impl(x).astype(dtype)
            verdict = compare(result.expected, actual, policy=result.policy(),
                              bound_strict=result.bound_strict, bound_relaxed=result.bound_relaxed,
                              alternatives=result.alternatives)
            overflowed = np.zeros(x.size, dtype=bool)
            for alt in result.alternatives:
                overflowed[alt.index] = alt.name == "target_literal"
            lost = range_lost(actual, result.expected)
            assert not (overflowed & lost).any()
            assert (verdict.status[~overflowed & ~lost] == Verdict.PASS).all(), (tree.main, verdict.worst[:3])
            assert (verdict.status[overflowed] != Verdict.FAIL).all()
            assert (verdict.status[lost] == Verdict.FAIL).all()
            assert lost.any() == (tree is SWISH)


def test_a_wrong_implementation_fails() -> None:
    x = np.linspace(-8, 8, 1001, dtype=np.float32)
    result = evaluate(SWISH, {"x": x}, {"SigmoidInputScale": 1.0}, dtype=np.float32)
    wrong = (x / (1 + np.exp(-x * np.float32(1.001)))).astype(np.float32)  # scale off by 0.1%
    verdict = compare(result.expected, wrong, policy=result.policy(), bound_strict=result.bound_strict)
    assert verdict.verdict is Verdict.FAIL and verdict.counts[2] > 100


def test_discontinuity_near_rounding_is_uncertain() -> None:
    mod = parse("f(a, b) = a - (b * floor(a / b))")
    a, b = np.float32([0.3, 5.0]), np.float32([0.1, 3.0])
    result = evaluate(mod, {"a": a, "b": b}, dtype=np.float32)
    assert result.uncertain is not None and result.uncertain.tolist() == [True, False]
    assert np.isinf(result.bound_relaxed[0]) and result.ambiguous[0]


def test_float64_range_is_not_always_enough() -> None:
    """The tanh page writes tanh with exp(-2x): in float64 that overflows for
    x < -355 although the value is -1.  The oracle widens the range there, and
    at -inf (NaN literally) offers the limit."""
    tanh = parse("f(x) = (1 - exp(-2 * x)) / (1 + exp(-2 * x)).")
    result = evaluate(tanh, {"x": np.float32([-400.0, -np.inf, 400.0])}, dtype=np.float32)
    assert result.expected[0] == -1 and np.isnan(result.expected[1]) and result.expected[2] == 1
    limit = next(a for a in result.alternatives if a.name == "limit")
    assert limit.index.tolist() == [1] and limit.values.tolist() == [-1.0]


def test_beyond_long_double_range_is_computed_exactly() -> None:
    """x = -1.1e6 overflows exp(-2x) even in long double; the exact value is
    -1.  The formula step by step in float32 (inf / inf = NaN) lost the
    range of a finite value: a FAIL (issue #32), where a quality warning was
    accepted before; tanh itself PASSes."""
    tanh = parse("f(x) = (1 - exp(-2 * x)) / (1 + exp(-2 * x)).")
    x = np.float32([-1126257.62, -3.4028235e38, -400.0, 3.4028235e38])
    result = evaluate(tanh, {"x": x}, dtype=np.float32)
    assert result.expected.tolist() == [-1, -1, -1, 1]
    honest = np.float32([np.nan, np.nan, np.nan, 1])
    verdict = compare(result.expected, honest, policy=result.policy(), bound_strict=result.bound_strict,
                      bound_relaxed=result.bound_relaxed, alternatives=result.alternatives)
    assert verdict.status.tolist() == [Verdict.FAIL] * 3 + [Verdict.PASS]
    assert compare(result.expected, np.tanh(x), policy=result.policy(), bound_strict=result.bound_strict,
                   alternatives=result.alternatives).status.tolist() == [Verdict.PASS] * 4


def test_exact_zero_where_float64_gives_nan() -> None:
    """Alpha * ln(1 + exp(Beta * x)) with Alpha = 0 is 0 for every finite x;
    float64 (and float32) compute 0 * inf = NaN, which is accepted as a
    quality warning only."""
    softplus = parse("f(x) = Alpha * ln(1 + exp(Beta * x))")
    x = np.float32([1485238.75, 3.4028235e38, 1.0])
    result = evaluate(softplus, {"x": x}, {"Alpha": 0.0, "Beta": 2.0}, dtype=np.float32)
    assert result.expected.tolist() == [0, 0, 0]
    verdict = compare(result.expected, np.float32([np.nan, np.nan, 0]), policy=result.policy(),
                      bound_strict=result.bound_strict, alternatives=result.alternatives)
    assert verdict.status.tolist() == [Verdict.QUALITY_WARNING, Verdict.QUALITY_WARNING, Verdict.PASS]
    wrong = compare(result.expected, np.float32([1, 1, np.nan]), policy=result.policy(),
                    bound_strict=result.bound_strict, alternatives=result.alternatives)
    assert wrong.status.tolist() == [Verdict.FAIL] * 3


ADAM = parse("""X = InputParametersTensor
M = InputFirstMomentTensor
V = InputSecondMomentTensor
G = GradientTensor
T = TrainingStepTensor
M = Beta1 * M + (1.0 - Beta1) * G
V = Beta2 * V + (1.0 - Beta2) * G * G
Alpha = sqrt(1.0 - pow(Beta2, T)) / (1.0 - pow(Beta1, T))
X -= LearningRate * Alpha * M / (sqrt(V) + Epsilon)
OutputParametersTensor = X""")


def honest_adam(x, m, v, g, t, lr, b1, b2, eps):  # type: ignore[no-untyped-def]
    one = np.float32(1)
    lr, b1, b2, eps = (np.float32(a) for a in (lr, b1, b2, eps))
    with np.errstate(all="ignore"):
        m = b1 * m + (one - b1) * g
        v = b2 * v + (one - b2) * g * g
        alpha = np.sqrt(one - np.power(b2, t)) / (one - np.power(b1, t))
        return x - lr * alpha * m / (np.sqrt(v) + eps)


def test_a_nan_that_float64_rounds_away_is_no_fail_for_float64() -> None:
    """For T < 0, 1 - pow(Beta2, T) is a tiny negative: the exact update is
    NaN, but float64 rounds pow to 1 and the update vanishes (X unchanged).
    The bound audit's float64 implementation FAILed there (issue #32,
    docs/bounds.md open finding 4, the elements of the two ADAM cases): it
    is honest.  A clear domain error (T = -1) and a NaN input still demand NaN."""
    f32, f64 = np.float32, np.float64
    x = f32([3.4229617, -0.45609087, 3.4229617, 2.0])
    m = f32([-6.458628551160678e21, 2.0409017, 1.0, 1.0])
    v = f32([0.44015852, 0.8814048, 0.5, np.nan])
    g = f32([2.0878518, 0.59577394, 0.5, 0.5])
    t = f32([-3.258171523919974e-15, -6.492579114988255e-15, -1.0, 3.0])
    for beta2, eps in ((0.999, 1.999), (0.99999994, 1e-08)):
        attrs = {"LearningRate": 0.5, "Beta1": 0.9, "Beta2": beta2, "Epsilon": eps}
        inputs = {"InputParametersTensor": x, "InputFirstMomentTensor": m, "InputSecondMomentTensor": v,
                  "GradientTensor": g, "TrainingStepTensor": t}
        result = evaluate(ADAM, inputs, attrs, dtype=np.float32, output="OutputParametersTensor")
        assert np.isnan(result.expected).all()
        wide = [a.astype(f64) for a in (x, m, v, g, t)]
        honest = honest_adam(*wide, 0.5, f64(f32(0.9)), f64(f32(beta2)), f64(f32(eps))).astype(f32)
        assert honest[:2].tolist() == x[:2].tolist()  # float64 lost the sign: X comes back unchanged
        verdict = compare(result.expected, honest, policy=result.policy(), bound_strict=result.bound_strict,
                          bound_relaxed=result.bound_relaxed, alternatives=result.alternatives)
        assert verdict.status.tolist()[:2] == [Verdict.PASS, Verdict.PASS]
        finite = np.where(np.isnan(honest), f32(1.0), honest)  # a number where float64 gives NaN too
        verdict = compare(result.expected, finite, policy=result.policy(), bound_strict=result.bound_strict,
                          bound_relaxed=result.bound_relaxed, alternatives=result.alternatives)
        assert verdict.status.tolist()[2:] == [Verdict.FAIL, Verdict.FAIL]


def test_intermediate_overflow_is_a_quality_warning_and_a_lost_range_fails() -> None:
    """Adam in float32, step by step: G * G overflows (the exact update is
    finite, float32 gets another finite value): a quality warning.  1 -
    pow(Beta1, T) rounds to 0 for a tiny T (0/0 = NaN where the value is
    finite), even when LearningRate = 0 hides it from the bound: a loss of
    range, a FAIL (issue #32).  A wrong value FAILs."""
    f32 = np.float32
    x = f32([0.9022616, -0.45197755, -0.00023763880, 0.5])
    m = f32([124928.31, -0.82744282, -0.53847176, 0.25])
    v = f32([0.63833326, 1.3341803e-18, 0.13052924, 0.5])
    g = f32([2.8835875e28, -3.9397718e-25, 0.56857997, 0.125])
    t = f32([2.0935736, 4.7942779e-17, 4.4184358e-09, 3.0])
    for lr in (0.5, 0.0):
        attrs = {"LearningRate": lr, "Beta1": 2.0, "Beta2": 0.25, "Epsilon": 1.5}
        inputs = {"InputParametersTensor": x, "InputFirstMomentTensor": m, "InputSecondMomentTensor": v,
                  "GradientTensor": g, "TrainingStepTensor": t}
        result = evaluate(ADAM, inputs, attrs, dtype=np.float32, output="OutputParametersTensor")
        honest = honest_adam(x, m, v, g, t, lr, 2.0, 0.25, 1.5)
        verdict = compare(result.expected, honest, policy=result.policy(), bound_strict=result.bound_strict,
                          bound_relaxed=result.bound_relaxed, alternatives=result.alternatives)
        assert verdict.status.tolist() == [Verdict.QUALITY_WARNING if lr else Verdict.PASS, Verdict.FAIL,
                                           Verdict.FAIL, Verdict.PASS], (lr, result.expected, honest)
        if lr:
            assert np.isfinite(result.expected).all() and abs(result.expected[1] + 1.351e8) < 1e6
    wrong = result.expected.copy()
    wrong[3] += 1
    assert compare(result.expected, wrong, policy=result.policy(), bound_strict=result.bound_strict,
                   alternatives=result.alternatives).status.tolist()[3] == Verdict.FAIL


def test_underflowing_product_scaled_up_gets_absolute_slack() -> None:
    """Alpha * tanh(Beta * x) with Alpha = FLT_MAX and x the smallest
    subnormal: Beta * x underflows in float32 (to 0 or the smallest
    subnormal), so an honest implementation is off by Alpha * 2**-150
    (about 2.4e-7); elsewhere the bound stays tight."""
    scaled_tanh = parse("f(x) = Alpha * tanh(Beta * x)")
    tiny = np.float32(1.4e-45)
    x = np.float32([tiny, -tiny, 0.0, 1e-30])
    attrs = {"Alpha": 3.4028235e38, "Beta": 0.5}
    result = evaluate(scaled_tanh, {"x": x}, attrs, dtype=np.float32)
    with np.errstate(all="ignore"):
        honest = (np.float32(3.4028235e38) * np.tanh(np.float32(0.5) * x)).astype(np.float32)
    verdict = compare(result.expected, honest, policy=result.policy(), bound_strict=result.bound_strict)
    assert verdict.verdict is Verdict.PASS, (result.expected, honest, result.bound_strict)
    assert result.bound_strict[2] == 0 and result.bound_strict[3] < 1e-6 * abs(result.expected[3])


# -- integer tensors ordered against fractions ------------------------------

@settings(max_examples=60, deadline=None)
@given(xs=st.lists(st.integers(-2 ** 70, 2 ** 70), min_size=1, max_size=12),
       t=st.fractions(max_denominator=64) | st.integers(-2 ** 70, 2 ** 70),
       op=st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), left=st.booleans())
def test_integers_ordered_against_fractions_as_fraction_arithmetic_orders_them(xs, t, op, left) -> None:  # type: ignore[no-untyped-def]
    """`Evaluator.whole_bound` compares an integer tensor with a FLOAT
    attribute through floor or ceil of the fraction: on either side, each
    element's truth value is what exact arithmetic gives, at the integers
    next to the fraction too."""
    import math

    from dmlconform.formula.evaluate import Evaluator, Settings, Val
    from dmlconform.formula.tree import Binary, Name

    xs = xs + [math.floor(t) - 1, math.floor(t), math.ceil(t), math.ceil(t) + 1]
    x = np.empty(len(xs), dtype=object)
    x[:] = xs
    expr = Binary(op, Name("x"), Name("t")) if left else Binary(op, Name("t"), Name("x"))
    truth = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
             ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}[op]
    want = [truth(a, t) if left else truth(t, a) for a in xs]
    got = Evaluator({"x": Val(x), "t": Val(t)}, Settings(integer=True, track=False)).expr(expr)
    assert np.asarray(got.v, dtype=bool).tolist() == want
