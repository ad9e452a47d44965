"""Files a user names, read the one safe way: regular files only, within a
size limit, JSON within a depth limit, every refusal one located error line.

Every command that reads a user's file (spec, doc page, case manifest and
``.npy`` buffer, report, baseline, tolerance file, notes) goes through here,
so that all of them refuse the same things in the same words:

* a FIFO, a device, a socket or a folder where a file is expected: such a
  file is never read (an ``open`` of a FIFO blocks until a writer comes, a
  device may never end), so it is opened non-blocking and checked with
  ``fstat`` before a byte is read;
* a dangling symbolic link, named as such (not as "no such file");
* a symbolic link found in a folder that points outside that folder: a
  folder given to a command is the whole input, so a link out of it is not
  followed (links that stay inside are);
* a file over the size limit of its kind (`dmlconform.limits`), checked
  before it is read, and text that is not UTF-8 or JSON that is not valid or
  nests too deep, each at its line and column.

DESIGN.md "Errors": the result is a `LocatedError` (exit 2) naming the file,
the value and the fix.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dmlconform.atomic import file_kind, write_atomic
from dmlconform.errors import LocatedError
from dmlconform.limits import MAX_NESTING, FileLimit


@dataclass(frozen=True, slots=True)
class Refused:
    """A path found or named that is not read, and why (one sentence with the fix)."""

    path: Path
    reason: str

    def error(self) -> LocatedError:
        return LocatedError(self.reason, path=self.path)


@dataclass(frozen=True, slots=True)
class Found:
    """The regular files a selection names, sorted, and what it named that is not one."""

    files: tuple[Path, ...]
    refused: tuple[Refused, ...]


# -- what a path is --------------------------------------------------------------------------


def _dangling(path: Path) -> str:
    return (f"dangling symbolic link: its target {os.readlink(path)!r} does not exist; "
            "fix the link or remove it")


def _unreadable(exc: OSError) -> str:
    return f"cannot read: {exc.strerror or exc}"


def _not_regular(path: Path, mode: int) -> str:
    return f"{file_kind(mode)}, not a regular file: only regular files are read; name the file itself"


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def path_problem(path: Path, *, within: Path | None = None) -> str | None:
    """Why ``path`` cannot be read as a file (dangling link, not a regular
    file, a link out of ``within``), or None.  Follows links; opens nothing."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return _dangling(path) if path.is_symlink() and not path.exists() else _unreadable(exc)
    if within is not None and path.is_symlink():
        target = path.resolve()
        if not _inside(target, within.resolve()):
            return (f"symbolic link to {str(target)!r}, outside {str(within)!r}: not followed; "
                    "copy the file into the folder or name it on the command line")
    return None if stat.S_ISREG(mode) else _not_regular(path, mode)


def _walk(folder: Path, suffix: str) -> tuple[list[Path], list[Refused]]:
    """Every path under ``folder`` whose name ends with ``suffix``, and the
    folders that cannot be listed or are links out of it.  Links to folders
    are not descended into (those inside are walked anyway; a cycle cannot
    loop)."""
    found: list[Path] = []
    refused: list[Refused] = []
    base = folder.resolve()

    def unlisted(exc: OSError) -> None:
        refused.append(Refused(Path(exc.filename), f"cannot list the folder: {exc.strerror or exc}"))

    for root, dirs, names in os.walk(folder, onerror=unlisted):
        for name in dirs:
            sub = Path(root, name)
            if sub.is_symlink() and not _inside(sub.resolve(), base):
                refused.append(Refused(sub, f"symbolic link to the folder {str(sub.resolve())!r}, outside "
                                            f"{str(folder)!r}: not searched; copy the files in or name them"))
            elif name.endswith(suffix):
                found.append(sub)  # a folder named like a file: refused below, by name
        found.extend(Path(root, name) for name in names if name.endswith(suffix))
    return found, refused


def find_files(paths: Iterable[Path], suffix: str) -> Found:
    """The files named by ``paths``: a file as given, a folder searched
    recursively for names ending in ``suffix``.  Whatever cannot be read as a
    regular file (see the module docstring) is refused with its reason."""
    files: set[Path] = set()
    refused: list[Refused] = []
    for given in paths:
        if given.is_dir():
            candidates, unlisted = _walk(given, suffix)
            refused.extend(unlisted)
            within: Path | None = given
        else:
            candidates, within = [given], None
        for path in candidates:
            problem = path_problem(path, within=within)
            if problem is None:
                files.add(path)
            else:
                refused.append(Refused(path, problem))
    return Found(tuple(sorted(files)), tuple(sorted(set(refused), key=lambda r: str(r.path))))


# -- reading -------------------------------------------------------------------------------


def too_big(path: str | Path, size: int, limit: FileLimit) -> LocatedError:
    """The error for a file of ``size`` bytes over ``limit``."""
    return LocatedError(f"{size:,} bytes is more than {limit.kind} may hold ({_human(limit.max_bytes)}); "
                        f"{limit.typical}: check that this is the right file", path=path)


