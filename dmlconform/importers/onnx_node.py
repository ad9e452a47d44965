"""ONNX node tests as dmlconform cases (``dmlconform import onnx``).

DESIGN.md, "The oracle and the CPU reference are two things": both must
reproduce external test vectors.  The ONNX project ships, per operator, small
one-node models with inputs and expected outputs (``onnx/backend/test/data/node/
test_*/model.onnx`` plus ``test_data_set_*/{input,output}_*.pb``; wheels that
leave that folder out still carry the Python code that generates it, which
`collect_testcases` runs with the same seed).  This module maps the ONNX
operators that have a DirectML spec onto it (`MAPPINGS`: which spec, which
attribute is which, what differs), turns each test into a `Case` and checks
ONNX's expected output against our oracle, recording who is right.

What must hold: the output is deterministic (tests sorted by name, attribute
values as float32); a test we cannot express, or that ONNX defines
differently from the doc, becomes a `Skipped` with the reason, never silence.
docs/import-onnx.md is the prose version of `MAPPINGS`.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dmlconform.backends.base import SUPPORTED, BackendInfo
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.compare import ulp_distance
from dmlconform.families import Oracles
from dmlconform.families.elementwise.binding import is_runnable
from dmlconform.families.elementwise.formula_oracle import evaluate
from dmlconform.families.elementwise.oracle import FormulaOracle
from dmlconform.importers import onnx_contraction as contraction
from dmlconform.importers import onnx_families as families
from dmlconform.importers import onnx_index_map as index_map
from dmlconform.importers import onnx_normalization as normalization
from dmlconform.importers import onnx_window as window
from dmlconform.results import Outcome
from dmlconform.runner import run_case
from dmlconform.spec.model import DataType, FeatureLevel, Spec, TensorRole

LEVEL = max(FeatureLevel)
FLT_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True, slots=True)
class OnnxTest:
    """One ONNX node test: a single node, its inputs (None where an optional
    input is left out) and expected outputs."""

    name: str
    op_type: str
    opset: int
    attributes: tuple[tuple[str, Any], ...]
    inputs: tuple[np.ndarray | None, ...]
    outputs: tuple[np.ndarray, ...]


@dataclass(frozen=True, slots=True)
class Mapping_:
    """How one ONNX operator becomes one spec's case.

    ``attributes`` maps a spec attribute to a function of the ONNX attributes
    and inputs giving its value (None: the mapping cannot express this test;
    the function raises `Unmappable` with the reason).  ``inputs`` lists the
    ONNX input indexes that are tensors of the spec, in spec order.  ``note``
    is the semantic difference worth recording in each case."""

    spec: str
    attributes: tuple[tuple[str, Callable[[Mapping[str, Any], OnnxTest], Any]], ...] = ()
    inputs: tuple[int, ...] = (0,)
    note: str = ""
    floats_only: bool = False
    #: A family's own conversion of the whole test (None: the element-wise one of `to_case`), raising
    #: its Unmappable with the reason (`importers.onnx_contraction`).
    convert: Callable[[OnnxTest, Spec], Case] | None = None
    #: ONNX's outputs in the case's form where they differ from ONNX's (None: as stored; NonZero's
    #: coordinates, `importers.onnx_index_map`).
    expected: Callable[[OnnxTest, Case, Spec], tuple[np.ndarray, ...]] | None = None


class Unmappable(Exception):
    """This ONNX test cannot be expressed as a case of the spec (the reason)."""


def _attr(name: str, default: float) -> Callable[[Mapping[str, Any], OnnxTest], float]:
    return lambda attrs, test: float(np.float32(attrs.get(name, default)))


def _const(value: float) -> Callable[[Mapping[str, Any], OnnxTest], float]:
    return lambda attrs, test: float(np.float32(value))


def _clip_bound(index: int, attribute: str, default: float) -> Callable[[Mapping[str, Any], OnnxTest], float]:
    """Clip's min/max: attributes before opset 11, optional scalar inputs from it."""
    def get(attrs: Mapping[str, Any], test: OnnxTest) -> float:
        if test.opset < 11:
            return float(np.float32(attrs.get(attribute, default)))
        value = test.inputs[index] if index < len(test.inputs) else None
        if value is None:
            return default
        if np.asarray(value).size != 1:
            raise Unmappable(f"Clip {attribute} is not a scalar")
        return float(np.float32(np.asarray(value).reshape(())))
    return get


