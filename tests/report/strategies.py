"""Hypothesis strategies for `RunResult`s: any strings (hostile ones included),
any floats (NaN, infinities, signed zeros), every outcome."""

from __future__ import annotations

from hypothesis import strategies as st

from dmlconform.results import CaseResult, ElementDiff, Outcome, RunResult

texts = st.text(max_size=12)
floats = st.floats(allow_nan=True, allow_infinity=True)
ints = st.integers(min_value=0, max_value=2**64)


@st.composite
def element_diffs(draw: st.DrawFn) -> ElementDiff:
    return ElementDiff(
        output=draw(texts, label="output"),
        index=tuple(draw(st.lists(st.integers(0, 2**31), max_size=4), label="index")),
        inputs=tuple(draw(st.lists(st.tuples(texts, floats), max_size=3), label="inputs")),
        expected=draw(floats, label="expected"), actual=draw(floats, label="actual"),
        ulp=draw(ints, label="ulp"), bound=draw(floats, label="bound"),
        verdict=draw(st.sampled_from(["FAIL", "QUALITY_WARNING"]), label="verdict"),
    )


@st.composite
def case_results(draw: st.DrawFn) -> CaseResult:
    return CaseResult(
        case_id=draw(texts, label="case_id"),
        operator=draw(st.sampled_from(["ELEMENT_WISE_ABS", "ELEMENT_WISE_EXP", "<b>&"]), label="operator"),
        dtype=draw(st.sampled_from(["FLOAT32", "FLOAT16", "INT8", "BOGUS"]), label="dtype"),
        level=draw(st.sampled_from(["6_4", "5_0", "1_0", "9_9"]), label="level"),
        dims=draw(st.integers(0, 8), label="dims"), layout=draw(texts, label="layout"),
        outcome=draw(st.sampled_from(Outcome), label="outcome"), message=draw(st.text(), label="message"),
        expect_supported=draw(st.booleans(), label="expect_supported"),
        elements=draw(ints, label="elements"),
        counts=draw(st.tuples(ints, ints, ints), label="counts"), max_ulp=draw(ints, label="max_ulp"),
        worst=tuple(draw(st.lists(element_diffs(), max_size=3), label="worst")),
        alternatives=tuple(draw(st.lists(st.tuples(texts, ints), max_size=2), label="alternatives")),
        edges=tuple(draw(st.lists(texts, max_size=3), label="edges")),
        seconds=draw(floats, label="seconds"), repro=draw(st.text(), label="repro"),
    )


@st.composite
def run_results(draw: st.DrawFn) -> RunResult:
    return RunResult(
        run_id=draw(texts, label="run_id"), backend=draw(texts, label="backend"),
        device=draw(texts, label="device"), backend_version=draw(texts, label="backend_version"),
        feature_level=draw(texts, label="feature_level"),
        flush_subnormals=draw(st.booleans(), label="flush_subnormals"),
        seed=draw(st.integers(-(2**70), 2**70), label="seed"), command=draw(st.text(), label="command"),
        started=draw(texts, label="started"), finished=draw(texts, label="finished"),
        cases=tuple(draw(st.lists(case_results(), max_size=5), label="cases")),
    )
