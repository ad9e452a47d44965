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
* ``T blocks`` and ``T by taps``: T alone, as the oracle makes it (a block
  of output rows at a time, `plan.WINDOW_PATCHES`: the patches read, widened
  and one GEMM of depth 9C per block), against one float64 GEMM per filter
  tap (the input's strided slice, channels last, widened, by the tap's C x
  M filter, summed into T): no patch matrix, but GEMMs of depth C and 9
  passes of sums (issue #35's other way, docs/window.md);
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

from dmlconform.families.window import oracle, reference, windowmap
from dmlconform.families.window.cases import geometry, operands, semantics_of
from dmlconform.plan import WINDOW_PATCHES


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


def _t_blocks(x: np.ndarray, w: np.ndarray, pads: tuple[tuple[int, int], tuple[int, int]]) -> Callable[[], object]:
    """T of every output element in float64 alone, a block of rows at a time as `oracle.convolve` makes it."""
    k, c, kh, kw = w.shape
    filters = w.transpose(0, 2, 3, 1).reshape(1, k, kh * kw * c).astype(np.float64)  # taps by channels
    h, wd = x.shape[2] + sum(pads[0]) - kh + 1, x.shape[3] + sum(pads[1]) - kw + 1
    maps = tuple(windowmap.taps(size, out, kernel, stride=1, dilation=1, start=pad[0], transposed=False)
                 for size, out, kernel, pad in zip(x.shape[2:], (h, wd), (kh, kw), pads))
    rows = max(1, WINDOW_PATCHES // (c * wd * kh * kw))

    def run() -> np.ndarray:
        padded = windowmap.appended(np.moveaxis(x, 1, -1), 2, channels_last=True)
        value = np.empty((1, 1, k, h * wd))
        for lo in range(0, h, rows):
            hi = min(lo + rows, h)
            patches = oracle._patches(padded, (maps[0].rows(lo, hi), maps[1]), 1)
            value[..., lo * wd:hi * wd] = oracle._products(patches.astype(np.float64), filters, finite=True)
        return value
    return run


def _t_taps(x: np.ndarray, w: np.ndarray, pads: tuple[tuple[int, int], tuple[int, int]]) -> Callable[[], object]:
    """T of every output element in float64 alone, one GEMM per filter tap."""
    k, c, kh, kw = w.shape
    per_tap = w.transpose(2, 3, 1, 0).astype(np.float64)  # (kh, kw, C, M)

    def run() -> np.ndarray:
        last = np.pad(np.moveaxis(x[0], 0, -1), (*pads, (0, 0)))  # channels last
        h, wd = last.shape[0] - kh + 1, last.shape[1] - kw + 1
        total = np.zeros((h * wd, k))
        for i in range(kh):
            for j in range(kw):
                total += last[i:i + h, j:j + wd].astype(np.float64).reshape(h * wd, c) @ per_tap[i, j]
        return total
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
             "T blocks": _t_blocks(x, w, ((top, bottom), (left, right))),
             "T by taps": _t_taps(x, w, ((top, bottom), (left, right))),
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
