"""Planted faults of the window family for the ``faulty`` backend (issue #35
item 7): each recomputes a convolution's output the way a plausible bug
would, after the reference computed it.  `FAULTS` names them;
tests/test_mutants.py checks that each is caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.contraction.faults import to_tf32
from dmlconform.families.window.activation import activation
from dmlconform.families.window.cases import Geometry, Operands, geometry, integer_operands, operands, power, window
from dmlconform.families.window.fold_faults import FAULTS as FOLD_FAULTS
from dmlconform.families.window.reference import average, convolution, integer_convolution, lp_norm, maximum
from dmlconform.families.window.semantics import Window
from dmlconform.families.window.unpool_faults import UNPOOL_FAULTS
from dmlconform.spec import model as m

#: A fault's change: the case's operands and geometry -> the ones the bug computes with (None: no change here).
Change = Callable[[Operands, Geometry], "tuple[Operands, Geometry] | None"]


def _planted(change: Change, work: np.dtype | None = None, dtype: m.DataType | None = None) -> Fault:
    """A fault that recomputes the output with ``change`` applied (in ``work``
    where given, only on ``dtype`` cases where given)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Window) or sem.operation != "convolution" or (dtype is not None and case.dtype is not dtype):
            return
        changed = change(operands(sem, case, dict(buffers)), geometry(sem, case))
        if changed is None:
            return
        out = case.outputs[0]
        writable_view(out, buffers[out.name])[...] = convolution(*changed, out.sizes, out.dtype, work,
                                                                 fused=activation(sem, case))
    return fault


