"""The folder a run's reports go to: reserved before the first case runs,
filled as one set at the end.

Issue 20 found runs lost and report sets mixed: an unwritable ``-o`` was
found only after the whole suite ran; two runs started in the same second
shared ``reports/<run-id>/``; ``kill -9`` while writing left temp files and a
folder whose three files came from different runs.  So:

* `reserve` runs before any case: it makes a private staging folder beside
  the target (which proves the place writable) and, for the default
  ``reports/<run-id>``, creates that folder exclusively (``<run-id>-2``, ...
  when another run took the name in the same second).  A named ``-o`` folder
  must be new, empty, or hold an earlier report set and nothing else: its old
  set is replaced whole, so a user's other files are never touched.
* `ReportFolder.commit` writes the three files into the staging folder and
  swaps it in with renames: a reader sees the old set, the new set, or (for
  the instant between two renames) no folder, never a mix.
* Staging and swapped-out folders of runs that died (their process is gone)
  are removed by the next run that reserves a folder beside them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from dmlconform.errors import InputError
from dmlconform.report import html, json_report, junit
from dmlconform.results import RunResult

#: The files of one report set, by kind.
FILE_NAMES = {"json": "report.json", "junit": "junit.xml", "html": "report.html"}
#: Where runs put their reports unless ``-o`` names a folder.
DEFAULT_ROOT = Path("reports")
#: Names tried for the default folder of one run id (``<run-id>``, ``-2``, ...).
_NAME_TRIES = 1000
#: Tries of the final swap when another run swaps the same folder at once.
_SWAP_TRIES = 20
#: On a platform where a process's liveness cannot be asked safely, a temp
#: folder this old (seconds) is taken for stale.
_STALE_SECONDS = 24 * 3600


@dataclass(frozen=True, slots=True)
class ReportFolder:
    """A reserved report folder: ``final`` (where the set goes) and the
    private ``staging`` folder the set is written in first.  ``run_id`` is
    the run's id, with the ``-N`` suffix the default folder may have needed."""

    final: Path
    staging: Path
    run_id: str
    created: bool = False   # ``final`` was made by `reserve` (empty until commit)

    def commit(self, writers: dict[str, Callable[[], str]]) -> dict[str, Path]:
        """Write each kind's text (``writers[kind]()``) into the staging
        folder, then swap it in as ``final``; the paths by kind."""
        for kind in sorted(writers):
            (self.staging / FILE_NAMES[kind]).write_text(writers[kind](), encoding="utf-8")
        _swap(self.staging, self.final)
        return {kind: self.final / FILE_NAMES[kind] for kind in sorted(writers)}

    def abandon(self) -> None:
        """Remove what `reserve` made, when the run ends without reports."""
        shutil.rmtree(self.staging, ignore_errors=True)
        if self.created:
            with contextlib.suppress(OSError):
                self.final.rmdir()   # only while still empty


def reserve(output: Path | None, run_id: str) -> ReportFolder:
    """The report folder of a run: ``output``, or ``reports/<run-id>`` when
    None.  Raises `InputError` (exit 2) when the place cannot be written or
    ``output`` holds files that are not a report set."""
    parent = (output.parent if output is not None else DEFAULT_ROOT)
    blocker = next((p for p in (parent, *parent.absolute().parents) if p.exists() or p.is_symlink()), None)
    if blocker is not None and not blocker.is_dir():
        where = output if output is not None else DEFAULT_ROOT
        raise InputError(f"cannot write the reports to {where}: {blocker} is a file, not a folder; "
                         "name a folder with -o DIR")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(parent)
        if output is None:
            final, run_id = _new_folder(parent, run_id)
            created = True
        else:
            final, created = output, False
            _check_reusable(output)
        staging = _temp_name(parent, final.name, "tmp")
        staging.mkdir()
    except InputError:
        raise
    except OSError as exc:
        where = output if output is not None else DEFAULT_ROOT
        raise InputError(f"cannot write the reports to {where}: {exc.strerror or exc}; "
                         "name a writable folder with -o DIR") from None
    return ReportFolder(final=final, staging=staging, run_id=run_id, created=created)


