"""The ``--large`` cases of the index-map, window, normalization and
interpolation families end to end against bare numpy, side by side
(issues #34, #35 and #36, "Done means").

Per case: ours is `runner.run_cases` of the case on the cpu backend (the
support query, binding fresh buffers, the reference, the oracle, the
judge); its generation is timed apart (``+gen``).  Bare is numpy on the
same operands, in float32, plus the comparison with the same result
computed beforehand:

* GATHER (2^24 elements): ``np.take`` + ``np.array_equal``; target 4x;
* CAST FLOAT32 -> FLOAT16 (2^24): ``astype`` + ``np.array_equal``; 4x;
* CONVOLUTION 1x64x56x56 by 64x64x3x3: im2col (``sliding_window_view``,
  copied) + ``matmul`` + bias + ``np.allclose``; 6x;
* MEAN_VARIANCE_NORMALIZATION1, a layer normalization of 2^12 rows of
  2^12: two-pass mean and variance, then the affine step, + ``np.allclose``; 6x;
* RESAMPLE1, a 4x bilinear upsample of 1x32x256x256 (half-pixel): one
  linear pass along each dimension (separable) + ``np.allclose``; 6x.

Each side runs in fresh processes, alternately (bare, ours, bare, ...,
``--processes`` of each), each timing ``--rounds`` calls after one untimed
one; the median of a side's calls is kept (bench_gemm.py says why fresh
processes).  Peak memory: the most `tracemalloc` traced (numpy reports
its buffers to it) during one ``run_cases`` of the case, in its own
process after one untraced call (as the timed side: what a first call
imports, 2.4 MB of modules, 1.4x the large convolution's 1.7 MiB, is not
the case's), against the bytes of the case's tensors (inputs and
outputs); target: the time's factor.  Run it niced on a quiet machine; the line
says the load average.

    PYTHONPATH=$PWD nice -n 10 python bench/bench_large.py [--only GATHER] [--rounds 2] [--processes 2]

Exit status 0 when every target measured holds, else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m

SPECS = Path(__file__).resolve().parents[1] / "specs"
#: Per bench: (operator, case id, the target factor of time and of memory).
CASES = {"GATHER": ("GATHER", "GATHER/FLOAT32/4d/axis=2/k=1/UINT32/boundary/large", 4.0),
         "CAST": ("CAST", "CAST/FLOAT32/4d/to=FLOAT16/large", 4.0),
         "CONVOLUTION": ("CONVOLUTION", "CONVOLUTION/FLOAT32/4d/forward/cross/k3/random/large", 6.0),
         "MVN1": ("MEAN_VARIANCE_NORMALIZATION1",
                  "MEAN_VARIANCE_NORMALIZATION1/FLOAT32/4d/axes=1,2,3/normalized/random/large", 6.0),
         "RESAMPLE1": ("RESAMPLE1", "RESAMPLE1/FLOAT32/4d/linear/half-pixel/up4/random/large", 6.0)}


def _case(name: str) -> tuple[m.Spec, Case, float]:
    op, case_id, _ = CASES[name]
    spec = load_spec(SPECS / f"{op}.yaml")
    started = time.perf_counter()
    found = list(cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, large=True, keep=lambda i, _: i == case_id))
    if len(found) != 1:
        raise SystemExit(f"{case_id}: no such case at 6_4 with --large")
    return spec, found[0], time.perf_counter() - started


def _operands(case: Case) -> list[np.ndarray]:
    """The inputs' logical values, packed."""
    return [np.ascontiguousarray(t.view(t.buffer)) for t in case.inputs]


def _ints(case: Case, name: str) -> tuple[int, ...]:
    return tuple(int(v) for v in str(case.attribute_map()[name]).split(","))


def _gather(case: Case) -> Callable[[], np.ndarray]:
    x, idx = _operands(case)
    axis = int(case.attribute_map()["Axis"])
    return lambda: np.take(x, idx.reshape(-1), axis=axis)


def _cast(case: Case) -> Callable[[], np.ndarray]:
    (x,) = _operands(case)
    return lambda: x.astype(np.float16)


def _convolution(case: Case) -> Callable[[], np.ndarray]:
    x, w, b = _operands(case)
    (top, left), (bottom, right) = _ints(case, "StartPadding"), _ints(case, "EndPadding")
    k, c, kh, kw = w.shape
    filters = w.reshape(k, c * kh * kw)

    def run() -> np.ndarray:
        padded = np.pad(x[0], ((0, 0), (top, bottom), (left, right)))
        windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(1, 2))  # c, h, w, kh, kw
        h, wd = windows.shape[1:3]
        cols = np.ascontiguousarray(windows.transpose(0, 3, 4, 1, 2)).reshape(c * kh * kw, h * wd)
        return (filters @ cols + b.reshape(k, 1)).reshape(1, k, h, wd)
    return run


def _normalization(case: Case) -> Callable[[], np.ndarray]:
    x, scale, bias = _operands(case)
    eps = np.float32(case.attribute_map()["Epsilon"])
    axes = tuple(int(a) for a in str(case.attribute_map()["Axes"]).split(","))

    def run() -> np.ndarray:
        mean = x.mean(axis=axes, keepdims=True, dtype=np.float32)
        centred = x - mean
        variance = np.mean(centred * centred, axis=axes, keepdims=True, dtype=np.float32)
        return centred / np.sqrt(variance + eps) * scale + bias
    return run


