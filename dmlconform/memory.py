"""How much memory a large case needs, and how much this process has left:
a case that cannot fit is NOT_SUPPORTED with both figures before it runs,
where it would end in a MemoryError half way, or in the kernel's OOM killer
(issue #33: ``run --large`` under ``ulimit -v 3000000`` lost the whole run).

The need is an estimate from the case's tensors (`limits.CASE_MEMORY_FACTOR`
says how it was measured); what is left is read from the system each time
(another worker, another program may have taken some since).

And how this process keeps the memory it frees (`keep_freed_memory`): a
process that runs case after case should not hand its heap back to the
system after each one, only to fault every page of it in again.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from pathlib import Path

from dmlconform.limits import CASE_MEMORY_FACTOR, CASE_MEMORY_OVERHEAD, MiB

_MEMINFO = Path("/proc/meminfo")
_STATUS = Path("/proc/self/status")


def needed(tensor_bytes: int) -> int:
    """Bytes a case whose tensors hold ``tensor_bytes`` needs to run and be
    judged, its tensors included."""
    return int(CASE_MEMORY_FACTOR * tensor_bytes) + CASE_MEMORY_OVERHEAD


def available() -> int | None:
    """Bytes this process can still take: the least of what its address-space
    limit (RLIMIT_AS) leaves above what it has mapped (VmSize) and the physical
    memory the system has available (MemAvailable); None where neither is
    known (no /proc: Windows, macOS)."""
    found = [n for n in (_address_space_left(), _kib_field(_MEMINFO, "MemAvailable")) if n is not None]
    return max(0, min(found)) if found else None


def size_text(n: int) -> str:
    """``6.1 GB``, ``420 MB``: bytes as a person reads them (decimal units,
    as ``free`` and the issue's figures)."""
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _address_space_left() -> int | None:
    """RLIMIT_AS less the address space mapped now, where both are known
    (the free heap `keep_freed_memory` keeps counts as mapped: at most
    `HEAP_KEPT` less than is truly left)."""
    if sys.platform == "win32":
        return None
    import resource  # noqa: PLC0415 - POSIX only

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return None
    mapped = _kib_field(_STATUS, "VmSize")
    return None if mapped is None else limit - mapped


def _kib_field(path: Path, name: str) -> int | None:
    """Field ``name`` (``MemAvailable:  123 kB``) of a /proc file, in bytes."""
    try:
        text = path.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == name:
            number = value.split()
            return int(number[0]) * 1024 if number and number[0].isdigit() else None
    return None



#: glibc's malloc under `keep_freed_memory`: a block below this comes from the heap (above it, from
#: its own mapping, given back when freed) ...
HEAP_BLOCK = 32 * MiB
#: ... and up to this much free memory stays at the top of the heap instead of going back to the system.
HEAP_KEPT = 64 * MiB
#: mallopt's parameter numbers (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


@functools.cache
def keep_freed_memory() -> bool:
    """Have glibc's malloc keep this process's freed memory for its next
    case (once per process); True where it took both settings, False
    elsewhere (another C library, Windows, macOS: nothing is changed).

    By default glibc gives a block back to the system when it is freed
    (above the mmap threshold: 128 KiB at first, raised to the largest block
    freed so far, at most 32 MiB) and shrinks the heap whenever more than
    twice that lies free at its top.  A case allocates and frees the same
    tens of megabytes each time, so each time the system maps them again: a
    page fault, the page zeroed, per 4 KiB.  The ``--large`` convolution's
    ``run_cases`` took 4,500 of them per call, 60 ms where it takes 23 ms
    without them (one BLAS thread, load 1.7, docs/window.md); a process that
    once freed a large block (a bare numpy im2col of 7 MB) kept its heap by
    chance.  Setting both thresholds (`HEAP_BLOCK`, `HEAP_KEPT`) turns the
    adjustment off: the process keeps at most `HEAP_KEPT` it does not use."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: its C library's
        libc.gnu_get_libc_version  # noqa: B018 - glibc's alone (musl's mallopt takes no such settings)
    except (OSError, AttributeError):
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, HEAP_BLOCK)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, HEAP_KEPT))
