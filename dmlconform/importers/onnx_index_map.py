"""ONNX node tests of the index-map family as cases (issue #34 item 6):
Gather, GatherElements, GatherND, Scatter/ScatterElements, ScatterND,
OneHot, NonZero, Slice, Pad, Tile, SpaceToDepth, DepthToSpace, Concat,
Split, Cast, EyeLike, ConstantOfShape and Range become the index-map
operators' cases (docs/index-map.md has their semantics).

`importers.onnx_node` asks a mapping's ``convert`` (these functions) for the
case, and its ``expected`` for ONNX's outputs in the case's form where they
differ (NonZero); each raises `Unmappable` with the reason where ONNX's test
is not a DirectML call:

* the gathers and scatters give every tensor one dimension count (the
  largest), sizes right-aligned with leading ones: GATHER's input then has
  ``r + q - 1`` dimensions and its Axis moves by ``q - 1``; GATHER_ND1 and
  SCATTER_ND say the real counts in InputDimensionCount and
  IndicesDimensionCount; ScatterElements/ScatterND with a ``reduction``
  other than none have no DirectML counterpart;
* Slice is SLICE1: per dimension a window whose first (step > 0) or last
  (step < 0) element is ONNX's clamped start, as large as the elements
  taken span; an empty result is no DirectML tensor;
* Pad is PADDING1 (constant, edge, reflect: CONSTANT, EDGE, REFLECTION);
  ``wrap`` is a mode no DirectML page describes, negative pads crop
  (PADDING's are unsigned);
* OneHot's indices get a dimension of size 1 at ``axis`` (DirectML's
  indices have the output's dimension count); float indices are no
  DirectML index type;
* NonZero's bool input is UINT8 0/1; ONNX's ``[rank, count]`` int64
  coordinates are the UINT32 ``{count-many rows of rank}`` rows of
  OutputCoordinatesTensor (M rows, those past the count left zero) plus the
  count in OutputCountTensor;
* EyeLike is DIAGONAL_MATRIX1 with Value 1 on ``[k, k + 1)``; ConstantOfShape
  FILL_VALUE_CONSTANT; Range FILL_VALUE_SEQUENCE (``start + i * delta``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.families.index_map.blocks import ORDER_PREFIX
from dmlconform.families.index_map.pads import MODE_PREFIX, TYPE_PREFIX
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.importers.onnx_contraction import Unmappable
from dmlconform.importers.onnx_families import _axis, _dtype, _input
from dmlconform.spec.model import DataType, FeatureLevel, Spec

LEVEL = max(FeatureLevel)

__all__ = ["CONVERTERS", "Unmappable"]

#: ONNX's outputs in a case's form, from the test, the case and its spec.
Expected = Callable[[Any, Case, Spec], tuple[np.ndarray, ...]]


def _sem(spec: Spec) -> IndexMap:
    sem = spec.semantics
    assert isinstance(sem, IndexMap)  # the mapping names an index-map spec
    return sem


def _name(sem: IndexMap, part: str) -> str:
    name = sem.attribute(part)
    assert name is not None, part  # the reviewed semantics name every part these converters set
    return name


def _tensor(name: str, value: np.ndarray, rank: int | None = None) -> TensorData:
    """``value`` packed, its sizes right-aligned in ``rank`` dimensions (a 0-d tensor as sizes [1])."""
    value = np.asarray(value)
    if value.size == 0:
        raise Unmappable(f"an empty tensor ({name} of shape {list(value.shape)})")
    own = tuple(int(s) for s in value.shape) or (1,)
    sizes = (1,) * ((rank or len(own)) - len(own)) + own
    if len(sizes) > 8:
        raise Unmappable(f"{len(sizes)} dimensions (DirectML has at most 8)")
    buffer = np.ascontiguousarray(value).reshape(-1).copy()
    buffer.flags.writeable = False
    return TensorData(name, _dtype(value), sizes, packed_strides(sizes), buffer)


def _output(name: str, like: np.ndarray, rank: int | None = None) -> TensorData:
    """An output of ``like``'s shape and type (sizes right-aligned in ``rank`` dimensions), zeros."""
    like = np.asarray(like)
    out = _tensor(name, np.zeros(like.shape, like.dtype), rank)
    return TensorData(out.name, out.dtype, out.sizes, out.strides, np.zeros(out.buffer.size, out.buffer.dtype))


