"""Running cases in worker processes: in parallel, and isolated from a
backend that crashes or hangs.

DESIGN.md "Backends" and issue 7 (CI gating, parts 3 and 4).  The backend
under test is native code in the end (DirectML, a vendor driver): a
segfault, an abort or an endless loop in it must cost the case that caused
it, not the run.  So by default the backend runs in worker processes, even
at ``-j 1``, and the parent only schedules, watches and collects:

* **Workers** are started with the ``spawn`` method on every platform, so
  Linux behaves like Windows (no fork-only state).  Each (the module
  `worker`: the child's side) builds its own backend with
  `load_backend(name, options)` and runs *chunks* through `runner.run_cases`;
  ``on_start(i)`` tells the parent which case is in flight, ``progress``
  sends each result as soon as it is known.
* **Chunks** are contiguous runs of the input order (the runner still batches
  the oracle over like cases), at most `plan.WORKER_CASES` cases, about a quarter
  of a worker's share so the workers finish together, and at most
  `plan.WORKER_ELEMENTS` tensor elements (a large case runs alone; a
  `Planned` one, a ``--large`` case, is made by the worker that runs it,
  which tells the parent its size and facts: ``("made", i, elements,
  result template)``).  Results come
  back in input order and are identical to ``-j 1`` and to in-process runs
  apart from ``seconds`` (the runner's batched results equal its per-case
  results).
* **Crash**: when a worker dies, the case it last started and has no result
  for is the suspect.  It is run again alone, in a fresh worker.  If that
  worker dies too, the verdict is CRASH, with the exit code or signal.  If
  it passes alone, the other cases that were in flight with it (run by the
  backend but not yet compared) are run again one by one in a worker, and a
  case that kills that worker is confirmed alone the same way.  If no case
  kills a worker on its own, the first suspect is still CRASH, with a
  message saying the crash needs what ran before it (``--no-isolate``
  reproduces the original order in one process).  Cases of the chunk that
  had not started go on in a replacement worker at once.
* **Hang**: a backend that has not returned `case_timeout` seconds after
  starting a case (the worker reports each return) gets its worker stopped
  (terminate, then kill) and replaced.  The cases started since the
  backend last returned, without a result, are the call in flight.  One
  case: it is TIMEOUT.  Several (a ``run_batch`` call, every case of it
  started before it): none is convicted yet; they are *split*, run again
  one per runner call, so a case that hangs alone is TIMEOUT (each costs
  about two timeouts, not one per case of its batch) and the others get
  their own verdicts.  Should none hang alone, the last case started in the
  call is TIMEOUT anyway, with a message saying the hang needs them
  together (as for a crash that needs what ran before it).  The rest of
  the chunk runs again in the new worker.  A worker whose harness compares
  for far longer than that without a result (`_HARNESS_SECONDS`) is
  stopped the same way, the case ERROR.
* **Ctrl-C**: workers ignore SIGINT (where the platform has it), so only the
  parent sees it; it stops the workers and returns the results it has,
  marked ``interrupted``.  A worker whose parent is killed outright exits
  (a thread waits on the parent's sentinel), hung backend or not.

Only the parent builds `CaseResult`s for CRASH and TIMEOUT; everything else
comes from the runner in the worker.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import types
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any, Self

from dmlconform.errors import BackendLoadError, ExitCode, InputError
from dmlconform.plan import LARGE_ELEMENTS, WORKER_CASES, WORKER_ELEMENTS, pack
from dmlconform.results import CaseResult, Outcome, ToleranceOverride
from dmlconform.worker import Pair, Placer, WorkerArgs, worker_main

# The run's process imports this module before its workers start, and the
# workers start first thing (`Workers`), so that their start overlaps the
# loading of the specs, the families and numpy here.  So the runner, the
# judge, the cases and the backends (numpy, every oracle) are imported only
# where a worker, or the parent once the run's cases are made, first needs
# them (one case's repro: bench/bench_startup.py; tests/commands/
# test_startup.py checks that nothing heavy comes with this module).
if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from dmlconform.backends.base import Backend, BackendInfo
    from dmlconform.cases.model import Case, Planned

#: Seconds a case may run before it is TIMEOUT (``--timeout``).
DEFAULT_TIMEOUT = 60.0
#: Least seconds the harness may spend comparing a chunk's results without a
#: word (times elements / `LARGE_ELEMENTS` for a large chunk) before the
#: worker is taken for hung.
_HARNESS_SECONDS = 300.0
#: Longest single wait for the workers: the platform's wait takes whole
#: milliseconds in a C int (about 24.8 days; longer raised OverflowError),
#: and a large case's deadline is a multiple of ``--timeout``.
_LONGEST_WAIT = 3600.0
#: Seconds a stopped worker gets to exit after terminate() before kill().
_GRACE = 2.0

Progress = Callable[[CaseResult], None]
Overrides = Mapping[tuple[str, str], ToleranceOverride]


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What running the cases gave: ``results`` in input order (when
    ``interrupted``, only the cases that finished, still in input order)."""

    results: tuple[CaseResult, ...]
    interrupted: bool = False


