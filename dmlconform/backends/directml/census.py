"""The shader census: how many of libdirectml.so's shaders the stack's vkd3d translates, and why not.

Issue #37.  libdirectml.so keeps its compute shaders as zstd frames
compressed with one dictionary stored just before the first frame; unpacked
they are DXBC containers, every one DXIL.  `shaders` finds the frames
(`frame_length` walks a frame's blocks, so nothing past its end is read),
decompresses each with the ``zstd`` command (Debian's zstd) and cuts the
containers out (`containers`).  `take` translates each distinct container
with the stack's own ``vkd3d-compiler`` (``-x dxbc-dxil -b spirv-binary``)
and counts the translated ones and, for the others, vkd3d-shader's first
error with its numbers written ``N`` (`reason`), so that a patch's effect on
what DirectML can run is one number.  The counts are of containers as the
library holds them (8,004, some equal): a distinct container is translated
once and counted as often as it occurs.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from dmlconform.backends.directml.library import Unavailable

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DICTIONARY_MAGIC = b"\x37\xa4\x30\xec"
#: A shader that vkd3d-compiler does not finish within this many seconds counts as failed.
COMPILE_TIMEOUT = 60.0
TRANSLATED = "translated"


def frame_length(data: bytes, start: int) -> int | None:
    """The length of the zstd frame at ``start`` (RFC 8878, section 3.1.1), or
    None where the bytes there are no complete frame."""
    try:
        descriptor = data[start + 4]
        fcs_flag, single, checksum, dict_flag = descriptor >> 6, descriptor >> 5 & 1, descriptor >> 2 & 1, descriptor & 3
        if descriptor & 0x08:  # the reserved bit
            return None
        pos = start + 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag] + ((1 if single else 0), 2, 4, 8)[fcs_flag]
        while True:
            header = int.from_bytes(data[pos:pos + 3], "little")
            last, kind, size = header & 1, header >> 1 & 3, header >> 3
            if kind == 3 or pos + 3 > len(data):
                return None
            pos += 3 + (1 if kind == 1 else size)
            if last:
                break
        end = pos + 4 * checksum
        return end - start if end <= len(data) else None
    except IndexError:
        return None


def containers(blob: bytes) -> Iterator[bytes]:
    """The DXBC containers in ``blob`` (a header whose size and part count fit)."""
    at = blob.find(b"DXBC")
    while at != -1:
        if at + 32 <= len(blob):
            total, parts = struct.unpack_from("<II", blob, at + 24)
            if 0 < parts < 32 and at + total <= len(blob):
                yield blob[at:at + total]
                at = blob.find(b"DXBC", at + total)
                continue
        at = blob.find(b"DXBC", at + 4)


def _zstd() -> str:
    found = shutil.which("zstd")
    if not found:
        raise Unavailable("the shader census unpacks libdirectml.so's shaders with the zstd command: "
                          "apt-get install zstd")
    return found


def shaders(library: Path) -> list[bytes]:
    """Every DXBC container of ``library`` (libdirectml.so), in file order."""
    data = library.read_bytes()
    dictionary_at = data.find(DICTIONARY_MAGIC)
    first = data.find(ZSTD_MAGIC, dictionary_at)
    if dictionary_at == -1 or first == -1:
        raise Unavailable(f"{library}: no zstd dictionary and frames (not the torch-directml libdirectml.so?)")
    zstd, out = _zstd(), list[bytes]()
    with tempfile.TemporaryDirectory(prefix="dmlconform-census-") as tmp:
        dictionary = Path(tmp) / "dictionary"
        dictionary.write_bytes(data[dictionary_at:first])
        at = first
        while at != -1:
            length = frame_length(data, at)
            if length is not None:
                done = subprocess.run([zstd, "-d", "-q", "-c", "-D", str(dictionary)], input=data[at:at + length],
                                      capture_output=True, timeout=COMPILE_TIMEOUT)
                if done.returncode == 0:
                    out.extend(containers(done.stdout))
            at = data.find(ZSTD_MAGIC, at + (length or 4))
    return out


def shader_model(container: bytes) -> str:
    """``"6.2"``: the version of the container's DXIL part ("?" where it has none)."""
    total, parts = struct.unpack_from("<II", container, 24)
    for offset in struct.unpack_from(f"<{parts}I", container, 32):
        if container[offset:offset + 4] == b"DXIL":
            version = struct.unpack_from("<I", container, offset + 8)[0]
            return f"{version >> 4 & 0xF}.{version & 0xF}"
    return "?"


def reason(stderr: str, returncode: int) -> str:
    """vkd3d-shader's first error with every number written N
    (``E5017: Structured resource byte stride N is not a multiple of N.``)."""
    found = re.search(r"\bE(\d{4}): ([^\n]{1,300})", stderr)
    if found is None:
        lines = [x for x in stderr.splitlines() if x.strip()]
        return f"exit status {returncode}" + (f": {re.sub(r'[0-9]+', 'N', lines[-1][:200])}" if lines else "")
    return f"E{found.group(1)}: " + re.sub(r"\b(0x[0-9a-fA-F]+|[0-9]+)", "N", found.group(2).strip())


@dataclass(frozen=True, slots=True)
class Census:
    """What the census found: containers in the library, distinct ones,
    translated ones, and the others by reason (sorted, most first); the same
    per shader model."""

    shaders: int
    distinct: int
    translated: int
    reasons: tuple[tuple[str, int], ...]
    models: tuple[tuple[str, int, int], ...]   # (shader model, shaders, translated)

    def as_dict(self) -> dict[str, object]:
        return {"shaders": self.shaders, "distinct": self.distinct, "translated": self.translated,
                "reasons": [list(r) for r in self.reasons], "models": [list(m) for m in self.models]}


def _compile(compiler: Path, env: Mapping[str, str], path: Path) -> str:
    try:
        done = subprocess.run([str(compiler), "-x", "dxbc-dxil", "-b", "spirv-binary", "-o", os.devnull, str(path)],
                              capture_output=True, text=True, errors="replace", env=dict(env),
                              timeout=COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"no result within {COMPILE_TIMEOUT:g} s"
    return TRANSLATED if done.returncode == 0 else reason(done.stderr, done.returncode)


def take(library: Path, compiler: Path, env: Mapping[str, str], *, jobs: int = 2) -> Census:
    """Translate every shader of ``library`` with ``compiler`` (run with
    ``env``, ``jobs`` at a time) and count the outcomes."""
    found = shaders(library)
    by_digest = {hashlib.sha256(c).hexdigest(): c for c in found}
    with tempfile.TemporaryDirectory(prefix="dmlconform-census-") as tmp:
        paths = {}
        for digest, container in by_digest.items():
            paths[digest] = Path(tmp) / f"{digest[:20]}.dxbc"
            paths[digest].write_bytes(container)
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            outcome = dict(zip(paths, pool.map(lambda p: _compile(compiler, env, p), paths.values())))
    per_shader = [(shader_model(c), outcome[hashlib.sha256(c).hexdigest()]) for c in found]
    reasons = Counter(o for _, o in per_shader if o != TRANSLATED)
    models = Counter(m for m, _ in per_shader)
    ran = Counter(m for m, o in per_shader if o == TRANSLATED)
    return Census(len(found), len(by_digest), sum(ran.values()),
                  tuple(sorted(reasons.items(), key=lambda r: (-r[1], r[0]))),
                  tuple((m, n, ran[m]) for m, n in sorted(models.items())))
