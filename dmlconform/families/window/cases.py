"""Cases of the window family (CONVOLUTION), and its shape rules.

Issue #35 item 3; DESIGN.md "Cases".  A window operator is described by
the reviewed semantics of its spec (`families.window.semantics.Window`),
so the cases come from those, the support tables and the level alone.
Per data type, each geometry (`FORWARD`, `BACKWARD`) in
``DML_CONVOLUTION_MODE_CROSS_CORRELATION`` and the flip-sensitive ones in
``DML_CONVOLUTION_MODE_CONVOLUTION`` too, with:

* ``exact``: integers small enough that every partial sum, in any order,
  is exact in the accumulator and the output (the oracle then requires
  0 ULP: a dropped tap at a border cannot hide);
* ``random``: values uniform in [-1, 1);
* adversarial (``k3``): ``cancel`` (channel pairs that cancel, the bias
  left), ``range`` (magnitudes over 2^-e .. 2^e) and ``nan`` (one NaN in
  the input: the outputs whose window reads it are NaN);
* ``padded`` (every tensor with gaps holding NaN), the other dimension
  counts of the table (1D and 3D spatial), batch 2 everywhere;
* with ``large``: the convolution of the issue, 1x64x56x56 by 64x64x3x3;
* negative cases: a data type and a dimension count outside the table.

Ids: ``CONVOLUTION/FLOAT32/4d/forward/cross/k3/exact``.  A case's values
depend on the seed and its id alone (a Generator per tensor from
`draws.stream_key`), and ``keep`` is applied before any value is drawn.

The shape rules (`geometry`, `output_sizes`, `operands`) are the one thing
the oracle and the CPU reference share: what each attribute means for the
sizes, never which input a window reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData
from dmlconform.compare import finfo
from dmlconform.families.window import fold, unpool
from dmlconform.families.window.activation import FUSED, activation
from dmlconform.families.window.semantics import BACKWARD, CONVOLUTION, CROSS_CORRELATION, FORWARD, Window
from dmlconform.limits import MAX_CASE_WORK
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType, FeatureLevel, Spec, numpy_dtype

# -- the shape rules ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Geometry:
    """A convolution's attributes, read: per spatial dimension its stride,
    dilation, start and end padding and output padding; the group count,
    whether the mode is CONVOLUTION (``flipped``: the filter reversed along
    every spatial dimension in the forward direction) and whether the
    direction is BACKWARD (``transposed``)."""

    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    start: tuple[int, ...]
    end: tuple[int, ...]
    output_padding: tuple[int, ...]
    groups: int = 1
    flipped: bool = False
    transposed: bool = False
    include_padding: bool = False


def semantics_of(spec: Spec) -> Window:
    """``spec``'s window semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, Window, "window")


def geometry(sem: Window, case: Case) -> Geometry:
    """The attributes of ``case`` as a `Geometry` (defaults where the
    operator has no such attribute: stride and dilation 1, no padding, one
    group); ValueError naming the attribute where one is no list of whole
    numbers of the spatial dimension count."""
    attrs = case.attribute_map()
    spatial = case.inputs[0].dimension_count - 2

    def array(name: str | None, default: int) -> tuple[int, ...]:
        if name is None or name not in attrs:
            return (default,) * spatial
        values = family.parse_axes(attrs[name], name=name)
        if len(values) != spatial:
            raise ValueError(f"{name}={attrs[name]!r} gives {len(values)} values for {spatial} spatial dimensions: "
                             f"give {spatial}, comma-separated")
        return values

    groups = int(attrs.get(sem.group_count, 1)) if sem.group_count else 1
    return Geometry(array(sem.strides, 1), array(sem.dilations, 1), array(sem.start_padding, 0),
                    array(sem.end_padding, 0), array(sem.output_padding, 0), groups,
                    attrs.get(sem.mode) == CONVOLUTION if sem.mode else False,
                    attrs.get(sem.direction) == BACKWARD if sem.direction else False,
                    bool(attrs.get(sem.include_padding, False)) if sem.include_padding else False)


def window(sem: Window, case: Case) -> tuple[int, ...]:
    """The window's spatial sizes: the filter's (a convolution) or the
    ``WindowSize`` attribute's (pooling); ValueError as `geometry`."""
    if sem.filter is not None:
        return case.input(sem.filter).sizes[2:]
    text = case.attribute_map().get(sem.window_size or "", "")
    return family.parse_axes(text, name=sem.window_size or "WindowSize")


def power(sem: Window, case: Case) -> int:
    """An Lp pooling's P (the ``power`` field); ValueError naming it where it is no whole number of 1 or more."""
    text = str(case.attribute_map().get(sem.power or "", ""))
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{sem.power}={text!r}: give a whole number of 1 or more (the P of the Lp norm)")
    return int(text)


