"""Cases of the softmax family (ACTIVATION_SOFTMAX, LOG_SOFTMAX, HARDMAX and
their ``1`` versions), and its shape rules.

Issue #24 item 3; docs/softmax.md lists the cases.  They come from the
reviewed semantics (`families.softmax.semantics.Softmax`), the support tables
and the level alone.  Per data type, ``n`` the count of elements a group
reduces jointly:

* ``n<N>/random``, N at 1, 2, 7, 33, 257 and 1000 (the last dimension);
* ``n7/equal`` and ``n8/equal`` (every element alike: softmax 1/n, exact
  where n is a power of 2; hardmax's tie at its first element), ``ties``
  (small integers: hardmax's first-maximum rule);
* adversarial: ``large`` (values near 100: exp overflows float32 unless the
  maximum is subtracted), ``small`` (near -110: exp underflows), ``range``
  (over [-200, 0]: results below the smallest normal), ``nan``, ``posinf``
  (one +inf in a group, two in another), ``neginf`` (one -inf; a group of
  -inf only), ``zeros`` (-0 and +0 as the largest);
* layouts: ``padded`` (rows with gaps holding NaN), ``broadcast`` (the
  input repeated through a stride of 0);
* every dimension count of the table, and with ``Axes``: single axes,
  several, out of order, all of them, and the doc's worked examples;
* negative cases: a data type outside the table, and for the older
  operators an effective rank above the 2 the page allows.

Ids: ``ACTIVATION_SOFTMAX1/FLOAT32/4d/axes=2,0/n8/random``.  A case's
values depend on the seed and its id alone, and ``keep`` is applied before
any value is drawn.  `axes_of` (which dimensions a case reduces) is the one
rule the oracle and the CPU reference share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout
from dmlconform.families.softmax.semantics import Example, Function, Softmax, grouped, ungrouped
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType, FeatureLevel, Spec, numpy_dtype

#: Sizes of the reduced dimension in the random cases (1, 2, not a multiple of common tiles, 1000+).
NS = (1, 2, 7, 33, 257, 1000)
#: Groups beside the reduced dimension (rows), and the 4-D sizes the ``1`` versions' Axes cases use.
_ROWS = 3
_BASE = (2, 3, 4, 5)
#: Axes of the 4-D cases of the ``1`` versions: one, several, out of order, all.
AXES_4D = ((0,), (1,), (2,), (1, 2), (0, 2), (2, 0), (1, 3), (3, 1), (0, 1, 2, 3))
#: Where the adversarial values sit: ``large`` and ``small`` offsets, the ``range`` floor.
_LARGE, _SMALL, _FLOOR = 100.0, -110.0, -200.0


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values: data type, sizes, the axes as the case
    gives them (old operators: the last dimension), what values
    (``data``), the layout (``packed``, ``padded``, ``broadcast``)."""

    dtype: DataType
    sizes: tuple[int, ...]
    axes: tuple[int, ...]
    data: str
    layout: str = "packed"
    supported: bool = True
    example: Example | None = None

    @property
    def n(self) -> int:
        return math.prod(self.sizes[a] for a in self.axes)

    def case_id(self, operator: str, with_axes: bool) -> str:
        parts = [operator, self.dtype.name, f"{len(self.sizes)}d"]
        parts += [f"axes={','.join(map(str, self.axes))}"] if with_axes else []
        parts += [f"n{self.n}", self.data if self.example is None else self.example.name]
        parts += [self.layout] if self.layout != "packed" else []
        return "/".join(parts + ([] if self.supported else ["unsupported"]))


def semantics_of(spec: Spec) -> Softmax:
    """``spec``'s softmax semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, Softmax, "softmax")


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return family.generable(lambda: shapes(spec, level))


def axes_of(sem: Softmax, case: Case) -> tuple[int, ...]:
    """The dimensions ``case`` reduces: its ``Axes`` (in the order given,
    `family.parse_axes`), or the last dimension for an operator without them."""
    rank = len(case.outputs[0].sizes)
    if sem.axes is None:
        return (rank - 1,)
    return family.parse_axes(case.attribute_map().get(sem.axes, ""), name=sem.axes)


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` (from a folder) no call the semantics describe:
    ``Axes`` not a list of distinct dimensions of the output
    (`family.axes_problem`), ``AxisCount`` not their count.  Texts are
    ``problem: fix``."""
    sem = semantics_of(spec)
    if sem.axes is None or not case.outputs:
        return
    attrs, y = case.attribute_map(), case.outputs[0]
    problem = family.axes_problem(attrs, sem.axes, tensor=y.name, rank=len(y.sizes))
    if problem is not None:
        yield problem
        return
    if sem.axis_count is not None:
        counted = family.count_problem(attrs, sem.axis_count, axes_of(sem, case), axes_name=sem.axes)
        if counted is not None:
            yield counted


