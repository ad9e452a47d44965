"""The docs' support tables held against the real DirectML library.

DESIGN.md, "Backends" (the real libdirectml.so validates operator descs here
without a GPU).  `plan` turns each spec into descs: every tensor configuration
the doc's tables allow up to the library's feature level (each data type and
each dimension count of every row, the others at a base configuration), and a
set just outside the table in force at the library's level (a data type or a
dimension count the row lacks, tensors a ``same`` constraint links given
different data types, dimension counts or sizes).  `summarize` compares the
library's CreateOperator answers with the doc's: a configuration the doc
allows that the library rejects, or one the doc excludes that it accepts, is a
`Disagreement`.  Tensor sizes are all ones and attribute values generic
unless `RULES` holds the operator's family (pooling and convolution windows
over the spatial dimensions, recurrent weights and activations, block sizes,
index ranges ...).  An operator whose in-table descs are all rejected is
*unverified*: the shapes and attribute values planned are not a valid desc
for it, so its answers say nothing about the table.
`markdown` renders a report as the docs/results page.  Pure functions; the
command (commands/validate_commands.py) does the I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dmlconform.backends.directml.abi import hresult_text
from dmlconform.backends.directml.desc_worker import DescJob, DeviceReport
from dmlconform.spec.model import (
    ConstraintKind,
    DataType,
    FeatureLevel,
    FieldKind,
    Spec,
    SupportTable,
    sort_dtypes,
)

#: Data types the library's CheckFeatureSupport can answer for (4-bit types are queried, never planned outside).
_OUTSIDE_TYPES = (DataType.FLOAT64, DataType.FLOAT32, DataType.FLOAT16, DataType.INT64, DataType.INT32,
                  DataType.INT16, DataType.INT8, DataType.UINT64, DataType.UINT32, DataType.UINT16, DataType.UINT8)
_ONE_VALUED = re.compile(r"Stride|Dilation|Window|Size|Scale|Repeat|Count|Output", re.I)
ACCEPT, REJECT = "accepted", "rejected"


@dataclass(frozen=True, slots=True)
class Config:
    """One desc to try: ``expect`` True where the doc's table allows it."""

    operator: str
    level: FeatureLevel          # the table it comes from (outside: the table at the library's level)
    expect: bool
    what: str                    # "in table", "data type outside", "dimension count outside", "mismatched Sizes" ...
    label: str                   # the configuration in words
    job: DescJob


@dataclass(frozen=True, slots=True)
class Disagreement:
    operator: str
    level: str
    doc: str                     # "supported" / "unsupported"
    library: str                 # "accepted" / "rejected: E_INVALIDARG (0x80070057)" / "crash"
    what: str
    configuration: str

    def as_dict(self) -> dict[str, str]:
        return {"operator": self.operator, "level": self.level, "doc": self.doc, "library": self.library,
                "what": self.what, "configuration": self.configuration}


@dataclass(frozen=True, slots=True)
class OperatorResult:
    operator: str
    introduced: str
    status: str                  # checked | unverified | newer | skipped
    configurations: int
    accepted: int
    disagreements: int
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"operator": self.operator, "introduced": self.introduced, "status": self.status,
                "configurations": self.configurations, "accepted": self.accepted,
                "disagreements": self.disagreements, "note": self.note}


# ------------------------------------------------------------------ per-operator rules
Sizes = Mapping[str, tuple[int, ...]]


def _last(n: int, size: int) -> tuple[int, ...]:
    """``n`` dimensions, all ones but the last."""
    return (1,) * (n - 1) + (size,) if n else ()


