"""The scatters' index map (SCATTER, SCATTER_ND), for the family's oracle
(`families.index_map.oracle`): each output element is the input's element
at its coordinate, or one update written there.

From the coordinates alone (no put_along_axis or fancy assignment, the CPU
reference's tools): each update element's target, its coordinate with the
index (SCATTER: on Axis) or the tuple (SCATTER_ND: the first q dimensions
that count) read from the indices, as a C-order position in the output.

* **Duplicates** (ambiguity ``duplicate-index``): the pages call two updates
  of one element invalid and say "there's no guarantee of which last write
  wins"; SCATTER's own Example 1 writes element 3 twice and prints the
  later update.  Every colliding update is accepted: the last in the
  updates' C order is the primary reading (``last``), the first
  (``first``) and any between (``other``) STRICT alternatives, counted.
* **An index outside its dimension** (the pages are silent: the case is
  outside their domain): no value is expected on the lines such an update
  could land on if clamped or wrapped (SCATTER: every element of its line
  along Axis; SCATTER_ND: every element whose tuple coordinates agree with
  the tuple's in-range ones and whose trailing coordinates are the
  update's); every other element must be right.
* Negative indices of a signed type count from the end (FL 3_0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import Alternative, Tier
from dmlconform.families.index_map.scatters import ScatterCall, last, scatter_call
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.oracles.base import PREFIX, marker
from dmlconform.spec import model as m

AMBIGUITY = "duplicate-index"


@dataclass(frozen=True, slots=True, eq=False)
class Scattered:
    """One scatter's expected output (flat, C order; the last colliding
    update where several write an element), where a value is expected
    (``valid``), and per other reading (``first``, ``other``) the
    (positions, values) it gives where it differs."""

    expected: np.ndarray
    valid: np.ndarray
    readings: tuple[tuple[str, np.ndarray, np.ndarray], ...]


def _coordinate(raw: np.ndarray, size: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    """Indices read (their own type) as coordinates of a dimension of
    ``size`` (negative ones of a signed type from the end), and whether
    each lies inside it; 0 where not."""
    if raw.dtype.kind == "u":
        inside = raw < np.asarray(size).astype(np.uint64)
        return np.where(inside, raw, 0).astype(np.int64), inside
    wide = raw.astype(np.int64)
    wide = wide + np.where(wide < 0, size, 0)
    inside = (wide >= 0) & (wide < size)
    return np.where(inside, wide, 0), inside


def _targets(call: ScatterCall, sizes: tuple[int, ...], indices: np.ndarray,
             updates_shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per update element (C order): the output position it is written to,
    whether its indices lie inside, and (rows: update elements, columns:
    output elements) which output elements it could land on if not: a
    boolean of shape (outside updates, output elements)."""
    if not call.nd:
        v, inside = _coordinate(indices, sizes[call.axis])
        coords: list[np.ndarray] = list(np.indices(indices.shape))
        coords[call.axis] = v
        target = np.ravel_multi_index(tuple(coords), sizes).reshape(-1)
        coords[call.axis] = np.zeros_like(v)
        line = np.ravel_multi_index(tuple(coords), sizes).reshape(-1)[~inside.reshape(-1)]  # each line's first
        mine = np.indices(sizes).copy()
        mine[call.axis] = 0
        start = np.ravel_multi_index(tuple(mine), sizes).reshape(-1)
        return target, inside.reshape(-1), start[None, :] == line[:, None]
    data = last(sizes, call.input_rank)
    idx = last(indices.shape, call.indices_rank)
    q = idx[-1]
    tuples = indices.reshape(idx)
    v, inside_each = _coordinate(tuples, np.array(data[:q], dtype=np.int64))
    block = idx[:-1] + data[q:]
    # per update element (columns): the tuple's position, then the trailing coordinates
    upd = np.indices(block).reshape(len(block), int(np.prod(block, dtype=np.int64)))
    lead = len(idx) - 1
    at = np.ravel_multi_index(tuple(upd[:lead]), idx[:-1]) if lead else np.zeros(upd.shape[1], dtype=np.int64)
    picked = v.reshape(-1, q)[at]
    ok_each = inside_each.reshape(-1, q)[at]
    target = np.ravel_multi_index(tuple(np.concatenate([picked.T, upd[lead:]])), data).reshape(-1)
    inside = ok_each.all(axis=1)
    out = np.indices(data).reshape(len(data), -1)
    bad = ~inside
    agree = (out[None, :q, :] == picked[bad][:, :, None]) | ~ok_each[bad][:, :, None]
    same_tail = (out[None, q:, :] == upd[lead:, bad].T[:, :, None]).all(axis=1)
    return target, inside, agree.all(axis=1) & same_tail


