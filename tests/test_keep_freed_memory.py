"""`memory.keep_freed_memory`: a process that allocates and frees the same
megabytes case after case faults its pages in once, not each time (the
``--large`` convolution's 4,500 page faults per call, docs/window.md)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from tests.conftest import REPO

#: 24 blocks of 1 MiB made and freed, five times after two rounds of warming up: the minor page faults per round.
_ROUNDS = """
import resource, sys
import numpy as np
from dmlconform.memory import keep_freed_memory
if sys.argv[1] == "kept":
    assert keep_freed_memory()
    assert keep_freed_memory()  # once per process: the second call changes nothing
def round_():
    blocks = [np.ones(1 << 17) for _ in range(24)]
    del blocks
round_(); round_()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    round_()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5)
"""


def _faults(mode: str) -> float:
    done = subprocess.run([sys.executable, "-c", _ROUNDS, mode], capture_output=True, text=True, check=True,
                          cwd=REPO, env={"PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"})
    return float(done.stdout)


def _glibc() -> bool:
    try:
        ctypes.CDLL(None).gnu_get_libc_version  # noqa: B018
    except (OSError, AttributeError):
        return False
    return sys.platform.startswith("linux")


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc alone takes these settings")
def test_freed_blocks_stay_in_the_process_for_the_next_round() -> None:
    plain = _faults("plain")
    if plain < 1000:  # 24 MiB is 6,144 pages: this glibc kept them already, the test would show nothing
        pytest.skip(f"glibc kept the heap without the settings ({plain:.0f} page faults per round)")
    assert _faults("kept") < 100, "the freed megabytes went back to the system"


def test_elsewhere_nothing_is_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    from dmlconform import memory

    monkeypatch.setattr(memory.sys, "platform", "win32")
    assert memory.keep_freed_memory.__wrapped__() is False
