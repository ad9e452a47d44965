"""vkd3d built from its release source with the project's patches, for the Linux CPU stack.

Issue #37.  No vkd3d release up to 2.1 translates the DXIL operations that
DirectML's shaders use (``dx.op.binaryWithTwoOuts``, the legacy bitcasts,
...), so ``dmlconform directml setup-linux`` builds vkd3d itself: the release
tarball (``--vkd3d-source``: upstream's ``vkd3d-1.17.tar.xz``, or Debian's
``vkd3d_1.17.orig.tar.xz``), the patches of ``vkd3d-patches/`` applied in
name order (each one concern, in vkd3d's own commit style, to be sent
upstream), then ``autoreconf -if``, ``configure`` (`CONFIGURE`), ``make``
and ``make install`` into ``<stack>/vkd3d/<key>``.  The key is the digest of
the source, the patches and the configure options, so a changed patch builds
afresh while an unchanged one reuses its build; ``<stack>/vkd3d/current``
points at the build in use.  The result links against this machine's own
glibc.  A tool or header the build needs and this machine lacks is named
with its Debian package (`missing`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dmlconform.atomic import write_atomic
from dmlconform.backends.directml.library import Unavailable

PATCHES = Path(__file__).parent / "vkd3d-patches"
#: What the stack needs of vkd3d: no tests, demos or display.
CONFIGURE = ("--disable-tests", "--disable-demos", "--without-ncurses", "--without-xcb", "--without-opengl")
WIDL = "x86_64-w64-mingw32-widl"
#: Bounds (seconds) on each step: a stalled build must not hang the set-up.
_STEP_TIMEOUT = 1800
Echo = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Need:
    """A tool (on PATH) or a file the build needs, and the Debian package that has it."""

    what: str
    package: str

    def present(self) -> bool:
        return Path(self.what).exists() if self.what.startswith("/") else shutil.which(self.what) is not None


#: In the order a missing one is named (autoreconf and its helpers, the parser generators, the
#: D3D12 header generator, the compiler, the SPIR-V and Vulkan headers).
NEEDS = (Need("autoreconf", "autoconf"), Need("aclocal", "automake"), Need("libtoolize", "libtool"),
         Need("bison", "bison"), Need("flex", "flex"), Need("pkg-config", "pkgconf"), Need(WIDL, "mingw-w64-tools"),
         Need("make", "make"), Need("cc", "gcc"), Need("patch", "patch"), Need("xz", "xz-utils"),
         Need("/usr/include/spirv/unified1/spirv.h", "spirv-headers"),
         Need("/usr/include/vulkan/vulkan.h", "libvulkan-dev"))


def missing() -> list[Need]:
    """What of `NEEDS` this machine lacks."""
    return [n for n in NEEDS if not n.present()]


def patches(folder: Path = PATCHES) -> list[Path]:
    """The patches to apply, in name order (``0001-...patch``)."""
    return sorted(folder.glob("*.patch"))


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def key(source_digest: str, patch_files: Sequence[Path]) -> str:
    """The build's key: the source's digest, each patch's name and bytes, the configure options."""
    h = hashlib.sha256(source_digest.encode())
    for p in patch_files:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(" ".join(CONFIGURE).encode())
    return h.hexdigest()[:16]


def _step(cmd: Sequence[str], what: str, *, cwd: Path, log: Path, env: dict[str, str] | None = None) -> None:
    """Run one build step, its output appended to ``log``; `Unavailable` with the log's tail when it fails."""
    with log.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        try:
            done = subprocess.run(list(cmd), cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=_STEP_TIMEOUT,
                                  env={**os.environ, "LC_ALL": "C", **(env or {})})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"building vkd3d: {what} failed: {exc}") from None
    if done.returncode != 0:
        tail = [x for x in log.read_text(errors="replace").splitlines() if x.strip()][-3:]
        raise Unavailable(f"building vkd3d: {what} failed (exit status {done.returncode}; log {log}): "
                          + " | ".join(tail))


def _unpack(source: Path, into: Path) -> Path:
    """The source tree of the tarball ``source`` unpacked under ``into``."""
    try:
        with tarfile.open(source) as tar:
            tar.extractall(into, filter="data")
    except (OSError, tarfile.TarError) as exc:
        raise Unavailable(f"--vkd3d-source {source}: cannot unpack it ({exc}); give vkd3d's release tarball") \
            from None
    tops = [p for p in into.iterdir() if p.is_dir()]
    if len(tops) != 1 or not (tops[0] / "configure.ac").is_file() or not (tops[0] / "libs" / "vkd3d-shader").is_dir():
        raise Unavailable(f"--vkd3d-source {source}: not vkd3d's source (no one folder with configure.ac and "
                          "libs/vkd3d-shader)")
    return tops[0]


def build(source: Path, builds: Path, *, patch_files: Sequence[Path], echo: Echo, jobs: int) -> dict[str, Any]:
    """Build vkd3d from ``source`` with ``patch_files`` into
    ``builds/<key>`` unless it is there, point ``builds/current`` at it and
    return its manifest entry.  `Unavailable` names what is missing or failed."""
    lacking = missing()
    if lacking:
        raise Unavailable("building vkd3d needs " + ", ".join(n.what for n in lacking) + ": apt-get install "
                          + " ".join(dict.fromkeys(n.package for n in lacking)))
    if not source.is_file():
        raise Unavailable(f"--vkd3d-source {source}: no such file; give vkd3d's release tarball (vkd3d-1.17.tar.xz)")
    source_digest = _digest(source)
    name = key(source_digest, patch_files)
    prefix = builds / name
    entry = {"key": name, "source": source.name, "source_sha256": source_digest,
             "patches": [p.name for p in patch_files]}
    if (prefix / "BUILT").is_file():
        _point(builds, name)
        return {**entry, **_read_built(prefix)}
    started = time.monotonic()
    shutil.rmtree(prefix, ignore_errors=True)
    builds.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vkd3d-build-", dir=builds) as tmp:
        log = prefix.parent / f"{name}.log"
        log.write_text("")
        echo(f"building vkd3d from {source} with {len(patch_files)} patches into {prefix} (log {log})")
        tree = _unpack(source, Path(tmp))
        for p in patch_files:
            _step(["patch", "-p1", "--forward", "--batch", "-i", str(p)], f"applying {p.name}", cwd=tree, log=log)
        _step(["autoreconf", "-if"], "autoreconf", cwd=tree, log=log)
        _step(["./configure", f"--prefix={prefix}", *CONFIGURE, f"WIDL={WIDL}"], "configure", cwd=tree, log=log)
        _step(["make", f"-j{jobs}"], "make", cwd=tree, log=log)
        _step(["make", "install"], "make install", cwd=tree, log=log)
    seconds = round(time.monotonic() - started, 1)
    write_atomic(prefix / "BUILT", f"{seconds}\n".encode())
    _point(builds, name)
    return {**entry, "seconds": seconds}


def _read_built(prefix: Path) -> dict[str, Any]:
    try:
        return {"seconds": float((prefix / "BUILT").read_text().strip())}
    except (OSError, ValueError):
        return {}


def _point(builds: Path, name: str) -> None:
    """``builds/current`` -> ``name``, replaced atomically."""
    tmp = builds / f".current.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(name)
    os.replace(tmp, builds / "current")