# -- which cases ------------------------------------------------------------------------------
def shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    ranks = sem.dims_at(level)
    (row,) = family.rows_at(spec, level, ranks, sem.output)
    types = [t for t in row.dtypes if t.is_float]
    per_type = _old_shapes if sem.axes is None else _axes_shapes
    out = [s for t in types for s in per_type(sem, t, ranks)]
    bad = next((t for t in DATA_TYPE_ORDER if t not in row.dtypes and t.is_float), None)
    if bad is not None:
        out.append(replace(out[0], dtype=bad, data="random", supported=False))
    return out


def _rows_of(rank: int, rows: int, n: int) -> tuple[int, ...]:
    """Sizes of ``rank`` dimensions: ``rows`` groups of ``n``, leading ones of size 1."""
    return (n,) if rank == 1 else (1,) * (rank - 2) + (rows, n)


def _common(base: Shape, dtype: DataType, function: Function) -> Iterator[Shape]:
    """The data kinds every operator gets on ``base``'s sizes (n7 or n33)."""
    at = {7: base, 33: replace(base, sizes=base.sizes[:-1] + (33,))}
    yield from (replace(at[7], data="equal"), replace(at[7], sizes=base.sizes[:-1] + (8,), data="equal"))
    yield from (replace(at[7], data=d) for d in ("nan", "posinf", "neginf", "zeros"))
    yield from (replace(at[33], data=d) for d in ("large", "small", "range"))
    if function is Function.HARDMAX:
        yield from (replace(at[7], data="ties"), replace(at[33], data="ties"))
    yield from (replace(at[7], layout="padded"), replace(at[7], layout="broadcast"))


def _old_shapes(sem: Softmax, dtype: DataType, ranks: tuple[int, ...]) -> Iterator[Shape]:
    """The older operators: the last dimension of an effective rank 2 tensor."""
    rep = 4 if 4 in ranks else ranks[0]
    for n in NS:
        sizes = _rows_of(rep, 2 if n >= 1000 else _ROWS, n)
        yield Shape(dtype, sizes, (rep - 1,), "random")
    base = Shape(dtype, _rows_of(rep, _ROWS, 7), (rep - 1,), "random")
    yield from _common(base, dtype, sem.function)
    yield from (Shape(dtype, _rows_of(r, _ROWS, 7), (r - 1,), "random") for r in ranks if r != rep)
    if sem.effective_rank is not None and rep >= 3:  # outside the page's rule: reject, or any honest reading
        sizes = (1,) * (rep - 3) + (2, _ROWS, 5)
        yield Shape(dtype, sizes, (rep - 1,), "random", supported=False)


def _axes_shapes(sem: Softmax, dtype: DataType, ranks: tuple[int, ...]) -> Iterator[Shape]:
    """The ``1`` versions: the last axis at every size, then Axes of every sort."""
    rep = 4 if 4 in ranks else ranks[-1]
    for n in NS:
        sizes = (1,) * (rep - 3) + (2 if n >= 1000 else _ROWS, 2, n) if rep >= 3 else _rows_of(rep, _ROWS, n)
        yield Shape(dtype, sizes, (rep - 1,), "random")
    base = Shape(dtype, (1,) * max(rep - 3, 0) + (_ROWS, 2, 7)[-rep:], (rep - 1,), "random")
    yield from _common(base, dtype, sem.function)
    if rep == 4:
        yield from (Shape(dtype, _BASE, axes, "random") for axes in AXES_4D)
        yield from (Shape(dtype, _BASE, axes, d) for axes in ((0, 2), (2, 0)) for d in ("posinf", "nan", "ties"))
        yield from (Shape(dtype, e.sizes, e.axes, "example", example=e) for e in sem.examples)
    for r in ranks:
        if r != rep:
            sizes = tuple(2 if i % 2 else 3 for i in range(r))
            yield Shape(dtype, sizes, (r - 1,), "random")
            if r > 1:
                yield Shape(dtype, sizes, tuple(range(0, r, 2)), "random")


