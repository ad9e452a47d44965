"""How one spec operator becomes one ONNX node (`OnnxMapping`): what every
family's adapter of the onnxruntime backend builds its table from
(`backends.onnxruntime.<family>.MAPPINGS`), without the backend itself."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.backends.mapping import Attrs
from dmlconform.backends.onnxruntime.shaped import Sessions
from dmlconform.cases.model import Case
from dmlconform.spec.model import Spec

#: The opset every model uses unless its `Mapping` needs a newer one; old
#: enough for the onnxruntime builds of the last few years.
BASE_OPSET = 18


#: HardSigmoid at its newest version (the one the onnx node tests use).  At
#: `BASE_OPSET` onnxruntime has no float16 HardSigmoid kernel and expands
#: ONNX's function body (Mul, Add, Min, Max, with casts) at session creation,
#: about 0.4 ms a node; at 22 it casts around its own float kernel, with the
#: same bits for every float16 input (a test checks it) at a quarter of the
#: session cost.  float64 (outside DirectML's tables) has no kernel at 22 and
#: is NOT_SUPPORTED.  Not for the rest: at 22 Softsign float16 differs from
#: its function body on 6 finite inputs, PRelu INT32 loses its kernel, Selu
#: float16 warns and IsInf float16 passes, each a result change of its own.
KERNEL_OPSET = 22


@dataclass(frozen=True, slots=True)
class OnnxMapping:
    """How one spec operator becomes one ONNX node.

    ``inputs``: the spec's input tensors in the node's input order;
    ``attrs``: case attributes -> (ONNX attributes, scalar operands appended
    as extra 0-d inputs in the tensor's type), raising NotSupportedError
    where ONNX cannot express the case; ``bool_inputs``: ONNX takes bool
    where the doc takes numbers (``x != 0``, exact); ``note``: how ONNX
    differs from the doc (shown in docs/backends.md).

    A family whose node needs the case's shapes (softmax, reduction,
    sequence, contraction: `backends.onnxruntime.shaped`) names a ``runner``,
    which runs each case itself with the backend's `Sessions`, and a
    ``check`` raising NotSupportedError for a case no node expresses;
    ``outputs`` is how many outputs its node gives (TopK: 2)."""

    op_type: str
    inputs: tuple[str, ...] = ("InputTensor",)
    attrs: Callable[[Attrs], tuple[dict[str, Any], tuple[float | int, ...]]] | None = None
    opset: int = BASE_OPSET
    bool_inputs: tuple[str, ...] = ()
    integer: bool = True          # False: integer tensors are NOT_SUPPORTED (ONNX semantics differ)
    divisor: str | None = None    # integer input whose zeros ONNX leaves undefined (a crash)
    note: str = ""
    runner: Callable[[Spec, Case, Mapping[str, np.ndarray], Sessions], None] | None = None
    check: Callable[[Spec, Case], object] | None = None
    outputs: int = 1


def every_attribute(a: Attrs) -> tuple[dict[str, Any], tuple]:
    """A runner's attributes: every one is read (by its ``check``), none is passed to a flat node."""
    for name in list(a.values):
        a.raw(name)
    return {}, ()
