"""ONNX node tests of the reduction, softmax and sequence families as cases
(issue #24 item 6): Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax,
CumSum and TopK become REDUCE, ARGMAX/ARGMIN, the ``1`` softmax operators,
CUMULATIVE_SUMMATION and TOP_K1 cases.

`importers.onnx_node` asks a mapping's ``convert`` (these functions) for the
case; each raises `Unmappable` (the contraction converters' one refusal
type) with the reason where ONNX's test is not a DirectML call:

* Reduce*: ``axes`` (an attribute, or an input from opset 13/18) sorted and
  made non-negative, none meaning every axis; ``keepdims=0`` only drops the
  reduced dimensions of size 1, so the output keeps them (same values);
  ``noop_with_empty_axes=1`` with no axes returns the input, which REDUCE
  cannot express;
* ArgMax/ArgMin: ``axis``; ``select_last_index=1`` is AxisDirection
  DECREASING (the last of tied indices);
* Softmax/LogSoftmax/Hardmax: opset 13 reduces ``axis`` alone (Axes =
  {axis}); before 13 the input was coerced to 2-D at ``axis``, so every
  dimension from ``axis`` on is reduced jointly (Axes = {axis, .., last});
* CumSum/CumProd: the ``axis`` input; ``reverse=1`` is AxisDirection DECREASING,
  ``exclusive`` is HasExclusiveSum/Product;
* TopK: the ``K`` input; ``largest=1`` is AxisDirection DECREASING; the
  int64 indices are UINT64 (never negative); ``sorted=0`` leaves the order
  open and is not imported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.families.reduction.semantics import DECREASING, FUNCTION_PREFIX, INCREASING, Reduction
from dmlconform.families.sequence.semantics import SequenceOp
from dmlconform.families.softmax.semantics import Softmax
from dmlconform.importers.onnx_contraction import Unmappable
from dmlconform.spec.model import DataType, FeatureLevel, Spec

LEVEL = max(FeatureLevel)
_DTYPES = {np.dtype(n): DataType[n.upper()] for n in
           ("float32", "float16", "float64", "int8", "int16", "int32", "int64",
            "uint8", "uint16", "uint32", "uint64")}

__all__ = ["CONVERTERS", "Unmappable"]


def _dtype(value: np.ndarray) -> DataType:
    found = _DTYPES.get(value.dtype)
    if found is None:
        raise Unmappable(f"data type {value.dtype} has no DirectML counterpart here")
    return found


def _tensor(name: str, value: np.ndarray) -> TensorData:
    """``value`` packed (a 0-d tensor as sizes [1]); an empty one is no DirectML tensor."""
    if value.size == 0:
        raise Unmappable(f"an empty tensor ({name} of shape {list(value.shape)})")
    sizes = tuple(int(s) for s in value.shape) or (1,)
    buffer = np.ascontiguousarray(value).reshape(-1).copy()
    buffer.flags.writeable = False
    return TensorData(name, _dtype(value), sizes, packed_strides(sizes), buffer)


def _output(name: str, sizes: tuple[int, ...], like: np.ndarray) -> TensorData:
    dtype = np.asarray(like).dtype
    return TensorData(name, _dtype(np.zeros(0, dtype)), sizes, packed_strides(sizes),
                      np.zeros(int(np.prod(sizes)), dtype))


def _case(spec: Spec, test: Any, x: TensorData, outputs: tuple[TensorData, ...],
          given: Mapping[str | None, Any]) -> Case:
    """The case: attributes in struct order (only those the spec has)."""
    attrs = tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)
    return Case(id=f"{spec.operator}/{x.dtype.name}/{len(x.sizes)}d/onnx:{test.name}", operator=spec.operator,
                level=LEVEL, dtype=x.dtype, inputs=(x,), outputs=outputs, attributes=attrs, layout=Layout.PACKED,
                edges=("onnx",))


def _axis(value: Any, rank: int) -> int:
    """An ONNX axis (negative counts from the end) as a dimension number, or Unmappable."""
    axis = int(np.asarray(value).reshape(-1)[0]) if np.asarray(value).size == 1 else None
    if axis is None or not -rank <= axis < rank:
        raise Unmappable(f"axis {np.asarray(value).tolist()!r} is not one dimension of a {rank}-D input")
    return axis % rank


def _input(test: Any, index: int) -> np.ndarray | None:
    return test.inputs[index] if len(test.inputs) > index and test.inputs[index] is not None else None


# -- reductions ------------------------------------------------------------------------------------
#: ONNX Reduce* / ArgMax / ArgMin -> DML_REDUCE_FUNCTION suffix.
REDUCE_FUNCTIONS = {"ReduceSum": "SUM", "ReduceMean": "AVERAGE", "ReduceMax": "MAX", "ReduceMin": "MIN",
                    "ReduceProd": "MULTIPLY", "ReduceL1": "L1", "ReduceL2": "L2", "ReduceLogSum": "LOG_SUM",
                    "ReduceLogSumExp": "LOG_SUM_EXP", "ReduceSumSquare": "SUM_SQUARE"}


def _reduce_axes(test: Any, rank: int) -> tuple[int, ...]:
    """The reduced dimensions, sorted: the ``axes`` attribute or input; none is every axis."""
    attrs = dict(test.attributes)
    given = attrs.get("axes")
    if given is None:
        given = _input(test, 1)
    axes = [] if given is None else [int(a) for a in np.asarray(given).reshape(-1)]
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            raise Unmappable("noop_with_empty_axes=1 with no axes: ONNX returns the input unreduced, REDUCE has "
                             "no empty axis set (the empty-axis-set ambiguity)")
        return tuple(range(rank))
    return tuple(sorted({_axis(a, rank) for a in axes}))


def reduce(test: Any, spec: Spec) -> Case:
    """ONNX Reduce* -> REDUCE with the matching Function."""
    sem = spec.semantics
    assert isinstance(sem, Reduction)  # the mapping names REDUCE
    x = _tensor(sem.input, np.asarray(test.inputs[0]))
    axes = _reduce_axes(test, len(x.sizes))
    out = tuple(1 if i in axes else s for i, s in enumerate(x.sizes))
    given = {sem.function: FUNCTION_PREFIX + REDUCE_FUNCTIONS[test.op_type], sem.axis_count: len(axes),
             sem.axes: ",".join(str(a) for a in axes)}
    return _case(spec, test, x, (_output(sem.output, out, test.outputs[0]),), given)


def argminmax(test: Any, spec: Spec) -> Case:
    """ONNX ArgMax/ArgMin -> ARGMAX/ARGMIN over one axis."""
    sem = spec.semantics
    assert isinstance(sem, Reduction)  # the mapping names ARGMAX or ARGMIN
    attrs = dict(test.attributes)
    x = _tensor(sem.input, np.asarray(test.inputs[0]))
    axis = _axis(attrs.get("axis", 0), len(x.sizes))
    out = tuple(1 if i == axis else s for i, s in enumerate(x.sizes))
    given = {sem.axis_count: 1, sem.axes: str(axis),
             sem.direction: DECREASING if attrs.get("select_last_index", 0) else INCREASING}
    return _case(spec, test, x, (_output(sem.output, out, test.outputs[0]),), given)


# -- softmax ---------------------------------------------------------------------------------------
def softmax(test: Any, spec: Spec) -> Case:
    """ONNX Softmax/LogSoftmax/Hardmax -> the ``1`` operator with Axes
    {axis} (opset 13 on) or {axis, .., last} (before: coerced to 2-D)."""
    sem = spec.semantics
    assert isinstance(sem, Softmax) and sem.axes is not None  # the mapping names a ``1`` operator
    x = _tensor(sem.input, np.asarray(test.inputs[0]))
    rank = len(x.sizes)
    attrs = dict(test.attributes)
    axis = _axis(attrs.get("axis", -1 if test.opset >= 13 else 1), rank)
    axes = (axis,) if test.opset >= 13 else tuple(range(axis, rank))
    given = {sem.axis_count: len(axes), sem.axes: ",".join(str(a) for a in axes)}
    return _case(spec, test, x, (_output(sem.output, x.sizes, test.outputs[0]),), given)


# -- sequences -------------------------------------------------------------------------------------
def cumulative(test: Any, spec: Spec) -> Case:
    """ONNX CumSum/CumProd -> CUMULATIVE_SUMMATION/PRODUCT."""
    sem = spec.semantics
    assert isinstance(sem, SequenceOp)  # the mapping names a CUMULATIVE_ operator
    attrs = dict(test.attributes)
    x = _tensor(sem.input, np.asarray(test.inputs[0]))
    axis_input = _input(test, 1)
    if axis_input is None:
        raise Unmappable("no axis input")
    given = {sem.axis: _axis(axis_input, len(x.sizes)),
             sem.direction: DECREASING if attrs.get("reverse", 0) else INCREASING,
             sem.exclusive: bool(attrs.get("exclusive", 0))}
    return _case(spec, test, x, (_output(sem.output, x.sizes, test.outputs[0]),), given)


def top_k(test: Any, spec: Spec) -> Case:
    """ONNX TopK -> TOP_K1 (values and indices)."""
    sem = spec.semantics
    assert isinstance(sem, SequenceOp) and sem.indices is not None  # the mapping names TOP_K1
    attrs = dict(test.attributes)
    if not attrs.get("sorted", 1):
        raise Unmappable("sorted=0: ONNX leaves the order of the K outputs open, TOP_K1 sorts them")
    x = _tensor(sem.input, np.asarray(test.inputs[0]))
    k_input = _input(test, 1)
    if k_input is None or np.asarray(k_input).size != 1:
        raise Unmappable(f"K {None if k_input is None else np.asarray(k_input).tolist()!r} is not one number")
    axis = _axis(attrs.get("axis", -1), len(x.sizes))
    k = int(np.asarray(k_input).reshape(-1)[0])
    if not 1 <= k <= x.sizes[axis]:
        raise Unmappable(f"K {k} is not between 1 and the axis size {x.sizes[axis]}")
    out = x.sizes[:axis] + (k,) + x.sizes[axis + 1:]
    given = {sem.axis: axis, sem.k: k, sem.direction: DECREASING if attrs.get("largest", 1) else INCREASING}
    indices = np.asarray(test.outputs[1])
    if indices.dtype == np.int64:  # DirectML's index tensors are unsigned; ONNX's indices are never negative
        indices = indices.astype(np.uint64)
    outputs = (_output(sem.output, out, test.outputs[0]), _output(sem.indices, out, indices))
    return _case(spec, test, x, outputs, given)


_NOTE_REDUCE = ("ONNX {op} is REDUCE with Function {function} over the sorted, non-negative axes (none: every "
                "axis); keepdims=0 drops the reduced dimensions of size 1, the case keeps them (same values)")

#: ONNX operator -> (the spec, its converter, the note), for `importers.onnx_node.MAPPINGS`.
CONVERTERS: Mapping[str, tuple[str, Callable[[Any, Spec], Case], str]] = {
    **{op: ("REDUCE", reduce, _NOTE_REDUCE.format(op=op, function=function))
       for op, function in REDUCE_FUNCTIONS.items()},
    **{op: (op.upper(), argminmax, f"ONNX {op}(axis) is {op.upper()} with Axes = {{axis}}; select_last_index=1 "
                                   "is AxisDirection DECREASING; keepdims=0 only drops the size-1 dimension")
       for op in ("ArgMax", "ArgMin")},
    **{op: (spec, softmax, f"ONNX {op} from opset 13 is {spec} with Axes = {{axis}}; before 13 the input was "
                           "coerced to 2-D at axis: Axes = {axis, .., last}")
       for op, spec in (("Softmax", "ACTIVATION_SOFTMAX1"), ("LogSoftmax", "ACTIVATION_LOG_SOFTMAX1"),
                        ("Hardmax", "ACTIVATION_HARDMAX1"))},
    **{op: (spec, cumulative, f"ONNX {op}(x, axis) is {spec}; reverse=1 is AxisDirection DECREASING, exclusive "
                              f"is {flag}")
       for op, spec, flag in (("CumSum", "CUMULATIVE_SUMMATION", "HasExclusiveSum"),
                              ("CumProd", "CUMULATIVE_PRODUCT", "HasExclusiveProduct"))},
    "TopK": ("TOP_K1", top_k, "ONNX TopK(x, K) is TOP_K1; largest=1 is AxisDirection DECREASING, largest=0 "
                              "INCREASING; ONNX's int64 indices are the UINT64 OutputIndexTensor (never negative: "
                              "the same values); sorted=0 is not imported (ONNX leaves the order open)"),
}
