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
The node tests are collected once, for all operators, and grouped by
operator (`collect_testcases` returns its first call's list to every later
call).  Columns: ours end to end (``ms/case``; the runner hands the backend's
``run_batch`` the small cases of one operator per call, every data type and
attribute set included, and the backend runs them through shared sessions),
case generation (``+gen``), the backend alone called once per case
(``backend``, what a backend without ``run_batch`` gets: one session per
data type and attribute set) and once for all cases (``batched``); theirs per case over
all node tests (``ms/case``) and over the one-node ones alone (``1-node``,
without the expanded variants); each ratio is the onnx loop's time per case
over ours (``1-node``: its one-node time over ours with generation).
``runner``: the ONNX backend test runner itself (`runner_tests`: unittest
cases of ``onnx.backend.test.BackendTest`` on onnxruntime's backend, the
same node tests loaded from the onnx package's files), per case and over
ours with generation; the loop above is its core without the file reads.
``oracle``: the part of ours' time per case spent in the oracle (expected
values, bounds and alternatives from the spec's formula, computed during
the run; the node tests' expected outputs come computed with them, when
they are collected), and ``w/o oracle``: the loop's time per case over
ours less that part (the runs, sessions and comparisons alone).
``onnxruntime``: the part spent inside onnxruntime itself (creating
sessions, `InferenceSession.run`), and ``harness``: the rest (planning,
building models, batching inputs and outputs, comparing, the case
results); ours is oracle + onnxruntime + harness.  The target ratio is
``ratio``, with the oracle in.

    python bench/bench_onnx.py [--repeat 3]

Each side keeps its best of ``--repeat`` runs, the two sides' runs interleaved;
a run of theirs goes round the node tests until it has run `THEIR_RUNS`.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

OPS = {"Softsign": "ACTIVATION_SOFTSIGN", "Shrink": "ACTIVATION_SHRINK", "Sign": "ELEMENT_WISE_SIGN",
       "HardSigmoid": "ACTIVATION_HARD_SIGMOID"}


