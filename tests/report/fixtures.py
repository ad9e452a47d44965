"""Hand-built `RunResult`s for the report tests: every outcome, worst diffs
with NaN, infinities and signed zeros, and hostile strings in ids and messages."""

from __future__ import annotations

import math

from dmlconform.results import CaseResult, ElementDiff, Outcome, RunResult
from dmlconform.spec.model import DATA_TYPE_ORDER

HOSTILE = "<script>alert(1)</script> & \"quoted\" 'single'"

REPRO = "dmlconform run --backend cpu --level 6_4 --seed 1234 --case {}"


def diff(i: int, x: float, expected: float, actual: float, ulp: int | None, *, bound: float = 2.0,
         verdict: str = "FAIL") -> ElementDiff:
    return ElementDiff(output="OutputTensor", index=(0, i), inputs=(("InputTensor", x),), expected=expected,
                       actual=actual, ulp=ulp, bound=bound, verdict=verdict)


def case(case_id: str, operator: str, dtype: str, level: str, outcome: Outcome, **kw: object) -> CaseResult:
    kw.setdefault("repro", REPRO.format(case_id))
    return CaseResult(case_id=case_id, operator=operator, dtype=dtype, level=level, dims=kw.pop("dims", 4),  # type: ignore[arg-type]
                      layout=kw.pop("layout", "packed"), outcome=outcome, **kw)  # type: ignore[arg-type]


FAIL_WORST = (
    diff(3, 1.5, 0.5, 0.75, 4096),
    diff(7, math.nan, math.nan, 1.0, None, bound=0.0),
    diff(9, math.inf, math.inf, -math.inf, 65535, bound=0.0),
    diff(11, -0.0, -0.0, 0.0, 1, bound=0.0),
    diff(12, -2.5e-8, -2.5e-8, 1e30, 12345678, bound=4.5),
    diff(13, 3.0, 1.0, 1.0009765625, 3, verdict="QUALITY_WARNING"),
)


def sample_run() -> RunResult:
    """A small run with every outcome (XFAIL and XPASS included)."""
    cases = (
        case("abs-f32-0001", "ELEMENT_WISE_ABS", "FLOAT32", "6_4", Outcome.PASS, elements=64, counts=(64, 0, 0),
             edges=("x<0", "x=-0"), seconds=0.01),
        case("abs-f32-0002", "ELEMENT_WISE_ABS", "FLOAT32", "6_4", Outcome.PASS, elements=64, counts=(64, 0, 0),
             edges=("x>=0", "nan"), dims=2, seconds=0.02),
        case("abs-f16-0001", "ELEMENT_WISE_ABS", "FLOAT16", "6_4", Outcome.QUALITY_WARNING, elements=64,
             counts=(63, 1, 0), max_ulp=3, worst=FAIL_WORST[-1:], message="1 of 64 elements within the relaxed bound",
             edges=("x<0",), seconds=0.01),
        case("abs-f16-0002", "ELEMENT_WISE_ABS", "FLOAT16", "6_4", Outcome.FAIL, elements=64, counts=(58, 1, 5),
             max_ulp=12345678, worst=FAIL_WORST, message=f"5 of 64 elements beyond the bound {HOSTILE}",
             alternatives=(("flush", 2),), edges=("nan", "inf", "x=-0"), seconds=0.03),
        case("abs-i8-0001", "ELEMENT_WISE_ABS", "INT8", "6_4", Outcome.NOT_SUPPORTED, expect_supported=False,
             message="E_INVALIDARG"),
        case(f"exp-f32-{HOSTILE}", "ELEMENT_WISE_EXP", "FLOAT32", "5_0", Outcome.CRASH,
             message="backend process died (signal 11)", seconds=1.5),
        case("exp-f32-0002", "ELEMENT_WISE_EXP", "FLOAT32", "5_0", Outcome.TIMEOUT, message="no result in 30 s",
             seconds=30.0),
        case("exp-f16-0001", "ELEMENT_WISE_EXP", "FLOAT16", "5_0", Outcome.ERROR,
             message="oracle failed: ZeroDivisionError\x00\x1b[31m", seconds=0.0),
        case("exp-f64-0001", "ELEMENT_WISE_EXP", "FLOAT64", "5_0", Outcome.XFAIL, message="known: baseline #12"),
        case("exp-f64-0002", "ELEMENT_WISE_EXP", "FLOAT64", "6_4", Outcome.XPASS, message="baseline expected FAIL"),
        case("exp-u8-0001", "ELEMENT_WISE_EXP", "UINT8", "6_4", Outcome.NOT_SUPPORTED, expect_supported=False),
    )
    return RunResult(run_id="run-0001", backend="cpu", device=f"reference CPU {HOSTILE}", backend_version="0.1.0",
                     feature_level="6_4", flush_subnormals=False, seed=1234,
                     command=f"dmlconform run --backend cpu --seed 1234 --filter '{HOSTILE}'",
                     started="2026-11-22T17:00:00Z", finished="2026-11-22T17:00:32Z", cases=cases)