def _clip_order(attrs: Mapping[str, Any], test: OnnxTest) -> None:
    """Refuse Clip with min > max: ONNX then sets every output to max, the
    doc's f(x) = max(Min, min(x, Max)) gives Min."""
    low, high = _clip_bound(1, "min", -FLT_MAX)(attrs, test), _clip_bound(2, "max", FLT_MAX)(attrs, test)
    if low > high:
        raise Unmappable(f"ONNX defines it differently from the doc: with min {low!r} > max {high!r} ONNX sets every "
                         f"output to max, the doc's max(Min, min(x, Max)) gives Min")


def _reject_attr(name: str, allowed: Any, why: str) -> Callable[[Mapping[str, Any], OnnxTest], None]:
    def check(attrs: Mapping[str, Any], test: OnnxTest) -> None:
        if attrs.get(name, allowed) != allowed:
            raise Unmappable(why)
    return check


_SELU_ALPHA = 1.67326319217681884765625   # ONNX's defaults: float32 values of the SELU constants
_SELU_GAMMA = 1.05070102214813232421875
_UNARY = {"Abs": "ELEMENT_WISE_ABS", "Relu": "ACTIVATION_RELU", "Sigmoid": "ACTIVATION_SIGMOID",
          "Tanh": "ACTIVATION_TANH", "Softsign": "ACTIVATION_SOFTSIGN", "Exp": "ELEMENT_WISE_EXP",
          "Log": "ELEMENT_WISE_LOG", "Sqrt": "ELEMENT_WISE_SQRT", "Neg": "ELEMENT_WISE_NEGATE",
          "Reciprocal": "ELEMENT_WISE_RECIP", "Sin": "ELEMENT_WISE_SIN", "Cos": "ELEMENT_WISE_COS",
          "Tan": "ELEMENT_WISE_TAN", "Asin": "ELEMENT_WISE_ASIN", "Acos": "ELEMENT_WISE_ACOS",
          "Atan": "ELEMENT_WISE_ATAN", "Sinh": "ELEMENT_WISE_SINH", "Cosh": "ELEMENT_WISE_COSH",
          "Asinh": "ELEMENT_WISE_ASINH", "Acosh": "ELEMENT_WISE_ACOSH", "Atanh": "ELEMENT_WISE_ATANH",
          "Erf": "ELEMENT_WISE_ERF", "Ceil": "ELEMENT_WISE_CEIL", "Floor": "ELEMENT_WISE_FLOOR",
          "Sign": "ELEMENT_WISE_SIGN", "Identity": "ELEMENT_WISE_IDENTITY"}
_BINARY = {"Add": "ELEMENT_WISE_ADD", "Sub": "ELEMENT_WISE_SUBTRACT", "Mul": "ELEMENT_WISE_MULTIPLY",
           "Div": "ELEMENT_WISE_DIVIDE", "Max": "ELEMENT_WISE_MAX", "Min": "ELEMENT_WISE_MIN",
           "Mean": "ELEMENT_WISE_MEAN", "Pow": "ELEMENT_WISE_POW"}
_BITWISE = {"BitwiseAnd": "ELEMENT_WISE_BIT_AND", "BitwiseOr": "ELEMENT_WISE_BIT_OR",
            "BitwiseXor": "ELEMENT_WISE_BIT_XOR"}
_HALVES_TO_EVEN = "DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"