def onnx_node_tests() -> dict[str, list]:  # type: ignore[type-arg]
    """The onnx package's node tests by ONNX operator, expanded variants (the
    operator's function body as a graph) under their operator.  Collected
    once: `collect_testcases` fills its list when it first imports the test
    modules, so a second call returns the first call's cases whatever
    operator it names."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases(None) if c.kind == "node"]
    op_of = {c.name: c.model.graph.node[0].op_type for c in cases if len(c.model.graph.node) == 1}
    found: dict[str, list] = {}  # type: ignore[type-arg]
    for c in cases:
        op = op_of.get(c.name.split("_expanded")[0])
        if op is not None:
            found.setdefault(op, []).append(c)
    return found


#: The loop releases each session before it prepares the next, as the
#: runner's test function does by returning: a session kept alive through
#: the next preparation (``rep = prepare(...)`` in a loop) leaves its
#: intra-op threads spinning on every core, which made the next preparation
#: 5x slower on a 16-core machine (10 ms against the runner's 2 ms).
#: Node-test runs per repetition at least: an operator with few node tests
#: (Sign has one) goes round them again, so that its time per case is a
#: mean, like ours over its 26-178 cases, not one preparation's luck
#: (onnxruntime's session creation varies several-fold from one to the next).
THEIR_RUNS = 24


def _rounds(items: list, runs: int) -> list:  # type: ignore[type-arg]
    """``items`` repeated whole until their ``runs`` per round make at
    least `THEIR_RUNS`."""
    return items * -(-THEIR_RUNS // runs)


def theirs(cases: list) -> tuple[int, float, int, float]:  # type: ignore[type-arg]
    """Case count and seconds of every node test, then of the one-node ones
    alone (the expanded variants' multi-node models cost more to prepare),
    over rounds of them making at least `THEIR_RUNS` runs."""
    import onnxruntime.backend as backend

    n = n_one = 0
    total = one = 0.0
    for case in _rounds(cases, sum(len(case.data_sets) for case in cases)):
        for inputs, outputs in case.data_sets:
            start = time.perf_counter()
            rep = backend.prepare(case.model, "CPU")
            got = rep.run(inputs)
            for expected, actual in zip(outputs, got):
                np.testing.assert_allclose(expected, actual, rtol=case.rtol, atol=case.atol)
            del rep, got  # the session ends here, as the runner's does when its test returns
            spent = time.perf_counter() - start
            n, total = n + 1, total + spent
            if "_expanded" not in case.name:
                n_one, one = n_one + 1, one + spent
    return n, total, n_one, one


def runner_tests(names: dict[str, list[str]]) -> dict[str, list]:  # type: ignore[type-arg]
    """Per operator, the ONNX backend test runner's own tests of its node
    tests (``onnx.backend.test.BackendTest`` over ``onnxruntime.backend``,
    CPU): each loads its model and data from the onnx package's files, then
    prepares, runs and checks as the runner does."""
    import unittest

    import onnx.backend.test as onnx_backend_test
    import onnxruntime.backend as backend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        suite = onnx_backend_test.BackendTest(backend, __name__)
    by_name = {t.id().rsplit(".", 1)[-1]: t for cls in suite.test_cases.values()
               for t in unittest.TestLoader().loadTestsFromTestCase(cls)}
    return {op: [by_name[f"{name}_cpu"] for name in tests if f"{name}_cpu" in by_name] for op, tests in names.items()}


def runner(tests: list) -> tuple[int, float]:  # type: ignore[type-arg]
    """Runs and seconds of the runner's tests, in rounds making at least
    `THEIR_RUNS` runs; raises if one fails."""
    import unittest

    result, n = unittest.TestResult(), 0
    start = time.perf_counter()
    for test in _rounds(tests, len(tests)):
        test.run(result)
        n += 1
    spent = time.perf_counter() - start
    if not result.wasSuccessful() or result.skipped:
        failed = result.errors or result.failures or result.skipped
        raise RuntimeError(f"the ONNX backend test runner did not pass: {failed}")
    return n, spent


def ours(operator: str) -> tuple[int, float, float, float, float, float, float]:
    import onnxruntime

    import dmlconform.cli  # noqa: F401 - registers the commands (import order of the package)
    import dmlconform.runner as runner_module
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend
    from dmlconform.catalog import load_spec
    from dmlconform.families.elementwise.cases import generate
    from dmlconform.runner import bind, run_cases
    from dmlconform.spec import model as m

    spec = load_spec(Path("specs") / f"{operator}.yaml")
    start = time.perf_counter()
    pairs = [(spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)]
    generated = time.perf_counter() - start
    oracle = _Timed(runner_module, "_oracle_results")
    built, ran = _Timed(onnxruntime.InferenceSession, "__init__"), _Timed(onnxruntime.InferenceSession, "run")
    start = time.perf_counter()
    with oracle, built, ran:
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
    return len(pairs), total, generated, alone, batched, oracle.seconds, built.seconds + ran.seconds


class _Timed:
    """While entered, ``module.name`` (a function, or a method where
    ``module`` is a class) adds the seconds its calls take to ``seconds``:
    the oracle's share of a timed run (its expected values, bounds and
    alternatives; theirs come computed with the node tests), or
    onnxruntime's."""

    def __init__(self, module: object, name: str) -> None:
        self.module, self.name, self.seconds = module, name, 0.0

    def __enter__(self) -> None:
        self.original = original = getattr(self.module, self.name)
        self.own = self.name in vars(self.module)  # not inherited (InferenceSession.run is Session's)

        def timed(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        setattr(self.module, self.name, timed)

    def __exit__(self, *exc: object) -> None:
        if self.own:
            setattr(self.module, self.name, self.original)
        else:
            delattr(self.module, self.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    args = parser.parse_args()
    node_tests = onnx_node_tests()
    suites = runner_tests({op: [c.name for c in node_tests[op]] for op in OPS})
    ours("ACTIVATION_SOFTSIGN")  # warm imports and the oracle's caches once, for all sides alike
    theirs(node_tests["Softsign"][:1])
    runner(suites["Softsign"][:1])
    print(f"{'op':12} {'ours cases':>10} {'ms/case':>8} {'+gen':>7} {'backend':>8} {'batched':>8} "
          f"{'loop runs':>9} {'ms/case':>8} {'1-node':>7} {'runner':>7} {'ratio':>7} {'ratio+gen':>9} {'1-node':>7} "
          f"{'runner':>7} {'backend':>8} {'batched':>8} {'oracle':>7} {'w/o oracle':>10} {'onnxruntime':>11} "
          f"{'harness':>7}")
    for op_type, operator in OPS.items():
        node = node_tests[op_type]
        mine, others, runs = [], [], []
        for _ in range(args.repeat):  # interleaved: a drift of the machine's speed meets every side alike
            mine.append(ours(operator))
            others.append(theirs(node))
            runs.append(runner(suites[op_type]))
        n_ours, t_ours, t_gen, t_alone, t_batched, t_oracle, t_ort = min(mine, key=lambda r: r[1])
        n_theirs, t_theirs = min((r[:2] for r in others), key=lambda r: r[1])
        n_one, t_one = min((r[2:] for r in others), key=lambda r: r[1])
        n_runner, t_runner = min(runs, key=lambda r: r[1])
        per_ours, per_gen, per_theirs = t_ours / n_ours * 1e3, t_gen / n_ours * 1e3, t_theirs / n_theirs * 1e3
        per_one, per_alone, per_batched = t_one / n_one * 1e3, t_alone / n_ours * 1e3, t_batched / n_ours * 1e3
        per_runner, with_gen = t_runner / n_runner * 1e3, per_ours + per_gen
        per_oracle, per_ort = t_oracle / n_ours * 1e3, t_ort / n_ours * 1e3
        print(f"{op_type:12} {n_ours:10d} {per_ours:8.3f} {per_gen:7.3f} {per_alone:8.3f} {per_batched:8.3f} "
              f"{n_theirs:9d} {per_theirs:8.3f} {per_one:7.3f} {per_runner:7.3f} {per_theirs / per_ours:6.1f}x "
              f"{per_theirs / with_gen:8.1f}x {per_one / with_gen:6.1f}x {per_runner / with_gen:6.1f}x "
              f"{per_theirs / per_alone:7.1f}x {per_theirs / per_batched:7.1f}x {per_oracle:7.3f} "
              f"{per_theirs / (per_ours - per_oracle):9.1f}x {per_ort:11.3f} {per_ours - per_oracle - per_ort:7.3f}")


if __name__ == "__main__":
    main()
