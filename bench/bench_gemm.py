"""The 512^3 GEMM case end to end against bare numpy, side by side (issue #24, "Done means").

Ours: `runner.run_cases` on ``GEMM/FLOAT32/4d/k512/random/large`` with the
cpu backend: the support query, binding fresh buffers, the reference's
float32 matmul, then the judge (the oracle's float64 T and S, both bounds,
the comparison).  Case generation is timed apart (``+gen``).  Bare: the
same operands' ``np.matmul`` in float32 plus ``np.allclose`` against the
same product computed beforehand (A, B and C are stored as is; bare skips
C, Alpha and Beta).  Rounds are interleaved (bare, ours, bare, ...)
and the median of ``--rounds`` kept for each, so a busy machine hurts both
alike.  Target: ours at most 6x bare.

Peak memory: the largest amount traced by `tracemalloc` (numpy reports its
buffers to it) during one ``run_cases`` of the case, against the bytes of
the case's tensors (A, B, C and the output).  Target: at most 6x.

    python bench/bench_gemm.py [--rounds 7]

Exit status 0 when both targets hold, else 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.contraction import operands
from dmlconform.cases.model import Case
from dmlconform.oracles import cases_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from dmlconform.spec.load import load_spec

CASE = "GEMM/FLOAT32/4d/k512/random/large"
TARGET_TIME = 6.0
TARGET_MEMORY = 6.0
SPECS = Path(__file__).resolve().parents[1] / "specs"


def _case(spec: m.Spec) -> tuple[Case, float]:
    started = time.perf_counter()
    case = next(cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, large=True, keep=lambda i, _: i == CASE))
    return case, time.perf_counter() - started


def _ours(spec: m.Spec, case: Case) -> float:
    started = time.perf_counter()
    result = run_cases([(spec, case)], CpuBackend())[0]
    took = time.perf_counter() - started
    if result.outcome is not Outcome.PASS:
        raise SystemExit(f"{CASE}: {result.outcome.value} {result.message}")
    return took


def _bare(a: np.ndarray, b: np.ndarray, reference: np.ndarray) -> float:
    started = time.perf_counter()
    ok = np.allclose(np.matmul(a, b), reference)
    took = time.perf_counter() - started
    assert ok
    return took


def _peak(spec: m.Spec, case: Case) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    run_cases([(spec, case)], CpuBackend())
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    spec = load_spec(SPECS / "GEMM.yaml")
    case, generation = _case(spec)
    ops = operands(spec.semantics, case)  # type: ignore[arg-type]
    a, b = np.ascontiguousarray(ops.a), np.ascontiguousarray(ops.b)
    reference = np.matmul(a, b)  # what allclose compares with: computed before, not timed
    ours: list[float] = []
    bare: list[float] = []
    for _ in range(args.rounds):
        bare.append(_bare(a, b, reference))
        ours.append(_ours(spec, case))
    tensors = sum(t.buffer.nbytes for t in (*case.inputs, *case.outputs))
    peak = _peak(spec, case)
    t_ours, t_bare = statistics.median(ours), statistics.median(bare)
    print(f"{CASE}: ours {t_ours * 1e3:.1f} ms (+gen {generation * 1e3:.1f} ms), bare matmul+allclose "
          f"{t_bare * 1e3:.1f} ms: {t_ours / t_bare:.2f}x (target <= {TARGET_TIME:g}x)")
    print(f"peak traced memory {peak / 2 ** 20:.1f} MiB for {tensors / 2 ** 20:.1f} MiB of tensors: "
          f"{peak / tensors:.2f}x (target <= {TARGET_MEMORY:g}x)")
    return 0 if t_ours / t_bare <= TARGET_TIME and peak / tensors <= TARGET_MEMORY else 1


if __name__ == "__main__":
    sys.exit(main())
