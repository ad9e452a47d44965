"""ONNX Runtime as a backend: a real implementation nobody here wrote.

DESIGN.md, "Backends" (``onnxruntime``; issue 8).  Each spec that ONNX has an
operator for maps to a one-node ONNX model built in memory with
``onnx.helper``.  Every mapped operator is element-wise, so the model takes
1-D tensors of any length: a case's inputs are read through their sizes and
strides (stride 0 broadcasts), flattened, run, and the result is written back
through the output's strided view.  Because rank and length do not reach the
model, one session serves every case with the same (operator, data types,
ONNX attributes, scalar operands); `OnnxRuntimeBackend.run_batch` concatenates
the cases of one such key into one input per tensor.  The runner hands it
every attribute set of an operator and its types in one call, and building a
session costs far more than running a small case, so the keys of one call
that differ only in attributes and scalar operands share one session: its
model has one independent node per key, and one ``session.run`` computes
them all.  Where that session cannot be built or run, each key falls back to
its own one-node session, so a rejected attribute set costs only its cases.

Where ONNX semantics differ from the DirectML doc, the `Mapping` says so in
its ``note`` (``docs/backends.md`` lists them all), and a case the mapping
cannot express exactly raises `NotSupportedError` with the reason: never a
silent approximation.  Options (``--backend-arg``): ``provider`` (default
``CPUExecutionProvider``), ``feature_level`` (default 6_4).
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.backends.base import (
    BackendInfo,
    NotSupportedError,
    Support,
    joined_input,
    level_option,
    unknown_options,
)
from dmlconform.backends.cpu import scatter_flat
from dmlconform.backends.mapping import (
    Attrs,
    check_divisor,
    implements,
    mapping_for,
    support_of,
)
from dmlconform.backends.onnxruntime import contraction as onnx_contraction
from dmlconform.backends.onnxruntime import elementwise as onnx_elementwise
from dmlconform.backends.onnxruntime import index_map as onnx_index_map
from dmlconform.backends.onnxruntime import index_map_generated as onnx_index_map_generated
from dmlconform.backends.onnxruntime import interpolation as onnx_interpolation
from dmlconform.backends.onnxruntime import normalization as onnx_normalization
from dmlconform.backends.onnxruntime import reduction as onnx_reduction
from dmlconform.backends.onnxruntime import roi as onnx_roi
from dmlconform.backends.onnxruntime import sequence as onnx_sequence
from dmlconform.backends.onnxruntime import softmax as onnx_softmax
from dmlconform.backends.onnxruntime import value_scale as onnx_value_scale
from dmlconform.backends.onnxruntime import window as onnx_window
from dmlconform.backends.onnxruntime.node import OnnxMapping
from dmlconform.backends.onnxruntime.shaped import Sessions
from dmlconform.cases.model import Case
from dmlconform.errors import InputError
from dmlconform.spec.model import FeatureLevel, Spec, numpy_dtype

INSTALL_HINT = "pip install 'dmlconform[onnxruntime]'"
#: Sessions (and build errors) a backend keeps; at this many it starts over.
#: The default suite needs a few hundred.
SESSIONS_KEPT = 1024
#: Keys that share one session at most.  Building a session costs little
#: per node where onnxruntime has the node's kernel (0.1 ms for one float32
#: HardSigmoid, 0.18 ms for eight) and more where it must insert casts
#: (float16: 0.3-0.5 ms a node, growing faster than the node count when all
#: are float16).  A family spans data types (`Plan.family`), so its chunks
#: mix them.  One run_batch call with every case of an operator in the
#: default suite (models, sessions and runs) at 8 / 16 / 24 / 32 nodes a
#: session took, in ms on a 2-core machine:
#: HardSigmoid (22 keys) 2.84 / 2.47 / 2.11 / 2.15, Shrink (72 keys)
#: 8.13 / 5.59 / 5.42 / 5.11, Sign (10 keys) 2.07 / 1.59 / 1.59 / 1.67,
#: Clip (many keys, two integer types without a kernel) 16.3 / 14.0 / 14.7
#: / 14.9.
FAMILY_NODES = 24

Item = tuple[Spec, Case, Mapping[str, np.ndarray]]


#: Every spec operator this backend maps, with how ONNX differs from the doc: each family's
#: adapter's (`backends.onnxruntime.<family>`), in this order.
MAPPINGS: Mapping[str, OnnxMapping] = {
    **onnx_elementwise.MAPPINGS, **onnx_softmax.MAPPINGS, **onnx_reduction.MAPPINGS, **onnx_sequence.MAPPINGS,
    **onnx_contraction.MAPPINGS, **onnx_value_scale.MAPPINGS, **onnx_index_map.MAPPINGS,
    **onnx_window.MAPPINGS, **onnx_normalization.MAPPINGS,
    **onnx_interpolation.MAPPINGS, **onnx_roi.MAPPINGS, **onnx_index_map_generated.MAPPINGS,
}


@dataclass(frozen=True, slots=True)
class Plan:
    """One case resolved against its mapping: the session key (spec
    operator, ONNX operator, tensor names and types, ONNX attributes, scalar
    operands) and what to feed."""

    key: tuple[Any, ...]
    mapping: OnnxMapping
    attrs: dict[str, Any]
    scalars: tuple[float | int, ...]

    @property
    def family(self) -> tuple[Any, ...]:
        """The key's operators: plans of one family can be nodes of one
        model (same operator and opset; each node has its own types,
        attributes and scalar operands)."""
        return self.key[:2]

    @property
    def types(self) -> tuple[Any, ...]:
        """The key without attributes and scalar operands: the family's
        plans of one combination of tensor types."""
        return self.key[:3]


def plan(spec: Spec, case: Case) -> Plan:
    """The mapping of ``case``, or NotSupportedError saying why there is none."""
    mapping = mapping_for(MAPPINGS, spec, case, "ONNX has no one-node equivalent of")
    a = Attrs(spec, case)
    if a.dtype.kind in "iu" and not mapping.integer:
        raise NotSupportedError(f"ONNX {mapping.op_type} on {case.dtype.name} differs from the doc's integer rule")
    attrs, scalars = mapping.attrs(a) if mapping.attrs else ({}, ())
    if mapping.check is not None:
        mapping.check(spec, case)
    unread = a.unread()
    if unread:
        raise NotSupportedError(f"{spec.operator}: the mapping has no place for {', '.join(unread)}")
    types = tuple((t.name, t.dtype.name) for t in (*case.inputs, *case.outputs))
    key = (spec.operator, mapping.op_type, types, tuple(sorted(attrs.items())), scalars)
    return Plan(key, mapping, attrs, scalars)


class OnnxRuntimeBackend:
    """onnxruntime through one-node models; ``provider`` picks the execution
    provider (any name onnxruntime knows, default ``CPUExecutionProvider``)."""

    def __init__(self, provider: str = "CPUExecutionProvider", feature_level: str | None = None,
                 threads: str | int = 1, **options: str) -> None:
        if options:
            known = ("provider", "feature_level", "threads")
            raise InputError(f"onnxruntime backend: {unknown_options(options, known)}")
        self.provider = provider
        self.level = level_option("onnxruntime", feature_level) or max(FeatureLevel)
        try:
            self.threads = int(threads)
        except ValueError:
            raise InputError(f"onnxruntime backend: threads={threads!r} is not a whole number") from None
        #: plan key, or tuple of plan keys (`_run_family`) -> InferenceSession or the error its build gave
        self.sessions: dict[tuple[Any, ...], Any] = {}
        self.hits = 0     # session look-ups the cache answered
        self.misses = 0   # sessions built (one-node or a family's, failed builds included)
        self._ort, self._reason = _import()
        if self._ort is not None and provider not in self._ort.get_available_providers():
            self._reason = (f"execution provider {provider!r} is not available in this onnxruntime build "
                            f"(available: {', '.join(self._ort.get_available_providers())})")

    def info(self) -> BackendInfo:
        version = getattr(self._ort, "__version__", "not installed")
        return BackendInfo(name="onnxruntime", device=f"onnxruntime {version} {self.provider} on {platform.machine()}",
                           version=version, feature_level=self.level,
                           flush_subnormals=False, available=self._reason is None, reason=self._reason,
                           subset=True)  # ONNX's operators, not DirectML's: a mapping covers part of each table

    def implements(self, spec: Spec) -> str | None:
        """Why onnxruntime does not implement ``spec``'s operator at all
        (`backends.base.ImplementingBackend`), from the mapping table."""
        return implements(MAPPINGS, spec, "ONNX has no one-node equivalent of")

    def supports(self, spec: Spec, case: Case) -> Support:
        return support_of(self.plan, spec, case)

    def plan(self, spec: Spec, case: Case) -> Plan:
        """`plan`, made at each ask: remembering plans (per spec, attribute
        set and tensor types) cost as much as making them again, 7 us a
        case either way on a whole default onnxruntime run."""
        return plan(spec, case)

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        error = self.run_batch([(spec, case, buffers)])[0]
        if error is not None:
            raise error

    def run_batch(self, items: Sequence[Item]) -> list[Exception | None]:
        """Run many cases: those with one session key go through one
        ``session.run`` on their concatenated inputs, and the keys of one
        family (`Plan.family`: they differ only in tensor types, ONNX
        attributes or scalar operands), `FAMILY_NODES` at a time, through
        one session of one node per key (`_run_chunk`); keys of cases
        outside the feature level's tables (which onnxruntime may well lack
        kernels for) in sessions of their own.  Returns, per item,
        None or the exception that item raised (NotSupportedError to
        reject); one bad case does not cost the others."""
        errors: list[Exception | None] = [None] * len(items)
        groups: dict[tuple[Any, ...], list[tuple[int, Plan]]] = {}
        for i, (spec, case, buffers) in enumerate(items):
            try:
                p = self.plan(spec, case)
                _check_divisor(p.mapping, case, buffers)
                if p.mapping.runner is not None:  # a family that keeps shapes runs its cases itself
                    p.mapping.runner(spec, case, buffers, self._sessions(case))
                    continue
            except Exception as exc:  # noqa: BLE001 - returned per item
                errors[i] = exc
                continue
            groups.setdefault(p.key, []).append((i, p))
        families: dict[tuple[Any, ...], list[list[tuple[int, Plan]]]] = {}
        for members in groups.values():  # probes outside the tables apart: a rejection costs only them
            probe = not any(items[i][1].expect_supported for i, _ in members)
            families.setdefault((members[0][1].family, probe), []).append(members)
        chunks = (family[lo:lo + FAMILY_NODES] for family in families.values()
                  for lo in range(0, len(family), FAMILY_NODES))
        for chunk in chunks:
            self._run_chunk(items, chunk, errors)
        return errors

    def _sessions(self, case: Case) -> Sessions:
        """The session cache as a runner sees it (`backends.onnxruntime.shaped`):
        a build error names the runner's node and ``case``'s type."""
        return Sessions(lambda key, make, op_type: self._cached(key, lambda: self._build(make(), op_type, case)),
                        f"onnxruntime {self._ort.__version__} ({self.provider})")

    def _run_chunk(self, items: Sequence[Item], chunk: list[list[tuple[int, Plan]]],
                   errors: list[Exception | None]) -> None:
        """The groups of ``chunk`` (keys of one family) through one session
        (`_run_family`); where it cannot be built or run, those of each
        combination of types through one (a type onnxruntime lacks a kernel
        for costs only its own keys), and then each key alone, with the
        error it gives alone."""
        if len(chunk) > 1 and self._run_family(items, chunk, errors):
            return
        by_types: dict[tuple[Any, ...], list[list[tuple[int, Plan]]]] = {}
        for members in chunk:
            by_types.setdefault(members[0][1].types, []).append(members)
        if len(by_types) > 1:
            for part in by_types.values():
                self._run_chunk(items, part, errors)
            return
        for members in chunk:
            try:
                self._run_group([items[i] for i, _ in members], members[0][1])
            except Exception as exc:  # noqa: BLE001 - every member gets the group's error
                for i, _ in members:
                    errors[i] = exc

    def _run_group(self, items: list[Item], p: Plan) -> None:
        """The cases of one key through the key's one-node session."""
        session = self.session(p, items[0][1])
        (y,) = session.run(None, _feeds(items, p, "x", "s"))
        _scatter(items, y)  # the run is over: in-place outputs are safe to write

    def _run_family(self, items: Sequence[Item], family: list[list[tuple[int, Plan]]],
                    errors: list[Exception | None]) -> bool:
        """The groups of several keys of one family through one session whose
        model has a node per key, cached under the tuple of keys: one
        session to build instead of one per data type and attribute set
        (most of a small batch's time).  False, with nothing written, when
        that session cannot be built or run: the caller then runs smaller
        groups (`_run_chunk`), so a rejected type or attribute set costs only
        its own cases, with the error it gives alone."""
        parts = [[items[i] for i, _ in members] for members in family]
        plans = [members[0][1] for members in family]
        try:
            session = self._cached(tuple(p.key for p in plans),
                                   lambda: self._build(build_family_model(plans, [part[0][1] for part in parts]),
                                                       plans[0].mapping.op_type, parts[0][0][1]))
            feeds: dict[str, np.ndarray] = {}
            for k, (p, part) in enumerate(zip(plans, parts)):
                feeds.update(_feeds(part, p, f"x{k}_", f"s{k}_"))
            outputs = session.run(None, feeds)
        except Exception:  # noqa: BLE001 - each key alone tells whose error it is
            return False
        for members, part, y in zip(family, parts, outputs):  # the run is over: in-place outputs are safe to write
            try:
                _scatter(part, y)
            except Exception as exc:  # noqa: BLE001 - every member gets the group's error
                for i, _ in members:
                    errors[i] = exc
        return True

    def session(self, p: Plan, case: Case) -> Any:
        """The cached one-node session of ``p.key``; a kernel onnxruntime
        lacks is cached as its error, so it is asked for once."""
        return self._cached(p.key, lambda: self._build(build_model(p, case), p.mapping.op_type, case))

    def _cached(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        """The session (or the error its build gave, raised) cached under
        ``key``: a plan's key, or a tuple of them for a family's session.
        ``misses`` counts the builds (failed ones included), ``hits`` the
        look-ups the cache answered; at `SESSIONS_KEPT` the cache starts
        over."""
        found = self.sessions.get(key)
        if found is None:
            self.misses += 1
            if len(self.sessions) >= SESSIONS_KEPT:
                self.sessions.clear()
            found = self.sessions[key] = build()
        else:
            self.hits += 1
        if isinstance(found, Exception):
            raise found
        return found

    def _options(self) -> Any:
        """The session options of every model: quiet, the backend's threads, no graph rewriting."""
        options = self._ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = self._ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if self.provider != "CPUExecutionProvider":  # never let a node fall back to the CPU silently
            options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        return options

    def _build(self, model: Any, op_type: str, case: Case) -> Any:
        """A session of ``model``, or the NotSupportedError its creation gave
        (naming ``op_type``, the node the model was built for, and ``case``'s
        type: both part of every session key, so a cached error reads the
        same whichever case built it)."""
        options = self._options()
        try:
            return self._ort.InferenceSession(model.SerializeToString(), options, providers=[self.provider])
        except Exception as exc:  # noqa: BLE001 - a missing kernel or type is a clean rejection
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return NotSupportedError(f"onnxruntime {self._ort.__version__} ({self.provider}) cannot run "
                                     f"{op_type} on {case.dtype.name}: {first}")


def _feeds(items: list[Item], p: Plan, x: str, s: str) -> dict[str, np.ndarray]:
    """The inputs of ``p``'s node for ``items`` (cases of one key): tensor
    j's elements of every case end to end as ``{x}{j}``, scalar operand j as
    ``{s}{j}``."""
    case0 = items[0][1]
    feeds: dict[str, np.ndarray] = {}
    for j, t in enumerate(case0.inputs):
        joined = np.ascontiguousarray(joined_input(items, j))
        feeds[f"{x}{j}"] = (joined != 0) if t.name in p.mapping.bool_inputs else joined
    for j, value in enumerate(p.scalars):
        feeds[f"{s}{j}"] = np.asarray(value, dtype=numpy_dtype(case0.dtype))
    return feeds


def _scatter(items: list[Item], y: np.ndarray) -> None:
    """The flat result ``y`` of ``items`` (end to end, as `_feeds` joined
    them, in ONNX's output type) into each case's output buffer
    (`cpu.scatter_flat`: only once every input has been read)."""
    out = items[0][1].outputs[0]
    scatter_flat(items, {out.name: y.astype(numpy_dtype(out.dtype), copy=False)})


def build_model(p: Plan, case: Case) -> Any:
    """The one-node model of a plan: 1-D inputs ``x0..`` of any length,
    scalar operands ``s0..``, output ``y``."""
    return _model([_node(p, case, "x", "s", "y", "n")], p, case)


def build_family_model(plans: Sequence[Plan], cases: Sequence[Case]) -> Any:
    """One model for the plans of one family (``cases[k]`` one case of
    ``plans[k]``): node k reads ``x{k}_0..`` and ``s{k}_0..`` and writes
    ``y{k}``, of length ``n{k}``; the nodes share nothing (not even a
    length: onnxruntime holds tensors of one named length equal, and plans
    memory by it), so each computes what its one-node model would."""
    return _model([_node(p, case, f"x{k}_", f"s{k}_", f"y{k}", f"n{k}")
                   for k, (p, case) in enumerate(zip(plans, cases))], plans[0], cases[0])


def _model(nodes: list[tuple[list[Any], Any, Any]], p: Plan, case: Case) -> Any:
    """The model of ``nodes`` (`_node`'s graph inputs, node and graph
    output each), at ``p``'s opset, named after ``case``'s operator."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import: only this backend's runs need it

    inputs = [i for node_inputs, _, _ in nodes for i in node_inputs]
    graph = helper.make_graph([node for _, node, _ in nodes], case.operator.lower(), inputs,
                              [output for _, _, output in nodes])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", p.mapping.opset)], ir_version=9)


def _node(p: Plan, case: Case, x: str, s: str, y: str, n: str) -> tuple[list[Any], Any, Any]:
    """``p``'s node with its graph inputs (1-D tensors ``{x}{j}`` of any
    length ``n``, 0-d scalar operands ``{s}{j}``) and its graph output ``y``."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import: only this backend's runs need it

    inputs = [_value_info(f"{x}{j}", _onnx_type(np.dtype(bool) if t.name in p.mapping.bool_inputs else t.dtype), n)
              for j, t in enumerate(case.inputs)]
    inputs += [_value_info(f"{s}{j}", _onnx_type(case.dtype), None) for j in range(len(p.scalars))]
    node = helper.make_node(p.mapping.op_type, [i.name for i in inputs], [y], **p.attrs)
    output = _value_info(y, _onnx_type(_output_type(p.mapping, case)), n)
    return inputs, node, output


