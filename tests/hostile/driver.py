"""Runs the whole hostile corpus (`tests.hostile.corpus`) in one process,
under a memory limit and with a time limit per entry, and writes what each
entry did as JSON lines:

    python -m tests.hostile.driver OUT.jsonl WORK_FOLDER

A regression that allocates without bound then fails (MemoryError, exit 4
through the command line's internal-error boundary) instead of taking the
machine down, and one that hangs is interrupted by its alarm.  The limits are
far above what an honest entry takes: about 200 MB and a second.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from dataclasses import asdict
from pathlib import Path

from tests.hostile.corpus import Outcome, entries, run_entry

#: Address space of the whole process (Python, numpy, mpmath and the corpus).
MEMORY_LIMIT = 3 << 30
#: Seconds an entry may run before its alarm interrupts it.
SECONDS = 30


class _TooLong(BaseException):
    """Raised into an entry that outlived `SECONDS` (not an Exception: the
    command line must not catch it as one of its own errors)."""


def _alarm(signum: int, frame: object) -> None:
    raise _TooLong(f"no answer within {SECONDS} s")


def main(out: Path, work: Path) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.signal(signal.SIGALRM, _alarm)
    scratch = work / "cwd"
    scratch.mkdir(parents=True)
    os.chdir(scratch)
    with out.open("w", encoding="utf-8") as sink:
        for n, entry in enumerate(entries()):
            signal.alarm(SECONDS)
            try:
                outcome = run_entry(entry, work / f"{n:03d}")
            except _TooLong as exc:
                outcome = Outcome(entry.name, -1, "", f"TIMEOUT: {exc}", float(SECONDS), ())
            finally:
                signal.alarm(0)
            sink.write(json.dumps(asdict(outcome)) + "\n")
            sink.flush()
    strays = sorted(str(p.relative_to(work)) for p in work.rglob("PWNED"))
    with out.open("a", encoding="utf-8") as sink:
        sink.write(json.dumps({"name": "<strays>", "paths": strays}) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
