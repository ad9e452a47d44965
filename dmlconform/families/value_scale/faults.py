"""Planted faults of VALUE_SCALE_2D for the ``faulty`` backend (issue #24
item 7): each recomputes the output the way a plausible bug would, after
the reference computed it.  `FAULTS` names them;
tests/families/value_scale/ checks that each is caught."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.value_scale.cases import Operands, operands
from dmlconform.families.value_scale.semantics import ValueScale
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype


def _write(spec: m.Spec, case: Case, buffers: Buffers, scale: float | None, nhwc: bool) -> None:
    """``scale * x + bias`` (``scale`` None: the case's) written into the
    output, the bias of each element that of its channel, or where ``nhwc``
    that of ``flat index % ChannelCount`` (the channel of an NHWC layout:
    the innermost dimension)."""
    sem = spec.semantics
    if not isinstance(sem, ValueScale):
        return
    ops: Operands = operands(sem, case)
    x = case.input(sem.input).view(buffers[sem.input]).astype(np.float32)
    shape = [1] * x.ndim
    shape[ops.axis] = ops.bias.size
    bias = ops.bias[np.arange(x.size) % ops.bias.size].reshape(x.shape) if nhwc else ops.bias.reshape(shape)
    with np.errstate(all="ignore"):
        y = x * np.float32(ops.scale if scale is None else scale) + bias
        out = case.outputs[0]
        buf = buffers[out.name]
        view = writable_view(out, buf)
        view[...] = y.astype(numpy_dtype(out.dtype))


def bias_wrong_axis(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Bias indexed as if the channel were the innermost dimension (NHWC): element i gets Bias[i % ChannelCount]."""
    _write(spec, case, buffers, None, nhwc=True)


def scale_ignored(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Scale left out: Input + Bias."""
    _write(spec, case, buffers, 1.0, nhwc=False)


#: The family's planted faults by name (`families.Family.faults`; the ``faulty`` backend plants them).
FAULTS: Mapping[str, Fault] = {
    "value-scale-bias-wrong-axis": bias_wrong_axis,
    "value-scale-scale-ignored": scale_ignored,
}
