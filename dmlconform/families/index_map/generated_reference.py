"""The CPU reference of the index-map family's generated operations, plain
numpy in the tensors' own types: CAST with ``astype`` (a float truncated
toward zero and saturated into an integer type, NaN to 0, first), the
fills with ``np.full`` and ``np.arange``, the diagonals with ``np.eye`` and
``np.triu``, RANDOM_GENERATOR with a plain Philox 4x32-10 (Random123's
``philox4x32_R`` as its header writes it).  It shares nothing with the
oracle but the shape rules of `families.index_map.generated`."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.index_map.generated import attribute, diagonal_bounds, output_of, union_value
from dmlconform.families.index_map.semantics import IndexMap, Operation
from dmlconform.spec.model import DataType, numpy_dtype


def cast(x: np.ndarray, dtype: DataType) -> np.ndarray:
    """``x`` as ``dtype``: a float into an integer type truncated toward
    zero, saturated to the type's range, NaN 0; everything else ``astype``
    (ties to even into a float, modulo 2^bits between integers)."""
    nt = numpy_dtype(dtype)
    if x.dtype.kind != "f" or dtype.is_float:
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(nt)
    info = np.iinfo(nt)
    t = np.trunc(x.astype(np.float64))
    high = t >= float(info.max)  # float(2^63 - 1) is 2^63: compare before converting
    low = t <= float(info.min)
    safe = np.where(high | low | np.isnan(t), 0.0, t)
    return np.where(high, info.max, np.where(low, info.min, safe.astype(nt))).astype(nt)


def _sequence(start: np.generic, delta: np.generic, count: int, dtype: DataType) -> np.ndarray:
    """ValueStart + i * ValueDelta: in float64, rounded once (floats), or
    in uint64 modulo 2^64 and then the type's width (integers)."""
    nt = numpy_dtype(dtype)
    if dtype.is_float:
        return (np.float64(start) + np.arange(count, dtype=np.float64) * np.float64(delta)).astype(nt)
    steps = np.arange(count, dtype=np.uint64) * np.uint64(int(delta) % 2 ** 64)
    return (steps + np.uint64(int(start) % 2 ** 64)).astype(nt)


def _span(sizes: tuple[int, ...], begin: int, end: int) -> np.ndarray:
    """Where DIAGONAL_MATRIX1 writes its Value: the diagonals k of [begin,
    end) (``np.triu`` above k), or outside [end, begin) where inverted."""
    rows, cols = sizes[-2], sizes[-1]
    ones = np.ones((rows, cols), dtype=bool)
    reach = rows + cols
    lo, hi = (max(min(k, reach), -reach) for k in (min(begin, end), max(begin, end)))
    inside = np.triu(ones, lo) & ~np.triu(ones, hi)
    return np.broadcast_to(inside if begin <= end else ~inside, sizes)


# -- Philox 4x32-10, as Random123's header writes it ----------------------------------------------
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _round(ctr: np.ndarray, key: np.ndarray) -> np.ndarray:
    p0 = ctr[:, 0].astype(np.uint64) * np.uint64(_PHILOX_M[0])
    p1 = ctr[:, 2].astype(np.uint64) * np.uint64(_PHILOX_M[1])
    out = np.empty_like(ctr)
    out[:, 0] = (p1 >> np.uint64(32)).astype(np.uint32) ^ ctr[:, 1] ^ key[0]
    out[:, 1] = p1.astype(np.uint32)
    out[:, 2] = (p0 >> np.uint64(32)).astype(np.uint32) ^ ctr[:, 3] ^ key[1]
    out[:, 3] = p0.astype(np.uint32)
    return out


def philox4x32_10(ctr: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Rows of 4 uint32 counter words -> rows of 4 random words."""
    key = key.astype(np.uint32).copy()
    for _ in range(10):
        ctr = _round(ctr, key)
        key += np.array(_PHILOX_W, dtype=np.uint32)  # the last bump is unused
    return ctr


def random_words(state: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` words from the counter in words 0-3 (word 0 the least
    significant) and the key in words 4-5; and the state advanced by ceil(count / 4)."""
    blocks = (count + 3) // 4
    counter = int(state[0]) | int(state[1]) << 32 | int(state[2]) << 64 | int(state[3]) << 96
    low = np.arange(blocks, dtype=np.uint64) + np.uint64(counter & 0xFFFFFFFFFFFFFFFF)  # wraps modulo 2^64
    carry = (low < np.uint64(counter & 0xFFFFFFFFFFFFFFFF)).astype(np.uint64)
    high = np.uint64(counter >> 64) + carry
    ctr = np.stack([low.astype(np.uint32), (low >> np.uint64(32)).astype(np.uint32), high.astype(np.uint32),
                    (high >> np.uint64(32)).astype(np.uint32)], axis=1)
    words = philox4x32_10(ctr, state[4:6]).reshape(-1)[:count]
    after = (counter + blocks) % (1 << 128)
    new = np.array([(after >> (32 * j)) & 0xFFFFFFFF for j in range(4)] + [int(state[4]), int(state[5])],
                   dtype=np.uint32)
    return words, new


def compute(sem: IndexMap, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The outputs of ``case`` (logical shape, storage type), new arrays."""
    out = output_of(sem, case)
    nt = numpy_dtype(out.dtype)
    attrs = case.attribute_map()
    x = case.input(sem.input).view(buffers.get(sem.input)) if sem.input and any(
        t.name == sem.input for t in case.inputs) else None
    if sem.operation is Operation.CAST:
        assert x is not None
        return {sem.output: cast(np.asarray(x), out.dtype)}
    if sem.operation is Operation.FILL_CONSTANT:
        return {sem.output: np.full(out.sizes, union_value(attribute(sem, attrs, "value"), out.dtype), dtype=nt)}
    if sem.operation is Operation.FILL_SEQUENCE:
        start, delta = (union_value(attribute(sem, attrs, p), out.dtype) for p in ("value_start", "value_delta"))
        return {sem.output: _sequence(start, delta, math.prod(out.sizes), out.dtype).reshape(out.sizes)}
    if sem.operation is Operation.RANDOM:
        assert x is not None
        words, state = random_words(np.asarray(x).reshape(-1), math.prod(out.sizes))
        found = {sem.output: words.reshape(out.sizes)}
        for t in case.outputs:
            if t.name == sem.state_output:
                found[t.name] = state.reshape(t.sizes)
        return found
    if sem.operation is Operation.DIAGONAL:
        offset, _ = diagonal_bounds(sem, attrs)
        raw = attribute(sem, attrs, "value")
        value = cast(np.array([float(raw)], dtype=np.float32), out.dtype)[0]  # type: ignore[arg-type]
        eye = np.eye(out.sizes[-2], out.sizes[-1], k=max(min(offset, out.sizes[-1]), -out.sizes[-2]), dtype=bool)
        return {sem.output: np.where(np.broadcast_to(eye, out.sizes), value, nt.type(0))}
    begin, end = diagonal_bounds(sem, attrs)
    rest = np.zeros(out.sizes, dtype=nt) if x is None else np.asarray(x)
    value = union_value(attribute(sem, attrs, "value"), out.dtype)
    return {sem.output: np.where(_span(out.sizes, begin, end), value, rest).astype(nt)}
