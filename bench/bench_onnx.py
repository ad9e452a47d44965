"""Speed, side by side (issue 8, part 5): time per case of our pipeline on
onnxruntime against the onnx package's node tests for the same operators run
through onnxruntime's ONNX backend, in one process.

Ours: `runner.run_cases` on the default-suite cases of the operator with a
fresh `OnnxRuntimeBackend` (session creation included; case generation timed
apart), checking ULP distance and the oracle's error bounds.  Theirs: every
node test of the operator from `onnx.backend.test.case.node` (the models and
data the ONNX backend test runner uses, expanded variants included), each
prepared with `onnxruntime.backend.prepare` (model check + session), run, and
compared with `np.testing.assert_allclose(rtol, atol)` as the runner does.
Columns: ours end to end (``ms/case``; the runner hands the backend's
``run_batch`` the small cases of one operator and data type per call, every
attribute set included, and the backend runs the attribute sets through one
session), case generation (``+gen``), the backend alone called once per case
(``backend``, what a backend without ``run_batch`` gets: one session per
attribute set) and once for all cases (``batched``); each ratio is the onnx
loop's time per case over ours.

    python bench/bench_onnx.py [--repeat 3]

Each side keeps its best of ``--repeat`` runs, the two sides' runs interleaved.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
import warnings

import numpy as np

OPS = {"Softsign": "ACTIVATION_SOFTSIGN", "Shrink": "ACTIVATION_SHRINK", "Sign": "ELEMENT_WISE_SIGN",
       "HardSigmoid": "ACTIVATION_HARD_SIGMOID"}


def onnx_node_tests(op_type: str) -> list:  # type: ignore[type-arg]
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [c for c in collect_testcases(op_type) if c.kind == "node"]


def theirs(cases: list) -> tuple[int, float]:  # type: ignore[type-arg]
    import onnxruntime.backend as backend

    n, start = 0, time.perf_counter()
    for case in cases:
        for inputs, outputs in case.data_sets:
            rep = backend.prepare(case.model, "CPU")
            got = rep.run(inputs)
            for expected, actual in zip(outputs, got):
                np.testing.assert_allclose(expected, actual, rtol=case.rtol, atol=case.atol)
            n += 1
    return n, time.perf_counter() - start


def ours(operator: str) -> tuple[int, float, float, float, float]:
    import dmlconform.cli  # noqa: F401 - registers the commands (import order of the package)
    from dmlconform.backends.onnxruntime_backend import OnnxRuntimeBackend
    from dmlconform.cases.generate import generate
    from dmlconform.runner import bind, run_cases
    from dmlconform.spec import model as m
    from dmlconform.spec.load import load_spec

    spec = load_spec(Path("specs") / f"{operator}.yaml")
    start = time.perf_counter()
    pairs = [(spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)]
    generated = time.perf_counter() - start
    start = time.perf_counter()
    run_cases(pairs, OnnxRuntimeBackend())
    total = time.perf_counter() - start
    backend, bound = OnnxRuntimeBackend(), [(s, c, bind(c)) for s, c in pairs]
    start = time.perf_counter()
    for item in bound:  # the backend alone, one call per case as the runner makes them
        backend.run_batch([item])
    alone = time.perf_counter() - start
    start = time.perf_counter()
    OnnxRuntimeBackend().run_batch([(s, c, bind(c)) for s, c in pairs])  # with a runner batch hook
    batched = time.perf_counter() - start
    return len(pairs), total, generated, alone, batched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    args = parser.parse_args()
    ours("ACTIVATION_SOFTSIGN")  # warm imports and the oracle's caches once, for both sides alike
    theirs(onnx_node_tests("Softsign")[:1])
    print(f"{'op':12} {'ours cases':>10} {'ms/case':>8} {'+gen':>7} {'backend':>8} {'batched':>8} "
          f"{'onnx cases':>10} {'ms/case':>8} {'ratio':>7} {'ratio+gen':>9} {'backend':>8} {'batched':>8}")
    for op_type, operator in OPS.items():
        node = onnx_node_tests(op_type)
        mine, others = [], []
        for _ in range(args.repeat):  # interleaved: a drift of the machine's speed meets both sides alike
            mine.append(ours(operator))
            others.append(theirs(node))
        n_ours, t_ours, t_gen, t_alone, t_batched = min(mine, key=lambda r: r[1])
        n_theirs, t_theirs = min(others, key=lambda r: r[1])
        per_ours, per_gen, per_theirs = t_ours / n_ours * 1e3, t_gen / n_ours * 1e3, t_theirs / n_theirs * 1e3
        per_alone, per_batched = t_alone / n_ours * 1e3, t_batched / n_ours * 1e3
        print(f"{op_type:12} {n_ours:10d} {per_ours:8.3f} {per_gen:7.3f} {per_alone:8.3f} {per_batched:8.3f} "
              f"{n_theirs:10d} {per_theirs:8.3f} {per_theirs / per_ours:6.1f}x {per_theirs / (per_ours + per_gen):8.1f}x "
              f"{per_theirs / per_alone:7.1f}x {per_theirs / per_batched:7.1f}x")


if __name__ == "__main__":
    main()
