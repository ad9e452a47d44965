"""The real DirectML on plain Linux, on the CPU: the stack and where it lives.

Issues #25 and #37.  libdirectml.so (the torch-directml wheel's, as the
validate tier uses) executes its own kernels without a GPU when D3D12 comes
from vkd3d (D3D12 on Vulkan, with a DXIL translator) over Mesa's CPU Vulkan
driver, lavapipe:

    dmlconform directml backend (ctypes, in a worker process)
      -> libdirectml.so   DirectML 1.13, the torch-directml wheel's
      -> libd3d12.so      the bridge: System V proxies over vkd3d's ms_abi objects,
                          generated from vkd3d's own vkd3d_d3d12.h at build time (bridge_gen.py)
      -> vkd3d 1.17       built from its release source with the project's patches
                          (vkd3d_build.py: the DXIL operations DirectML's shaders use)
      -> lavapipe         Mesa's mesa-vulkan-drivers: the machine's own suite's, or
                          Debian sid's with sid's glibc (`MESAS`, chosen per run)
    libdxcore.so: the project's fake (fake_dxcore.c)

`setup` builds it under a folder (default ``<cache>/linux-stack``): apt
fetches lavapipe and the Vulkan loader with a private state folder (its own
source list, lists and archives; the system's apt configuration is only
read) and ``dpkg -x`` unpacks them into ``sysroot/``; vkd3d is built into
``vkd3d/<key>/`` (`vkd3d_build`, cached by the digests of its source and
patches).  Everything links against the machine's own glibc; the process
that loads the stack starts through the machine's ``ld-linux`` with
``--library-path`` (`Stack.command`), so nothing leaks into the parent's
environment: the backend runs in such a subprocess (`stack_worker`).
`check` names the first missing piece (the backend is then unavailable
with that reason).

Two Mesas (issue #37, item 3): ``host``, the machine's suite's (bookworm:
Mesa 22.3.6), and ``sid``, Debian sid's (Mesa 26.x) with everything it needs
from sid, its glibc and dynamic loader included, in ``sysroot-sid/``
(`fetch` resolves it against an empty package status with sid as the only
source: against the machine's own status apt refuses, since sid's libc6
breaks the machine's libc-bin and base-files).  ``setup --mesa`` fetches one;
a stack holds either or both, and the backend's ``mesa`` option picks one
per run.  sid's lavapipe flushes float32 subnormals to zero, which the
backend then declares (`Stack.flushes_subnormals`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dmlconform.atomic import write_atomic
from dmlconform.backends.directml import bridge_gen, vkd3d_build
from dmlconform.backends.directml.library import Unavailable, validator_libs
from dmlconform.cachedir import cache_dir

#: From the machine's own suite, with what they need that is not installed: Vulkan and lavapipe.
HOST_PACKAGES = ("mesa-vulkan-drivers", "libvulkan1")
#: Where lavapipe comes from: the machine's own suite, or Debian sid (with sid's glibc).
MESAS = ("host", "sid")
#: The Mesas whose lavapipe flushes float32 subnormals to zero (measured: docs/results/directml-linux-sid.md).
FLUSHING_MESAS = frozenset({"sid"})
DEFAULT_MIRROR = "http://deb.debian.org/debian"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
MANIFEST = "stack.json"
_MULTIARCH = "usr/lib/x86_64-linux-gnu"
_HOST_LIBS = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu")
#: The machine's dynamic loader (x86-64): the stack's libraries link against its glibc.
HOST_LOADER = Path("/lib64/ld-linux-x86-64.so.2")
#: Bounds on the external commands (seconds): an apt mirror that stalls must not hang the set-up.
_APT_TIMEOUT = 900
_CC_TIMEOUT = 300
SETUP_HINT = "dmlconform directml setup-linux"


def default_stack_dir() -> Path:
    """``<cache>/linux-stack`` (`cachedir.cache_dir`)."""
    return cache_dir() / "linux-stack"


@dataclass(frozen=True, slots=True)
class Stack:
    """The stack's files under ``root``, with the lavapipe of ``mesa`` (one of `MESAS`)."""

    root: Path
    mesa: str = "host"

    def __post_init__(self) -> None:
        if self.mesa not in MESAS:
            raise ValueError(f"mesa {self.mesa!r}: one of {', '.join(MESAS)}")

    @property
    def sid(self) -> bool:
        return self.mesa == "sid"

    @property
    def flushes_subnormals(self) -> bool:
        """Whether this Mesa's lavapipe flushes float32 subnormals to zero (the backend declares it)."""
        return self.mesa in FLUSHING_MESAS

    @property
    def sysroot(self) -> Path:
        return self.root / ("sysroot-sid" if self.sid else "sysroot")

    @property
    def libdir(self) -> Path:
        return self.sysroot / _MULTIARCH

    @property
    def loader(self) -> Path:
        """The machine's dynamic loader; with sid's Mesa, sid's (whose glibc sid's libraries need)."""
        return self.libdir / HOST_LOADER.name if self.sid else HOST_LOADER

    @property
    def vkd3d(self) -> Path:
        """The vkd3d build in use (``vkd3d/current``, a link to ``vkd3d/<key>``)."""
        return self.root / "vkd3d" / "current"

    @property
    def include(self) -> Path:
        return self.vkd3d / "include" / "vkd3d"

    @property
    def compiler(self) -> Path:
        """vkd3d-compiler of the build (the shader census runs it)."""
        return self.vkd3d / "bin" / "vkd3d-compiler"

    @property
    def lib(self) -> Path:
        """libd3d12.so (the bridge), libdirectml.so and libdxcore.so."""
        return self.root / "lib"

    @property
    def icd(self) -> Path:
        return self.root / "vulkan" / ("lvp_icd-sid.json" if self.sid else "lvp_icd.json")

    @property
    def runtime_dir(self) -> Path:
        return self.root / "run"

    def pieces(self) -> tuple[tuple[str, Path], ...]:
        """What must exist, in the order a missing one is reported."""
        vkd3d = self.vkd3d / "lib"
        suite = " from sid" if self.sid else ""
        return (("sid's dynamic loader (libc6 from sid)" if self.sid else "the machine's dynamic loader",
                 self.loader),
                (f"the Vulkan loader (libvulkan1{suite})", self.libdir / "libvulkan.so.1"),
                (f"lavapipe (mesa-vulkan-drivers{suite})", self.libdir / "libvulkan_lvp.so"),
                ("vkd3d built from source", vkd3d / "libvkd3d.so.1"),
                ("vkd3d-utils built from source", vkd3d / "libvkd3d-utils.so.1"),
                ("vkd3d-shader built from source", vkd3d / "libvkd3d-shader.so.1"),
                ("the lavapipe ICD file", self.icd),
                ("the D3D12 bridge libd3d12.so", self.lib / "libd3d12.so"),
                ("libdirectml.so (torch-directml wheel)", self.lib / "libdirectml.so"),
                ("the fake libdxcore.so", self.lib / "libdxcore.so"))

    def library_path(self) -> str:
        return ":".join((str(self.lib), str(self.vkd3d / "lib"), str(self.libdir), *_HOST_LIBS))

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` started through the machine's loader with the stack's libraries first."""
        return [str(self.loader), "--library-path", self.library_path(), *argv]

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with lavapipe as the only Vulkan driver; vkd3d logs its
        warnings (a shader it cannot translate says why) to stderr.  vkd3d
        keeps virtual descriptor heaps (``VKD3D_CONFIG=virtual_heaps``, as it
        must where the driver lacks VK_EXT_descriptor_indexing, bookworm's
        lavapipe): where the driver has it (sid's), vkd3d would otherwise back
        every descriptor heap with a Vulkan descriptor set of the heap's size,
        which lavapipe clears on each heap DirectML creates (4 times slower
        runs, the same results)."""
        return {**base, "VK_DRIVER_FILES": str(self.icd), "VK_ICD_FILENAMES": str(self.icd),
                "XDG_RUNTIME_DIR": str(self.runtime_dir), "VKD3D_DEBUG": base.get("VKD3D_DEBUG", "warn"),
                "VKD3D_SHADER_DEBUG": base.get("VKD3D_SHADER_DEBUG", "warn"),
                "VKD3D_CONFIG": base.get("VKD3D_CONFIG", "virtual_heaps")}


def check(stack: Stack) -> None:
    """`Unavailable` naming the first thing the stack lacks (and the command that builds it)."""
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        raise Unavailable(f"the Linux CPU stack runs on x86-64 Linux only (this is {sys.platform} {platform.machine()})")
    build = f"{SETUP_HINT} --dir {stack.root}" + (f" --mesa {stack.mesa}" if stack.sid else "")
    if not (stack.root / MANIFEST).is_file():
        raise Unavailable(f"no Linux CPU stack at {stack.root} ({MANIFEST} missing): build it with `{build}`")
    for what, path in stack.pieces():
        if not path.exists():
            raise Unavailable(f"the Linux CPU stack at {stack.root} lacks {what}: {path} is missing; "
                              f"run `{build}` again")


# ------------------------------------------------------------------ building it
@dataclass(frozen=True, slots=True)
class Made:
    """One thing `setup` made or found, for the report."""

    what: str
    path: Path
    note: str = ""


Echo = Callable[[str], None]


def _run(cmd: Sequence[str], what: str, *, cwd: Path | None = None, timeout: float = _APT_TIMEOUT) -> str:
    """Run ``cmd``; its stdout, or `Unavailable` with the last line it wrote."""
    try:
        done = subprocess.run(list(cmd), capture_output=True, text=True, cwd=cwd, timeout=timeout,
                              env={**os.environ, "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"})
    except FileNotFoundError:
        raise Unavailable(f"{what}: {cmd[0]} not found (the Linux CPU stack is built on Debian, with apt and dpkg)") \
            from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{what} failed: {exc}") from None
    if done.returncode != 0:
        lines = [x for x in (done.stderr + done.stdout).splitlines() if x.strip()]
        errors = [x for x in lines if x.startswith("E:")] or lines[-1:] or [f"exit status {done.returncode}"]
        raise Unavailable(f"{what} failed: {errors[0].strip()}")
    return done.stdout


def _host_sources() -> tuple[str, str, str]:
    """The machine's Debian mirror, its security mirror and its suite (from
    /etc/os-release and /etc/apt, only read)."""
    text = ""
    for path in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        if path.suffix in (".list", ".sources") or path.name == "sources.list":
            try:
                text += path.read_text(errors="replace") + "\n"
            except OSError:
                continue
    uris = re.findall(r"https?://[^\s\]]+", text)
    mirror = next((u.rstrip("/") for u in uris if u.rstrip("/").endswith("/debian")), DEFAULT_MIRROR)
    security = next((u.rstrip("/") for u in uris if u.rstrip("/").endswith("/debian-security")),
                    mirror.rsplit("/", 1)[0] + "/debian-security")
    try:
        release = Path("/etc/os-release").read_text(errors="replace")
    except OSError:
        release = ""
    suite = re.search(r"^VERSION_CODENAME=\"?(\w+)", release, re.M)
    if suite is None:
        raise Unavailable("not a Debian release with a VERSION_CODENAME in /etc/os-release: the Linux CPU stack "
                          "is fetched with Debian's apt")
    return mirror, security, suite.group(1)


def _apt_state(state: Path, mesa: str = "host") -> list[str]:
    """A private apt configuration under ``state``.  For the ``host`` Mesa:
    the machine's suite and sid (pinned low, so only what is asked for by
    ``/sid`` comes from it; nothing is), resolved against the machine's dpkg
    status.  For ``sid``: sid alone, resolved against an empty status (a new
    system), so that apt names everything sid's lavapipe needs, glibc
    included; against the machine's status it refuses (sid's libc6 breaks the
    machine's libc-bin and base-files), which left an earlier attempt empty."""
    mirror, security, suite = _host_sources()
    for sub in ("lists/partial", "archives/partial", "sources.list.d", "preferences.d", "debs"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    signed = f"Signed-By: {KEYRING}\n" if KEYRING.is_file() else ""
    sid = f"Types: deb\nURIs: {mirror}\nSuites: sid\nComponents: main\n{signed}"
    sources = sid if mesa == "sid" else \
        (f"Types: deb\nURIs: {mirror}\nSuites: {suite} {suite}-updates\nComponents: main\n{signed}\n"
         f"Types: deb\nURIs: {security}\nSuites: {suite}-security\nComponents: main\n{signed}\n{sid}")
    write_atomic(state / "sources.list.d" / "dmlconform.sources", sources.encode())
    write_atomic(state / "sources.list", b"")
    write_atomic(state / "preferences", b"" if mesa == "sid" else
                 b"Package: *\nPin: release a=unstable\nPin-Priority: 100\n")
    status = []
    if mesa == "sid":
        write_atomic(state / "status", b"")
        status = ["-o", f"Dir::State::status={state / 'status'}"]
    return [*status, "-o", f"Dir::Etc::SourceList={state / 'sources.list'}",
            "-o", f"Dir::Etc::SourceParts={state / 'sources.list.d'}",
            "-o", f"Dir::Etc::Preferences={state / 'preferences'}",
            "-o", f"Dir::Etc::PreferencesParts={state / 'preferences.d'}",
            "-o", f"Dir::State::Lists={state / 'lists'}", "-o", f"Dir::Cache::Archives={state / 'archives'}",
            "-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache=", "-o", "APT::Sandbox::User=root",
            "-o", "Acquire::Retries=3"]


def _to_install(options: list[str], mesa: str = "host") -> list[str]:
    """``NAME=VERSION`` of the host packages and of what apt would install
    with them (a simulation against the dpkg status of ``options``: the
    machine's, or for sid an empty one)."""
    extra = ["--no-install-recommends"] if mesa == "sid" else []
    out = _run(["apt-get", *options, "-s", "-q", "install", *extra, *HOST_PACKAGES],
               "apt-get -s install (simulation)" + (" from sid" if mesa == "sid" else ""))
    found = dict(re.findall(r"^Inst (\S+) (?:\[[^\]]*\] )?\((\S+)", out, re.M))
    for name in HOST_PACKAGES:
        if name not in found:  # installed already: its candidate, for the private copy
            policy = _run(["apt-cache", *options, "policy", name], f"apt-cache policy {name}")
            candidate = re.search(r"Candidate: (\S+)", policy)
            if candidate is None or candidate.group(1) == "(none)":
                raise Unavailable(f"apt has no candidate for {name} in this machine's suite")
            found[name] = candidate.group(1)
    return [f"{name}={version}" for name, version in sorted(found.items())]


def fetch(stack: Stack, echo: Echo) -> list[Path]:
    """Download the packages of the stack's Mesa with a private apt state
    and unpack them into its sysroot (afresh); the .deb files unpacked."""
    state = stack.root / ("apt-sid" if stack.sid else "apt")
    options = _apt_state(state, stack.mesa)
    echo(f"apt-get update (private state {state})")
    _run(["apt-get", *options, "-q", "update"], "apt-get update")
    wanted = _to_install(options, stack.mesa)
    debs = state / "debs"
    for old in debs.glob("*.deb"):
        old.unlink()
    echo("apt-get download " + " ".join(wanted))
    _run(["apt-get", *options, "-q", "download", *wanted], "apt-get download", cwd=debs)
    files = sorted(debs.glob("*.deb"))
    shutil.rmtree(stack.sysroot, ignore_errors=True)
    stack.sysroot.mkdir(parents=True)
    for deb in files:
        _run(["dpkg-deb", "-x", str(deb), str(stack.sysroot)], f"dpkg-deb -x {deb.name}")
    return files


def _compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise Unavailable("no C compiler (cc) to build the D3D12 bridge: apt-get install gcc libc6-dev")
    return cc


def build_bridge(stack: Stack) -> bridge_gen.Bridge:
    """Generate the proxies from the unpacked vkd3d headers and compile
    ``lib/libd3d12.so`` (the runtime and the generated part, one unit)."""
    headers = [stack.include / "vkd3d_d3d12.h", stack.include / "vkd3d_d3dcommon.h"]
    try:
        texts = [h.read_text(errors="replace") for h in headers]
    except OSError as exc:
        raise Unavailable(f"vkd3d's headers (of its build) are missing: {exc}") from None
    try:
        bridge = bridge_gen.generate(texts)
    except bridge_gen.BridgeError as exc:
        raise Unavailable(f"cannot generate the D3D12 bridge from {headers[0]}: {exc}") from None
    runtime = (Path(__file__).parent / "bridge_runtime.c").read_text()
    folder = stack.root / "bridge"
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "bridge.c", (runtime + "\n" + bridge.source).encode())
    write_atomic(folder / "bridge.map", bridge_gen.version_script().encode())
    stack.lib.mkdir(parents=True, exist_ok=True)
    tmp = stack.lib / f".libd3d12.{os.getpid()}.tmp"
    cmd = [_compiler(), "-shared", "-fPIC", "-O1", "-w", f"-I{stack.include}",
           f"-Wl,--version-script={folder / 'bridge.map'}", "-Wl,-soname,libd3d12.so", "-o", str(tmp),
           str(folder / "bridge.c"), "-ldl", "-lpthread"]
    _run(cmd, "compiling the D3D12 bridge", timeout=_CC_TIMEOUT)
    os.replace(tmp, stack.lib / "libd3d12.so")
    return bridge


def _write_icd(stack: Stack) -> None:
    """The ICD file naming the stack's lavapipe (its Mesa's)."""
    icd = {"file_format_version": "1.0.0",
           "ICD": {"library_path": str(stack.libdir / "libvulkan_lvp.so"), "api_version": "1.1.0"}}
    stack.icd.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(stack.icd, (json.dumps(icd, indent=2) + "\n").encode())
    stack.runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)


def _copy_libraries(stack: Stack, cache: Path) -> None:
    """libdirectml.so from the torch-directml wheel and the fake libdxcore.so
    (both as the validate tier gets them, `library.validator_libs`)."""
    libs = validator_libs(cache, dml_path=None)
    stack.lib.mkdir(parents=True, exist_ok=True)
    for src in (libs.dml, libs.dxcore_dir / "libdxcore.so"):
        tmp = stack.lib / f".{src.name}.{os.getpid()}.tmp"
        shutil.copyfile(src, tmp)
        os.replace(tmp, stack.lib / src.name)


def _bridge_key(vkd3d_key: str) -> str:
    """What the bridge is built from: our runtime and generator, and the vkd3d build whose header it wraps."""
    here = Path(__file__).parent
    digest = hashlib.sha256((here / "bridge_runtime.c").read_bytes() + (here / "bridge_gen.py").read_bytes()
                            + vkd3d_key.encode())
    return digest.hexdigest()[:16]


def packages_key(mesa: str) -> str:
    """The manifest's list of the .deb files unpacked for ``mesa``."""
    return "packages" if mesa == "host" else f"packages-{mesa}"


def _manifest(stack: Stack) -> dict[str, Any]:
    try:
        data = json.loads((stack.root / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _bridge(stack: Stack, before: Mapping[str, Any], vkd3d_key: str, *, echo: Echo) -> dict[str, Any]:
    """The bridge's manifest entry; rebuilt when missing or stale."""
    key, old = _bridge_key(vkd3d_key), before.get("bridge")
    if (stack.lib / "libd3d12.so").is_file() and isinstance(old, dict) and old.get("key") == key:
        return old
    echo(f"generating the D3D12 bridge from {stack.include / 'vkd3d_d3d12.h'} and compiling it")
    built = build_bridge(stack)
    return {"key": key, "interfaces": built.interfaces, "methods": built.methods}


def _vkd3d(stack: Stack, before: Mapping[str, Any], source: Path | None, patch_files: list[Path],
           echo: Echo) -> dict[str, Any]:
    """The vkd3d build's manifest entry: built (or found in the cache) from
    ``source``; without it, the build in use where its patches are still
    ``patch_files``, else `Unavailable` asking for the source."""
    if source is not None:
        return vkd3d_build.build(source, stack.vkd3d.parent, patch_files=patch_files, echo=echo,
                                 jobs=max(1, min(os.cpu_count() or 1, 8)))
    old = before.get("vkd3d")
    if isinstance(old, dict) and old.get("patches") == [p.name for p in patch_files] and \
            (stack.vkd3d / "BUILT").is_file() and stack.vkd3d.resolve().name == old.get("key") and \
            vkd3d_build.key(str(old.get("source_sha256")), patch_files) == old.get("key"):
        return old
    raise Unavailable("vkd3d is built from its release source with the project's patches: give the tarball with "
                      "--vkd3d-source PATH (vkd3d-1.17.tar.xz from https://dl.winehq.org/vkd3d/source/, or Debian's "
                      "vkd3d_1.17.orig.tar.xz)")


def setup(root: Path, *, cache: Path | None = None, refetch: bool = False, source: Path | None = None,
          patch_files: list[Path] | None = None, mesa: str = "host", echo: Echo = lambda _: None) -> list[Made]:
    """Build the stack under ``root`` with the lavapipe of ``mesa`` (what
    exists and is current is kept, the other Mesa's packages included); what
    it is made of.  `Unavailable` says what could not be done."""
    stack, cache = Stack(root, mesa), cache or cache_dir()
    if patch_files is None:
        patch_files = vkd3d_build.patches()
        if not patch_files:
            raise Unavailable(f"the project's vkd3d patches are missing: {vkd3d_build.PATCHES} holds no *.patch "
                              "(an install without them); reinstall from a clone, or give --vkd3d-patches DIR")
    started = time.monotonic()
    root.mkdir(parents=True, exist_ok=True)
    before = _manifest(stack)
    vkd3d = _vkd3d(stack, before, source, patch_files, echo)
    unpacked = (stack.loader, stack.libdir / "libvulkan.so.1", stack.libdir / "libvulkan_lvp.so")
    fetched = all(p.exists() for p in unpacked) and not refetch
    listed = packages_key(mesa)
    packages = [str(p) for p in before.get(listed, [])] if fetched else [p.name for p in fetch(stack, echo)]
    _write_icd(stack)
    _copy_libraries(stack, cache)
    bridge = _bridge(stack, before, str(vkd3d["key"]), echo=echo)
    others = {packages_key(m): before[packages_key(m)] for m in MESAS if m != mesa and packages_key(m) in before}
    manifest = {**others, listed: packages, "vkd3d": vkd3d, "bridge": bridge,
                "seconds": round(time.monotonic() - started, 1)}
    write_atomic(stack.root / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())
    check(stack)
    debs = {p.split("_")[0]: p for p in packages}
    patched = ", ".join(vkd3d["patches"]) or "no patches"
    notes = {"the D3D12 bridge libd3d12.so": f"{bridge['interfaces']} interfaces, {bridge['methods']} methods",
             "vkd3d built from source": f"{vkd3d['source']} with {patched}; build {vkd3d['key']}, "
                                        f"{vkd3d.get('seconds', '?')} s",
             stack.pieces()[2][0]: debs.get("mesa-vulkan-drivers", "")}
    return [Made(what, path, notes.get(what, "")) for what, path in stack.pieces()]
