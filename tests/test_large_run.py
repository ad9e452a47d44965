"""``run --large`` loses no work (issue #33, item 3): the large cases are
made where and when they run, a case that cannot fit in the memory left is
NOT_SUPPORTED with both figures, a MemoryError in a case is that case's
ERROR, and the run writes its reports."""

from __future__ import annotations

import dataclasses
import gc
import json
import re
import subprocess
import sys
import weakref
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from dmlconform import families, runner, suite
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, Planned
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.memory import needed
from dmlconform.parallel import Workers
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

LEVEL = m.FeatureLevel.FL_6_4
GEMM_LARGE = "GEMM/FLOAT32/4d/k512/random/large"
IF_LARGE = "ELEMENT_WISE_IF/FLOAT64/4d/edges/large"
#: The tensors of IF_LARGE: a UINT8 condition, FLOAT64 A, B and output of 2 x 2049 x 1025 elements.
IF_BYTES = 2 * 2049 * 1025 * (1 + 8 + 8 + 8)
FIGURE = re.compile(r"needs \d+(\.\d)? [MG]B of memory, \d+(\.\d)? [MG]B available")


def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _pairs(op: str, *, large: bool, patterns: tuple[str, ...] = ()) -> list[suite.Pair]:
    spec = _spec(op)
    return suite.pairs([(REPO / "specs" / f"{op}.yaml", spec)], LEVEL, seed=0, large=large, cases=None,
                       selection=suite.Selection(patterns=patterns))[0]


def test_large_adds_planned_cases_and_leaves_the_others_as_they_were() -> None:
    plain, large = _pairs("GEMM", large=False), _pairs("GEMM", large=True)
    assert [c.id for _, c in large if isinstance(c, Planned)] == [GEMM_LARGE]
    made = [c for _, c in large if isinstance(c, Case)]
    assert [c.id for c in made] == [c.id for _, c in plain]
    first = next(i for i, (_, c) in enumerate(large) if isinstance(c, Planned))
    assert [c.id for _, c in large[:first]] == [c.id for _, c in plain[:first]]   # in generation's order
    assert all(a.inputs[0].buffer.tobytes() == b.inputs[0].buffer.tobytes() for a, (_, b) in zip(made, plain))


def test_a_planned_case_is_made_as_the_suite_makes_it() -> None:
    (spec, planned), = _pairs("GEMM", large=True, patterns=("*/large",))
    assert isinstance(planned, Planned)
    expected = next(cases_of(spec, LEVEL, seed=0, large=True, keep=lambda i, _: i == GEMM_LARGE))
    made = runner.make(spec, planned)
    assert made.id == expected.id and made.outputs[0].sizes == expected.outputs[0].sizes
    assert all(a.buffer.tobytes() == b.buffer.tobytes() for a, b in zip(made.inputs, expected.inputs))