def _new_folder(root: Path, run_id: str) -> tuple[Path, str]:
    """``root/<run_id>`` created exclusively, or the first free ``-N`` name."""
    for n in range(1, _NAME_TRIES + 1):
        name = run_id if n == 1 else f"{run_id}-{n}"
        try:
            (root / name).mkdir()
        except FileExistsError:
            continue
        return root / name, name
    raise InputError(f"{root}: {_NAME_TRIES} report folders named {run_id}[-N] exist already; "
                     "clean the folder or name another with -o DIR")


def _check_reusable(folder: Path) -> None:
    """``folder`` may receive a report set: absent, empty, or a report set."""
    if not folder.exists() and not folder.is_symlink():
        return
    if not folder.is_dir():
        raise InputError(f"-o {folder}: exists and is not a folder; name a folder for the reports")
    others = sorted(p.name for p in folder.iterdir() if p.name not in FILE_NAMES.values()
                    and not _is_writer_temp(p.name))
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        raise InputError(f"-o {folder}: holds files that are not a dmlconform report ({shown}); the folder's "
                         "report set is replaced whole, so name a new or empty folder, or one an earlier run wrote")


def _is_writer_temp(name: str) -> bool:
    """A temp file an atomic write of a report left behind (``.report.json.<hex>.tmp``)."""
    return name.startswith(".") and name.endswith(".tmp") and name[1:].split(".")[0] in {
        n.split(".")[0] for n in FILE_NAMES.values()}


def _temp_name(parent: Path, name: str, kind: str) -> Path:
    """``parent/.<name>.<pid>.<random>.<kind>``: private to this process,
    whose pid tells a later run whether it is still alive."""
    return parent / f".{name}.{os.getpid()}.{os.urandom(4).hex()}.{kind}"


def _swap(staging: Path, final: Path) -> None:
    """``staging`` becomes ``final``; an old ``final`` is moved aside first
    and removed after.  Retried when a concurrent run swaps the same folder."""
    for _ in range(_SWAP_TRIES):
        old = _temp_name(final.parent, final.name, "old")
        with contextlib.suppress(FileNotFoundError):
            os.replace(final, old)
        try:
            os.replace(staging, final)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.EACCES):
                raise
            continue   # another run put its set there between our two renames
        finally:
            shutil.rmtree(old, ignore_errors=True)
        return
    raise OSError(errno.EBUSY, f"{final} is being replaced by other runs; try again")


def _remove_stale(parent: Path) -> None:
    """Staging (``.tmp``) and swapped-out (``.old``) folders beside
    ``parent``'s report folders whose process is gone."""
    for path in parent.iterdir():
        parts = path.name.split(".")
        if (path.name.startswith(".") and len(parts) >= 5 and parts[-1] in ("tmp", "old")
                and parts[-3].isdigit() and len(parts[-2]) == 8 and set(parts[-2]) <= set("0123456789abcdef")
                and path.is_dir() and not path.is_symlink()
                and _stale(int(parts[-3]), path)):
            shutil.rmtree(path, ignore_errors=True)


def _stale(pid: int, path: Path) -> bool:
    """Whether the run that made ``path`` (process ``pid``) is gone."""
    if pid == os.getpid():
        return False
    if os.name != "posix":   # os.kill(pid, 0) would end the process on Windows
        return time.time() - path.stat().st_mtime > _STALE_SECONDS
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def commit_reports(run: RunResult, folder: ReportFolder) -> dict[str, Path]:
    """report.json, junit.xml and report.html of ``run`` into the reserved
    ``folder``, as one set (`report.folder`); the path of each by kind."""
    writers = {"html": html.dumps, "json": json_report.dumps, "junit": junit.dumps}
    return folder.commit({kind: partial(w, run) for kind, w in writers.items()})


def write_reports(run: RunResult, folder: Path) -> dict[str, Path]:
    """The three reports of ``run`` into ``folder`` (created if missing; if it
    exists it must be empty or hold a report set, which is replaced whole)."""
    reserved = reserve(Path(folder), run.run_id)
    try:
        return commit_reports(run, reserved)
    finally:
        reserved.abandon()