#: ONNX operator -> the spec it maps to.  The attribute names and defaults
#: differ; each line says how.
MAPPINGS: dict[str, Mapping_] = {
    **{op: Mapping_(spec) for op, spec in _UNARY.items()},
    **{op: Mapping_(spec, inputs=(0, 1)) for op, spec in _BINARY.items()},
    "Softsign": Mapping_("ACTIVATION_SOFTSIGN"),
    "Shrink": Mapping_("ACTIVATION_SHRINK", (("Bias", _attr("bias", 0.0)), ("Threshold", _attr("lambd", 0.5))),
                       note="ONNX Shrink(lambd, bias) is DirectML Shrink(Threshold=lambd, Bias=bias); "
                            "both default to 0.5 and 0"),
    "HardSigmoid": Mapping_("ACTIVATION_HARD_SIGMOID", (("Alpha", _attr("alpha", 0.2)), ("Beta", _attr("beta", 0.5))),
                            note="ONNX HardSigmoid(alpha=0.2, beta=0.5) is DirectML's Alpha, Beta (same defaults)"),
    "LeakyRelu": Mapping_("ACTIVATION_LEAKY_RELU", (("Alpha", _attr("alpha", 0.01)),),
                          note="ONNX LeakyRelu alpha (default 0.01) is DirectML's Alpha"),
    "Elu": Mapping_("ACTIVATION_ELU", (("Alpha", _attr("alpha", 1.0)),),
                    note="ONNX Elu alpha (default 1) is DirectML's Alpha"),
    "Celu": Mapping_("ACTIVATION_CELU", (("Alpha", _attr("alpha", 1.0)),),
                     note="ONNX Celu alpha (default 1) is DirectML's Alpha"),
    "Selu": Mapping_("ACTIVATION_SCALED_ELU", (("Alpha", _attr("alpha", _SELU_ALPHA)),
                                               ("Gamma", _attr("gamma", _SELU_GAMMA))),
                     note="ONNX Selu(alpha, gamma) is DirectML SCALED_ELU(Alpha, Gamma); ONNX's defaults are the "
                          "float32 SELU constants 1.6732632 and 1.0507010, the doc's typical values 1.6732 and "
                          "1.0507 are shorter"),
    "ThresholdedRelu": Mapping_("ACTIVATION_THRESHOLDED_RELU", (("Alpha", _attr("alpha", 1.0)),),
                                note="ONNX ThresholdedRelu alpha (default 1) is DirectML's Alpha"),
    "Softplus": Mapping_("ACTIVATION_SOFTPLUS", (("Steepness", _const(1.0)),),
                         note="ONNX Softplus is ln(exp(x) + 1): DirectML's with Steepness = 1"),
    "HardSwish": Mapping_("ACTIVATION_HARD_SWISH", (("Alpha", _const(1 / 6)), ("Beta", _const(0.5))),
                          note="ONNX HardSwish has fixed alpha = 1/6, beta = 0.5: DirectML's Alpha = float32(1/6), "
                               "Beta = 0.5"),
    "Swish": Mapping_("ACTIVATION_SWISH", (("SigmoidInputScale", _attr("alpha", 1.0)),),
                      note="ONNX Swish alpha (default 1) is DirectML's SigmoidInputScale"),
    "Gelu": Mapping_("ACTIVATION_GELU", (("_approximate", _reject_attr(
        "approximate", "none", "ONNX Gelu approximate='tanh' is not DirectML's GELU (the erf form)")),)),
    "Clip": Mapping_("ELEMENT_WISE_CLIP", (("Min", _clip_bound(1, "min", -FLT_MAX)),
                                           ("Max", _clip_bound(2, "max", FLT_MAX)), ("_order", _clip_order)),
                     floats_only=True,
                     note="ONNX Clip's min/max are inputs from opset 11 (attributes before); a missing bound is "
                          "-FLT_MAX / FLT_MAX here (the case format holds finite attributes only); integer Clip "
                          "needs CLIP1's typed bounds and is not imported"),
    **{op: Mapping_(spec, inputs=(0, 1)) for op, spec in _BITWISE.items()},
    "BitwiseNot": Mapping_("ELEMENT_WISE_BIT_NOT"),
    "IsNaN": Mapping_("ELEMENT_WISE_IS_NAN", note="ONNX IsNaN's bool output is DirectML's UINT8 0/1"),
    "Round": Mapping_("ELEMENT_WISE_ROUND", (("RoundingMode", lambda attrs, test: _HALVES_TO_EVEN),),
                      note="ONNX Round rounds halves to even: RoundingMode = DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"),
    **{op: Mapping_(spec, note=note, convert=fn)
       for op, (spec, fn, note) in {**contraction.CONVERTERS, **families.CONVERTERS}.items()},
    **{op: Mapping_(spec, note=note, convert=fn, expected=expected)
       for op, (spec, fn, note, expected) in {**index_map.CONVERTERS, **window.CONVERTERS,
                                                  **normalization.CONVERTERS}.items()},
}


