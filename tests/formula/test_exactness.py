"""What a batch settles about its readings (`formula.exactness`): a proof
of exactness in float must hold against the float computation itself, and
a proof that branches never meet against the branches' conditions."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.families.elementwise.formula_oracle import literal
from dmlconform.formula import parse
from dmlconform.formula.exactness import exact_range, may_overlap

SHRINK = parse("f(x) = x - Bias, if x > Threshold\n       x + Bias, if x < -Threshold\n       0, otherwise")
AFFINE = parse("f(x) = max(Min, min(x * Alpha + Beta, Max))")


def _exact_shrink(x: int, bias: Fraction, threshold: Fraction) -> Fraction:
    return x - bias if x > threshold else x + bias if x < -threshold else Fraction(0)


def _exact_affine(x: int, a: dict[str, Fraction]) -> Fraction:
    return max(a["Min"], min(x * a["Alpha"] + a["Beta"], a["Max"]))


_ATTRIBUTE = st.one_of(st.integers(-300, 300).map(float), st.sampled_from([0.5, -1.5, 2.0 ** -20, 1e-38, 3e9, 2.0 ** 24]),
                       st.floats(-1e6, 1e6, width=32))


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_a_proof_of_exactness_holds_in_float32(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([np.int8, np.int16, np.int32]), label="dtype")
    info = np.iinfo(dtype)
    x = np.array(data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=1, max_size=8), label="x"),
                 dtype=dtype)
    affine = data.draw(st.booleans(), label="affine")
    names = ("Alpha", "Beta", "Min", "Max") if affine else ("Bias", "Threshold")
    attrs = {n: data.draw(_ATTRIBUTE, label=n) for n in names}
    tree = AFFINE if affine else SHRINK
    span = exact_range(tree, {"x": x}, attrs, 24)
    if span is None:
        return
    exact = {n: Fraction(float(np.float32(v))) for n, v in attrs.items()}
    want = [_exact_affine(int(v), exact) if affine else _exact_shrink(int(v), exact["Bias"], exact["Threshold"])
            for v in x.tolist()]
    got = literal(tree, {"x": x.astype(np.float32)}, attrs, dtype=np.float32)
    assert [Fraction(float(g)) for g in got.tolist()] == want
    assert all(span.lo <= w <= span.hi for w in want)


def test_what_is_proven_and_what_is_not() -> None:
    small = {"x": np.array([-128, 127], dtype=np.int8)}
    assert exact_range(SHRINK, small, {"Bias": 0.0, "Threshold": 0.5}, 24) is not None
    assert exact_range(SHRINK, small, {"Bias": 1e-38, "Threshold": 0.5}, 24) is None  # 61 - 1e-38 rounds to 61
    big = {"x": np.array([-2 ** 31, 2 ** 31 - 1], dtype=np.int32)}
    assert exact_range(SHRINK, big, {"Bias": 0.0, "Threshold": 0.5}, 24) is None  # INT32_MAX is 2^31 in float
    assert exact_range(SHRINK, big, {"Bias": 0.0, "Threshold": 0.5}, 53) is not None
    assert exact_range(parse("f(x) = x / Alpha"), small, {"Alpha": 2.0}, 53) is None  # a division proves nothing


def test_branches_meet_only_where_their_half_lines_do() -> None:
    inputs = frozenset({"x"})
    assert not may_overlap(SHRINK, inputs, {"Bias": 1.0, "Threshold": 0.5})
    assert not may_overlap(SHRINK, inputs, {"Bias": 1.0, "Threshold": 0.0})  # x > 0 and x < 0
    assert may_overlap(SHRINK, inputs, {"Bias": 1.0, "Threshold": -0.5})
    clip_grad = parse("f(x, g) = 0, if x <= Min\n          0, if x >= Max\n          g, otherwise")
    assert may_overlap(clip_grad, frozenset({"x", "g"}), {"Min": 1.0, "Max": 1.0})  # both hold at x = 1
    assert not may_overlap(clip_grad, frozenset({"x", "g"}), {"Min": 0.0, "Max": 1.0})
    assert may_overlap(parse("f(x) = 1, if x * x > Alpha\n       2, if x < Alpha\n       0, otherwise"),
                       inputs, {"Alpha": 1.0})  # not linear: not proven apart
