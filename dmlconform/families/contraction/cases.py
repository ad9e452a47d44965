"""Cases of the contraction family (GEMM), and its shape rules.

Issue #24 item 3; DESIGN.md "Cases".  A contraction is described by the
reviewed semantics of its spec (`spec.semantics.Contraction`), so the cases
come from those, the support tables and the level alone.  Per data type:

* ``k<K>/exact``: integer values small enough that every partial sum, in
  any order, is exact in the accumulator and the output (the oracle then
  requires 0 ULP: a dropped or doubled term cannot hide), K at 1, 2, 7, 33,
  257 and 1000;
* ``k<K>/random``: values uniform in [-1, 1), the same Ks;
* ``k33/random/transA`` (``transB``, both) and ``k7/exact/transA,transB``;
* ``k7/random/alpha=..,beta=..``: Alpha and Beta at 0, 1, -1 and fractions;
* ``k33/random/fused=<tag>`` and ``k33/exact/fused=relu``: FusedActivation
  (`FUSED`), given as the attribute's text ``ACTIVATION_LINEAR(Alpha=..)``;
* ``noC`` (no CTensor), ``broadcastC-row`` and ``broadcastC-batch`` (CTensor
  through strides of 0), ``padded`` (every tensor with gaps holding NaN),
  ``m1n1`` (a dot product), ``k257/random/wide`` (32 x 32 outputs per
  batch: the whole-tensor bias check has elements to work on), the other
  dimension counts of the table;
* adversarial: ``k257/cancel`` (pairs of terms that cancel, one term left), ``k33/range`` (a wide dynamic range), ``k33/nan`` and ``k33/inf``
  (one NaN or inf among the terms), ``k1000/equal`` (all terms alike);
* with ``large``: ``k512/random/large``, 512 x 512 x 512;
* negative cases: a data type and a dimension count outside the table.

Ids: ``GEMM/FLOAT32/4d/k257/random/transA``.  A case's values depend on the
seed and its id alone (a Generator per tensor from `draws.stream_key`), and
``keep`` is applied before any value is drawn.

The shape rules (`operands`) are the one thing the oracle and the CPU
reference share: which tensor is which matrix, and the transposes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData, buffer_elements, packed_strides
from dmlconform.compare import finfo
from dmlconform.families.contraction.semantics import NO_TRANSFORM, TRANSPOSE, Contraction
from dmlconform.limits import MAX_CASE_WORK
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType, FeatureLevel, Spec, numpy_dtype

#: The contraction lengths of the exact and random cases (1, 2, not a multiple of common tiles, 1000+).
KS = (1, 2, 7, 33, 257, 1000)
#: (Alpha, Beta) pairs beside the default (1, 1).
SCALES = ((0.0, 1.0), (1.0, 0.0), (-1.0, -1.0), (0.5, -0.25), (1.5, 2.0))
#: The fused activations of the cases (id tag, the FusedActivation attribute's text): monotone ones, each
#: with its attributes (`activation` reads the text; the oracle bounds through the interval's ends).
FUSED = (("relu", "ACTIVATION_RELU"), ("linear", "ACTIVATION_LINEAR(Alpha=-0.5,Beta=0.25)"),
         ("sigmoid", "ACTIVATION_SIGMOID"), ("tanh", "ACTIVATION_TANH"),
         ("leaky", "ACTIVATION_LEAKY_RELU(Alpha=0.125)"))
#: The activations `activation` accepts: monotone, so that an input known within [T - B, T + B] gives an
#: output between the activation's values at the two ends (docs/contraction.md "FusedActivation").
MONOTONE = ("ACTIVATION_IDENTITY", "ACTIVATION_LEAKY_RELU", "ACTIVATION_LINEAR", "ACTIVATION_RELU",
            "ACTIVATION_SIGMOID", "ACTIVATION_TANH")
_ACTIVATION_RE = re.compile(r"^((?:ACTIVATION|ELEMENT_WISE)_[A-Z_]+)(?:\((.*)\))?$")
_SETTING_RE = re.compile(r"^([A-Za-z]+)=([-+0-9.eE]+)$")
#: Batch sizes by dimension count (the leading dimensions), and the usual M and N (small and odd).
_LEAD = {2: (), 3: (2,), 4: (2, 3)}
_M, _N = 3, 5
_LARGE = 512
#: M and N of the ``wide`` case: enough elements (2 x 3 x 32 x 32) for the whole-tensor bias check (`bias`).
_WIDE = 32


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values: the sizes, the data, the attributes and
    the layout (``c``: "packed", "row", "batch" (broadcast through strides)
    or "none")."""

    dtype: DataType
    rank: int
    m: int
    k: int
    n: int
    data: str
    variant: str = ""
    trans_a: bool = False
    trans_b: bool = False
    alpha: float = 1.0
    beta: float = 1.0
    c: str = "packed"
    padded: bool = False
    supported: bool = True
    fused: str = ""

    def case_id(self, operator: str) -> str:
        parts = [operator, self.dtype.name, f"{self.rank}d", f"k{self.k}", self.data]
        return "/".join(parts + ([self.variant] if self.variant else []))


