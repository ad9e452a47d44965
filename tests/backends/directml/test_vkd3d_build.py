"""vkd3d built from source for the Linux CPU stack (issue #37), without building it:
the build's needs named by their Debian packages (exit 3), the cache key, the
patches kept in the repository, and the shader census's unpacking and reasons."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.backends.directml import census, vkd3d_build
from dmlconform.cli import main


def test_a_missing_build_tool_is_exit_3_naming_its_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    present = vkd3d_build.Need.present
    monkeypatch.setattr(vkd3d_build.Need, "present",
                        lambda self: self.package not in ("bison", "mingw-w64-tools") and present(self))
    tarball = tmp_path / "vkd3d-1.17.tar.xz"
    tarball.write_bytes(b"")
    result = CliRunner().invoke(main, ["directml", "setup-linux", "--dir", str(tmp_path / "stack"),
                                       "--vkd3d-source", str(tarball)])
    assert result.exit_code == 3, result.output
    assert result.output.strip().endswith(
        f"building vkd3d needs bison, {vkd3d_build.WIDL}: apt-get install bison mingw-w64-tools")


def test_without_a_source_or_a_build_the_set_up_asks_for_the_source(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["directml", "setup-linux", "--dir", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert "give the tarball with --vkd3d-source PATH (vkd3d-1.17.tar.xz" in result.output


def test_the_key_follows_the_source_and_every_patch(tmp_path: Path) -> None:
    a, b = tmp_path / "0001-a.patch", tmp_path / "0002-b.patch"
    a.write_text("one\n")
    b.write_text("two\n")
    base = vkd3d_build.key("s" * 64, [a, b])
    assert re.fullmatch("[0-9a-f]{16}", base)
    assert vkd3d_build.key("s" * 64, [a, b]) == base
    assert vkd3d_build.key("t" * 64, [a, b]) != base
    assert vkd3d_build.key("s" * 64, [a]) != base
    b.write_text("two, changed\n")
    assert vkd3d_build.key("s" * 64, [a, b]) != base


def test_the_project_patches_are_upstream_style_each_one_concern() -> None:
    found = vkd3d_build.patches()
    assert [p.name[:5] for p in found] == [f"{i:04d}-" for i in range(1, len(found) + 1)]
    assert len(found) >= 3
    for p in found:
        text = p.read_text()
        subject = re.search(r"^Subject: \[PATCH(?: \d+/\d+)?\] (.+(?:\n .+)*)", text, re.M)
        assert subject, p.name
        line = " ".join(subject.group(1).split())
        assert re.match(r"vkd3d(-shader/(dxil|spirv|ir))?: [A-Z].*\.$", line), line
        assert "\n---\n" in text and "diff --git a/libs/" in text


def _frame(payload: bytes, *, checksum: bool) -> bytes:
    """A zstd frame of one raw block (single segment, 1-byte content size)."""
    descriptor = 0x20 | (0x04 if checksum else 0)
    header = (len(payload) << 3) | 1  # raw, last
    return (census.ZSTD_MAGIC + bytes([descriptor, len(payload)]) + header.to_bytes(3, "little") + payload
            + (b"\0\0\0\0" if checksum else b""))


@pytest.mark.parametrize("checksum", [False, True])
def test_frame_length_walks_the_blocks(checksum: bool) -> None:
    frame = _frame(b"hello", checksum=checksum)
    data = b"xx" + frame + b"trailing garbage"
    assert census.frame_length(data, 2) == len(frame)
    assert census.frame_length(data[: 2 + len(frame) - 1], 2) is None


def _container(part: bytes, version: int) -> bytes:
    body = part + struct.pack("<II", 8, version)
    total = 32 + 4 + len(body)
    return b"DXBC" + b"\0" * 16 + struct.pack("<III", 1, total, 1) + struct.pack("<I", 36) + body


def test_containers_are_cut_out_with_their_shader_model() -> None:
    one, two = _container(b"DXIL", (5 << 16) | 0x62), _container(b"DXIL", (5 << 16) | 0x60)
    found = list(census.containers(b"junkDXBC" + one + b"pad" + two))
    assert found == [one, two]
    assert [census.shader_model(c) for c in found] == ["6.2", "6.0"]
    assert census.shader_model(_container(b"SHEX", 0x50)) == "?"


def test_reason_is_the_first_error_with_numbers_as_n() -> None:
    err = ("vkd3d-compiler: warning\n<anonymous>:1:2: E8018: Structured resource byte stride 2 is not a multiple "
           "of 4.\n<anonymous>: E8013: other\n")
    assert census.reason(err, 1) == "E8018: Structured resource byte stride N is not a multiple of N."
    assert census.reason("E8017: Shader properties tag 0xb is unhandled.", 1) == \
        "E8017: Shader properties tag N is unhandled."
    assert census.reason("Segmentation fault at 0x1234\n", -11) == "exit status -11: Segmentation fault at NxN"


def test_an_install_without_the_patches_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vkd3d built without the project's patches would translate almost nothing: never in silence."""
    monkeypatch.setattr(vkd3d_build, "PATCHES", tmp_path / "none")
    monkeypatch.setattr(vkd3d_build, "patches", lambda folder=None: [])
    result = CliRunner().invoke(main, ["directml", "setup-linux", "--dir", str(tmp_path / "stack")])
    assert result.exit_code == 3, result.output
    assert f"the project's vkd3d patches are missing: {tmp_path / 'none'} holds no *.patch" in result.output
