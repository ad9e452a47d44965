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
import math
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, TypeVar

import numpy as np

from dmlconform.backends import (
    onnx_bitwise,
    onnx_contraction,
    onnx_reduction,
    onnx_sequence,
    onnx_softmax,
    onnx_value_scale,
)
from dmlconform.backends.base import (
    SUPPORTED,
    BackendInfo,
    NotSupportedError,
    Support,
    joined_input,
    level_option,
    unknown_options,
)
from dmlconform.backends.cpu import scatter_flat
from dmlconform.backends.cpu_ops import float32_of
from dmlconform.backends.onnx_shaped import Sessions
from dmlconform.cases.model import Case, numpy_dtype
from dmlconform.errors import InputError
from dmlconform.spec.model import FeatureLevel, Spec, TensorRole

INSTALL_HINT = "pip install 'dmlconform[onnxruntime]'"
#: The opset every model uses unless its `Mapping` needs a newer one; old
#: enough for the onnxruntime builds of the last few years.
BASE_OPSET = 18
#: HardSigmoid at its newest version (the one the onnx node tests use).  At
#: `BASE_OPSET` onnxruntime has no float16 HardSigmoid kernel and expands
#: ONNX's function body (Mul, Add, Min, Max, with casts) at session creation,
#: about 0.4 ms a node; at 22 it casts around its own float kernel, with the
#: same bits for every float16 input (a test checks it) at a quarter of the
#: session cost.  float64 (outside DirectML's tables) has no kernel at 22 and
#: is NOT_SUPPORTED.  Not for the rest: at 22 Softsign float16 differs from
#: its function body on 6 finite inputs, PRelu INT32 loses its kernel, Selu
#: float16 warns and IsInf float16 passes, each a result change of its own.
KERNEL_OPSET = 22
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

Value = float | int | bool | str
Item = tuple[Spec, Case, Mapping[str, np.ndarray]]


class Attrs:
    """A case's attributes as a mapping function reads them: FLOAT members
    rounded to float32 as the C struct holds them, the doc's default where
    the case gives none, and a record of which names were read (an
    attribute the mapping ignores makes the case NOT_SUPPORTED)."""

    def __init__(self, spec: Spec, case: Case) -> None:
        self.values = dict(case.attributes)
        self.defaults = {f.name: f.default for f in spec.fields if f.default is not None}
        self.dtype = numpy_dtype(case.dtype)
        self.read: set[str] = set()

    def raw(self, name: str) -> Value | None:
        self.read.add(name)
        return self.values.get(name, self.defaults.get(name))

    def f32(self, name: str) -> float:
        value = self.raw(name)
        if value is None:
            raise NotSupportedError(f"attribute {name} has no value and the doc gives no default")
        return float(float32_of(value))

    def unread(self) -> list[str]:
        return sorted(set(self.values) - self.read)


def _exact(value: Value) -> Fraction | float:
    return Fraction(value) if isinstance(value, str) else value


@dataclass(frozen=True, slots=True)
class OnnxMapping:
    """How one spec operator becomes one ONNX node.

    ``inputs``: the spec's input tensors in the node's input order;
    ``attrs``: case attributes -> (ONNX attributes, scalar operands appended
    as extra 0-d inputs in the tensor's type), raising NotSupportedError
    where ONNX cannot express the case; ``bool_inputs``: ONNX takes bool
    where the doc takes numbers (``x != 0``, exact); ``note``: how ONNX
    differs from the doc (shown in docs/backends.md).

    A family whose node needs the case's shapes (softmax, reduction,
    sequence, contraction: `backends.onnx_shaped`) names a ``runner``,
    which runs each case itself with the backend's `Sessions`, and a
    ``check`` raising NotSupportedError for a case no node expresses;
    ``outputs`` is how many outputs its node gives (TopK: 2)."""

    op_type: str
    inputs: tuple[str, ...] = ("InputTensor",)
    attrs: Callable[[Attrs], tuple[dict[str, Any], tuple[float | int, ...]]] | None = None
    opset: int = BASE_OPSET
    bool_inputs: tuple[str, ...] = ()
    integer: bool = True          # False: integer tensors are NOT_SUPPORTED (ONNX semantics differ)
    divisor: str | None = None    # integer input whose zeros ONNX leaves undefined (a crash)
    note: str = ""
    runner: Callable[[Spec, Case, Mapping[str, np.ndarray], Sessions], None] | None = None
    check: Callable[[Spec, Case], object] | None = None
    outputs: int = 1