def _case(spec: Spec, test: Any, dtype: DataType, inputs: tuple[TensorData, ...], outputs: tuple[TensorData, ...],
          given: Mapping[str, Any]) -> Case:
    """The case: attributes in struct order (only those the spec has)."""
    attrs = tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)
    rank = len(outputs[0].sizes)
    return Case(id=f"{spec.operator}/{dtype.name}/{rank}d/onnx:{test.name}", operator=spec.operator, level=LEVEL,
                dtype=dtype, inputs=inputs, outputs=outputs, attributes=attrs, layout=Layout.PACKED, edges=("onnx",))


def _csv(values: Any) -> str:
    return ",".join(str(int(v)) for v in values)


def _no_reduction(test: Any) -> None:
    reduction = dict(test.attributes).get("reduction", "none")
    if reduction != "none":
        raise Unmappable(f"reduction={reduction!r}: ONNX combines the updates with the data, DirectML's scatters "
                         "only write them")


def _integer_indices(value: np.ndarray) -> np.ndarray:
    if value.dtype.kind not in "iu":
        raise Unmappable(f"{value.dtype} indices: DirectML's indices are an integer type")
    return value


# -- gathers and scatters --------------------------------------------------------------------------
def gather(test: Any, spec: Spec) -> Case:
    """ONNX Gather -> GATHER: every tensor with ``r + q - 1`` dimensions; IndexDimensions = q."""
    sem = _sem(spec)
    x, idx = np.asarray(test.inputs[0]), _integer_indices(np.asarray(test.inputs[1]))
    q = max(idx.ndim, 1)
    rank = x.ndim + q - 1
    axis = _axis(dict(test.attributes).get("axis", 0), x.ndim) + rank - x.ndim
    inputs = (_tensor(sem.input, x, rank), _tensor(sem.indices or "", idx, rank))
    given = {_name(sem, "axis"): axis, _name(sem, "index_dimensions"): q}
    return _case(spec, test, inputs[0].dtype, inputs, (_output(sem.output, test.outputs[0], rank),), given)


def gather_elements(test: Any, spec: Spec) -> Case:
    """ONNX GatherElements -> GATHER_ELEMENTS (the same dimension counts)."""
    sem = _sem(spec)
    x, idx = np.asarray(test.inputs[0]), _integer_indices(np.asarray(test.inputs[1]))
    inputs = (_tensor(sem.input, x), _tensor(sem.indices or "", idx))
    given = {_name(sem, "axis"): _axis(dict(test.attributes).get("axis", 0), x.ndim)}
    return _case(spec, test, inputs[0].dtype, inputs, (_output(sem.output, test.outputs[0]),), given)


def gather_nd(test: Any, spec: Spec) -> Case:
    """ONNX GatherND -> GATHER_ND1: the real dimension counts as attributes, ``batch_dims`` as BatchDimensionCount."""
    sem = _sem(spec)
    x, idx = np.asarray(test.inputs[0]), _integer_indices(np.asarray(test.inputs[1]))
    expected = np.asarray(test.outputs[0])
    rank = max(x.ndim, idx.ndim, expected.ndim)
    inputs = (_tensor(sem.input, x, rank), _tensor(sem.indices or "", idx, rank))
    given = {_name(sem, "input_dimension_count"): x.ndim, _name(sem, "indices_dimension_count"): idx.ndim,
             _name(sem, "batch_dimension_count"): int(dict(test.attributes).get("batch_dims", 0))}
    return _case(spec, test, inputs[0].dtype, inputs, (_output(sem.output, expected, rank),), given)


def scatter_elements(test: Any, spec: Spec) -> Case:
    """ONNX Scatter (opset 9-10) / ScatterElements -> SCATTER."""
    sem = _sem(spec)
    _no_reduction(test)
    x, idx, updates = np.asarray(test.inputs[0]), _integer_indices(np.asarray(test.inputs[1])), np.asarray(test.inputs[2])
    inputs = (_tensor(sem.input, x), _tensor(sem.indices or "", idx), _tensor(sem.updates or "", updates))
    given = {_name(sem, "axis"): _axis(dict(test.attributes).get("axis", 0), x.ndim)}
    return _case(spec, test, inputs[0].dtype, inputs, (_output(sem.output, test.outputs[0]),), given)


