"""Hypothesis strategies for `RunResult`s: any strings (hostile ones included),
any floats (NaN, infinities, signed zeros), every outcome."""

from __future__ import annotations

from hypothesis import strategies as st

from dmlconform.results import (
    BASELINE_OUTCOMES,
    Baseline,
    BaselineEntry,
    CaseResult,
    ElementDiff,
    Outcome,
    RunResult,
    ToleranceOverride,
)

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
        ulp=draw(st.none() | ints, label="ulp"), bound=draw(floats, label="bound"),
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
        strict=draw(st.booleans(), label="strict"), shard=draw(texts, label="shard"),
        merged_from=tuple(draw(st.lists(texts, max_size=3), label="merged_from")),
        tolerances=draw(texts, label="tolerances"),
        overrides=tuple(draw(st.lists(overrides(), max_size=3), label="overrides")),
        baseline=draw(st.none() | baselines(), label="baseline"),
    )


@st.composite
def overrides(draw: st.DrawFn) -> ToleranceOverride:
    return ToleranceOverride(
        operator=draw(texts, label="operator"), dtype=draw(texts, label="dtype"),
        ulp=draw(st.none() | ints, label="ulp"),
        bound_factor=draw(st.none() | st.floats(allow_nan=False), label="bound_factor"),
        reason=draw(st.text(), label="reason"))


@st.composite
def baselines(draw: st.DrawFn) -> Baseline:
    entries = draw(st.lists(st.builds(
        BaselineEntry, key=texts, reason=st.text(), pattern=st.booleans(), issue=texts,
        outcomes=st.lists(st.sampled_from(BASELINE_OUTCOMES), unique=True).map(tuple)), max_size=3), label="entries")
    return Baseline(path=draw(texts, label="path"), entries=tuple(entries),
                    stale=tuple(draw(st.lists(texts, max_size=2), label="stale")))
