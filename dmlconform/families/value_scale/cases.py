"""Cases of VALUE_SCALE_2D (``Output = Scale * Input + Bias[c]``), and its
shape rules.

Issue #24 item 3; docs/value-scale.md lists the cases.  They come from the
reviewed semantics (`families.value_scale.semantics.ValueScale`), the support
tables and the level alone.  Per data type and channel count ``c`` the page
allows (1 and 3):

* ``random`` on several sizes (widths 5, 33, 257, 1000), ``integer`` (small
  integers: every result exact, 0 ULP in any rounding), ``identity`` (Scale
  1, Bias 0: the input itself);
* adversarial (``c3``): ``edges`` (NaN, +-inf, +-0, the largest value,
  subnormals among the inputs), ``zero-scale`` (Scale 0: inf * 0 is NaN),
  ``overflow`` (Scale * Input beyond the largest value, the sum back
  inside), ``cancel`` (Bias cancels Scale * Input), ``tiny`` (products in
  the subnormal range), ``bias-edges`` (the largest value, -0 and the
  smallest subnormal as Bias), ``bias-special`` (inf, NaN, -inf as Bias);
* layouts: ``padded`` (rows with gaps holding NaN), ``broadcast`` (the
  input repeated along H through a stride of 0);
* negative cases: ChannelCount 2, 7 and 33 (outside the page's "1 or 3":
  reject, or compute per channel), a data type and a dimension count
  outside the table.

Ids: ``VALUE_SCALE_2D/FLOAT32/4d/c3/edges``.  A case's values depend on
the seed and its id alone; ``keep`` is applied before any value is drawn.
`operands` (the case's Scale, Bias and channel axis) is the one rule the
oracle and the CPU reference share.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout
from dmlconform.compare import finfo
from dmlconform.errors import InputError
from dmlconform.families.value_scale.semantics import ValueScale
from dmlconform.formula.rounding import float32_attribute
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType, FeatureLevel, Spec, numpy_dtype

#: Sizes (N, H, W) of the random cases: widths not a multiple of common tiles, and 1000+.
_RANDOM = ((2, 3, 5), (1, 7, 33), (1, 2, 257), (1, 1, 1000))
#: (N, H, W) of the adversarial and layout cases, and the channel counts outside the page's rule.
_SMALL = (2, 3, 7)
OUT_OF_DOMAIN = (2, 7, 33)
#: Scale of each data kind (random: 0.75, an inexact product).
_SCALES = {"integer": 3.0, "identity": 1.0, "edges": 1.5, "zero-scale": 0.0, "overflow": 2.0, "cancel": 0.1,
           "tiny": 0.5, "bias-edges": 1.0, "bias-special": -1.25}
#: The data kinds of the adversarial cases (channel count 3).
ADVERSARIAL = ("edges", "zero-scale", "overflow", "cancel", "tiny", "bias-edges", "bias-special")


@dataclass(frozen=True, slots=True)
class Operands:
    """What a case computes with: Scale, Bias (float32 values, one per
    channel) and the channel dimension."""

    scale: float
    bias: np.ndarray
    axis: int


@dataclass(frozen=True, slots=True)
class Shape:
    """One case before its values: data type, sizes (the channel count at
    dimension 1), what values (``data``), the layout, and whether the table
    and the page allow it."""

    dtype: DataType
    sizes: tuple[int, ...]
    data: str
    layout: str = "packed"
    supported: bool = True
    out_of_domain: bool = False

    def case_id(self, operator: str) -> str:
        parts = [operator, self.dtype.name, f"{len(self.sizes)}d", f"c{self.sizes[1]}"]
        parts += ["x".join(map(str, self.sizes)), self.data]
        parts += [self.layout] if self.layout != "packed" else []
        return "/".join(parts + ([] if self.supported else ["unsupported"]))


def semantics_of(spec: Spec) -> ValueScale:
    """``spec``'s value-scale semantics; InputError naming the overlay to write otherwise."""
    return family.semantics_as(spec, ValueScale, "value-scale")


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return family.generable(lambda: shapes(spec, level))


def parse_bias(value: object) -> tuple[float, ...]:
    """A Bias attribute as a case holds it ("0.5,-1,inf") -> the values;
    ValueError naming the value where it is not a list of numbers."""
    parts = str(value).split(",")
    if isinstance(value, bool) or not all(re.fullmatch(r"\s*[-+]?(\d+\.?\d*(e[-+]?\d+)?|\.\d+(e[-+]?\d+)?|inf|nan)\s*",
                                                       p, re.I) for p in parts):
        raise ValueError(f"Bias={value!r} is not a list of numbers; write them comma-separated, e.g. \"0.5,-1,2\"")
    return tuple(float(p) for p in parts)