def scatter_nd(test: Any, spec: Spec) -> Case:
    """ONNX ScatterND -> SCATTER_ND: one dimension count, the real ones as attributes."""
    sem = _sem(spec)
    _no_reduction(test)
    x, idx, updates = np.asarray(test.inputs[0]), _integer_indices(np.asarray(test.inputs[1])), np.asarray(test.inputs[2])
    rank = max(x.ndim, idx.ndim, updates.ndim)
    inputs = (_tensor(sem.input, x, rank), _tensor(sem.indices or "", idx, rank),
              _tensor(sem.updates or "", updates, rank))
    given = {_name(sem, "input_dimension_count"): x.ndim, _name(sem, "indices_dimension_count"): idx.ndim}
    return _case(spec, test, inputs[0].dtype, inputs, (_output(sem.output, test.outputs[0], rank),), given)


def one_hot(test: Any, spec: Spec) -> Case:
    """ONNX OneHot(indices, depth, values) -> ONE_HOT: the indices with a size-1 dimension at ``axis``."""
    sem = _sem(spec)
    idx, values = _integer_indices(np.asarray(test.inputs[0])), np.asarray(test.inputs[2])
    expected = np.asarray(test.outputs[0])
    axis = _axis(dict(test.attributes).get("axis", -1), expected.ndim)
    inputs = (_tensor(sem.indices or "", np.expand_dims(idx, axis)), _tensor(_values_name(spec), values, expected.ndim))
    return _case(spec, test, inputs[1].dtype, inputs, (_output(sem.output, expected),), {_name(sem, "axis"): axis})


def _values_name(spec: Spec) -> str:
    sem = _sem(spec)
    return next(f.name for f in spec.fields if f.is_tensor and f.name not in (sem.indices, sem.output))


def nonzero(test: Any, spec: Spec) -> Case:
    """ONNX NonZero -> NONZERO_COORDINATES: M rows of ``rank`` coordinates and the count."""
    sem = _sem(spec)
    x = np.asarray(test.inputs[0])
    source = _tensor(sem.input, x.view(np.uint8) if x.dtype == np.bool_ else x)
    rank, m = len(source.sizes), int(np.prod(source.sizes))
    count = _output(sem.count or "", np.zeros((1,) * rank, np.uint32))
    coordinates = _output(sem.output, np.zeros((m, rank), np.uint32), rank)
    ordered = tuple(sorted((count, coordinates), key=lambda t: [f.name for f in spec.fields].index(t.name)))
    return _case(spec, test, source.dtype, (source,), ordered, {})


def nonzero_expected(test: Any, case: Case, spec: Spec) -> tuple[np.ndarray, ...]:
    """ONNX's ``[rank, count]`` coordinates as the case's outputs: the count, and the rows (zeros past the count)."""
    sem = _sem(spec)
    found = np.asarray(test.outputs[0])
    coordinates = next(t for t in case.outputs if t.name == sem.output)
    rows = np.zeros((int(np.prod(case.inputs[0].sizes)), coordinates.sizes[-1]), np.uint32)
    rows[:found.shape[1]] = found.T.astype(np.uint32)
    by_name = {sem.output: rows, sem.count: np.array([found.shape[1]], np.uint32)}
    return tuple(by_name[t.name] for t in case.outputs)


# -- slices, pads, tiles, blocks -------------------------------------------------------------------
def slice_(test: Any, spec: Spec) -> Case:
    """ONNX Slice (opset 10 on: starts, ends, axes, steps inputs) -> SLICE1."""
    sem = _sem(spec)
    if test.opset < 10:
        raise Unmappable("Slice before opset 10 (starts/ends attributes) has no test in this onnx")
    x = np.asarray(test.inputs[0])
    starts, ends = (np.asarray(test.inputs[i]).reshape(-1) for i in (1, 2))
    axes_in, steps_in = _input(test, 3), _input(test, 4)
    axes = [_axis(a, x.ndim) for a in (range(len(starts)) if axes_in is None else np.asarray(axes_in).reshape(-1))]
    steps = np.ones(len(starts), np.int64) if steps_in is None else np.asarray(steps_in).reshape(-1)
    offsets, sizes, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    for axis, start, end, step in zip(axes, starts.tolist(), ends.tolist(), steps.tolist()):
        offsets[axis], sizes[axis], strides[axis] = _window(int(start), int(end), int(step), x.shape[axis])
    given = {_name(sem, "dimension_count"): x.ndim, _name(sem, "offsets"): _csv(offsets),
             _name(sem, "sizes"): _csv(sizes), _name(sem, "strides"): _csv(strides)}
    source = _tensor(sem.input, x)
    return _case(spec, test, source.dtype, (source,), (_output(sem.output, test.outputs[0]),), given)


