"""Worker processes: the same results as one process, and a crash, an exit or
a hang costs only the culprit case (issue 7, parts 3 and 4).

The misbehaving backend (tests/backends/misbehaving_backend_pkg) computes
like ``cpu`` except on the cases its options name (``misbehaving-batch`` is
the same with ``run_batch``); it is installed in a temporary folder on
``sys.path``, which spawned workers inherit.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from dmlconform import parallel
from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.registry import load_backend
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.errors import BackendLoadError
from dmlconform.families.elementwise.cases import generate
from dmlconform.parallel import (
    Workers,
    case_timeout,
    describe_exit,
    plan_chunks,
    run_in_process,
    run_isolated,
)
from dmlconform.plan import LARGE_ELEMENTS, WORKER_CASES, WORKER_ELEMENTS
from dmlconform.report.json_report import dumps, loads
from dmlconform.results import CaseResult, Outcome
from dmlconform.spec import model as m
from tests.backends.install import install
from tests.conftest import REPO

OPS = ("ACTIVATION_RELU", "ACTIVATION_SOFTSIGN", "ELEMENT_WISE_ABS")   # the order `run` uses
PACKAGE = REPO / "tests" / "backends" / "misbehaving_backend_pkg"
POSIX_SIGNALS = hasattr(signal, "SIGSEGV") and sys.platform != "win32"


@pytest.fixture(scope="module")
def pairs():  # type: ignore[no-untyped-def]
    specs = [load_spec(REPO / "specs" / f"{op}.yaml") for op in OPS]
    return [(s, c) for s in specs for c in generate(s, m.FeatureLevel.FL_6_4, seed=0)]


@pytest.fixture(scope="module")
def reference(pairs):  # type: ignore[no-untyped-def]
    return run_in_process(pairs, CpuBackend()).results


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The misbehaving backend installed, first on sys.path."""
    install(PACKAGE, tmp_path / "site")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return tmp_path / "site"


def _same(result: CaseResult) -> str:
    """A result without its timing; repr, so NaN equals NaN."""
    return repr(dataclasses.replace(result, seconds=0.0))


def _pick(pairs, at: int) -> str:  # type: ignore[no-untyped-def]
    """The id of the first case from position ``at`` that the backend runs
    (a configuration outside the table is rejected before ``run``)."""
    return next(c.id for _, c in pairs[at:] if c.expect_supported)


def _by_id(results):  # type: ignore[no-untyped-def]
    return {r.case_id: r for r in results}


def _calibrated(pairs) -> float:  # type: ignore[no-untyped-def]
    """A ``--timeout`` for the tests that make a backend hang: 20 times what
    ``pairs`` take in this process on cpu now, at least 0.5 s, in tenths of
    a second (so a message quotes it exactly).  A hang is a hang whatever the
    limit; an honest case under it must not time out, and on a loaded
    machine cases take longer (issue #33: never a fixed wall-clock budget)."""
    started = time.perf_counter()
    run_in_process(pairs, CpuBackend())
    return max(0.5, math.ceil(200 * (time.perf_counter() - started)) / 10)


def _no_workers_left() -> bool:
    return not [p for p in multiprocessing.active_children() if p.name == "dmlconform-worker"]


# --------------------------------------------------------------------------- planning


@given(st.data())
def test_chunks_are_contiguous_bounded_and_cover_everything(data: st.DataObject) -> None:
    sizes = data.draw(st.lists(st.integers(min_value=1, max_value=2 * WORKER_ELEMENTS), max_size=600), label="sizes")
    jobs = data.draw(st.integers(min_value=1, max_value=16), label="jobs")
    chunks = plan_chunks(sizes, jobs)
    assert [i for r in chunks for i in r] == list(range(len(sizes)))
    share = math.ceil(len(sizes) / (4 * jobs))   # a quarter of a worker's share
    for r in chunks:
        assert len(r) <= min(WORKER_CASES, share)
        assert len(r) == 1 or sum(sizes[i] for i in r) <= WORKER_ELEMENTS
    if len(sizes) >= 4 * jobs:
        assert len(chunks) >= 2 * jobs   # every worker gets several


