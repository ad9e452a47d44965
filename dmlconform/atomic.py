"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dmlconform.errors import LocatedError

#: How many temp names to try before giving up (each is 64 random bits).
_TRIES = 100
#: What a non-regular file is, by its ``stat`` type test.
_KINDS = (
    (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str:
    """``a folder``, ``a FIFO (named pipe)``... for a ``st_mode`` that is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _open_temp(path: Path, mode: int) -> tuple[int, Path]:
    """A new, exclusively created temp file next to ``path``.

    ``os.open`` with ``mode`` lets the umask apply as for any new file
    (``tempfile.mkstemp`` would make it 0600, and the written file with it)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(_TRIES):
        tmp = path.parent / f".{path.name}.{os.urandom(8).hex()}.tmp"
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp file name next to {path}")


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and
    ``os.replace``, so an interrupted write leaves the old file intact and no
    temp file behind.  A replaced file keeps its permission bits; a new one gets
    the usual ``0o666 & ~umask``.  Text is written as UTF-8, line ends as given.
    A FIFO, a device or a folder at ``path`` is never replaced (`LocatedError`):
    a renamed file would destroy it (issue 20: ``-o /dev/full`` as root)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        old_mode: int | None = None
    else:
        if not stat.S_ISREG(mode):
            raise LocatedError(f"{file_kind(mode)}, not a regular file: it is not replaced; name a new or a "
                               "regular file", path=path)
        old_mode = stat.S_IMODE(mode)
    fd, tmp = _open_temp(path, 0o666 if old_mode is None else old_mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        if old_mode is not None:
            os.chmod(tmp, old_mode)  # bits the umask took away at creation
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