@dataclass(frozen=True, slots=True)
class Imported:
    """A case made from an ONNX test, with where it came from."""

    case: Case
    test: OnnxTest
    origin: str
    notes: tuple[str, ...]
    #: ONNX's expected outputs, as stored by ONNX, by the case's output names.
    references: tuple[tuple[str, np.ndarray], ...]


@dataclass(frozen=True, slots=True)
class Skipped:
    test: str
    reason: str


@dataclass
class ImportResult:
    imported: list[Imported] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


# -- reading ONNX's tests ------------------------------------------------------------------
def onnx_version() -> str:
    import onnx  # noqa: PLC0415 - onnx is optional (the [onnx] extra): this module imports without it

    return str(onnx.__version__)


def default_data_dir() -> Path:
    """Where an onnx installation keeps the node test data (may be absent)."""
    import onnx  # noqa: PLC0415 - onnx is optional (the [onnx] extra): this module imports without it

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"


def load_tests(data_dir: Path | None, ops: Iterable[str]) -> Iterator[OnnxTest]:
    """The single-node tests of ``ops``, sorted by name: from ``data_dir``
    (``test_*/model.onnx`` + ``test_data_set_0``) when it exists, else
    generated by onnx's own test-case code (same seed, same values)."""
    wanted = set(ops)
    found: Iterator[OnnxTest | None]
    if data_dir is not None and data_dir.is_dir():
        found = (_from_folder(d) for d in sorted(data_dir.glob("test_*")) if (d / "model.onnx").is_file())
    else:
        found = iter(_generated())
    yield from sorted((t for t in found if t is not None and t.op_type in wanted), key=lambda t: t.name)


def _test(name: str, model: Any, inputs: list[Any], outputs: list[Any]) -> OnnxTest | None:
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra): this module imports without it

    graph = model.graph
    if len(graph.node) != 1:
        return None
    node = graph.node[0]
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    present = {vi.name: arr for vi, arr in zip(graph.input, inputs)}
    arrays = tuple(_array(present[n]) if n and n in present else None for n in node.input)
    attributes = tuple(sorted((a.name, helper.get_attribute_value(a)) for a in node.attribute))
    attributes = tuple((k, v.decode() if isinstance(v, bytes) else  # a tensor attribute (ConstantOfShape's value) as numpy's
                        numpy_helper.to_array(v) if isinstance(v, TensorProto) else v) for k, v in attributes)
    outs = tuple(_array(o) for o in outputs)
    return OnnxTest(name, node.op_type, int(opset), attributes, arrays, outs)


def _array(value: Any) -> np.ndarray:
    from onnx import TensorProto, numpy_helper  # noqa: PLC0415 - onnx is optional (the [onnx] extra): this module imports without it

    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):  # a numpy scalar (CumSum's axis): the .pb files hold it as a 0-d tensor
        return np.asarray(value)
    raise Unmappable(f"a non-tensor value ({type(value).__name__})")


def _generated() -> list[OnnxTest]:
    with warnings.catch_warnings(), np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases  # noqa: PLC0415 - optional (the [onnx] extra); its import prints and warns, silenced here

        cases = collect_testcases()
    out = []
    for case in cases:
        if case.kind != "node" or not case.data_sets:
            continue
        inputs, outputs = case.data_sets[0]
        try:
            test = _test(case.name, case.model, list(inputs), list(outputs))
        except Unmappable:
            continue
        if test is not None:
            out.append(test)
    return out


