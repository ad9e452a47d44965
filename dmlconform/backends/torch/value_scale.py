"""VALUE_SCALE_2D on torch: ``x * Scale + Bias.view(1, C, 1, 1)``.

Issue #24 item 5.  The plain torch idiom (torchvision's normalisation is
the same broadcast), Bias a tensor of the input's type (FLOAT16 tensors
get Scale and Bias rounded to FLOAT16: the ``float16-working-type``
reading), the product and the sum each rounded (the ``separate`` reading).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlconform.families.value_scale.cases import parse_bias

NOTE = "x * Scale + Bias.view(1, C, 1, 1), Bias in the tensor's type"


def value_scale(t: Any, xs: list[Any], a: Any) -> Any:
    """Scale times the input plus the Bias of each element's channel (dimension 1)."""
    x = xs[0]
    a.raw("ChannelCount")  # Bias's count, which the Bias text already gives
    bias = t.tensor(parse_bias(a.raw("Bias")), dtype=t.float32, device=x.device).to(x.dtype)  # CUDA: on x's device
    shape = [1] * x.dim()
    shape[1] = bias.numel()
    return x * a.f32("Scale") + bias.view(shape)


#: Spec operator -> the keyword arguments of its `TorchOp` (merged into `backends.torch.backend.TORCH_OPS`).
TORCH_OPS: Mapping[str, dict[str, Any]] = {"VALUE_SCALE_2D": {"fn": value_scale, "note": NOTE}}
