"""Cases of the normalization family (MEAN_VARIANCE_NORMALIZATION1), and its shape rules.

Issue #36 item 3; docs/normalization.md has the table of cases.  Per input
type, with ids like ``MEAN_VARIANCE_NORMALIZATION1/FLOAT32/4d/axes=2,3/channel/random``
(axes, then how the scale and bias are given, then the data):

* axis sets: every non-empty subset at 4 dimensions (instance, layer and
  all-axes normalization among them), a sample at the other dimension
  counts the table allows (1-D included);
* scale and bias: none, one per channel (sizes 1 elsewhere), the same
  broadcast through strides of 0 (``strided``), a full tensor, one over
  the normalized dimensions (layer normalization's; from 4_0, where any
  dimension may be 1), the scale alone and the bias alone (from 5_2);
* data: random, constant (variance 0: the output is the bias), a large
  mean with a small variance (one-pass and two-pass variance part there),
  a variance beside Epsilon (Epsilon inside or outside the root part
  there), one NaN, groups of one element (N = 1), long groups (N = 1023),
  and for FLOAT16 data whose variance exceeds FLOAT16's range;
* NormalizeVariance FALSE, a padded input, a larger Epsilon;
* each fused activation (`FUSED`, GEMM's) where the operator has the field;
* negative cases: a type outside the tables, a dimension count outside them.

BATCH_NORMALIZATION_TRAINING (`_batch_shapes`, ids ``.../axes=<a>/batch/<data>``):
the axes are where the scale's sizes are 1; every dimension count per
type, every axis set at 4-D, the data above, FusedAdd (``add``) and each
fused activation with and without it; its mean and variance outputs have
the scale's sizes.

A case's values depend on the seed and its id alone, and ``keep`` is
applied before any value is drawn.  The shape rules (`semantics_of`,
`axes_of`, `epsilon_of`, `divides`, `operands`) are the one thing the
oracle and the CPU reference share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData
from dmlconform.errors import InputError
from dmlconform.families.contraction.cases import FUSED, Activation, activation_in
from dmlconform.families.normalization.semantics import Normalization
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

#: The usual sizes by dimension count (dimension 1 is the channel).
SIZES = {1: (9,), 2: (3, 7), 3: (2, 3, 5), 4: (2, 3, 4, 5), 5: (2, 3, 2, 3, 2), 6: (2, 1, 3, 2, 1, 3),
         7: (1, 2, 1, 3, 2, 1, 2), 8: (2, 1, 2, 1, 2, 1, 2, 3)}
#: Axis sets at the other dimension counts (every subset at 4).
SAMPLE = {1: ((0,),), 2: ((1,), (0,), (0, 1)), 3: ((2,), (1, 2), (0, 1, 2)), 5: ((4,), (2, 3, 4), (0, 1, 2, 3, 4)),
          6: ((5,), (2, 3, 4, 5)), 7: ((6,), (0, 1, 2, 3, 4, 5, 6)), 8: ((7,), (2, 3, 4, 5, 6, 7))}
#: Epsilon as the cases give it: the doc's recommended 0.00001, and a larger one (both float32 values, as the struct).
EPSILON = float(np.float32(1e-5))
LARGER_EPSILON = float(np.float32(1e-3))
#: The scale and bias a case gives, and the level from which the tables allow it.
AFFINE_SINCE = {"none": FeatureLevel.FL_2_1, "channel": FeatureLevel.FL_2_1, "strided": FeatureLevel.FL_2_1,
                "full": FeatureLevel.FL_2_1, "normalized": FeatureLevel.FL_4_0, "scale-only": FeatureLevel.FL_5_2,
                "bias-only": FeatureLevel.FL_5_2}
INSTANCE, LAYER = (2, 3), (1, 2, 3)


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values."""

    dtype: DataType
    sizes: tuple[int, ...]
    axes: tuple[int, ...]
    affine: str = "channel"
    data: str = "random"
    divides: bool = True
    centred: bool = True
    p: int = 0
    size: int = 0
    lrn: tuple[float, float, float] = (1e-4, 0.75, 1.0)
    epsilon: float = EPSILON
    padded: bool = False
    supported: bool = True
    variant: str = ""
    add: bool = False
    fused: str = ""

    def case_id(self, operator: str) -> str:
        if self.size or self.variant.startswith("size="):
            region = "cross-channel" if self.axes == (1,) else "spatial"
            params = "default" if self.lrn == (1e-4, 0.75, 1.0) else "strong"
            parts = [operator, self.dtype.name, f"{len(self.sizes)}d", region, f"size={self.size}", params, self.data]
            return "/".join(parts + ([self.variant] if self.variant and not self.variant.startswith("size=") else []))
        if self.p:
            parts = [operator, self.dtype.name, f"{len(self.sizes)}d", f"axis={self.axes[0]}", f"p={self.p}", self.data]
            return "/".join(parts + ([self.variant] if self.variant else []))
        axes = ",".join(str(a) for a in self.axes)
        parts = [operator, self.dtype.name, f"{len(self.sizes)}d", f"axes={axes}", self.affine, self.data]
        extra = [*([] if self.centred else ["no-mean"]), *([] if self.divides else ["no-variance"]),
                 *([] if self.epsilon == EPSILON else ["eps=1e-3"]),
                 *(["padded"] if self.padded else []), *([self.variant] if self.variant else []),
                 *(["add"] if self.add else []), *([f"fused={_fused_tag(self.fused)}"] if self.fused else [])]
        return "/".join(parts + extra)


