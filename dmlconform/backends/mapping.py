"""What every backend with a mapping table shares, whatever its engine: a
case's attributes as a mapping reads them (`Attrs`), the checks of values
an engine's function fixes (`require`), the table look-ups (`mapping_for`,
`implements`, `support_of`), Clip's bounds and integer division's
undefined cases.  The onnxruntime and torch backends both use them
(`backends.onnxruntime`, `backends.torch`); neither imports the other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, Protocol, TypeVar

import numpy as np

from dmlconform.backends.base import SUPPORTED, NotSupportedError, Support
from dmlconform.cases.model import Case
from dmlconform.families.elementwise.reference import float32_of
from dmlconform.spec.model import Spec, TensorRole, field_name, numpy_dtype, split_element

Value = float | int | bool | str


class Attrs:
    """A case's attributes as a mapping function reads them: FLOAT members
    rounded to float32 as the C struct holds them, the doc's default where
    the case gives none, and a record of which names were read (an
    attribute the mapping ignores makes the case NOT_SUPPORTED)."""

    def __init__(self, spec: Spec, case: Case) -> None:
        self.values = dict(case.attributes)
        self.defaults = {f.name: f.default for f in spec.fields if f.default is not None}
        self.dtype = numpy_dtype(case.dtype)
        # where the attributes leave them open (SLICE1); a tensor array's (SPLIT's) in index order
        self.output_sizes = tuple(o.sizes for o in sorted(case.outputs, key=lambda o: split_element(o.name)[1] or 0))
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


def int_bound(value: Value | None, dtype: np.dtype, *, lower: bool) -> int | None:
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
        lo, hi = int_bound(a.raw("Min"), a.dtype, lower=True), int_bound(a.raw("Max"), a.dtype, lower=False)
        a.raw("MinMaxDataType")
        if lo is None or hi is None:
            raise NotSupportedError(f"Min={a.raw('Min')!r}, Max={a.raw('Max')!r} lie outside {a.dtype}: the doc "
                                    "then gives the bound fitted to the type, which ONNX Clip cannot express")
    else:
        lo, hi = _float_bound(a, "Min", -math.inf), _float_bound(a, "Max", math.inf)
        lo, hi = in_type(a, lo), in_type(a, hi)
    if lo > hi:
        raise NotSupportedError(f"Min={lo!r} > Max={hi!r}: the doc gives Min (max(Min, min(x, Max))), "
                                "ONNX Clip and torch.clamp give Max")
    return {}, (lo, hi)


def in_type(a: Attrs, value: float) -> float:
    """``value`` rounded to the tensor type, as the operator compares with
    it: beyond float16's range it is the infinity of its sign (no warning)."""
    with np.errstate(over="ignore"):
        return float(a.dtype.type(value))


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
    fields = {field_name(t.name) for t in case.outputs}  # a tensor array (SPLIT's OutputTensors[k]) is one
    if len(fields) != mapping.outputs:
        raise NotSupportedError(f"{spec.operator}: {len(fields)} outputs; the mapping has {_count(mapping)}")
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
