"""Reviewed semantics of VALUE_SCALE_2D (issue #24): ``Output = Scale *
Input + Bias``, one Bias value per channel.

The page's formula names ``Bias`` as if it were one number, and its Bias
field says "the bias term for each *dimension* of the input tensor"; the
description and ChannelCount ("must also match the size of the Channel
dimension") say one per channel, dimension 1 of the ``{ BatchCount,
ChannelCount, Height, Width }`` input.  The formula language has no array
attribute indexed by a dimension, so the reviewer writes this down in
``specs/reviewed/VALUE_SCALE_2D.yaml`` (`families.value_scale.overlay` reads
it) and a family of its own tests it (docs/value-scale.md says why).
`exact` is the function in float64.  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dmlconform.spec.model import DataType, FeatureLevel, Semantics
from dmlconform.spec.semantics import Accumulated, DimensionCounted


@dataclass(frozen=True, slots=True)
class ValueScale(Semantics, Accumulated, DimensionCounted):
    """``output = scale * input + bias[c]`` with ``c`` the element's
    coordinate along ``channel_dimension``; ``bias`` is an array attribute
    of ``channel_count`` values, a count the page allows only among
    ``channel_counts``.  ``dimension_counts`` per feature level and
    ``accumulators`` (tensor type -> the type the primary reading computes
    in) as in `spec.semantics.Contraction`."""

    input: str
    output: str
    scale: str
    bias: str
    channel_count: str
    channel_dimension: int = 1
    channel_counts: tuple[int, ...] = ()
    dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...] = ()
    accumulators: tuple[tuple[DataType, DataType], ...] = ()


def per_channel(bias: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """``bias`` (one value per channel) shaped to broadcast along ``axis`` of a ``rank``-D tensor."""
    shape = [1] * rank
    shape[axis] = bias.size
    return bias.reshape(shape)


def exact(x: np.ndarray, scale: float, bias: np.ndarray, axis: int) -> np.ndarray:
    """``scale * x + bias[c]`` in float64 (exact but for its one rounding to float64)."""
    x64 = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.float64(scale) * x64 + per_channel(np.asarray(bias, dtype=np.float64), x64.ndim, axis)