def _window(start: int, end: int, step: int, size: int) -> tuple[int, int, int]:
    """ONNX's start/end/step on a dimension of ``size`` -> SLICE1's (offset, window size, stride)."""
    if step == 0:
        raise Unmappable("a step of 0")
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), size), min(max(end, 0), size)
        count = max(0, -(-(end - start) // step))
    else:
        start, end = min(max(start, 0), size - 1), min(max(end, -1), size - 1)
        count = max(0, -(-(start - end) // -step))
    if count == 0:
        raise Unmappable("an empty result (a dimension of size 0): DirectML has no tensor of size 0")
    span = (count - 1) * abs(step) + 1
    return (start if step > 0 else start - span + 1), span, step


_PAD_MODES = {"constant": "CONSTANT", "edge": "EDGE", "reflect": "REFLECTION"}


def pad(test: Any, spec: Spec) -> Case:
    """ONNX Pad (opset 11 on: pads, constant_value, axes inputs) -> PADDING1."""
    sem = _sem(spec)
    attrs = dict(test.attributes)
    mode = attrs.get("mode", "constant")
    if mode not in _PAD_MODES:
        raise Unmappable(f"mode={mode!r}: DML_PADDING_MODE has a WRAP constant, but no page describes it: "
                         "the family has no reviewed reading to check it against")
    if test.opset < 11:
        raise Unmappable("Pad before opset 11 (pads attribute) has no test in this onnx")
    x = np.asarray(test.inputs[0])
    pads = np.asarray(test.inputs[1]).reshape(-1).tolist()
    value_in, axes_in = _input(test, 2), _input(test, 3)
    axes = list(range(x.ndim)) if axes_in is None else [_axis(a, x.ndim) for a in np.asarray(axes_in).reshape(-1)]
    start, end = [0] * x.ndim, [0] * x.ndim
    for i, axis in enumerate(axes):
        start[axis], end[axis] = int(pads[i]), int(pads[i + len(axes)])
    if min(start + end) < 0:
        raise Unmappable(f"negative pads {pads}: ONNX crops there, DirectML's StartPadding/EndPadding are unsigned")
    source = _tensor(sem.input, x)
    value = 0 if value_in is None else np.asarray(value_in).reshape(-1)[0].item()
    given = {_name(sem, "padding_mode"): MODE_PREFIX + _PAD_MODES[mode], _name(sem, "dimension_count"): x.ndim,
             _name(sem, "start_padding"): _csv(start), _name(sem, "end_padding"): _csv(end),
             _name(sem, "padding_value"): float(value) if source.dtype.is_float else int(value)}
    if sem.padding_value_type is not None:
        given[sem.padding_value_type] = TYPE_PREFIX + source.dtype.name
    return _case(spec, test, source.dtype, (source,), (_output(sem.output, test.outputs[0]),), given)


def tile(test: Any, spec: Spec) -> Case:
    """ONNX Tile(input, repeats) -> TILE."""
    sem = _sem(spec)
    x = np.asarray(test.inputs[0])
    repeats = np.asarray(test.inputs[1]).reshape(-1)
    source = _tensor(sem.input, x)
    given = {_name(sem, "dimension_count"): x.ndim, _name(sem, "repeats"): _csv(repeats)}
    return _case(spec, test, source.dtype, (source,), (_output(sem.output, test.outputs[0]),), given)


def depth_space(test: Any, spec: Spec) -> Case:
    """ONNX DepthToSpace / SpaceToDepth -> DEPTH_TO_SPACE1 / SPACE_TO_DEPTH1 (``mode`` is Order, DCR by default)."""
    sem = _sem(spec)
    attrs = dict(test.attributes)
    order = {"DCR": "DEPTH_COLUMN_ROW", "CRD": "COLUMN_ROW_DEPTH"}[attrs.get("mode", "DCR")]
    source = _tensor(sem.input, np.asarray(test.inputs[0]))
    given = {_name(sem, "block_size"): int(attrs["blocksize"]), _name(sem, "order"): ORDER_PREFIX + order}
    return _case(spec, test, source.dtype, (source,), (_output(sem.output, test.outputs[0]),), given)


# -- joins, splits ---------------------------------------------------------------------------------
def _count_name(spec: Spec) -> str:
    return next(f.name for f in spec.attributes if f.name.endswith("Count"))


def concat(test: Any, spec: Spec) -> Case:
    """ONNX Concat -> JOIN (InputCount tensors)."""
    sem = _sem(spec)
    arrays = [np.asarray(a) for a in test.inputs if a is not None]
    axis = _axis(dict(test.attributes)["axis"], arrays[0].ndim)
    inputs = tuple(_tensor(f"{sem.input}[{i}]", a) for i, a in enumerate(arrays))
    given = {_count_name(spec): len(arrays), _name(sem, "axis"): axis}
    return _case(spec, test, inputs[0].dtype, inputs, (_output(sem.output, test.outputs[0]),), given)


def split(test: Any, spec: Spec) -> Case:
    """ONNX Split -> SPLIT: the outputs' sizes are ONNX's (from ``split`` or ``num_outputs``)."""
    sem = _sem(spec)
    x = np.asarray(test.inputs[0])
    source = _tensor(sem.input, x)
    axis = _axis(dict(test.attributes).get("axis", 0), x.ndim)
    outputs = tuple(_output(f"{sem.output}[{i}]", o) for i, o in enumerate(test.outputs))
    given = {_count_name(spec): len(outputs), _name(sem, "axis"): axis}
    return _case(spec, test, source.dtype, (source,), outputs, given)


# -- conversions and generators --------------------------------------------------------------------
def cast(test: Any, spec: Spec) -> Case:
    """ONNX Cast(to) / CastLike(input, target) -> CAST from the input's type to the output's."""
    sem = _sem(spec)
    if dict(test.attributes).get("round_mode", "up") != "up" or "saturate" in dict(test.attributes):
        raise Unmappable("saturate/round_mode: the float8 conversions, which DirectML has no type for")
    source = _tensor(sem.input, np.asarray(test.inputs[0]))
    return _case(spec, test, source.dtype, (source,), (_output(sem.output, test.outputs[0]),), {})


def _typed(value: Any, dtype: DataType) -> int | float:
    """A scalar as a case's DML_SCALAR_UNION value of ``dtype``."""
    item = np.asarray(value).reshape(-1)[0].item()
    return float(item) if dtype.is_float else int(item)


def eye_like(test: Any, spec: Spec) -> Case:
    """ONNX EyeLike(k) -> DIAGONAL_MATRIX1 with Value 1 on the diagonals [k, k + 1), no input tensor."""
    sem = _sem(spec)
    expected = np.asarray(test.outputs[0])
    out = _output(sem.output, expected)
    k = int(dict(test.attributes).get("k", 0))
    given = {_name(sem, "value_data_type"): TYPE_PREFIX + out.dtype.name, _name(sem, "value"): _typed(1, out.dtype),
             _name(sem, "fill_begin"): k, _name(sem, "fill_end"): k + 1}
    return _case(spec, test, out.dtype, (), (out,), given)


def constant_of_shape(test: Any, spec: Spec) -> Case:
    """ONNX ConstantOfShape(value) -> FILL_VALUE_CONSTANT of the output's shape (value default float32 0)."""
    sem = _sem(spec)
    given_value = dict(test.attributes).get("value")  # the reader gives a tensor attribute as a numpy array
    value = np.zeros(1, np.float32) if given_value is None else np.asarray(given_value)
    out = _output(sem.output, test.outputs[0])
    given = {_name(sem, "value_data_type"): TYPE_PREFIX + out.dtype.name, _name(sem, "value"): _typed(value, out.dtype)}
    return _case(spec, test, out.dtype, (), (out,), given)


def range_(test: Any, spec: Spec) -> Case:
    """ONNX Range(start, limit, delta) -> FILL_VALUE_SEQUENCE of ONNX's length (ValueStart, ValueDelta)."""
    sem = _sem(spec)
    out = _output(sem.output, test.outputs[0])
    given = {_name(sem, "value_data_type"): TYPE_PREFIX + out.dtype.name,
             _name(sem, "value_start"): _typed(test.inputs[0], out.dtype),
             _name(sem, "value_delta"): _typed(test.inputs[2], out.dtype)}
    return _case(spec, test, out.dtype, (), (out,), given)


_SAME_DIMENSIONS = "every tensor gets the largest dimension count, sizes right-aligned with leading ones"

#: ONNX operator -> (the spec, its converter, the note, ONNX's outputs in the case's form or None: as stored),
#: for `importers.onnx_node.MAPPINGS`.
CONVERTERS: Mapping[str, tuple[str, Callable[[Any, Spec], Case], str, Expected | None]] = {
    "Gather": ("GATHER", gather, "ONNX Gather(axis) is GATHER with IndexDimensions = the indices' rank q; the "
                                 "tensors get r + q - 1 dimensions (leading ones), Axis moves by q - 1", None),
    "GatherElements": ("GATHER_ELEMENTS", gather_elements, "ONNX GatherElements(axis) is GATHER_ELEMENTS", None),
    "GatherND": ("GATHER_ND1", gather_nd, f"ONNX GatherND(batch_dims) is GATHER_ND1 with BatchDimensionCount = "
                                          f"batch_dims; {_SAME_DIMENSIONS}, the real counts in "
                                          "InputDimensionCount and IndicesDimensionCount", None),
    **{op: ("SCATTER", scatter_elements, f"ONNX {op}(axis) is SCATTER; a reduction other than none is not imported",
            None) for op in ("Scatter", "ScatterElements")},
    "ScatterND": ("SCATTER_ND", scatter_nd, f"ONNX ScatterND is SCATTER_ND; {_SAME_DIMENSIONS}; a reduction other "
                                            "than none is not imported", None),
    "OneHot": ("ONE_HOT", one_hot, "ONNX OneHot(indices, depth, values) is ONE_HOT with the indices given a size-1 "
                                   "dimension at axis; depth is the output's size there", None),
    "NonZero": ("NONZERO_COORDINATES", nonzero, "ONNX NonZero's bool input is UINT8 0/1; its int64 [rank, count] "
                                                "output is the UINT32 rows of OutputCoordinatesTensor (zero past "
                                                "the count) and OutputCountTensor", nonzero_expected),
    "Slice": ("SLICE1", slice_, "ONNX Slice(starts, ends, axes, steps) is SLICE1: per dimension a window whose "
                                "first (step > 0) or last (step < 0) element is the clamped start", None),
    "Pad": ("PADDING1", pad, "ONNX Pad modes constant, edge, reflect are DML_PADDING_MODE_CONSTANT, EDGE, "
                             "REFLECTION; pads [begins, ends] are StartPadding, EndPadding", None),
    "Tile": ("TILE", tile, "ONNX Tile(repeats) is TILE with RepeatsCount = the rank", None),
    "DepthToSpace": ("DEPTH_TO_SPACE1", depth_space, "ONNX DepthToSpace mode DCR/CRD is Order DEPTH_COLUMN_ROW/"
                                                     "COLUMN_ROW_DEPTH", None),
    "SpaceToDepth": ("SPACE_TO_DEPTH1", depth_space, "ONNX SpaceToDepth mode DCR (default)/CRD is Order "
                                                     "DEPTH_COLUMN_ROW/COLUMN_ROW_DEPTH", None),
    "Concat": ("JOIN", concat, "ONNX Concat(axis) is JOIN with InputCount = its inputs", None),
    "Split": ("SPLIT", split, "ONNX Split is SPLIT with OutputCount = its outputs, their sizes ONNX's", None),
    **{op: ("CAST", cast, f"ONNX {op} is CAST from the input's type to the output's", None)
       for op in ("Cast", "CastLike")},
    "EyeLike": ("DIAGONAL_MATRIX1", eye_like, "ONNX EyeLike(k) is DIAGONAL_MATRIX1 with Value 1 on [k, k + 1) and "
                                              "no InputTensor (EyeLike reads only the input's shape)", None),
    "ConstantOfShape": ("FILL_VALUE_CONSTANT", constant_of_shape, "ONNX ConstantOfShape(value) is "
                                                                  "FILL_VALUE_CONSTANT of the output's shape", None),
    "Range": ("FILL_VALUE_SEQUENCE", range_, "ONNX Range(start, limit, delta) is FILL_VALUE_SEQUENCE of ONNX's "
                                             "length with ValueStart = start, ValueDelta = delta", None),
}
