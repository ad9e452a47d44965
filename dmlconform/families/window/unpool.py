"""MAX_UNPOOLING's cases and shape rules (issue #35; docs/window.md "MAX_UNPOOLING").

The page: the output is zero but where ``IndicesTensor`` names an element
("zero-based, and treat the output tensor as a contiguous one-dimensional
array": the flat index of the *logical* output in C order, as MAX_POOLING1's
indices are of the logical input), which gets the input value beside that
index.  Per data type of the table:

* ``pooled-k2-s2``, ``pooled-k3-s2``, ``pooled-k3-s1-pad1``: the values and
  indices of a real max pooling of a drawn tensor of the output's sizes
  (the last two with overlapping windows: one index repeated, with equal
  values, as a real pipeline gives it);
* ``repeated``: per (batch, channel) plane, as many indices as the plane
  has elements, drawn with repeats, each with its own value (which one
  wins is the ``repeated-index`` ambiguity);
* ``boundary``: distinct indices over the whole tensor (across planes),
  the first and the last element among them;
* ``extremes`` data (floats: +-0, +-inf, NaN, the largest and the smallest
  subnormal; integers: min and max), ``padded`` strides on every tensor
  (the index is logical, not the buffer's offset), UINT64 indices
  (``idx64``) where the table has them;
* negative cases: an index at the output's element count (``out-of-range``:
  refused, or it writes nothing and the rest is right), a data type, an
  index type and a dimension count outside the table.

Ids: ``MAX_UNPOOLING/FLOAT32/4d/pooled-k3-s2/random``.  A case's values
depend on the seed and its id alone; ``keep`` is applied before any value
is drawn.  `operands` is the shape rule the oracle and the reference share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout
from dmlconform.families.window.semantics import Window
from dmlconform.limits import MAX_CASE_WORK
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType, FeatureLevel, Spec, numpy_dtype

# -- the shape rule ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Unpooling:
    """A MAX_UNPOOLING call's tensors: ``x`` and ``indices`` (int64, the
    logical input's C order), both flat, ``size`` the output's element count
    and ``sizes`` its sizes.  An index at or past ``size`` (a UINT64 above
    int64's range included) reads as ``size``."""

    x: np.ndarray
    indices: np.ndarray
    size: int
    sizes: tuple[int, ...]


def operands(sem: Window, case: Case, buffers: Mapping[str, np.ndarray] | None = None) -> Unpooling:
    """``case``'s input and indices through their sizes and strides (over ``buffers`` where given)."""
    def view(name: str) -> np.ndarray:
        tensor = case.input(name)
        return tensor.view(None if buffers is None else buffers.get(name))

    out = next(o for o in case.outputs if o.name == sem.output)
    size = math.prod(out.sizes)
    raw = view(sem.input_indices or "").reshape(-1)
    indices = np.where(raw.astype(np.uint64) >= np.uint64(size), size, raw.astype(np.int64) if raw.size else raw)
    return Unpooling(view(sem.input).reshape(-1), indices.astype(np.int64), size, out.sizes)


def unpool_problems(sem: Window, case: Case) -> Iterator[str]:
    """What makes ``case`` no unpooling: input and indices of different sizes,
    an output of another dimension count, more elements than a case may have."""
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    x, idx, out = tensors.get(sem.input), tensors.get(sem.input_indices or ""), tensors.get(sem.output)
    if x is None or idx is None or out is None:
        return
    if idx.sizes != x.sizes:
        yield f"{idx.name}'s sizes {list(idx.sizes)} are not {x.name}'s {list(x.sizes)}: give it those (one index a value)"
    if out.dimension_count != x.dimension_count:
        yield f"{out.name} has {out.dimension_count} dimensions, {x.name} {x.dimension_count}: give both the same count"
    work = math.prod(out.sizes) + math.prod(x.sizes)
    if work > MAX_CASE_WORK:
        yield f"{work:,} elements are over the {MAX_CASE_WORK:,} one case may ask for (limits.MAX_CASE_WORK)"


# -- which cases ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnpoolShape:
    """One case before its values: the output's sizes, how the indices are
    made (``name``: a pooling's ``pooled-k<K>-s<S>[-pad<P>]``, ``repeated``,
    ``boundary``), the data kind, the index type and the layout."""

    dtype: DataType
    name: str
    data: str = "random"
    rank: int = 4
    output: tuple[int, ...] = (2, 3, 6, 8)
    index_type: DataType = DataType.UINT32
    padded: bool = False
    supported: bool = True
    out_of_range: bool = False
    tags: tuple[str, ...] = field(default=())

    def case_id(self, operator: str) -> str:
        return "/".join([operator, self.dtype.name, f"{self.rank}d", self.name, self.data, *self.tags])


#: The index kinds, each with the output's sizes: pooled (window, stride, padding), repeated, boundary.
KINDS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("pooled-k2-s2", (2, 3, 6, 8)), ("pooled-k3-s2", (2, 3, 7, 9)), ("pooled-k3-s1-pad1", (2, 3, 5, 6)),
    ("repeated", (2, 3, 4, 5)), ("boundary", (2, 3, 5, 7)))


