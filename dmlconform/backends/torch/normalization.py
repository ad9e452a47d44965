"""The normalization family on torch: MEAN_VARIANCE_NORMALIZATION(1, 2) as
``torch.nn.functional.layer_norm`` or ``instance_norm``, and
MEAN_VARIANCE_NORMALIZATION2 with UseMean FALSE as ``rms_norm`` (the
``about-zero`` reading of ``variance-without-mean``), LP_NORMALIZATION as
``normalize`` (the ``max`` reading of ``lp-epsilon``) (issue #36 item 5).

Both compute the population variance with Epsilon inside the square root.
``layer_norm`` normalizes the trailing dimensions (Axes ``{k, ..., r-1}``)
with a weight and bias over them: the scale and bias must be constant over
the other dimensions (size 1 or stride 0).  ``instance_norm`` normalizes
dimensions 2 and up (Axes ``{2, ..., r-1}``, r >= 3) with one weight and
bias per channel; on the CPU it rounds FLOAT16 statistics (the mean, the
inverse deviation) to FLOAT16 before the normalization step, so the
backend declares FLOAT16 accumulation for those cases
(``MEAN_VARIANCE_NORMALIZATION1:2,3``, `backend.FLOAT16_ACCUMULATION`).
A fused activation is applied after (the unfused pair).  NormalizeVariance
FALSE, an instance of one element (torch refuses it) and other axis sets
are NOT_SUPPORTED with the reason.  BATCH_NORMALIZATION_TRAINING:
`batch_normalization`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.backends.torch.batch_normalization import TORCH_OPS as BATCH_OPS
from dmlconform.backends.torch.contraction import apply_activation as activated
from dmlconform.cases import family

NOTE = "layer_norm (Axes a trailing run) or instance_norm (Axes {2..}, per-channel scale); NormalizeVariance FALSE not mapped"


def _constant(t: Any, dims: set[int]) -> bool:
    """Whether torch tensor ``t`` holds the same value along every dimension of ``dims`` (size 1 or stride 0)."""
    return all(t.shape[d] == 1 or t.stride(d) == 0 for d in dims)


def _axes(a: Attrs, rank: int) -> tuple[int, ...]:
    """The normalized dimensions: Axes (MEAN_VARIANCE_NORMALIZATION1 and 2), or by CrossChannel 1 or 2 to the last."""
    if "Axes" in a.values:
        a.raw("AxisCount")
        return tuple(sorted(family.parse_axes(a.raw("Axes"), name="Axes")))
    return tuple(range(1 if a.raw("CrossChannel") else 2, rank))


def mean_variance(t: Any, xs: list[Any], a: Attrs) -> Any:
    """``xs`` = [input, scale or None, bias or None] normalized over the axes."""
    x, scale, bias = xs
    y = _mean_variance(t, x, scale, bias, a)
    fused = a.raw("FusedActivation")
    return activated(t, y, str(fused)) if fused else y


def _mean_variance(t: Any, x: Any, scale: Any, bias: Any, a: Attrs) -> Any:
    """``x`` normalized over the axes, scaled and biased (`mean_variance` before its activation)."""
    divide = a.raw("NormalizeVariance") if "NormalizeVariance" in a.values else a.raw("UseVariance")
    if not divide:
        raise NotSupportedError("NormalizeVariance (UseVariance) FALSE: torch's normalizations always divide")
    axes, eps, rank = _axes(a, x.dim()), a.f32("Epsilon"), x.dim()
    given = [v for v in (scale, bias) if v is not None]
    f = t.nn.functional
    if "UseMean" in a.values and not a.raw("UseMean"):
        return _rms(t, x, scale, bias, axes, eps)
    if axes == tuple(range(axes[0], rank)) and all(_constant(v, set(range(axes[0]))) for v in given):
        def over(v: Any) -> Any:
            return None if v is None else v.expand(x.shape)[(0,) * axes[0]]
        return f.layer_norm(x, tuple(x.shape[axes[0]:]), over(scale), over(bias), eps)
    if rank >= 3 and axes == tuple(range(2, rank)) and all(_constant(v, {0, *range(2, rank)}) for v in given):
        if all(x.shape[d] == 1 for d in axes):
            raise NotSupportedError("one element per instance: torch's instance_norm refuses it (\"Expected more "
                                    "than 1 spatial element when training\")")

        def per_channel(v: Any) -> Any:
            return None if v is None else v.expand(x.shape)[(0, slice(None), *(0,) * (rank - 2))]
        return f.instance_norm(x, weight=per_channel(scale), bias=per_channel(bias), eps=eps)
    raise NotSupportedError(f"Axes {list(axes)} with this scale and bias: neither layer_norm (a trailing run of axes, "
                            "the scale constant elsewhere) nor instance_norm (axes 2 and up, one scale per channel)")


def _rms(t: Any, x: Any, scale: Any, bias: Any, axes: tuple[int, ...], eps: float) -> Any:
    """UseMean FALSE (the ``about-zero`` reading): ``rms_norm`` over a trailing run of axes, the bias added after
    (float32 only: a FLOAT16 bias added to a rounded FLOAT16 result would round twice)."""
    rank = x.dim()
    if axes != tuple(range(axes[0], rank)) or not all(v is None or _constant(v, set(range(axes[0])))
                                                      for v in (scale, bias)):
        raise NotSupportedError(f"UseMean FALSE over Axes {list(axes)}: rms_norm normalizes a trailing run of axes, "
                                "its weight constant elsewhere")
    if bias is not None and x.dtype != t.float32:
        raise NotSupportedError("UseMean FALSE with a FLOAT16 bias: rms_norm has none, and adding it after rounds twice")
    weight = None if scale is None else scale.expand(x.shape)[(0,) * axes[0]]
    y = t.nn.functional.rms_norm(x, tuple(x.shape[axes[0]:]), weight, eps)
    return y if bias is None else y + bias


def lp(t: Any, xs: list[Any], a: Attrs) -> Any:
    """LP_NORMALIZATION as ``normalize``: ``x / max(||x||_p, eps)`` along Axis (the ``max`` reading of ``lp-epsilon``)."""
    p = int(a.raw("P") or 0)
    if p not in (1, 2):
        raise NotSupportedError(f"P={p}: the page allows 1 or 2")
    x, axis, eps = xs[0], int(a.raw("Axis") or 0), a.f32("Epsilon")
    if x.dtype == t.float16 and bool((t.linalg.vector_norm(x.double(), ord=p, dim=axis) < eps).any()):
        raise NotSupportedError("a norm below Epsilon in FLOAT16: normalize clamps with Epsilon rounded to FLOAT16")
    return t.nn.functional.normalize(x, p=float(p), dim=axis, eps=eps)


def lrn(t: Any, xs: list[Any], a: Attrs) -> Any:
    """LOCAL_RESPONSE_NORMALIZATION with CrossChannel TRUE as ``local_response_norm`` (its window size // 2
    before: the ``ceil-before`` reading of ``lrn-centre``)."""
    size = int(a.raw("LocalSize") or 0)
    if not a.raw("CrossChannel") or size < 1:
        raise NotSupportedError("local_response_norm sums across channels only, over a size of at least 1")
    return t.nn.functional.local_response_norm(xs[0], size, alpha=a.f32("Alpha"), beta=a.f32("Beta"), k=a.f32("Bias"))


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    op: {"fn": mean_variance, "inputs": ("InputTensor", "ScaleTensor", "BiasTensor"), "note": NOTE}
    for op in ("MEAN_VARIANCE_NORMALIZATION", "MEAN_VARIANCE_NORMALIZATION1", "MEAN_VARIANCE_NORMALIZATION2")} | {
    "LP_NORMALIZATION": {"fn": lp, "note": "normalize (max(norm, eps)); P 1 or 2"},
    "LOCAL_RESPONSE_NORMALIZATION": {"fn": lrn, "note": "local_response_norm: CrossChannel TRUE only (size // 2 before)"}
} | dict(BATCH_OPS)