def _named(**pairs: str) -> Callable[[Attrs], tuple[dict[str, Any], tuple[float | int, ...]]]:
    """ONNX float attribute <- doc FLOAT member, by name."""
    return lambda a: ({onnx: a.f32(doc) for onnx, doc in pairs.items()}, ())


def _shrink(a: Attrs) -> tuple[dict[str, Any], tuple[float | int, ...]]:
    threshold = a.f32("Threshold")
    if threshold < 0:
        raise NotSupportedError(f"Threshold={threshold} < 0: the doc's branches overlap and its first one "
                                "(x > Threshold) wins; ONNX Shrink tests x < -lambd first")
    return {"lambd": threshold, "bias": a.f32("Bias")}, ()


def require(a: Attrs, name: str, want: Fraction | float, function: str) -> None:
    """A doc member that the implementation's function fixes: the case must
    hold exactly that value (compared as the float32 the struct holds)."""
    got = a.f32(name)
    if a.dtype == np.float64:  # the function's constant is a double there, the struct's member a float32
        exact = float(want)
    else:
        exact = float(float32_of(str(want) if isinstance(want, Fraction) else want))
    if got != exact:
        raise NotSupportedError(f"{name}={got!r}: {function} fixes it at {want} (in {a.dtype})")


def _only(name: str, want: Fraction | float, onnx_form: str) -> Callable[[Attrs], tuple[dict[str, Any], tuple]]:
    def attrs(a: Attrs) -> tuple[dict[str, Any], tuple]:
        require(a, name, want, f"ONNX {onnx_form}")
        return {}, ()
    return attrs


def _hard_swish(a: Attrs) -> tuple[dict[str, Any], tuple]:
    _only("Alpha", Fraction(1, 6), "HardSwish")(a)
    return _only("Beta", 0.5, "HardSwish")(a)


def _int_bound(value: Value | None, dtype: np.dtype, *, lower: bool) -> int | None:
    """A Clip bound for an integer tensor: the doc truncates it toward zero;
    a bound beyond the type on its harmless side becomes the type's limit,
    one beyond it on the other side cannot be expressed (None)."""
    info = np.iinfo(dtype)
    if value is None:
        return int(info.min if lower else info.max)
    v = _exact(value)
    if not math.isfinite(v):
        return int(info.min if lower else info.max) if (v < 0) == lower else None
    k = math.trunc(v)
    if (lower and k <= info.min) or (not lower and k >= info.max):
        return int(info.min if lower else info.max)
    return k if info.min <= k <= info.max else None


def _float_bound(a: Attrs, name: str, default: float) -> float:
    value = a.raw(name)
    kind = a.raw("MinMaxDataType")
    if value is None:
        return default
    if isinstance(kind, str) and kind.upper().endswith("FLOAT16"):  # the scalar union holds a half
        return float(np.float16(float(_exact(value))))
    return float(float32_of(value))


def clip_bounds(a: Attrs) -> tuple[dict[str, Any], tuple[float | int, ...]]:
    """Clip's bounds are inputs since opset 11: two scalars in the tensor type."""
    lo: float | None  # int bounds are None where they lie outside the type
    hi: float | None
    if a.dtype.kind in "iu":
        lo, hi = _int_bound(a.raw("Min"), a.dtype, lower=True), _int_bound(a.raw("Max"), a.dtype, lower=False)
        a.raw("MinMaxDataType")
        if lo is None or hi is None:
            raise NotSupportedError(f"Min={a.raw('Min')!r}, Max={a.raw('Max')!r} lie outside {a.dtype}: the doc "
                                    "then gives the bound fitted to the type, which ONNX Clip cannot express")
    else:
        lo, hi = _float_bound(a, "Min", -math.inf), _float_bound(a, "Max", math.inf)
        lo, hi = _in_type(a, lo), _in_type(a, hi)
    if lo > hi:
        raise NotSupportedError(f"Min={lo!r} > Max={hi!r}: the doc gives Min (max(Min, min(x, Max))), "
                                "ONNX Clip and torch.clamp give Max")
    return {}, (lo, hi)