@dataclass(frozen=True, slots=True)
class Rule:
    """What makes a valid desc of an operator family, at the dimension count
    ``n`` of the configuration's first tensor: tensor sizes (a tensor left out
    is all ones; a tensor at another dimension count gets these sizes
    right-aligned, leading ones added or dropped), attribute values over the
    generic ones, optional tensors the desc needs, ``spatial``: the arrays
    counted by DimensionCount hold the n - 2 spatial dimensions (NCHW/NCDHW),
    and ``dtypes``: a tensor whose field text names its one data type where the
    table row lists others (the planner tries the row's type once, apart)."""

    sizes: Callable[[int], Sizes] = lambda n: {}
    attributes: Callable[[int], Mapping[str, Any]] = lambda n: {}
    include: tuple[str, ...] = ()
    spatial: bool = False
    dtypes: Mapping[str, DataType] = field(default_factory=dict)


def _fit(sizes: tuple[int, ...], n: int) -> tuple[int, ...]:
    """``sizes`` right-aligned to ``n`` dimensions."""
    return ((1,) * (n - len(sizes)) + sizes)[-n:] if n else ()


_SPATIAL = Rule(spatial=True, attributes=lambda n: {"GroupCount": 1, "OutputPadding": [0] * max(n - 2, 0), "P": 2})


def _nd(n: int) -> dict[str, Any]:
    """Indices along one axis, at any dimension count."""
    return {"InputDimensionCount": 1, "IndicesDimensionCount": 1}


def _roi_align(n: int) -> dict[str, Any]:
    """Average over one sample per output, at any dimension count."""
    return {"ReductionFunction": "DML_REDUCE_FUNCTION_AVERAGE", "MinimumSamplesPerOutput": 1,
            "MaximumSamplesPerOutput": 1}


_RECURRENT_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_RECURRENT_ACTIVATIONS = {"RNN": ("ACTIVATION_TANH",), "GRU": ("ACTIVATION_SIGMOID", "ACTIVATION_TANH"),
                          "LSTM": ("ACTIVATION_SIGMOID", "ACTIVATION_TANH", "ACTIVATION_TANH")}


def _recurrent(op: str) -> Rule:
    """Sequence, direction, batch, hidden size 1: weights [1, 1, gates, 1]."""
    gates = _RECURRENT_GATES[op]
    return Rule(sizes=lambda n: {"WeightTensor": (1, 1, gates, 1), "RecurrenceTensor": (1, 1, gates, 1)},
                attributes=lambda n: {"ActivationDescs": [{"op": a} for a in _RECURRENT_ACTIVATIONS[op]]},
                include=("OutputSequenceTensor",))


