"""Cases: one operator call each, as plain frozen records.

DESIGN.md, "Cases".  A tensor is described the way DirectML binds it: a flat
buffer of elements plus sizes and strides in elements (``DML_BUFFER_TENSOR_DESC``),
so packed, padded, broadcast (stride 0) and in-place (two tensors, one buffer)
layouts are all the same record.  Arrays inside records are read-only.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dmlconform.spec.model import DataType, FeatureLevel, Spec, split_element


class Layout(enum.Enum):
    """How a case lays its tensors out in memory."""

    PACKED = "packed"        # strides of a C-contiguous array
    PADDED = "padded"        # strides larger than packed (gaps between rows)
    BROADCAST = "broadcast"  # an input with stride 0 on some dimensions
    IN_PLACE = "in_place"    # the output is bound to an input's buffer


def packed_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a C-contiguous tensor of ``sizes``."""
    return _packed_strides(tuple(sizes))


@functools.lru_cache(maxsize=1024)
def _packed_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def buffer_elements(sizes: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements a buffer needs to hold every addressed element (as DirectML's
    DMLCalcBufferTensorSize, in elements)."""
    return _buffer_elements(tuple(sizes), tuple(strides))


@functools.lru_cache(maxsize=1024)
def _buffer_elements(sizes: tuple[int, ...], strides: tuple[int, ...]) -> int:
    if any(s == 0 for s in sizes):
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(sizes, strides))


@dataclass(frozen=True, slots=True, eq=False)
class TensorData:
    """One bound tensor: ``buffer`` (1-D, read-only) viewed through ``sizes``
    and element ``strides``.  Outputs carry an empty buffer of the right length
    (what a backend writes into)."""

    name: str
    dtype: DataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    buffer: np.ndarray

    def view(self, buffer: np.ndarray | None = None) -> np.ndarray:
        """The logical tensor (shape ``sizes``) over ``buffer`` (default: own)."""
        buf = self.buffer if buffer is None else buffer
        item = buf.dtype.itemsize
        return np.lib.stride_tricks.as_strided(buf, shape=self.sizes, strides=tuple(s * item for s in self.strides),
                                               writeable=False)

    @property
    def dimension_count(self) -> int:
        return len(self.sizes)


@dataclass(frozen=True, slots=True, eq=False)
class Case:
    """One operator call.

    ``id`` is stable and readable, e.g.
    ``ACTIVATION_SHRINK/FLOAT16/3d/x=Threshold+1ulp/Threshold=0.5,Bias=0``.
    ``level`` is the feature level whose table the case exercises;
    ``expect_supported`` False marks a negative case (outside that table: the
    backend must reject it cleanly or compute it correctly).  ``aliases`` maps
    an output name to the input whose buffer it is bound to (in-place).
    ``edges`` names the edge-value classes and branches the inputs cover, for
    the coverage summary.  ``out_of_domain`` names the attributes whose value
    lies outside the range the doc allows (a negative case, with
    ``expect_supported`` False: a clean rejection PASSes, and so does the
    formula computed correctly; issue #22 item 4)."""

    id: str
    operator: str
    level: FeatureLevel
    dtype: DataType
    inputs: tuple[TensorData, ...]
    outputs: tuple[TensorData, ...]
    attributes: tuple[tuple[str, float | int | bool | str], ...] = ()
    layout: Layout = Layout.PACKED
    aliases: tuple[tuple[str, str], ...] = ()
    expect_supported: bool = True
    edges: tuple[str, ...] = ()
    seed: int = 0
    out_of_domain: tuple[str, ...] = ()

    @property
    def group(self) -> str:
        """Operator x data type x feature level: the unit of a summary row and
        of a JUnit test case."""
        return f"{self.operator}/{self.dtype.name}/{self.level.short}"

    @property
    def dimension_count(self) -> int:
        return self.outputs[0].dimension_count if self.outputs else 0

    @property
    def elements(self) -> int:
        """Elements in all of the case's buffers: its size for chunking,
        timing and memory."""
        return sum(int(t.buffer.size) for t in (*self.inputs, *self.outputs))

    def input(self, name: str) -> TensorData:
        return next(t for t in self.inputs if t.name == name)

    def attribute_map(self) -> dict[str, float | int | bool | str]:
        return dict(self.attributes)


@dataclass(frozen=True, slots=True)
class Planned:
    """A case of a run that is not made yet: a ``--large`` one, tens of
    megabytes of values that take seconds to draw (issue #33).  The run
    holds this instead, and the runner makes the case where and when it
    runs (`families.make`: in the worker that runs it, from the seed and
    the id as generation would), so that a run holds the values of the cases
    in flight only.  Its facts are those known before the case is made
    (generation's ``keep`` sees the id and the data type); the rest keep
    `Case`'s defaults (``outputs`` none, so a result of a case that could not
    be made says 0 dimensions)."""

    id: str
    operator: str
    level: FeatureLevel
    dtype: DataType
    seed: int
    outputs: tuple[TensorData, ...] = ()
    layout: Layout = Layout.PACKED
    expect_supported: bool = True
    edges: tuple[str, ...] = ()


def array_tensors(tensors: Sequence[TensorData], field: str) -> tuple[TensorData, ...]:
    """The tensors of the tensor-array ``field`` among ``tensors``
    (``InputTensors[0]``, ``InputTensors[1]``, ...: `spec.model.element_name`),
    in index order: the order of DirectML's binding table and of the array."""
    indexed = [(index, t) for t in tensors if (p := split_element(t.name))[0] == field and (index := p[1]) is not None]
    return tuple(t for _, t in sorted(indexed, key=lambda pair: pair[0]))


# -- views: a tensor's logical elements over a buffer -------------------------------------

def flat_view(tensor: TensorData, buffer: np.ndarray | None, sizes: tuple[int, ...]) -> np.ndarray:
    """``tensor``'s logical elements over ``buffer`` (default its own),
    broadcast to ``sizes`` and flat, read-only (a copy only when it must be).
    A tensor that `is_whole` is its buffer as it is, without a strided view
    (most tensors of a suite; the runner and the cpu reference join a
    batch's cases this way); one of ``sizes`` is viewed in one step (the
    ndarray constructor is twice as fast as ``as_strided``), others are
    broadcast."""
    buf = tensor.buffer if buffer is None else buffer
    if is_whole(tensor, buf, sizes):
        if not buf.flags.writeable:
            return buf
        flat = buf.view()
        flat.setflags(write=False)  # (``flags.writeable = False`` makes a flags object first: slower)
        return flat
    if tensor.sizes == sizes:  # strided (padded, stride 0): `TensorData.view`, built by the ndarray constructor
        item = buf.itemsize
        view = np.ndarray(sizes, buf.dtype, buf, 0, tuple(s * item for s in tensor.strides))
        view.setflags(write=False)
        return view.reshape(-1)
    return np.broadcast_to(tensor.view(buf), sizes).reshape(-1)


def joined(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Flat arrays end to end: the one itself, or several concatenated."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def is_whole(tensor: TensorData, buffer: np.ndarray, sizes: tuple[int, ...]) -> bool:
    """Whether ``tensor`` has ``sizes`` and is packed over the whole of
    ``buffer`` (1-D, contiguous, exactly its elements): its logical elements
    in order are then the buffer's, element for element."""
    return (tensor.sizes == sizes and buffer.ndim == 1 and buffer.size == math.prod(sizes)
            and buffer.flags.c_contiguous and tensor.strides == packed_strides(sizes))


def writable_view(tensor: TensorData, buffer: np.ndarray) -> np.ndarray:
    """``tensor``'s logical shape over ``buffer``, writable."""
    item = buffer.dtype.itemsize
    return np.lib.stride_tricks.as_strided(buffer, shape=tensor.sizes,
                                           strides=tuple(s * item for s in tensor.strides), writeable=True)


# -- what a reference and a planted fault do with a case's buffers ---------------------------

#: A case's buffers by tensor name (what a backend computes into).
Buffers = Mapping[str, np.ndarray]
#: A family's CPU reference: ``compute(spec, case, buffers)`` -> every output, as new arrays.
Reference = Callable[["Spec", "Case", Buffers], dict[str, np.ndarray]]
#: A planted fault: rewrites ``buffers`` (a case's outputs) after the reference computed them.
Fault = Callable[["Spec", "Case", Buffers], None]