def _linear(y: np.ndarray, axis: int, size: int, scale: float, offset_in: float, offset_out: float) -> np.ndarray:
    """One bilinear pass along ``axis`` to ``size`` outputs (float32)."""
    n = y.shape[axis]
    c = np.clip((np.arange(size) - offset_out) / scale - offset_in, 0, n - 1)
    low = np.minimum(np.floor(c).astype(np.int64), max(n - 2, 0))
    shape = [1] * y.ndim
    shape[axis] = -1
    w1 = (c - low).astype(np.float32).reshape(shape)
    a0, a1 = np.take(y, low, axis=axis), np.take(y, np.minimum(low + 1, n - 1), axis=axis)
    return a0 + w1 * (a1 - a0)


def _resample(case: Case) -> Callable[[], np.ndarray]:
    (x,) = _operands(case)
    sizes, scales = case.outputs[0].sizes, [float(s) for s in str(case.attribute_map()["Scales"]).split(",")]
    ins = [float(s) for s in str(case.attribute_map()["InputPixelOffsets"]).split(",")]
    outs = [float(s) for s in str(case.attribute_map()["OutputPixelOffsets"]).split(",")]

    def run() -> np.ndarray:
        y = x
        for axis, (n, s, i, o) in enumerate(zip(sizes, scales, ins, outs)):
            if s != 1 or n != y.shape[axis]:
                y = _linear(y, axis, n, s, i, o)
        return y
    return run


BARE: dict[str, Callable[[Case], Callable[[], np.ndarray]]] = {
    "GATHER": _gather, "CAST": _cast, "CONVOLUTION": _convolution, "MVN1": _normalization, "RESAMPLE1": _resample}
EXACT = ("GATHER", "CAST")


def _bare(name: str, case: Case) -> Callable[[], object]:
    """The bare side: compute, then compare with the result computed once before (not timed)."""
    compute = BARE[name](case)
    reference = compute()
    if name in EXACT:
        return lambda: np.array_equal(compute(), reference, equal_nan=True)
    return lambda: np.allclose(compute(), reference)


def _ours(spec: m.Spec, case: Case) -> None:
    result = run_cases([(spec, case)], CpuBackend())[0]
    if result.outcome is not Outcome.PASS:
        raise SystemExit(f"{case.id}: {result.outcome.value} {result.message}")


def _side(name: str, side: str, rounds: int) -> dict[str, object]:
    """One process's measurement of ``side`` of ``name``: its times (after one untimed call) and, for
    ours, the generation's time; ``memory``: one traced run of ours instead, its peak."""
    spec, case, generation = _case(name)
    tensors = sum(t.buffer.nbytes for t in (*case.inputs, *case.outputs))
    if side == "memory":
        _ours(spec, case)  # untraced: the modules a first run imports
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        _ours(spec, case)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        return {"peak": peak, "tensors": tensors}
    step = _bare(name, case) if side == "bare" else (lambda: _ours(spec, case))
    times = []
    for round_ in range(rounds + 1):
        started = time.perf_counter()
        step()
        if round_:
            times.append(time.perf_counter() - started)
    return {"times": times, "generation": generation}


def _run(name: str, side: str, rounds: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--side", side, "--only", name, "--rounds", str(rounds)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{name} {side}: exit {done.returncode}\n{done.stderr[-2000:]}")
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CASES), action="append", help="only this bench (repeatable)")
    parser.add_argument("--rounds", type=int, default=2, help="timed calls per process (default 2)")
    parser.add_argument("--processes", type=int, default=2, help="processes per side (default 2)")
    parser.add_argument("--side", choices=("bare", "ours", "memory"), help=argparse.SUPPRESS)  # one process: JSON
    args = parser.parse_args()
    if args.side:
        print(json.dumps(_side(args.only[0], args.side, args.rounds)))
        return 0
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} cores; load average {load}; {args.processes} processes x {args.rounds} calls per side")
    ok = True
    for name in args.only or list(CASES):
        times: dict[str, list[float]] = {"bare": [], "ours": []}
        generation: list[float] = []
        for _ in range(args.processes):
            for side in ("bare", "ours"):
                one = _run(name, side, args.rounds)
                times[side] += one["times"]
                generation.append(one["generation"])
        bare, ours = statistics.median(times["bare"]), statistics.median(times["ours"])
        memory = _run(name, "memory", 0)
        factor = memory["peak"] / memory["tensors"]
        target = CASES[name][2]
        print(f"{CASES[name][1]}: ours {ours:.2f} s (+gen {statistics.median(generation):.2f} s), bare "
              f"{bare * 1e3:.1f} ms: {ours / bare:.1f}x (target <= {target:g}x); peak traced memory "
              f"{factor:.2f}x its tensors' {memory['tensors'] / 2 ** 20:.0f} MiB (target <= {target:g}x)")
        ok = ok and ours / bare <= target and factor <= target
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
