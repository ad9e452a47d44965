"""ONNX node tests of the window family as cases (issue #35 item 6): Conv,
ConvTranspose, ConvInteger, AveragePool, LpPool, MaxPool and the global
pools become CONVOLUTION, CONVOLUTION_INTEGER, AVERAGE_POOLING1,
LP_POOLING1 and MAX_POOLING2 cases (docs/window.md has their semantics);
MaxUnpool and Col2Im become MAX_UNPOOLING and FOLD cases.

`importers.onnx_node` asks a mapping's ``convert`` (these functions) for the
case; each raises `Unmappable` with the reason where ONNX's test is not a
DirectML call:

* the geometry: ``kernel_shape`` (or the filter's spatial sizes), ``strides``,
  ``dilations`` and ``pads`` ``[begins, ends]``; ``auto_pad`` SAME_UPPER /
  SAME_LOWER split the padding that keeps ``ceil(in / stride)`` outputs with
  the odd one at the end / the start, VALID is none;
* DirectML's output sizes follow from the geometry with EndPadding (forward:
  ``(I + start + end - span) // S + 1``), so where ONNX's output is larger
  (``ceil_mode=1``) the end padding grows until they agree: the added
  positions are padding, which neither a maximum, an Lp sum nor an average
  over the taps inside the input counts; an average that counts padding
  (``count_include_pad=1``) would divide by the whole window there, where
  ONNX divides by the taps inside the padded input only: not imported;
* a 1-D pooling (DirectML pools 2-D and 3-D) gets a height of 1 (a window,
  stride and dilation of 1 there); MaxPool's int64 indices are the UINT64
  OutputIndicesTensor (the same flat row-major index: the added height is 1);
  ``storage_order=1`` (column-major indices) is not imported;
* ConvTranspose is CONVOLUTION with Direction BACKWARD and Mode
  CROSS_CORRELATION (ONNX does not flip the filter; its layout {C, M/G, ...}
  is DirectML's backward one); the output's sizes are ONNX's (``output_shape``
  or the formula), StartPadding ONNX's begins, EndPadding and OutputPadding
  what makes DirectML's formula give those sizes;
* ConvInteger's zero points: the input's per tensor, the filter's per tensor
  or per output channel ({1, M, 1, ...});
* MaxUnpool's int64 indices are the UINT64 IndicesTensor (both flat over
  the whole output), its output's sizes ONNX's; ONNX's indices count in the
  sizes kernel_shape, strides and pads give, a block ``output_shape`` puts
  at the output's start: they are moved to the same coordinates there;
* Col2Im's block_shape input is FOLD's WindowSizes, its image_shape the
  output's spatial sizes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.families.window.semantics import BACKWARD, CROSS_CORRELATION, FORWARD, Window
from dmlconform.importers.onnx_contraction import Unmappable
from dmlconform.importers.onnx_families import _dtype, _input
from dmlconform.spec.model import FeatureLevel, Spec

LEVEL = max(FeatureLevel)

__all__ = ["CONVERTERS", "Unmappable"]


def _sem(spec: Spec) -> Window:
    sem = spec.semantics
    if not isinstance(sem, Window):
        raise Unmappable(f"{spec.operator} has no reviewed window semantics in this suite yet (no oracle to "
                         "check ONNX's output against)")
    return sem


def _tensor(name: str, value: np.ndarray, sizes: Sequence[int] | None = None) -> TensorData:
    """``value`` packed as ``sizes`` (default its own; a 0-d tensor as sizes [1])."""
    value = np.asarray(value)
    if value.size == 0:
        raise Unmappable(f"an empty tensor ({name} of shape {list(value.shape)})")
    shape = tuple(int(s) for s in (value.shape if sizes is None else sizes)) or (1,)
    buffer = np.ascontiguousarray(value).reshape(-1).copy()
    buffer.flags.writeable = False
    return TensorData(name, _dtype(value), shape, packed_strides(shape), buffer)


def _output(name: str, like: np.ndarray, sizes: Sequence[int] | None = None) -> TensorData:
    like = np.asarray(like)
    out = _tensor(name, np.zeros(like.shape, like.dtype), sizes)
    return TensorData(out.name, out.dtype, out.sizes, out.strides, np.zeros(out.buffer.size, out.buffer.dtype))


def _csv(values: Sequence[int]) -> str:
    return ",".join(str(int(v)) for v in values)


def _case(spec: Spec, test: Any, inputs: tuple[TensorData, ...], outputs: tuple[TensorData, ...],
          given: Mapping[str | None, Any]) -> Case:
    """The case: tensors and attributes in struct order (only those the spec has)."""
    order = [f.name for f in spec.fields]
    attrs = tuple((f.name, given[f.name]) for f in spec.attributes if f.name in given)
    x = inputs[0]
    return Case(id=f"{spec.operator}/{x.dtype.name}/{len(x.sizes)}d/onnx:{test.name}", operator=spec.operator,
                level=LEVEL, dtype=x.dtype, inputs=tuple(sorted(inputs, key=lambda t: order.index(t.name))),
                outputs=outputs, attributes=attrs, layout=Layout.PACKED, edges=("onnx",))


def _geometry(attrs: Mapping[str, Any], spatial: Sequence[int], kernel: Sequence[int],
              out: Sequence[int]) -> tuple[list[int], list[int], list[int], list[int], bool]:
    """(strides, dilations, start, end, grown) of a forward window: the end
    padding ``grown`` where ONNX's output (``ceil_mode``) has more positions
    than its own padding covers."""
    d = len(spatial)
    strides = [int(s) for s in attrs.get("strides", [1] * d)]
    dilations = [int(s) for s in attrs.get("dilations", [1] * d)]
    auto = attrs.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        total = [max(0, (-(-i // s) - 1) * s + (k - 1) * dl + 1 - i)
                 for i, s, k, dl in zip(spatial, strides, kernel, dilations)]
        small = [t // 2 for t in total]
        start = small if auto == "SAME_UPPER" else [t - h for t, h in zip(total, small)]
        end = [t - a for t, a in zip(total, start)]
    elif auto == "VALID":
        start, end = [0] * d, [0] * d
    else:
        pads = [int(p) for p in attrs.get("pads", [0] * (2 * d))]
        start, end = pads[:d], pads[d:]
    if min(start + end) < 0:
        raise Unmappable(f"negative pads {start + end}: DirectML's StartPadding/EndPadding are unsigned")
    needed = [max(e, (o - 1) * s + (k - 1) * dl + 1 - i - a)
              for e, o, s, k, dl, i, a in zip(end, out, strides, kernel, dilations, spatial, start)]
    return strides, dilations, start, needed, needed != end


def _window_attrs(sem: Window, strides: Sequence[int], dilations: Sequence[int], start: Sequence[int],
                  end: Sequence[int]) -> dict[str | None, Any]:
    return {sem.spatial_count: len(strides), sem.strides: _csv(strides), sem.dilations: _csv(dilations),
            sem.start_padding: _csv(start), sem.end_padding: _csv(end)}


# -- pooling ---------------------------------------------------------------------------------------
def pool(test: Any, spec: Spec) -> Case:
    """ONNX AveragePool / LpPool / MaxPool and their Global forms -> AVERAGE_POOLING1 / LP_POOLING1 / MAX_POOLING2."""
    sem = _sem(spec)
    attrs = dict(test.attributes)
    x = np.asarray(test.inputs[0])
    outs = [np.asarray(o) for o in test.outputs]
    glob = test.op_type.startswith("Global")
    if glob:
        attrs = {**attrs, "kernel_shape": list(x.shape[2:])}
    if x.ndim == 3:  # DirectML pools 2-D and 3-D: a height of 1
        x, outs = x[:, :, None], [o[:, :, None] for o in outs]
        attrs = {**attrs, **{k: [1, *attrs[k]] for k in ("kernel_shape", "strides", "dilations") if k in attrs},
                 **({"pads": [0, attrs["pads"][0], 0, attrs["pads"][1]]} if "pads" in attrs else {})}
    if int(attrs.get("storage_order", 0)):
        raise Unmappable("storage_order=1: ONNX's indices count column-major, DirectML's row-major")
    kernel = [int(k) for k in attrs["kernel_shape"]]
    strides, dilations, start, end, grown = _geometry(attrs, x.shape[2:], kernel, outs[0].shape[2:])
    given = _window_attrs(sem, strides, dilations, start, end)
    given[sem.window_size] = _csv(kernel)
    if sem.include_padding is not None:
        include = bool(int(attrs.get("count_include_pad", 0)))
        if include and grown:
            raise Unmappable("count_include_pad=1 with a window past the padded input (ceil_mode): ONNX divides "
                             "by the window's taps inside the padded input, DirectML's IncludePadding by the whole "
                             "window (the added end padding counts there)")
        given[sem.include_padding] = include
    if sem.power is not None:
        given[sem.power] = int(attrs.get("p", 2))
    outputs = [_output(sem.output, outs[0])]
    if len(outs) > 1 and sem.indices is not None:
        outputs.append(_output(sem.indices, outs[1].astype(np.uint64)))
    return _case(spec, test, (_tensor(sem.input, x),), tuple(outputs), given)


def pool_expected(test: Any, case: Case, spec: Spec) -> tuple[np.ndarray, ...]:
    """ONNX's outputs as the case's: the indices as UINT64 (never negative: the same values)."""
    return tuple(np.asarray(o).astype(np.uint64) if np.asarray(o).dtype == np.int64 else np.asarray(o)
                 for o in test.outputs)


# -- convolution -----------------------------------------------------------------------------------
def _operands(test: Any) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """A convolution's attributes, X, W, ONNX's output and the kernel's sizes (``kernel_shape`` or W's)."""
    attrs = dict(test.attributes)
    x, w, out = (np.asarray(a) for a in (test.inputs[0], test.inputs[1], test.outputs[0]))
    return attrs, x, w, out, [int(k) for k in attrs.get("kernel_shape", w.shape[2:])]


def _with_bias(sem: Window, test: Any, x: np.ndarray, w: np.ndarray) -> tuple[TensorData, ...]:
    """InputTensor, FilterTensor and, where ONNX gives B, BiasTensor {1, M, 1...}."""
    inputs = [_tensor(sem.input, x), _tensor(sem.filter or "", w)]
    bias = _input(test, 2)
    if bias is not None and sem.bias is not None:
        inputs.append(_tensor(sem.bias, bias, (1, bias.size) + (1,) * (x.ndim - 2)))
    return tuple(inputs)


def conv(test: Any, spec: Spec) -> Case:
    """ONNX Conv(X, W, B) -> CONVOLUTION, CROSS_CORRELATION, FORWARD."""
    sem = _sem(spec)
    attrs, x, w, out, kernel = _operands(test)
    strides, dilations, start, end, _ = _geometry(attrs, x.shape[2:], kernel, out.shape[2:])
    given = {**_window_attrs(sem, strides, dilations, start, end), sem.mode: CROSS_CORRELATION,
             sem.direction: FORWARD, sem.output_padding: _csv([0] * len(kernel)),
             sem.group_count: int(attrs.get("group", 1))}
    return _case(spec, test, _with_bias(sem, test, x, w), (_output(sem.output, out),), given)


def conv_transpose(test: Any, spec: Spec) -> Case:
    """ONNX ConvTranspose(X, W, B) -> CONVOLUTION, CROSS_CORRELATION, BACKWARD."""
    sem = _sem(spec)
    attrs, x, w, out, kernel = _operands(test)
    d = x.ndim - 2
    strides = [int(s) for s in attrs.get("strides", [1] * d)]
    dilations = [int(s) for s in attrs.get("dilations", [1] * d)]
    extra = [int(p) for p in attrs.get("output_padding", [0] * d)]
    full = [(i - 1) * s + (k - 1) * dl + 1 + p for i, s, k, dl, p in zip(x.shape[2:], strides, kernel, dilations, extra)]
    if "output_shape" in attrs or attrs.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
        total = [f - o for f, o in zip(full, out.shape[2:])]
        half = [t // 2 for t in total]
        start = half if attrs.get("auto_pad") == "SAME_UPPER" else [t - h for t, h in zip(total, half)]
    else:
        start = [int(p) for p in attrs.get("pads", [0] * (2 * d))][:d]
    # DirectML's (I - 1) S + span - start - end + OutputPadding = the output's size: the rest is end padding
    end = [max(0, f - p - a - o) for f, p, a, o in zip(full, extra, start, out.shape[2:])]
    padding = [o - (f - p - a - e) for o, f, p, a, e in zip(out.shape[2:], full, extra, start, end)]
    if min(start + padding) < 0:
        raise Unmappable(f"padding {start} / output padding {padding}: DirectML's are unsigned")
    given = {**_window_attrs(sem, strides, dilations, start, end), sem.mode: CROSS_CORRELATION,
             sem.direction: BACKWARD, sem.output_padding: _csv(padding), sem.group_count: int(attrs.get("group", 1))}
    return _case(spec, test, _with_bias(sem, test, x, w), (_output(sem.output, out),), given)


def conv_integer(test: Any, spec: Spec) -> Case:
    """ONNX ConvInteger(x, w, x_zero_point, w_zero_point) -> CONVOLUTION_INTEGER."""
    sem = _sem(spec)
    attrs, x, w, out, kernel = _operands(test)
    strides, dilations, start, end, _ = _geometry(attrs, x.shape[2:], kernel, out.shape[2:])
    given = {**_window_attrs(sem, strides, dilations, start, end), sem.group_count: int(attrs.get("group", 1))}
    ones = (1,) * x.ndim
    inputs = [_tensor(sem.input, x), _tensor(sem.filter or "", w)]
    for index, name in ((2, sem.input_zero_point), (3, sem.filter_zero_point)):
        zp = _input(test, index)
        if zp is None or name is None:
            continue
        if zp.size not in (1, w.shape[0]) or (index == 2 and zp.size != 1):
            raise Unmappable(f"{name} of {zp.size} values: neither per tensor nor per output channel")
        inputs.append(_tensor(name, zp, ones if zp.size == 1 else (1, zp.size) + ones[2:]))
    return _case(spec, test, tuple(inputs), (_output(sem.output, out),), given)


# -- unpooling and fold ----------------------------------------------------------------------------
def max_unpool(test: Any, spec: Spec) -> Case:
    """ONNX MaxUnpool(X, I, output_shape) -> MAX_UNPOOLING: I's int64 flat
    indices are the UINT64 IndicesTensor, the output's sizes ONNX's.  ONNX's
    indices count in the shape kernel_shape, strides and pads give, a block
    that ``output_shape`` places at the output's start: where that differs,
    each index is moved to the same coordinates of the output's flat order."""
    sem = _sem(spec)
    attrs = dict(test.attributes)
    x, indices, out = (np.asarray(a) for a in (test.inputs[0], test.inputs[1], test.outputs[0]))
    if x.ndim != 4:
        raise Unmappable(f"{x.ndim} dimensions: MAX_UNPOOLING takes 4-D tensors only")
    if indices.size and int(indices.min()) < 0:
        raise Unmappable(f"a negative index {int(indices.min())}: DirectML's IndicesTensor is unsigned")
    kernel = [int(k) for k in attrs["kernel_shape"]]
    strides = [int(s) for s in attrs.get("strides", [1] * len(kernel))]
    pads = [int(p) for p in attrs.get("pads", [0] * (2 * len(kernel)))]
    inferred = (*x.shape[:2], *((i - 1) * st - a - e + k for i, st, k, a, e
                                in zip(x.shape[2:], strides, kernel, pads[:len(kernel)], pads[len(kernel):])))
    if inferred != out.shape:
        if any(i > o for i, o in zip(inferred, out.shape)) or int(indices.max()) >= int(np.prod(inferred)):
            raise Unmappable(f"ONNX's indices count in sizes {list(inferred)}, which the output "
                             f"{list(out.shape)} does not hold")
        indices = np.ravel_multi_index(np.unravel_index(indices, inferred), out.shape)
    inputs = (_tensor(sem.input, x), _tensor(sem.input_indices or "", indices.astype(np.uint64)))
    return _case(spec, test, inputs, (_output(sem.output, out),), {})


