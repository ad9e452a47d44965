"""Hypothesis strategies for formula trees (`dmlconform.formula.tree`).

Every tree drawn here is one the printer can write and the parser read back,
so ``parse(to_text(tree)) == tree`` must hold for all of them.  Every draw
carries a ``label=`` (STYLE.md, Tests).
"""

from __future__ import annotations

from hypothesis import strategies as st

from dmlconform.formula.parser import ASSIGN_OPS, BINARY_PRECEDENCE
from dmlconform.formula.tree import (
    Assign,
    Binary,
    Branch,
    Call,
    Comment,
    Conditional,
    FormulaTree,
    Integral,
    Name,
    Num,
    Piecewise,
    Unary,
)

NAMES = ("x", "a", "b", "y", "Alpha", "Beta", "Threshold", "Bias", "x_i", "SigmoidInputScale", "dY", "InputTensor")
FUNCS = ("abs", "exp", "ln", "max", "min", "clamp", "Sigmoid", "HardSigmoid", "pow", "erf", "f")
BINARY_OPS = tuple(BINARY_PRECEDENCE) + ("^",)

names = st.sampled_from(NAMES)
numbers = st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?", fullmatch=True).map(Num)
notes = st.none() | st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=20
).map(str.strip).filter(bool)


def _extend(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.builds(Unary, st.sampled_from(("-", "+", "!", "~")), inner),
        st.builds(Binary, st.sampled_from(BINARY_OPS), inner, inner),
        st.builds(Call, st.sampled_from(FUNCS), st.lists(inner, max_size=3).map(tuple)),
        st.builds(Conditional, inner, inner, inner),
        st.builds(Integral, st.sampled_from(("i", "t")), inner, inner, inner),
    )


expressions = st.recursive(st.one_of(numbers, names.map(Name)), _extend, max_leaves=12)


@st.composite
def piecewise(draw: st.DrawFn) -> Piecewise:
    count = draw(st.integers(1, 4), label="branches")
    branches = [Branch(draw(expressions, label="value"), draw(expressions, label="cond"), draw(notes, label="note"))
                for _ in range(count - 1)]
    last_cond = draw(st.none() | expressions, label="last cond")
    branches.append(Branch(draw(expressions, label="value"), last_cond, draw(notes, label="note")))
    return Piecewise(tuple(branches))


@st.composite
def assignments(draw: st.DrawFn) -> Assign:
    params = draw(st.none() | st.lists(names, min_size=1, max_size=3).map(tuple), label="params")
    op = "=" if params is not None else draw(st.sampled_from(ASSIGN_OPS), label="op")
    value = draw(expressions | piecewise(), label="value")
    note = None if isinstance(value, Piecewise) else draw(notes, label="note")
    return Assign(draw(st.sampled_from(("f", "Output", "M", "X")), label="target"), params, op, value, note)


comments = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=20).map(str.strip).map(Comment)


@st.composite
def trees(draw: st.DrawFn) -> FormulaTree:
    main = draw(assignments(), label="main")
    before = draw(st.lists(comments | assignments(), max_size=2), label="before")
    after = draw(st.lists(comments, max_size=1), label="after")
    return FormulaTree(tuple(before) + (main,) + tuple(after))