def output_sizes(geo: Geometry, input_spatial: tuple[int, ...], kernel: tuple[int, ...]) -> tuple[int, ...]:
    """The spatial sizes of the output: forward, the windows that fit the
    padded input, ``(I + start + end - ((K - 1) D + 1)) // S + 1``;
    backward, the adjoint's, ``(I - 1) S + (K - 1) D + 1 - start - end +
    output padding``."""
    out = []
    for i, k, s, d, a, b, p in zip(input_spatial, kernel, geo.strides, geo.dilations, geo.start, geo.end,
                                   geo.output_padding):
        span = (k - 1) * d + 1
        out.append((i - 1) * s + span - a - b + p if geo.transposed else (i + a + b - span) // s + 1)
    return tuple(out)


@dataclass(frozen=True, slots=True, eq=False)
class Operands:
    """A convolution's tensors as logical read-only arrays: ``x`` (N, C,
    spatial...), ``w`` (the filter as stored), ``bias`` ((M,) or None)."""

    x: np.ndarray
    w: np.ndarray
    bias: np.ndarray | None


def operands(sem: Window, case: Case, buffers: Mapping[str, np.ndarray] | None = None) -> Operands:
    """Each tensor viewed through its sizes and strides (over ``buffers``
    where given, else the case's own); the bias as one value per output
    channel."""
    def view(name: str | None) -> np.ndarray | None:
        tensor = next((t for t in case.inputs if t.name == name), None)
        return None if tensor is None else tensor.view(None if buffers is None else buffers.get(tensor.name))

    x, w = view(sem.input), view(sem.filter)
    if x is None or w is None:
        raise ValueError(f"{case.id}: a convolution needs {sem.input} and {sem.filter}")
    bias = view(sem.bias)
    return Operands(x, w, None if bias is None else bias.reshape(-1))


@dataclass(frozen=True, slots=True, eq=False)
class IntegerOperands:
    """An integer convolution's tensors as logical read-only arrays: ``x``,
    ``w`` and the zero points as stored (None: absent), ``w_zero`` ((1,) or
    (M,): per tensor or per output channel)."""

    x: np.ndarray
    w: np.ndarray
    x_zero: np.ndarray | None
    w_zero: np.ndarray | None


def integer_operands(sem: Window, case: Case, buffers: Mapping[str, np.ndarray] | None = None) -> IntegerOperands:
    """`operands` of CONVOLUTION_INTEGER: the zero points flat (one value, or one per output channel)."""
    def view(name: str | None) -> np.ndarray | None:
        tensor = next((t for t in case.inputs if t.name == name), None)
        return None if tensor is None else tensor.view(None if buffers is None else buffers.get(tensor.name))

    x, w, xz, wz = (view(n) for n in (sem.input, sem.filter, sem.input_zero_point, sem.filter_zero_point))
    if x is None or w is None:
        raise ValueError(f"{case.id}: a convolution needs {sem.input} and {sem.filter}")
    return IntegerOperands(x, w, None if xz is None else xz.reshape(-1), None if wz is None else wz.reshape(-1))


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no convolution its semantics describe (a case
    folder's fault): tensors of different dimension counts, attributes that
    do not parse, channels the groups do not divide, a filter or bias of
    the wrong sizes, an output whose sizes are not the geometry's.  Texts
    are ``problem: fix``."""
    sem = semantics_of(spec)
    if sem.operation == "max_unpooling":
        yield from unpool.unpool_problems(sem, case)
        return
    if sem.operation in fold.FOLDS:
        yield from fold.case_problems(sem, case)
        return
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    if sem.filter is None:
        yield from _pooling_problems(sem, case, tensors)
        return
    x, w, out = tensors.get(sem.input), tensors.get(sem.filter or ""), tensors.get(sem.output)
    if x is None or w is None or out is None:
        return
    ranks = {t.name: t.dimension_count for t in (x, w, out)}
    if len(set(ranks.values())) != 1 or x.dimension_count < 3:
        yield f"dimension counts {ranks} differ or are below 3: give every tensor {{N, C, spatial...}}, 3 to 5 of them"
        return
    try:
        geo = geometry(sem, case)
        activation(sem, case)
    except ValueError as exc:
        yield str(exc)
        return
    yield from _channel_problems(sem, geo, x, w, out, tensors.get(sem.bias or ""))
    wanted = output_sizes(geo, x.sizes[2:], w.sizes[2:])
    if out.sizes[2:] != wanted:
        yield (f"{out.name}'s spatial sizes {list(out.sizes[2:])} are not the geometry's {list(wanted)} (input "
               f"{list(x.sizes[2:])}, filter {list(w.sizes[2:])}): give {out.name} sizes "
               f"{[out.sizes[0], out.sizes[1], *wanted]}")
    work = math.prod(out.sizes) * math.prod(w.sizes[1:])
    if work > MAX_CASE_WORK:
        yield (f"{work:,} products are over the {MAX_CASE_WORK:,} one case may ask for (limits.MAX_CASE_WORK): "
               "give smaller tensors")


def _pooling_problems(sem: Window, case: Case, tensors: Mapping[str, TensorData]) -> Iterator[str]:
    """A pooling's: input and output of one dimension count (3 or more), a
    window of that many spatial sizes, the output's sizes the geometry's."""
    x, out = tensors.get(sem.input), tensors.get(sem.output)
    if x is None or out is None:
        return
    if x.dimension_count != out.dimension_count or x.dimension_count < 3 or out.sizes[:2] != x.sizes[:2]:
        yield (f"{x.name} {list(x.sizes)} and {out.name} {list(out.sizes)}: give both {{N, C, spatial...}}, the same "
               "N and C")
        return
    try:
        geo, kernel = geometry(sem, case), window(sem, case)
        if sem.power is not None:
            power(sem, case)
    except ValueError as exc:
        yield str(exc)
        return
    if len(kernel) != x.dimension_count - 2 or min(kernel, default=0) < 1:
        yield f"{sem.window_size}={list(kernel)}: give {x.dimension_count - 2} sizes of 1 or more"
        return
    wanted = output_sizes(geo, x.sizes[2:], kernel)
    if out.sizes[2:] != wanted:
        yield (f"{out.name}'s spatial sizes {list(out.sizes[2:])} are not the geometry's {list(wanted)}: give "
               f"{out.name} sizes {[*out.sizes[:2], *wanted]}")
    indices = tensors.get(sem.indices or "")
    if indices is not None and indices.sizes != out.sizes:
        yield f"{indices.name}'s sizes {list(indices.sizes)} are not {out.name}'s {list(out.sizes)}: give it those"


def _channel_problems(sem: Window, geo: Geometry, x: TensorData, w: TensorData, out: TensorData,
                      bias: TensorData | None) -> Iterator[str]:
    """The channel counts: C and M divisible by the groups, the filter
    {M, C/G, ...} forward and {C, M/G, ...} backward, the bias {1, M, 1...}."""
    c, m = x.sizes[1], out.sizes[1]
    if geo.groups < 1 or c % geo.groups or m % geo.groups:
        yield f"{sem.group_count}={geo.groups} does not divide the channels ({c} in, {m} out): give a divisor of both"
        return
    want = (c, m // geo.groups) if geo.transposed else (m, c // geo.groups)
    if w.sizes[:2] != want or out.sizes[0] != x.sizes[0]:
        yield (f"{w.name} sizes {list(w.sizes)} begin with {list(w.sizes[:2])}, not {list(want)}, or the batch "
               f"sizes differ: give {w.name} {[*want, *w.sizes[2:]]}")
    if bias is not None and bias.sizes != (1, m) + (1,) * (bias.dimension_count - 2):
        yield f"{bias.name} sizes {list(bias.sizes)} are not {{1, {m}, 1...}}: give one value per output channel"


# -- which cases ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values: the geometry per spatial dimension
    (given for 3 spatial dimensions, the last ``rank - 2`` used), the
    channels, the data and the layout."""

    dtype: DataType
    rank: int
    name: str
    data: str = "random"
    direction: str = FORWARD
    mode: str = CROSS_CORRELATION
    size: tuple[int, int, int] = (7, 7, 7)
    kernel: tuple[int, int, int] = (3, 3, 3)
    strides: tuple[int, int, int] = (1, 1, 1)
    dilations: tuple[int, int, int] = (1, 1, 1)
    start: tuple[int, int, int] = (1, 1, 1)
    end: tuple[int, int, int] = (1, 1, 1)
    output_padding: tuple[int, int, int] = (0, 0, 0)
    channels: tuple[int, int] = (4, 6)
    groups: int = 1
    batch: int = 2
    bias: bool = True
    padded: bool = False
    supported: bool = True
    include_padding: bool = False
    index_type: DataType | None = None
    power: int = 2
    tags: tuple[str, ...] = field(default=())
    fused: str = ""

    def case_id(self, operator: str, convolution: bool = True) -> str:
        direction = "backward" if self.direction == BACKWARD else "forward"
        mode = "conv" if self.mode == CONVOLUTION else "cross"
        extra = [t for t in self.tags if t]
        head = [operator, self.dtype.name, f"{self.rank}d"] + ([direction, mode] if convolution else [])
        return "/".join([*head, self.name, self.data, *extra])

    def spatial(self, values: tuple[int, int, int]) -> tuple[int, ...]:
        return values[3 - (self.rank - 2):] if self.rank <= 5 else (values[0],) * (self.rank - 5) + values


def _same(v: int) -> tuple[int, int, int]:
    return (v, v, v)


#: The forward geometries: 1x1, 3x3, 5x5, a kernel larger than the input, asymmetric padding, stride
#: above the kernel, dilation, groups 2 and C (depthwise), no bias, all at once.
FORWARD_SHAPES: tuple[dict[str, object], ...] = (
    {"name": "k1", "kernel": _same(1), "start": _same(0), "end": _same(0)},
    {"name": "k3"},
    {"name": "k5", "kernel": _same(5), "start": _same(2), "end": _same(2)},
    {"name": "k5-over", "size": _same(3), "kernel": _same(5), "start": _same(2), "end": _same(2)},
    {"name": "asym-pad", "start": (2, 0, 1), "end": (0, 2, 1)},
    {"name": "stride3-k2", "size": _same(8), "kernel": _same(2), "strides": _same(3), "start": _same(0),
     "end": _same(0)},
    {"name": "dilation2", "dilations": (2, 2, 3), "start": _same(2), "end": (2, 2, 1)},
    {"name": "groups2", "groups": 2},
    {"name": "depthwise", "groups": 4, "channels": (4, 4)},
    {"name": "nobias", "bias": False},
    {"name": "mixed", "size": (8, 9, 10), "kernel": (2, 3, 4), "strides": (2, 2, 3), "dilations": (2, 1, 2),
     "start": (0, 1, 3), "end": (1, 0, 2), "groups": 2},
)
#: The transposed (BACKWARD) geometries: stride 2 with output padding, 1x1, stride 1, dilation with
#: asymmetric padding, output padding 2 at stride 3, groups 2, no bias.
BACKWARD_SHAPES: tuple[dict[str, object], ...] = (
    {"name": "k3-s2-outpad1", "size": _same(4), "strides": _same(2), "output_padding": _same(1)},
    {"name": "k1", "kernel": _same(1), "start": _same(0), "end": _same(0)},
    {"name": "k3"},
    {"name": "dilation2-asym", "size": _same(4), "strides": _same(2), "dilations": _same(2), "start": (0, 2, 1),
     "end": (1, 0, 2)},
    {"name": "k2-s3-outpad2", "size": _same(3), "kernel": _same(2), "strides": _same(3), "start": _same(0),
     "output_padding": _same(2)},
    {"name": "groups2", "size": _same(4), "strides": _same(2), "groups": 2},
    {"name": "nobias", "size": _same(4), "strides": _same(2), "bias": False},
)
#: The geometries also run in DML_CONVOLUTION_MODE_CONVOLUTION (asymmetric, where a missing or extra flip shows).
FLIPPED = {FORWARD: ("k3", "k5-over", "asym-pad", "dilation2", "groups2", "mixed"),
           BACKWARD: ("k3-s2-outpad1", "dilation2-asym")}
#: The geometries of the other dimension counts (1D and 3D spatial).
OTHER_RANKS = {FORWARD: ("k3", "mixed"), BACKWARD: ("k3-s2-outpad1",)}
#: Data kinds drawn for every geometry, and the adversarial ones of ``k3`` forward.
DATA = ("exact", "random")
ADVERSARIAL = ("cancel", "range", "nan")


def shapes(spec: Spec, level: FeatureLevel, *, large: bool) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    ranks = tuple(d for d in sem.dims_at(level) if 3 <= d <= 5)
    (row,) = family.rows_at(spec, level, ranks, sem.output)
    rep = 4 if 4 in ranks else ranks[0]
    if sem.operation == "max_pooling":
        index_types = family.rows_at(spec, level, ranks, sem.indices)[0].dtypes if sem.indices else ()
        out = [s for t in row.dtypes for s in _max_per_dtype(t, rep, ranks, index_types, sem)]
    elif sem.operation == "convolution_integer":
        (inputs,) = family.rows_at(spec, level, ranks, sem.input)
        return list(_integer_shapes(inputs.dtypes, rep, ranks))
    else:
        types = [t for t in row.dtypes if t.is_float]
        make = {"convolution": _per_dtype, "lp_pooling": _lp_per_dtype}.get(sem.operation, _pooling_per_dtype)
        out = [s for i, t in enumerate(types) for s in make(t, rep, ranks, large and i == 0, sem)]
    pooling = {} if sem.operation == "convolution" else {"channels": (3, 3), "bias": False}
    return out + [replace(s, **pooling) for s in  # type: ignore[arg-type]
                  _negatives(next((t for t in row.dtypes if t.is_float), row.dtypes[0]), rep, ranks, row.dtypes)]


def _per_dtype(dtype: DataType, rep: int, ranks: tuple[int, ...], large: bool, sem: Window) -> Iterator[Shape]:
    for direction, table in ((FORWARD, FORWARD_SHAPES), (BACKWARD, BACKWARD_SHAPES)):
        for given in table:
            base = replace(Shape(dtype, rep, "", direction=direction), **given)  # type: ignore[arg-type]
            modes = (CROSS_CORRELATION, CONVOLUTION) if base.name in FLIPPED[direction] else (CROSS_CORRELATION,)
            yield from (replace(base, mode=mode, data=data) for mode in modes for data in DATA)
            for rank in (r for r in ranks if r != rep and base.name in OTHER_RANKS[direction]):
                yield from (replace(base, rank=rank, data=data) for data in DATA)
                if len(modes) > 1:  # exact: the flip-axes reading has no bound of its own (`oracle`)
                    yield replace(base, rank=rank, mode=CONVOLUTION, data="exact")
    k3 = Shape(dtype, rep, "k3")
    yield from (replace(k3, data=data) for data in ADVERSARIAL)
    yield replace(k3, padded=True, tags=("padded",))
    if sem.fused_activation:  # each fusable activation (`activation.FUSED`); relu exact; one transposed
        yield from (replace(k3, tags=(f"fused={tag}",), fused=text) for tag, text in FUSED)
        yield replace(k3, data="exact", tags=("fused=relu",), fused="ACTIVATION_RELU")
        yield Shape(dtype, rep, "k3", direction=BACKWARD, tags=("fused=tanh",), fused="ACTIVATION_TANH")
    if large:
        yield replace(k3, rank=4, size=(1, 56, 56), batch=1, channels=(64, 64), tags=("large",))


#: The zero points of an integer convolution's cases: none, per tensor, the filter's per output channel.
ZERO_POINTS = ("zp-none", "zp-tensor", "zp-channel")


def _integer_shapes(types: tuple[DataType, ...], rep: int, ranks: tuple[int, ...]) -> Iterator[Shape]:
    """CONVOLUTION_INTEGER: per input type, each forward geometry (no bias:
    the operator has none) with both zero points per tensor on random data
    (the type's whole range), 3x3 with the other `ZERO_POINTS` kinds, the
    type's extremes (per-channel zero points), the filter of the other
    type, the other dimension counts, padded strides; negatives: INT16 and
    a dimension count outside the table."""
    for dtype in types:
        for given in FORWARD_SHAPES:
            if given["name"] != "nobias":
                yield replace(Shape(dtype, rep, "", bias=False, tags=("zp-tensor",)), **given)  # type: ignore[arg-type]
        k3 = Shape(dtype, rep, "k3", bias=False, tags=("zp-tensor",))
        yield from (replace(k3, tags=(zp,)) for zp in ZERO_POINTS if zp != "zp-tensor")
        yield replace(k3, data="extremes", tags=("zp-channel",))
        yield from (replace(k3, index_type=other, tags=("zp-tensor", f"filter-{other.name}"))
                    for other in types if other is not dtype)
        yield from (replace(k3, rank=r) for r in ranks if r != rep)
        yield replace(k3, padded=True, tags=("zp-tensor", "padded"))
    yield Shape(DataType.INT16, rep, "k3", bias=False, supported=False, tags=("zp-tensor", "unsupported"))
    bad_rank = next((r for r in (5, 3) if r not in ranks), None)
    if bad_rank is not None:
        yield Shape(types[0], bad_rank, "k3", size=_same(4), bias=False, supported=False,
                    tags=("zp-tensor", "unsupported"))


def _integer_case(spec: Spec, sem: Window, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    """One CONVOLUTION_INTEGER case: input and filter over their types'
    whole range (``extremes``: their smallest and largest values), the
    zero points as ``shape``'s tags say, the filter in ``index_type``
    where given (the other input type), an INT32 output."""
    c, m = shape.channels
    geo = Geometry(shape.spatial(shape.strides), shape.spatial(shape.dilations), shape.spatial(shape.start),
                   shape.spatial(shape.end), shape.spatial(shape.output_padding), shape.groups)
    kernel = shape.spatial(shape.kernel)
    x_sizes, w_sizes = (shape.batch, c, *shape.spatial(shape.size)), (m, c // shape.groups, *kernel)
    filter_type = shape.index_type or shape.dtype
    zp = next((t for t in shape.tags if t.startswith("zp-")), "zp-none")
    ones = (1,) * shape.rank
    drawn = {name: _draw(replace(shape, dtype=t), sizes, np.random.default_rng(stream_key(seed, case_id, name)), 1)
             for name, t, sizes in (("X", shape.dtype, x_sizes), ("W", filter_type, w_sizes),
                                    ("XZ", shape.dtype, ones),
                                    ("WZ", filter_type, (1, m, *ones[2:]) if zp == "zp-channel" else ones))}
    with np.errstate(invalid="ignore"):  # the padded gaps' NaN, cast to an integer type
        inputs = [family.input_tensor(sem.input or "", shape.dtype, drawn["X"], padded=shape.padded)]
        if zp != "zp-none" and sem.input_zero_point:
            inputs.append(family.input_tensor(sem.input_zero_point, shape.dtype, drawn["XZ"]))
        inputs.append(family.input_tensor(sem.filter or "", filter_type, drawn["W"], padded=shape.padded))
        if zp != "zp-none" and sem.filter_zero_point:
            inputs.append(family.input_tensor(sem.filter_zero_point, filter_type, drawn["WZ"]))
    out_sizes = (shape.batch, m, *output_sizes(geo, x_sizes[2:], kernel))
    outputs = [family.output_tensor(sem.output, DataType.INT32, out_sizes, padded=shape.padded)]
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=tuple(inputs),
                outputs=tuple(outputs), attributes=_attributes(spec, sem, shape, geo),
                layout=Layout.PADDED if shape.padded else Layout.PACKED, expect_supported=shape.supported,
                edges=(shape.data,), seed=seed)


#: The pooling geometries: 1x1, 3x3 padded, 2x2 stride 2, asymmetric padding, a window over the input,
#: stride above the window, dilation (where the operator has Dilations), and a window wholly in padding.
POOLING_SHAPES: tuple[dict[str, object], ...] = (
    {"name": "k1", "kernel": _same(1), "start": _same(0), "end": _same(0)},
    {"name": "k3"},
    {"name": "k2-s2", "size": _same(8), "kernel": _same(2), "strides": _same(2), "start": _same(0), "end": _same(0)},
    {"name": "asym-pad", "start": (2, 0, 1), "end": (0, 2, 1)},
    {"name": "k5-over", "size": _same(3), "kernel": _same(5), "start": _same(2), "end": _same(2)},
    {"name": "stride3-k2", "size": _same(8), "kernel": _same(2), "strides": _same(3), "start": _same(0),
     "end": _same(0)},
    {"name": "dilation2", "dilations": (2, 2, 3), "start": _same(2), "end": (2, 2, 1)},
    {"name": "all-padding", "size": _same(4), "kernel": _same(2), "strides": _same(2), "start": _same(2),
     "end": _same(0)},
)


def _pooling_per_dtype(dtype: DataType, rep: int, ranks: tuple[int, ...], large: bool,
                       sem: Window) -> Iterator[Shape]:
    """Each pooling geometry with IncludePadding TRUE and FALSE (``incl``,
    ``excl``), exact and random; the other dimension counts; adversarial
    and padded-stride cases of ``k3``."""
    for given in POOLING_SHAPES:
        base = replace(Shape(dtype, rep, "", channels=(3, 3), bias=False), **given)  # type: ignore[arg-type]
        if base.dilations != _same(1) and sem.dilations is None:
            continue
        for include in (True, False):
            tagged = replace(base, name=f"{base.name}-{'incl' if include else 'excl'}", include_padding=include)
            yield from (replace(tagged, data=data) for data in DATA)
    k3 = Shape(dtype, rep, "k3-excl", channels=(3, 3), bias=False)
    yield from (replace(k3, rank=r, data=d) for r in ranks if r != rep for d in DATA)
    yield from (replace(k3, data=data) for data in ("range", "nan"))
    yield replace(k3, padded=True, tags=("padded",))
    if large:
        yield replace(k3, size=(1, 56, 56), batch=1, channels=(64, 64), tags=("large",))


#: The Lp pooling's P values: L1 and L2 (the page's common ones) and 3, odd, where a negative input's X^P
#: differs from |X|^P (the ``lp-sign`` readings).
LP_POWERS = (1, 2, 3)


def _lp_per_dtype(dtype: DataType, rep: int, ranks: tuple[int, ...], large: bool, sem: Window) -> Iterator[Shape]:
    """Each pooling geometry (dilation only where the operator has
    Dilations) with each P of `LP_POWERS` on random data (negative and
    positive values: the ``lp-sign`` readings differ at odd P), 3x3 with
    each P on exact data too; the other dimension counts; range, NaN and
    padded-stride cases of 3x3 at P 3."""
    for given in POOLING_SHAPES:
        base = replace(Shape(dtype, rep, "", channels=(3, 3), bias=False), **given)  # type: ignore[arg-type]
        if base.dilations != _same(1) and sem.dilations is None:
            continue
        for p in LP_POWERS:
            tagged = replace(base, name=f"{base.name}-p{p}", power=p)
            yield from (replace(tagged, data=data) for data in (DATA if base.name == "k3" else ("random",)))
    k3 = Shape(dtype, rep, "k3-p3", channels=(3, 3), bias=False, power=3)
    yield from (replace(k3, rank=r, data=d) for r in ranks if r != rep for d in DATA)
    yield from (replace(k3, data=data) for data in ("range", "nan"))
    yield replace(k3, padded=True, tags=("padded",))
    if large:
        yield replace(k3, size=(1, 56, 56), batch=1, channels=(64, 64), tags=("large",))


def _max_per_dtype(dtype: DataType, rep: int, ranks: tuple[int, ...], index_types: tuple[DataType, ...],
                   sem: Window) -> Iterator[Shape]:
    """Max pooling: each pooling geometry but the empty window (no maximum
    there; dilation only where the operator has Dilations) with ``random`` and ``ties`` data (and ``nan`` for floats, the
    type's extremes for integers), indices in the first index type of the
    table (UINT32); ``noindices`` without them, ``idx64`` in UINT64 where
    the table allows it; the other dimension counts; padded strides (the
    indices are logical, not the buffer's)."""
    index = DataType.UINT32 if DataType.UINT32 in index_types else (index_types[0] if index_types else None)
    kinds = ("random", "ties", "nan") if dtype.is_float else ("random", "ties", "extremes")
    for given in POOLING_SHAPES:
        base = replace(Shape(dtype, rep, "", channels=(3, 3), bias=False, index_type=index), **given)  # type: ignore[arg-type]
        if base.name != "all-padding" and (base.dilations == _same(1) or sem.dilations is not None):
            yield from (replace(base, data=data) for data in kinds)
    k3 = Shape(dtype, rep, "k3", channels=(3, 3), bias=False, index_type=index)
    yield from (replace(k3, rank=r) for r in ranks if r != rep)
    if dtype.is_float:  # the gaps hold NaN, which an integer type has not
        yield replace(k3, padded=True, tags=("padded",))
    if index is not None:
        yield replace(k3, index_type=None, tags=("noindices",))
    if DataType.UINT64 in index_types and index is not DataType.UINT64:
        yield replace(k3, index_type=DataType.UINT64, tags=("idx64",))


def _negatives(first: DataType, rep: int, ranks: tuple[int, ...], allowed: tuple[DataType, ...]) -> list[Shape]:
    """One data type and one dimension count outside the table (expected NOT_SUPPORTED or computed right)."""
    out = []
    bad_type = next((t for t in DATA_TYPE_ORDER if t not in allowed and t.is_float), None)
    if bad_type is not None:
        out.append(Shape(bad_type, rep, "k3", supported=False, tags=("unsupported",)))
    bad_rank = next((r for r in (6, 3) if r not in ranks), None)
    if bad_rank is not None:
        out.append(Shape(first, bad_rank, "k3", size=_same(4), supported=False, tags=("unsupported",)))
    return out


# -- values and tensors ---------------------------------------------------------------------------


def exact_range(dtype: DataType, terms: int, power: int = 2) -> int:
    """The largest integer r <= 8 such that ``terms`` * r^``power`` + r fits
    the type's significand: every partial sum of products of two integers
    in [-r, r] (``power`` 2), or of their ``power``-th powers, and a bias
    in it, is then exact."""
    digits = int(finfo(numpy_dtype(dtype)).nmant) + 1
    r = 8
    while r > 1 and terms * r ** power + r > 2 ** digits:
        r -= 1
    return r


def _draw(shape: Shape, sizes: tuple[int, ...], rng: np.random.Generator, terms: int, power: int = 2) -> np.ndarray:
    if shape.data == "ties":  # few distinct values: windows with equal maxima
        return rng.integers(0 if shape.dtype.name.startswith("UINT") else -1, 2, size=sizes).astype(np.float64)
    if not shape.dtype.is_float:
        info = np.iinfo(numpy_dtype(shape.dtype))
        if shape.data == "extremes":
            picks = np.array([info.min, info.min + 1, info.max - 1, info.max, 0, 1], dtype=numpy_dtype(shape.dtype))
            return picks[rng.integers(0, picks.size, size=sizes)]
        return rng.integers(info.min, info.max, size=sizes, dtype=numpy_dtype(shape.dtype), endpoint=True)
    if shape.data == "exact":
        r = exact_range(shape.dtype, terms, power)
        return rng.integers(-r, r + 1, size=sizes).astype(np.float64)
    if shape.data == "range":
        e = 6 if shape.dtype is DataType.FLOAT16 else 20
        return np.where(rng.random(sizes) < 0.5, -1.0, 1.0) * 2.0 ** rng.uniform(-e, e, size=sizes)
    return rng.uniform(-1.0, 1.0, size=sizes)


def _values(shape: Shape, x_sizes: tuple[int, ...], w_sizes: tuple[int, ...], m: int,
            key: Callable[[str], int], sem_power: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Input, filter and bias (M values) by the case's ``data`` kind
    (``exact``: small enough for the C/G x K products and the bias, or
    for the window's P-th powers where the operator has a ``sem_power``)."""
    terms = shape.channels[0] // shape.groups * math.prod(w_sizes[2:]) + 1
    power = 2 if sem_power is None else shape.power
    x, w, b = (_draw(shape, s, np.random.default_rng(key(n)), terms, power)
               for n, s in (("X", x_sizes), ("W", w_sizes), ("B", (m,))))
    if shape.data == "cancel":  # channel pairs whose products cancel: 2c and 2c+1 read x alike, filters negated
        big = 2.0 ** (6 if shape.dtype is DataType.FLOAT16 else 10)
        x, w = x * big, w * big
        x[:, 1::2] = x[:, 0::2]
        w[:, 1::2] = -w[:, 0::2]
        b = np.full(m, 0.25)
    if shape.data == "nan":
        x[(0, 0, *(s // 2 for s in x_sizes[2:]))] = np.nan
    nt = numpy_dtype(shape.dtype)
    return x.astype(nt), w.astype(nt), b.astype(nt)


def _case(spec: Spec, sem: Window, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    c, m = shape.channels
    geo = Geometry(shape.spatial(shape.strides), shape.spatial(shape.dilations), shape.spatial(shape.start),
                   shape.spatial(shape.end), shape.spatial(shape.output_padding), shape.groups,
                   transposed=shape.direction == BACKWARD)
    x_sizes = (shape.batch, c, *shape.spatial(shape.size))
    kernel = shape.spatial(shape.kernel)
    w_sizes = (c, m // shape.groups, *kernel) if geo.transposed else (m, c // shape.groups, *kernel)
    out_sizes = (shape.batch, m, *output_sizes(geo, x_sizes[2:], kernel))
    x, w, b = _values(shape, x_sizes, w_sizes, m, lambda name: stream_key(seed, case_id, name), sem.power)
    with np.errstate(invalid="ignore"):  # input_tensor fills the gaps with NaN, which an integer type casts to junk
        inputs = [family.input_tensor(sem.input, shape.dtype, x, padded=shape.padded)]
    if sem.filter is not None:
        inputs.append(family.input_tensor(sem.filter, shape.dtype, w, padded=shape.padded))
    if shape.bias and sem.bias is not None:
        inputs.append(family.input_tensor(sem.bias, shape.dtype, b.reshape((1, m) + (1,) * (shape.rank - 2)),
                                          padded=shape.padded))
    outputs = [family.output_tensor(sem.output, shape.dtype, out_sizes, padded=shape.padded)]
    if sem.indices is not None and shape.index_type is not None:
        outputs.append(family.output_tensor(sem.indices, shape.index_type, out_sizes, padded=shape.padded))
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=tuple(inputs),
                outputs=tuple(outputs), attributes=_attributes(spec, sem, shape, geo),
                layout=Layout.PADDED if shape.padded else Layout.PACKED, expect_supported=shape.supported,
                edges=(shape.data,), seed=seed)


def _attributes(spec: Spec, sem: Window, shape: Shape, geo: Geometry) -> tuple[tuple[str, float | int | bool | str],
                                                                                   ...]:
    """The attributes in struct order; arrays as comma-separated text (``"2,1"``)."""
    def text(values: tuple[int, ...]) -> str:
        return ",".join(str(v) for v in values)

    given: dict[str | None, int | str | bool] = {
        sem.window_size: text(shape.spatial(shape.kernel)), sem.include_padding: shape.include_padding,
        sem.mode: shape.mode, sem.direction: shape.direction, sem.spatial_count: shape.rank - 2,
        sem.strides: text(geo.strides), sem.dilations: text(geo.dilations), sem.start_padding: text(geo.start),
        sem.end_padding: text(geo.end), sem.output_padding: text(geo.output_padding), sem.group_count: shape.groups,
        sem.power: shape.power}
    if shape.fused:
        given[sem.fused_activation] = shape.fused
    return tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    sem = semantics_of(spec)
    if sem.operation == "max_unpooling":
        return family.generable(lambda: unpool.shapes(spec, sem, level))
    if sem.operation in fold.FOLDS:
        return family.generable(lambda: fold.shapes(spec, sem, level))
    return family.generable(lambda: shapes(spec, level, large=False))


def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level``, only those ``keep(id, data
    type)`` accepts, without the negative ones where not ``negative``;
    identical for a ``seed``."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    if sem.operation == "max_unpooling":
        yield from unpool.generate(spec, sem, level, seed=seed, negative=negative, keep=keep)
        return
    if sem.operation in fold.FOLDS:
        yield from fold.generate(spec, sem, level, seed=seed, negative=negative, keep=keep)
        return
    conv = sem.operation == "convolution"
    make = _integer_case if sem.operation == "convolution_integer" else _case
    for case_id, shape in family.selected(shapes(spec, level, large=large), lambda s: s.case_id(spec.operator, conv),
                                          keep, negative=negative):
        yield make(spec, sem, level, seed, case_id, shape)