def col2im(test: Any, spec: Spec) -> Case:
    """ONNX Col2Im(input, image_shape, block_shape) -> FOLD: block_shape is
    WindowSizes, the image's sizes the output's; strides, dilations and pads
    [begins, ends] as the other window operators'."""
    sem = _sem(spec)
    attrs = dict(test.attributes)
    x, out = np.asarray(test.inputs[0]), np.asarray(test.outputs[0])
    block = [int(k) for k in np.asarray(test.inputs[2]).reshape(-1)]
    d = len(block)
    strides = [int(s) for s in attrs.get("strides", [1] * d)]
    dilations = [int(s) for s in attrs.get("dilations", [1] * d)]
    pads = [int(p) for p in attrs.get("pads", [0] * (2 * d))]
    if min(pads) < 0:
        raise Unmappable(f"negative pads {pads}: DirectML's StartPadding/EndPadding are unsigned")
    counts = [(i + a + e - (k - 1) * dl - 1) // st + 1
              for i, a, e, k, dl, st in zip(out.shape[2:], pads[:d], pads[d:], block, dilations, strides)]
    if x.ndim != 3 or x.shape[2] != int(np.prod(counts)):
        raise Unmappable(f"{x.shape[-1]} blocks where the geometry gives {int(np.prod(counts))}: ONNX's input "
                         "is not the {N, C x prod(block_shape), L} FOLD folds")
    given = _window_attrs(sem, strides, dilations, pads[:d], pads[d:])
    given[sem.window_size] = _csv(block)
    return _case(spec, test, (_tensor(sem.input, x),), (_output(sem.output, out),), given)