# -- shape rules: what the oracle and the reference share ---------------------------------------
def semantics_of(spec: Spec) -> Normalization:
    """``spec``'s normalization semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, Normalization, "normalization")


def axes_of(sem: Normalization, case: Case) -> tuple[int, ...]:
    """The normalized dimensions of ``case``, sorted: its Axes (the case
    format holds the array as text, ``"2,3"``), or by CrossChannel 1 (TRUE)
    or 2 (FALSE) to the last."""
    if sem.axis is not None:
        return (int(case.attribute_map().get(sem.axis, 0)),)
    if sem.operation == "batch_training":  # the dimensions where the scale's (and bias's) sizes are 1
        given = {t.name: t for t in case.inputs}
        scale = given.get(sem.scale or "")
        return () if scale is None else tuple(d for d, s in enumerate(scale.sizes) if s == 1)
    if sem.operation == "lrn":
        return (1,) if case.attribute_map().get(sem.cross_channel or "") else (2, 3)
    if sem.axes is None:
        rank = len(case.input(sem.input).sizes)
        return tuple(range(1 if case.attribute_map().get(sem.cross_channel or "") else 2, rank))
    return tuple(sorted(family.parse_axes(case.attribute_map().get(sem.axes, ""), name=sem.axes)))


def epsilon_of(sem: Normalization, case: Case) -> float:
    """Epsilon as the struct holds it: its float32 value (the doc's 0.00001 where the case gives none)."""
    return float(np.float32(case.attribute_map().get(sem.epsilon, EPSILON)))


def divides(sem: Normalization, case: Case) -> bool:
    """Whether the variance divides (NormalizeVariance or UseVariance TRUE, or an operator without the flag)."""
    return sem.normalize_variance is None or bool(case.attribute_map().get(sem.normalize_variance, True))


def order_of(sem: Normalization, case: Case) -> int:
    """LP_NORMALIZATION's P (0 for the other operators)."""
    return int(case.attribute_map().get(sem.p, 0)) if sem.p is not None else 0


def lrn_of(sem: Normalization, case: Case) -> tuple[int, float, float, float]:
    """LOCAL_RESPONSE_NORMALIZATION's LocalSize, Alpha, Beta and Bias (the FLOATs as the struct holds them)."""
    attrs = case.attribute_map()
    return (int(attrs.get(sem.local_size or "", 1)),
            *(float(np.float32(attrs.get(name or "", d))) for name, d in ((sem.alpha, 1e-4), (sem.beta, 0.75),
                                                                          (sem.offset, 1.0))))  # type: ignore[return-value]


def window_offsets(size: int, ceil_before: bool = False) -> tuple[int, int]:
    """The elements a window of ``size`` reaches before and after its centre: floor((size - 1) / 2) before and
    ceil after (ONNX's, the primary reading of ``lrn-centre``), or the other way round (``ceil_before``)."""
    before = (size - 1) // 2 if not ceil_before else size // 2
    return before, size - 1 - before


def centres(sem: Normalization, case: Case) -> bool:
    """Whether the mean is subtracted (UseMean TRUE, or an operator without the flag)."""
    return sem.use_mean is None or bool(case.attribute_map().get(sem.use_mean, True))


@dataclass(frozen=True, slots=True, eq=False)
class Operands:
    """A case's logical input, and its scale and bias broadcast to the input's shape (None: not given)."""

    x: np.ndarray
    scale: np.ndarray | None
    bias: np.ndarray | None
    add: np.ndarray | None = None


def operands(sem: Normalization, case: Case, buffers: Mapping[str, np.ndarray] | None = None) -> Operands:
    """The input and the broadcast scale and bias of ``case`` (over ``buffers`` where given, else its own)."""
    given = {t.name: t for t in case.inputs}
    x = given[sem.input].view(None if buffers is None else buffers[sem.input])

    def view(name: str | None) -> np.ndarray | None:
        if name is None or name not in given:
            return None
        return np.broadcast_to(given[name].view(None if buffers is None else buffers[name]), x.shape)

    return Operands(x, view(sem.scale), view(sem.bias), view(sem.fused_add))


def activation_of(sem: Normalization, case: Case) -> Activation | None:
    """The fused activation ``case`` gives (None: none), in the contraction family's format and rules
    (`families.contraction.cases.activation_in`: a monotone one)."""
    return activation_in(case, sem.fused_activation)


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return family.generable(lambda: shapes(spec, level))


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no normalization its semantics describe: axes
    that are no set of the input's dimensions, an AxisCount that does not
    count them, an output of other sizes than the input's, a scale or bias
    whose sizes are neither 1 nor the input's.  Texts are ``problem: fix``."""
    sem = semantics_of(spec)
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    x, y = tensors.get(sem.input), tensors.get(sem.output)
    if x is None or y is None:
        return
    attrs = case.attribute_map()
    if sem.axis is not None:
        axis = attrs.get(sem.axis)
        if not isinstance(axis, int) or isinstance(axis, bool) or not 0 <= axis < len(x.sizes):
            yield f"{sem.axis}={axis!r} is no dimension of the {len(x.sizes)}-D {x.name}: give 0 to {len(x.sizes) - 1}"
            return
    elif sem.axes is not None:
        problem = family.axes_problem(attrs, sem.axes, tensor=x.name, rank=len(x.sizes))
        if problem is not None:
            yield problem
            return
        counted = family.count_problem(attrs, sem.axis_count or "", axes_of(sem, case), axes_name=sem.axes)
        if counted is not None:
            yield counted
    elif sem.operation == "batch_training":
        yield from _batch_problems(sem, tensors, x)
    elif len(x.sizes) < 3:
        yield f"{x.name} has {len(x.sizes)} dimensions: CrossChannel normalizes from dimension 1 or 2 on; give 4"
    if y.sizes != x.sizes:
        yield f"{y.name}'s sizes {list(y.sizes)} are not {x.name}'s {list(x.sizes)}: give those"
    for name in (sem.scale, sem.bias):
        t = tensors.get(name or "")
        if t is not None and (len(t.sizes) != len(x.sizes) or
                              any(s not in (1, n) for s, n in zip(t.sizes, x.sizes))):
            yield (f"{t.name}'s sizes {list(t.sizes)} do not broadcast to {x.name}'s {list(x.sizes)}: give each "
                   "dimension 1 or the input's")
    try:
        activation_of(sem, case)
    except ValueError as exc:
        yield str(exc)


def _batch_problems(sem: Normalization, tensors: Mapping[str, TensorData], x: TensorData) -> Iterator[str]:
    """BATCH_NORMALIZATION_TRAINING's size rules: the bias, the mean and the variance of the scale's sizes, the
    fused addend of the input's."""
    scale = tensors.get(sem.scale or "")
    if scale is None:
        yield f"no {sem.scale}: BATCH_NORMALIZATION_TRAINING's scale is required (its sizes give the axes)"
        return
    for name, sizes, of in ((sem.bias, scale.sizes, scale.name), (sem.output_mean, scale.sizes, scale.name),
                            (sem.output_variance, scale.sizes, scale.name), (sem.fused_add, x.sizes, x.name)):
        t = tensors.get(name or "")
        if t is not None and t.sizes != sizes:
            yield f"{t.name}'s sizes {list(t.sizes)} are not {of}'s {list(sizes)}: give those"


# -- which cases ------------------------------------------------------------------------------
def shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    table = spec.table_at(level)
    row = table.row(sem.input) if table is not None else None
    if row is None:
        raise InputError(f"{spec.operator}: no cases at {level.short}: no support table there")
    ranks, types = row.dims, row.dtypes
    if sem.operation == "lp":
        return _lp_shapes(ranks, types)
    if sem.operation == "lrn":
        return _lrn_shapes(ranks, types)
    if sem.operation == "batch_training":
        return _batch_shapes(ranks, types)
    affines = tuple(a for a, since in AFFINE_SINCE.items() if since <= level
                    and (a != "scale-only" or sem.bias is not None) and (a != "bias-only" or sem.scale is not None))
    out: list[Shape] = []
    floats = [t for t in types if t.is_float]
    for i, dtype in enumerate(floats):
        out.extend(_float32_cases(dtype, ranks, affines, sem) if i == 0 else _half_cases(dtype, ranks, sem))
    out.extend(_negatives(floats[0] if floats else types[0], ranks, types, sem))
    return out


def _axis_sets(rank: int, sem: Normalization) -> tuple[tuple[int, ...], ...]:
    if sem.axes is None:  # CrossChannel FALSE, TRUE
        return (tuple(range(2, rank)), tuple(range(1, rank))) if rank >= 3 else ()
    if rank == 4:
        return tuple(c for k in range(1, 5) for c in combinations(range(4), k))
    return SAMPLE[rank]


def _float32_cases(dtype: DataType, ranks: tuple[int, ...], affines: tuple[str, ...],
                   sem: Normalization) -> Iterator[Shape]:
    for rank in ranks:
        for axes in _axis_sets(rank, sem):
            yield Shape(dtype, SIZES[rank], axes)
    if 4 not in ranks:
        return
    base = Shape(dtype, SIZES[4], INSTANCE)
    for axes in (INSTANCE, LAYER):
        yield from (replace(base, axes=axes, affine=a) for a in affines if a != "channel")
        yield from (replace(base, axes=axes, data=d) for d in ("constant", "large-mean", "small-variance", "nan"))
        if sem.normalize_variance is not None:
            yield replace(base, axes=axes, divides=False)
        if sem.use_mean is not None:
            yield from (replace(base, axes=axes, centred=False, divides=d, data=data)
                        for d, data in ((True, "random"), (False, "random"), (True, "large-mean")))
    yield replace(base, data="small-variance", epsilon=LARGER_EPSILON)
    yield replace(base, sizes=(2, 3, 1, 1), variant="n1")
    yield replace(base, sizes=(1, 2, 33, 31), variant="n1023")
    yield replace(base, padded=True)
    if sem.fused_activation is not None:
        yield from (replace(base, axes=axes, fused=text) for axes in (INSTANCE, LAYER) for _, text in FUSED)


def _half_cases(dtype: DataType, ranks: tuple[int, ...], sem: Normalization) -> Iterator[Shape]:
    """FLOAT16: instance, layer and all-axes normalization, the data that tells accumulators apart."""
    rank = 4 if 4 in ranks else ranks[-1]
    if rank != 4:
        yield from (Shape(dtype, SIZES[rank], axes) for axes in _axis_sets(rank, sem)[-3:])
        return
    base = Shape(dtype, SIZES[4], INSTANCE)
    yield from (replace(base, axes=axes) for axes in (INSTANCE, LAYER, *([(0, 1, 2, 3)] if sem.axes else [])))
    yield from (replace(base, data=d) for d in ("large-mean", "small-variance", "wide", "constant"))
    yield replace(base, axes=LAYER, data="wide")
    yield replace(base, sizes=(1, 2, 33, 31), variant="n1023")
    if sem.fused_activation is not None:
        yield from (replace(base, fused=text) for _, text in FUSED[:3])


def _negatives(first: DataType, ranks: tuple[int, ...], types: tuple[DataType, ...],
               sem: Normalization) -> Iterator[Shape]:
    """A type outside the table, a dimension count outside it."""
    rank = 4 if 4 in ranks else ranks[-1]
    base = Shape(first, SIZES[rank], _axis_sets(rank, sem)[0] if sem.axes is None else (rank - 1,), supported=False,
                 variant="unsupported")
    if DataType.FLOAT64 not in types:
        yield replace(base, dtype=DataType.FLOAT64)
    bad = next((r for r in (3, 5, 2) if r not in ranks and (sem.axes is not None or r >= 3)), None)
    if bad is not None:
        yield replace(base, sizes=SIZES[bad], axes=_axis_sets(bad, sem)[0] if sem.axes is None else (bad - 1,))


#: LP_NORMALIZATION's data: random, norms below Epsilon (where its place shows), a group of zeros, one NaN.
LP_DATA = ("random", "tiny", "zeros", "nan")


def _lp_shapes(ranks: tuple[int, ...], types: tuple[DataType, ...]) -> list[Shape]:
    """Every axis at 4-D (each dimension count's last axis elsewhere) for P 1 and 2, the data that tell
    Epsilon's places apart, FLOAT16, P = 0 and 3 (outside the page's "either 1 or 2"), a type and a
    dimension count outside the table."""
    floats = [t for t in types if t.is_float]
    out: list[Shape] = []
    rep = 4 if 4 in ranks else ranks[-1]
    for i, dtype in enumerate(floats):
        for p in (1, 2):
            base = Shape(dtype, SIZES[rep], (rep - 1,), affine="none", p=p)
            if i == 0:
                out.extend(replace(base, sizes=SIZES[r], axes=(a,)) for r in ranks
                           for a in (range(r) if r == rep else (r - 1,)))
                out.extend(replace(base, axes=(1,), data=d) for d in LP_DATA[1:])
                out.append(replace(base, sizes=(2, 3, 1, 1000) if rep == 4 else SIZES[rep], variant="n1000"))
            else:
                out.extend(replace(base, axes=(1,), data=d) for d in ("random", "tiny"))
    first = floats[0] if floats else types[0]
    base = Shape(first, SIZES[rep], (rep - 1,), affine="none", p=2, supported=False, variant="unsupported")
    out.extend(replace(base, p=p, variant="out-of-range") for p in (3,))
    if DataType.FLOAT64 not in types:
        out.append(replace(base, dtype=DataType.FLOAT64))
    bad = next((r for r in (3, 5, 2) if r not in ranks), None)
    if bad is not None:
        out.append(replace(base, sizes=SIZES[bad], axes=(bad - 1,)))
    return out


#: LOCAL_RESPONSE_NORMALIZATION's Alpha, Beta and Bias: the doc's defaults, and a set where the sum weighs.
LRN_STRONG = (float(np.float32(0.5)), 0.75, 2.0)


def _lrn_shapes(ranks: tuple[int, ...], types: tuple[DataType, ...]) -> list[Shape]:
    """Cross-channel and spatial regions, LocalSize 1, 2, 3, 4 and 5 (even ones tell the centring readings apart),
    the doc's defaults and a set where the sum weighs, FLOAT16, and negative cases: LocalSize 0 (below its "at
    least 1"), a type and a dimension count outside the table."""
    floats = [t for t in types if t.is_float]
    rank = 4 if 4 in ranks else ranks[-1]
    sizes = (2, 6, 5, 5) if rank == 4 else SIZES[rank]
    out: list[Shape] = []
    for i, dtype in enumerate(floats):
        for axes in ((1,), (2, 3)):
            base = Shape(dtype, sizes, axes, affine="none", size=3, lrn=LRN_STRONG)
            if i == 0:
                out.extend(replace(base, size=k) for k in (1, 2, 3, 4, 5))
                out.append(replace(base, lrn=(1e-4, 0.75, 1.0)))
                out.extend(replace(base, size=4, data=d) for d in ("large", "nan"))
            else:
                out.extend(replace(base, size=k) for k in (3, 4))
    first = floats[0] if floats else types[0]
    base = Shape(first, sizes, (1,), affine="none", size=3, lrn=LRN_STRONG, supported=False, variant="unsupported")
    out.append(replace(base, size=0, variant="size=0"))
    if DataType.FLOAT64 not in types:
        out.append(replace(base, dtype=DataType.FLOAT64))
    bad = next((r for r in (3, 5) if r not in ranks), None)
    if bad is not None:
        out.append(replace(base, sizes=SIZES[bad]))
    return out


def _fused_tag(text: str) -> str:
    """The id tag of a fused activation's text (`FUSED`)."""
    return next(tag for tag, given in FUSED if given == text)


def batch_axes(rank: int) -> tuple[int, ...]:
    """Batch normalization's axes at ``rank`` dimensions: all but the channel (dimension 1), or the one dimension."""
    return tuple(d for d in range(rank) if d != 1) if rank > 1 else (0,)


def _batch_shapes(ranks: tuple[int, ...], types: tuple[DataType, ...]) -> list[Shape]:
    """BATCH_NORMALIZATION_TRAINING: per type, each dimension count's batch normalization; for the first type
    every axis set at 4-D (the scale's sizes 1 there), the data of mean-variance normalization, N = 1 and 1023,
    a padded input, FusedAdd, each fused activation alone and with FusedAdd (where the order shows); for FLOAT16
    the data that tell accumulators apart and a variance beyond its range; negative: a type outside the table."""
    floats = [t for t in types if t.is_float]
    out: list[Shape] = []
    rep = 4 if 4 in ranks else ranks[-1]
    for i, dtype in enumerate(floats):
        out.extend(Shape(dtype, SIZES[r], batch_axes(r), affine="batch") for r in ranks)
        base = Shape(dtype, SIZES[rep], batch_axes(rep), affine="batch")
        if i == 0:
            if rep == 4:
                out.extend(replace(base, axes=axes) for k in range(1, 5) for axes in combinations(range(4), k)
                           if axes != base.axes)
            out.extend(replace(base, data=d) for d in ("constant", "large-mean", "small-variance", "nan"))
            out.append(replace(base, data="small-variance", epsilon=LARGER_EPSILON))
            if rep == 4:
                out.extend((replace(base, sizes=(1, 3, 1, 1), variant="n1"),
                            replace(base, sizes=(31, 2, 3, 11), variant="n1023")))
            out.extend((replace(base, padded=True), replace(base, add=True)))
            out.extend(replace(base, fused=text) for _, text in FUSED)
            out.extend(replace(base, add=True, fused=text) for _, text in FUSED)
        else:
            out.extend(replace(base, data=d) for d in ("large-mean", "small-variance", "wide", "constant"))
            out.extend(replace(base, add=True, fused=text) for _, text in FUSED[:2])
    if DataType.FLOAT64 not in types:
        out.append(Shape(DataType.FLOAT64, SIZES[rep], batch_axes(rep), affine="batch", supported=False,
                         variant="unsupported"))
    return out


#: The ``--large`` layer normalization's rows and their length (issue #36): 2^12 x 2^12 elements.
LARGE_ROWS = LARGE_LENGTH = 1 << 12


def large_shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """MEAN_VARIANCE_NORMALIZATION1's ``--large`` case: a FLOAT32 layer
    normalization (Axes 1, 2, 3) of 2^12 rows of 2^12 elements, random
    data, with a scale and bias over the normalized dimensions (from 4_0;
    one per channel before); none for the other operators or where the
    table lacks FLOAT32 or 4 dimensions."""
    sem = semantics_of(spec)
    table = spec.table_at(level)
    row = table.row(sem.input) if table is not None else None
    if spec.operator != "MEAN_VARIANCE_NORMALIZATION1" or row is None or 4 not in row.dims \
            or DataType.FLOAT32 not in row.dtypes:
        return []
    affine = "normalized" if AFFINE_SINCE["normalized"] <= level else "channel"
    return [Shape(DataType.FLOAT32, (LARGE_ROWS, LARGE_LENGTH, 1, 1), LAYER, affine=affine, variant="large")]


# -- values and tensors -----------------------------------------------------------------------
def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (the module docstring), only those
    ``keep(id, data type)`` accepts, without the negative ones where not
    ``negative``; identical for a ``seed``.  ``large`` adds the layer
    normalization of `large_shapes`."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    every = shapes(spec, level) + (large_shapes(spec, level) if large else [])
    for case_id, shape in family.selected(every, lambda s: s.case_id(spec.operator), keep, negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)


def _channel(rank: int) -> int:
    return 1 if rank >= 2 else 0


def _affine_sizes(shape: Shape) -> tuple[int, ...]:
    """The sizes of the scale and bias: one per channel, over the normalized dimensions, or the input's."""
    rank = len(shape.sizes)
    if shape.affine in ("full", "strided"):
        return shape.sizes
    if shape.affine == "normalized":
        return tuple(s if d in shape.axes else 1 for d, s in enumerate(shape.sizes))
    if shape.affine == "batch":  # BATCH_NORMALIZATION_TRAINING: 1 exactly where the statistics are taken
        return tuple(1 if d in shape.axes else s for d, s in enumerate(shape.sizes))
    return tuple(s if d == _channel(rank) else 1 for d, s in enumerate(shape.sizes))


def _affine_tensor(name: str, dtype: DataType, shape: Shape, values: np.ndarray) -> TensorData:
    """The scale or bias as the case gives it: packed, or (``strided``) the
    input's sizes over one value per channel with strides of 0 elsewhere."""
    if shape.affine != "strided":
        return family.input_tensor(name, dtype, values.reshape(_affine_sizes(shape)))
    channel = _channel(len(shape.sizes))
    per_channel = np.ascontiguousarray(values).reshape(-1)  # drawn one per channel (`_case`)
    strides = tuple(1 if d == channel else 0 for d in range(len(shape.sizes)))
    buf = per_channel.astype(numpy_dtype(dtype))
    buf.setflags(write=False)
    return TensorData(name, dtype, shape.sizes, strides, buf)


def _case(spec: Spec, sem: Normalization, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    def rng(name: str) -> np.random.Generator:
        return np.random.default_rng(stream_key(seed, case_id, name))

    nt = numpy_dtype(shape.dtype)
    x = _draw(shape, rng(sem.input)).astype(nt)
    inputs = [family.input_tensor(sem.input, shape.dtype, x, padded=shape.padded)]
    held = _affine_sizes(shape) if shape.affine != "strided" else _affine_sizes(replace(shape, affine="channel"))
    if sem.scale is not None and shape.affine not in ("none", "bias-only"):
        scale = (rng(sem.scale).uniform(0.5, 2.0, held) * rng(sem.scale + "/sign").choice([-1.0, 1.0], held))
        inputs.append(_affine_tensor(sem.scale, shape.dtype, shape, scale.astype(nt)))
    if sem.bias is not None and shape.affine not in ("none", "scale-only"):
        inputs.append(_affine_tensor(sem.bias, shape.dtype, shape, rng(sem.bias).uniform(-1.0, 1.0, held).astype(nt)))
    if sem.fused_add is not None and shape.add:
        inputs.append(family.input_tensor(sem.fused_add, shape.dtype,
                                          rng(sem.fused_add).uniform(-1.0, 1.0, shape.sizes).astype(nt)))
    given: dict[str | None, float | int | bool | str] = {
        sem.axes: ",".join(str(a) for a in shape.axes), sem.axis_count: len(shape.axes),
        sem.cross_channel: shape.axes[:1] == (1,), sem.normalize_variance: shape.divides, sem.use_mean: shape.centred,
        sem.axis: shape.axes[0], sem.p: shape.p, sem.epsilon: shape.epsilon,
        **({sem.fused_activation: shape.fused} if shape.fused else {})}
    if sem.operation == "lrn":
        given = {sem.cross_channel: shape.axes == (1,), sem.local_size: shape.size, sem.alpha: shape.lrn[0],
                 sem.beta: shape.lrn[1], sem.offset: shape.lrn[2]}
    attrs = tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)
    layout = Layout.PADDED if shape.padded else Layout.BROADCAST if shape.affine == "strided" else Layout.PACKED
    statistics = tuple(family.output_tensor(name, shape.dtype, held) for name in (sem.output_mean, sem.output_variance)
                       if name is not None)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=tuple(inputs),
                outputs=(family.output_tensor(sem.output, shape.dtype, shape.sizes, padded=shape.padded),
                         *statistics),
                attributes=attrs, layout=layout, expect_supported=shape.supported, edges=(shape.data,), seed=seed,
                out_of_domain=(sem.p,) if sem.p is not None and shape.p not in (1, 2) else
                (sem.local_size,) if sem.local_size is not None and shape.size < 1 else ())


