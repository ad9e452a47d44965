"""NONZERO_COORDINATES as torch calls (issue #34 item 5), merged into
`backends.torch.index_map.TORCH_OPS`: ``torch.nonzero`` (rows in C order,
-0 zero, as the page), its last N columns written into rows of zeros, the
count its number of rows.  Unsigned inputs, which some of its kernels
lack, through a signed view of their bits (zero bits are zero either way).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.mapping import Attrs

_SIGNED_VIEW = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}


def _nonzero(t: Any, xs: list[Any], a: Attrs) -> Any:
    (x,) = xs
    signed = _SIGNED_VIEW.get(str(x.dtype).removeprefix("torch."))
    found = t.nonzero(x.view(getattr(t, signed)) if signed else x)
    count_sizes, coords_sizes = a.output_sizes
    n = coords_sizes[-1]
    rows = t.zeros((x.numel(), n), dtype=t.int64, device=x.device)
    rows[:found.shape[0]] = found[:, x.dim() - n:]
    return t.full(count_sizes, found.shape[0], dtype=t.int64, device=x.device), rows.reshape(coords_sizes)


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.index_map.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "NONZERO_COORDINATES": {"fn": _nonzero, "outputs": 2, "note": "torch.nonzero, its last N columns"},
}
