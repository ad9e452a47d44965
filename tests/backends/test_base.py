"""backends.base helpers: `flat_view` is the broadcast, flattened logical
tensor whatever the layout, without copying a whole buffer; `run_batch_of`
is the one test of "has run_batch"."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from dmlconform.backends.base import run_batch_of
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import TensorData, flat_view, is_whole, packed_strides
from dmlconform.spec.model import DataType

LAYOUTS = {  # name: (sizes, strides, buffer elements)
    "packed": ((2, 3, 4), (12, 4, 1), 24),
    "packed, longer buffer": ((2, 3, 4), (12, 4, 1), 30),
    "padded": ((2, 3, 4), (20, 6, 1), 36),
    "stride 0": ((2, 3, 4), (0, 4, 1), 12),
    "scalar broadcast": ((1, 1, 1), (1, 1, 1), 1),
}


def _reference(t: TensorData, buffer: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(t.view(buffer), sizes).reshape(-1)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.uint64])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("writable", [False, True])
def test_flat_view_is_the_broadcast_logical_tensor(layout: str, dtype: type, writable: bool) -> None:
    sizes, strides, n = LAYOUTS[layout]
    buffer = np.arange(n).astype(dtype)
    buffer.flags.writeable = writable
    t = TensorData("X", DataType.FLOAT32, sizes, strides, buffer)
    target = (2, 3, 4)
    flat = flat_view(t, buffer, target)
    expected = _reference(t, buffer, target)
    assert flat.dtype == expected.dtype and flat.tobytes() == expected.tobytes(), layout
    assert flat.shape == (24,)
    if np.shares_memory(flat, buffer):  # a view of the buffer is never a way to write into it
        assert not flat.flags.writeable
    assert is_whole(t, buffer, target) == (layout == "packed")


def test_flat_view_defaults_to_the_tensors_own_buffer() -> None:
    buffer = np.arange(6, dtype=np.float32)
    buffer.flags.writeable = False
    t = TensorData("X", DataType.FLOAT32, (2, 3), packed_strides((2, 3)), buffer)
    assert flat_view(t, None, (2, 3)) is buffer


def test_run_batch_of_is_the_method_or_none() -> None:
    """Absent and set to None both mean "no run_batch" (the runner and the
    workers' watcher both ask here, so they agree)."""
    class OneByOne(CpuBackend):
        run_batch = None  # type: ignore[assignment]

    cpu = CpuBackend()
    assert run_batch_of(cpu) == cpu.run_batch
    assert run_batch_of(OneByOne()) is None
    assert run_batch_of(object()) is None  # type: ignore[arg-type]