def _draw(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """The input by the case's ``data`` kind (float64, rounded to the type by the caller)."""
    s = shape.sizes
    if shape.data == "constant":
        return np.full(s, 0.7)
    if shape.data == "large-mean":  # mean^2 / variance about 770: one-pass variance loses 10 bits
        return 16.0 + rng.uniform(-1.0, 1.0, s)
    if shape.data == "small-variance":  # variance about 3e-6, beside Epsilon = 1e-5
        return 0.5 + rng.uniform(-3e-3, 3e-3, s)
    if shape.data == "large":  # squares of up to 100: the sum dominates Bias
        return rng.uniform(-10.0, 10.0, s)
    if shape.data == "tiny":  # norms of about 1e-6, below Epsilon = 1e-5
        return rng.uniform(-1.0, 1.0, s) * 1e-6
    if shape.data == "zeros":
        return np.zeros(s)
    if shape.data == "wide":  # |x| in [250, 400]: the variance (about 1e5) exceeds FLOAT16's largest, 65504
        return rng.choice([-1.0, 1.0], s) * rng.uniform(250.0, 400.0, s)
    x = rng.uniform(-1.0, 1.0, s)
    if shape.data == "nan":
        x[(0,) * len(s)] = np.nan
    return x


def group_count(sizes: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """N: the elements each mean and variance is taken over."""
    return math.prod(sizes[a] for a in axes)
