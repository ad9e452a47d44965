"""ONNX node tests of the contractions as cases (issue #24 item 6): Gemm,
MatMul and MatMulInteger become GEMM and MATRIX_MULTIPLY_INTEGER cases.

`importers.onnx_node` asks a mapping's ``convert`` (these functions) for
the case when an operator's tensors are not element-wise.  Each raises
`Unmappable` with the reason where ONNX's test is not a DirectML call:

* Gemm (A, B, optional C; transA, transB, alpha, beta): A and B as stored
  with TransA/TransB; C broadcast unidirectionally is CTensor of the
  output's sizes with a stride of 0 where C has size 1 (the c-broadcast
  ambiguity's primary reading);
* MatMul: GEMM with Alpha 1 and no CTensor, the batch dimensions broadcast
  through strides of 0; a 1-D operand (which ONNX promotes to a matrix and
  drops again) is not a DirectML call;
* MatMulInteger: a_zero_point per tensor or of shape [M] (per row: given
  as { 1, .., M, 1 }, which every reading of zero-point-shape agrees on),
  b_zero_point per tensor or [N].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.families.contraction.semantics import NO_TRANSFORM, TRANSPOSE, Contraction
from dmlconform.spec.model import DataType, FeatureLevel, Spec

LEVEL = max(FeatureLevel)
_DTYPES = {np.dtype(n): DataType[n.upper()] for n in ("float16", "float32", "float64", "int8", "uint8", "int32")}


class Unmappable(Exception):
    """This ONNX test cannot be expressed as a case of the spec (the reason)."""


def _dtype(value: np.ndarray) -> DataType:
    found = _DTYPES.get(value.dtype)
    if found is None:
        raise Unmappable(f"data type {value.dtype} has no DirectML counterpart here")
    return found


def _tensor(name: str, value: np.ndarray, sizes: tuple[int, ...]) -> TensorData:
    """``value`` as a tensor of ``sizes``, broadcast through strides of 0 (numpy's rule, aligned at the end)."""
    value = np.ascontiguousarray(value)
    own = (1,) * (len(sizes) - value.ndim) + value.shape
    if len(own) != len(sizes) or any(o not in (1, s) for o, s in zip(own, sizes)):
        raise Unmappable(f"{name} of shape {list(value.shape)} does not broadcast to {list(sizes)}")
    strides = tuple(0 if o == 1 and s != 1 else st for o, s, st in zip(own, sizes, packed_strides(own)))
    buffer = value.reshape(-1).copy()
    buffer.flags.writeable = False
    return TensorData(name, _dtype(value), tuple(sizes), strides, buffer)


def _case(spec: Spec, test: Any, dtype: DataType, inputs: list[TensorData], out_sizes: tuple[int, ...],
          out_dtype: np.dtype, attributes: list[tuple[str, Any]]) -> Case:
    sem = spec.semantics
    assert isinstance(sem, Contraction)  # the mapping names a contraction spec
    output = TensorData(sem.output, _dtype(np.zeros(0, out_dtype)), out_sizes, packed_strides(out_sizes),
                        np.zeros(int(np.prod(out_sizes)), out_dtype))
    order = {f.name: i for i, f in enumerate(spec.fields)}
    layout = Layout.BROADCAST if any(0 in t.strides for t in inputs) else Layout.PACKED
    return Case(id=f"{spec.operator}/{dtype.name}/{len(out_sizes)}d/onnx:{test.name}", operator=spec.operator,
                level=LEVEL, dtype=dtype, inputs=tuple(sorted(inputs, key=lambda t: order[t.name])), outputs=(output,),
                attributes=tuple(sorted(attributes, key=lambda kv: order[kv[0]])), layout=layout, edges=("onnx",))


def _matrices(a: np.ndarray, b: np.ndarray, trans_a: bool = False, trans_b: bool = False) -> tuple[int, ...]:
    """The output's sizes of ``a`` x ``b`` (batches broadcast), or Unmappable."""
    if a.ndim < 2 or b.ndim < 2:
        raise Unmappable("a 1-D operand: ONNX promotes it to a matrix and drops that dimension, DirectML has no such rule")
    m = a.shape[-1] if trans_a else a.shape[-2]
    n = b.shape[-2] if trans_b else b.shape[-1]
    try:
        lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError as exc:
        raise Unmappable(f"batch shapes {list(a.shape[:-2])} and {list(b.shape[:-2])} do not broadcast") from exc
    return tuple(lead) + (m, n)


def gemm(test: Any, spec: Spec) -> Case:
    """ONNX Gemm -> GEMM."""
    sem = spec.semantics
    assert isinstance(sem, Contraction)
    attrs = dict(test.attributes)
    a, b = (np.asarray(x) for x in test.inputs[:2])
    c = test.inputs[2] if len(test.inputs) > 2 else None
    trans_a, trans_b = bool(attrs.get("transA", 0)), bool(attrs.get("transB", 0))
    out = _matrices(a, b, trans_a, trans_b)
    inputs = [_tensor(sem.a.tensor, a, a.shape), _tensor(sem.b.tensor, b, b.shape)]
    if c is not None and sem.c is not None:
        inputs.append(_tensor(sem.c, np.asarray(c), out))
    attributes = _gemm_attributes(sem, trans_a, trans_b, float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0)))
    return _case(spec, test, _dtype(a), inputs, out, np.asarray(test.outputs[0]).dtype, attributes)


