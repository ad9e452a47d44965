"""dmlconform/userfiles.py: a user's file is read the one safe way, and every
refusal is one located line (issue #20)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dmlconform import userfiles
from dmlconform.errors import LocatedError
from dmlconform.limits import MAX_NESTING, FileLimit
from dmlconform.userfiles import (
    Refused,
    check_output,
    find_files,
    loads_json,
    read_bytes,
    read_json,
    read_text,
    write_output,
)
from tests.fifos import fifo, needs_fifos

SMALL = FileLimit("a test file", 10, "test files are tiny")


def _error(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(LocatedError) as info:
        call()
    return info.value.render()


@needs_fifos
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    with fifo(tmp_path / "pipe.yaml") as pipe:
        assert _error(lambda: read_bytes(pipe, SMALL)) == (
            f"{pipe}: error: a FIFO (named pipe), not a regular file: only regular files are read; "
            "name the file itself")


def test_a_folder_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    assert _error(lambda: read_bytes(tmp_path, SMALL)).startswith(f"{tmp_path}: error: a folder, not a regular file")
    assert _error(lambda: read_bytes(tmp_path / "x", SMALL)) == (
        f"{tmp_path / 'x'}: error: cannot read: No such file or directory")


def test_a_dangling_link_is_named_as_one(tmp_path: Path) -> None:
    link = tmp_path / "a.json"
    link.symlink_to(tmp_path / "gone.json")
    assert _error(lambda: read_bytes(link, SMALL)) == (
        f"{link}: error: dangling symbolic link: its target {str(tmp_path / 'gone.json')!r} does not exist; "
        "fix the link or remove it")


def test_size_is_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 11)
    assert _error(lambda: read_bytes(path, SMALL)) == (
        f"{path}: error: 11 bytes is more than a test file may hold (10 bytes); test files are tiny: "
        "check that this is the right file")
    path.write_bytes(b"x" * 10)
    assert read_bytes(path, SMALL) == b"x" * 10


def test_a_link_out_of_the_folder_given_is_refused(tmp_path: Path) -> None:
    folder, outside = tmp_path / "cases", tmp_path / "secret.npy"
    folder.mkdir()
    outside.write_bytes(b"1")
    (folder / "a.npy").symlink_to(outside)
    assert _error(lambda: read_bytes(folder / "a.npy", SMALL, within=folder)) == (
        f"{folder / 'a.npy'}: error: symbolic link to {str(outside)!r}, outside {str(folder)!r}: not followed; "
        "copy the file into the folder or name it on the command line")
    assert read_bytes(folder / "a.npy", SMALL) == b"1"  # named directly, it is followed


def test_text_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_bytes(b"a: 1\nb: \xff\n")
    assert _error(lambda: read_text(path, SMALL)) == (
        f"{path}:2:4: error: not UTF-8 text: byte 0xFF at offset 8 (invalid start byte); save the file as UTF-8")


@needs_fifos
def test_find_files_follows_links_inside_and_names_everything_else(tmp_path: Path) -> None:
    tree, elsewhere = tmp_path / "tree", tmp_path / "elsewhere"
    (tree / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    (tree / "a.md").write_text("a")
    (tree / "sub" / "b.md").write_text("b")
    (tree / "inside.md").symlink_to(tree / "sub" / "b.md")
    (elsewhere / "c.md").write_text("c")
    (tree / "outside.md").symlink_to(elsewhere / "c.md")
    (tree / "outfolder").symlink_to(elsewhere)
    (tree / "gone.md").symlink_to(tree / "nothing.md")
    (tree / "folder.md").mkdir()
    (tree / "notes.txt").write_text("not a page")
    with fifo(tree / "pipe.md"):
        found = find_files([tree], ".md")
    assert found.files == (tree / "a.md", tree / "inside.md", tree / "sub" / "b.md")
    assert [(r.path.name, r.reason.split(":")[0]) for r in found.refused] == [
        ("folder.md", "a folder, not a regular file"),
        ("gone.md", "dangling symbolic link"),
        ("outfolder", f"symbolic link to the folder {str(elsewhere)!r}, outside {str(tree)!r}"),
        ("outside.md", f"symbolic link to {str(elsewhere / 'c.md')!r}, outside {str(tree)!r}"),
        ("pipe.md", "a FIFO (named pipe), not a regular file"),
    ]


def test_find_files_takes_a_file_named_directly_whatever_its_name(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x")
    assert find_files([tmp_path / "x.txt"], ".yaml").files == (tmp_path / "x.txt",)
    assert find_files([tmp_path / "none.yaml"], ".yaml").refused == (
        Refused(tmp_path / "none.yaml", "cannot read: No such file or directory"),)


# --- JSON -------------------------------------------------------------------------------------


def test_json_syntax_errors_are_located() -> None:
    assert _error(lambda: loads_json('{\n "a": [1,\n', path="m.json")) == (
        "m.json:3:1: error: not valid JSON: Expecting value")


def test_json_nested_deeper_than_the_decoder_allows_is_located() -> None:
    text = '{"cases":\n  ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert _error(lambda: loads_json(text, path="m.json")) == (
        f"m.json:2:{3 + MAX_NESTING - 1}: error: JSON nesting deeper than {MAX_NESTING} levels; "
        "this is not a file dmlconform wrote")


def test_json_nesting_limit_is_exact() -> None:
    assert loads_json("[" * MAX_NESTING + "]" * MAX_NESTING, path="m.json") is not None
    assert _error(lambda: loads_json("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), path="m.json")) == (
        f"m.json:1:{MAX_NESTING + 1}: error: JSON nesting deeper than {MAX_NESTING} levels; "
        "this is not a file dmlconform wrote")


def test_json_strictness_and_huge_numbers() -> None:
    assert loads_json('{"x": NaN}', path="m.json") != {}
    assert _error(lambda: loads_json('{"x": NaN}', path="m.json", strict=True)) == (
        "m.json: error: not valid JSON: NaN is not strict JSON (non-finite floats are written as strings)")
    assert _error(lambda: loads_json("[" + "9" * 5000 + "]", path="m.json")).startswith(
        "m.json: error: not valid JSON: Exceeds the limit (4300 digits) for integer string conversion")


@given(st.text(alphabet='[]{}"\\,:0123456789.eE-+ntrufalsNI \n', max_size=200))
def test_any_text_is_data_or_one_located_error(text: str) -> None:
    try:
        loads_json(text, path="m.json")
    except LocatedError as exc:
        assert exc.render().startswith("m.json") and "\n" not in exc.render()


def test_read_json_checks_the_file_first(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"a": 1}')
    assert read_json(path, SMALL) == {"a": 1}
    path.write_text('{"a": 10000}')
    assert _error(lambda: read_json(path, SMALL)).startswith(f"{path}: error: 12 bytes is more than a test file")


# --- writing --------------------------------------------------------------------------------


@needs_fifos
def test_output_onto_a_fifo_is_refused_and_the_fifo_kept(tmp_path: Path) -> None:
    pipe = tmp_path / "out.txt"
    os.mkfifo(pipe)  # no writer needed: nothing should open it, and a replace would not block
    assert _error(lambda: write_output(pipe, "x")) == (
        f"{pipe}: error: a FIFO (named pipe), not a regular file: cannot write the output here; "
        "name a new or a regular file")
    assert pipe.is_fifo()


def test_output_below_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    target = tmp_path / "file" / "sub" / "out.txt"
    assert _error(lambda: check_output(target)) == (
        f"{target}: error: {str(tmp_path / 'file')!r} is a file, not a folder: cannot write the output")


def test_a_system_error_on_writing_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path, data: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(userfiles, "write_atomic", refuse)
    assert _error(lambda: write_output(tmp_path / "o.txt", "x")) == (
        f"{tmp_path / 'o.txt'}: error: cannot write the output: Permission denied; "
        "name a file in a folder you can write to")
