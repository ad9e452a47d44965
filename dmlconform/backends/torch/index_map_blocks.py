"""The index-map family's depth/space moves as torch calls (issue #34 item
5), merged into `backends.torch.index_map.TORCH_OPS`.

* CRD order: ``pixel_shuffle`` (DEPTH_TO_SPACE1) and ``pixel_unshuffle``
  (SPACE_TO_DEPTH1), whose channels are (Channels, BlockHeight,
  BlockWidth), the page's CRD.
* DCR order (DEPTH_TO_SPACE, SPACE_TO_DEPTH, and the *1's DCR): torch has
  no function; ``reshape`` and ``permute`` as ONNX's DepthToSpace and
  SpaceToDepth define it (channels (BlockHeight, BlockWidth, Channels)).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.backends.mapping import Attrs
from dmlconform.families.index_map.blocks import ORDER_PREFIX, ORDERS


def _order(a: Attrs) -> str:
    given = a.raw("Order")
    return "DCR" if given is None else ORDERS[str(given).removeprefix(ORDER_PREFIX)]


def _to_space(t: Any, xs: list[Any], a: Attrs) -> Any:
    (x,) = xs
    b = int(a.raw("BlockSize") or 1)
    if _order(a) == "CRD":
        return t.nn.functional.pixel_shuffle(x, b)
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def _to_depth(t: Any, xs: list[Any], a: Attrs) -> Any:
    (x,) = xs
    b = int(a.raw("BlockSize") or 1)
    if _order(a) == "CRD":
        return t.nn.functional.pixel_unshuffle(x, b)
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.index_map.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "DEPTH_TO_SPACE": {"fn": _to_space, "note": "reshape and permute (DCR: torch has no function)"},
    "DEPTH_TO_SPACE1": {"fn": _to_space, "note": "pixel_shuffle (CRD); reshape and permute (DCR)"},
    "SPACE_TO_DEPTH": {"fn": _to_depth, "note": "reshape and permute (DCR: torch has no function)"},
    "SPACE_TO_DEPTH1": {"fn": _to_depth, "note": "pixel_unshuffle (CRD); reshape and permute (DCR)"},
}
