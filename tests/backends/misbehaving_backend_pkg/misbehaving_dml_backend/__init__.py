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
"""

from __future__ import annotations

import ctypes
import fnmatch
import os
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from dmlconform.backends.base import BackendInfo, Support
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
        if self._hits(self.crash, case) and self.armed:
            ctypes.string_at(0)
        if self._hits(self.exit, case):
            os._exit(3)
        if self._hits(self.abort, case):
            os.abort()
        if self._hits(self.hang, case):
            if self.marker:
                Path(self.marker).write_text(str(os.getpid()))
            while True:
                time.sleep(60)
        if self._hits(self.after, case):
            self.armed = True
        self.cpu.run(spec, case, buffers)

    @staticmethod
    def _hits(pattern: str, case: Case) -> bool:
        return bool(pattern) and fnmatch.fnmatchcase(case.id, pattern)
