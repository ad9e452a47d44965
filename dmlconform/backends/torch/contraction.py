"""The contraction family on torch: GEMM, MATRIX_MULTIPLY_INTEGER and
MATRIX_MULTIPLY_INTEGER_TO_FLOAT as torch calls (issue #24 item 5).

`backends.torch.backend` merges `TORCH_OPS` into its table.  The
operands reach torch as DirectML binds them (``as_strided`` views of the
buffers: transposes, padding and stride-0 broadcasts as they are); an
optional tensor the case leaves out comes as None.

* GEMM: ``torch.baddbmm`` of the transposed views (Alpha and Beta inside
  the kernel), in the tensor's type (on CUDA, ``torch.backends.cuda.matmul.allow_tf32``
  decides whether FLOAT32 products use TF32: the backend's ``tf32`` option).
  FusedActivation: the activation applied to the result, the unfused pair
  (the ``rounded`` reading of fused-activation-rounding, accepted).
* MATRIX_MULTIPLY_INTEGER: the differences (A - AZeroPoint)(B - BZeroPoint)
  in int32 and ``torch.matmul`` in int32 (CPU only: CUDA has no integer
  matmul, a clean NOT_SUPPORTED); sums past INT32 wrap.
* MATRIX_MULTIPLY_INTEGER_TO_FLOAT: each operand dequantized in float32 and
  ``torch.matmul``, Bias added (the ``float`` reading of
  integer-accumulator), rounded once to the output type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs

Fn = Callable[[Any, list[Any], Attrs], Any]


def apply_activation(t: Any, y: Any, text: str) -> Any:
    """``y`` through the fused activation ``text`` (families.contraction.cases.parse_activation's format):
    GEMM's and CONVOLUTION's (`backends.torch.window`), each activation of the fused-activation page as
    torch functions (the ``rounded`` reading of fused-activation-rounding: torch's result is rounded first)."""
    name, _, rest = text.partition("(")
    settings = {k: float(v) for k, v in (p.split("=") for p in rest.rstrip(")").split(",") if "=" in p)}
    f = t.nn.functional
    alpha, beta = settings.get("Alpha", 1.0), settings.get("Beta", 0.0)
    table: dict[str, Callable[[], Any]] = {
        "ACTIVATION_IDENTITY": lambda: y, "ACTIVATION_RELU": lambda: f.relu(y), "ACTIVATION_SIGMOID": lambda: t.sigmoid(y),
        "ACTIVATION_TANH": lambda: t.tanh(y),
        "ACTIVATION_LEAKY_RELU": lambda: f.leaky_relu(y, negative_slope=settings.get("Alpha", 0.01)),
        "ACTIVATION_LINEAR": lambda: y * alpha + beta,
        "ACTIVATION_HARD_SIGMOID": lambda: t.clamp(y * alpha + beta, 0.0, 1.0),
        "ACTIVATION_SCALED_TANH": lambda: t.tanh(y * beta) * alpha,
        "ACTIVATION_THRESHOLDED_RELU": lambda: f.threshold(y, alpha, 0.0),
        "ACTIVATION_ELU": lambda: f.elu(y, alpha), "ACTIVATION_CELU": lambda: f.celu(y, alpha),
        "ACTIVATION_SCALED_ELU": lambda: f.elu(y, alpha) * settings["Gamma"],
        "ACTIVATION_SOFTPLUS": lambda: f.softplus(y, beta=settings["Steepness"]),
        "ACTIVATION_PARAMETRIC_SOFTPLUS": lambda: f.softplus(y, beta=beta) * (alpha * beta),
        "ACTIVATION_SOFTSIGN": lambda: f.softsign(y), "ACTIVATION_GELU": lambda: f.gelu(y),
        "ACTIVATION_SHRINK": lambda: t.where(y < -settings["Threshold"], y + settings["Bias"],
                                             t.where(y > settings["Threshold"], y - settings["Bias"], t.zeros_like(y))),
        "ELEMENT_WISE_CLIP": lambda: t.clamp(y, settings["Min"], settings["Max"])}
    if name not in table:
        raise NotSupportedError(f"FusedActivation {name}: not mapped onto torch")
    return table[name]()


def _gemm(t: Any, xs: list[Any], a: Attrs) -> Any:
    left, right, c = xs
    if str(a.raw("TransA")).endswith("TRANSPOSE"):
        left = left.transpose(-1, -2)
    if str(a.raw("TransB")).endswith("TRANSPOSE"):
        right = right.transpose(-1, -2)
    y = _baddbmm(t, left, right, c, a.f32("Alpha"), a.f32("Beta"))
    fused = a.raw("FusedActivation")
    return apply_activation(t, y, str(fused)) if fused else y


def _baddbmm(t: Any, left: Any, right: Any, c: Any, alpha: float, beta: float) -> Any:
    """``beta * c + alpha * left @ right`` as one ``torch.baddbmm`` over the
    batches flattened (Alpha and Beta inside the kernel, one rounding to the
    type at the end, as cuBLAS's and DirectML's GEMM): matmul, then a Mul and
    an Add, would round FLOAT16 three times."""
    lead = t.broadcast_shapes(left.shape[:-2], right.shape[:-2])
    m, n, k = left.shape[-2], right.shape[-1], left.shape[-1]
    flat_a = left.expand(*lead, m, k).reshape(-1, m, k)
    flat_b = right.expand(*lead, k, n).reshape(-1, k, n)
    addend = c.expand(*lead, m, n).reshape(-1, m, n) if c is not None else t.zeros(
        (flat_a.shape[0], m, n), dtype=left.dtype, device=left.device)
    y = t.baddbmm(addend, flat_a, flat_b, beta=beta if c is not None else 0.0, alpha=alpha)
    return y.reshape(*lead, m, n)


def _differences(t: Any, xs: list[Any], to: Any) -> tuple[Any, Any]:
    """(A - AZeroPoint, B - BZeroPoint) in ``to``; a 1-D zero point of A is per row."""
    a, za, b, zb = xs[:4]
    if za is not None and za.dim() == 1:
        za = za.unsqueeze(-1)
    left = a.to(to) - (za.to(to) if za is not None else 0)
    right = b.to(to) - (zb.to(to) if zb is not None else 0)
    return left, right


def _integer(t: Any, xs: list[Any], a: Attrs) -> Any:
    left, right = _differences(t, xs, t.int32)
    if left.device.type != "cpu":
        raise NotSupportedError(f"torch has no integer matmul on {left.device.type}")
    return t.matmul(left, right)


def _to_float(t: Any, xs: list[Any], a: Attrs) -> Any:
    left, right = _differences(t, [xs[0], xs[2], xs[3], xs[5]], t.float32)
    scale_a, scale_b, bias = xs[1], xs[4], xs[6]
    if scale_a.dim() == 1:
        scale_a = scale_a.unsqueeze(-1)
    y = t.matmul(left * scale_a.float(), right * scale_b.float())
    return y + bias.float() if bias is not None else y


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`): the
#: function and its inputs in order (an optional one the case leaves out reaches it as None).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "GEMM": {"fn": _gemm, "inputs": ("ATensor", "BTensor", "CTensor")},
    "MATRIX_MULTIPLY_INTEGER": {"fn": _integer, "inputs": ("ATensor", "AZeroPointTensor", "BTensor",
                                                          "BZeroPointTensor")},
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": {"fn": _to_float, "inputs": ("ATensor", "AScaleTensor", "AZeroPointTensor",
                                                                    "BTensor", "BScaleTensor", "BZeroPointTensor",
                                                                    "BiasTensor")},
}
