"""The float-to-integer conversion readings (`result_readings.to_integer`)
held against what real code gives, for every integer type and both float
sources (issue #32 item 5, docs/ambiguities.md "Float to integer, platform
by platform").

* x86: ``conversions/casts.c`` built here with ``cc`` and run: -O2
  -fno-tree-vectorize is the scalar code (``indefinite``), -O3 the
  vectorised loops (``x86-vector``).
* AArch64: the same program built with Debian's gcc 12 cross compiler
  (``aarch64-linux-gnu-gcc-12 -static -O2``, with and without
  ``-fno-tree-vectorize``) and run under qemu-aarch64-static 7.2; its
  output is committed (``conversions/aarch64-*.txt``): FCVTZS/FCVTZU into w
  or x registers scalar (``wide-saturate``, ``arm-unsigned``), on vector
  lanes then XTN vectorised (``arm-vector``).
* AVX-512 and CUDA: ``conversions/avx512.c`` and ``conversions/cuda.cu``
  run on the device machine (an Intel Xeon with avx512f, an H100), their
  output committed.
* numpy's own ``astype`` (x86 only): its contiguous loop is vectorised by 4
  with a scalar tail, so UINT32 takes ``x86-vector`` in the body and
  ``indefinite`` in the tail and on a single element.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dmlconform.families.elementwise import result_readings as rr
from dmlconform.spec import model as m

HERE = Path(__file__).parent / "conversions"
X86 = platform.machine().lower() in ("x86_64", "amd64")
F2I = m.FloatToInteger


def _mismatches(lines: list[str], how: m.FloatToInteger, *, unsigned_as: m.FloatToInteger | None = None) -> list[str]:
    """The lines ``<source> <type> <value> <first> <last>`` whose results
    are not ``how``'s (``unsigned_as`` instead for unsigned types)."""
    wrong = []
    for line in lines:
        source, name, value, *results = line.split()
        dtype = m.DataType[name]
        reading = unsigned_as if unsigned_as is not None and name.startswith("U") else how
        src = np.float32 if source == "float" else np.float64
        got = int(rr.to_integer(np.array([float(value)], dtype=src), dtype, m.Overflow.WRAP, reading, source=src)[0])
        bits = 8 * np.dtype(name.lower()).itemsize
        if any(int(r) % 2 ** bits != got % 2 ** bits for r in results):
            wrong.append(f"{line} ({reading.value} gives {got})")
    return wrong


def _built_here(flags: list[str], tmp_path: Path) -> list[str]:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc) to build conversions/casts.c")
    binary = tmp_path / "casts"
    subprocess.run([cc, *flags, "-w", "-o", str(binary), str(HERE / "casts.c"), "-lm"], check=True)
    return subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout.splitlines()


@pytest.mark.skipif(not X86, reason="x86's conversions are measured on x86")
@pytest.mark.parametrize(("flags", "how"), [(["-O2", "-fno-tree-vectorize"], F2I.INDEFINITE),
                                            (["-O3"], F2I.X86_VECTOR)], ids=["scalar", "vectorised"])
def test_x86_readings_are_what_gcc_code_gives(flags: list[str], how: m.FloatToInteger, tmp_path: Path) -> None:
    lines = _built_here(flags, tmp_path)
    assert len(lines) == 400
    assert _mismatches(lines, how) == []


def test_x86_vector_is_its_own_reading_on_uint32_only() -> None:
    """The vectorised reading differs from the scalar one on UINT32 alone
    (so `distinct_conversions` offers it there alone); x = 1 - 3e9 is
    issue #32's case: 1294967297 scalar, 2^31 vectorised."""
    value = np.array([1 - 3e9])
    assert rr.to_integer(value, m.DataType.UINT32, m.Overflow.WRAP, F2I.INDEFINITE).tolist() == [1294967297]
    assert rr.to_integer(value, m.DataType.UINT32, m.Overflow.WRAP, F2I.X86_VECTOR).tolist() == [2 ** 31]
    assert F2I.X86_VECTOR in rr.distinct_conversions(m.DataType.UINT32)
    assert all(F2I.X86_VECTOR not in rr.distinct_conversions(m.DataType[t])
               for t in ("INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT64"))