def _threshold(a: Attrs) -> tuple[dict[str, Any], tuple[float | int, ...]]:
    if a.dtype.kind in "iu":
        lo = _int_bound(a.raw("Min"), a.dtype, lower=True)
        if lo is None:
            raise NotSupportedError(f"Min={a.raw('Min')!r} lies above {a.dtype}'s range")
        return {}, (lo,)
    return {}, (_in_type(a, a.f32("Min")),)


def _in_type(a: Attrs, value: float) -> float:
    """``value`` rounded to the tensor type, as the operator compares with
    it: beyond float16's range it is the infinity of its sign (no warning)."""
    with np.errstate(over="ignore"):
        return float(a.dtype.type(value))


def _is_infinity(a: Attrs) -> tuple[dict[str, Any], tuple]:
    mode = str(a.raw("InfinityMode") or "EITHER").upper()
    mode = {"0": "EITHER", "1": "POSITIVE", "2": "NEGATIVE"}.get(mode, mode)
    return {"detect_positive": int(not mode.endswith("NEGATIVE")),
            "detect_negative": int(not mode.endswith("POSITIVE"))}, ()


def _softplus(a: Attrs) -> tuple[dict[str, Any], tuple]:
    return _only("Steepness", 1.0, "Softplus (no steepness)")(a)


def _mod(fmod: int) -> Callable[[Attrs], tuple[dict[str, Any], tuple]]:
    def attrs(a: Attrs) -> tuple[dict[str, Any], tuple]:
        if fmod == 0 and a.dtype.kind == "f":
            raise NotSupportedError("ONNX Mod with fmod=0 (floor modulus) is defined for integers only")
        return {"fmod": fmod}, ()
    return attrs


def _constant(attrs: dict[str, Any]) -> Callable[[Attrs], tuple[dict[str, Any], tuple]]:
    return lambda a: (dict(attrs), ())


def _every_attribute(a: Attrs) -> tuple[dict[str, Any], tuple]:
    """A runner's attributes: every one is read (by its ``check``), none is passed to a flat node."""
    for name in list(a.values):
        a.raw(name)
    return {}, ()


_AB = ("ATensor", "BTensor")
_CLIP_NOTE = ("Min/Max become the min/max inputs in the tensor type (integer tensors: truncated toward zero); "
              "Min > Max is NOT_SUPPORTED (ONNX gives Max, the doc Min)")
