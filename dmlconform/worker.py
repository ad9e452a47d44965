"""A worker process of `parallel`: the child's side (the parent's is
`parallel.Workers`).  DESIGN.md "Backends"; `parallel`'s docstring tells
the whole protocol.

A worker is started (``spawn``) with `worker_main` as its target: it builds
its backend, says ``ready``, then runs the jobs the parent sends through
the runner, telling the parent each case it starts, each return of the
backend and each result.  This module is what a worker imports to start
(and the run's process, which names `worker_main`), so it imports nothing
heavy at its top: the backend, the runner and the oracles come once the
worker runs (tests/commands/test_startup.py).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dmlconform.errors import ExitCode
from dmlconform.results import CaseResult, Outcome, ToleranceOverride

# The run's process imports this module (through `parallel`) before its
# workers start, so the backend, the runner, the judge and the oracles
# (numpy among them) are imported only inside the functions a worker runs.
if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    import numpy as np

    from dmlconform.backends.base import Backend, BackendInfo, BatchItem, Support
    from dmlconform.cases.model import Case, Planned
    from dmlconform.runner import Overrides
    from dmlconform.spec.model import Spec

#: A spec and one of its cases (made, or a `Planned` one the worker makes).
Pair = tuple["Spec", "Case | Planned"]


class Placer:
    """The position of each result within a list of cases, found by case id:
    the runner reports batched results out of order (ids are unique in a
    suite; a repeated id takes the positions in order)."""

    def __init__(self, cases: Sequence[Case | Planned]) -> None:
        self._slots: dict[str, deque[int]] = {}
        for i, case in enumerate(cases):
            self._slots.setdefault(case.id, deque()).append(i)

    def __call__(self, result: CaseResult) -> int:
        return self._slots[result.case_id].popleft()


@dataclass(frozen=True, slots=True)
class WorkerArgs:
    """What a worker needs to build its backend (pickled to the child)."""

    backend: str
    options: dict[str, str]
    overrides: dict[tuple[str, str], ToleranceOverride]


def _ignore_sigint() -> None:
    """Leave Ctrl-C to the parent (only where the platform has SIGINT)."""
    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _exit_with_parent() -> None:
    """End this worker when the parent is gone (killed, say, by a CI runner
    cancelling the job), even if the backend hangs."""

    parent = multiprocessing.parent_process()
    if parent is not None:
        parent.join()
        os._exit(1)


def worker_main(conn: Connection, args: WorkerArgs) -> None:
    """A worker's life: build the backend, say ``ready``, then run each job
    sent (``(pairs, alone)``) until told to stop (None) or the pipe closes;
    ``("prepare", families)`` imports those families' oracles meanwhile
    and says ``("prepared",)``.
    Messages: ``("ready", info)``, ``("fatal", text, exit code)``,
    ``("made", i, elements, CaseResult)``, ``("start", i)``, ``("result", i,
    CaseResult)``, ``("done",)``; ``i`` counts in the job."""
    from dmlconform.backends.registry import load_backend  # noqa: PLC0415 - off the parent's start (see the imports)

    _ignore_sigint()
    threading.Thread(target=_exit_with_parent, name="dmlconform-parent-watch", daemon=True).start()

    try:
        backend = load_backend(args.backend, args.options)
        info = backend.info()
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it as its own
        code = int(getattr(exc, "exit_code", ExitCode.BACKEND_UNAVAILABLE))
        conn.send(("fatal", getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}", code))
        return
    conn.send(("ready", info))
    from dmlconform.runner import run_cases  # noqa: F401, PLC0415 - every job's: imported while the first cases are made
    backend = _Watched(backend, conn)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        if job[0] == "prepare":
            _preload_judging(job[1])
            conn.send(("prepared",))
            continue
        pairs, alone = job
        _run_job(conn, backend, pairs, alone=alone, overrides=args.overrides)
        conn.send(("done",))


def _preload_judging(names: Sequence[str]) -> None:
    """Import the oracles of the families ``names`` now, while the parent
    makes the first cases (a one-case repro waited for them after its case
    ran: issue #31); the runner is imported once the worker is ready."""
    from dmlconform.families import preload, registered  # noqa: PLC0415 - off the parent's start (see the imports)

    for family in registered():
        if family.name in names:
            preload(family, "oracle")


class _Watched:
    """The backend, telling the parent each time its ``run`` returns: from
    then until the next case starts, the time is the harness's (the oracle
    and the comparison), not the backend's."""

    def __init__(self, backend: Backend, conn: Connection) -> None:
        from dmlconform.backends.base import implements_of, run_batch_of  # noqa: PLC0415 - off the parent's start (see the imports)

        self.backend, self.conn = backend, conn
        self.batch = run_batch_of(backend)
        if self.batch is not None:  # the runner then starts a whole batch before one call
            self.run_batch = self._run_batch
        implements = implements_of(backend)
        if implements is not None:  # the runner asks it once per operator (issue #22 item 5)
            self.implements = implements

    def info(self) -> BackendInfo:
        return self.backend.info()

    def supports(self, spec: Spec, case: Case) -> Support:
        return self.backend.supports(spec, case)

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        self.backend.run(spec, case, buffers)
        self.conn.send(("ran",))

    def _run_batch(self, items: Sequence[BatchItem]) -> list[Exception | None]:
        assert self.batch is not None
        errors = self.batch(items)
        self.conn.send(("ran",))
        return errors


def _run_job(conn: Connection, backend: Backend, pairs: list[Pair], *, alone: bool,
             overrides: Overrides) -> None:
    """``pairs`` through the runner (one call, or one call per case when
    ``alone``), each start and each result sent to the parent."""
    from dmlconform.judge import verdict  # noqa: PLC0415 - off the parent's start (see the imports)
    from dmlconform.runner import run_cases  # noqa: PLC0415 - off the parent's start (see the imports)

    place = Placer([case for _, case in pairs])
    parts = [range(i, i + 1) for i in range(len(pairs))] if alone else [range(len(pairs))]
    for part in parts:
        def started(i: int, base: int = part.start) -> None:
            conn.send(("start", base + i))

        def made(i: int, case: Case, base: int = part.start) -> None:   # the parent's facts of a planned case
            conn.send(("made", base + i, case.elements, verdict(case, Outcome.ERROR, "")))

        run_cases([pairs[i] for i in part], backend, overrides=overrides, on_start=started, on_made=made,
                  progress=lambda r: conn.send(("result", place(r), r)))