def passing_run() -> RunResult:
    """A run where everything passed."""
    run = sample_run()
    return RunResult(**{**{f: getattr(run, f) for f in RunResult.__slots__},  # type: ignore[arg-type]
                        "cases": tuple(c for c in run.cases if c.outcome is Outcome.PASS)})


def wide_run() -> RunResult:
    """A run as wide as a report gets: 30 operators with long names, each
    with every data type, the cells holding up to five outcomes (the
    NOT_SUPPORTED and QUALITY_WARNING counts that made cells overflow), and
    failing cases whose diffs have long inputs."""
    outcomes = (Outcome.PASS, Outcome.QUALITY_WARNING, Outcome.FAIL, Outcome.NOT_SUPPORTED, Outcome.XFAIL)
    cases = []
    for k in range(30):
        operator = f"ELEMENT_WISE_QUANTIZED_LINEAR_OPERATOR_{k:02d}"
        for t, dtype in enumerate(DATA_TYPE_ORDER):
            for n, outcome in enumerate(outcomes[:1 + (k + t) % len(outcomes)]):
                worst = (diff(n, -1.0e-30 * (n + 1), 1.5e38, -0.0, 1 << 60), diff(n + 1, math.nan, math.nan, 2.0, None),
                         diff(n + 2, -3.0, -3.0, 3.0, 2130706432)) if outcome is Outcome.FAIL else ()
                cases.append(case(f"{operator}/{dtype.name}/{n}d/{'x' * 40}", operator, dtype.name, "6_4", outcome,
                                  elements=120, counts=(117, 0, 3) if worst else (120, 0, 0), worst=worst,
                                  message="OutputTensor: Mismatched elements: 3 / 120 (0 quality warnings)"
                                  if worst else ""))
    return RunResult(run_id="run-wide", backend="cpu", device="reference CPU", backend_version="0.1.0",
                     feature_level="6_4", flush_subnormals=False, seed=0, command="dmlconform run",
                     started="2026-11-22T17:00:00Z", finished="2026-11-22T17:00:32Z", cases=tuple(cases))


def gemm_failure(case_id: str = "GEMM/FLOAT32/2d/k90") -> CaseResult:
    """A 90-element GEMM case whose 10 worst elements all have K = 90 (the
    first input a contraction names): against K they are one dot."""
    worst = tuple(ElementDiff(output="OutputTensor", index=(i // 10, i % 10), inputs=(("K", 90.0), ("S", 40.0 + i)),
                              expected=1.0 + i, actual=1.5 + i, ulp=4_000_000 + 1000 * i, bound=1e-4, verdict="FAIL")
                  for i in range(0, 90, 9))
    return case(case_id, "GEMM", "FLOAT32", "6_4", Outcome.FAIL, dims=2, elements=90, counts=(80, 0, 10),
                max_ulp=4_081_000, worst=worst, message="OutputTensor: Mismatched elements: 10 / 90 (0 quality warnings)")


def full_run_one_failure() -> RunResult:
    """A run as the default suite gives one (about a hundred operators, two
    to three data types each, some NOT_SUPPORTED), where one GEMM case
    fails: the issue #33 run whose red cell was the last of the matrix."""
    cases = []
    for k in range(100):
        operator = f"ELEMENT_WISE_OPERATOR_{k:02d}"
        for dtype in ("FLOAT32", "FLOAT16", "INT32")[:2 + k % 2]:
            outcome = Outcome.NOT_SUPPORTED if dtype == "INT32" else Outcome.PASS
            cases.append(case(f"{operator}/{dtype}/4d", operator, dtype, "6_4", outcome, elements=120,
                              counts=(120, 0, 0), seconds=0.01))
    cases += [case("GEMM/FLOAT32/2d/k4", "GEMM", "FLOAT32", "6_4", Outcome.PASS, dims=2, elements=12, counts=(12, 0, 0)),
              gemm_failure()]
    return RunResult(run_id="run-full", backend="cpu", device="reference CPU", backend_version="0.1.0",
                     feature_level="6_4", flush_subnormals=False, seed=0, command="dmlconform run",
                     started="2026-11-22T17:00:00Z", finished="2026-11-22T17:00:32Z", cases=tuple(cases))


def full_run_passing() -> RunResult:
    """`full_run_one_failure` without its failing case."""
    run = full_run_one_failure()
    return RunResult(**{**{f: getattr(run, f) for f in RunResult.__slots__},  # type: ignore[arg-type]
                        "cases": run.cases[:-1]})