def _human(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


def read_bytes(path: Path, limit: FileLimit, *, within: Path | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit.max_bytes``;
    with ``within``, a symbolic link out of that folder is refused.  The file
    is opened without blocking and checked before anything is read."""
    if within is not None:
        problem = path_problem(path, within=within)
        if problem is not None:
            raise LocatedError(problem, path=path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        dangling = path.is_symlink() and not path.exists()
        raise LocatedError(_dangling(path) if dangling else _unreadable(exc), path=path) from None
    try:
        return _read_regular(fd, path, limit)
    finally:
        os.close(fd)


def _read_regular(fd: int, path: Path, limit: FileLimit) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise LocatedError(_not_regular(path, info.st_mode), path=path)
    if info.st_size > limit.max_bytes:
        raise too_big(path, info.st_size, limit)
    chunks, total = [], 0
    try:
        while total <= limit.max_bytes:
            chunk = os.read(fd, min(1 << 20, limit.max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise LocatedError(_unreadable(exc), path=path) from None
    if total > limit.max_bytes:  # it grew while we read
        raise too_big(path, total, limit)
    return b"".join(chunks)


def decode_utf8(raw: bytes, *, path: str | Path) -> str:
    """``raw`` as UTF-8 text; a bad byte is an error at its line and column."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        column = len(raw[line_start:exc.start].decode("utf-8", errors="replace")) + 1
        raise LocatedError(f"not UTF-8 text: byte 0x{raw[exc.start]:02X} at offset {exc.start} ({exc.reason}); "
                           "save the file as UTF-8", path=path,
                           line=raw.count(b"\n", 0, exc.start) + 1, column=column) from None


def read_text(path: Path, limit: FileLimit, *, within: Path | None = None) -> str:
    """`read_bytes`, decoded as UTF-8 (line ends as they are)."""
    return decode_utf8(read_bytes(path, limit, within=within), path=path)


# -- JSON ------------------------------------------------------------------------------------

#: A JSON string or a bracket: what a scan for the nesting depth looks at.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not strict JSON (non-finite floats are written as strings)")


def loads_json(text: str, *, path: str | Path, strict: bool = False) -> Any:
    """JSON ``text`` as data.  Raises `LocatedError` at the line and column of
    a syntax error or of the bracket that nests deeper than MAX_NESTING;
    ``strict`` also refuses NaN and Infinity, which strict JSON lacks."""
    try:
        data = json.loads(text, parse_constant=_reject_constant if strict else None)
    except json.JSONDecodeError as exc:
        raise LocatedError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise _too_deep(text, path) from None
    except ValueError as exc:  # NaN refused, or a number of more than 4300 digits
        raise LocatedError(f"not valid JSON: {str(exc).split(';')[0]}", path=path) from None
    if _nests_deeper(data, MAX_NESTING):
        raise _too_deep(text, path)
    return data


def _nests_deeper(data: Any, limit: int) -> bool:
    """Whether lists and objects in ``data`` nest more than ``limit`` deep
    (without recursion: the data may be as deep as the decoder allowed)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _too_deep(text: str, path: str | Path) -> LocatedError:
    """The error for JSON nested too deep, at the first bracket past the limit."""
    depth, offset = 0, 0
    for token in _JSON_TOKEN.finditer(text):
        depth += token.group() in "[{"
        depth -= token.group() in "]}"
        if depth > MAX_NESTING:
            offset = token.start()
            break
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return LocatedError(f"JSON nesting deeper than {MAX_NESTING} levels; this is not a file dmlconform wrote",
                        path=path, line=line, column=column)


def read_json(path: Path, limit: FileLimit, *, within: Path | None = None, strict: bool = False) -> Any:
    """The JSON data in the regular file ``path`` (see `read_bytes`, `loads_json`)."""
    return loads_json(read_text(path, limit, within=within), path=path, strict=strict)


# -- writing ---------------------------------------------------------------------------------


def check_output(path: Path) -> None:
    """Raise a located error if the output file ``path`` cannot be written,
    where that is known before trying: it is a folder, a device or a FIFO
    (replacing it would destroy it), or a part of the path above it is a
    file.  Commands call it before their work, not only when they write."""
    try:
        mode: int | None = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise LocatedError(f"{file_kind(mode)}, not a regular file: cannot write the output here; "
                           "name a new or a regular file", path=path)
    parent = next((p for p in path.absolute().parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise LocatedError(f"{str(parent)!r} is a file, not a folder: cannot write the output", path=path)


def write_output(path: Path, data: str | bytes) -> None:
    """Write a file the user named (``-o FILE``) atomically, or raise one
    located error (`check_output`, or the system's reason: no permission, a
    read-only file system, a full disk)."""
    check_output(path)
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise LocatedError(f"cannot write the output: {exc.strerror or exc}; "
                           "name a file in a folder you can write to", path=path) from None
