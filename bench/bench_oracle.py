"""Oracle throughput against the bare float64 numpy expression.

Issue 4's target: the oracle (float64 evaluation, the one rounding to the
target type, the per-element error bound and the exactness check) costs at
most 4x the bare float64 numpy expression on the same array, measured in the
same run.  Timings are interleaved (bare, oracle, bare, oracle, ...) and the
best of ``--repeat`` is kept for each, so a busy machine hurts both alike.

    python bench/bench_oracle.py [--size 16777216] [--repeat 7] [--dtype float32]

"bare" evaluates the expression on a float64 copy of the input made
beforehand; "bare+cast" includes making that copy, which the oracle has to do
too.  Exit status 0 when every ratio against "bare" meets the target, else 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dmlconform.families.elementwise.formula_oracle import evaluate
from dmlconform.formula import parse

TARGET = 4.0
WIDTHS = (18, 14, 11, 10, 8, 10, 9)


@dataclass(frozen=True)
class Case:
    name: str
    formula: str                      # as the doc page writes it
    attrs: dict[str, float]
    bare: Callable[[np.ndarray], np.ndarray]


CASES = (
    Case("softsign", "f(x) = x / (1 + abs(x))", {}, lambda x: x / (1 + np.abs(x))),
    Case("swish", "f(x) = x * Sigmoid(SigmoidInputScale * x)", {"SigmoidInputScale": 1.0},
         lambda x: x * (1 / (1 + np.exp(-(1.0 * x))))),
    Case("swish(scale=1.7)", "f(x) = x * Sigmoid(SigmoidInputScale * x)", {"SigmoidInputScale": 1.7},
         lambda x: x * (1 / (1 + np.exp(-(np.float64(np.float32(1.7)) * x))))),
)


def best(fn: Callable[[], object], timings: list[float]) -> None:
    start = time.perf_counter()
    fn()
    timings.append(time.perf_counter() - start)


def measure(case: Case, x: np.ndarray, dtype: str, repeat: int) -> tuple[float, float, float, int]:
    tree = parse(case.formula)
    x64 = x.astype(np.float64)
    bare: list[float] = []
    cast: list[float] = []
    oracle: list[float] = []
    refined = 0
    for _ in range(repeat):
        best(lambda: case.bare(x64), bare)
        best(lambda: case.bare(x.astype(np.float64)), cast)
        start = time.perf_counter()
        result = evaluate(tree, {"x": x}, case.attrs, dtype=dtype)
        oracle.append(time.perf_counter() - start)
        refined = result.refined
    return min(bare), min(cast), min(oracle), refined


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1 << 24)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    # values across the interesting range: mostly moderate, some large
    x = (rng.standard_normal(args.size) * np.exp2(rng.integers(-8, 8, args.size))).astype(np.float32)
    print(f"{args.size} float32 elements -> {args.dtype}, best of {args.repeat}, target oracle <= {TARGET}x bare")
    header = ("formula", "bare Melem/s", "bare+cast", "oracle", "ratio", "vs +cast", "refined")
    print("".join(f"{h:<18}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(zip(header, WIDTHS, strict=True))))
    ok = True
    for case in CASES:
        bare, cast, oracle, refined = measure(case, x, args.dtype, args.repeat)
        rate = lambda t: args.size / t / 1e6  # noqa: E731
        ratio = oracle / bare
        ok &= ratio <= TARGET
        print(f"{case.name:<18}{rate(bare):>14.1f}{rate(cast):>11.1f}{rate(oracle):>10.1f}"
              f"{ratio:>8.2f}{oracle / cast:>10.2f}{refined:>9}")
    print("target met" if ok else "target NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