@dataclass(frozen=True, slots=True)
class Activation:
    """A fused activation: its operator (an ACTIVATION_* spec) and its FLOAT attributes."""

    operator: str
    attributes: tuple[tuple[str, float], ...] = ()


def activation(semantics: Contraction, case: Case) -> Activation | None:
    """The fused activation ``case`` gives (None: none): `parse_activation`
    of its FusedActivation attribute, a monotone one (`MONOTONE`)."""
    return activation_in(case, semantics.activation)


def activation_in(case: Case, field_name: str | None) -> Activation | None:
    """The fused activation ``case`` gives in its attribute ``field_name``
    (None: the operator has none, or the case gives none): `activation`'s
    format and rules, for any family that composes one (normalization's)."""
    return parse_activation(field_name, case.attribute_map().get(field_name)) if field_name else None


def parse_activation(name: str, text: object, allowed: tuple[str, ...] = MONOTONE,
                     oracle: str = "contraction", what: str = "monotone ones") -> Activation | None:
    """The fused activation an attribute ``name`` holding ``text`` gives
    (None: none): ``ACTIVATION_NAME`` or ``ACTIVATION_NAME(Attr=value,...)``
    (or ``ELEMENT_WISE_CLIP(...)``), one of ``allowed``; anything else is a
    ValueError saying what to write (naming the ``oracle`` that composes
    them).  The window family's CONVOLUTION reads its FusedActivation
    through it too."""
    if text is None or text == "":
        return None
    found = _ACTIVATION_RE.match(str(text))
    settings = [_SETTING_RE.match(p.strip()) for p in (found.group(2) or "").split(",") if p.strip()] if found else []
    if found is None or not all(settings):
        raise ValueError(f"{name}={text!r} is no activation: write ACTIVATION_NAME or "
                         "ACTIVATION_NAME(Attr=value,...), e.g. ACTIVATION_LINEAR(Alpha=0.5,Beta=1)")
    if found.group(1) not in allowed:
        raise ValueError(f"{name}={found.group(1)} is not one the {oracle} oracle composes "
                         f"({what}: {', '.join(allowed)}); use one of those")
    return Activation(found.group(1), tuple((m.group(1), float(m.group(2))) for m in settings if m is not None))