@pytest.mark.parametrize(("name", "how", "unsigned_as"), [
    ("aarch64-scalar.txt", F2I.WIDE_SATURATE, F2I.ARM_UNSIGNED),
    ("aarch64-vector.txt", F2I.ARM_VECTOR, None),
])
def test_arm_readings_are_what_aarch64_code_gives(name: str, how: m.FloatToInteger,
                                                  unsigned_as: m.FloatToInteger | None) -> None:
    lines = (HERE / name).read_text().splitlines()
    assert len(lines) == 400
    assert _mismatches(lines, how, unsigned_as=unsigned_as) == []


def _columns(name: str) -> list[list[str]]:
    return [line.split() for line in (HERE / name).read_text().splitlines()]


def _convert(value: str, dtype: str, how: m.FloatToInteger, source: type = np.float64) -> int:
    got = rr.to_integer(np.array([float(value)], dtype=source), m.DataType[dtype], m.Overflow.WRAP, how, source=source)
    return int(got[0]) % 2 ** (8 * np.dtype(dtype.lower()).itemsize)


def test_avx512_gives_the_unsigned_indefinite() -> None:
    """``conversions/avx512.c`` on the device machine's Intel Xeon (gcc 12
    -mavx512f): vcvttsd2usi and vcvttpd2udq give 2^bits - 1 for every value
    out of range (Intel SDM vol. 2, VCVTTSD2USI: "the unsigned integer
    indefinite"); UINT8 still goes through vcvttsd2si (indefinite)."""
    rows = _columns("avx512.txt")
    assert len(rows) == 12
    for value, u, w, b, vector in rows:
        assert [int(u), int(w), int(vector)] == [_convert(value, "UINT32", F2I.UNSIGNED_INDEFINITE),
                                                 _convert(value, "UINT64", F2I.UNSIGNED_INDEFINITE),
                                                 _convert(value, "UINT32", F2I.UNSIGNED_INDEFINITE)], value
        assert int(b) == _convert(value, "UINT8", F2I.INDEFINITE), value


#: cuda.txt's columns after the value: (type, converted from float, not double).
_CUDA = (("INT8", True), ("UINT8", True), ("INT32", False), ("UINT32", False), ("UINT32", True), ("UINT64", False),
         ("INT16", False), ("UINT16", True))


def test_cuda_gives_arm_unsigned_but_for_nan_from_double() -> None:
    """``conversions/cuda.cu`` on an H100 (nvcc 13): cvt.rzi.s32/u32/u64
    saturate, the 8- and 16-bit casts keep their low bits, as ARM's scalar
    code does (`arm-unsigned`); but a NaN double gives the pattern
    0x80000000 (0x8000000000000000): x86's values, `indefinite` (INT32,
    UINT64) or `x86-vector` (UINT32), element by element."""
    rows = _columns("cuda.txt")
    assert len(rows) == 12
    for value, *results in rows:
        for (dtype, from_float), result in zip(_CUDA, results, strict=True):
            bits = 8 * np.dtype(dtype.lower()).itemsize
            source = np.float32 if from_float else np.float64
            wanted = _convert(value, dtype, F2I.ARM_UNSIGNED, source)
            if value == "nan" and not from_float:
                wanted = _convert(value, dtype, F2I.X86_VECTOR if dtype == "UINT32" else F2I.INDEFINITE, source)
            assert int(result) % 2 ** bits == wanted, (value, dtype, from_float)


_UNSIGNED_WIDE = (np.uint32, np.uint64)
_numpy_value = st.one_of(st.floats(width=32), st.floats(min_value=-2.0 ** 65, max_value=2.0 ** 65))


@pytest.mark.skipif(not X86, reason="numpy's casts are x86's only on x86")
@pytest.mark.parametrize("dtype", _UNSIGNED_WIDE)
@pytest.mark.parametrize("source", (np.float32, np.float64))
@given(value=_numpy_value)
def test_numpy_takes_x86_vector_in_its_loop_and_indefinite_in_its_tail(dtype: type, source: type,
                                                                        value: float) -> None:
    """Eight copies: the vectorised body; one more: the scalar tail; one alone: the scalar code."""
    with np.errstate(all="ignore"):
        x = np.array([value], dtype=source)
        body = np.repeat(x, 9).astype(dtype)
        alone = x.astype(dtype)
    convert: Callable[[m.FloatToInteger], list[int]] = lambda how: rr.to_integer(  # noqa: E731
        x, np.dtype(dtype), m.Overflow.WRAP, how, source=source).tolist()
    assert body[:8].tolist() == convert(F2I.X86_VECTOR) * 8
    assert [body[8], alone[0]] == convert(F2I.INDEFINITE) * 2
