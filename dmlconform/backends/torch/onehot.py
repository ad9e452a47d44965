"""ONE_HOT as torch calls (issue #34 item 5), merged into
`backends.torch.index_map.TORCH_OPS`.

``torch.nn.functional.one_hot`` over the indices squeezed on Axis, moved to
Axis, then ``torch.where`` between OnValue and OffValue (the values
tensor's C-order elements 1 and 0).  one_hot raises on a negative index
and on one past the depth, where the page counts the first from the end
and leaves the second's sequence all OffValue: the adapter adds the depth
to a negative index and masks the sequences whose index lies outside
[-depth, depth) before calling it, as a DirectML implementation over torch
would (torch is then not what is tested there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.mapping import Attrs
from dmlconform.families.index_map.onehot import OFF, ON


def _one_hot(t: Any, xs: list[Any], a: Attrs) -> Any:
    idx, values = xs
    axis = int(a.raw("Axis") or 0)
    depth = a.output_sizes[0][axis]
    wide = idx.squeeze(axis).to(t.float64)  # every value compared exactly enough: |index| < 2^53 or far outside
    wide = t.where(wide < 0, wide + depth, wide)
    inside = (wide >= 0) & (wide < depth)
    hot = t.nn.functional.one_hot(t.where(inside, wide, 0).to(t.int64), depth).to(t.bool) & inside.unsqueeze(-1)
    flat = values.reshape(-1)
    return t.where(hot.movedim(-1, axis), flat[ON], flat[OFF])


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.index_map.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "ONE_HOT": {"fn": _one_hot, "inputs": ("IndicesTensor", "ValuesTensor"),
                "note": "one_hot and where; a negative index made positive and one outside the depth masked first"},
}