def test_a_large_case_over_the_memory_left_is_not_supported_with_the_figures(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = _pairs("GEMM", large=True, patterns=("*/large",)) + _pairs("GEMM", large=False)[:3]
    monkeypatch.setattr(runner, "available", lambda: 10_000_000)   # 10 MB left: the large GEMM needs more
    results = run_cases(pairs, CpuBackend())
    assert results[0].case_id == GEMM_LARGE and results[0].outcome is Outcome.NOT_SUPPORTED
    assert FIGURE.search(results[0].message), results[0].message
    assert results[0].dims == 4   # the made case's facts
    assert [r.outcome for r in results[1:]] == [Outcome.PASS] * 3   # small cases are not held to it


def test_a_run_holds_one_made_large_case_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = _pairs("REDUCE", large=True, patterns=("*/large",))
    assert len(pairs) == 2 and all(isinstance(c, Planned) for _, c in pairs)
    alive: list[weakref.ref[np.ndarray]] = []

    def make(spec: m.Spec, planned: Planned) -> Case:
        gc.collect()
        assert all(buffer() is None for buffer in alive), "an earlier large case is still held"
        case = families.make(spec, planned)
        alive.append(weakref.ref(case.inputs[0].buffer))
        return case

    monkeypatch.setattr(runner, "make", make)
    results = run_cases(pairs, CpuBackend())
    assert [r.outcome for r in results] == [Outcome.PASS, Outcome.PASS] and len(alive) == 2


class _OutOfMemory(CpuBackend):
    """cpu, except that running case ``victim`` raises MemoryError."""

    def __init__(self, victim: str) -> None:
        super().__init__()
        self.victim = victim

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        if case.id == self.victim:
            raise MemoryError
        super().run(spec, case, buffers)


def test_a_memory_error_while_the_backend_runs_is_that_cases_error_and_the_run_goes_on() -> None:
    pairs = _pairs("ELEMENT_WISE_ADD", large=False)[:6]
    victim = pairs[2][1].id
    results = run_cases(pairs, _OutOfMemory(victim))
    assert [r.case_id for r in results] == [c.id for _, c in pairs]
    assert results[2].outcome is Outcome.ERROR and "ran out of memory" in results[2].message
    assert all(r.outcome is Outcome.PASS for i, r in enumerate(results) if i != 2)


def test_a_memory_error_while_a_case_is_made_is_its_error_and_the_run_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = _pairs("GEMM", large=False)[:2] + _pairs("GEMM", large=True, patterns=("*/large",)) + \
        _pairs("GEMM", large=False)[2:4]

    def out_of_memory(spec: m.Spec, planned: Planned) -> Case:
        raise MemoryError("Unable to allocate 1.0 GiB")

    monkeypatch.setattr(runner, "make", out_of_memory)
    results = run_cases(pairs, CpuBackend())
    assert [r.case_id for r in results] == [c.id for _, c in pairs]
    assert results[2].outcome is Outcome.ERROR
    assert results[2].message == "harness error: ran out of memory making the case (MemoryError: Unable to " \
                                 "allocate 1.0 GiB)"
    assert [r.outcome for i, r in enumerate(results) if i != 2] == [Outcome.PASS] * 4


def test_workers_make_a_planned_case_and_learn_its_facts() -> None:
    pairs = _pairs("GEMM", large=True, patterns=("*/large",)) + _pairs("GEMM", large=False)[:2]
    with Workers("cpu", jobs=1) as workers:
        results = workers.run(pairs).results
        made = dict(workers.made)
    in_process = run_cases(pairs, CpuBackend())
    assert [dataclasses.replace(r, seconds=0) for r in results] == \
        [dataclasses.replace(r, seconds=0) for r in in_process]
    assert results[0].outcome is Outcome.PASS and results[0].dims == 4
    assert list(made) == [0] and made[0][1].dims == 4   # what the parent's CRASH or TIMEOUT would say


def _worker_address_space() -> int:
    """Bytes of address space a cpu worker maps once its backend is built."""
    with Workers("cpu", jobs=1) as workers:
        workers.info()
        status = Path(f"/proc/{workers.workers[0].process.pid}/status").read_text()
    return int(re.search(r"VmSize:\s+(\d+) kB", status)[1]) * 1024  # type: ignore[index]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the address space from /proc (Linux)")
def test_large_under_a_lowered_address_space_writes_the_report(tmp_path: Path) -> None:
    # A worker gets three quarters of what the large IF needs by the estimate: more than making it takes
    # (between 220 and 470 MB above a worker's own, measured with ulimit -v), too little by the estimate;
    # the large GEMM (4 MB of tensors) fits.  On main: no figure, and the run held every large case itself.
    import resource  # POSIX only, as the skip says

    limit = _worker_address_space() + needed(IF_BYTES) * 3 // 4

    def lowered() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    out = tmp_path / "report"
    proc = subprocess.run([sys.executable, "-m", "dmlconform", "run", "--backend", "cpu", "--large", "--op", "GEMM",
                           "--op", "ELEMENT_WISE_IF", "-k", "*/large", "--no-progress", "-o", str(out)],
                          cwd=REPO, capture_output=True, text=True, preexec_fn=lowered, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    cases = {c["case_id"]: c for c in json.loads((out / "report.json").read_text())["cases"]}
    assert set(cases) == {GEMM_LARGE, IF_LARGE}
    assert cases[GEMM_LARGE]["outcome"] == "PASS"
    assert cases[IF_LARGE]["outcome"] == "NOT_SUPPORTED" and FIGURE.search(cases[IF_LARGE]["message"])
    assert cases[IF_LARGE]["dims"] == 4