_GEOMETRY = ("kernel_shape, strides, dilations, pads [begins, ends] (auto_pad SAME_* split as ONNX does) are "
             "WindowSize, Strides, Dilations, StartPadding, EndPadding; EndPadding grows where ceil_mode gives "
             "ONNX more outputs")

#: ONNX operator -> (the spec, its converter, the note, ONNX's outputs in the case's form or None: as stored),
#: for `importers.onnx_node.MAPPINGS`.
CONVERTERS: Mapping[str, tuple[str, Callable[[Any, Spec], Case], str,
                               Callable[[Any, Case, Spec], tuple[np.ndarray, ...]] | None]] = {
    "Conv": ("CONVOLUTION", conv, f"ONNX Conv is CONVOLUTION, CROSS_CORRELATION, FORWARD; {_GEOMETRY}; B is "
                                  "BiasTensor {1, M, 1...}", None),
    "ConvTranspose": ("CONVOLUTION", conv_transpose, "ONNX ConvTranspose is CONVOLUTION, CROSS_CORRELATION, "
                                                     "BACKWARD (the filter {C, M/G, ...} unflipped); the output's "
                                                     "sizes ONNX's, EndPadding and OutputPadding what gives them",
                      None),
    "ConvInteger": ("CONVOLUTION_INTEGER", conv_integer, "ONNX ConvInteger is CONVOLUTION_INTEGER; w_zero_point "
                                                         "[M] is per output channel {1, M, 1...}", None),
    **{op: ("AVERAGE_POOLING1", pool, f"ONNX {op} is AVERAGE_POOLING1 (count_include_pad is IncludePadding); "
                                      f"{_GEOMETRY}; a 1-D pool gets a height of 1", None)
       for op in ("AveragePool", "GlobalAveragePool")},
    **{op: ("LP_POOLING1", pool, f"ONNX {op} (p) is LP_POOLING1 (P); {_GEOMETRY}; a 1-D pool gets a height of 1",
            None) for op in ("LpPool", "GlobalLpPool")},
    **{op: ("MAX_POOLING2", pool, f"ONNX {op} is MAX_POOLING2; its int64 indices are the UINT64 "
                                  f"OutputIndicesTensor; {_GEOMETRY}; a 1-D pool gets a height of 1", pool_expected)
       for op in ("MaxPool", "GlobalMaxPool")},
    "MaxUnpool": ("MAX_UNPOOLING", max_unpool, "ONNX MaxUnpool is MAX_UNPOOLING; its int64 indices are the "
                                               "UINT64 IndicesTensor; the output's sizes are ONNX's; with "
                                               "output_shape, ONNX's indices (of the pooling geometry's sizes, "
                                               "placed at the output's start) move to the same coordinates there",
                  None),
    "Col2Im": ("FOLD", col2im, "ONNX Col2Im is FOLD; block_shape is WindowSizes, image_shape the output's "
                               "spatial sizes; strides, dilations, pads [begins, ends] are Strides, Dilations, "
                               "StartPadding, EndPadding", None),
}