def _from_folder(folder: Path) -> OnnxTest | None:
    import onnx  # noqa: PLC0415 - onnx is optional (the [onnx] extra): this module imports without it

    model = onnx.load(str(folder / "model.onnx"))
    data = folder / "test_data_set_0"
    tensors = lambda kind: [onnx.load_tensor(str(p)) for p in  # noqa: E731
                            sorted(data.glob(f"{kind}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
    try:
        return _test(folder.name, model, tensors("input"), tensors("output"))
    except Exception:  # noqa: BLE001 - sequences, maps, optionals: not tensors
        return None


# -- tests to cases ------------------------------------------------------------------------
_DTYPES = {np.dtype(n): DataType[n.upper()] for n in
           ("float32", "float16", "float64", "int8", "int16", "int32", "int64",
            "uint8", "uint16", "uint32", "uint64")}


def to_case(test: OnnxTest, spec: Spec, mapping: Mapping_) -> Case:
    """The case for ``test``; `Unmappable` says why there is none."""
    if test.name.endswith("_expanded") or "_expanded_ver" in test.name:
        raise Unmappable("the function-expanded form of another test (same data)")
    if mapping.convert is not None:  # a family's conversion checks its own outputs
        try:
            return mapping.convert(test, spec)
        except contraction.Unmappable as exc:  # the converters' one refusal type
            raise Unmappable(str(exc)) from exc
    if len(test.outputs) != 1:
        raise Unmappable(f"{len(test.outputs)} outputs")
    attrs = dict(test.attributes)
    tensors = [f.name for f in spec.fields if f.is_tensor]
    in_names = [f.name for f in spec.fields if f.is_tensor and f.role is TensorRole.INPUT]
    want = len(mapping.inputs)
    given = [a for a in test.inputs if a is not None]
    if len([i for i in mapping.inputs if i < len(test.inputs) and test.inputs[i] is not None]) != want or \
            (len(given) != want and test.op_type != "Clip"):
        raise Unmappable(f"{len(given)} inputs where {spec.operator} takes {want}")
    values = [np.asarray(test.inputs[i]) for i in mapping.inputs]
    expected = np.asarray(test.outputs[0])
    dtypes = {v.dtype for v in values}
    if len(dtypes) != 1:
        raise Unmappable(f"inputs of different types ({', '.join(sorted(str(d) for d in dtypes))})")
    dtype = _DTYPES.get(values[0].dtype)
    if dtype is None:
        raise Unmappable(f"data type {values[0].dtype} has no DirectML counterpart here")
    if mapping.floats_only and not dtype.is_float:
        raise Unmappable(f"{dtype.name}: only the float types map (see the mapping's note)")
    out_dtype = DataType.UINT8 if expected.dtype == np.bool_ else _DTYPES.get(expected.dtype)
    if out_dtype is None:
        raise Unmappable(f"output type {expected.dtype} has no DirectML counterpart here")
    shape = expected.shape or (1,)
    if expected.size == 0:
        raise Unmappable("an empty tensor")
    if len(shape) > 8:
        raise Unmappable(f"{len(shape)} dimensions (DirectML has at most 8)")
    inputs = tuple(_input(name, dtype, v, shape) for name, v in zip(in_names, values))
    outputs = (TensorData(tensors[-1], out_dtype, shape, packed_strides(shape),
                          np.zeros(int(np.prod(shape)), dtype=expected.dtype if out_dtype is not DataType.UINT8
                                   else np.uint8)),)
    attributes = []
    for name, get in mapping.attributes:
        value = get(attrs, test)
        if not name.startswith("_"):
            attributes.append((name, value))
    order = {f.name: i for i, f in enumerate(spec.fields)}
    attributes.sort(key=lambda kv: order.get(kv[0], len(order)))
    layout = Layout.BROADCAST if any(0 in t.strides for t in inputs) else Layout.PACKED
    case_id = f"{spec.operator}/{dtype.name}/{len(shape)}d/onnx:{test.name}"
    return Case(id=case_id, operator=spec.operator, level=LEVEL, dtype=dtype, inputs=inputs, outputs=outputs,
                attributes=tuple(attributes), layout=layout, edges=("onnx",), seed=0)


def _input(name: str, dtype: DataType, value: np.ndarray, shape: tuple[int, ...]) -> TensorData:
    """An input broadcast to ``shape`` the numpy way: sizes of the output,
    stride 0 where the input has size 1 (or lacks the dimension)."""
    value = np.ascontiguousarray(value)
    own = (1,) * (len(shape) - value.ndim) + value.shape
    if any(o not in (1, s) for o, s in zip(own, shape)):
        raise Unmappable(f"input shape {value.shape} does not broadcast to {shape}")
    strides = tuple(0 if o == 1 and s != 1 else st for o, s, st in zip(own, shape, packed_strides(own)))
    buffer = value.reshape(-1).copy()
    buffer.flags.writeable = False
    return TensorData(name, dtype, tuple(shape), strides, buffer)


# -- ONNX's expected output against the oracle ---------------------------------------------
class _Golden:
    """A backend that answers ONNX's expected outputs (one per output of the
    case, in order): running it through the runner compares ONNX's golden
    with our oracle under the spec's tolerance."""

    def __init__(self, expected: tuple[np.ndarray, ...]) -> None:
        self.expected = expected

    def info(self) -> Any:
        return BackendInfo(name="onnx-expected", device="ONNX node test data", version=onnx_version(),
                           feature_level=LEVEL)

    def supports(self, spec: Spec, case: Case) -> Any:
        return SUPPORTED

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        for tensor, expected in zip(case.outputs, self.expected):
            out = buffers[tensor.name]
            out[...] = expected.reshape(-1).astype(out.dtype)


def judge(spec: Spec, case: Case, expected: np.ndarray, *more: np.ndarray) -> tuple[str | None, tuple[str, ...]]:
    """``(skip reason or None, notes)``: ONNX's ``expected`` (and ``more``
    outputs, for a family's operator with several) against the oracle.
    Floats that disagree keep the case with a note saying which value is
    nearer the exact result (the formula in float64); integers, or a NaN
    against a number, mean ONNX defines the operator differently."""

    result = run_case(spec, case, _Golden((expected, *more)))
    if spec.semantics is not None:  # a family's oracle: its own verdict is the record
        return _family_judged(spec, case, result, (expected, *more))
    if result.outcome is Outcome.PASS:
        return None, (_agreement(spec, case, expected),)
    if result.outcome not in (Outcome.QUALITY_WARNING, Outcome.FAIL):
        return f"the oracle cannot check it: {result.message}", ()
    worst = result.worst[0] if result.worst else None
    if worst is None:
        return f"ONNX's expected output disagrees with the oracle: {result.message}", ()
    where = f"index {list(worst.index)}, {_inputs_text(worst.inputs)}"
    if not case.dtype.is_float or worst.ulp is None:
        return (f"ONNX defines it differently from the doc: at {where} ONNX expects {worst.actual!r}, the doc's "
                f"formula gives {worst.expected!r}"), ()
    exact = _exact(spec, case)[tuple(worst.index)]
    step = float(np.abs(np.spacing(np.asarray(exact).astype(expected.dtype))))
    theirs, ours = abs(worst.actual - exact) / step, abs(worst.expected - exact) / step
    verdict = ("the oracle is right: it rounds the exact result once, while ONNX's reference is numpy code "
               f"that rounds every intermediate step in {expected.dtype}" if ours <= theirs else
               "ONNX's value is the nearer one: the oracle is suspect here")
    kind = "beyond the tolerance" if result.outcome is Outcome.FAIL else "within the relaxed bound only"
    return None, (f"ONNX's expected output differs from the oracle {kind} at {result.counts[1] + result.counts[2]} "
                  f"of {result.elements} elements; worst at {where}: ONNX {worst.actual!r} is {theirs:.1f} ULP "
                  f"from the exact {exact!r} (float64), the oracle's {worst.expected!r} is {ours:.1f} ULP; "
                  f"{verdict}",)


def _family_judged(spec: Spec, case: Case, result: Any,
                   expected: tuple[np.ndarray, ...]) -> tuple[str | None, tuple[str, ...]]:
    """`judge` for a spec with reviewed semantics (a family's oracle):
    ONNX's outputs within the family's bounds are kept with a note saying
    how close; beyond them, kept with the difference explained (the worst
    element, K and S beside it); skipped where an integer output (indices,
    integer sums) differs, which no rounding explains, or where the oracle
    could not check it."""
    if result.outcome is Outcome.PASS:
        size = max(e.size for e in expected)  # expect gives each output the part of the range it has
        expectations = Oracles().get(spec).bind([case], flush_subnormals=False).expect(0, size)
        several = len(expected) > 1
        return None, tuple(_closeness(e.expected, theirs, f" {tensor.name}" if several else "")
                           for tensor, e, theirs in zip(case.outputs, expectations, expected))
    if result.outcome not in (Outcome.QUALITY_WARNING, Outcome.FAIL) or not result.worst:
        return f"the oracle cannot check it: {result.message}", ()
    worst = result.worst[0]
    tensor = next(t for t in case.outputs if t.name == worst.output)
    named = f" {worst.output}" if len(case.outputs) > 1 else ""
    where = f"index {list(worst.index)}{named and ' of' + named}" + (f" ({_inputs_text(worst.inputs)})" if worst.inputs else "")
    if not tensor.dtype.is_float:  # indices, integer sums: no rounding to blame, the definitions differ
        return (f"ONNX defines it differently from the doc: at {where} ONNX expects {worst.actual!r}, the oracle "
                f"{worst.expected!r}"), ()
    kind = "beyond the worst-case bound" if result.outcome is Outcome.FAIL else "beyond the probabilistic bound"
    index = [t.name for t in case.outputs].index(worst.output)
    literal = _rounded_literal(spec, case, index, expected[index])
    under = f" under {literal[2]} (a reading it accepts)" if literal and literal[2] else ""
    why = (f"ONNX's expected values are numbers of {literal[0]} decimals written into its test (not computed), "
           f"at most {literal[1]:.2g} from the oracle's{under}: the oracle is right, a rounding of its values is no "
           "computation a bound can admit"
           if literal is not None else f"ONNX's reference computes in {expected[0].dtype} with numpy")
    return None, (f"ONNX's expected output{named} differs from the oracle {kind} at "
                  f"{result.counts[1] + result.counts[2]} of {result.elements} elements; worst at {where}: ONNX "
                  f"{worst.actual!r}, the oracle {worst.expected!r} ({worst.ulp} ULP, bound {worst.bound!r}); {why}",)


def _rounded_literal(spec: Spec, case: Case, index: int, theirs: np.ndarray) -> tuple[int, float, str] | None:
    """``(k, d, reading)`` where ONNX's output ``index`` holds numbers of k decimals (1 to 6: a literal
    its test writes, not a computation) within 10^-k of the oracle's whole output under one reading
    (its primary, "", or an alternative's name; d the largest difference); None where it does not."""
    ours = Oracles().get(spec).bind([case], flush_subnormals=False).expect(0, theirs.size)[index]
    readings = [("", ours.expected)]
    for alt in ours.alternatives:
        values = ours.expected.copy()
        values[alt.index] = alt.values
        readings.append((alt.name, values))
    given = theirs.reshape(-1)
    for digits in range(1, 7):
        if np.array_equal(np.round(given.astype(np.float64), digits).astype(given.dtype), given):
            for name, values in readings:
                far = float(np.max(np.abs(values.astype(np.float64) - given.astype(np.float64)), initial=0.0))
                if far <= 10.0 ** -digits:
                    return digits, far, name
            return None
    return None


def _closeness(ours: np.ndarray, expected: np.ndarray, name: str) -> str:
    """How close ONNX's output ``name`` (within the bounds) is to the oracle's, for the record."""
    theirs = expected.reshape(-1).astype(ours.dtype)
    same = int(np.count_nonzero((ours == theirs) | (_isnan(ours) & _isnan(theirs))))
    far = int(ulp_distance(ours, theirs).max(initial=0)) if ours.dtype.kind == "f" else 0
    why = ("both compute in float64" if expected.dtype == np.float64 else
           f"the oracle is right: it rounds the float64 sum once, ONNX's reference sums in {expected.dtype}")
    apart = f", at most {far} ULP apart; {why}" if same < ours.size and far else ""
    return f"ONNX's expected output{name} is within the oracle's bounds (identical in {same} of {ours.size} elements{apart})"


def _inputs_text(inputs: tuple[tuple[str, float], ...]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in inputs)


def _agreement(spec: Spec, case: Case, expected: np.ndarray) -> str:
    """How close ONNX's golden is to the oracle's values, for the record."""

    ours = _oracle(spec, case, case.outputs[0].dtype)
    theirs = expected.reshape(ours.shape).astype(ours.dtype)
    both = ~(_isnan(ours) & _isnan(theirs))
    if case.outputs[0].dtype.is_float:
        far = int(ulp_distance(ours[both], theirs[both]).max(initial=0))
    else:
        far = int(np.count_nonzero(ours[both] != theirs[both]))
    same = int(np.count_nonzero(both & (ours == theirs))) + int(np.count_nonzero(~both))
    text = (f"ONNX's expected output agrees with the oracle within the spec's tolerance (identical in {same} of "
            f"{ours.size} elements")
    if not far or not case.outputs[0].dtype.is_float:
        return text + ")"
    distance = np.where(both, ulp_distance(ours, theirs), 0)
    at = np.unravel_index(int(np.argmax(distance)), ours.shape)
    exact = float(_exact(spec, case)[at])
    step = float(np.abs(np.spacing(np.asarray(exact).astype(ours.dtype))))
    mine, other = abs(float(ours[at]) - exact) / step, abs(float(theirs[at]) - exact) / step
    nearer = "the oracle's is nearer the exact value" if mine <= other else "ONNX's is nearer the exact value"
    return (text + f", at most {far} ULP apart: at index {[int(i) for i in at]} ONNX {float(theirs[at])!r} is {other:.2f} ULP "
            f"from the exact {exact!r} (float64), the oracle's {float(ours[at])!r} {mine:.2f} ULP; {nearer})")


def _isnan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, dtype=bool)


def _exact(spec: Spec, case: Case) -> np.ndarray:
    """The formula evaluated in float64 (the oracle's exact path, rounded to
    float64 instead of the tensor's type): the yardstick for both values."""
    return _oracle(spec, case, DataType.FLOAT64).astype(np.float64)


def _oracle(spec: Spec, case: Case, dtype: DataType) -> np.ndarray:
    formula = FormulaOracle.of(spec)
    views = {formula.inputs.get(t.name, t.name): np.ascontiguousarray(t.view()) for t in case.inputs}
    out = case.outputs[0]
    result = evaluate(formula.tree, views, case.attribute_map(), dtype=dtype,
                      nan_policy=spec.formula.nan_policy, overflow=spec.formula.integer_overflow,
                      output=formula.outputs.get(out.name))
    return np.asarray(result.expected).reshape(out.sizes)


def _outside_table(reason: str | None, skip: str | None, notes: tuple[str, ...]) -> str:
    """The skip reason of a test outside the table (a FLOAT64 one, mostly),
    with ONNX's expected output still checked against the oracle: the
    vector is not run, but its golden is not left unexamined."""
    found = skip if skip is not None else "; ".join(notes)
    return f"outside the {LEVEL.short} table: {reason}; {found}"


def import_tests(specs: Mapping[str, Spec], *, data_dir: Path | None) -> ImportResult:
    """Every ONNX node test of a mapped operator, as a case or a skip."""

    result = ImportResult()
    level_check = CpuBackend(LEVEL)
    for test in load_tests(data_dir, [op for op, m in MAPPINGS.items() if m.spec in specs]):
        mapping = MAPPINGS[test.op_type]
        spec = specs[mapping.spec]
        runnable, why = (True, "") if mapping.convert is not None else is_runnable(spec)
        try:
            if not runnable:
                raise Unmappable(f"the oracle cannot evaluate {spec.operator} ({why})")
            case = to_case(test, spec, mapping)
            support = level_check.supports(spec, case)
            outputs = test.outputs if mapping.expected is None else mapping.expected(test, case, spec)
            skip, notes = judge(spec, case, *outputs[:len(case.outputs)])
            if not support.supported:
                raise Unmappable(_outside_table(support.reason, skip, notes))
            if skip is not None:
                raise Unmappable(skip)
        except Unmappable as exc:
            result.skipped.append(Skipped(test.name, f"{test.op_type} -> {mapping.spec}: {exc}"))
            continue
        origin = (f"onnx {onnx_version()} node test {test.name} ({test.op_type}, opset {test.opset}"
                  + (f", {', '.join(f'{k}={v!r}' for k, v in test.attributes)}" if test.attributes else "") + ")")
        result.imported.append(Imported(case, test, origin, tuple(n for n in (mapping.note,) if n) + notes,
                                        tuple((t.name, np.asarray(o)) for t, o in zip(case.outputs, outputs))))
    return result
