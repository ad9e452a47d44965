"""JOIN and SPLIT as torch calls (issue #34 item 5), merged into
`backends.torch.index_map.TORCH_OPS`: ``torch.cat`` of the inputs in the
array's order along Axis; ``torch.split`` of the input at the outputs'
sizes on Axis (read from the outputs the case binds), a list in the
array's order.  The array's tensors come as a list (`TorchBackend._run`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.mapping import Attrs


def _join(t: Any, xs: list[Any], a: Attrs) -> Any:
    (parts,) = xs
    a.raw("InputCount")
    return t.cat(parts, dim=int(a.raw("Axis") or 0))


def _split(t: Any, xs: list[Any], a: Attrs) -> Any:
    (x,) = xs
    axis = int(a.raw("Axis") or 0)
    lengths = [sizes[axis] for sizes in a.output_sizes]  # the outputs in the case's order: the array's
    a.raw("OutputCount")
    return list(t.split(x, lengths, dim=axis))


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.index_map.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "JOIN": {"fn": _join, "inputs": ("InputTensors",), "note": "torch.cat of the inputs in order along Axis"},
    "SPLIT": {"fn": _split, "note": "torch.split at the outputs' sizes on Axis"},
}
