"""The index-map family's generated operations as ONNX nodes for the
onnxruntime backend (issue #34 item 5), where ONNX's meaning is the page's:

* CAST: ``Cast(to)``; onnxruntime converts with C++ casts, which take one
  of the readings of `families.index_map.conversions` (docs/index-map.md).
* FILL_VALUE_CONSTANT: ``ConstantOfShape`` with the Value as its one-element
  ``value`` tensor of the output's type.
* FILL_VALUE_SEQUENCE: ``Range(start, limit, delta)`` (its output reshaped
  to the output's sizes), limit half a step past the last element so that
  ONNX's count ``ceil((limit - start) / delta)`` is the output's.  ONNX
  Range has no float16, 8-bit or unsigned kernels, no step of 0, and no
  limit beyond the type: NOT_SUPPORTED.
* DIAGONAL_MATRIX: ``EyeLike(k=Offset)`` on one matrix, alike in every
  matrix of the leading dimensions; it writes ones, so only Value = 1.

DIAGONAL_MATRIX1 (a span of diagonals and an input) and RANDOM_GENERATOR
(Philox bits; ONNX's random operators draw distributions) have no one-node
equivalent and are not mapped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.index_map.cases import semantics_of
from dmlconform.families.index_map.generated import attribute, diagonal_bounds, output_of, union_value
from dmlconform.families.index_map.semantics import Operation
from dmlconform.spec.model import DataType, Spec, numpy_dtype

OPSET = 13
#: Range's types in onnxruntime (its CPU kernel: float, double, int16, int32, int64).
_RANGE_TYPES = frozenset({DataType.FLOAT32, DataType.FLOAT64, DataType.INT16, DataType.INT32, DataType.INT64})


def plan(spec: Spec, case: Case) -> tuple[Any, ...]:
    """The session key of ``case``'s node; NotSupportedError where ONNX's node means something else."""
    sem = semantics_of(spec)
    out = output_of(sem, case)
    attrs = case.attribute_map()
    if sem.operation is Operation.CAST:
        return ("Cast", case.input(sem.input).dtype.name, out.dtype.name, case.input(sem.input).sizes)
    if sem.operation is Operation.FILL_CONSTANT:
        value = union_value(attribute(sem, attrs, "value"), out.dtype)
        return ("ConstantOfShape", out.dtype.name, out.sizes, value.tobytes())
    if sem.operation is Operation.FILL_SEQUENCE:
        if out.dtype not in _RANGE_TYPES:
            raise NotSupportedError(f"ONNX Range has no {out.dtype.name} kernel in onnxruntime")
        start, delta = (union_value(attribute(sem, attrs, p), out.dtype) for p in ("value_start", "value_delta"))
        if delta == 0:
            raise NotSupportedError("a ValueDelta of 0: ONNX Range's delta may not be 0")
        count = math.prod(out.sizes)
        if not out.dtype.is_float:
            limit = int(start) + count * int(delta)
            info = np.iinfo(numpy_dtype(out.dtype))
            if not info.min <= limit <= info.max:
                raise NotSupportedError(f"the sequence leaves {out.dtype.name}: ONNX Range's limit {limit} has no "
                                        "value of the type")
        return ("Range", out.dtype.name, count)
    if sem.operation is Operation.DIAGONAL:
        if float(attribute(sem, attrs, "value")) != 1.0:  # type: ignore[arg-type]
            raise NotSupportedError("a Value other than 1: ONNX EyeLike writes ones")
        offset, _ = diagonal_bounds(sem, attrs)
        return ("EyeLike", out.dtype.name, out.sizes[-2:], offset)
    raise NotSupportedError(f"ONNX has no one-node equivalent of {spec.operator}")


def _range_operands(start: np.generic, delta: np.generic, count: int, dtype: DataType) -> dict[str, np.ndarray]:
    nt = numpy_dtype(dtype)
    if dtype.is_float:
        limit = float(start) + (count - 0.5) * float(delta)  # half a step past the last: ceil gives count
    else:
        limit = int(start) + count * int(delta)
    return {n: np.array(v, dtype=nt) for n, v in (("start", start), ("limit", limit), ("delta", delta))}


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session, written into the output buffer."""
    sem = semantics_of(spec)
    key = plan(spec, case)
    out = output_of(sem, case)
    session = sessions.get(key, lambda: model(key, case), key[0])
    attrs = case.attribute_map()
    if key[0] == "Cast":
        feeds = {"x": np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input]))}
    elif key[0] == "ConstantOfShape":
        feeds = {"shape": np.array(out.sizes, dtype=np.int64)}
    elif key[0] == "Range":
        start, delta = (union_value(attribute(sem, attrs, p), out.dtype) for p in ("value_start", "value_delta"))
        feeds = _range_operands(start, delta, math.prod(out.sizes), out.dtype)
    else:
        feeds = {"x": np.zeros(out.sizes[-2:], dtype=numpy_dtype(out.dtype))}
    (y,) = session.run(None, feeds)
    write_output(out, buffers, np.broadcast_to(y, out.sizes) if key[0] == "EyeLike" else y)


def model(key: tuple[Any, ...], case: Case) -> Any:
    """The one-node model of ``key`` (`plan`)."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional and slow to import

    def elem(name: str) -> int:
        return int(helper.np_dtype_to_tensor_dtype(numpy_dtype(DataType[name])))

    op = key[0]
    if op == "Cast":
        inputs = [helper.make_tensor_value_info("x", elem(key[1]), key[3])]
        node = helper.make_node("Cast", ["x"], ["y"], to=elem(key[2]))
        out_type = elem(key[2])
    elif op == "ConstantOfShape":
        nt = numpy_dtype(DataType[key[1]])
        value = helper.make_tensor("value", elem(key[1]), [1], np.frombuffer(key[3], dtype=nt).tolist())
        inputs = [helper.make_tensor_value_info("shape", TensorProto.INT64, [len(key[2])])]
        node = helper.make_node("ConstantOfShape", ["shape"], ["y"], value=value)
        out_type = elem(key[1])
    elif op == "Range":
        inputs = [helper.make_tensor_value_info(n, elem(key[1]), []) for n in ("start", "limit", "delta")]
        node = helper.make_node("Range", ["start", "limit", "delta"], ["y"])
        out_type = elem(key[1])
    else:
        inputs = [helper.make_tensor_value_info("x", elem(key[1]), list(key[2]))]
        node = helper.make_node("EyeLike", ["x"], ["y"], k=int(key[3]))
        out_type = elem(key[1])
    graph = helper.make_graph([node], case.operator.lower(), inputs, [helper.make_tensor_value_info("y", out_type, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


_NOTES = {
    "CAST": ("Cast", ("InputTensor",), "C++ casts: the readings docs/index-map.md names"),
    "FILL_VALUE_CONSTANT": ("ConstantOfShape", (), "the Value as ConstantOfShape's value tensor"),
    "FILL_VALUE_SEQUENCE": ("Range", (), "Range reshaped; no float16, 8-bit or unsigned kernels, no step of 0"),
    "DIAGONAL_MATRIX": ("EyeLike", (), "EyeLike(k=Offset) per matrix; Value 1 only"),
}
#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {
    op: OnnxMapping(t, inputs=inputs, attrs=every_attribute, runner=run, check=plan, note=note)
    for op, (t, inputs, note) in _NOTES.items()}