def test_large_cases_get_proportionally_more_time(pairs) -> None:  # type: ignore[no-untyped-def]
    small = pairs[0][1]
    assert case_timeout(small, 60.0) == 60.0
    big = dataclasses.replace(small, inputs=tuple(dataclasses.replace(t, buffer=t.buffer.repeat(
        2 * LARGE_ELEMENTS // t.buffer.size + 1)) for t in small.inputs))
    assert case_timeout(big, 60.0) > 120.0


def test_exit_statuses_in_words() -> None:
    assert describe_exit(3) == "exit code 3"
    assert describe_exit(0xC0000005) == "exit code 0xC0000005"
    if POSIX_SIGNALS:
        assert describe_exit(-11) == "signal 11 (SIGSEGV)"


# --------------------------------------------------------------------------- same results


def test_two_workers_give_the_results_of_one_and_of_in_process(pairs, reference) -> None:  # type: ignore[no-untyped-def]
    one = run_isolated(pairs, "cpu", jobs=1)
    two = run_isolated(pairs, "cpu", jobs=2)
    assert not one.interrupted and not two.interrupted
    assert [r.case_id for r in two.results] == [c.id for _, c in pairs]
    assert [_same(r) for r in one.results] == [_same(r) for r in reference]
    assert [_same(r) for r in two.results] == [_same(r) for r in reference]
    assert _no_workers_left()


def test_workers_start_before_the_cases_and_stop_unused() -> None:
    """`run` starts the first worker while it generates the cases; an input
    error before the run must not leave it behind."""
    with Workers("cpu", jobs=2) as workers:
        assert len(workers.workers) == 1
    assert _no_workers_left()
    result = CliRunner().invoke(main, ["run", "--op", "NOPE", "-o", "unused"])
    assert result.exit_code == 2 and _no_workers_left()


def test_a_worker_that_cannot_build_the_backend_is_a_load_error(pairs) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BackendLoadError) as err:
        run_isolated(pairs[:3], "no-such-backend", jobs=1)
    assert err.value.message.startswith("no backend named 'no-such-backend' (installed: cpu, ")  # the registry's own words
    assert _no_workers_left()


# --------------------------------------------------------------------------- isolation


def _misbehave(pairs, jobs: int = 2, timeout: float = 60.0, **options: str):  # type: ignore[no-untyped-def]
    return run_isolated(pairs, "misbehaving", options, jobs=jobs, timeout=timeout).results


def _only_culprits_differ(results, reference, culprits: dict[str, Outcome]) -> None:  # type: ignore[no-untyped-def]
    assert [r.case_id for r in results] == [r.case_id for r in reference]
    for got, want in zip(results, reference):
        if got.case_id in culprits:
            assert got.outcome is culprits[got.case_id], got
        else:
            assert _same(got) == _same(want)


def test_a_segfault_is_crash_for_its_case_only(site, pairs, reference) -> None:  # type: ignore[no-untyped-def]
    culprit = _pick(pairs, 40)
    results = _misbehave(pairs, crash=culprit)
    _only_culprits_differ(results, reference, {culprit: Outcome.CRASH})
    crash = _by_id(results)[culprit]
    assert crash.message.startswith("the backend crashed the worker process (")
    assert crash.message.endswith("); run alone in a fresh worker, it crashed again")
    if POSIX_SIGNALS:
        assert "(signal 11 (SIGSEGV))" in crash.message
    assert _no_workers_left()


def test_exit_and_abort_are_crash_with_their_status_and_every_culprit_is_found(site, pairs, reference) -> None:  # type: ignore[no-untyped-def]
    first, second, third = _pick(pairs, 5), _pick(pairs, 80), _pick(pairs, 120)
    results = _misbehave(pairs, jobs=1, exit=first, abort=second, crash=third)
    _only_culprits_differ(results, reference, {first: Outcome.CRASH, second: Outcome.CRASH, third: Outcome.CRASH})
    assert "(exit code 3)" in _by_id(results)[first].message
    if POSIX_SIGNALS:
        assert "(signal 6 (SIGABRT))" in _by_id(results)[second].message


@pytest.mark.parametrize("last", [False, True], ids=["early", "last case"])
def test_a_crash_that_needs_an_earlier_case_is_still_named(site, pairs, reference, last: bool) -> None:  # type: ignore[no-untyped-def]
    """The earlier case ran but was not compared yet when the later one
    crashed: alone, neither crashes; the one in flight is CRASH anyway (also
    when nothing else is left to run)."""
    supported = [i for i, (_, c) in enumerate(pairs) if c.expect_supported]
    first, second = (supported[-4], supported[-1]) if last else (supported[1], supported[4])
    pairs, reference = pairs[:second + 1], reference[:second + 1]
    earlier, later = pairs[first][1].id, pairs[second][1].id
    assert _by_id(reference)[earlier].outcome is Outcome.PASS   # compared in a batch, after the crash
    results = _misbehave(pairs, jobs=1, crash=later, after=earlier)
    _only_culprits_differ(results, reference, {later: Outcome.CRASH})
    assert "alone it passes, and so does each case that was in flight with it" in _by_id(results)[later].message


def test_a_hang_is_timeout_and_the_rest_still_runs(site, pairs, reference) -> None:  # type: ignore[no-untyped-def]
    culprit = _pick(pairs, 70)
    limit = _calibrated(pairs[60:80])
    results = _misbehave(pairs, timeout=limit, hang=culprit)
    _only_culprits_differ(results, reference, {culprit: Outcome.TIMEOUT})
    timeout = _by_id(results)[culprit]
    assert timeout.message == f"no answer within {limit:g} s (--timeout); the worker was stopped"
    assert timeout.seconds == limit
    assert _no_workers_left()


@pytest.fixture(scope="module")
def batch(pairs):  # type: ignore[no-untyped-def]
    """20 cases of one operator: at ``-j 1`` four chunks of 5, each
    one ``run_batch`` call.  The second chunk ends with a case the backend
    rejects before the call (its result comes at once: the four others are
    still in the call)."""
    cases = [(s, c) for s, c in pairs if s.operator == "ELEMENT_WISE_ABS"]
    rejected = next(p for p in cases if not p[1].expect_supported)
    chosen = [*cases[:9], rejected, *cases[9:19]]
    assert parallel.plan_chunks([1] * len(chosen), 1)[1] == range(5, 10)
    return chosen


def _count_hangs(monkeypatch: pytest.MonkeyPatch, limit: float) -> list[int]:
    """A list that gets an entry for each worker stopped at its deadline:
    each cost one ``--timeout`` (the count, not the time taken, says how
    many were paid).  The harness's own deadline is cut to 20 times the
    calibrated ``limit``, so that a regression that takes a hung backend for
    a slow comparison fails in seconds, not minutes."""
    monkeypatch.setattr(parallel, "_HARNESS_SECONDS", 20 * limit)
    hung, stops = Workers._hung, []

    def counted(self: Workers, worker: object) -> None:
        stops.append(1)
        hung(self, worker)  # type: ignore[arg-type]

    monkeypatch.setattr(Workers, "_hung", counted)
    return stops


ONE_HANG = "ELEMENT_WISE_ABS/FLOAT32/7d/edges"     # the second case of the second chunk
TWO_HANGS = "ELEMENT_WISE_ABS/FLOAT32/[68]d/edges"  # its first and third


@pytest.mark.parametrize("backend, hang, timeouts", [
    pytest.param("misbehaving-batch", ONE_HANG, 2, id="batch, one hangs"),
    pytest.param("misbehaving-batch", TWO_HANGS, 3, id="batch, two hang", marks=pytest.mark.slow),
    pytest.param("misbehaving", ONE_HANG, 1, id="one by one, one hangs"),
    pytest.param("misbehaving", TWO_HANGS, 2, id="one by one, two hang", marks=pytest.mark.slow),
])
def test_a_hang_in_a_batch_call_is_timeout_for_its_culprits_only(  # type: ignore[no-untyped-def]
        site, batch, monkeypatch, backend: str, hang: str, timeouts: int) -> None:
    """Issue #20: a ``run_batch`` call that hangs has every case of the call
    in flight.  The call's cases are run again one per call, so only a case
    that hangs on its own is TIMEOUT (each costs about two timeouts), and the
    others get the verdicts of an in-process run."""
    reference = run_in_process(batch, load_backend(backend)).results
    limit = _calibrated(batch)
    stops = _count_hangs(monkeypatch, limit)
    results = run_isolated(batch, backend, {"hang": hang}, jobs=1, timeout=limit).results
    culprits = {c.id: Outcome.TIMEOUT for _, c in batch if fnmatch.fnmatchcase(c.id, hang)}
    assert len(culprits) == (2 if hang == TWO_HANGS else 1)
    _only_culprits_differ(results, reference, culprits)
    for culprit in culprits:
        assert _by_id(results)[culprit].message == f"no answer within {limit:g} s (--timeout); the worker was stopped"
    assert len(stops) == timeouts
    assert _no_workers_left()


def test_a_batch_call_that_hangs_only_with_its_cases_together_still_shows(  # type: ignore[no-untyped-def]
        site, batch, monkeypatch) -> None:
    """Run alone, no case of the hung call hangs: as with a crash that needs
    what ran before it, the last case started in the call is TIMEOUT anyway
    (a hang is never dropped from the report), the others are as in process."""
    reference = run_in_process(batch, load_backend("misbehaving-batch")).results
    limit = _calibrated(batch)
    stops = _count_hangs(monkeypatch, limit)
    results = run_isolated(batch, "misbehaving-batch", {"hang": TWO_HANGS, "batch": "together"}, jobs=1,
                           timeout=limit).results
    blamed = "ELEMENT_WISE_ABS/FLOAT32/4d/boundary(x==0)"   # the last of the call: the one after it is rejected
    _only_culprits_differ(results, reference, {blamed: Outcome.TIMEOUT})
    assert _by_id(results)[blamed].message == (
        f"no answer within {limit:g} s (--timeout) from the backend's batch call (run_batch) of this case and others; the "
        "worker was stopped.  Run alone, neither this case nor any other of that call hangs: the hang needs them "
        "together")
    assert len(stops) == 1


@pytest.mark.slow
def test_a_crash_while_a_hung_batch_is_split_is_traced_as_any_crash(site, batch, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The call hangs (on one case) and, run one by one, another of its
    cases crashes: that one is CRASH, confirmed alone, and the split goes on
    to find the hanging one."""
    reference = run_in_process(batch, load_backend("misbehaving-batch")).results
    limit = _calibrated(batch)
    stops = _count_hangs(monkeypatch, limit)
    crash = "ELEMENT_WISE_ABS/FLOAT32/6d/edges"
    results = run_isolated(batch, "misbehaving-batch", {"hang": ONE_HANG, "crash": crash}, jobs=1,
                           timeout=limit).results
    _only_culprits_differ(results, reference, {crash: Outcome.CRASH, ONE_HANG: Outcome.TIMEOUT})
    assert _by_id(results)[crash].message.endswith("); run alone in a fresh worker, it crashed again")
    assert len(stops) == 2
    assert _no_workers_left()


def test_a_backend_whose_run_batch_is_none_runs_case_by_case_in_workers_too(site, batch) -> None:  # type: ignore[no-untyped-def]
    """The runner and the workers agree on "has run_batch"
    (`backends.base.run_batch_of`): a ``run_batch`` set to None is none."""
    backend = load_backend("misbehaving-batch", {"batch": "off"})
    assert backend.run_batch is None
    reference = run_in_process(batch, backend).results
    results = run_isolated(batch, "misbehaving-batch", {"batch": "off"}, jobs=1).results
    _only_culprits_differ(results, reference, {})


def _interrupt_after(n: int, seen: list[str]):  # type: ignore[no-untyped-def]
    """A progress callback that notes each case and presses Ctrl-C at the n-th."""
    def progress(result: CaseResult) -> None:
        seen.append(result.case_id)
        if len(seen) == n:
            raise KeyboardInterrupt
    return progress


def test_interrupted_runs_keep_the_results_so_far(pairs) -> None:  # type: ignore[no-untyped-def]
    order = [c.id for _, c in pairs]
    runs = (lambda progress: run_isolated(pairs, "cpu", jobs=2, progress=progress),
            lambda progress: run_in_process(pairs, CpuBackend(), progress=progress))
    for execute in runs:
        seen: list[str] = []
        outcome = execute(_interrupt_after(20, seen))
        assert outcome.interrupted and len(outcome.results) == 20
        assert sorted(seen) == sorted(r.case_id for r in outcome.results)
        assert [order.index(r.case_id) for r in outcome.results] == sorted(order.index(i) for i in seen)
    assert _no_workers_left()


# --------------------------------------------------------------------------- the run command


def test_run_reports_the_culprits_and_goes_on(site, tmp_path, pairs) -> None:  # type: ignore[no-untyped-def]
    crash, hang = _pick(pairs, 10), _pick(pairs, 100)
    args = ["run", "--backend", "misbehaving", "--backend-arg", f"crash={crash}", "--backend-arg", f"hang={hang}",
            "--timeout", f"{_calibrated(pairs[90:110]):g}", "-j", "2", "--no-progress", "-o", str(tmp_path / "r"), *[a for op in OPS
                                                                                     for a in ("--op", op)]]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    outcomes = {c["case_id"]: c["outcome"] for c in report["cases"]}
    assert len(outcomes) == len(pairs) and report["run"]["interrupted"] is False
    assert {i: o for i, o in outcomes.items() if o in ("CRASH", "TIMEOUT")} == {crash: "CRASH", hang: "TIMEOUT"}
    assert not {o for o in outcomes.values()} - {"PASS", "NOT_SUPPORTED", "CRASH", "TIMEOUT"}


def test_run_no_isolate_gives_the_same_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    reports = []
    for flags in (["--no-isolate"], ["-j", "2"]):
        out = tmp_path / flags[0].strip("-")
        result = CliRunner().invoke(main, ["run", "--op", "ELEMENT_WISE_ABS", "--no-progress", "-o", str(out), *flags])
        assert result.exit_code == 0, result.output
        report = json.loads((out / "report.json").read_text())
        for key in ("started", "finished", "run_id", "command", "seconds"):
            report["run"].pop(key)
        for c in report["cases"] + report["groups"]:
            c.pop("seconds")
        reports.append(report)
    assert reports[0] == reports[1]


def test_interrupted_flag_round_trips_through_report_json() -> None:
    from tests.report.fixtures import sample_run

    run = dataclasses.replace(sample_run(), interrupted=True)
    assert loads(dumps(run), path="report.json").interrupted is True


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32",
                    reason="sends SIGINT and SIGTERM to a child process (POSIX)")
@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_ctrl_c_writes_the_partial_report_and_exits_130(site, tmp_path, pairs, stop: str) -> None:  # type: ignore[no-untyped-def]
    """SIGTERM as Ctrl-C (issue #33): CI systems stop a job with it, and
    before it the run died without a word or a report."""
    hang, marker, out = _pick(pairs, 60), tmp_path / "hanging", tmp_path / "r"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", "from dmlconform.cli import main; main()", "run", "--backend", "misbehaving",
               "--backend-arg", f"hang={hang}", "--backend-arg", f"marker={marker}", "-j", "2", "--timeout", "600",
               "--no-progress", "-o", str(out), *[a for op in OPS for a in ("--op", op)]]
    # SIGINT as a terminal gives it, whatever this test's own disposition (a shell's background job
    # ignores SIGINT, and a Python started so would too).
    child = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), child.communicate(timeout=10)
        child.send_signal(getattr(signal, stop))
        _, stderr = child.communicate(timeout=120)   # a wait for the reports, not a budget
    finally:
        child.kill()
    assert child.returncode == 130, stderr
    assert "cases ran; the reports hold those" in stderr and "Traceback" not in stderr
    report = json.loads((out / "report.json").read_text())
    ids = [c["case_id"] for c in report["cases"]]
    assert report["run"]["interrupted"] is True and 0 < len(ids) < len(pairs) and hang not in ids
    assert ids == [c.id for _, c in pairs if c.id in set(ids)]   # input order


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper does not)."""
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" not in status.read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc to follow the worker")
def test_a_worker_ends_when_its_parent_is_killed(site, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A CI runner that cancels a job kills `run` outright: a worker stuck in
    a hanging backend must not outlive it."""
    marker = tmp_path / "hanging"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", "from dmlconform.cli import main; main()", "run", "--backend", "misbehaving",
               "--backend-arg", "hang=*", "--backend-arg", f"marker={marker}", "-j", "1", "--no-progress",
               "--op", "ELEMENT_WISE_ABS", "-o", str(tmp_path / "r")]
    child = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        worker = int(marker.read_text())
        assert _running(worker)
    finally:
        child.kill()
        child.wait()
    deadline = time.monotonic() + 60   # a wait, not a budget: it ends as soon as the worker does
    while _running(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(worker)


@pytest.mark.parametrize(("value", "said"), [
    ("inf", "inf is not in the range 0<x<=86400.0."),
    ("nan", "nan is not a number of seconds: give one above 0 and at most 86400"),
    ("3e6", "3000000.0 is not in the range 0<x<=86400.0."),
])
def test_a_timeout_that_is_no_number_of_seconds_is_a_usage_error(value: str, said: str) -> None:
    """Issue #33: ``inf`` was an internal error (OverflowError in the
    workers' wait), ``nan`` was accepted."""
    result = CliRunner().invoke(main, ["run", "--op", "ELEMENT_WISE_ABS", "--timeout", value, "-o", "unused"])
    assert result.exit_code == 2 and f"Invalid value for '--timeout': {said}" in result.output
    assert "Traceback" not in result.output and _no_workers_left()


def test_jobs_above_the_cores_run_one_worker_per_core_and_say_so(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #33: ``-j 10000`` started a worker per case and ended with exit 3
    after two minutes; the workers are now capped at the cores (counted by
    `parallel.default_jobs`), and the run says so."""
    started: list[int] = []
    spawn = Workers._spawn

    def counted(self: Workers):  # type: ignore[no-untyped-def]
        started.append(self.jobs)
        return spawn(self)

    monkeypatch.setattr(Workers, "_spawn", counted)
    cores = parallel.default_jobs()
    result = CliRunner().invoke(main, ["run", "--op", "ELEMENT_WISE_ABS", "-j", "10000", "--no-progress",
                                       "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert (f"note: -j 10000 runs {cores} worker{'s' if cores > 1 else ''}, one per core of this machine: more only "
            "compete for the cores (and each builds its own backend)") in result.output
    assert set(started) == {cores} and len(started) <= cores


def test_default_jobs_counts_the_cores_this_process_may_run_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a container or under ``taskset`` limited to 2 of 16 cores,
    ``os.cpu_count()`` says 16: one worker per core means 2."""
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert parallel.default_jobs() == 2
    monkeypatch.delattr(parallel.os, "sched_getaffinity")  # where the system has no affinity (macOS, Windows)
    assert parallel.default_jobs() == 16


def test_prepared_workers_give_the_results_of_in_process(pairs, reference) -> None:  # type: ignore[no-untyped-def]
    """Issue #31: the run names its families while the backend starts, and
    its workers import those oracles before their first job; the results
    are those of a run without it, and no harness time counts as a case's."""
    with Workers("cpu", jobs=2) as workers:
        workers.prepare(("element-wise formula",))
        outcome = workers.run(pairs[:30])
    assert [r.outcome for r in outcome.results] == [r.outcome for r in reference[:30]]
    assert [r.case_id for r in outcome.results] == [r.case_id for r in reference[:30]]
    assert _no_workers_left()


def test_a_worker_prepares_only_the_families_named() -> None:
    # interpolation composes no element-wise activation (window, contraction and normalization do, through
    # families.contraction.fused, and so import the element-wise oracle with theirs)
    code = ("import sys; from dmlconform.worker import _preload_judging; _preload_judging(['interpolation']); "
            "print(*('dmlconform.families.' + f + '.oracle' in sys.modules for f in ('interpolation', 'elementwise')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.stdout.split() == ["True", "False"]
