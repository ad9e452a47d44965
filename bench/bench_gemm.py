"""The large cases end to end against bare numpy, side by side (issue #24, "Done means").

(a) Time.  Ours: `runner.run_cases` on ``GEMM/FLOAT32/4d/k512/random/large``
with the cpu backend: the support query, binding fresh buffers, the
reference's float32 matmul, then the judge (the oracle's float64 T and S,
both bounds, the bias check, the comparison).  Case generation is timed
apart (``+gen``).  Bare: the same operands' ``np.matmul`` in float32 plus
``np.allclose`` against the same product computed beforehand (A, B and C are
stored as is; bare skips C, Alpha and Beta).  Target: ours at most 6x bare.

Each side runs in processes of its own, alternately (bare, ours, bare, ...,
``--processes`` of each), each timing ``--rounds`` calls after two untimed
ones; the median of all of a side's calls is kept, so a busy machine hurts
both alike.  Own processes, because fresh memory is slow to touch (a page
fault per 4 KiB page, 2.5 us each on a sandboxed kernel) and glibc decides
whether freed memory goes back to the system from what the process did
before: in one process, the bare side's time varied from 3.2 to 5.9 ms
depending on which step ran before it.  The page faults per call of each
side are printed.  BLAS threads are numpy's default unless
``OPENBLAS_NUM_THREADS`` says otherwise (it applies to both sides); the line
says which, and the load average.

``--stages`` adds each stage of ours timed alone (in ours' processes,
medians), in multiples of bare: what the run is made of.

(b) ``--suite``: the whole default suite, ``dmlconform run --backend cpu
--jobs 2`` in a fresh process, from start to exit.  Target: under 60 s.

(c) Peak memory: the largest amount traced by `tracemalloc` (numpy reports
its buffers to it) during one ``run_cases`` of each large case (GEMM, and
the reduction family's REDUCE, ARGMAX, ARGMIN), against the bytes of the
case's tensors (inputs and outputs).  Target: at most 6x.

    python bench/bench_gemm.py [--rounds 7] [--processes 3] [--stages] [--suite]

Exit status 0 when every target measured holds, else 1.
"""

from __future__ import annotations

import argparse
import json
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
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.compare import compare_sparse
from dmlconform.families import cases_of
from dmlconform.families.contraction.cases import operands
from dmlconform.families.contraction.oracle import ContractionOracle
from dmlconform.results import Outcome
from dmlconform.runner import bind, run_cases
from dmlconform.spec import model as m

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
    return {"backend (bind, float32 matmul, C)": lambda: backend.run(spec, case, bind(case)),
            "oracle T and S (float64 + float32 matmul)": lambda: oracle.bind([case], flush_subnormals=False),
            "oracle bounds (expect)": lambda: bound.expect(0, size),
            "bias check (moments)": lambda: bias.moments(exp.expected, actual, scale, np.array([size])),
            "comparison (compare_sparse)": lambda: compare_sparse(
                exp.expected, actual, bound_strict=exp.bound_strict, bound_relaxed=exp.bound_relaxed)}


def _timed(steps: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Each step's times, rounds interleaved, after two untimed rounds."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for round_ in range(rounds + 2):
        for name, step in steps.items():
            started = time.perf_counter()
            step()
            if round_ >= 2:
                times[name].append(time.perf_counter() - started)
    return times


def _faults() -> int:
    """Minor page faults of this process so far (0 where the platform does not say)."""
    try:
        import resource
    except ImportError:  # not a Unix
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _side(side: str, rounds: int, stages: bool) -> dict[str, object]:
    """One process's measurement of ``side`` ("bare" or "ours"): its
    times, its page faults per call and, for ours with ``stages``, each
    stage's times."""
    spec = load_spec(SPECS / "GEMM.yaml")
    case, generation = _case(spec)
    if side == "bare":
        ops = operands(spec.semantics, case)  # type: ignore[arg-type]
        a, b = np.ascontiguousarray(ops.a), np.ascontiguousarray(ops.b)
        reference = np.matmul(a, b)  # what allclose compares with: computed before, not timed
        step: Callable[[], object] = lambda: np.allclose(np.matmul(a, b), reference)  # noqa: E731
    else:
        step = lambda: _ours(spec, case)  # noqa: E731
    before = _faults()
    times = _timed({side: step}, rounds)[side]
    out: dict[str, object] = {"times": times, "faults": (_faults() - before) / (rounds + 2),
                              "generation": generation}
    if stages and side == "ours":
        out["stages"] = _timed(_stages(spec, case), rounds)
    return out


def _measure(rounds: int, processes: int, stages: bool) -> dict[str, dict[str, object]]:
    """Both sides, each in ``processes`` fresh processes, alternately: all
    times of each side together, its mean faults per call (and ours' stages)."""
    found: dict[str, dict[str, object]] = {}
    for _ in range(processes):
        for side in ("bare", "ours"):
            command = [sys.executable, __file__, "--side", side, "--rounds", str(rounds)] + (["--stages"] * stages)
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            one = json.loads(done.stdout)
            mine = found.setdefault(side, {"times": [], "faults": [], "generation": [], "stages": {}})
            mine["times"] += one["times"]  # type: ignore[operator]
            mine["faults"].append(one["faults"])  # type: ignore[attr-defined]
            mine["generation"].append(one["generation"])  # type: ignore[attr-defined]
            for name, took in one.get("stages", {}).items():
                mine["stages"].setdefault(name, []).extend(took)  # type: ignore[attr-defined]
    return found


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
    parser.add_argument("--rounds", type=int, default=7, help="timed calls per process (default 7)")
    parser.add_argument("--processes", type=int, default=3, help="processes per side (default 3)")
    parser.add_argument("--stages", action="store_true", help="also time each stage of ours alone")
    parser.add_argument("--suite", action="store_true", help="also time the whole default suite (2 workers)")
    parser.add_argument("--side", choices=("bare", "ours"), help=argparse.SUPPRESS)  # one process of (a): JSON out
    args = parser.parse_args()
    if args.side:
        print(json.dumps(_side(args.side, args.rounds, args.stages)))
        return 0
    found = _measure(args.rounds, args.processes, args.stages)
    bare, ours = (statistics.median(found[side]["times"]) for side in ("bare", "ours"))  # type: ignore[arg-type]
    faults = {side: statistics.mean(found[side]["faults"]) for side in ("bare", "ours")}  # type: ignore[arg-type]
    generation = statistics.median(found["ours"]["generation"])  # type: ignore[arg-type]
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "numpy's default")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"BLAS threads: {threads}; {os.cpu_count()} cores; load average {load}; "
          f"{args.processes} processes x {args.rounds} calls per side")
    print(f"{CASE}: ours {ours * 1e3:.1f} ms (+gen {generation * 1e3:.1f} ms), bare matmul+allclose "
          f"{bare * 1e3:.1f} ms: {ours / bare:.2f}x (target <= {TARGET_TIME:g}x)")
    print(f"  page faults per call: ours {faults['ours']:.0f}, bare {faults['bare']:.0f}")
    for name, took in found["ours"]["stages"].items():  # type: ignore[attr-defined]
        median = statistics.median(took)
        print(f"  {name:44s} {median * 1e3:7.1f} ms  {median / bare:5.2f}x bare  {median / ours:6.1%} of ours")
    spec = load_spec(SPECS / "GEMM.yaml")
    case = _case(spec)[0]
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