_UNARY = {
    "ELEMENT_WISE_ABS": "Abs", "ELEMENT_WISE_ACOS": "Acos", "ELEMENT_WISE_ACOSH": "Acosh",
    "ELEMENT_WISE_ASIN": "Asin", "ELEMENT_WISE_ASINH": "Asinh", "ELEMENT_WISE_ATAN": "Atan",
    "ELEMENT_WISE_ATANH": "Atanh", "ELEMENT_WISE_CEIL": "Ceil", "ELEMENT_WISE_COS": "Cos",
    "ELEMENT_WISE_COSH": "Cosh", "ELEMENT_WISE_ERF": "Erf", "ELEMENT_WISE_EXP": "Exp",
    "ELEMENT_WISE_FLOOR": "Floor", "ELEMENT_WISE_IDENTITY": "Identity", "ELEMENT_WISE_LOG": "Log",
    "ELEMENT_WISE_NEGATE": "Neg", "ELEMENT_WISE_RECIP": "Reciprocal", "ELEMENT_WISE_SIGN": "Sign",
    "ELEMENT_WISE_SIN": "Sin", "ELEMENT_WISE_SINH": "Sinh", "ELEMENT_WISE_SQRT": "Sqrt",
    "ELEMENT_WISE_TAN": "Tan", "ELEMENT_WISE_TANH": "Tanh", "ACTIVATION_IDENTITY": "Identity",
    "ACTIVATION_RELU": "Relu", "ACTIVATION_SIGMOID": "Sigmoid", "ACTIVATION_SOFTSIGN": "Softsign",
    "ACTIVATION_TANH": "Tanh",
}
_BINARY = {
    "ELEMENT_WISE_ADD": "Add", "ELEMENT_WISE_ADD1": "Add", "ELEMENT_WISE_SUBTRACT": "Sub",
    "ELEMENT_WISE_MULTIPLY": "Mul", "ELEMENT_WISE_MAX": "Max", "ELEMENT_WISE_MIN": "Min",
    "ELEMENT_WISE_POW": "Pow", "ELEMENT_WISE_LOGICAL_EQUALS": "Equal",
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": "Greater", "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": "GreaterOrEqual",
    "ELEMENT_WISE_LOGICAL_LESS_THAN": "Less", "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": "LessOrEqual",
}
_LOGICAL = {"ELEMENT_WISE_LOGICAL_AND": "And", "ELEMENT_WISE_LOGICAL_OR": "Or", "ELEMENT_WISE_LOGICAL_XOR": "Xor"}

