"""The cyclic garbage collector paused while the harness builds many small
objects of its own that hold no cycles (reports, comparison results): its
full passes over a run's live objects (the cases, their arrays' owners) cost
more than the work they interrupt, and free nothing there."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector off inside, back as it was after (cyclic garbage made
    inside is collected by its next pass)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