def _value_info(name: str, elem_type: int, length: str | None) -> Any:
    """A tensor's ValueInfoProto: 1-D of the named ``length``, or 0-d
    (None): what ``onnx.helper.make_tensor_value_info`` makes of a shape
    ``[length]`` or ``[]``, without its checks (a test holds them equal);
    a family's model has some hundred of them."""
    import onnx  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import: only this backend's runs need it

    info = onnx.ValueInfoProto(name=name)
    tensor = info.type.tensor_type
    tensor.elem_type = elem_type
    tensor.shape.SetInParent()
    if length is not None:
        tensor.shape.dim.add().dim_param = length
    return info


@functools.cache
def _onnx_type(dtype: Any) -> int:
    """ONNX's element type of a data type (a `DataType`, or a numpy dtype)."""
    from onnx import helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra) and slow to import: only this backend's runs need it

    return helper.np_dtype_to_tensor_dtype(dtype if isinstance(dtype, np.dtype) else numpy_dtype(dtype))


_BOOL_RESULTS = frozenset({"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor",
                           "Not", "IsInf", "IsNaN"})


def _output_type(mapping: OnnxMapping, case: Case) -> np.dtype:
    """ONNX's output type: bool for predicates (written as 0/1 into the
    doc's integer output, exact), else the input type."""
    if mapping.op_type in _BOOL_RESULTS:
        return np.dtype(bool)
    source = next(t for t in case.inputs if t.name not in mapping.bool_inputs)
    return numpy_dtype(source.dtype)


def _check_divisor(mapping: OnnxMapping, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
    if mapping.divisor is not None:
        check_divisor(case, buffers, mapping.divisor, mapping.op_type)


def _import() -> tuple[Any, str | None]:
    """onnxruntime and onnx, or the reason they cannot be used."""
    try:
        import onnx  # noqa: F401, PLC0415 - optional (the [onnxruntime] extra): the backend reports itself unavailable
        import onnxruntime  # noqa: PLC0415 - optional (the [onnxruntime] extra), ~0.3 s to import: only this backend's runs
    except ImportError as exc:
        return None, f"{exc.name or 'onnxruntime'} is not installed ({INSTALL_HINT})"
    return onnxruntime, None


