"""Branch boundaries and kinks from the tree (issue 4, part 4), and branches
that can overlap (the "first match wins" trap)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dmlconform.formula import parse
from dmlconform.formula.boundaries import find, overlaps

SHRINK = parse("f(x) = x - Bias, if x > Threshold\n       x + Bias, if x < -Threshold\n       0,        otherwise")
SIGN = parse("f(x) = -1, if x < 0\n        1, if x > 0\n        0, otherwise // This includes negative zero.")
HARD_SIGMOID = parse("f(x) = max(0, min(Alpha * x + Beta, 1))")


def test_shrink_at_plus_and_minus_threshold() -> None:
    found = find(SHRINK, {"Bias": 0.25, "Threshold": 0.75})
    assert [(b.var, b.value, b.cond, b.kind) for b in found] == [
        ("x", -0.75, "x < -Threshold", "branch"),
        ("x", 0.75, "x > Threshold", "branch"),
    ]


def test_sign_at_zero_with_both_zeros() -> None:
    (zero,) = find(SIGN)
    assert (zero.value, zero.cond) == (0.0, "x < 0; x > 0")
    points = zero.points(np.float32)
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    assert points.astype(np.float64).tolist() == [-tiny, 0.0, 0.0, tiny]
    assert np.signbit(points).tolist() == [True, True, False, False]


def test_hard_sigmoid_two_kinks_use_float32_attributes() -> None:
    found = find(HARD_SIGMOID, {"Alpha": 0.2, "Beta": 0.5})
    alpha = Fraction(float(np.float32(0.2)))
    assert [b.exact for b in found] == [-Fraction(1, 2) / alpha, Fraction(1, 2) / alpha]
    assert [b.cond for b in found] == ["0 == Alpha * x + Beta", "Alpha * x + Beta == 1"]
    assert all(b.kind == "kink" for b in found)


def test_points_straddle_an_unrepresentable_boundary() -> None:
    low, high = find(HARD_SIGMOID, {"Alpha": 0.2, "Beta": 0.5})
    pts = high.points(np.float32).astype(np.float64)
    exact = float(high.exact)
    assert pts.size == 4 and pts[1] < exact < pts[2]
    assert np.all(np.diff(pts) > 0)
    assert high.points(np.float16).size == 4


def test_representable_boundary_and_neighbours() -> None:
    (b,) = find(parse("f(x) = x, if x > Alpha\n       0, otherwise"), {"Alpha": 1.0})
    assert b.points(np.float32).tolist() == [np.nextafter(np.float32(1), np.float32(0)), 1.0,
                                             np.nextafter(np.float32(1), np.float32(2))]


def test_nonlinear_kink_is_solved() -> None:
    celu = parse("f(x) = max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1))")
    assert [b.value for b in find(celu, {"Alpha": 1.5})] == [0.0]
    softplus = parse("f(x) = ln(1 + exp(Steepness * x)) / Steepness")
    assert find(softplus, {"Steepness": 1.0}) == ()


def test_library_calls_are_expanded() -> None:
    hard_swish = parse("f(x) = x * HardSigmoid(x, Alpha, Beta)")
    assert [b.value for b in find(hard_swish, {"Alpha": "1/6", "Beta": 0.5})] == pytest.approx([-3.0, 3.0])


def test_no_boundary_without_a_solution() -> None:
    assert find(HARD_SIGMOID, {"Alpha": 0.0, "Beta": 0.5}) == ()


def test_shrink_branches_overlap_for_negative_threshold() -> None:
    (o,) = overlaps(SHRINK)
    assert (o.first, o.second) == (0, 1)
    threshold = dict(o.attrs)["Threshold"]
    x = dict(o.inputs)["x"]
    assert threshold < 0 and threshold < x < -threshold
    assert o.message().startswith("branches 1 (x > Threshold) and 2 (x < -Threshold) of f both hold at Threshold=")
    assert o.message().endswith("the first one listed wins")


def test_disjoint_branches_do_not_overlap() -> None:
    assert overlaps(SIGN) == ()


def test_overlap_with_equal_values_says_so() -> None:
    clip_grad = parse("f(x, gradient) = if x <= Min then 0\n                 if x >= Max then 0\n                 else then gradient")
    (o,) = overlaps(clip_grad, inputs=("x", "gradient"))
    assert o.same_value and o.message().endswith("both give the same value")


@pytest.mark.parametrize("tree", [SHRINK, SIGN, HARD_SIGMOID])
def test_prepared_criticals_give_what_find_finds_alone(tree) -> None:
    from dmlconform.formula.boundaries import criticals

    prepared = criticals(tree)
    for attrs in ({"Bias": 0.25, "Threshold": 0.75, "Alpha": 0.2, "Beta": 0.5},
                  {"Bias": 0.0, "Threshold": 2.0, "Alpha": -1.0, "Beta": 0.0}):
        attrs = {n: v for n, v in attrs.items() if n in ("Bias", "Threshold") or tree is HARD_SIGMOID}
        alone = find(tree, attrs, inputs=["x"])
        assert alone and find(tree, attrs, inputs=["x"], prepared=prepared) == alone