def _activation_fault(*, skipped: bool) -> Fault:
    """CONVOLUTION's FusedActivation never applied (``skipped``), or applied before the bias is added."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        fused = activation(sem, case) if isinstance(sem, Window) and sem.operation == "convolution" else None
        if fused is None or not isinstance(sem, Window):
            return
        out = case.outputs[0]
        writable_view(out, buffers[out.name])[...] = convolution(
            operands(sem, case, dict(buffers)), geometry(sem, case), out.sizes, out.dtype,
            fused=None if skipped else fused, activation_first=not skipped)
    return fault


def _no_flip(ops: Operands, geo: Geometry) -> tuple[Operands, Geometry] | None:
    """CONVOLUTION mode ignored: the filter never reversed."""
    return (ops, replace(geo, flipped=False)) if geo.flipped else None


def _flip_cross(ops: Operands, geo: Geometry) -> tuple[Operands, Geometry] | None:
    """The mode read backwards: CROSS_CORRELATION reverses the filter."""
    return None if geo.flipped else (ops, replace(geo, flipped=True))


def _pads_swapped(ops: Operands, geo: Geometry) -> tuple[Operands, Geometry] | None:
    """StartPadding and EndPadding exchanged (the output's sizes kept)."""
    return None if geo.start == geo.end else (ops, replace(geo, start=geo.end, end=geo.start))


def _dilation_ignored(ops: Operands, geo: Geometry) -> tuple[Operands, Geometry] | None:
    """Dilations read as 1."""
    ones = (1,) * len(geo.dilations)
    return None if geo.dilations == ones else (ops, replace(geo, dilations=ones))


def _groups_mixed(ops: Operands, geo: Geometry) -> tuple[Operands, Geometry] | None:
    """Each group's filters applied to the next group's channels (the input's groups rotated)."""
    if geo.groups == 1:
        return None
    width = ops.x.shape[1] // geo.groups
    return replace(ops, x=np.roll(ops.x, width, axis=1)), geo


def _output_padding_ignored(ops: Operands, geo: Geometry) -> tuple[Operands, Geometry] | None:
    """OutputPadding ignored: the output one stride short, its tail never written (NaN here: whatever
    the buffer held; zeros would be a reading, ``output-padding:zero-after-bias``)."""
    return None if not geo.transposed or not any(geo.output_padding) else (ops, geo)


def _dropped_border_tap(ops: Operands, geo: Geometry) -> tuple[Operands, Geometry] | None:
    """The first input element along the innermost dimension never read (a loop starting at 1)."""
    x = ops.x.copy()
    x[..., 0] = 0
    return replace(ops, x=x), geo


def _tf32(ops: Operands, geo: Geometry) -> tuple[Operands, Geometry] | None:
    """FLOAT32 input and filter rounded to TF32 before the products (cuDNN with
    ``torch.backends.cudnn.allow_tf32``, on by default), float32 sums, while claiming float32."""
    return replace(ops, x=to_tf32(ops.x), w=to_tf32(ops.w)), geo


def _divisor_flipped(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """AVERAGE_POOLING's IncludePadding read backwards: the padding counted in the divisor where it must not be, and
    left out where it must be counted."""
    sem = spec.semantics
    if not isinstance(sem, Window) or sem.operation != "average_pooling":
        return
    geo = geometry(sem, case)
    out = case.outputs[0]
    x = case.input(sem.input).view(buffers[sem.input])
    writable_view(out, buffers[out.name])[...] = average(x, window(sem, case),
                                                         replace(geo, include_padding=not geo.include_padding),
                                                         out.sizes, out.dtype)


def _lp_fault(**change: object) -> Fault:
    """An Lp pooling fault: the reference's `lp_norm` with ``change`` (``p``: that P, whatever the case's)."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Window) or sem.operation != "lp_pooling":
            return
        out, given = case.outputs[0], dict(change)
        p = int(given.pop("p", power(sem, case)))  # type: ignore[call-overload]
        x = case.input(sem.input).view(buffers[sem.input])
        writable_view(out, buffers[out.name])[...] = lp_norm(x, window(sem, case), geometry(sem, case), out.sizes,
                                                             out.dtype, p, **given)  # type: ignore[arg-type]
    return fault


def _integer_fault(**change: bool) -> Fault:
    """A CONVOLUTION_INTEGER fault: the reference's `integer_convolution` with ``change``."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Window) or sem.operation != "convolution_integer":
            return
        out = case.outputs[0]
        y = integer_convolution(integer_operands(sem, case, dict(buffers)), geometry(sem, case), out.sizes, **change)
        writable_view(out, buffers[out.name])[...] = y
    return fault


def _max_fault(**change: object) -> Fault:
    """A max pooling fault: the reference's `maximum` with ``change``."""
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if not isinstance(sem, Window) or sem.operation != "max_pooling":
            return
        x = case.input(sem.input).view(buffers[sem.input])
        value, index = maximum(x, window(sem, case), geometry(sem, case), case.outputs[0].sizes,
                               **change)  # type: ignore[arg-type]
        for out, result in zip(case.outputs, (value, index)):
            writable_view(out, buffers[out.name])[...] = result.astype(buffers[out.name].dtype)
    return fault


def _buffer_index(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """MAX_POOLING1/2's indices as offsets into the input's strided buffer, not the logical input."""
    sem = spec.semantics
    if not isinstance(sem, Window) or sem.operation != "max_pooling" or len(case.outputs) < 2:
        return
    x = case.input(sem.input)
    _, index = maximum(x.view(buffers[sem.input]), window(sem, case), geometry(sem, case), case.outputs[0].sizes)
    offsets = np.dot(np.stack(np.unravel_index(index, x.sizes), axis=-1), np.array(x.strides, np.int64))
    out = case.outputs[1]
    writable_view(out, buffers[out.name])[...] = offsets.astype(buffers[out.name].dtype)


def _outpad_write(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """`_output_padding_ignored`: the reference's output, its OutputPadding elements never written (NaN)."""
    sem = spec.semantics
    if not isinstance(sem, Window) or sem.operation != "convolution":
        return
    geo = geometry(sem, case)
    if _output_padding_ignored(operands(sem, case, dict(buffers)), geo) is None:
        return
    view = writable_view(case.outputs[0], buffers[case.outputs[0].name])
    for j, p in enumerate(geo.output_padding):
        if p:
            index = [slice(None)] * view.ndim
            index[2 + j] = slice(view.shape[2 + j] - p, None)
            view[tuple(index)] = np.nan


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "conv-no-flip": _planted(_no_flip),
    "conv-flip-in-cross-correlation": _planted(_flip_cross),
    "conv-pads-swapped": _planted(_pads_swapped),
    "conv-dilation-ignored": _planted(_dilation_ignored),
    "conv-groups-mixed": _planted(_groups_mixed),
    "conv-output-padding-ignored": _outpad_write,
    "conv-dropped-border-tap": _planted(_dropped_border_tap),
    "conv-float16-accumulation": _planted(lambda ops, geo: (ops, geo), np.dtype(np.float16), m.DataType.FLOAT16),
    "conv-tf32": _planted(_tf32, dtype=m.DataType.FLOAT32),
    "avgpool-divisor-padding-flipped": _divisor_flipped,
    "maxpool-last-tie": _max_fault(last_tie=True),
    "maxpool-padding-as-zero": _max_fault(padding=0.0),
    "maxpool-buffer-index": _buffer_index,
    "convint-input-zero-point-ignored": _integer_fault(ignore_input_zero=True),
    "convint-filter-zero-point-per-tensor": _integer_fault(filter_zero_of_first=True),
    "lp-p-as-two": _lp_fault(p=2),
    "lp-root-dropped": _lp_fault(root=False),
    **UNPOOL_FAULTS,
    "conv-activation-skipped": _activation_fault(skipped=True),
    "conv-activation-before-bias": _activation_fault(skipped=False),
    **FOLD_FAULTS,
}