#: Every spec operator this backend maps, with how ONNX differs from the doc.
MAPPINGS: Mapping[str, OnnxMapping] = {
    **{op: OnnxMapping(onnx) for op, onnx in _UNARY.items()},
    **{op: OnnxMapping(onnx, _AB) for op, onnx in _BINARY.items()},
    **{op: OnnxMapping(onnx, _AB, bool_inputs=_AB, note="ONNX takes bool; the doc's nonzero is true (x != 0)")
       for op, onnx in _LOGICAL.items()},
    "ELEMENT_WISE_LOGICAL_NOT": OnnxMapping("Not", bool_inputs=("InputTensor",),
                                         note="ONNX takes bool; the doc's nonzero is true (x != 0)"),
    "ELEMENT_WISE_DIVIDE": OnnxMapping("Div", _AB, divisor="BTensor",
                                    note="integer division by zero is undefined in ONNX (a crash): such cases are "
                                         "NOT_SUPPORTED"),
    "ELEMENT_WISE_MODULUS_FLOOR": OnnxMapping("Mod", _AB, _mod(0), divisor="BTensor",
                                           note="Mod fmod=0 is integer-only in ONNX: float cases are NOT_SUPPORTED"),
    "ELEMENT_WISE_MODULUS_TRUNCATE": OnnxMapping("Mod", _AB, _mod(1), divisor="BTensor", note="Mod with fmod=1"),
    "ELEMENT_WISE_MEAN": OnnxMapping("Mean", _AB),
    "ELEMENT_WISE_BIT_SHIFT_LEFT": OnnxMapping("BitShift", _AB, _constant({"direction": "LEFT"}),
                                            note="ONNX leaves shifts by >= the bit width undefined"),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": OnnxMapping("BitShift", _AB, _constant({"direction": "RIGHT"}),
                                             note="ONNX leaves shifts by >= the bit width undefined"),
    "ELEMENT_WISE_IF": OnnxMapping("Where", ("ConditionTensor", *_AB), bool_inputs=("ConditionTensor",),
                                note="Where takes a bool condition; the doc's nonzero is true"),
    "ELEMENT_WISE_IS_INFINITY": OnnxMapping("IsInf", attrs=_is_infinity,
                                         note="InfinityMode -> detect_positive/detect_negative; bool output"),
    "ELEMENT_WISE_CLIP": OnnxMapping("Clip", attrs=clip_bounds, note=_CLIP_NOTE),
    "ELEMENT_WISE_CLIP1": OnnxMapping("Clip", attrs=clip_bounds, note=_CLIP_NOTE),
    "ELEMENT_WISE_THRESHOLD": OnnxMapping("Max", attrs=_threshold, note="max(x, Min) as Max with a scalar Min input"),
    "ELEMENT_WISE_CONSTANT_POW": OnnxMapping(
        "Pow", attrs=lambda a: ({}, (_in_type(a, a.f32("Exponent")),)), integer=False,
        note="Exponent becomes a scalar input in the tensor type"),
    "ACTIVATION_CELU": OnnxMapping("Celu", attrs=_named(alpha="Alpha")),
    "ACTIVATION_ELU": OnnxMapping("Elu", attrs=_named(alpha="Alpha")),
    "ACTIVATION_GELU": OnnxMapping("Gelu", attrs=_constant({"approximate": "none"}), opset=20),
    "ACTIVATION_HARD_SIGMOID": OnnxMapping("HardSigmoid", attrs=_named(alpha="Alpha", beta="Beta"),
                                        opset=KERNEL_OPSET,
                                        note="alpha/beta always passed (ONNX defaults 0.2/0.5 equal the doc's)"),
    "ACTIVATION_HARD_SWISH": OnnxMapping("HardSwish", attrs=_hard_swish, opset=18,
                                      note="ONNX fixes alpha=1/6, beta=0.5: other Alpha/Beta are NOT_SUPPORTED"),
    "ACTIVATION_LEAKY_RELU": OnnxMapping("LeakyRelu", attrs=_named(alpha="Alpha")),
    "ACTIVATION_PARAMETERIZED_RELU": OnnxMapping("PRelu", ("InputTensor", "SlopeTensor")),
    "ACTIVATION_SCALED_ELU": OnnxMapping("Selu", attrs=_named(alpha="Alpha", gamma="Gamma"),
                                      note="ONNX Selu: gamma * (alpha * exp(x) - alpha) for x <= 0 (the doc: x > 0 "
                                           "branch first; same at 0)"),
    "ACTIVATION_SHRINK": OnnxMapping("Shrink", attrs=_shrink,
                                  note="Threshold -> lambd, Bias -> bias; Threshold < 0 is NOT_SUPPORTED (branch order)"),
    "ACTIVATION_SOFTPLUS": OnnxMapping("Softplus", attrs=_softplus,
                                    note="ONNX Softplus has no steepness: only Steepness = 1 maps"),
    "ACTIVATION_SWISH": OnnxMapping("Swish", attrs=_named(alpha="SigmoidInputScale"), opset=24,
                                 note="x * sigmoid(alpha * x), alpha = SigmoidInputScale (opset 24)"),
    "ACTIVATION_THRESHOLDED_RELU": OnnxMapping("ThresholdedRelu", attrs=_named(alpha="Alpha")),
    **{op: OnnxMapping(**kwargs) for op, kwargs in onnx_bitwise.MAPPINGS.items()},
    **{op: OnnxMapping(t, attrs=onnx_softmax.attrs, opset=onnx_softmax.OPSET, integer=False, note=onnx_softmax.NOTE,
                       runner=onnx_softmax.run, check=onnx_softmax.fed_axis) for op, t in onnx_softmax.OPERATORS.items()},
    **{op: OnnxMapping(t, attrs=_every_attribute, runner=onnx_reduction.run, check=onnx_reduction.plan,
                       note=onnx_reduction.NOTE) for op, t in onnx_reduction.MAPPED.items()},
    **{op: OnnxMapping(t, attrs=_every_attribute, runner=onnx_sequence.run, check=onnx_sequence.plan, outputs=n,
                       note=onnx_sequence.NOTE) for op, (t, n) in onnx_sequence.MAPPED.items()},
    **{op: OnnxMapping(t, attrs=_every_attribute, runner=onnx_contraction.run, check=onnx_contraction.check,
                       note=onnx_contraction.NOTE) for op, t in onnx_contraction.MAPPED.items()},
    **{op: OnnxMapping(t, attrs=_every_attribute, integer=False, runner=onnx_value_scale.run,
                       note=onnx_value_scale.NOTE) for op, t in onnx_value_scale.OPERATORS.items()},
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


