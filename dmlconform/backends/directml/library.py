"""Where DirectML, D3D12 and DXCore come from.

DESIGN.md, "Backends": the ``directml`` backend reports itself unavailable,
with the reason, where a library or a GPU is missing; it never raises for it.

Execution (`locate`): ``DML_PATH`` or the ``dml_path`` backend option names
DirectML.dll / libdirectml.so; otherwise the copy a registry package ships
(onnxruntime-directml: ``onnxruntime/capi/DirectML.dll`` on Windows;
torch-directml: ``torch_directml/libdirectml.so`` for WSL).  On WSL, D3D12
and DXCore come from the WSL driver folder ``/usr/lib/wsl/lib`` and a GPU
shows as ``/dev/dxg``.

Validation without a GPU (`validator_libs`): the torch-directml wheel's
libdirectml.so with its stub libd3d12.so, and a fake libdxcore.so compiled
from ``fake_dxcore.c`` with ``cc``, all under a cache folder (the wheel is
fetched once with ``pip download``; nothing is committed).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from dmlconform.atomic import write_atomic
from dmlconform.cachedir import cache_dir

WSL_DRIVER_DIR = Path("/usr/lib/wsl/lib")
WSL_GPU_NODE = Path("/dev/dxg")
#: The torch-directml build whose libdirectml.so (DirectML 1.13, feature level 6_2) validates descs.
TORCH_DIRECTML = "torch-directml"
TORCH_DIRECTML_VERSION = "0.2.5.dev240914"
_WHEEL_LIBS = ("libdirectml.so", "libd3d12.so", "libd3d12core.so")


class Unavailable(Exception):
    """The library, D3D12, an adapter or a validator prerequisite is missing;
    the message says which and how to get it."""


@dataclass(frozen=True, slots=True)
class Located:
    """The libraries to load for execution on this platform."""

    dml: Path
    d3d12: Path
    dxcore: Path | None  # WSL only
    windows: bool


def default_cache() -> Path:
    """The cache folder (`cachedir.cache_dir`)."""
    return cache_dir()


def _package_dir(name: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or ()) if spec else []
    return Path(locations[0]) if locations else None


def _shipped(package: str, *parts: str) -> Path | None:
    folder = _package_dir(package)
    path = folder.joinpath(*parts) if folder else None
    return path if path is not None and path.is_file() else None


def locate(dml_path: str | None = None, *, windows: bool | None = None) -> Located:
    """The libraries for running operators here, or `Unavailable` naming what is missing."""
    windows = sys.platform == "win32" if windows is None else windows
    given = dml_path or os.environ.get("DML_PATH")
    if windows:
        dml = Path(given) if given else _shipped("onnxruntime", "capi", "DirectML.dll")
        if dml is None:
            raise Unavailable("DirectML.dll not found: set DML_PATH (or --backend-arg dml_path=...) or "
                              "pip install onnxruntime-directml")
        if not dml.is_file():
            raise Unavailable(f"DML_PATH {dml} does not exist")
        return Located(dml, Path("d3d12.dll"), None, True)
    dml = Path(given) if given else _shipped("torch_directml", "libdirectml.so")
    if dml is None:
        raise Unavailable("libdirectml.so not found: set DML_PATH (or --backend-arg dml_path=...) or "
                          "pip install torch-directml (WSL2 with a GPU)")
    if not dml.is_file():
        raise Unavailable(f"DML_PATH {dml} does not exist")
    d3d12, dxcore = WSL_DRIVER_DIR / "libd3d12.so", WSL_DRIVER_DIR / "libdxcore.so"
    for lib in (d3d12, dxcore):
        if not lib.is_file():
            raise Unavailable(f"{lib} not found: D3D12 on Linux needs WSL2 with a GPU driver "
                              f"(the WSL driver folder {WSL_DRIVER_DIR})")
    if not WSL_GPU_NODE.exists():
        raise Unavailable(f"no GPU adapter: {WSL_GPU_NODE} is missing (WSL2 GPU paravirtualization is off)")
    return Located(dml, d3d12, dxcore, False)


# ------------------------------------------------------------------ validator (no GPU)
@dataclass(frozen=True, slots=True)
class ValidatorLibs:
    """Folders to put on LD_LIBRARY_PATH, fake DXCore first."""

    dml_dir: Path
    dxcore_dir: Path

    @property
    def dml(self) -> Path:
        return self.dml_dir / "libdirectml.so"

    def ld_library_path(self) -> str:
        return os.pathsep.join((str(self.dxcore_dir), str(self.dml_dir)))


def _wheel(cache: Path, *, download: bool) -> Path:
    wheels = cache / "wheels"
    pattern = f"torch_directml-{TORCH_DIRECTML_VERSION}-*.whl"
    found = sorted(wheels.glob(pattern))
    if found:
        return found[0]
    if not download:
        raise Unavailable(f"no {pattern} under {wheels} and downloading is off")
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.11",
           "--platform", "manylinux2010_x86_64", "-q", "-d", str(wheels), f"{TORCH_DIRECTML}=={TORCH_DIRECTML_VERSION}"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"pip download {TORCH_DIRECTML}=={TORCH_DIRECTML_VERSION} failed: {exc}") from None
    found = sorted(wheels.glob(pattern))
    if done.returncode != 0 or not found:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise Unavailable(f"pip download {TORCH_DIRECTML}=={TORCH_DIRECTML_VERSION} failed: {tail[0]}")
    return found[0]


def _extract(wheel: Path, folder: Path) -> Path:
    if all((folder / name).is_file() for name in _WHEEL_LIBS):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(wheel) as z:
            for name in _WHEEL_LIBS:
                write_atomic(folder / name, z.read(f"torch_directml/{name}"))
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise Unavailable(f"cannot unpack {wheel}: {exc}") from None
    return folder


def compile_fake_dxcore(cache: Path) -> Path:
    """The folder holding ``libdxcore.so`` built from fake_dxcore.c (rebuilt
    when the source changes: the folder is named after its hash)."""
    source = resources.files("dmlconform.backends.directml").joinpath("fake_dxcore.c").read_bytes()
    folder = cache / f"fake-dxcore-{hashlib.sha256(source).hexdigest()[:12]}"
    lib = folder / "libdxcore.so"
    if lib.is_file():
        return folder
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise Unavailable("no C compiler (cc) to build the fake libdxcore.so")
    folder.mkdir(parents=True, exist_ok=True)
    src, tmp = folder / "fake_dxcore.c", folder / f".libdxcore.{os.getpid()}.tmp"
    src.write_bytes(source)
    try:
        done = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(tmp), str(src)], capture_output=True,
                              text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{cc} failed on fake_dxcore.c: {exc}") from None
    if done.returncode != 0:
        raise Unavailable(f"{cc} failed on fake_dxcore.c: {done.stderr.strip()[:300]}")
    os.replace(tmp, lib)
    return folder


def validator_libs(cache: Path | None = None, *, dml_path: str | None = None, download: bool = True) -> ValidatorLibs:
    """The real libdirectml.so (``dml_path`` / DML_PATH, else the cached
    torch-directml wheel's) with the fake libdxcore.so; `Unavailable` says
    what is missing."""
    if not sys.platform.startswith("linux"):
        raise Unavailable("validation with the Linux libdirectml.so runs on Linux only")
    cache = cache or default_cache()
    given = dml_path or os.environ.get("DML_PATH")
    if given:
        dml = Path(given)
        if not dml.is_file():
            raise Unavailable(f"DML_PATH {dml} does not exist")
        dml_dir = dml.parent
    else:
        dml_dir = _extract(_wheel(cache, download=download), cache / f"torch-directml-{TORCH_DIRECTML_VERSION}")
    return ValidatorLibs(dml_dir, compile_fake_dxcore(cache))