def _gemm_attributes(sem: Contraction, trans_a: bool, trans_b: bool, alpha: float,
                     beta: float) -> list[tuple[str, Any]]:
    given: dict[str | None, Any] = {sem.a.transform: TRANSPOSE if trans_a else NO_TRANSFORM,
                                    sem.b.transform: TRANSPOSE if trans_b else NO_TRANSFORM,
                                    sem.alpha: float(np.float32(alpha)), sem.beta: float(np.float32(beta))}
    return [(k, v) for k, v in given.items() if k is not None]


def _batched(test: Any, sem: Contraction) -> tuple[list[TensorData], tuple[int, ...], DataType]:
    """A MatMul-like test's A and B with the output's batch sizes (strides
    of 0 where one repeats), the output's sizes and A's type."""
    a, b = (np.asarray(x) for x in test.inputs[:2])
    out = _matrices(a, b)
    lead = out[:-2]
    return [_tensor(sem.a.tensor, a, lead + a.shape[-2:]), _tensor(sem.b.tensor, b, lead + b.shape[-2:])], out, _dtype(a)


def matmul(test: Any, spec: Spec) -> Case:
    """ONNX MatMul -> GEMM with Alpha 1 and no CTensor."""
    sem = spec.semantics
    assert isinstance(sem, Contraction)
    inputs, out, dtype = _batched(test, sem)
    return _case(spec, test, dtype, inputs, out, np.asarray(test.outputs[0]).dtype,
                 _gemm_attributes(sem, False, False, 1.0, 1.0))


def matmul_integer(test: Any, spec: Spec) -> Case:
    """ONNX MatMulInteger -> MATRIX_MULTIPLY_INTEGER."""
    sem = spec.semantics
    assert isinstance(sem, Contraction)
    inputs, out, dtype = _batched(test, sem)
    rank = len(out)
    for index, name, per in ((2, sem.a.zero_point, (out[-2], 1)), (3, sem.b.zero_point, (1, out[-1]))):
        zp = test.inputs[index] if len(test.inputs) > index else None
        if zp is None or name is None:
            continue
        zp = np.asarray(zp)
        sizes = (1,) * rank if zp.size == 1 else (1,) * (rank - 2) + per
        if zp.size not in (1, int(np.prod(per))):
            raise Unmappable(f"{name} of shape {list(zp.shape)}: neither per tensor nor per {'row' if index == 2 else 'column'}")
        inputs.append(_tensor(name, zp.reshape(sizes), sizes))
    return _case(spec, test, dtype, inputs, out, np.asarray(test.outputs[0]).dtype, [])


#: ONNX operator -> (the spec, its converter), for `importers.onnx_node.MAPPINGS`.
CONVERTERS: Mapping[str, tuple[str, Callable[[Any, Spec], Case], str]] = {
    "Gemm": ("GEMM", gemm, "ONNX Gemm is GEMM on 2-D tensors; C's unidirectional broadcast is CTensor through "
                           "strides of 0 (the c-broadcast ambiguity's primary reading)"),
    "MatMul": ("GEMM", matmul, "ONNX MatMul is GEMM with Alpha = 1 and no CTensor; broadcast batches through "
                               "strides of 0; 1-D operands are not imported"),
    "MatMulInteger": ("MATRIX_MULTIPLY_INTEGER", matmul_integer,
                      "ONNX MatMulInteger's a_zero_point [M] is per row, given as { 1, .., M, 1 }"),
}