@dataclass(frozen=True, slots=True, eq=False)
class Operands:
    """A case's matrices as logical read-only arrays: ``a`` (..., M, K) and
    ``b`` (..., K, N) after their transposes, ``c`` (..., M, N) or None."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray | None


def transposed(case: Case, attribute: str | None) -> bool:
    """Whether the transform attribute ``attribute`` of ``case`` transposes."""
    return attribute is not None and case.attribute_map().get(attribute) == TRANSPOSE


def operands(semantics: Contraction, case: Case, buffers: dict[str, np.ndarray] | None = None) -> Operands:
    """The shape rules: each operand viewed through its sizes and strides
    (over ``buffers`` where given, else the case's own), A and B transposed
    as TransA and TransB say."""
    def view(name: str) -> np.ndarray | None:
        tensor = next((t for t in case.inputs if t.name == name), None)
        if tensor is None:
            return None
        return tensor.view(None if buffers is None else buffers.get(name))

    a, b = view(semantics.a.tensor), view(semantics.b.tensor)
    if a is None or b is None:
        raise ValueError(f"{case.id}: a contraction needs {semantics.a.tensor} and {semantics.b.tensor}")
    a = np.swapaxes(a, -1, -2) if transposed(case, semantics.a.transform) else a
    b = np.swapaxes(b, -1, -2) if transposed(case, semantics.b.transform) else b
    return Operands(a, b, view(semantics.c) if semantics.c is not None else None)


def scales(semantics: Contraction, case: Case) -> tuple[float, float]:
    """Alpha and Beta of ``case`` (1 where the operator has none)."""
    attrs = case.attribute_map()
    alpha = float(attrs.get(semantics.alpha, 1.0)) if semantics.alpha else 1.0
    beta = float(attrs.get(semantics.beta, 1.0)) if semantics.beta else 1.0
    return alpha, beta


def shape_problems(semantics: Contraction, case: Case) -> Iterator[str]:
    """What makes ``case`` no contraction its semantics describe (a case
    folder's fault, `case_folders`): fewer than 2 dimensions, or sizes
    that do not chain: A (..., M, K) and B (..., K, N) after their
    transposes, every operand with the output's leading (batch) sizes and
    its M and N.  Texts are ``problem: fix``."""
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    a, b, out = (tensors.get(n) for n in (semantics.a.tensor, semantics.b.tensor, semantics.output))
    if a is None or b is None or out is None:
        return  # a missing tensor is reported as such
    short = [t.name for t in (a, b, out) if len(t.sizes) < 2]
    if short:
        verb = "needs" if len(short) == 1 else "need"
        yield f"{', '.join(short)} {verb} at least 2 dimensions (a matrix): give sizes [..., rows, columns]"
        return
    a_rows, a_cols = _matrix(a.sizes, transposed(case, semantics.a.transform))
    b_rows, b_cols = _matrix(b.sizes, transposed(case, semantics.b.transform))
    if a_cols != b_rows:
        yield (f"{a.name} gives K={a_cols} but {b.name} gives K={b_rows} (sizes {list(a.sizes)} and "
               f"{list(b.sizes)}, after their transforms): give them one K")
    if out.sizes[-2:] != (a_rows, b_cols):
        yield (f"{out.name}'s sizes {list(out.sizes)} end in {list(out.sizes[-2:])}, not [M, N] = "
               f"[{a_rows}, {b_cols}] of {a.name} and {b.name}: give it sizes [..., {a_rows}, {b_cols}]")
    for t in (a, b):
        if t.sizes[:-2] != out.sizes[:-2]:
            yield (f"{t.name}'s leading sizes {list(t.sizes[:-2])} are not {out.name}'s {list(out.sizes[:-2])}: "
                   "every operand has the output's batch sizes (stride 0 where one repeats)")
    work = math.prod(out.sizes) * a_cols
    if work > MAX_CASE_WORK:
        yield (f"{out.name}'s {math.prod(out.sizes):,} elements x K={a_cols:,} terms each = {work:,} products, over "
               f"the {MAX_CASE_WORK:,} one case may ask for (limits.MAX_CASE_WORK): give a smaller K or output, or "
               "split the case")


def _matrix(sizes: tuple[int, ...], transpose: bool) -> tuple[int, int]:
    """(rows, columns) of the matrix a tensor of ``sizes`` holds after its transform."""
    return (sizes[-1], sizes[-2]) if transpose else (sizes[-2], sizes[-1])


# -- which cases ------------------------------------------------------------------------------
def shapes(spec: Spec, level: FeatureLevel, *, large: bool) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    ranks = tuple(d for d in sem.dims_at(level) if d in _LEAD)
    (row,) = family.rows_at(spec, level, ranks, sem.output)
    rep = 4 if 4 in ranks else ranks[-1]
    types = [t for t in row.dtypes if t.is_float]
    out = [s for i, t in enumerate(types) for s in _per_dtype(t, rep, ranks, large and i == 0)]
    return out + _negatives(types[0] if types else DataType.FLOAT32, rep, ranks, row.dtypes)


def _per_dtype(dtype: DataType, rep: int, ranks: tuple[int, ...], large: bool) -> Iterator[Shape]:
    base = Shape(dtype, rep, _M, 7, _N, "random")
    for data in ("exact", "random"):
        yield from (replace(base, k=k, data=data) for k in KS)
    t33 = replace(base, k=33)
    yield from (replace(t33, variant="transA", trans_a=True), replace(t33, variant="transB", trans_b=True),
                replace(t33, variant="transA,transB", trans_a=True, trans_b=True),
                replace(base, data="exact", variant="transA,transB", trans_a=True, trans_b=True))
    for alpha, beta in SCALES:
        yield replace(base, variant=f"alpha={alpha:g},beta={beta:g}", alpha=alpha, beta=beta)
    yield from (replace(base, variant="noC", c="none"), replace(base, k=33, data="exact", variant="noC", c="none"),
                replace(base, variant="broadcastC-row", c="row"), replace(base, variant="broadcastC-batch", c="batch"),
                replace(base, data="exact", variant="broadcastC-row", c="row"),
                replace(base, variant="padded", padded=True), replace(base, k=33, m=1, n=1, variant="m1n1"),
                replace(base, k=257, m=_WIDE, n=_WIDE, variant="wide"))
    yield from (replace(base, k=33, variant=f"fused={tag}", fused=text) for tag, text in FUSED)
    yield replace(base, k=33, data="exact", variant="fused=relu", fused=FUSED[0][1])
    yield from (replace(base, rank=r) for r in ranks if r != rep)
    yield from (replace(base, k=257, data="cancel"), replace(base, k=33, data="range"),
                replace(base, k=33, data="nan"), replace(base, k=33, data="inf"), replace(base, k=1000, data="equal"))
    if large:
        yield replace(base, rank=rep, m=_LARGE, k=_LARGE, n=_LARGE, variant="large")


def _negatives(first: DataType, rep: int, ranks: tuple[int, ...], allowed: tuple[DataType, ...]) -> list[Shape]:
    """One data type and one dimension count outside the table (expected NOT_SUPPORTED or computed right)."""
    out = []
    bad_type = next((t for t in DATA_TYPE_ORDER if t not in allowed and t.is_float), None)
    if bad_type is not None:
        out.append(Shape(bad_type, rep, _M, 7, _N, "random", "unsupported", supported=False))
    bad_rank = next((r for r in (5, 2, 3) if r not in ranks), None)
    if bad_rank is not None:
        out.append(Shape(first, bad_rank, _M, 7, _N, "random", "unsupported", supported=False))
    return out


def semantics_of(spec: Spec) -> Contraction:
    """``spec``'s contraction semantics (`cases.family.semantics_as`)."""
    return family.semantics_as(spec, Contraction, "contraction")


# -- values and tensors -----------------------------------------------------------------------


def _sizes(shape: Shape, rows: int, cols: int, transpose: bool) -> tuple[int, ...]:
    lead = _LEAD.get(shape.rank, (1,) * (shape.rank - 2))
    if shape.variant == "large":
        lead = (1,) * (shape.rank - 2)
    return lead + ((cols, rows) if transpose else (rows, cols))


def _case(spec: Spec, sem: Contraction, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    a_sizes = _sizes(shape, shape.m, shape.k, shape.trans_a)
    b_sizes = _sizes(shape, shape.k, shape.n, shape.trans_b)
    out_sizes = _sizes(shape, shape.m, shape.n, False)
    a, b, c = values(shape, a_sizes, b_sizes, out_sizes, lambda name: stream_key(seed, case_id, name))
    inputs = [_tensor(sem.a.tensor, shape.dtype, a_sizes, a, shape.padded),
              _tensor(sem.b.tensor, shape.dtype, b_sizes, b, shape.padded)]
    if sem.c is not None and shape.c != "none":
        inputs.append(_c_tensor(sem.c, shape, out_sizes, c))
    output = _output(sem.output, shape.dtype, out_sizes, shape.padded)
    attrs = _attributes(spec, sem, shape)
    layout = Layout.PADDED if shape.padded else Layout.BROADCAST if shape.c in ("row", "batch") else Layout.PACKED
    edges = tuple(sorted({shape.data} | ({"nan"} if shape.data == "nan" else set())))
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=tuple(inputs),
                outputs=(output,), attributes=attrs, layout=layout, expect_supported=shape.supported, edges=edges,
                seed=seed)


def _attributes(spec: Spec, sem: Contraction, shape: Shape) -> tuple[tuple[str, float | int | bool | str], ...]:
    """The attributes in struct order: the transforms, Alpha and Beta (float32
    values), the fused activation's text where the case has one."""
    given: dict[str | None, float | str] = {
        sem.a.transform: TRANSPOSE if shape.trans_a else NO_TRANSFORM,
        sem.b.transform: TRANSPOSE if shape.trans_b else NO_TRANSFORM,
        sem.alpha: float(np.float32(shape.alpha)), sem.beta: float(np.float32(shape.beta))}
    if shape.fused:
        given[sem.activation] = shape.fused
    return tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)


def values(shape: Shape, a_sizes: tuple[int, ...], b_sizes: tuple[int, ...], c_sizes: tuple[int, ...],
           key: Callable[[str], int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A, B and C (logical, in the stored layout of A and B, C of the
    output's sizes), in the case's type, by its ``data`` kind."""
    nt = numpy_dtype(shape.dtype)
    rngs = [np.random.default_rng(key(name)) for name in ("A", "B", "C")]
    if shape.data == "exact":
        r = exact_range(shape.dtype, shape.k)
        drawn = [g.integers(-r, r + 1, size=s).astype(np.float64) for g, s in zip(rngs, (a_sizes, b_sizes, c_sizes))]
    else:
        drawn = [g.uniform(-1.0, 1.0, size=s) for g, s in zip(rngs, (a_sizes, b_sizes, c_sizes))]
    a, b, c = drawn
    if shape.data in _ADVERSARIAL:
        a, b = _ADVERSARIAL[shape.data](shape, _logical(a, shape.trans_a), _logical(b, shape.trans_b), rngs[0])
        a, b = _logical(a, shape.trans_a), _logical(b, shape.trans_b)
    if shape.data == "equal":
        c = np.zeros(c_sizes)
    return a.astype(nt), b.astype(nt), c.astype(nt)


def exact_range(dtype: DataType, k: int) -> int:
    """The largest integer r <= 8 such that K * r^2 + r fits the type's
    significand: every partial sum of integers in [-r, r] is then exact."""
    digits = int(finfo(numpy_dtype(dtype)).nmant) + 1 if dtype.is_float else 31
    return max(1, min(8, math.isqrt((2 ** digits) // (k + 1))))


def _logical(x: np.ndarray, transpose: bool) -> np.ndarray:
    """Stored layout <-> logical matrix (the swap is its own inverse)."""
    return np.swapaxes(x, -1, -2) if transpose else x


def _cancel(shape: Shape, a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of terms a*b and a*(-b) of magnitudes up to 2^20 (FLOAT16: 2^12), one term left (K odd).

    The term left is 2^14 |b| (FLOAT16: 2^2 |b|): the pairs' magnitudes sum to about 10^4 times
    the result (FLOAT16: 10^3), within what a float32 sum in any order keeps (the bound is a
    few percent of the value), so a result of 0, or one that lost the term left, FAILs.  With
    2^-4 for float32, honest orders (split-K sums of alternate terms) may err by more than the
    whole value and the case could not fail (issue #32)."""
    a, b = a.copy(), b.copy()
    half = shape.dtype is DataType.FLOAT16
    big = 2.0 ** (6 if half else 10)
    a *= big
    b *= big
    a[..., 1::2] = a[..., 0:-1:2]
    b[..., 1::2, :] = -b[..., 0:-1:2, :]
    a[..., -1] = 2.0 ** (-4 if half else 4)
    return a, b


def _range(shape: Shape, a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Magnitudes spread over 2^-e .. 2^e (e = 20 for float32, 6 for FLOAT16)."""
    e = 6 if shape.dtype is DataType.FLOAT16 else 20
    spread = [np.sign(x) * 2.0 ** rng.uniform(-e, e, size=x.shape) for x in (a, b)]
    return spread[0], spread[1]


def _nan(shape: Shape, a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One NaN in row 0 of each A: row 0 of every output is NaN, the rest finite."""
    a = a.copy()
    a[..., 0, shape.k // 2] = np.nan
    return a, b


def _inf(shape: Shape, a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """+inf at B[k/2, 0] and every A[:, k/2] at least 0.5 in magnitude: column 0 is +-inf."""
    a, b = a.copy(), b.copy()
    a[..., :, shape.k // 2] = np.where(a[..., :, shape.k // 2] < 0, -0.75, 0.75)
    b[..., shape.k // 2, 0] = np.inf
    return a, b


def _equal(shape: Shape, a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Every term alike: A all 0.1, B all 0.3 (rounded to the type)."""
    return np.full(a.shape, 0.1), np.full(b.shape, 0.3)


_ADVERSARIAL: dict[str, Callable[[Shape, np.ndarray, np.ndarray, np.random.Generator],
                                 tuple[np.ndarray, np.ndarray]]] = {
    "cancel": _cancel, "range": _range, "nan": _nan, "inf": _inf, "equal": _equal}


def _tensor(name: str, dtype: DataType, sizes: tuple[int, ...], logical: np.ndarray, padded: bool) -> TensorData:
    """A read-only tensor holding ``logical``: packed, or with NaN in the gaps of padded rows."""
    strides = family.padded_strides(sizes) if padded else packed_strides(sizes)
    return _strided(name, dtype, sizes, strides, logical)


def _strided(name: str, dtype: DataType, sizes: tuple[int, ...], strides: tuple[int, ...],
             logical: np.ndarray) -> TensorData:
    nt = numpy_dtype(dtype)
    buf = np.full(buffer_elements(sizes, strides), np.nan, dtype=nt)
    view = np.lib.stride_tricks.as_strided(buf, sizes, tuple(s * nt.itemsize for s in strides), writeable=True)
    view[...] = logical
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)


def _c_tensor(name: str, shape: Shape, sizes: tuple[int, ...], c: np.ndarray) -> TensorData:
    """CTensor: packed or padded like the others, or broadcast through
    strides of 0 (``row``: one row of N for every row and batch; ``batch``:
    one M x N matrix for every batch)."""
    if shape.c == "packed":
        return _tensor(name, shape.dtype, sizes, c, shape.padded)
    kept = 1 if shape.c == "row" else 2  # the trailing dimensions C really holds
    strides = (0,) * (len(sizes) - kept) + packed_strides(sizes[-kept:])
    compact = c[(0,) * (len(sizes) - kept)]
    buf = np.ascontiguousarray(compact, dtype=numpy_dtype(shape.dtype)).reshape(-1)
    buf.setflags(write=False)
    return TensorData(name, shape.dtype, sizes, strides, buf)


def _output(name: str, dtype: DataType, sizes: tuple[int, ...], padded: bool) -> TensorData:
    strides = family.padded_strides(sizes) if padded else packed_strides(sizes)
    buf = np.zeros(buffer_elements(sizes, strides), dtype=numpy_dtype(dtype))
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)


def float_cases(spec: Spec, sem: Contraction, level: FeatureLevel, *, seed: int, large: bool, negative: bool,
                keep: Callable[[str, DataType], bool] | None) -> Iterator[Case]:
    """The cases of a float contraction (GEMM) ``spec`` at ``level``
    (`families.contraction.suite.generate` says which)."""
    for case_id, shape in family.selected(shapes(spec, level, large=large), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)