def scatter_values(call: ScatterCall, x: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> Scattered:
    """`Scattered` of one call: ``x``, ``indices`` and ``updates`` the
    tensors' logical values (their sizes)."""
    target, inside, could = _targets(call, x.shape, np.ascontiguousarray(indices), updates.shape)
    values = np.ascontiguousarray(updates).reshape(-1)
    expected = np.array(x).reshape(-1)
    source = np.flatnonzero(inside)
    order = np.lexsort((source, target[source]))  # by target, then the updates' C order
    t, s = target[source][order], source[order]
    starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]]) if t.size else np.zeros(0, dtype=np.int64)
    counts = np.diff(np.r_[starts, t.size])
    ends = starts + counts - 1
    expected[t[ends]] = values[s[ends]]
    readings: list[tuple[str, np.ndarray, np.ndarray]] = []
    many = counts > 1
    readings.append(("first", t[starts[many]], values[s[starts[many]]]))
    rank = np.arange(t.size) - np.repeat(starts, counts)
    size = np.repeat(counts, counts)
    for k in range(1, int(counts.max(initial=0)) - 1):
        between = (rank == k) & (k < size - 1)
        readings.append(("other", t[between], values[s[between]]))
    valid: np.ndarray = np.asarray(~could.any(axis=0))
    expected = np.where(valid, expected, np.zeros((), dtype=expected.dtype))
    return Scattered(expected, valid, tuple((n, p[valid[p]], v[valid[p]]) for n, p, v in readings))


def scatter_of(sem: IndexMap, case: Case) -> Scattered:
    """`Scattered` of ``case``."""
    x = case.input(sem.input).view()
    idx = case.input(sem.indices or "IndicesTensor").view()
    upd = case.input(sem.updates or "UpdatesTensor").view()
    return scatter_values(scatter_call(sem, case.attribute_map()), x, idx, upd)


def bind(spec: m.Spec, sem: IndexMap, cases: Sequence[Case]) -> tuple[np.ndarray, np.ndarray, tuple[Alternative, ...]]:
    """The batch's expected output end to end, where a value is expected,
    and the readings of ``duplicate-index`` as STRICT alternatives (the
    marker of the primary reading first, `oracles.base.marker`) at the
    elements where they give another value."""
    found = [scatter_of(sem, c) for c in cases]
    expected = np.concatenate([f.expected for f in found])
    valid = np.concatenate([f.valid for f in found])
    offsets = np.cumsum([0] + [f.expected.size for f in found[:-1]])
    ambiguity = next((a for a in spec.ambiguities if a.id == AMBIGUITY), None)
    if ambiguity is None:
        return expected, valid, ()
    alternatives = []
    for name in ("first", "other"):
        parts = [(p + o, v) for f, o in zip(found, offsets) for n, p, v in f.readings if n == name]
        for position, values in parts:
            differ = (values != expected[position]) & ~(np.isnan(values) & np.isnan(expected[position])) \
                if values.dtype.kind == "f" else values != expected[position]
            if differ.any():
                reading = ambiguity.reading(name)
                alternatives.append(Alternative(f"{PREFIX}{ambiguity.id}:{name}", position[differ], values[differ],
                                                Tier.STRICT, f"{ambiguity.id}: {reading.says if reading else name}"))
    if not alternatives:
        return expected, valid, ()
    return expected, valid, (marker(ambiguity, alternatives, expected), *alternatives)


def example_problem(call: ScatterCall, x: np.ndarray, indices: np.ndarray, updates: np.ndarray,
                    printed: np.ndarray) -> np.ndarray | None:
    """The example's output by the index map (the last update where several
    collide) where ``printed`` is not one of the values some reading gives
    (None: every element is)."""
    found = scatter_values(call, x, indices, updates)
    ok = (printed == found.expected) & found.valid
    for _, position, values in found.readings:
        ok[position] |= printed[position] == values
    return None if ok.all() else found.expected
