"""What the onnxruntime families whose nodes need their case's shapes share
(issue #24 follow-up: one mechanism for softmax, reduction, sequence and
contraction).

The element-wise mappings of `backends.onnxruntime.backend` flatten every
tensor to 1-D and batch cases by session key.  A family whose node needs
shapes, axes or several outputs instead names a ``runner`` in its
`OnnxMapping`: the backend resolves the case as for any mapping (`plan`:
outputs, integer rule, attributes read, the mapping's ``check``) and then
hands it to the runner with a `Sessions`, its view of the backend's one
session cache.  This module holds that view and the write-back every runner
does; it imports nothing of the backend, which imports the families.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.cases.model import TensorData, writable_view


@dataclass(frozen=True, slots=True)
class Sessions:
    """The backend's session cache as a runner sees it: ``get(key, make,
    op_type)`` is the session cached under ``key`` (built from the ONNX
    model ``make()`` returns on a miss; a build error is cached and raised
    as NotSupportedError naming ``op_type``, the node the runner builds,
    which ``key`` must determine), and ``runtime`` names onnxruntime and
    the provider for the runner's own messages."""

    get: Callable[[tuple[Any, ...], Callable[[], Any], str], Any]
    runtime: str


def write_output(out: TensorData, buffers: Mapping[str, np.ndarray], y: np.ndarray) -> None:
    """The result ``y`` (any layout of ``out``'s element count) written
    through ``out``'s sizes and strides into its buffer, in the buffer's
    type; only once the run is over, as an output may alias an input."""
    buf = buffers[out.name]
    writable_view(out, buf)[...] = y.reshape(out.sizes).astype(buf.dtype, copy=False)
