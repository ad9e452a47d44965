"""How much memory a large case needs, and how much this process has left:
a case that cannot fit is NOT_SUPPORTED with both figures before it runs,
where it would end in a MemoryError half way, or in the kernel's OOM killer
(issue #33: ``run --large`` under ``ulimit -v 3000000`` lost the whole run).

The need is an estimate from the case's tensors (`limits.CASE_MEMORY_FACTOR`
says how it was measured); what is left is read from the system each time
(another worker, another program may have taken some since).
"""

from __future__ import annotations

import sys
from pathlib import Path

from dmlconform.limits import CASE_MEMORY_FACTOR, CASE_MEMORY_OVERHEAD

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
    """RLIMIT_AS less the address space mapped now, where both are known."""
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