#: Rules by operator; an operator not here keeps the generic all-ones desc.
RULES: dict[str, Rule] = {
    **{op: _SPATIAL for op in (
        "AVERAGE_POOLING", "AVERAGE_POOLING1", "AVERAGE_POOLING_GRAD", "LP_POOLING", "LP_POOLING1", "MAX_POOLING",
        "MAX_POOLING1", "MAX_POOLING2", "MAX_POOLING_GRAD", "QUANTIZED_LINEAR_AVERAGE_POOLING", "CONVOLUTION",
        "CONVOLUTION_INTEGER", "QUANTIZED_LINEAR_CONVOLUTION")},
    **{op: _recurrent(op) for op in _RECURRENT_GATES},
    **{op: Rule(sizes=lambda n: {"InputTensor": (1, 4, 1, 1), "OutputTensor": (1, 1, 2, 2)},
                attributes=lambda n: {"BlockSize": 2}) for op in ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1")},
    **{op: Rule(sizes=lambda n: {"InputTensor": (1, 1, 2, 2), "OutputTensor": (1, 4, 1, 1)},
                attributes=lambda n: {"BlockSize": 2}) for op in ("SPACE_TO_DEPTH", "SPACE_TO_DEPTH1")},
    **{op: Rule(sizes=lambda n: {"InputTensor": _last(n, 2)}, attributes=_nd) for op in ("GATHER_ND", "GATHER_ND1")},
    "SCATTER_ND": Rule(sizes=lambda n: {"InputTensor": _last(n, 2), "OutputTensor": _last(n, 2)}, attributes=_nd),
    "JOIN": Rule(sizes=lambda n: {"OutputTensor": _last(n, 2)}, attributes=lambda n: {"Axis": n - 1}),
    "SPLIT": Rule(sizes=lambda n: {"InputTensor": _last(n, 2)}, attributes=lambda n: {"Axis": n - 1}),
    **{op: Rule(sizes=lambda n: {"InputTensor": _last(n, 2)}, attributes=lambda n: {"Axis": n - 1, "K": 1})
       for op in ("TOP_K", "TOP_K1")},
    "ONE_HOT": Rule(sizes=lambda n: {"ValuesTensor": _last(n, 2), "OutputTensor": _last(n, 3)},
                    attributes=lambda n: {"Axis": n - 1}),
    **{op: Rule(attributes=lambda n: {"LocalSize": 1, "CrossChannel": 1})
       for op in ("LOCAL_RESPONSE_NORMALIZATION", "LOCAL_RESPONSE_NORMALIZATION_GRAD")},
    "LP_NORMALIZATION": Rule(attributes=lambda n: {"P": 2}),
    **{op: Rule(attributes=lambda n: {"InputWindowOffsets": [0] * n}) for op in ("SLICE1", "SLICE_GRAD")},
    "VALUE_SCALE_2D": Rule(attributes=lambda n: {"Bias": [0.0]}),
    "ADAM_OPTIMIZER": Rule(attributes=lambda n: {"LearningRate": 0.001, "Beta1": 0.9, "Beta2": 0.999,
                                                 "Epsilon": 1e-8},
                           dtypes={"TrainingStepTensor": DataType.UINT32}),
    "RANDOM_GENERATOR": Rule(sizes=lambda n: {"InputStateTensor": _last(n, 6)}),
    **{op: Rule(sizes=lambda n: {"InputTensor": (1, 1, 2, 2), "ROITensor": (1, 1, 1, 4)}, attributes=_roi_align)
       for op in ("ROI_ALIGN", "ROI_ALIGN1")},
    "ROI_ALIGN_GRAD": Rule(sizes=lambda n: {"ROITensor": (1, 1, 1, 4), "OutputGradientTensor": (1, 1, 2, 2)},
                           attributes=_roi_align, include=("OutputGradientTensor",)),
    "ROI_POOLING": Rule(sizes=lambda n: {"InputTensor": (1, 1, 2, 2), "ROITensor": (1, 1, 1, 5)}),
    "MULTIHEAD_ATTENTION": Rule(attributes=lambda n: {"HeadCount": 1},
                                include=("QueryTensor", "KeyTensor", "ValueTensor")),
}
_GENERIC = Rule()
#: "This tensor must have an effective rank no greater than 2" (the leading sizes past two are 1): the docs'
#: text, which the specs do not structure.
_EFFECTIVE_RANK_2 = ("ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX", "ACTIVATION_HARDMAX")


# ------------------------------------------------------------------ planning
def _sizes(n: int) -> tuple[int, ...]:
    """The shape of ``n`` dimensions used for every tensor: all ones, which
    satisfies the shape rules of most operators at once (a reduced axis has
    size 1, a window of 1 gives size 1, broadcasting is trivial), so a
    rejection is about the data type or dimension count under test."""
    return (1,) * n


def _groups(spec: Spec, prop: str, names: Sequence[str]) -> list[tuple[str, ...]]:
    """Tensors a ``same`` constraint on ``prop`` links, merged; the rest alone."""
    groups: list[set[str]] = [{n} for n in names]
    for c in spec.constraints:
        if c.kind is ConstraintKind.SAME and prop in c.properties:
            linked = [g for g in groups if g & set(c.tensors)]
            merged = set().union(*linked) if linked else set()
            groups = [g for g in groups if g not in linked] + ([merged] if merged else [])
    return sorted((tuple(n for n in names if n in g) for g in groups), key=lambda g: names.index(g[0]))


class _Planner:
    """Configurations of one spec (see the module docstring)."""

    def __init__(self, spec: Spec, max_level: FeatureLevel, rule: Rule | None = None) -> None:
        self.spec, self.max_level = spec, max_level
        self.rule = rule or RULES.get(spec.operator, _GENERIC)
        self.tensors = [f for f in spec.tensors if not f.optional or f.name in self.rule.include]

    def rows(self, table: SupportTable) -> dict[str, Any]:
        """Rows of the required tensors that list data types and dimension counts."""
        rows = {f.name: table.row(f.name) for f in self.tensors}
        return {name: r for name, r in rows.items() if r is not None and r.dtypes and r.dims}

    def base(self, table: SupportTable) -> dict[str, tuple[DataType, int]]:
        rows = self.rows(table)
        common = [t for t in DataType if all(t in r.dtypes for r in rows.values())]
        dims = [n for n in range(1, 9) if all(n in r.dims for r in rows.values())]
        prefer = next((t for t in (DataType.FLOAT32, *common) if t in common), None)
        n_pref = 4 if 4 in dims else (dims[0] if dims else None)
        return {name: (prefer or r.dtypes[0], n_pref or (4 if 4 in r.dims else r.dims[0])) for name, r in rows.items()}

    def job(self, table: SupportTable, layout: Mapping[str, tuple[DataType, tuple[int, ...]]], dtype: DataType) -> DescJob:
        tensors: dict[str, Any] = {}
        for f in self.spec.tensors:
            if f.name not in layout:
                continue
            t, sizes = layout[f.name]
            one = [t.name, list(sizes)]
            tensors[f.name] = [one, one] if f.kind is FieldKind.TENSOR_ARRAY else one
        first = next(iter(layout.values()), (dtype, (1,)))
        return DescJob(self.spec.operator, tensors, self.attributes(table, len(first[1])), dtype.name)

    def attributes(self, table: SupportTable, n: int) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        fields = {f.name: f for f in self.spec.fields}
        for f in self.spec.fields:
            if f.kind is FieldKind.ARRAY and f.count_field:
                length = 1 if "Axis" in f.count_field else n  # one axis; else one value per dimension
                if self.rule.spatial and f.count_field == "DimensionCount":
                    length = max(n - 2, 0)
                value = 1 if _ONE_VALUED.search(f.name) else 0
                attrs[f.name] = [float(value) if "FLOAT" in f.c_type else value] * length
            elif f.kind is FieldKind.SCALAR and f.c_type.upper() == "FLOAT" and f.default is None:
                attrs[f.name] = 1.0  # Steepness, Scale ...: 0 is often invalid
        attrs.update((k, v) for k, v in self.rule.attributes(n).items() if k in fields)
        if table.condition is not None:
            field = fields.get(table.condition.field)
            if field is not None:
                attrs[field.name] = f"{field.c_type}_{table.condition.values[0]}"
        return attrs

    def shape(self, name: str, n: int, first_n: int) -> tuple[int, ...]:
        """The sizes of tensor ``name`` at ``n`` dimensions (the rule's at the first tensor's count)."""
        return _fit(tuple(self.rule.sizes(first_n).get(name, ())), n)

    def config(self, table: SupportTable, base: Mapping[str, tuple[DataType, int]],
               change: Mapping[str, tuple[DataType | None, int | None]], *, expect: bool, what: str,
               sizes: Mapping[str, tuple[int, ...]] | None = None, pin: bool = True) -> Config:
        layout: dict[str, tuple[DataType, tuple[int, ...]]] = {}
        counts = {name: change.get(name, (None, None))[1] or n for name, (_, n) in base.items()}
        first_n = next(iter(counts.values()), 1)
        for name, (t, _) in base.items():
            ct = change.get(name, (None, None))[0] or t
            shape = (sizes or {}).get(name) or self.shape(name, counts[name], first_n)
            layout[name] = (self.rule.dtypes.get(name, ct) if pin else ct, shape)
        dtype = next(iter(layout.values()))[0]
        label = ", ".join(f"{name} {t.name} {len(s)}d{'' if s == _sizes(len(s)) else ' ' + 'x'.join(map(str, s))}"
                          for name, (t, s) in layout.items())
        if table.condition is not None:
            label += f" [{table.condition.field}={table.condition.values[0]}]"
        return Config(self.spec.operator, table.level, expect, what, label, self.job(table, layout, dtype))

    def inside(self, table: SupportTable) -> Iterator[Config]:
        rows, base = self.rows(table), self.base(table)
        for t in sort_dtypes({t for r in rows.values() for t in r.dtypes}):
            change: dict[str, tuple[DataType | None, int | None]] = {name: (t, None) for name, r in rows.items()
                                                                     if t in r.dtypes}
            yield self.config(table, base, change, expect=True, what="in table")
        for n in sorted({n for r in rows.values() for n in r.dims}):
            change = {name: (None, n) for name, r in rows.items() if n in r.dims}
            yield self.config(table, base, change, expect=True, what="in table")
        if any(name in rows for name in self.rule.dtypes):  # the row's own data type, once
            yield self.config(table, base, {}, expect=True, what="in table", pin=False)

    def optional(self, table: SupportTable) -> Iterator[Config]:
        """The base configuration with each optional tensor that has a row
        present (the other configurations leave it out).  The doc allows
        both (issue #25).  Only for operators without a rule: where a rule
        shapes the tensors, an optional one has shapes or partners (a bias of
        gates x hidden, mutually exclusive stacked inputs, the only output)
        the planner does not know, and its answer would say nothing."""
        if self.spec.operator in RULES:
            return
        for f in self.spec.tensors:
            row = table.row(f.name)
            if not f.optional or row is None or not row.dtypes or not row.dims:
                continue
            other = _Planner(self.spec, self.max_level, replace(self.rule, include=(*self.rule.include, f.name)))
            if other.rows(table):
                yield other.config(table, other.base(table), {}, expect=True, what=f"optional {f.name} present")

    def sized(self, table: SupportTable) -> Iterator[Config]:
        """The base configuration at real sizes (5x4x3x2 at four dimensions,
        no size-1 dimension) where one ``same`` Sizes constraint links every
        tensor and no rule shapes them (element-wise operators)."""
        rows, base = self.rows(table), self.base(table)
        if self.spec.operator in RULES or len(rows) < 2 or len(_groups(self.spec, "Sizes", list(rows))) != 1:
            return
        counts = {n for _, n in base.values()}
        if len(counts) != 1:
            return
        n = counts.pop()
        real = tuple(range(n + 1, 1, -1))
        if self.spec.operator in _EFFECTIVE_RANK_2 and n > 2:
            real = (1,) * (n - 2) + real[-2:]
        yield self.config(table, base, {}, expect=True, what="real sizes", sizes={name: real for name in rows})

    def outside(self, table: SupportTable) -> Iterator[Config]:
        rows, base = self.rows(table), self.base(table)
        names = list(rows)
        for group in _groups(self.spec, "DataType", names):
            allowed = {t for name in group for t in rows[name].dtypes}
            missing = [t for t in _OUTSIDE_TYPES if t not in allowed]
            for t in [next((x for x in missing if x.is_float), None), next((x for x in missing if not x.is_float), None)]:
                if t is not None:
                    yield self.config(table, base, {name: (t, None) for name in group}, expect=False,
                                      what="data type outside")
        for group in _groups(self.spec, "DimensionCount", names):
            allowed_n = {n for name in group for n in rows[name].dims}
            missing_n = [n for n in range(1, 9) if n not in allowed_n]
            for n in sorted({missing_n[0], missing_n[-1]}) if missing_n else ():
                yield self.config(table, base, {name: (None, n) for name in group}, expect=False,
                                  what="dimension count outside")
        yield from self.mismatches(table, rows, base)

    def mismatches(self, table: SupportTable, rows: Mapping[str, Any],
                   base: Mapping[str, tuple[DataType, int]]) -> Iterator[Config]:
        for c in self.spec.constraints:
            linked = [n for n in c.tensors if n in rows]
            if c.kind is not ConstraintKind.SAME or len(linked) < 2:
                continue
            last, (t, n) = linked[-1], base[linked[-1]]
            if "DataType" in c.properties:
                other = next((x for x in rows[last].dtypes if x != t), None)
                if other is not None:
                    yield self.config(table, base, {last: (other, None)}, expect=False, what="mismatched DataType")
            if "DimensionCount" in c.properties:
                other_n = next((x for x in rows[last].dims if x != n), None)
                if other_n is not None:
                    yield self.config(table, base, {last: (None, other_n)}, expect=False,
                                      what="mismatched DimensionCount")
            if "Sizes" in c.properties:
                shape = self.shape(last, n, next(iter(base.values()))[1])
                grown = shape[:-1] + (shape[-1] + 2,)
                yield self.config(table, base, {}, expect=False, what="mismatched Sizes", sizes={last: grown})


def plan(spec: Spec, max_level: FeatureLevel) -> list[Config]:
    """Every configuration to try for ``spec`` against a library at ``max_level``."""
    planner = _Planner(spec, max_level)
    tables = [t for t in spec.support if t.level <= max_level]
    if spec.introduced > max_level or not tables:
        first = min(spec.support, key=lambda t: t.level, default=None)
        if first is None or not planner.rows(first):
            return []
        base = planner.base(first)
        return [planner.config(first, base, {}, expect=False, what="operator newer than the library")]
    configs: dict[tuple[str, str], Config] = {}
    for table in sorted(tables, key=lambda t: t.level):
        for cfg in planner.inside(table):
            configs.setdefault((cfg.label, "in"), cfg)
    newest = max(tables, key=lambda t: t.level)
    for cfg in (*planner.optional(newest), *planner.sized(newest)):
        configs.setdefault((cfg.label, "in"), cfg)
    conditions = {t.condition for t in tables}
    for condition in sorted(conditions, key=lambda c: (c is not None, repr(c))):
        current = spec.table_at(max_level, condition=condition)
        for cfg in planner.outside(current) if current is not None else ():
            if (cfg.label, "in") not in configs:  # inside an older table: not outside after all
                configs.setdefault((cfg.label, "out"), cfg)
    return list(configs.values())


# ------------------------------------------------------------------ comparing
def _answer(result: int | str) -> str:
    if isinstance(result, str):
        return result
    return ACCEPT if result >= 0 else f"{REJECT}: {hresult_text(result)}"


def summarize(specs: Sequence[Spec], configs: Mapping[str, Sequence[Config]],
              results: Mapping[str, Sequence[int | str]], max_level: FeatureLevel
              ) -> tuple[list[OperatorResult], list[Disagreement]]:
    """Per operator: status and counts; all disagreements, sorted."""
    operators, disagreements = [], []
    for spec in specs:
        cfgs, res = configs.get(spec.operator, ()), results.get(spec.operator, ())
        answers = [_answer(r) for r in res]
        accepted_in = sum(1 for c, a in zip(cfgs, answers) if c.expect and a == ACCEPT)
        status, note = _status(spec, cfgs, answers, accepted_in, max_level)
        found = [] if status != "checked" else [
            Disagreement(spec.operator, c.level.short, "supported" if c.expect else "unsupported", a, c.what, c.label)
            for c, a in zip(cfgs, answers) if (a == ACCEPT) != c.expect]
        if status == "newer" and answers and answers[0] == ACCEPT:
            found.append(Disagreement(spec.operator, spec.introduced.short, "unsupported", ACCEPT,
                                      "operator newer than the library", cfgs[0].label))
        disagreements.extend(found)
        operators.append(OperatorResult(spec.operator, spec.introduced.short, status, len(cfgs),
                                        sum(a == ACCEPT for a in answers), len(found), note))
    return operators, sorted(disagreements, key=lambda d: (d.operator, d.level, d.what, d.configuration))


def _status(spec: Spec, cfgs: Sequence[Config], answers: Sequence[str], accepted_in: int,
            max_level: FeatureLevel) -> tuple[str, str]:
    if not cfgs:
        return "skipped", "no support table rows for its tensors"
    if spec.introduced > max_level:
        return "newer", f"introduced at {spec.introduced}, above the library's {max_level}"
    if accepted_in == 0:
        first = next((a for c, a in zip(cfgs, answers) if c.expect), "")
        return "unverified", f"every in-table desc was rejected ({first}): the planned shapes/attributes do not fit"
    return "checked", ""


def totals(operators: Iterable[OperatorResult]) -> dict[str, int]:
    ops = list(operators)
    out = {"specs": len(ops), "configurations": sum(o.configurations for o in ops),
           "disagreements": sum(o.disagreements for o in ops)}
    for status in ("checked", "unverified", "newer", "skipped"):
        out[status] = sum(o.status == status for o in ops)
    out["configurations_checked"] = sum(o.configurations for o in ops if o.status == "checked")
    return out


def device_dict(device: DeviceReport, caps: Mapping[str, Any]) -> dict[str, Any]:
    return {"advertised": dict(caps), "created": device.created, "max_level": device.max_level,
            "create_at_level": dict(device.levels), "tensor_data_type_support": dict(device.dtypes),
            "d3d12_features_queried": list(device.d3d12_queries), "interfaces_queried": list(device.interfaces)}


# ------------------------------------------------------------------ markdown page
def markdown(report: Mapping[str, Any], *, command: str, max_rows: int = 400) -> str:
    """The docs/results page of a validate report.json (deterministic)."""
    t, dev, lib = report["totals"], report["device"], report["library"]
    adv = dev["advertised"]
    lines = [
        "# DirectML library vs. the docs' tensor-support tables",
        "",
        f"Generated by `{command}` from `report.json`; do not edit by hand.",
        "",
        f"Library: {lib['name']} (`{lib['file']}`), highest feature level **{dev['max_level']}**. "
        "The library ran on a fake D3D12 device (no GPU) through a fake DXCore; "
        "`IDMLDevice::CreateOperator` judged each desc (S_OK = accepted).",
        "",
        "Fake device advertised: " + ", ".join(f"{k}={v}" for k, v in sorted(adv.items())) + ". "
        "Library's DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT: "
        + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in sorted(dev["tensor_data_type_support"].items())) + ".",
        "",
        "| specs | checked | unverified | newer than library | skipped | configurations | in checked specs | disagreements |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {t['specs']} | {t['checked']} | {t['unverified']} | {t['newer']} | {t['skipped']} | {t['configurations']} "
        f"| {t['configurations_checked']} | {t['disagreements']} |",
        "",
        "Tensors are all ones and attributes generic, except for the operator families with a rule in "
        "`dmlconform/backends/directml/tables.py` (`RULES`: spatial windows, recurrent weights, block sizes ...). "
        "*Unverified*: every desc the doc's table allows was rejected, so the planned shapes and attribute values "
        "do not make a valid desc for that operator and its answers say nothing about the table.",
        "",
        "## Disagreements",
        "",
        "| operator | level | doc | library | what | configuration |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    rows = report["disagreements"]
    lines += [f"| {d['operator']} | {d['level']} | {d['doc']} | {d['library']} | {d['what']} | {d['configuration']} |"
              for d in rows[:max_rows]]
    if len(rows) > max_rows:
        lines.append(f"| ... | | | | | {len(rows) - max_rows} more in report.json |")
    lines += ["", "## Operators", "", "| operator | introduced | status | configurations | accepted | disagreements |",
              "| --- | --- | --- | ---: | ---: | ---: |"]
    lines += [f"| {o['operator']} | {o['introduced']} | {o['status']} | {o['configurations']} | {o['accepted']} "
              f"| {o['disagreements']} |" for o in report["operators"]]
    return "\n".join(lines) + "\n"
