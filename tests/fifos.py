"""FIFOs for tests that cannot hang the test run.

A FIFO opened for reading blocks until a writer comes.  Code under test must
never open one (issue #20), but a regression that does must fail the test,
not hang it: a writer thread opens the FIFO and closes it at once, so a reader
that wrongly opens it reads end-of-file instead of waiting forever.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def _open_and_close(path: Path) -> None:
    os.close(os.open(path, os.O_WRONLY))  # waits for a reader, then lets it see end-of-file


@contextmanager
def fifo(path: Path) -> Iterator[Path]:
    """A FIFO at ``path`` with a writer waiting; the writer is released and
    joined when the block ends, whether anything opened the FIFO or not."""
    os.mkfifo(path)
    writer = threading.Thread(target=_open_and_close, args=(path,), daemon=True)
    writer.start()
    try:
        yield path
    finally:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # the reader a still waiting writer needs
        writer.join(timeout=10)
        os.close(fd)