# -- values and tensors -----------------------------------------------------------------------
def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (the module docstring) that
    ``keep(id, data type)`` accepts, without the negative ones where not
    ``negative``; identical for a ``seed``.  ``large`` adds nothing."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    named = lambda s: s.case_id(spec.operator, sem.axes is not None)  # noqa: E731
    for case_id, shape in family.selected(shapes(spec, level), named, keep, negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)


def _case(spec: Spec, sem: Softmax, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    x = values(shape, np.random.default_rng(stream_key(seed, case_id, sem.input)))
    attrs: tuple[tuple[str, float | int | bool | str], ...] = ()
    if sem.axes is not None and sem.axis_count is not None:
        given: dict[str, int | str] = {sem.axis_count: len(shape.axes), sem.axes: ",".join(map(str, shape.axes))}
        attrs = tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)
    layout = {"padded": Layout.PADDED, "broadcast": Layout.BROADCAST}.get(shape.layout, Layout.PACKED)
    edges = tuple(sorted({shape.data} | ({"nan"} if shape.data == "nan" else set())))
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype,
                inputs=(family.input_tensor(sem.input, shape.dtype, x, padded=shape.layout == "padded",
                                            broadcast_dim=broadcast_dim(shape)),),
                outputs=(family.output_tensor(sem.output, shape.dtype, shape.sizes,
                                              padded=shape.layout == "padded"),),
                attributes=attrs,
                layout=layout, expect_supported=shape.supported, edges=edges, seed=seed)


def values(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """The input's logical values in the case's type, by its ``data`` kind."""
    nt = numpy_dtype(shape.dtype)
    if shape.example is not None:
        return np.array(shape.example.values).reshape(shape.sizes).astype(nt)
    sizes = tuple(1 if d == broadcast_dim(shape) else s for d, s in enumerate(shape.sizes))
    x = rng.uniform(-4.0, 4.0, size=sizes)
    kind = shape.data
    if kind in ("ties", "zeros"):
        x = rng.integers(-2, 3, size=sizes).astype(np.float64)
    elif kind in ("large", "small", "range"):
        x = {"large": _LARGE + rng.uniform(0, 8, sizes), "small": _SMALL + rng.uniform(0, 8, sizes),
             "range": rng.uniform(_FLOOR, 0, sizes)}[kind]
    elif kind == "equal":
        x = np.full(sizes, 0.5)
    x = np.broadcast_to(x, shape.sizes).astype(nt)
    return _plant(kind, x, shape.axes) if kind in ("nan", "posinf", "neginf", "zeros") else x


def _plant(kind: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Special values in the first two groups (group 0 in its middle, group 1 at its start or whole)."""
    rows = grouped(x, tuple(sorted(axes))).copy()
    n = rows.shape[-1]
    flat = rows.reshape(-1, n)
    if kind == "nan":
        flat[0, n // 2] = np.nan
        flat[1 % len(flat), 0] = np.nan
    elif kind == "posinf":
        flat[0, n // 2] = np.inf
        flat[1 % len(flat), [0, n - 1]] = np.inf
    elif kind == "neginf":
        flat[0, n // 2] = -np.inf
        flat[1 % len(flat), :] = -np.inf
    else:  # zeros: -0 before +0 as the largest in group 0, +0 before -0 in group 1
        flat[:, :] = -np.abs(flat) - 1
        flat[0, :2] = (-0.0, 0.0)
        flat[1 % len(flat), :2] = (0.0, -0.0)
    return ungrouped(flat.reshape(rows.shape), x.shape, tuple(sorted(axes)))


def broadcast_dim(shape: Shape) -> int | None:
    """The dimension a ``broadcast`` case repeats through a stride of 0:
    the first of size above 1 that is not reduced (None: not broadcast)."""
    if shape.layout != "broadcast":
        return None
    return next(d for d, size in enumerate(shape.sizes) if size > 1 and d not in shape.axes)

