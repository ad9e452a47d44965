"""torch mappings of the reduction family (REDUCE, ARGMAX, ARGMIN), merged
into the torch backend's table (issue #24 item 5; docs/reduction.md).

Each function is torch's own (``sum``, ``mean``, ``linalg.vector_norm``,
``logsumexp``, ``prod``, ``amax``/``amin``, ``argmax``/``argmin``) over the
case's axes with ``keepdim=True``, in the tensor's own type (integer sums
keep it: torch would widen them to int64).  torch's ``prod``, ``argmax``
and ``argmin`` take one dimension: each runs over the reduced axes moved
to the end and merged (row-major in increasing axis order, as the doc
counts), arg* the last of ties by flipping.  One ``prod`` call, not one per
axis: a call per axis would round the partial products to FLOAT16 between
the calls, a rounding of the mapping's, not of torch's kernel (CUDA's keeps
float32 within a call).  LOG_SUM is ``log`` of a ``sum`` in float32 or
wider, rounded once to the tensor's type: two kernels in the
tensor's type would round the sum to FLOAT16 between them (3 ULP at 5
terms), which a one-kernel LOG_SUM does not.  An empty axis set is
NOT_SUPPORTED: torch reads ``dim=()`` as every axis.

FLOAT16 accumulation (`backends.torch.backend.FLOAT16_ACCUMULATION`): torch's CPU
``prod`` keeps its partial products in FLOAT16, while its other REDUCE
kernels sum in float32; the CPU declares ``REDUCE:DML_REDUCE_FUNCTION_MULTIPLY``
only, so MULTIPLY is judged by FLOAT16's bound and SUM's stays float32's
(docs/reduction.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.families.reduction.semantics import DECREASING, FUNCTION_PREFIX

Fn = Callable[[Any, list[Any], Attrs], Any]


def _axes(a: Attrs) -> tuple[int, ...]:
    text = str(a.raw("Axes") or "").strip()
    return tuple(sorted(int(x) for x in text.split(","))) if text else ()


def _check(a: Attrs) -> None:
    if not _axes(a):
        raise NotSupportedError("torch reads an empty dim as every axis; AxisCount 0 has no torch equivalent")


def _lined(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with the reduced ``axes`` moved to the end and merged into one."""
    kept = [i for i in range(x.dim()) if i not in axes]
    return x.permute(*kept, *axes).reshape(*(x.shape[i] for i in kept), -1)


def _kept(y: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """``y``, reduced over the last dimension of `_lined`, in ``x``'s shape with ``axes`` kept as 1."""
    return y.reshape(*(1 if i in axes else s for i, s in enumerate(x.shape)))


def _arg(function: str) -> Fn:
    """ARGMAX/ARGMIN over the reduced axes merged into the last one."""
    def call(t: Any, xs: list[Any], a: Attrs) -> Any:
        x, axes = xs[0], _axes(a)
        lined = _lined(x, axes)
        last = a.raw("AxisDirection") == DECREASING
        pick = t.argmax if function == "ARGMAX" else t.argmin
        index = (lined.shape[-1] - 1 - pick(lined.flip(-1), dim=-1)) if last else pick(lined, dim=-1)
        return _kept(index, x, axes)
    return call


def _prod(t: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """One ``prod`` kernel over the merged axes (none of the mapping's roundings between axes)."""
    return _kept(t.prod(_lined(x, axes), dim=-1, dtype=x.dtype), x, axes)


def _log_sum(t: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """log of the sum in float32 or wider (FLOAT64 stays FLOAT64), rounded once to the tensor's type."""
    return t.log(t.sum(x, dim=axes, keepdim=True, dtype=t.promote_types(x.dtype, t.float32))).to(x.dtype)


#: DML_REDUCE_FUNCTION -> torch over (torch, x, axes).
_FUNCTIONS: dict[str, Callable[[Any, Any, tuple[int, ...]], Any]] = {
    "SUM": lambda t, x, d: t.sum(x, dim=d, keepdim=True, dtype=x.dtype),
    "AVERAGE": lambda t, x, d: t.mean(x, dim=d, keepdim=True),
    "L1": lambda t, x, d: t.sum(t.abs(x), dim=d, keepdim=True, dtype=x.dtype),
    "L2": lambda t, x, d: t.linalg.vector_norm(x, ord=2, dim=d, keepdim=True),
    "SUM_SQUARE": lambda t, x, d: t.sum(x * x, dim=d, keepdim=True, dtype=x.dtype),
    "LOG_SUM": _log_sum,
    "LOG_SUM_EXP": lambda t, x, d: t.logsumexp(x, dim=d, keepdim=True),
    "MULTIPLY": _prod,
    "MAX": lambda t, x, d: t.amax(x, dim=d, keepdim=True),
    "MIN": lambda t, x, d: t.amin(x, dim=d, keepdim=True),
}


def _reduce(t: Any, xs: list[Any], a: Attrs) -> Any:
    function = str(a.raw("Function")).removeprefix(FUNCTION_PREFIX)
    if function in ("ARGMAX", "ARGMIN"):
        return _arg(function)(t, xs, a)
    return _FUNCTIONS[function](t, xs[0], _axes(a))


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "REDUCE": {"fn": _reduce, "check": _check}, "ARGMAX": {"fn": _arg("ARGMAX"), "check": _check},
    "ARGMIN": {"fn": _arg("ARGMIN"), "check": _check}}
