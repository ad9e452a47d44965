"""Cases of the quantized contractions (MATRIX_MULTIPLY_INTEGER and its
_TO_FLOAT variant), and their shape rules.

Issue #24 items 1 and 3; docs/contraction.md "Integer contractions".  The
semantics (`spec.semantics.Contraction` with zero points, scales and a
bias) are written out in the reviewed overlays:
``Output = AScale * BScale * sum_k (A - AZeroPoint)(B - BZeroPoint) + Bias``
(no scales and no bias for MATRIX_MULTIPLY_INTEGER, whose INT32 output
wraps: the primary reading).  Per type of A (the case's data type):

* ``k<K>/random/zp=row,column``: values over the type's whole range, A's
  zero point per row and B's per column, K at 1, 2, 7, 33, 257 and 1000;
* ``k33/random/zp=tensor``, ``zp=none``, ``zp=tensor-1d``: one zero point
  each (4-D and 1-D), none at all; ``zp=rows-1d``: A's zero points as a
  1-D tensor of M, which the page leaves open (ambiguity
  ``zero-point-shape``): a clean rejection PASSes too, so the case is
  marked as not expected to be supported;
* ``k33/limits``: operands and zero points at the type's limits (every
  difference +-255 for 8-bit types), ``B=<type>``: A and B of different
  signedness, ``broadcastB-batch``: B through batch strides of 0;
* ``k33040/overflow`` (MATRIX_MULTIPLY_INTEGER): sums past INT32's range,
  where the readings wrap and saturate differ;
* the _TO_FLOAT variant: scales per tensor or per row and column, with or
  without Bias (or Bias broadcast through strides), every input type with
  both output types, values kept where every reading of its integer
  accumulator agrees (docs/contraction.md);
* the other dimension counts of the level's table, and negative cases (a
  float A; a dimension count outside the table).

Ids: ``MATRIX_MULTIPLY_INTEGER/INT8/4d/k33/random/zp=tensor``,
``MATRIX_MULTIPLY_INTEGER_TO_FLOAT/UINT8/4d/k7/random/out=FLOAT16``.

`quantized_operands` is the shape rule the oracle and the CPU reference
share: which tensor is which, and how zero points and scales broadcast.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.families.contraction.cases import KS, Shape, _output, _sizes, operands
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

#: K of the overflow case: 33040 * 255^2 = 2 148 426 000 > 2^31 - 1.
OVERFLOW_K = 33040
#: The largest |A - AZeroPoint| of the 16- and 32-bit types' cases (exact in float32: every reading agrees).
_WIDE = 2 ** 15
_M, _N = 3, 5


@dataclass(frozen=True, slots=True, eq=False)
class QuantizedOperands:
    """A case's operands as read-only views that broadcast against
    A (..., M, K), B (..., K, N) and the output (..., M, N): the zero
    points (None: 0) beside A and B, the scales (None: 1) and the bias
    (None: 0) beside the output."""

    a: np.ndarray
    b: np.ndarray
    a_zero: np.ndarray | None
    b_zero: np.ndarray | None
    a_scale: np.ndarray | None
    b_scale: np.ndarray | None
    bias: np.ndarray | None


def side_view(x: np.ndarray | None, side: str) -> np.ndarray | None:
    """A zero point or scale of ``side`` ("a": per tensor or per row; "b":
    per tensor or per column) shaped to broadcast: a 1-D one of A is one
    value per row (the primary reading of ``zero-point-shape``: the
    trailing [1] of { [1], [1], AZeroPointCount, [1] } dropped)."""
    if x is None or side == "b" or x.ndim != 1:
        return x
    return x[:, None]


def quantized_operands(semantics: Contraction, case: Case,
                       buffers: dict[str, np.ndarray] | None = None) -> QuantizedOperands:
    """The shape rules of a quantized contraction over ``buffers`` (else the case's own)."""
    ops = operands(semantics, case, buffers)
    present = {t.name for t in case.inputs}

    def view(name: str | None, side: str) -> np.ndarray | None:
        if name is None or name not in present:
            return None
        tensor = case.input(name)
        return side_view(tensor.view(None if buffers is None else buffers.get(name)), side)

    return QuantizedOperands(ops.a, ops.b, view(semantics.a.zero_point, "a"), view(semantics.b.zero_point, "b"),
                             view(semantics.a.scale, "a"), view(semantics.b.scale, "b"), ops.c)


def side_problems(semantics: Contraction, case: Case) -> Iterator[str]:
    """What makes a quantized case's zero points, scales or bias no shapes
    the semantics describe: A's per tensor ({1} or all 1s) or per row
    ({M} or {.., 1, M, 1}), B's per tensor or per column ({N} or
    {.., 1, 1, N}), at most the matrices' dimension count; Bias of the
    output's sizes.  Texts are ``problem: fix``."""
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    a, out = tensors.get(semantics.a.tensor), tensors.get(semantics.output)
    if a is None or out is None or len(out.sizes) < 2:
        return  # reported as such
    m, n = out.sizes[-2], out.sizes[-1]
    for side, per, what in (("a", m, "row"), ("b", n, "column")):
        operand = semantics.a if side == "a" else semantics.b
        for name in (operand.zero_point, operand.scale):
            t = tensors.get(name) if name is not None else None
            if t is None:
                continue
            own = (per, 1) if side == "a" else (1, per)
            allowed = {(1,) * len(t.sizes), (per,), (1,) * (len(t.sizes) - 2) + own}
            if t.sizes not in allowed or len(t.sizes) > len(out.sizes):
                yield (f"{t.name}'s sizes {list(t.sizes)} are neither per tensor nor per {what}: give "
                       f"{list((1,) * (len(out.sizes) - 2) + own)}, [{per}] or all 1s")
    bias = tensors.get(semantics.c) if semantics.c is not None else None
    if bias is not None and bias.sizes != out.sizes:
        yield f"{bias.name}'s sizes {list(bias.sizes)} are not {out.name}'s {list(out.sizes)}: give it the output's sizes"


# -- which cases ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class IntShape:
    """One case before its values.  ``zp``: "row,column", "tensor",
    "tensor-1d", "rows-1d" or "none"; ``scale`` (the _TO_FLOAT variant):
    "row,column" or "tensor"; ``bias``: "packed", "row" (through strides of
    0) or "none"; ``b_batch``: B through batch strides of 0."""

    a_type: DataType
    b_type: DataType
    out: DataType
    rank: int
    k: int
    data: str
    variant: str = ""
    zp: str = "row,column"
    scale: str = "row,column"
    bias: str = "packed"
    b_batch: bool = False
    m: int = _M
    n: int = _N
    supported: bool = True

    @property
    def dtype(self) -> DataType:
        """The case's data type: A's (what ``keep`` is asked about)."""
        return self.a_type

    def case_id(self, operator: str) -> str:
        parts = [operator, self.a_type.name, f"{self.rank}d", f"k{self.k}", self.data]
        return "/".join(parts + ([self.variant] if self.variant else []))


def shapes(spec: Spec, sem: Contraction, level: FeatureLevel) -> list[IntShape]:
    """Every case of a quantized contraction at ``level``, in a fixed order."""
    ranks = tuple(d for d in sem.dims_at(level) if d in (2, 3, 4))
    a_row, out_row = family.rows_at(spec, level, ranks, sem.a.tensor, sem.output)
    table = spec.table_at(level)
    rep = 4 if 4 in ranks else ranks[-1]
    scaled = sem.a.scale is not None
    zp_rows = [table.row(z) for z in (sem.a.zero_point, sem.b.zero_point) if table is not None and z is not None]
    one_d = ("tensor-1d", "rows-1d") if zp_rows and all(r is not None and 1 in r.dims for r in zp_rows) else ()
    found: list[IntShape] = []
    for a_type in (t for t in a_row.dtypes if not t.is_float):
        for j, out in enumerate(out_row.dtypes):
            base = IntShape(a_type, a_type, out, rep, 33, "random", variant=f"out={out.name}" if scaled else "")
            if j == 0 and a_type.bits == 8:
                found += _full(base, ranks, scaled, a_row.dtypes, one_d)
            elif scaled:
                found.append(base)
    return found + _negatives(found[0], rep, ranks)


def _full(base: IntShape, ranks: tuple[int, ...], scaled: bool, types: tuple[DataType, ...],
          one_d: tuple[str, ...]) -> list[IntShape]:
    """The whole set for one 8-bit type of A (the module docstring); the 1-D
    zero points ``one_d`` only where the level's table allows them."""
    def tagged(shape: IntShape, tag: str) -> IntShape:
        return replace(shape, variant="/".join(p for p in (tag, base.variant) if p))

    out = [tagged(replace(base, k=k), "zp=row,column") for k in KS]
    out += [tagged(replace(base, zp=zp, supported=zp != "rows-1d"), f"zp={zp}")
            for zp in ("tensor", *one_d, "none")]
    other = next((t for t in types if t.bits == 8 and t is not base.a_type), None)
    if other is not None and not scaled:  # the _TO_FLOAT variant wants one type for A and B (a constraint)
        out.append(tagged(replace(base, b_type=other), f"B={other.name}"))
    out += [replace(base, data="limits"), tagged(replace(base, k=7, b_batch=True), "broadcastB-batch")]
    out += [replace(base, rank=r, k=7) for r in ranks if r != base.rank]
    if scaled:
        out += [tagged(replace(base, scale="tensor", zp="tensor"), "scale=tensor"),
                tagged(replace(base, bias="none"), "noBias"), tagged(replace(base, bias="row"), "broadcastBias-row")]
    else:
        out.append(replace(base, k=OVERFLOW_K, m=2, n=3, data="overflow"))
    return out


def _negatives(first: IntShape, rep: int, ranks: tuple[int, ...]) -> list[IntShape]:
    """A float A and a dimension count outside the table (NOT_SUPPORTED or computed right)."""
    bad_rank = next((r for r in (5, 2, 3) if r not in ranks), None)
    out = [replace(first, a_type=DataType.FLOAT32, b_type=DataType.FLOAT32, k=7, variant="unsupported",
                   supported=False)]
    if bad_rank is not None:
        out.append(replace(first, rank=bad_rank, k=7, variant="unsupported", supported=False))
    return out


# -- values and tensors -----------------------------------------------------------------------
def generate(spec: Spec, sem: Contraction, level: FeatureLevel, *, seed: int, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of a quantized contraction (`families.contraction.cases.generate` hands them over)."""
    for case_id, shape in family.selected(shapes(spec, sem, level), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield _case(spec, sem, level, case_id, shape, seed)


def _case(spec: Spec, sem: Contraction, level: FeatureLevel, case_id: str, shape: IntShape, seed: int) -> Case:
    like = Shape(shape.a_type, shape.rank, shape.m, shape.k, shape.n, shape.data)
    a_sizes, b_sizes, out_sizes = (_sizes(like, r, c, False) for r, c in
                                   ((shape.m, shape.k), (shape.k, shape.n), (shape.m, shape.n)))
    rng = {name: np.random.default_rng(stream_key(seed, case_id, name)) for name in ("A", "B", "ZA", "ZB", "SA", "SB", "Bias")}
    a, za = _operand(shape, shape.a_type, a_sizes, _side_sizes(shape, "a"), rng["A"], rng["ZA"])
    b, zb = _operand(shape, shape.b_type, b_sizes, _side_sizes(shape, "b"), rng["B"], rng["ZB"])
    inputs = [_packed(sem.a.tensor, shape.a_type, a)]
    if za is not None and sem.a.zero_point is not None:
        inputs.append(_packed(sem.a.zero_point, shape.a_type, za))
    inputs += [_b_tensor(sem.b.tensor, shape, b)]
    if zb is not None and sem.b.zero_point is not None:
        inputs.append(_packed(sem.b.zero_point, shape.b_type, zb))
    if sem.a.scale is not None and sem.b.scale is not None:  # as many dimensions as the zero points (a constraint)
        scale_shape = replace(shape, zp=shape.zp if shape.zp.endswith("-1d") else shape.scale)
        top = scale_top(shape)
        for name, side in ((sem.a.scale, "a"), (sem.b.scale, "b")):
            values = rng["S" + side.upper()].uniform(top / 2, top, size=_side_sizes(scale_shape, side))
            inputs.append(_packed(name, shape.out, values))
    if sem.c is not None and shape.bias != "none":
        inputs.append(_bias(sem.c, shape, out_sizes, rng["Bias"].uniform(-1.0, 1.0, size=out_sizes)))
    order = {f.name: i for i, f in enumerate(spec.tensors)}
    layout = Layout.BROADCAST if shape.b_batch or shape.bias == "row" else Layout.PACKED
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.a_type,
                inputs=tuple(sorted(inputs, key=lambda t: order.get(t.name, 0))),
                outputs=(_output(sem.output, shape.out, out_sizes, False),), layout=layout,
                expect_supported=shape.supported, edges=(shape.data,), seed=seed)


def _side_sizes(shape: IntShape, side: str) -> tuple[int, ...] | None:
    """Sizes of a zero point or scale of ``side`` by ``shape.zp`` (None: no tensor)."""
    lead = (1,) * (shape.rank - 2)
    per = shape.m if side == "a" else shape.n
    return {"none": None, "tensor": lead + (1, 1), "tensor-1d": (1,), "rows-1d": (per,),
            "row,column": lead + ((per, 1) if side == "a" else (1, per))}[shape.zp]


def scale_top(shape: IntShape) -> float:
    """The largest scale of a _TO_FLOAT case: a power of 2 with
    K (hi - lo)^2 top^2 <= 16, so that no result overflows FLOAT16."""
    lo, hi = value_range(shape.a_type, shape.k)
    return float(2.0 ** math.floor(math.log2(math.sqrt(16.0 / (shape.k * max(hi - lo, 1) ** 2)))))


def value_range(dtype: DataType, k: int) -> tuple[int, int]:
    """[lo, hi] of operands and zero points: the type's whole range for 8 bits;
    for wider types a range where |A - zero point| <= R with K R^2 < 2^31 and
    R <= 2^15, so that no reading of the accumulator overflows or rounds."""
    if dtype.is_float:  # a negative case's
        return -100, 100
    info = np.iinfo(numpy_dtype(dtype))
    if dtype.bits == 8:
        return int(info.min), int(info.max)
    r = min(_WIDE, math.isqrt((2 ** 31 - 1) // max(k, 1)))
    return (-(r // 2), r // 2) if dtype.is_signed else (0, r)


def _operand(shape: IntShape, dtype: DataType, sizes: tuple[int, ...], zp_sizes: tuple[int, ...] | None,
             g: np.random.Generator, gz: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
    """An operand and its zero point (None where the case has none), by ``shape.data``."""
    lo, hi = value_range(dtype, shape.k)
    x = g.integers(lo, hi + 1, size=sizes)
    z = gz.integers(lo, hi + 1, size=zp_sizes) if zp_sizes is not None else None
    if shape.data == "limits":  # every value at a limit, the zero points alternating: |difference| 0 or hi - lo
        x = np.where(g.integers(0, 2, size=sizes) == 1, hi, lo)
        z = None if zp_sizes is None else np.where(np.arange(math.prod(zp_sizes)).reshape(zp_sizes) % 2 == 0, hi, lo)
    if shape.data == "overflow" and zp_sizes is not None:  # K terms of +-(hi - lo)^2 alike: past INT32
        x, z = _overflowing(shape.k, sizes, zp_sizes, lo, hi)
    return x, z


def _overflowing(k: int, sizes: tuple[int, ...], zp_sizes: tuple[int, ...], lo: int,
                 hi: int) -> tuple[np.ndarray, np.ndarray]:
    """A (sizes ending in K): row 0 at hi with zero point lo, the other rows
    at lo with zero point hi (differences +-(hi - lo)); B: hi with zero
    point lo, the last column at its zero point (sums of 0)."""
    x, z = np.full(sizes, hi), np.full(zp_sizes, lo)
    if sizes[-1] == k:
        x[..., 1:, :] = lo
        z[..., 1:, :] = hi
    else:
        x[..., -1] = lo
    return x, z


def _packed(name: str, dtype: DataType, values: np.ndarray) -> TensorData:
    buf = np.ascontiguousarray(values, dtype=numpy_dtype(dtype)).reshape(-1)
    buf.setflags(write=False)
    return TensorData(name, dtype, tuple(values.shape), packed_strides(tuple(values.shape)), buf)


def _b_tensor(name: str, shape: IntShape, b: np.ndarray) -> TensorData:
    """B packed, or one K x N matrix for every batch (strides of 0)."""
    if not shape.b_batch:
        return _packed(name, shape.b_type, b)
    sizes = tuple(b.shape)
    strides = (0,) * (len(sizes) - 2) + packed_strides(sizes[-2:])
    buf = np.ascontiguousarray(b[(0,) * (len(sizes) - 2)], dtype=numpy_dtype(shape.b_type)).reshape(-1)
    buf.setflags(write=False)
    return TensorData(name, shape.b_type, sizes, strides, buf)


def _bias(name: str, shape: IntShape, sizes: tuple[int, ...], values: np.ndarray) -> TensorData:
    """Bias packed, or one row of N for every row and batch (``row``)."""
    if shape.bias == "packed":
        return _packed(name, shape.out, values)
    strides = (0,) * (len(sizes) - 1) + (1,)
    buf = np.ascontiguousarray(values[(0,) * (len(sizes) - 1)], dtype=numpy_dtype(shape.out))
    buf.setflags(write=False)
    return TensorData(name, shape.out, sizes, strides, buf)