def operands(sem: ValueScale, case: Case) -> Operands:
    """Scale (a number, or an exact text such as "1/6", rounded to float32
    as the struct holds it), Bias and the channel dimension of a case
    `case_problems` accepts."""
    attrs = case.attribute_map()
    bias = np.array(parse_bias(attrs[sem.bias]), dtype=np.float32)
    return Operands(float32_attribute(attrs[sem.scale]), bias, sem.channel_dimension)


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` (from a folder) no call the semantics describe:
    an attribute missing, Bias not numbers, ChannelCount not Bias's count or
    not the size of the channel dimension.  Texts are ``problem: fix``."""
    sem = semantics_of(spec)
    attrs = case.attribute_map()
    if sem.bias not in attrs or not case.outputs:
        yield f"attribute {sem.bias} is missing: give one value per channel as text, e.g. [\"{sem.bias}\", \"0.5,-1,2\"]"
        return
    try:
        bias = parse_bias(attrs[sem.bias])
    except ValueError as exc:
        yield str(exc)
        return
    count, sizes = attrs.get(sem.channel_count), case.outputs[0].sizes
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return  # missing or no UINT: the attribute rules of `case_folders` say so
    if count != len(bias):
        yield f"{sem.channel_count}={count!r} but {sem.bias} lists {len(bias)} values: give {len(bias)}"
    elif len(sizes) <= sem.channel_dimension or sizes[sem.channel_dimension] != count:
        yield f"{sem.channel_count}={count!r} is not the size of dimension {sem.channel_dimension} of sizes " \
              f"{list(sizes)}: give one Bias value per channel"


# -- which cases ------------------------------------------------------------------------------
def shapes(spec: Spec, level: FeatureLevel) -> list[Shape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    ranks = sem.dims_at(level)
    table = spec.table_at(level)
    row = table.row(sem.input) if table is not None else None
    if 4 not in ranks or row is None:
        raise InputError(f"{spec.operator}: no cases at {level.short}: no 4-D support table there")
    out = [s for t in row.dtypes if t.is_float for s in _per_type(t, sem.channel_counts or (1,))]
    bad = next((t for t in DATA_TYPE_ORDER if t not in row.dtypes and t.is_float), None)
    if bad is not None:
        out.append(replace(out[0], dtype=bad, supported=False))
    rank = next((r for r in (3, 5) if r not in ranks), None)
    if rank is not None:
        out.append(replace(out[0], sizes=(2, 3, 5, 1, 1)[:rank], supported=False))
    return out


def _per_type(dtype: DataType, counts: tuple[int, ...]) -> Iterator[Shape]:
    n, h, w = _SMALL
    for c in counts:
        yield from (Shape(dtype, (b, c, hh, ww), "random") for b, hh, ww in _RANDOM)
        yield from (Shape(dtype, (n, c, h, w), d) for d in ("integer", "identity"))
    c = max(counts)
    yield from (Shape(dtype, (n, c, h, w), d) for d in ADVERSARIAL)
    yield from (Shape(dtype, (n, c, h, w), "random", layout) for layout in ("padded", "broadcast"))
    yield from (Shape(dtype, (1, k, 2, 5), "random", supported=False, out_of_domain=True) for k in OUT_OF_DOMAIN
                if k not in counts)


# -- values and tensors -----------------------------------------------------------------------
def generate(spec: Spec, level: FeatureLevel, *, seed: int, large: bool = False, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level`` (the module docstring) that
    ``keep(id, data type)`` accepts, without the negative ones where not
    ``negative``; identical for a ``seed``.  ``large`` adds nothing."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    for case_id, shape in family.selected(shapes(spec, level), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)


def _case(spec: Spec, sem: ValueScale, level: FeatureLevel, seed: int, case_id: str, shape: Shape) -> Case:
    rng = np.random.default_rng(stream_key(seed, case_id, sem.input))
    x, bias = values(shape, rng)
    given: dict[str, float | int | str] = {sem.scale: _SCALES.get(shape.data, 0.75),
                                           sem.channel_count: shape.sizes[1],
                                           sem.bias: ",".join(str(b) for b in bias)}
    attrs = tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)
    layout = {"padded": Layout.PADDED, "broadcast": Layout.BROADCAST}.get(shape.layout, Layout.PACKED)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype,
                inputs=(family.input_tensor(sem.input, shape.dtype, x, padded=shape.layout == "padded",
                                            broadcast_dim=2 if shape.layout == "broadcast" else None),),
                outputs=(family.output_tensor(sem.output, shape.dtype, shape.sizes,
                                              padded=shape.layout == "padded"),),
                attributes=attrs,
                layout=layout, expect_supported=shape.supported, edges=(shape.data,), seed=seed,
                out_of_domain=(sem.channel_count,) if shape.out_of_domain else ())


def values(shape: Shape, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The input's logical values in the case's type and Bias (float32), by the ``data`` kind."""
    nt = numpy_dtype(shape.dtype)
    info = finfo(nt)
    big, c = float(info.max), shape.sizes[1]
    held = tuple(1 if shape.layout == "broadcast" and d == 2 else s for d, s in enumerate(shape.sizes))
    x = rng.uniform(-4.0, 4.0, size=held)
    bias = rng.uniform(-4.0, 4.0, size=c)
    kind = shape.data
    if kind == "integer":
        x, bias = rng.integers(-8, 9, size=held).astype(np.float64), rng.integers(-16, 17, size=c).astype(np.float64)
    elif kind == "identity":
        bias = np.zeros(c)
    elif kind in ("edges", "zero-scale"):
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, big, -big, float(info.smallest_normal),
                            float(info.smallest_subnormal), 1.0, -1.0])
        x = np.resize(special, x.size).reshape(held)
    elif kind == "overflow":
        x, bias = rng.uniform(0.5, 0.9, size=held) * big, np.full(c, -0.9 * big)
    elif kind == "cancel":
        centre = rng.uniform(1.0, 4.0, size=c)
        x = (centre[None, :, None, None] * (1 + rng.uniform(-1e-3, 1e-3, size=held))).astype(nt)
        bias = -0.1 * centre.astype(nt).astype(np.float64)
    elif kind == "tiny":
        x, bias = rng.uniform(-4.0, 4.0, size=held) * float(info.smallest_normal), np.zeros(c)
    elif kind == "bias-edges":
        bias = np.resize([big, -0.0, float(np.finfo(np.float32).smallest_subnormal)], c)
    elif kind == "bias-special":
        bias = np.resize([np.inf, np.nan, -np.inf], c)
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.broadcast_to(np.asarray(x).astype(nt), shape.sizes)
        return x, np.asarray(bias, dtype=np.float64).astype(np.float32)
