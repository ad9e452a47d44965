"""The Linux CPU stack's choice of Mesa (issue #37, item 3): the machine's
lavapipe or Debian sid's, per run, with sid's subnormal flushing declared.

These need no stack: they check the pieces each choice asks for, the apt
state that fetches sid's, and the backend's option.  The real runs over sid's
lavapipe are in test_linux_real.py (marked ``real_directml``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.backends.directml import linux_stack
from dmlconform.backends.directml.backend import DirectMLBackend
from dmlconform.backends.directml.library import Unavailable
from dmlconform.backends.directml.linux_stack import HOST_LOADER, MANIFEST, Stack, check
from dmlconform.cli import main
from dmlconform.errors import InputError

x86_64_linux = pytest.mark.skipif(not HOST_LOADER.exists(), reason="x86-64 Linux only")


def _host_stack(root: Path) -> Stack:
    """A stack whose every piece of the host Mesa exists (empty files)."""
    stack = Stack(root)
    (root / MANIFEST).write_text("{}")
    for _, path in stack.pieces()[1:]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    return stack


def test_each_mesa_has_its_own_sysroot_loader_and_icd(tmp_path: Path) -> None:
    host, sid = Stack(tmp_path), Stack(tmp_path, "sid")
    assert (host.sysroot, host.loader, host.icd) == \
        (tmp_path / "sysroot", HOST_LOADER, tmp_path / "vulkan" / "lvp_icd.json")
    assert (sid.sysroot, sid.loader, sid.icd) == \
        (tmp_path / "sysroot-sid", tmp_path / "sysroot-sid/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
         tmp_path / "vulkan" / "lvp_icd-sid.json")
    assert sid.command(["x"])[:3] == [str(sid.loader), "--library-path", sid.library_path()]
    assert sid.library_path().split(":").index(str(sid.libdir)) < sid.library_path().split(":").index("/lib/x86_64-linux-gnu")
    assert (host.flushes_subnormals, sid.flushes_subnormals) == (False, True)
    with pytest.raises(ValueError, match="mesa 'trixie': one of host, sid"):
        Stack(tmp_path, "trixie")


@x86_64_linux
def test_a_stack_without_sid_s_mesa_names_what_it_lacks_and_the_command(tmp_path: Path) -> None:
    check(_host_stack(tmp_path))
    with pytest.raises(Unavailable) as exc:
        check(Stack(tmp_path, "sid"))
    loader = tmp_path / "sysroot-sid/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
    assert str(exc.value) == (f"the Linux CPU stack at {tmp_path} lacks sid's dynamic loader (libc6 from sid): "
                              f"{loader} is missing; run `dmlconform directml setup-linux --dir {tmp_path} "
                              "--mesa sid` again")


@x86_64_linux
def test_run_with_sid_s_mesa_missing_is_unavailable_naming_it(tmp_path: Path) -> None:
    _host_stack(tmp_path)
    args = ["run", "--backend", "directml", "--backend-arg", f"stack={tmp_path}", "--backend-arg", "mesa=sid",
            "--op", "ELEMENT_WISE_IDENTITY", "-o", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output
    assert "lacks sid's dynamic loader (libc6 from sid)" in result.output
    assert f"--dir {tmp_path} --mesa sid" in result.output


def test_the_mesa_option_takes_host_or_sid_only() -> None:
    with pytest.raises(InputError, match=r"^directml backend: mesa=bookworm: not a Mesa the Linux CPU stack knows; "
                                         r"give host or sid$"):
        DirectMLBackend(mesa="bookworm")
    with pytest.raises(InputError, match="mesa picks the Linux CPU stack's lavapipe; it does not go with dml_path"):
        DirectMLBackend(dml_path="x.so", mesa="sid")
    with pytest.raises(InputError, match=r"it knows dml_path, feature_level, stack, mesa; did you mean mesa\?"):
        DirectMLBackend(mesas="sid")
    assert DirectMLBackend(stack="/nonexistent", mesa="sid").stack == Stack(Path("/nonexistent"), "sid")


def test_setup_linux_refuses_an_unknown_mesa(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["directml", "setup-linux", "--dir", str(tmp_path), "--mesa", "trixie"])
    assert result.exit_code == 2
    assert "'trixie' is not one of 'host', 'sid'" in result.output


@pytest.mark.skipif(shutil.which("apt-get") is None or not Path("/etc/os-release").is_file(), reason="needs Debian's apt")
def test_sid_s_apt_state_resolves_against_an_empty_status_with_sid_alone(tmp_path: Path) -> None:
    """Against the machine's own dpkg status apt refuses sid's libc6 (it
    breaks the machine's libc-bin), which left an earlier attempt empty."""
    try:
        options = linux_stack._apt_state(tmp_path / "apt-sid", "sid")
    except Unavailable as exc:
        pytest.skip(str(exc))
    assert options[:2] == ["-o", f"Dir::State::status={tmp_path / 'apt-sid' / 'status'}"]
    assert (tmp_path / "apt-sid" / "status").read_bytes() == b""
    sources = (tmp_path / "apt-sid" / "sources.list.d" / "dmlconform.sources").read_text()
    assert sources.count("Suites:") == 1 and "Suites: sid\n" in sources
    host = linux_stack._apt_state(tmp_path / "apt", "host")
    assert not any(o.startswith("Dir::State::status") for o in host)
    assert "Suites: sid\n" in (tmp_path / "apt" / "sources.list.d" / "dmlconform.sources").read_text()


def test_the_worker_keeps_vkd3d_s_virtual_descriptor_heaps_unless_told(tmp_path: Path) -> None:
    """sid's lavapipe has VK_EXT_descriptor_indexing, where vkd3d would back each heap with a
    descriptor set of the heap's size (4 times slower runs); bookworm's lacks it."""
    env = Stack(tmp_path, "sid").environment({"PATH": "/bin"})
    assert (env["VKD3D_CONFIG"], env["VK_DRIVER_FILES"], env["PATH"]) == \
        ("virtual_heaps", str(tmp_path / "vulkan" / "lvp_icd-sid.json"), "/bin")
    assert Stack(tmp_path).environment({"VKD3D_CONFIG": "vk_debug"})["VKD3D_CONFIG"] == "vk_debug"