class Mapped(Protocol):
    """An entry of a backend's mapping table: how many outputs it gives."""

    @property
    def outputs(self) -> int: ...


M = TypeVar("M", bound=Mapped)


def _count(mapping: Mapped) -> str:
    return "one" if mapping.outputs == 1 else str(mapping.outputs)


def mapping_for(table: Mapping[str, M], spec: Spec, case: Case, missing: str) -> M:
    """``spec``'s entry of ``table`` for ``case`` (the case's twin of
    `implements`, which every backend with a mapping table shares), or
    NotSupportedError: not in the table (``missing`` + the operator), or
    the case has other outputs than the entry gives."""
    mapping = table.get(spec.operator)
    if mapping is None:
        raise NotSupportedError(f"{missing} {spec.operator} (not mapped)")
    if len(case.outputs) != mapping.outputs:
        raise NotSupportedError(f"{spec.operator}: {len(case.outputs)} outputs; the mapping has {_count(mapping)}")
    return mapping


def implements(table: Mapping[str, Mapped], spec: Spec, missing: str) -> str | None:
    """Why a backend whose mappings are ``table`` (operator -> mapping, each
    with its count of ``outputs``) does not implement ``spec``'s operator:
    not in the table (``missing`` + the operator), or other outputs than
    its mapping gives; None when it does."""
    mapping = table.get(spec.operator)
    if mapping is None:
        return f"{missing} {spec.operator} (not mapped)"
    outputs = [f.name for f in spec.tensors if f.role is TensorRole.OUTPUT]
    if len(outputs) != mapping.outputs:
        return f"{spec.operator}: {len(outputs)} outputs ({', '.join(outputs)}); the mapping has {_count(mapping)}"
    return None


def support_of(resolve: Callable[[Spec, Case], object], spec: Spec, case: Case) -> Support:
    """`Backend.supports` from a mapping's resolver: its NotSupportedError
    is the reason."""
    try:
        resolve(spec, case)
    except NotSupportedError as exc:
        return Support(False, str(exc))
    return SUPPORTED


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
                           flush_subnormals=False, available=self._reason is None, reason=self._reason)

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
        """The session cache as a runner sees it (`backends.onnx_shaped`):
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


def check_divisor(case: Case, buffers: Mapping[str, np.ndarray], divisor: str, op: str) -> None:
    """Integer division by zero (and MIN / -1) is undefined in ONNX and in
    C++ (it kills the process): such a case is NOT_SUPPORTED."""
    if numpy_dtype(case.dtype).kind not in "iu":
        return
    b = case.input(divisor).view(buffers[divisor])
    if np.any(b == 0):
        raise NotSupportedError(f"{divisor} holds 0: integer {op} by zero is undefined")
    dtype = numpy_dtype(case.dtype)
    if dtype.kind == "i":
        a = np.broadcast_to(case.input("ATensor").view(buffers["ATensor"]), case.outputs[0].sizes)
        if np.any((np.broadcast_to(b, a.shape) == -1) & (a == np.iinfo(dtype).min)):
            raise NotSupportedError(f"ATensor holds {np.iinfo(dtype).min} over -1: integer overflow, undefined")


def _import() -> tuple[Any, str | None]:
    """onnxruntime and onnx, or the reason they cannot be used."""
    try:
        import onnx  # noqa: F401, PLC0415 - optional (the [onnxruntime] extra): the backend reports itself unavailable
        import onnxruntime  # noqa: PLC0415 - optional (the [onnxruntime] extra), ~0.3 s to import: only this backend's runs
    except ImportError as exc:
        return None, f"{exc.name or 'onnxruntime'} is not installed ({INSTALL_HINT})"
    return onnxruntime, None


def mapped_operators() -> Iterable[str]:
    """The spec operators this backend maps, sorted."""
    return sorted(MAPPINGS)
