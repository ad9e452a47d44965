"""Cases: one operator call each, as plain frozen records.

DESIGN.md, "Cases".  A tensor is described the way DirectML binds it: a flat
buffer of elements plus sizes and strides in elements (``DML_BUFFER_TENSOR_DESC``),
so packed, padded, broadcast (stride 0) and in-place (two tensors, one buffer)
layouts are all the same record.  Arrays inside records are read-only.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

import numpy as np

from dmlconform.compare import ml_dtypes_module
from dmlconform.spec.model import DataType, FeatureLevel


class Layout(enum.Enum):
    """How a case lays its tensors out in memory."""

    PACKED = "packed"        # strides of a C-contiguous array
    PADDED = "padded"        # strides larger than packed (gaps between rows)
    BROADCAST = "broadcast"  # an input with stride 0 on some dimensions
    IN_PLACE = "in_place"    # the output is bound to an input's buffer


def numpy_dtype(dtype: DataType) -> np.dtype:
    """The numpy dtype a tensor of ``dtype`` is held in (ml_dtypes for 4-bit)."""
    if dtype in (DataType.INT4, DataType.UINT4):
        types = ml_dtypes_module()  # imported for these two alone
        return np.dtype(types.int4 if dtype is DataType.INT4 else types.uint4)
    return np.dtype(dtype.name.lower())


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

    def input(self, name: str) -> TensorData:
        return next(t for t in self.inputs if t.name == name)

    def attribute_map(self) -> dict[str, float | int | bool | str]:
        return dict(self.attributes)
