"""BATCH_NORMALIZATION_TRAINING on torch (issue #36 item 5):
``torch.nn.functional.batch_norm(training=True)`` over the input viewed as
(N, C, rest), with running buffers and ``momentum`` 1, so that they end as
the batch's mean and its *unbiased* variance (torch keeps N - 1 there: the
``sample`` reading of ``variance-output``; the output divides by the
population variance, the ``population`` reading of ``variance``).  FusedAdd
is added after it and FusedActivation applied after that (the unfused pair,
`backends.torch.contraction`'s activations).  Statistics over any other set
of dimensions than every one but dimension 1, and groups of one element
(torch refuses them: "Expected more than 1 value per channel when
training"), are NOT_SUPPORTED with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.mapping import Attrs
from dmlconform.backends.torch.contraction import apply_activation as activated

NOTE = "batch_norm(training=True, momentum=1): the running variance is the unbiased one; all but dimension 1 only"


def batch_training(t: Any, xs: list[Any], a: Attrs) -> Any:
    """``xs`` = [input, scale, bias, fused addend or None] -> (output, mean, variance) in the scale's sizes."""
    x, scale, bias, add = xs
    sizes = tuple(x.shape)
    axes = tuple(d for d, s in enumerate(scale.shape) if s == 1)
    if not all((d in axes) != (d == 1) or sizes[d] == 1 for d in range(len(sizes))):
        raise NotSupportedError(f"statistics over dimensions {list(axes)} of sizes {list(sizes)}: batch_norm takes "
                                "them over every dimension but dimension 1")
    channels = sizes[1] if len(sizes) > 1 else 1
    if math.prod(sizes) // channels == 1:
        raise NotSupportedError("one element per channel: torch's batch_norm refuses it in training")
    mean = t.zeros(channels, dtype=x.dtype, device=x.device)
    variance = t.ones(channels, dtype=x.dtype, device=x.device)
    y = t.nn.functional.batch_norm(x.reshape(sizes[0], channels, -1), mean, variance, scale.reshape(-1),
                                   bias.reshape(-1), training=True, momentum=1.0, eps=a.f32("Epsilon"))
    y = y.reshape(sizes)
    if add is not None:
        y = y + add
    fused = a.raw("FusedActivation")
    if fused:
        y = activated(t, y, str(fused))
    return y, mean.reshape(scale.shape), variance.reshape(scale.shape)


#: Spec operator -> the keyword arguments of its `TorchOp` (`normalization.TORCH_OPS` merges them).
TORCH_OPS: Mapping[str, dict[str, Any]] = {
    "BATCH_NORMALIZATION_TRAINING": {"fn": batch_training, "outputs": 3, "note": NOTE,
                                     "inputs": ("InputTensor", "ScaleTensor", "BiasTensor", "FusedAddTensor")}}
