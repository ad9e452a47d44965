"""Which variance kernel does an engine's normalization follow? (issue #36)

On MEAN_VARIANCE_NORMALIZATION1's FLOAT32 cases whose data separate them
(``large-mean``: mean^2 / variance about 770; ``small-variance``: about
8e4), prints the oracle's largest bound, the largest error of the float32
two-pass (`honest_backends.F32Sequential`) and one-pass
(`honest_backends.F32OnePass`) kernels, and per engine (cpu, onnxruntime,
torch, where installed) its largest error and its largest distance from
each kernel's output.  docs/normalization.md quotes the numbers.

    PYTHONPATH=$PWD nice -n 10 python bench/normalization_kernels.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from honest_backends import F32OnePass, F32Sequential

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.registry import load_backend
from dmlconform.catalog import load_spec
from dmlconform.families import Oracles, cases_of
from dmlconform.spec import model as m

REPO = Path(__file__).resolve().parent.parent


def _output(backend: object, spec: m.Spec, case: object) -> np.ndarray:
    buffers = {t.name: np.array(t.buffer) for t in (*case.inputs, *case.outputs)}  # type: ignore[attr-defined]
    backend.run(spec, case, buffers)  # type: ignore[attr-defined]
    out = case.outputs[0]  # type: ignore[attr-defined]
    return out.view(buffers[out.name]).reshape(-1).astype(np.float64)


def main() -> int:
    spec = load_spec(REPO / "specs" / "MEAN_VARIANCE_NORMALIZATION1.yaml")
    oracle = Oracles().get(spec)
    engines: dict[str, object] = {"cpu": CpuBackend()}
    for name in ("onnxruntime", "torch"):
        backend = load_backend(name)
        if backend.info().available:
            engines[name] = backend
    for case in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0):
        if case.dtype is not m.DataType.FLOAT32 or not any(k in case.id for k in ("large-mean", "small-variance")):
            continue
        e = oracle.bind([case], flush_subnormals=False).expect(0, int(np.prod(case.outputs[0].sizes)))[0]
        expected = e.expected.astype(np.float64)
        two, one = _output(F32Sequential(), spec, case), _output(F32OnePass(), spec, case)
        print(f"{case.id}: bound max {e.bound_relaxed.max():.2e}, two-pass error {np.abs(two - expected).max():.2e}, "
              f"one-pass error {np.abs(one - expected).max():.2e}")
        for name, backend in engines.items():
            try:
                got = _output(backend, spec, case)
            except Exception as exc:  # noqa: BLE001 - an engine's refusal is a line of the table
                print(f"  {name:12} not run: {exc}")
                continue
            print(f"  {name:12} error {np.abs(got - expected).max():.2e}, from two-pass {np.abs(got - two).max():.2e}, "
                  f"from one-pass {np.abs(got - one).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
