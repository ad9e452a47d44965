"""The large cases end to end against bare numpy, side by side (issue #24, "Done means").

(a) Time.  Ours: `runner.run_cases` on ``GEMM/FLOAT32/4d/k512/random/large``
with the cpu backend: the support query, binding fresh buffers, the
reference's float32 matmul, then the judge (the oracle's float64 T and S,
both bounds, the bias check, the comparison).  Case generation is timed
apart (``+gen``).  Bare: the same operands' ``np.matmul`` in float32 plus
``np.allclose`` against the same product computed beforehand (A, B and C are
stored as is; bare skips C, Alpha and Beta).  Rounds are interleaved (bare,
ours, bare, ...) and the median of ``--rounds`` kept for each, so a busy
machine hurts both alike.  Target: ours at most 6x bare.  BLAS threads are
numpy's default unless ``OPENBLAS_NUM_THREADS`` says otherwise (it applies to
both sides); the line says which, and the load average.

``--stages`` adds each stage of ours timed alone (the same rounds, medians),
in multiples of bare: what the run is made of.

(b) ``--suite``: the whole default suite, ``dmlconform run --backend cpu
--jobs 2`` in a fresh process, from start to exit.  Target: under 60 s.

(c) Peak memory: the largest amount traced by `tracemalloc` (numpy reports
its buffers to it) during one ``run_cases`` of each large case (GEMM, and
the reduction family's REDUCE, ARGMAX, ARGMIN), against the bytes of the
case's tensors (inputs and outputs).  Target: at most 6x.

    python bench/bench_gemm.py [--rounds 7] [--stages] [--suite]

Exit status 0 when every target measured holds, else 1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dmlconform import bias
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.contraction import operands
from dmlconform.cases.model import Case
from dmlconform.compare import compare_sparse
from dmlconform.oracles import cases_of
from dmlconform.oracles.contraction import ContractionOracle
from dmlconform.results import Outcome
from dmlconform.runner import bind, run_cases
from dmlconform.spec import model as m
from dmlconform.spec.load import load_spec

CASE = "GEMM/FLOAT32/4d/k512/random/large"
#: The other families' large cases whose memory is measured.
OTHERS = {"REDUCE": "REDUCE/FLOAT32/2d/axes=1/sum/random/large",
          "ARGMAX": "ARGMAX/FLOAT32/2d/axes=1/increasing/random/large",
          "ARGMIN": "ARGMIN/FLOAT32/2d/axes=1/increasing/random/large"}
TARGET_TIME = 6.0
TARGET_MEMORY = 6.0
TARGET_SUITE = 60.0
SPECS = Path(__file__).resolve().parents[1] / "specs"


def _case(spec: m.Spec, case_id: str = CASE) -> tuple[Case, float]:
    started = time.perf_counter()
    case = next(cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, large=True, keep=lambda i, _: i == case_id))
    return case, time.perf_counter() - started


def _ours(spec: m.Spec, case: Case) -> None:
    result = run_cases([(spec, case)], CpuBackend())[0]
    if result.outcome is not Outcome.PASS:
        raise SystemExit(f"{case.id}: {result.outcome.value} {result.message}")


def _stages(spec: m.Spec, case: Case) -> dict[str, Callable[[], object]]:
    """Each stage of ours alone, on the same case (inputs of a stage made once, outside it)."""
    backend, oracle = CpuBackend(), ContractionOracle.of(spec)
    buffers = bind(case)
    backend.run(spec, case, buffers)
    size = int(np.prod(case.outputs[0].sizes))
    actual = np.asarray(buffers[case.outputs[0].name]).reshape(-1)[:size]
    bound = oracle.bind([case], flush_subnormals=False)
    exp = bound.expect(0, size)[0]
    scale = exp.bias_scale
    assert scale is not None  # the contraction oracle asks for the bias check
    owner = np.zeros(size, np.int64)
    return {"backend (bind, float32 matmul, C)": lambda: backend.run(spec, case, bind(case)),
            "oracle T and S (float64 + float32 matmul)": lambda: oracle.bind([case], flush_subnormals=False),
            "oracle bounds (expect)": lambda: bound.expect(0, size),
            "bias check (moments)": lambda: bias.moments(exp.expected, actual, scale, owner, 1),
            "comparison (compare_sparse)": lambda: compare_sparse(
                exp.expected, actual, bound_strict=exp.bound_strict, bound_relaxed=exp.bound_relaxed)}


def _timed(steps: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """The median time of each step, rounds interleaved."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            started = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(t) for name, t in times.items()}


def _peak(spec: m.Spec, case: Case) -> float:
    """Peak traced memory of one run of ``case``, in multiples of its tensors' bytes."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    _ours(spec, case)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak / sum(t.buffer.nbytes for t in (*case.inputs, *case.outputs))


def _suite() -> tuple[float, int]:
    """Seconds from start to exit of the whole default suite on cpu with 2 workers, and its exit status."""
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "dmlconform", "run", "--backend", "cpu", "--jobs", "2",
                               "--no-progress", "--output", out], capture_output=True, check=False)
        return time.perf_counter() - started, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--stages", action="store_true", help="also time each stage of ours alone")
    parser.add_argument("--suite", action="store_true", help="also time the whole default suite (2 workers)")
    args = parser.parse_args()
    spec = load_spec(SPECS / "GEMM.yaml")
    case, generation = _case(spec)
    ops = operands(spec.semantics, case)  # type: ignore[arg-type]
    a, b = np.ascontiguousarray(ops.a), np.ascontiguousarray(ops.b)
    reference = np.matmul(a, b)  # what allclose compares with: computed before, not timed
    steps: dict[str, Callable[[], object]] = {"bare": lambda: np.allclose(np.matmul(a, b), reference),
                                              "ours": lambda: _ours(spec, case)}
    if args.stages:
        steps.update(_stages(spec, case))
    timed = _timed(steps, args.rounds)
    bare, ours = timed.pop("bare"), timed.pop("ours")
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "numpy's default")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"BLAS threads: {threads}; {os.cpu_count()} cores; load average {load}")
    print(f"{CASE}: ours {ours * 1e3:.1f} ms (+gen {generation * 1e3:.1f} ms), bare matmul+allclose "
          f"{bare * 1e3:.1f} ms: {ours / bare:.2f}x (target <= {TARGET_TIME:g}x)")
    for name, took in timed.items():
        print(f"  {name:44s} {took * 1e3:7.1f} ms  {took / bare:5.2f}x bare  {took / ours:6.1%} of ours")
    ok = ours / bare <= TARGET_TIME
    for op, case_id in {"GEMM": CASE, **OTHERS}.items():
        other = load_spec(SPECS / f"{op}.yaml")
        factor = _peak(other, case if op == "GEMM" else _case(other, case_id)[0])
        print(f"peak traced memory of {case_id}: {factor:.2f}x its tensors' bytes (target <= {TARGET_MEMORY:g}x)")
        ok = ok and factor <= TARGET_MEMORY
    if args.suite:
        seconds, status = _suite()
        print(f"default suite, cpu, --jobs 2: {seconds:.1f} s, exit {status} (target < {TARGET_SUITE:g} s, exit 0)")
        ok = ok and seconds < TARGET_SUITE and status == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