def shapes(spec: Spec, sem: Window, level: FeatureLevel) -> list[UnpoolShape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    ranks = sem.dims_at(level)
    rows = family.rows_at(spec, level, ranks, sem.input, sem.input_indices or "")
    types, index_types = rows[0].dtypes, rows[1].dtypes
    index = DataType.UINT32 if DataType.UINT32 in index_types else index_types[0]
    rank = ranks[0]
    out: list[UnpoolShape] = []
    for dtype in types:
        base = UnpoolShape(dtype, "", rank=rank, index_type=index)
        out += [replace(base, name=name, output=sizes) for name, sizes in KINDS]
        out.append(replace(base, name="repeated", output=KINDS[3][1], data="extremes"))
        out.append(replace(base, name="pooled-k3-s2", output=KINDS[1][1], padded=True, tags=("padded",)))
        out += [replace(base, name="repeated", output=KINDS[3][1], index_type=t, tags=("idx64",))
                for t in index_types if t is DataType.UINT64 and t is not index]
    first = types[0]
    negative = UnpoolShape(first, "pooled-k2-s2", rank=rank, index_type=index, supported=False)
    out.append(replace(negative, out_of_range=True, tags=("out-of-range",)))
    bad_type = next((t for t in DATA_TYPE_ORDER if t not in types and t.is_float), None)
    if bad_type is not None:
        out.append(replace(negative, dtype=bad_type, tags=("unsupported",)))
    bad_index = next((t for t in (DataType.INT32, DataType.UINT16) if t not in index_types), None)
    if bad_index is not None:
        out.append(replace(negative, index_type=bad_index, tags=(f"indices-{bad_index.name}", "unsupported")))
    bad_rank = next((r for r in (5, 3) if r not in ranks), None)
    if bad_rank is not None:
        out.append(replace(negative, rank=bad_rank, output=(2, 3, 6, 8, 4)[:bad_rank], tags=("unsupported",)))
    return out


# -- values and tensors --------------------------------------------------------------------------------


def _draw(dtype: DataType, data: str, sizes: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values in ``dtype``: uniform in [-1, 1) (floats) or over the whole range (integers); ``extremes`` picks."""
    nt = numpy_dtype(dtype)
    if dtype.is_float:
        if data == "extremes":
            f = np.finfo(nt)
            picks = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, f.max, -f.max, f.smallest_subnormal,
                              -f.smallest_subnormal, 1.0], nt)
            return picks[rng.integers(0, picks.size, size=sizes)]
        return rng.uniform(-1.0, 1.0, size=sizes).astype(nt)
    info = np.iinfo(nt)
    if data == "extremes":
        picks = np.array([info.min, info.min + 1, info.max - 1, info.max, 0, 1], nt)
        return picks[rng.integers(0, picks.size, size=sizes)]
    return rng.integers(info.min, info.max, size=sizes, dtype=nt, endpoint=True)


def pooled(original: np.ndarray, window: int, stride: int, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """A max pooling of ``original`` (N, C, H, W) over square windows: each
    window's largest value and the flat index (over the whole tensor, C
    order) of its first occurrence, padding never chosen.  The cases' data
    alone (what a real MAX_POOLING1 would give to feed the unpooling)."""
    _, rank = np.unique(original.reshape(-1), return_inverse=True)  # equal values one rank, NaN above all
    flat = np.arange(original.size, dtype=np.int64).reshape(original.shape)
    spread = [(0, 0), (0, 0), (pad, pad), (pad, pad)]
    ranks = np.pad(rank.reshape(original.shape).astype(np.int64), spread, constant_values=-1)
    where = np.pad(flat, spread, constant_values=-1)
    views = [sliding_window_view(a, (window, window), axis=(2, 3))[:, :, ::stride, ::stride] for a in (ranks, where)]
    lead = views[0].shape[:4]
    best = np.argmax(views[0].reshape(*lead, -1), axis=-1)[..., None]
    index = np.take_along_axis(views[1].reshape(*lead, -1), best, -1)[..., 0]
    return original.reshape(-1)[index], index


def _indices(shape: UnpoolShape, rng: np.random.Generator, original: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The input values and their indices for ``shape``'s kind."""
    sizes = shape.output
    if shape.name.startswith("pooled"):
        window, stride, *pad = (int(p[1:] if p[0] in "ks" else p[3:]) for p in shape.name.split("-")[1:])
        return pooled(original, window, stride, pad[0] if pad else 0)
    plane = math.prod(sizes[2:])
    lead = sizes[:2] if len(sizes) > 2 else sizes[:1]
    if shape.name == "repeated":  # per plane, as many indices as elements, with repeats
        offsets = np.arange(math.prod(lead), dtype=np.int64).reshape(*lead, 1) * plane
        index = (offsets + rng.integers(0, plane, size=(*lead, plane))).reshape(sizes)
    else:  # boundary: distinct over the whole tensor, the first and last element among them
        count = math.prod(lead) * math.prod(_spatial_half(sizes))
        index = rng.permutation(math.prod(sizes))[:count]
        index[rng.permutation(count)[:2]] = [0, math.prod(sizes) - 1]
        index = index.reshape(*lead, *_spatial_half(sizes))
    return _draw(shape.dtype, shape.data, index.shape, rng), index


def _spatial_half(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The input's spatial sizes for ``boundary``: the output's, the last one halved (rounded up)."""
    spatial = sizes[2:]
    return (*spatial[:-1], (spatial[-1] + 1) // 2) if spatial else ()


def _case(spec: Spec, sem: Window, level: FeatureLevel, seed: int, case_id: str, shape: UnpoolShape) -> Case:
    rng = np.random.default_rng(stream_key(seed, case_id, sem.input))
    if shape.rank == 4:
        x, index = _indices(shape, rng, _draw(shape.dtype, shape.data, shape.output, rng))
    else:  # another dimension count: the indices of a 1-element window, a permutation
        index = rng.permutation(math.prod(shape.output)).reshape(shape.output)
        x = _draw(shape.dtype, shape.data, shape.output, rng)
    if shape.out_of_range:
        index = index.copy()
        index.reshape(-1)[index.size // 2] = math.prod(shape.output)
    nt = numpy_dtype(shape.index_type)
    with np.errstate(invalid="ignore"):  # the padded gaps' NaN, cast to an integer type
        inputs = (family.input_tensor(sem.input, shape.dtype, x.astype(numpy_dtype(shape.dtype)), padded=shape.padded),
                  family.input_tensor(sem.input_indices or "", shape.index_type, index.astype(nt),
                                      padded=shape.padded))
    outputs = (family.output_tensor(sem.output, shape.dtype, shape.output, padded=shape.padded),)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=inputs, outputs=outputs,
                attributes=(), layout=Layout.PADDED if shape.padded else Layout.PACKED,
                expect_supported=shape.supported, edges=(shape.data,), seed=seed)


def generate(spec: Spec, sem: Window, level: FeatureLevel, *, seed: int, negative: bool,
             keep: Callable[[str, DataType], bool] | None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (`families.window.cases.generate` hands MAX_UNPOOLING here)."""
    for case_id, shape in family.selected(shapes(spec, sem, level), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)