def default_jobs() -> int:
    """Workers when ``-j`` is not given: one per core this process may run
    on.  Measured on 2 idle cores (bench/bench_cli.py, whole default
    suite): 2 workers 2.86 s, 1 worker 3.35 s; one worker per core leaves
    the run's own process (cases out, results in) to share a core, which
    costs less than it saves.  The cores are those of the process's CPU
    affinity where the system has one (a container or ``taskset`` limited
    to 2 of 16 cores: ``os.cpu_count()`` says 16, and 16 workers starting
    on 2 cores made ``--shard 1/16`` take 0.56 of the full run, not 0.3)."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count()
    return max(1, cores or 1)


def case_timeout(case: Case, timeout: float) -> float:
    """``timeout`` seconds, times elements / `LARGE_ELEMENTS` for a case
    larger than that."""
    return _scaled(timeout, case.elements)


def _scaled(seconds: float, elements: int) -> float:
    """``seconds``, times elements / `LARGE_ELEMENTS` for more elements than that."""
    return seconds * max(1.0, elements / LARGE_ELEMENTS)


def planned_size(case: Case | Planned) -> int:
    """A case's elements, where it is made; for a `Planned` one (a large
    case, made by the worker that runs it) more than a chunk holds, so that
    it goes alone, until the worker says how large it is."""
    from dmlconform.cases.model import Planned  # noqa: PLC0415 - off the parent's start (see the imports)

    return WORKER_ELEMENTS + 1 if isinstance(case, Planned) else case.elements


def plan_chunks(sizes: Sequence[int], jobs: int) -> list[range]:
    """Contiguous ranges over ``len(sizes)`` cases (``sizes`` in elements)
    covering them all in order: each at most `plan.WORKER_CASES` cases and
    about ``n / (4 jobs)`` of them (so the workers finish together), and at
    most `plan.WORKER_ELEMENTS` elements unless a single case is larger."""
    target = max(1, min(WORKER_CASES, math.ceil(len(sizes) / (4 * max(1, jobs)))))
    return pack(sizes, most=WORKER_ELEMENTS, most_items=target)


def run_in_process(pairs: Sequence[Pair], backend: Backend, *, overrides: Overrides | None = None,
                   progress: Progress | None = None) -> RunOutcome:
    """``--no-isolate``: the runner in this process, as one batch (a crash
    ends the run, nothing times out).  Ctrl-C keeps the results known so
    far."""
    from dmlconform.runner import run_cases  # noqa: PLC0415 - off the parent's start (see the imports)

    results: list[CaseResult | None] = [None] * len(pairs)
    place = Placer([case for _, case in pairs])

    def done(result: CaseResult) -> None:
        results[place(result)] = result
        if progress is not None:
            progress(result)

    try:
        run_cases(pairs, backend, overrides=overrides, progress=done)
    except KeyboardInterrupt:
        return RunOutcome(tuple(r for r in results if r is not None), interrupted=True)
    return RunOutcome(tuple(r for r in results if r is not None))


class InProcess:
    """``--no-isolate``: the backend built in this process (when it is first
    asked about, so after the run's own inputs are checked), the runner here:
    what `Workers` offers a run (``info``, ``run``), without the workers."""

    def __init__(self, backend: str, options: Mapping[str, str] | None = None, *,
                 overrides: Overrides | None = None) -> None:
        self.name, self.options, self.overrides = backend, dict(options or {}), overrides
        self.backend: Backend | None = None

    def info(self) -> BackendInfo:
        from dmlconform.backends.registry import load_backend  # noqa: PLC0415 - off the parent's start (see the imports)

        if self.backend is None:
            self.backend = load_backend(self.name, self.options)
        return self.backend.info()

    def prepare(self, families: Sequence[str]) -> None:
        """Nothing: in this process an oracle is imported when first used."""

    def run(self, pairs: Sequence[Pair], *, progress: Progress | None = None) -> RunOutcome:
        if self.backend is None:
            self.info()
        assert self.backend is not None
        return run_in_process(pairs, self.backend, overrides=self.overrides, progress=progress)


def run_isolated(pairs: Sequence[Pair], backend: str, options: Mapping[str, str] | None = None, *,
                 jobs: int, timeout: float = DEFAULT_TIMEOUT, overrides: Overrides | None = None,
                 progress: Progress | None = None) -> RunOutcome:
    """Run ``pairs`` on backend ``backend`` (a registry name, built in each
    worker with ``options``) in ``jobs`` worker processes; see the module
    docstring for crashes, hangs and Ctrl-C.  Raises `BackendLoadError` when
    a worker cannot build the backend."""
    with Workers(backend, options, jobs=jobs, timeout=timeout, overrides=overrides) as workers:
        return workers.run(pairs, progress=progress)


@dataclass(frozen=True, slots=True)
class _Job:
    """Cases (global indices, in order) for one worker.  ``kind``: "chunk"
    (one runner call), "confirm" (one suspect alone in a fresh worker;
    ``rest`` are the cases in flight with it), "probe" (one runner call per
    case), "split" (one runner call per case: the cases of a backend call
    that hung).  ``origin`` is the first suspect of the crash being traced
    and ``death`` how that worker died; for a split, ``origin`` is the case
    still to blame should none hang alone (-1 once one has).  ``retried``: a
    worker died before starting any of these cases once already."""

    kind: str
    indices: tuple[int, ...]
    rest: tuple[int, ...] = ()
    origin: int = -1
    death: str = ""
    retried: bool = False

    @property
    def fresh(self) -> bool:
        return self.kind == "confirm"

    @property
    def alone(self) -> bool:
        """Each case in its own runner call (and so its own backend call)."""
        return self.kind in ("probe", "split")


@dataclass(eq=False)
class _Worker:
    """One worker process as the parent sees it."""

    process: Any                      # multiprocessing.process.BaseProcess
    conn: Connection
    deadline: float                   # time.monotonic() by which it must say something
    ready: bool = False
    preparing: bool = False           # importing the oracles `Workers.prepare` named (the harness's time)
    harness: float = 0.0              # seconds the harness may compare without a word
    used: bool = False                # has taken a job (a fresh one has not)
    job: _Job | None = None
    sent: bool = False                # the job has been sent
    started: list[int] = field(default_factory=list)   # global indices, in start order
    returned: int = 0                 # len(started) when the backend last returned from a call


def describe_exit(code: int | None) -> str:
    """A worker's exit status in words: ``signal 11 (SIGSEGV)``,
    ``exit code 0xC0000005`` (a Windows status), ``exit code 3``."""
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code:#010X}".replace("0X", "0x") if code > 0xFFFF else f"exit code {code}"


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while a worker starts: on POSIX the child inherits the
    disposition across exec, so a Ctrl-C during its start-up cannot reach
    it before it ignores SIGINT itself."""
    if not hasattr(signal, "SIGINT") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _main_left_behind() -> Iterator[None]:
    """While a worker starts, this process's ``__main__`` is an empty
    module, so the worker does not run it again: ``spawn`` re-runs the main
    script in the child (the console script ``dmlconform``, which imports
    the CLI: 0.1 s of CPU in each worker's start, issue #31) unless it is a
    package's ``__main__`` (``python -m dmlconform``).  The worker's target,
    `worker_main`, lives in an importable module and needs nothing of it."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _spawn_context() -> Any:
    """Workers start as fresh interpreters on every platform (as on Windows)."""

    return multiprocessing.get_context("spawn")


class Workers:
    """Up to ``jobs`` worker processes for one run of `run`, with the
    parent's bookkeeping: a queue of jobs and a result slot per case.

    The first worker starts, and builds its backend, as soon as this is made,
    so that it is ready when the caller has generated the cases (a real
    device takes a while to open).  A context manager; `run` once: when it
    returns the workers are told to exit (stopped at once on Ctrl-C or an
    error), and they are gone when the block ends."""

    def __init__(self, backend: str, options: Mapping[str, str] | None = None, *, jobs: int,
                 timeout: float = DEFAULT_TIMEOUT, overrides: Overrides | None = None) -> None:
        if jobs < 1 or timeout <= 0:
            raise ValueError(f"jobs={jobs} must be >= 1 and timeout={timeout} > 0")
        self.args = WorkerArgs(backend, dict(options or {}), dict(overrides or {}))
        self.jobs, self.timeout = jobs, timeout
        self.pairs: list[Pair] = []
        self.made: dict[int, tuple[int, CaseResult]] = {}   # a planned case's elements and facts, once made
        self.progress: Progress | None = None
        self.results: list[CaseResult | None] = []
        self.missing = 0
        self.queue: deque[_Job] = deque()
        self.slots = 1
        self.workers: list[_Worker] = []
        self.backend_info: BackendInfo | None = None   # what the first worker's backend says of itself
        self.families: tuple[str, ...] = ()   # those whose oracles the workers import before their first job
        self.ctx = _spawn_context()
        self._spawn()

    def info(self) -> BackendInfo:
        """What the backend says of itself, from the first worker that built
        it (waiting for it): the run's process never builds the backend, so
        a heavy library (torch, a device) is loaded only where cases run."""
        while self.backend_info is None:
            self._step()
        return self.backend_info

    def prepare(self, families: Sequence[str]) -> None:
        """Have every worker, now and later, import the oracles of
        ``families`` (by name) while the cases are made."""
        self.families = tuple(families)
        for worker in self.workers:
            self._prepare(worker)

    def _prepare(self, worker: _Worker) -> None:
        if self.families:
            with contextlib.suppress(OSError):   # it died: the next step sees its sentinel
                worker.conn.send(("prepare", self.families))
            worker.preparing = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker (idle ones are asked, busy ones terminated)."""
        for worker in list(self.workers):
            self._stop(worker)

    def run(self, pairs: Sequence[Pair], *, progress: Progress | None = None) -> RunOutcome:
        """Every case, results in input order; Ctrl-C returns those so far."""
        self.pairs, self.progress = list(pairs), progress
        self.results, self.missing = [None] * len(self.pairs), len(self.pairs)
        chunks = plan_chunks([planned_size(c) for _, c in self.pairs], self.jobs)
        self.queue = deque(_Job("chunk", tuple(r)) for r in chunks)
        self.slots = max(1, min(self.jobs, len(chunks)))
        interrupted = False
        try:
            while self.missing or any(w.job is not None and w.job.kind != "chunk" for w in self.workers):
                self._dispatch()
                self._step()
        except KeyboardInterrupt:
            interrupted = True
            self.close()
        except BaseException:
            self.close()
            raise
        self._dismiss()
        return RunOutcome(tuple(r for r in self.results if r is not None), interrupted=interrupted)

    def _dismiss(self) -> None:
        """Tell every idle worker to exit, without waiting for it: its exit
        (a Python process with numpy and the backend to tear down) overlaps
        the run's reports instead of preceding them; `close`, at the end of
        the block, waits for it."""
        for worker in self.workers:
            if worker.ready and worker.job is None:
                with contextlib.suppress(OSError):
                    worker.conn.send(None)

    # -- scheduling

    def _dispatch(self) -> None:
        """Give queued jobs to idle workers, starting workers as needed; a
        job that needs a fresh worker retires a used one."""
        while self.queue:
            idle = [w for w in self.workers if w.job is None]
            job = self.queue[0]
            worker = next((w for w in idle if not (job.fresh and w.used)), None)
            if worker is None and idle and len(self.workers) >= self.slots:
                self._stop(idle[0])
            if worker is None and len(self.workers) < self.slots:
                worker = self._spawn()
            if worker is None:
                return
            self.queue.popleft()
            worker.job, worker.used, worker.sent, worker.started, worker.returned = job, True, False, [], 0
            self._send(worker)

    def _spawn(self) -> _Worker:
        parent, child = self.ctx.Pipe(duplex=True)
        process = self.ctx.Process(target=worker_main, args=(child, self.args), daemon=True,
                                   name="dmlconform-worker")
        with _sigint_ignored(), _main_left_behind():
            process.start()
        child.close()
        worker = _Worker(process, parent, deadline=time.monotonic() + max(self.timeout, 60.0))
        self.workers.append(worker)
        self._prepare(worker)
        return worker

    def _send(self, worker: _Worker) -> None:
        if worker.ready and worker.job is not None and not worker.sent:
            job = worker.job
            with contextlib.suppress(OSError):   # it died: the next step sees its sentinel
                worker.conn.send(([self.pairs[i] for i in job.indices], job.alone))
            worker.sent = True
            worker.harness = self._harness(job)
            worker.deadline = time.monotonic() + self._before_start(worker)

    def _before_start(self, worker: _Worker) -> float:
        """Seconds a worker may take between its job's arrival and its
        first case's start: the harness's while it imports oracles or makes
        a planned case, else ``--timeout`` (the backend's ``supports``)."""
        from dmlconform.cases.model import Planned  # noqa: PLC0415 - off the parent's start (see the imports)

        assert worker.job is not None
        planned = any(isinstance(self.pairs[i][1], Planned) for i in worker.job.indices)
        return worker.harness if planned or worker.preparing else self.timeout

    def _stop(self, worker: _Worker) -> None:
        """Ask an idle worker to exit; else (or if it does not) terminate,
        wait, kill: the worker is gone when this returns."""
        self.workers.remove(worker)
        if worker.ready and worker.job is None and worker.process.is_alive():
            with contextlib.suppress(OSError):
                worker.conn.send(None)
                worker.process.join(_GRACE)
        if worker.process.is_alive():
            worker.process.terminate()
            worker.process.join(_GRACE)
            if worker.process.is_alive():
                worker.process.kill()
        worker.process.join()
        worker.conn.close()

    # -- watching

    def _step(self) -> None:
        """Wait for a message, a death or the nearest deadline, and act."""
        busy = [w for w in self.workers if w.job is not None or not w.ready]
        if not busy:
            return
        now = time.monotonic()
        waiting = min(min(w.deadline for w in busy) - now, _LONGEST_WAIT)

        ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], max(0.0, waiting)))
        for worker in busy:
            alive = worker.conn not in ready or self._drain(worker)
            if alive and worker.process.sentinel in ready:
                alive = self._drain(worker)   # what it said before it died comes first
            if worker not in self.workers:
                continue
            if not alive or worker.process.sentinel in ready:
                self._died(worker)
            elif (worker.job is not None or not worker.ready) and time.monotonic() > worker.deadline:
                self._hung(worker)

    def _drain(self, worker: _Worker) -> bool:
        """Handle every message waiting; False when the pipe is closed."""
        try:
            while worker in self.workers and worker.conn.poll():
                self._handle(worker, worker.conn.recv())
        except (EOFError, OSError, pickle.UnpicklingError):
            return False
        return True

    def _handle(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        kind = message[0]
        job = worker.job
        if kind == "ready":
            worker.ready, self.backend_info = True, self.backend_info or message[1]
            self._send(worker)
            return
        if kind == "fatal":  # the backend's own error, as building it here would have raised it
            raise (InputError if message[2] == ExitCode.USAGE else BackendLoadError)(message[1])
        if kind == "prepared":
            worker.preparing = False
            if job is not None and worker.sent and not worker.started:
                worker.deadline = time.monotonic() + self._before_start(worker)
            return
        assert job is not None, f"worker message {kind!r} without a job"
        if kind == "start":
            index = job.indices[message[1]]
            worker.started.append(index)
            worker.deadline = time.monotonic() + self._timeout(index)
        elif kind == "made":
            self.made[job.indices[message[1]]] = message[2], message[3]
            worker.harness = self._harness(job)
        elif kind in ("ran", "result"):
            if kind == "result":
                self._record(job.indices[message[1]], message[2])
            else:
                worker.returned = len(worker.started)
            if not self._in_call(worker):   # the harness's time from here on
                worker.deadline = time.monotonic() + worker.harness
        elif kind == "done":
            worker.job = None
            self._finished(job)

    def _in_call(self, worker: _Worker) -> tuple[int, ...]:
        """The cases in the backend's call in flight, in start order: started
        since it last returned, without a result (the runner rejects a case
        before the call, with its result at once).  Several when the call is
        a ``run_batch``; none while the harness runs."""
        return tuple(i for i in worker.started[worker.returned:] if self.results[i] is None)

    def _record(self, index: int, result: CaseResult) -> None:
        fresh = self.results[index] is None
        self.results[index] = result
        if fresh:
            self.missing -= 1
            if self.progress is not None:
                self.progress(result)

    def _verdict(self, index: int, outcome: Outcome, message: str, seconds: float = 0.0) -> CaseResult:
        from dmlconform.judge import verdict  # noqa: PLC0415 - off the parent's start (see the imports)

        if index in self.made:   # a planned case made in a worker: its facts from there
            return dataclasses.replace(self.made[index][1], outcome=outcome, message=message, seconds=round(seconds, 6))
        return verdict(self.pairs[index][1], outcome, message, seconds=seconds)

    def _elements(self, index: int) -> int:
        """Elements of case ``index``: a planned one's once made (until then, as `planned_size`)."""
        return self.made[index][0] if index in self.made else planned_size(self.pairs[index][1])

    def _timeout(self, index: int) -> float:
        """Seconds case ``index`` may run (`case_timeout`)."""
        return _scaled(self.timeout, self._elements(index))

    def _harness(self, job: _Job) -> float:
        """Seconds the harness may take on ``job`` without a word (by its cases' elements)."""
        return _scaled(max(self.timeout, _HARNESS_SECONDS), sum(self._elements(i) for i in job.indices))

    # -- what happened to a job

    def _suspect(self, worker: _Worker) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
        """(the suspect, the other cases in flight, the cases not started):
        the suspect is the last case started without a result, else the
        first case without one."""
        job = worker.job
        assert job is not None
        started = set(worker.started)
        pending = [i for i in job.indices if self.results[i] is None]
        in_flight = [i for i in worker.started if self.results[i] is None]
        suspect = in_flight[-1] if in_flight else pending[0]
        others = tuple(i for i in in_flight if i != suspect)
        unstarted = tuple(i for i in pending if i not in started and i != suspect)
        return suspect, others, unstarted

    def _died(self, worker: _Worker) -> None:
        worker.process.join(_GRACE)
        death = describe_exit(worker.process.exitcode)
        self._stop(worker)
        if not worker.ready:
            raise BackendLoadError(f"a worker process died while building backend {self.args.backend!r} "
                                   f"({death}); --no-isolate runs the backend in this process")
        job = worker.job
        if job is None:
            return
        if all(self.results[i] is not None for i in job.indices):
            self._finished(job)   # it died after its last result: nothing is lost
            return
        if not worker.started and not job.retried:   # died before its first case: once is no evidence
            self.queue.appendleft(dataclasses.replace(job, retried=True))
            return
        suspect, others, unstarted = self._suspect(worker)
        if job.kind == "confirm":
            self._record(suspect, self._verdict(suspect, Outcome.CRASH, f"the backend crashed the worker process "
                                                f"({death}); run alone in a fresh worker, it crashed again"))
            self._queue("chunk", tuple(i for i in job.rest if self.results[i] is None))
        elif job.kind == "probe":
            self.queue.appendleft(_Job("confirm", (suspect,), rest=tuple(sorted(others + unstarted)),
                                       origin=job.origin, death=job.death))
        else:   # a chunk, or a split (which goes on splitting, still with the case to blame)
            self._queue(job.kind, unstarted, job.origin if job.origin in unstarted else -1)
            self.queue.appendleft(_Job("confirm", (suspect,), rest=others, origin=suspect, death=death))

    def _queue(self, kind: str, indices: tuple[int, ...], origin: int = -1, death: str = "") -> None:
        """Queue ``indices`` next, unless there are none."""
        if indices:
            self.queue.appendleft(_Job(kind, indices, origin=origin, death=death))

    def _finished(self, job: _Job) -> None:
        """A job ran to its end: fill any hole, go on tracing a crash, or
        blame a hang no case of its call has alone."""
        for i in job.indices:
            if self.results[i] is None:
                self._record(i, self._verdict(i, Outcome.ERROR, "harness error: the worker returned no result"))
        if job.kind == "confirm" and job.rest:
            self.queue.appendleft(_Job("probe", job.rest, origin=job.origin, death=job.death))
        elif job.kind in ("confirm", "probe"):
            self._unexplained(job.origin, job.death)
        elif job.kind == "split" and job.origin >= 0:
            self._hung_together(job.origin)

    def _unexplained(self, origin: int, death: str) -> None:
        """No case crashes on its own: the first suspect is CRASH anyway."""
        before = self.results[origin]
        self.results[origin] = self._verdict(
            origin, Outcome.CRASH,
            f"the backend crashed the worker process ({death}) while it ran this case after others; alone it "
            f"passes, and so does each case that was in flight with it: the crash depends on what ran before "
            f"(--no-isolate -j 1 runs the original order in one process)",
            before.seconds if before is not None else 0.0)

    def _hung_together(self, origin: int) -> None:
        """No case of a hung batch call hangs alone: the last one started is
        TIMEOUT anyway, so that the hang is in the report."""
        limit = self._timeout(origin)
        self.results[origin] = self._verdict(
            origin, Outcome.TIMEOUT,
            f"no answer within {limit:g} s (--timeout) from the backend's batch call (run_batch) of this case and "
            f"others; the worker was stopped.  Run alone, neither this case nor any other of that call hangs: the "
            f"hang needs them together", limit)

    def _hung(self, worker: _Worker) -> None:
        """No word from the worker by its deadline: it is stopped and
        replaced.  The case of a backend call in flight is TIMEOUT; a
        ``run_batch`` call of several cases convicts none yet, they are split
        (one call each, so the one that hangs alone is TIMEOUT and the others
        get their verdicts); with no call in flight the harness was comparing,
        and its suspect is ERROR.  The rest of the job is queued again."""
        job = worker.job
        self._stop(worker)
        if not worker.ready or job is None:
            raise BackendLoadError(f"a worker process did not build backend {self.args.backend!r} within "
                                   f"{max(self.timeout, 60.0):g} s; --no-isolate runs the backend in this process")
        in_call = self._in_call(worker)
        if len(in_call) > 1:
            self._requeue(job, skip=in_call, convicted=False)
            self.queue.appendleft(_Job("split", tuple(sorted(in_call)), origin=in_call[-1]))
            return
        if in_call:
            suspect, limit = in_call[0], self._timeout(in_call[0])
            verdict = self._verdict(suspect, Outcome.TIMEOUT,
                                    f"no answer within {limit:g} s (--timeout); the worker was stopped", limit)
        else:
            suspect = self._suspect(worker)[0]
            verdict = self._verdict(suspect, Outcome.ERROR, f"harness error: the comparison of this case's chunk "
                                    f"gave no result within {worker.harness:g} s; the worker was stopped",
                                    worker.harness)
        self._record(suspect, verdict)
        self._requeue(job, convicted=bool(in_call))

    def _requeue(self, job: _Job, *, convicted: bool, skip: tuple[int, ...] = ()) -> None:
        """After a hang, the cases of ``job`` still without a result (less
        ``skip``) go on as the job would have; ``convicted``: a case hung
        alone, so a split has its culprit."""
        rest = tuple(i for i in job.indices if self.results[i] is None and i not in skip)
        if job.kind == "confirm":
            self._queue("chunk", tuple(i for i in job.rest if self.results[i] is None))
        elif job.kind == "probe" and not rest:
            self._unexplained(job.origin, job.death)
        elif job.kind == "split":
            self._queue("split", rest, job.origin if job.origin in rest and not convicted else -1)
        else:
            self._queue(job.kind, rest, job.origin, job.death)
