"""The index-map family's gathers as ONNX nodes for the onnxruntime backend
(issue #34 item 5): one node over the case's static shapes.

* GATHER: ``Gather(axis)`` with the indices reshaped to the last
  IndexDimensions sizes (the page's meaningful ones); its output, the
  input's sizes split at Axis with those inserted, is the page's before
  right alignment, reshaped to the output's sizes.
* GATHER_ELEMENTS: ``GatherElements(axis)``, the same function.
* GATHER_ND, GATHER_ND1: ``GatherND(batch_dims)`` over the dimensions that
  count (InputDimensionCount, IndicesDimensionCount); ONNX's output shape
  is the page's before right alignment.

ONNX takes int32 and int64 indices (GatherND int64 alone), negative ones
counted from the end as the pages count them; every other index type is
made int64 (every value inside a dimension kept).  An index outside its dimension
is an error to ONNX (the GATHER page: any value, no failure): such a case
is NOT_SUPPORTED with that reason, never run.

* SLICE, SLICE1: ``Slice`` with starts, ends, axes and steps as inputs:
  from the copy's start (SLICE1's window far end for a negative stride),
  as many elements as the output has, a stride apart.  ONNX has no step of
  0 (SLICE's ``stride-zero``): NOT_SUPPORTED.
* TILE: ``Tile`` with the repeats as an input (ONNX tiles the whole, as
  the page's example does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime import index_map_blocks, index_map_joins, index_map_pads
from dmlconform.backends.onnxruntime import nonzero as onnx_nonzero
from dmlconform.backends.onnxruntime import onehot as onnx_onehot
from dmlconform.backends.onnxruntime import scatters as onnx_scatters
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.index_map.cases import Call, call_of, relevant, semantics_of
from dmlconform.families.index_map.semantics import IndexMap, Operation
from dmlconform.families.index_map.slices import SliceCall, slice_call
from dmlconform.families.index_map.tiles import repeats_of
from dmlconform.spec.model import Spec, numpy_dtype

OPSET = 13
_INT64_MIN = -(2 ** 63)
NOTE = "one node over the case's static shapes; unsigned indices made int64; an index outside its dimension refused"
#: The spec operators mapped here -> the ONNX operator.
MAPPED = {"GATHER": "Gather", "GATHER_ELEMENTS": "GatherElements", "GATHER_ND": "GatherND", "GATHER_ND1": "GatherND",
          "SLICE": "Slice", "SLICE1": "Slice", "TILE": "Tile"}


@dataclass(frozen=True, slots=True)
class GatherPlan:
    """One case as one node: its ONNX operator and attribute, the shapes the
    input and the indices are given in, and the session key."""

    op_type: str
    attribute: tuple[str, int]
    data_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    key: tuple[Any, ...]


def plan(spec: Spec, case: Case) -> GatherPlan:
    """The node of ``case``; NotSupportedError where ONNX cannot run it (an
    index outside its dimension, a slice's stride of 0)."""
    sem = semantics_of(spec)
    if sem.operation is Operation.TILE:
        repeats = repeats_of(sem, case.attribute_map())
        x = case.input(sem.input)
        return GatherPlan("Tile", ("", 0), x.sizes, (), (spec.operator, "Tile", x.dtype.name, x.sizes, repeats))
    if sem.indices is None:
        return _slice_plan(spec, case)
    call = call_of(sem, case)
    x, idx = case.input(sem.input), case.input(sem.indices)
    _check_indices(sem, case, call)
    if call.operation is Operation.GATHER:
        shapes, attribute = (x.sizes, relevant(idx.sizes, call.index_dimensions)), ("axis", call.axis)
    elif call.operation is Operation.GATHER_ELEMENTS:
        shapes, attribute = (x.sizes, idx.sizes), ("axis", call.axis)
    else:
        shapes = (relevant(x.sizes, call.input_rank), relevant(idx.sizes, call.indices_rank))
        attribute = ("batch_dims", call.batch)
    op = MAPPED[spec.operator]
    types = (x.dtype.name, idx.dtype.name)
    return GatherPlan(op, attribute, shapes[0], shapes[1], (spec.operator, op, types, shapes, attribute))


def slice_bounds(call: SliceCall, sizes: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """ONNX Slice's starts and (exclusive) ends of a slice whose output has
    ``sizes``: from the copy's start, ``sizes`` elements a stride apart; an
    end below 0 (a negative stride down to element 0) is INT64_MIN, as -1
    would mean the last element to ONNX."""
    starts = call.starts()
    ends = tuple(start + step * (n - 1) + (1 if step > 0 else -1) for start, step, n in zip(starts, call.strides, sizes))
    return starts, tuple(e if e >= 0 else _INT64_MIN for e in ends)


def _slice_plan(spec: Spec, case: Case) -> GatherPlan:
    sem = semantics_of(spec)
    call = slice_call(sem, case.attribute_map())
    if 0 in call.strides:
        raise NotSupportedError("a stride of 0: ONNX Slice's steps may not be 0")
    x, out = case.input(sem.input), case.outputs[0]
    starts, ends = slice_bounds(call, out.sizes)
    constants = (starts, ends, tuple(range(len(starts))), call.strides)
    return GatherPlan("Slice", ("", 0), x.sizes, (), (spec.operator, "Slice", x.dtype.name, x.sizes, constants))


def _check_indices(sem: IndexMap, case: Case, call: Call) -> None:
    """NotSupportedError where an index lies outside its dimension (ONNX: an error)."""
    x, idx = case.input(sem.input), case.input(sem.indices or "IndicesTensor")
    values = np.ascontiguousarray(idx.view())
    if call.operation is Operation.GATHER_ND:
        data = relevant(x.sizes, call.input_rank)
        sizes = np.array(data[call.batch:call.batch + values.shape[-1]], dtype=np.int64)
    else:
        sizes = np.array(x.sizes[call.axis], dtype=np.int64)
    wide = values.astype(np.float64)
    inside = (wide >= -sizes if values.dtype.kind == "i" else wide >= 0) & (wide < sizes)
    if not inside.all():
        raise NotSupportedError("an index outside its dimension: ONNX Gather* calls it an error, where the GATHER "
                                "page asks for no failure (and the others are silent)")


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its node's session, written into the output buffer."""
    sem = semantics_of(spec)
    p = plan(spec, case)
    session = sessions.get(p.key, lambda: model(p, case), p.op_type)
    x = np.ascontiguousarray(case.input(sem.input).view(buffers[sem.input])).reshape(p.data_shape)
    if p.op_type == "Tile":
        (y,) = session.run(None, {"x": x, "repeats": np.array(p.key[-1], dtype=np.int64)})
        write_output(case.outputs[0], buffers, y)
        return
    if sem.indices is None:
        starts, ends, axes, steps = p.key[-1]
        (y,) = session.run(None, {"x": x, **{n: np.array(v, dtype=np.int64) for n, v in zip(
            ("starts", "ends", "axes", "steps"), (starts, ends, axes, steps))}})
        write_output(case.outputs[0], buffers, y)
        return
    idx = np.ascontiguousarray(case.input(sem.indices).view(buffers[sem.indices])).reshape(p.indices_shape)
    if idx.dtype != np.int32 or p.op_type == "GatherND":  # GatherND takes int64 alone
        idx = idx.astype(np.int64)
    (y,) = session.run(None, {"x": x, "indices": idx})
    write_output(case.outputs[0], buffers, y)


def model(p: GatherPlan, case: Case) -> Any:
    """The one-node model of ``p``: inputs ``x`` and ``indices`` (int32, or
    int64 for every other index type), output ``y`` of any shape."""
    from onnx import TensorProto, helper  # noqa: PLC0415 - onnx is optional and slow to import

    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(case.dtype))
    if p.op_type in ("Slice", "Tile"):
        names = ("starts", "ends", "axes", "steps") if p.op_type == "Slice" else ("repeats",)
        inputs = [helper.make_tensor_value_info("x", elem, p.data_shape)] + \
            [helper.make_tensor_value_info(n, TensorProto.INT64, [len(p.data_shape)]) for n in names]
        node = helper.make_node(p.op_type, ["x", *names], ["y"])
        graph = helper.make_graph([node], case.operator.lower(), inputs, [helper.make_tensor_value_info("y", elem, None)])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)
    index_type = TensorProto.INT32 if p.key[2][1] == "INT32" and p.op_type != "GatherND" else TensorProto.INT64
    inputs = [helper.make_tensor_value_info("x", elem, p.data_shape),
              helper.make_tensor_value_info("indices", index_type, p.indices_shape)]
    output = helper.make_tensor_value_info("y", elem, None)
    attribute: dict[str, Any] = {p.attribute[0]: p.attribute[1]}
    node = helper.make_node(p.op_type, ["x", "indices"], ["y"], **attribute)
    graph = helper.make_graph([node], case.operator.lower(), inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {
    op: OnnxMapping(t, inputs=("InputTensor", "IndicesTensor"), attrs=every_attribute, runner=run, check=plan, note=NOTE)
    for op, t in MAPPED.items()}
MAPPINGS = {**MAPPINGS, **index_map_pads.MAPPINGS, **index_map_blocks.MAPPINGS, **index_map_joins.MAPPINGS}
MAPPINGS = {**MAPPINGS, **onnx_scatters.MAPPINGS, **onnx_onehot.MAPPINGS,
            **onnx_nonzero.MAPPINGS}  # scatters.py, onehot.py, nonzero.py
