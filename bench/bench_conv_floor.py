"""Where the ``--large`` convolution's time goes, against the 6x of issue #35
("Done means"): the floor that the float64 sums set.

In one process, CPU time (`time.process_time`, less disturbed by other
work on the machine than wall time), the best of ``--rounds`` calls after
one untimed one, each against the bare side of bench_large.py (float32
im2col + matmul + bias + ``np.allclose``):

* ``T and S``: the two float64 products every element's value T and
  magnitude sum S need (DESIGN, accumulation tolerances), im2col'd whole
  and multiplied, ``patches @ filter`` and ``|patches| @ |filter|``: a
  float64 GEMM runs at half float32's rate, so these alone cost about 4
  bare GEMMs, whatever the oracle does around them;
* ``T, S32``: the same with S summed in float32, as the oracle sums it
  for FLOAT16 and FLOAT32 operands (`families.window.oracle._above32`):
  the floor now;
* ``reference``: the cpu backend's `families.window.reference.convolution`
  (float32, one filter tap at a time);
* ``ours``: bench_large.py's timed side (`runner.run_cases` on cpu).

Run it with one BLAS thread, so that a loaded 2-core machine does not
time its threads waiting for each other:

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD nice -n 10 python bench/bench_conv_floor.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
from bench_large import _bare, _case, _ints, _operands, _ours  # beside this script: on sys.path when it runs

from dmlconform.families.window import reference
from dmlconform.families.window.cases import geometry, operands, semantics_of


def _best(step: Callable[[], object], rounds: int) -> float:
    """The least CPU time of ``rounds`` calls of ``step``, after one untimed one."""
    step()
    times = []
    for _ in range(rounds):
        started = time.process_time()
        step()
        times.append(time.process_time() - started)
    return min(times)


def _sums(x: np.ndarray, w: np.ndarray, pads: tuple[tuple[int, int], tuple[int, int]],
          magnitude: type[np.floating]) -> Callable[[], object]:
    """T of every output element in float64 and S in ``magnitude``: the whole im2col matrix and two GEMMs."""
    k, c, kh, kw = w.shape
    filters = w.reshape(k, c * kh * kw).astype(np.float64)
    magnitudes = np.abs(filters).astype(magnitude)

    def run() -> tuple[np.ndarray, np.ndarray]:
        padded = np.pad(x[0], ((0, 0), *pads))
        windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(1, 2))
        cols = np.ascontiguousarray(windows.transpose(0, 3, 4, 1, 2)).reshape(c * kh * kw, -1)
        return filters @ cols.astype(np.float64), magnitudes @ np.abs(cols).astype(magnitude, copy=False)
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="timed calls per step (default 9)")
    args = parser.parse_args()
    spec, case, _ = _case("CONVOLUTION")
    sem, out = semantics_of(spec), case.outputs[0]
    x, w, _ = _operands(case)
    (top, left), (bottom, right) = _ints(case, "StartPadding"), _ints(case, "EndPadding")
    steps = {"bare": _bare("CONVOLUTION", case),
             "T and S": _sums(x, w, ((top, bottom), (left, right)), np.float64),
             "T, S32": _sums(x, w, ((top, bottom), (left, right)), np.float32),
             "reference": lambda: reference.convolution(operands(sem, case), geometry(sem, case), out.sizes, out.dtype),
             "ours": lambda: _ours(spec, case)}
    found = {name: _best(step, args.rounds) for name, step in steps.items()}
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    print(f"{case.id}; load average {load}; OPENBLAS_NUM_THREADS={threads}; best of {args.rounds}, CPU time")
    for name, seconds in found.items():
        print(f"  {name:<10} {seconds * 1e3:7.1f} ms  {seconds / found['bare']:5.1f}x bare")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
