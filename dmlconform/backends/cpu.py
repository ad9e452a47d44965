"""The CPU reference backend: the model of a correct DirectML implementation.

DESIGN.md, "The oracle and the CPU reference are two things" and "Backends".
It computes every operator of the default suite in the tensor's own data type
(`families.elementwise.reference`, numpy and ml_dtypes, never the formula engine), reads its
inputs through each tensor's sizes and element strides (stride 0 broadcasts),
writes its outputs through a writable strided view of the output buffer,
handles in-place aliasing (results are computed into temporaries before any
output is written) and validates a case against the support table of its
claimed feature level, as a DirectML device at that level would.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

import dmlconform
from dmlconform.backends.base import (
    SUPPORTED,
    BackendInfo,
    BatchItem,
    NotSupportedError,
    Support,
    joined_input,
    level_option,
    unknown_options,
)
from dmlconform.cases.model import Case, TensorData, is_whole, writable_view
from dmlconform.errors import InputError
from dmlconform.families import reference_of
from dmlconform.families.elementwise.reference import OPS, SCALE_BIAS_OPS, Call
from dmlconform.spec.model import (
    Constraint,
    ConstraintKind,
    FeatureLevel,
    NanPolicy,
    Spec,
    SupportTable,
    TensorSupport,
    field_name,
    numpy_dtype,
)

#: The newest level: what the CPU reference claims unless told otherwise.
NEWEST = max(FeatureLevel)


#: Operators whose result depends on the tensor's shape (a bias per channel):
#: never joined into one flat array by `CpuBackend.run_batch`.
SHAPED_OPS = frozenset({"VALUE_SCALE_2D"})
class CpuBackend:
    """numpy reference; ``feature_level`` (``"6_4"``, ``"5.0"``...) is the
    level whose tables it validates against, the newest by default.  Other
    options are refused, naming the ones it knows."""

    def __init__(self, feature_level: str | FeatureLevel | None = None, **options: str) -> None:
        if options:
            raise InputError(f"cpu backend: {unknown_options(options, ('feature_level',))}")
        self.level = level_option("cpu", feature_level) or NEWEST
        #: `_Rules` per operator and values of the attributes that pick its table, with the spec they
        #: were made from (`_rules_for`)
        self._rules: dict[tuple[str, tuple[tuple[str, object], ...]], tuple[Spec, _Rules]] = {}

    def info(self) -> BackendInfo:
        return BackendInfo(name="cpu", device=f"numpy {np.__version__} on {platform.machine()}",
                           version=dmlconform.__version__, feature_level=self.level, flush_subnormals=False)

    def supports(self, spec: Spec, case: Case) -> Support:
        """The verdict of `_problems` by the rules of ``spec`` at the
        backend's level for the case's attributes."""
        reason = next(_problems(case, self.level, self._rules_for(spec, case.attributes)), None)
        return SUPPORTED if reason is None else Support(False, reason)

    def _rules_for(self, spec: Spec, attributes: tuple[tuple[str, object], ...]) -> _Rules:
        """`_rules`, made once per operator and values of the attributes its
        tables' conditions name, for as long as the spec asked about is equal
        to the one they were made from.  A run asks about every case twice
        (the runner, then `run` or `run_batch`) and a suite has few rules;
        making them each time (finding the table sorts the spec's tables) is
        3% of a whole default run."""
        named = {t.condition.field for t in spec.support if t.condition is not None}
        key = (spec.operator, tuple(a for a in attributes if a[0] in named))
        known = self._rules.get(key)
        if known is None or known[0] != spec:
            known = self._rules[key] = (spec, _rules(spec, key[1], self.level))
        return known[1]

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        verdict = self.supports(spec, case)
        if not verdict.supported:
            raise NotSupportedError(verdict.reason)
        results = compute(spec, case, buffers)
        for out in case.outputs:  # every result is computed before any output is written (in-place)
            writable_view(out, buffers[out.name])[...] = results[out.name]

    def run_batch(self, items: Sequence[BatchItem]) -> list[Exception | None]:
        """Many cases (`backends.base.BatchBackend`): the supported cases of
        an element-wise operator that share operator, data types and
        attributes are computed as one flat array (their inputs broadcast to
        each case's output shape and concatenated), then split into their
        outputs; anything else goes through ``run`` one by one (as does
        everything for a subclass that overrides ``run``: its own run is the
        backend under test)."""
        if type(self).run is not CpuBackend.run:
            return [self._one(*item) for item in items]
        errors: list[Exception | None] = [None] * len(items)
        groups: dict[tuple[object, ...], list[int]] = {}
        for i, (spec, case, _) in enumerate(items):
            verdict = self.supports(spec, case)
            if not verdict.supported:
                errors[i] = NotSupportedError(verdict.reason)
            elif spec.operator in SHAPED_OPS or spec.semantics is not None or not case.outputs:
                errors[i] = self._one(*items[i])
            else:
                key = (spec.operator, case.dtype, case.attributes, tuple((t.name, t.dtype) for t in case.inputs),
                       tuple((t.name, t.dtype) for t in case.outputs))
                groups.setdefault(key, []).append(i)
        for members in groups.values():
            try:
                _run_joined([items[i] for i in members])
            except Exception:  # noqa: BLE001 - each case alone tells whose error it is
                for i in members:
                    errors[i] = self._one(*items[i])
        return errors

    def _one(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> Exception | None:
        try:
            self.run(spec, case, buffers)
        except Exception as exc:  # noqa: BLE001 - returned per item
            return exc
        return None


def _run_joined(items: Sequence[BatchItem]) -> None:
    """Compute like cases of an element-wise operator as one flat array."""
    spec, case0, _ = items[0]
    sizes = [math.prod(case.outputs[0].sizes) for _, case, _ in items]
    inputs = {t.name: joined_input(items, j) for j, t in enumerate(case0.inputs)}
    scatter_flat(items, evaluate(spec, case0, inputs, (sum(sizes),)))  # every result is computed: in-place is safe


def scatter_flat(items: Sequence[BatchItem], results: Mapping[str, np.ndarray]) -> None:
    """Flat ``results`` per output name, like cases end to end as
    `backends.base.joined_input` joins their inputs, into each case's
    output buffers (`write_flat`); call it only once every input has been
    read (an in-place output aliases an input)."""
    offset = 0
    for _, case, buffers in items:
        size = math.prod(case.outputs[0].sizes)
        for out in case.outputs:
            write_flat(out, buffers[out.name], results[out.name][offset:offset + size])
        offset += size


def write_flat(out: TensorData, buffer: np.ndarray, values: np.ndarray) -> None:
    """Flat ``values`` (in ``out``'s logical order) into ``out``'s elements
    of ``buffer``: straight into the buffer where ``out`` is packed over all
    of it (`cases.model.is_whole`), else through a strided view."""
    if is_whole(out, buffer, out.sizes):
        buffer[...] = values
    else:
        writable_view(out, buffer)[...] = values.reshape(out.sizes)


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every output of ``case``, in its storage type and logical shape, as new
    arrays (none aliases a buffer).  An operator with reviewed semantics has
    its family's own reference (`families.Family.reference`)."""
    if spec.semantics is not None:
        return reference_of(spec)(spec, case, buffers)
    shape = case.outputs[0].sizes
    inputs = {t.name: np.broadcast_to(t.view(buffers.get(t.name, t.buffer)), shape) for t in case.inputs}
    return evaluate(spec, case, inputs, shape)


def evaluate(spec: Spec, case: Case, inputs: dict[str, np.ndarray], shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Every output of ``case``'s operator on ``inputs`` (read-only, already
    broadcast to ``shape``), with the case's attributes and data types."""
    attrs = dict(case.attributes)
    if spec.operator in SCALE_BIAS_OPS and ("ScaleBias.Scale" in attrs or "ScaleBias.Bias" in attrs):
        x = inputs["InputTensor"]
        if x.dtype.kind == "f":
            work = np.dtype(np.float64 if x.dtype == np.float64 else np.float32)
            scale = np.asarray(float(attrs.get("ScaleBias.Scale", 1.0)), dtype=work)
            bias = np.asarray(float(attrs.get("ScaleBias.Bias", 0.0)), dtype=work)
            inputs["InputTensor"] = x.astype(work) * scale + bias
    out_types = {t.name: numpy_dtype(t.dtype) for t in case.outputs}
    call = Call(inputs, attrs, case.dtype, out_types, spec.formula.integer_overflow)
    with np.errstate(all="ignore"):
        raw = OPS[spec.operator](call)
        results = dict(raw) if isinstance(raw, Mapping) else {case.outputs[0].name: raw}
        nan = _nan_inputs(inputs, shape) if spec.formula.nan_policy is NanPolicy.PROPAGATE else None
        return {name: _finish(results[name], out_types[name], shape, nan) for name in out_types}


def _nan_inputs(inputs: Mapping[str, np.ndarray], shape: tuple[int, ...]) -> np.ndarray | None:
    """Elements with a NaN in any float input (``nan_policy: propagate``);
    None when there is none (a reduction tells without a mask)."""
    masks = [np.isnan(a) for a in inputs.values() if a.dtype.kind == "f" and a.size and np.isnan(np.min(a))]
    return np.logical_or.reduce([np.broadcast_to(m, shape) for m in masks]) if masks else None


def _finish(values: np.ndarray, dtype: np.dtype, shape: tuple[int, ...], nan: np.ndarray | None) -> np.ndarray:
    """Round once to the output type, NaN where a NaN input propagates.  A
    fresh array of the right type and shape is kept as it is (an op's own
    result; an input view is never one: it does not own its data)."""
    fresh = isinstance(values, np.ndarray) and values.flags.owndata and values.flags.writeable
    if fresh and values.dtype == dtype and values.shape == shape:
        out = values
    else:
        out = np.array(np.broadcast_to(values, shape), dtype=dtype, copy=True)
    if nan is not None and dtype.kind == "f":
        out[nan] = np.nan
    return out


# -- validation ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Rules:
    """What a case of one spec is checked against at one level (for the
    values of the attributes that pick a support table): ``early`` rejects
    every case (no implementation, introduced later, no table); else
    ``table`` in force, its first ``rows`` per tensor and the spec's
    ``same`` constraints and allowed in-place pairs."""

    early: str | None
    table: SupportTable | None = None
    rows: Mapping[str, TensorSupport] = field(default_factory=dict)
    same: tuple[Constraint, ...] = ()
    in_place: frozenset[tuple[str, str]] = frozenset()


def _rules(spec: Spec, attributes: tuple[tuple[str, object], ...], level: FeatureLevel) -> _Rules:
    if spec.operator not in OPS and spec.semantics is None:
        return _Rules(f"the cpu reference has no implementation of {spec.operator}")
    if spec.introduced > level:
        return _Rules(f"{spec.operator} is introduced at {spec.introduced}, above the claimed feature level {level}")
    table = spec.table_for(level, attributes)
    if table is None:
        return _Rules(f"{spec.operator} has no support table in force at feature level {level}")
    rows: dict[str, TensorSupport] = {}
    for row in table.rows:
        rows.setdefault(row.tensor, row)  # `SupportTable.row`: the first one
    return _Rules(None, table, rows, tuple(c for c in spec.constraints if c.kind is ConstraintKind.SAME),
                  frozenset((p.output, p.input) for p in spec.in_place))


def _problems(case: Case, level: FeatureLevel, rules: _Rules) -> Iterator[str]:
    """Why ``case`` is outside what a device at ``level`` accepts, first
    first, by the ``rules`` of its spec there."""
    if rules.early is not None:
        yield rules.early
        return
    tensors = {t.name: t for t in (*case.inputs, *case.outputs)}
    for t in tensors.values():
        yield from _row_problems(rules, t, level)
    yield from _constraint_problems(rules.same, tensors)
    for out, inp in case.aliases:
        if (out, inp) not in rules.in_place:
            yield f"{out} may not alias {inp} (the doc allows in place: {_names(rules.in_place) or 'none'})"


def _row_problems(rules: _Rules, t: TensorData, level: FeatureLevel) -> Iterator[str]:
    row = rules.rows.get(field_name(t.name))  # an array's tensors (``InputTensors[1]``): their field's row
    if row is None:
        yield f"{t.name} has no row in the support table of {rules.table.level} (in force at {level})"  # type: ignore[union-attr]  # rows come from a table
        return
    if t.dtype not in row.dtypes:
        known = ", ".join(d.name for d in row.dtypes)
        yield f"{t.name} data type {t.dtype.name} is not supported at feature level {level} (supported: {known})"
    if len(t.sizes) not in row.dims:
        dims = ", ".join(str(d) for d in row.dims)
        yield (f"{t.name} dimension count {t.dimension_count} is not supported at feature level {level} "
               f"(supported: {dims})")


#: What a ``same`` constraint compares, by property name: the value as
#: compared (one to one with the value shown), and as shown in a reason.
_PROPERTIES: Mapping[str, tuple[Callable[[TensorData], object], Callable[[TensorData], object]]] = MappingProxyType({
    "DataType": (lambda t: t.dtype, lambda t: t.dtype.name),
    "DimensionCount": (lambda t: len(t.sizes), lambda t: len(t.sizes)),
    "Sizes": (lambda t: t.sizes, lambda t: t.sizes)})


def _constraint_problems(same: tuple[Constraint, ...], tensors: Mapping[str, TensorData]) -> Iterator[str]:
    for c in same:
        present = [t for n, t in tensors.items() if field_name(n) in c.tensors]  # with each array's tensors
        if len(present) < 2:  # optional tensors left out: nothing to compare
            continue
        for prop in c.properties:
            compared, shown_as = _PROPERTIES[prop]
            values = [compared(t) for t in present]
            if values.count(values[0]) != len(values):
                named = {t.name: shown_as(t) for t in present}
                shown = ", ".join(f"{n}={v}" for n, v in sorted(named.items()))
                yield f"{', '.join(sorted(named))} must have the same {prop} ({shown})"


def _names(pairs: frozenset[tuple[str, str]]) -> str:
    return ", ".join(f"{o}->{i}" for o, i in sorted(pairs))
