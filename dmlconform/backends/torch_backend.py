"""PyTorch as a backend, on the CPU or a CUDA device.

DESIGN.md, "Backends" (``torch``; issue 8).  Each spec with a torch function
of the same meaning maps to it (`TORCH_OPS`).  Tensors are bound as DirectML
binds them: each case buffer becomes one torch tensor (copied to the device
for ``device=cuda``, and back after the run) and every tensor is an
``as_strided`` view of its buffer, so padded and broadcast (stride 0) layouts
reach torch as they are.  An in-place case runs the ``_`` variant of the
function on the input's view, which shares the output's storage.

Where torch's function differs from the doc (hardsigmoid's fixed slope,
softshrink/hardshrink against shrink, selu's fixed constants), the mapping
takes only the cases it expresses exactly and rejects the rest with
`NotSupportedError`: never an approximation.  Options (``--backend-arg``):
``device`` (``cpu`` default, ``cuda``, ``cuda:1``...), ``feature_level``,
``tf32`` (``off`` default, ``on``: ``torch.backends.cuda.matmul.allow_tf32``
for the contractions, `backends.torch_contraction`; the backend info says
which).

The info declares, per device, the operators whose torch kernels keep
FLOAT16 sums in FLOAT16 (`FLOAT16_ACCUMULATION`): they are judged by the
float16 reading of ``float16-accumulator``, the others by float32's.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.backends import (
    torch_bitwise,
    torch_contraction,
    torch_reduction,
    torch_sequence,
    torch_softmax,
    torch_value_scale,
)
from dmlconform.backends.base import BackendInfo, NotSupportedError, Support, level_option, unknown_options
from dmlconform.backends.onnxruntime_backend import (
    Attrs,
    check_divisor,
    clip_bounds,
    implements,
    mapping_for,
    require,
    support_of,
)
from dmlconform.cases.model import Case
from dmlconform.errors import InputError
from dmlconform.spec.model import FeatureLevel, Spec

INSTALL_HINT = "pip install 'dmlconform[torch]'"
Fn = Callable[[Any, list[Any], Attrs], Any]          # (torch, input views, attributes) -> result tensor
InPlace = Callable[[Any, Attrs], None]               # (the aliased input view, attributes) -> None


@dataclass(frozen=True, slots=True)
class TorchOp:
    """One spec operator as a torch call: ``fn`` computes a new tensor,
    ``inplace`` (when torch has a ``_`` variant) overwrites the first input's
    view; ``check`` rejects the cases the function does not express."""

    fn: Fn
    inputs: tuple[str, ...] = ("InputTensor",)
    inplace: InPlace | None = None
    check: Callable[[Attrs], None] | None = None
    note: str = ""
    divisor: str | None = None    # integer input whose zeros C++ leaves undefined (NOT_SUPPORTED)
    outputs: int = 1              # outputs ``fn`` gives (more than one: a tuple, in the spec's order)


def _method(name: str, *args: Callable[[Attrs], Any]) -> TorchOp:
    """A Tensor method with an in-place twin (``x.abs()`` / ``x.abs_()``)."""
    return TorchOp(lambda t, xs, a: getattr(xs[0], name)(*(f(a) for f in args)),
                   inplace=lambda x, a: getattr(x, name + "_")(*(f(a) for f in args)))


def _functional(name: str, **kwargs: Callable[[Attrs], Any]) -> TorchOp:
    """A torch.nn.functional activation with ``inplace=True``."""
    def call(t: Any, x: Any, a: Attrs, inplace: bool) -> Any:
        return getattr(t.nn.functional, name)(x, **{k: f(a) for k, f in kwargs.items()}, inplace=inplace)
    return TorchOp(lambda t, xs, a: call(t, xs[0], a, False), inplace=lambda x, a: call(_torch(), x, a, True))


def _binary(name: str, **kwargs: Any) -> TorchOp:
    return TorchOp(lambda t, xs, a: getattr(t, name)(xs[0], xs[1], **kwargs), inputs=("ATensor", "BTensor"))


def _fixed(function: str, **values: Fraction | float) -> Callable[[Attrs], None]:
    """A check that the case holds the values ``function`` fixes."""
    def check(a: Attrs) -> None:
        for name, want in values.items():
            require(a, name, want, function)
    return check


def _shrink_check(a: Attrs) -> None:
    threshold, bias = a.f32("Threshold"), a.f32("Bias")
    if threshold < 0:
        raise NotSupportedError(f"Threshold={threshold} < 0: torch's shrinks need lambd >= 0")
    if bias not in (0.0, threshold):
        raise NotSupportedError(f"Bias={bias}: torch has hardshrink (Bias = 0) and softshrink (Bias = Threshold) only")


def _shrink(t: Any, xs: list[Any], a: Attrs) -> Any:
    threshold, bias = a.f32("Threshold"), a.f32("Bias")
    f = t.nn.functional
    return f.hardshrink(xs[0], threshold) if bias == 0.0 else f.softshrink(xs[0], threshold)


def _swish(t: Any, xs: list[Any], a: Attrs) -> Any:
    scale = a.f32("SigmoidInputScale")
    x = xs[0]
    return t.nn.functional.silu(x) if scale == 1.0 else x * t.sigmoid(x * scale)


def _softplus_threshold(a: Attrs) -> float:
    # torch returns x itself where beta * x > threshold; that is exact in the
    # target type only if exp(-threshold) is below its rounding: 20 for
    # float16/float32 (exp(-20) ~ 2e-9), 40 for float64 (exp(-40) ~ 4e-18).
    return 40.0 if a.dtype == np.float64 else 20.0


_SELU_ALPHA, _SELU_GAMMA = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

#: Clip as clamp(x, Min, Max), the bounds resolved as for onnxruntime (Min >
#: Max is NOT_SUPPORTED: torch gives Max there, the doc Min).
_CLAMP = TorchOp(lambda t, xs, a: t.clamp(xs[0], *clip_bounds(a)[1]), check=lambda a: None if clip_bounds(a) else None,
                 note="clamp(x, Min, Max); Min > Max is NOT_SUPPORTED (torch gives Max, the doc Min)")

TORCH_OPS: Mapping[str, TorchOp] = {
    **{op: _method(name) for op, name in {
        "ELEMENT_WISE_ABS": "abs", "ELEMENT_WISE_ACOS": "acos", "ELEMENT_WISE_ACOSH": "acosh",
        "ELEMENT_WISE_ASIN": "asin", "ELEMENT_WISE_ASINH": "asinh", "ELEMENT_WISE_ATAN": "atan",
        "ELEMENT_WISE_ATANH": "atanh", "ELEMENT_WISE_CEIL": "ceil", "ELEMENT_WISE_COS": "cos",
        "ELEMENT_WISE_COSH": "cosh", "ELEMENT_WISE_ERF": "erf", "ELEMENT_WISE_EXP": "exp",
        "ELEMENT_WISE_FLOOR": "floor", "ELEMENT_WISE_LOG": "log", "ELEMENT_WISE_NEGATE": "neg",
        "ELEMENT_WISE_RECIP": "reciprocal", "ELEMENT_WISE_SIGN": "sign", "ELEMENT_WISE_SIN": "sin",
        "ELEMENT_WISE_SINH": "sinh", "ELEMENT_WISE_SQRT": "sqrt", "ELEMENT_WISE_TAN": "tan",
        "ELEMENT_WISE_TANH": "tanh", "ACTIVATION_SIGMOID": "sigmoid", "ACTIVATION_TANH": "tanh",
    }.items()},
    "ELEMENT_WISE_IDENTITY": TorchOp(lambda t, xs, a: xs[0].clone(), inplace=lambda x, a: None),
    "ACTIVATION_IDENTITY": TorchOp(lambda t, xs, a: xs[0].clone(), inplace=lambda x, a: None),
    "ACTIVATION_RELU": _functional("relu"),
    "ACTIVATION_ELU": _functional("elu", alpha=lambda a: a.f32("Alpha")),
    "ACTIVATION_CELU": _functional("celu", alpha=lambda a: a.f32("Alpha")),
    "ACTIVATION_LEAKY_RELU": _functional("leaky_relu", negative_slope=lambda a: a.f32("Alpha")),
    "ACTIVATION_THRESHOLDED_RELU": _functional("threshold", threshold=lambda a: a.f32("Alpha"), value=lambda a: 0.0),
    "ACTIVATION_SCALED_ELU": TorchOp(
        _functional("selu").fn, inplace=_functional("selu").inplace,
        check=_fixed("torch.selu", Alpha=_SELU_ALPHA, Gamma=_SELU_GAMMA),
        note="torch.selu fixes alpha and gamma: only the doc's default values map"),
    "ACTIVATION_HARD_SIGMOID": TorchOp(
        _functional("hardsigmoid").fn, inplace=_functional("hardsigmoid").inplace,
        check=_fixed("torch.hardsigmoid", Alpha=Fraction(1, 6), Beta=0.5),
        note="torch.hardsigmoid is relu6(x + 3) / 6: only Alpha = 1/6, Beta = 0.5 map (the doc's default is 0.2)"),
    "ACTIVATION_HARD_SWISH": TorchOp(
        _functional("hardswish").fn, inplace=_functional("hardswish").inplace,
        check=_fixed("torch.hardswish", Alpha=Fraction(1, 6), Beta=0.5),
        note="torch.hardswish is x * relu6(x + 3) / 6: only Alpha = 1/6, Beta = 0.5 map"),
    "ACTIVATION_SHRINK": TorchOp(_shrink, check=_shrink_check,
                                 note="hardshrink where Bias = 0, softshrink where Bias = Threshold; else NOT_SUPPORTED"),
    "ACTIVATION_SOFTSIGN": TorchOp(lambda t, xs, a: t.nn.functional.softsign(xs[0])),
    "ACTIVATION_SWISH": TorchOp(_swish, note="silu where SigmoidInputScale = 1, else x * sigmoid(scale * x)"),
    "ACTIVATION_SOFTPLUS": TorchOp(
        lambda t, xs, a: t.nn.functional.softplus(xs[0], beta=a.f32("Steepness"), threshold=_softplus_threshold(a)),
        note="beta = Steepness; threshold chosen so that torch's linear tail is exact in the type"),
    "ACTIVATION_GELU": TorchOp(lambda t, xs, a: t.nn.functional.gelu(xs[0])),
    "ELEMENT_WISE_ADD": _binary("add"), "ELEMENT_WISE_ADD1": _binary("add"),
    "ELEMENT_WISE_SUBTRACT": _binary("sub"), "ELEMENT_WISE_MULTIPLY": _binary("mul"),
    "ELEMENT_WISE_MAX": _binary("maximum"), "ELEMENT_WISE_MIN": _binary("minimum"),
    "ELEMENT_WISE_MODULUS_TRUNCATE": _binary("fmod"), "ELEMENT_WISE_MODULUS_FLOOR": _binary("remainder"),
    "ELEMENT_WISE_DIVIDE": TorchOp(lambda t, xs, a: _divide(t, xs[0], xs[1]), inputs=("ATensor", "BTensor"),
                                   divisor="BTensor", note="integer tensors: div(rounding_mode='trunc')"),
    "ELEMENT_WISE_CLIP": _CLAMP,
    "ELEMENT_WISE_CLIP1": _CLAMP,
    "ELEMENT_WISE_LOGICAL_EQUALS": _binary("eq"), "ELEMENT_WISE_LOGICAL_GREATER_THAN": _binary("gt"),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _binary("ge"), "ELEMENT_WISE_LOGICAL_LESS_THAN": _binary("lt"),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _binary("le"),
    "ELEMENT_WISE_LOGICAL_AND": _binary("logical_and"), "ELEMENT_WISE_LOGICAL_OR": _binary("logical_or"),
    "ELEMENT_WISE_LOGICAL_XOR": _binary("logical_xor"),
    "ELEMENT_WISE_LOGICAL_NOT": TorchOp(lambda t, xs, a: t.logical_not(xs[0])),
    "ELEMENT_WISE_POW": TorchOp(lambda t, xs, a: t.pow(xs[0], xs[1]), inputs=("InputTensor", "ExponentTensor")),
    "ELEMENT_WISE_CONSTANT_POW": TorchOp(lambda t, xs, a: t.pow(xs[0], a.f32("Exponent")),
                                         check=lambda a: _float_only(a, "pow with a FLOAT exponent")),
    "ELEMENT_WISE_IF": TorchOp(lambda t, xs, a: t.where(xs[0] != 0, xs[1], xs[2]),
                               inputs=("ConditionTensor", "ATensor", "BTensor")),
    "ELEMENT_WISE_IS_INFINITY": TorchOp(lambda t, xs, a: _is_inf(t, xs[0], a)),
    "ELEMENT_WISE_THRESHOLD": TorchOp(lambda t, xs, a: t.clamp(xs[0], min=a.f32("Min")),
                                      check=lambda a: _float_only(a, "clamp with a FLOAT bound"),
                                      note="max(x, Min) as clamp(x, min=Min); integer tensors are NOT_SUPPORTED"),
    **{op: TorchOp(**kwargs) for family in (torch_bitwise, torch_softmax, torch_sequence, torch_reduction,
                                            torch_contraction, torch_value_scale)
       for op, kwargs in family.TORCH_OPS.items()},
}


def _divide(t: Any, a: Any, b: Any) -> Any:
    return t.div(a, b, rounding_mode="trunc") if not a.is_floating_point() else t.div(a, b)


def _float_only(a: Attrs, what: str) -> None:
    if a.dtype.kind in "iu":
        raise NotSupportedError(f"{what} on {a.dtype}: the doc truncates and fits the FLOAT attribute, torch promotes")


def _is_inf(t: Any, x: Any, a: Attrs) -> Any:
    mode = str(a.raw("InfinityMode") or "EITHER").upper()
    mode = {"0": "EITHER", "1": "POSITIVE", "2": "NEGATIVE"}.get(mode, mode)
    if mode.endswith("POSITIVE"):
        return t.isposinf(x)
    return t.isneginf(x) if mode.endswith("NEGATIVE") else t.isinf(x)


#: Messages with which torch refuses an input cleanly (a type without a
#: kernel, an attribute it cannot hold in the tensor's type, alpha = 0).
_REFUSALS = ("not implemented for", "not supported", "Unsupported", "without overflow", "ZeroDivisionError")


#: Device kind -> the operators whose torch kernels accumulate FLOAT16 in FLOAT16
#: (`BackendInfo.float16_accumulation`), each measured (torch 2.13 CPU) or read
#: in torch's source (CUDA); the others keep float32 (``at::opmath_type``).
#: * cpu, log-softmax: the last-dimension kernel (the mapping reduces the
#:   last dimension) keeps the sum of exp and its log in ``scalar_t`` arrays
#:   (``tmp_sum_scalar``, ``serial_vec_log_softmax_lastdim_range`` in
#:   aten/src/ATen/native/cpu/LogSoftmaxKernelImpl.h): log_softmax([0, -7.18])
#:   in FLOAT16 is -9.76e-4 where the value is -7.62e-4 (with
#:   ``dtype=float32``, right).  Softmax keeps float32 and passes.
#: * cpu, REDUCE's MULTIPLY alone: ``prod`` multiplies in ``scalar_t``
#:   (``prod_kernel_impl``, aten/src/ATen/native/cpu/ReduceOpsKernel.cpp: 2000
#:   factors 1 + 2^-10 give 6.89 for 7.04), while REDUCE's other functions sum
#:   in float32 (10,000 ones sum to 10,000): declared for that Function value
#:   only, so SUM's bounds stay float32's.  cumsum/cumprod keep
#:   ``at::acc_type`` (float32) and pass; so does GEMM.
#: * cuda, cumsum/cumprod: ``scan_dim<scalar_t>`` with ``std::plus<scalar_t>``
#:   and ``std::multiplies<scalar_t>`` (aten/src/ATen/native/cuda/CumsumKernel.cu,
#:   CumprodKernel.cu): every running value rounded to at::Half.  CUDA's
#:   ``prod`` and ``sum`` accumulate at::Half in float (``reduce_dispatch``,
#:   ReduceSumProdKernel.cu), its softmax in ``acc_type`` (float32).
FLOAT16_ACCUMULATION: Mapping[str, frozenset[str]] = {
    "cpu": frozenset({"ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1", "REDUCE:DML_REDUCE_FUNCTION_MULTIPLY"}),
    "cuda": frozenset({"CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"}),
}


def float16_accumulation(device: str) -> frozenset[str]:
    """The operators torch accumulates FLOAT16 in FLOAT16 on ``device``
    (``cpu``, ``cuda``, ``cuda:1``...; another kind declares none)."""
    return FLOAT16_ACCUMULATION.get(device.partition(":")[0], frozenset())


def _torch() -> Any:
    import torch  # noqa: PLC0415 - torch is optional (the [torch] extra), seconds to import: only this backend's runs

    return torch


class TorchBackend:
    """torch on ``device`` (``cpu`` or ``cuda[:N]``)."""

    def __init__(self, device: str = "cpu", feature_level: str | None = None, tf32: str = "off",
                 **options: str) -> None:
        if options:
            raise InputError(f"torch backend: {unknown_options(options, ('device', 'feature_level', 'tf32'))}")
        if tf32 not in ("on", "off"):
            raise InputError(f"torch backend: tf32={tf32!r}; write tf32=on or tf32=off")
        self.device = device
        self.level = level_option("torch", feature_level) or max(FeatureLevel)
        self.tf32 = tf32 == "on"  # torch.backends.cuda.matmul.allow_tf32, set before each run
        self._torch, self._reason = _import(device)

    def info(self) -> BackendInfo:
        t = self._torch
        version = getattr(t, "__version__", "not installed")
        where = platform.machine()
        if t is not None and self._reason is None and self.device.startswith("cuda"):
            where = t.cuda.get_device_name(t.device(self.device))
        tf32 = f", tf32 matmul {'on' if self.tf32 else 'off'}"
        return BackendInfo(name="torch", device=f"torch {version} {self.device} on {where}{tf32}", version=version,
                           feature_level=self.level, flush_subnormals=False,
                           available=self._reason is None, reason=self._reason,
                           float16_accumulation=float16_accumulation(self.device))

    def implements(self, spec: Spec) -> str | None:
        """Why torch does not implement ``spec``'s operator at all
        (`backends.base.ImplementingBackend`), from the function table."""
        return implements(TORCH_OPS, spec, "torch has no function for")

    def supports(self, spec: Spec, case: Case) -> Support:
        return support_of(_resolve, spec, case)

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        op, a = _resolve(spec, case)
        if op.divisor is not None:
            check_divisor(case, buffers, op.divisor, spec.operator)
        t = self._torch
        t.backends.cuda.matmul.allow_tf32 = self.tf32  # the process-wide switch, as this backend's option says
        try:
            self._run(t, op, a, case, buffers)
        except (TypeError, RuntimeError, NotImplementedError) as exc:
            text = str(exc)
            if any(m in text for m in _REFUSALS):
                raise NotSupportedError(f"torch {t.__version__} ({self.device}): {text.splitlines()[0]}") from exc
            raise

    def _run(self, t: Any, op: TorchOp, a: Attrs, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        storage: dict[int, Any] = {}   # one tensor per distinct buffer (an in-place pair shares one)

        def tensor(name: str) -> Any:
            buf = buffers[name]
            if id(buf) not in storage:
                host = t.from_numpy(buf)
                storage[id(buf)] = host if self.device == "cpu" else host.to(self.device)
            return storage[id(buf)]

        def view(td: Any) -> Any:
            return tensor(td.name).as_strided(td.sizes, td.strides)

        out = case.outputs[0]
        aliased = dict(case.aliases).get(out.name)
        if aliased is not None and op.inplace is not None and case.input(aliased).strides == out.strides:
            op.inplace(view(case.input(aliased)), a)
        else:
            given = {i.name for i in case.inputs}  # an optional tensor the case leaves out: None
            result = op.fn(t, [view(case.input(n)) if n in given else None for n in op.inputs], a)
            for o, r in zip(case.outputs, result if op.outputs > 1 else (result,)):
                view(o).copy_(r.to(view(o).dtype))
        if self.device != "cpu":  # copy the output buffers back from device memory
            for o in case.outputs:
                buffers[o.name][...] = storage[id(buffers[o.name])].cpu().numpy()


def _resolve(spec: Spec, case: Case) -> tuple[TorchOp, Attrs]:
    op = mapping_for(TORCH_OPS, spec, case, "torch has no function for")
    a = Attrs(spec, case)
    if op.check is not None:
        op.check(a)
    return op, a


def _import(device: str) -> tuple[Any, str | None]:
    """torch, and why ``device`` cannot be used (None when it can)."""
    try:
        import torch  # noqa: PLC0415 - torch is optional (the [torch] extra): the backend reports itself unavailable
    except ImportError:
        return None, f"torch is not installed ({INSTALL_HINT})"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            return torch, (f"device={device}: torch {torch.__version__} sees no CUDA device "
                           f"(built with CUDA {torch.version.cuda or 'none'})")
    elif device != "cpu":
        return torch, f"device={device!r}: use cpu or cuda[:N]"
    return torch, None

