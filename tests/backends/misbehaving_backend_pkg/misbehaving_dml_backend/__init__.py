"""A backend that computes like ``cpu`` but misbehaves on chosen cases, the way
a native driver does: it segfaults, exits or hangs.  Used by
tests/test_parallel.py to check that worker isolation costs only the culprit
case (issue 7, part 4).  Installed like tests/backends/fake_backend_pkg.

Options (``--backend-arg KEY=PATTERN``, a case id or an fnmatch pattern):
``crash`` reads address 0 (SIGSEGV; an access violation on Windows),
``exit`` ends the process with status 3 (``os._exit``), ``abort`` calls
``os.abort`` (SIGABRT), ``hang`` sleeps
forever (first writing its process id to the file ``marker`` when given), and with ``after``
a ``crash`` case crashes only once an ``after`` case has run in the same
process (a crash that needs what ran before it).

``misbehaving-batch`` is the same backend with ``run_batch``
(`BatchBackend`), misbehaving the way a batching driver does: the whole call
never returns when one of its cases is a ``hang`` case, and it crashes,
exits or aborts when one of them is such a case.  Its option ``batch``:
``on`` (the default), ``off`` (its ``run_batch`` is None, as a backend that
batches only on some devices may set it: it then has none, and runs every
case through ``run``) or ``together`` (the call hangs only when it holds two
``hang`` cases or more: a hang no case has alone).
"""

from __future__ import annotations

import ctypes
import fnmatch
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from dmlconform.backends.base import BackendInfo, BatchItem, Support
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.spec.model import Spec


class MisbehavingBackend:
    """``cpu``, except on the cases its options name."""

    def __init__(self, *, crash: str = "", exit: str = "", abort: str = "", hang: str = "", after: str = "",
                 marker: str = "", feature_level: str | None = None) -> None:
        self.cpu = CpuBackend(feature_level)
        self.crash, self.exit, self.abort, self.hang = crash, exit, abort, hang
        self.after, self.marker = after, marker
        self.armed = not after

    def info(self) -> BackendInfo:
        cpu = self.cpu.info()
        return BackendInfo(name="misbehaving", device=cpu.device, version="0.1.0", feature_level=cpu.feature_level)

    def supports(self, spec: Spec, case: Case) -> Support:
        return self.cpu.supports(spec, case)

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        self._die(case)
        if self._hits(self.hang, case):
            self._hang()
        if self._hits(self.after, case):
            self.armed = True
        self.cpu.run(spec, case, buffers)

    def _die(self, case: Case) -> None:
        """Crash, exit or abort when the options name ``case``."""
        if self._hits(self.crash, case) and self.armed:
            ctypes.string_at(0)
        if self._hits(self.exit, case):
            os._exit(3)
        if self._hits(self.abort, case):
            os.abort()

    def _hang(self) -> None:
        """Never return (first telling ``marker`` this process's id)."""
        if self.marker:
            Path(self.marker).write_text(str(os.getpid()))
        while True:
            time.sleep(60)

    @staticmethod
    def _hits(pattern: str, case: Case) -> bool:
        return bool(pattern) and fnmatch.fnmatchcase(case.id, pattern)


class BatchMisbehavingBackend(MisbehavingBackend):
    """``misbehaving`` with ``run_batch``: the call hangs, crashes, exits or
    aborts when one of its cases is named so, and computes like ``cpu``
    otherwise."""

    def __init__(self, *, batch: str = "on", **options: str) -> None:
        if batch not in ("on", "off", "together"):
            raise ValueError(f"batch={batch!r}: use on, off or together")
        super().__init__(**options)
        self.together = batch == "together"
        if batch == "off":
            self.run_batch = None  # type: ignore[assignment]

    def info(self) -> BackendInfo:
        cpu = self.cpu.info()
        return BackendInfo(name="misbehaving-batch", device=cpu.device, version="0.1.0",
                           feature_level=cpu.feature_level)

    def run_batch(self, items: Sequence[BatchItem]) -> list[Exception | None]:
        hanging = [case for _, case, _ in items if self._hits(self.hang, case)]
        if len(hanging) >= (2 if self.together else 1):
            self._hang()
        for _, case, _ in items:
            self._die(case)
        return self.cpu.run_batch(items)
