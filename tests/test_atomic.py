"""Tests for dmlconform.atomic: a reader sees the old file or the new one,
never half of one, and no temp file is left behind either way."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform import atomic
from dmlconform.atomic import write_atomic


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_a_new_file_and_its_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "spec.yaml"
    write_atomic(path, "operator: X\n")
    assert path.read_bytes() == b"operator: X\n"
    assert _names(path.parent) == ["spec.yaml"]


def test_replaces_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("old\n")
    write_atomic(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert _names(tmp_path) == ["spec.yaml"]


def test_text_is_utf8_with_line_ends_as_given(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    write_atomic(path, "é\r\n💥\n")
    assert path.read_bytes() == "é\r\n💥\n".encode()


def test_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    """Like any new file (``open(..., 'w')``), not mkstemp's 0600."""
    reference = tmp_path / "reference"
    reference.write_text("")
    path = tmp_path / "spec.yaml"
    write_atomic(path, "x")
    assert oct(_mode(path)) == oct(_mode(reference))


def test_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("old")
    path.chmod(0o640)
    write_atomic(path, "new")
    assert oct(_mode(path)) == oct(0o640)


class _Boom(Exception):
    pass


def _raise(*args: Any, **kwargs: Any) -> None:
    raise _Boom()


class _FailingFile:
    """Wraps the temp file so that ``write`` fails after writing half the data."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh

    def __enter__(self) -> _FailingFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.fh.close()

    def write(self, data: bytes) -> None:
        self.fh.write(data[: len(data) // 2])
        self.fh.flush()
        raise _Boom()


def _fail_write(monkeypatch: pytest.MonkeyPatch) -> None:
    real_fdopen = os.fdopen
    monkeypatch.setattr(atomic.os, "fdopen", lambda *a, **k: _FailingFile(real_fdopen(*a, **k)))


def _fail_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic.os, "fsync", _raise)


def _fail_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic.os, "replace", _raise)


def _interrupt_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", interrupt)


@pytest.mark.parametrize("fail", [_fail_write, _fail_fsync, _fail_replace])
def test_failure_keeps_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: Callable[[pytest.MonkeyPatch], None]
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_bytes(b"old contents\n")
    fail(monkeypatch)
    with pytest.raises(_Boom):
        write_atomic(path, b"new contents that never land\n")
    assert path.read_bytes() == b"old contents\n"
    assert _names(tmp_path) == ["spec.yaml"]


@pytest.mark.parametrize("fail", [_fail_write, _fail_replace])
def test_failure_on_a_new_file_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: Callable[[pytest.MonkeyPatch], None]
) -> None:
    fail(monkeypatch)
    with pytest.raises(_Boom):
        write_atomic(tmp_path / "spec.yaml", "x")
    assert _names(tmp_path) == []


def test_interrupt_keeps_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "spec.yaml"
    path.write_bytes(b"old")
    _interrupt_replace(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, b"new")
    assert path.read_bytes() == b"old"
    assert _names(tmp_path) == ["spec.yaml"]


def test_temp_name_collisions_are_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter([b"\x00" * 8, b"\x00" * 8, b"\x01" * 8])
    monkeypatch.setattr(atomic.os, "urandom", lambda n: next(draws))
    (tmp_path / ".spec.yaml.0000000000000000.tmp").write_text("someone else's")
    write_atomic(tmp_path / "spec.yaml", "x")
    assert _names(tmp_path) == [".spec.yaml.0000000000000000.tmp", "spec.yaml"]


def test_no_free_temp_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic.os, "urandom", lambda n: b"\x00" * n)
    (tmp_path / ".spec.yaml.0000000000000000.tmp").write_text("")
    with pytest.raises(FileExistsError) as info:
        write_atomic(tmp_path / "spec.yaml", "x")
    assert str(info.value) == f"no free temp file name next to {tmp_path / 'spec.yaml'}"


@settings(max_examples=50, deadline=None)
@given(st.one_of(st.binary(max_size=256), st.text(st.characters(exclude_categories=("Cs",)), max_size=64)))
def test_reads_back_exactly_what_was_written(data: bytes | str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f"
        path.write_bytes(b"previous")
        write_atomic(path, data)
        assert path.read_bytes() == (data.encode("utf-8") if isinstance(data, str) else data)
        assert _names(Path(folder)) == ["f"]
