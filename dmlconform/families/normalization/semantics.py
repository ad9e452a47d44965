"""The normalization family's reviewed semantics: `Normalization`, as the
overlay's ``semantics`` (family ``normalization``,
`families.normalization.overlay`) gives it: which tensors are the input,
the scale, the bias and the output, which attributes give the axes, the
epsilon and whether the variance divides, and the accumulator of each
tensor type (the primary reading of the ambiguity beside it).  Nothing
here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from dmlconform.spec.model import DataType, Semantics
from dmlconform.spec.semantics import Accumulated

#: What a normalization operator computes: the mean and variance over ``Axes``, then ``(x - mean) / sqrt(var + eps)``.
OPERATIONS = ("mean_variance", "lp", "lrn", "batch_training")


@dataclass(frozen=True, slots=True)
class Normalization(Semantics, Accumulated):
    """``output = scale * (input - mean) / sqrt(variance + epsilon) + bias``
    (``operation`` ``mean_variance``), the mean and the variance taken over
    the dimensions the ``axes`` array (counted by ``axis_count``) names, or
    (MEAN_VARIANCE_NORMALIZATION) dimensions 1 to the last where the BOOL
    ``cross_channel`` is TRUE, 2 to the last where FALSE; one pair per
    element of the other dimensions; ``scale`` and ``bias`` are optional
    tensors broadcast to the input (None: the operator has none);
    ``normalize_variance`` names the BOOL that, FALSE, leaves out the
    division (MEAN_VARIANCE_NORMALIZATION2's UseVariance), ``use_mean`` the
    BOOL that, FALSE, leaves out the mean (MEAN_VARIANCE_NORMALIZATION2's
    UseMean: the variance is then taken about 0, the primary reading).
    ``operation`` ``lp`` (LP_NORMALIZATION): ``output = input / max(||input||_P,
    epsilon)`` along the one dimension the UINT ``axis`` names, ``P`` the
    UINT ``p`` (1 or 2; Epsilon's place the primary reading of
    ``lp-epsilon``).  ``operation`` ``lrn`` (LOCAL_RESPONSE_NORMALIZATION):
    ``output = input / (offset + alpha / local_size * sum of input^2 over
    the local region)^beta``, the region ``local_size`` channels
    (``cross_channel`` TRUE) or ``local_size`` x ``local_size`` of height and
    width (FALSE), zero outside the tensor (``offset`` names the FLOAT
    ``Bias``).  ``fused_activation`` names the optional activation (not
    tested: docs/normalization.md).  ``accumulators``: tensor type -> the
    type the statistics are bounded in.  ``source`` is ``doc path:line``."""

    operation: str
    input: str
    output: str
    epsilon: str
    axes: str | None = None
    axis_count: str | None = None
    cross_channel: str | None = None
    scale: str | None = None
    bias: str | None = None
    normalize_variance: str | None = None
    use_mean: str | None = None
    axis: str | None = None
    p: str | None = None
    local_size: str | None = None
    alpha: str | None = None
    beta: str | None = None
    offset: str | None = None
    fused_activation: str | None = None
    accumulators: tuple[tuple[DataType, DataType], ...] = ()
    fused_add: str | None = None
    output_mean: str | None = None
    output_variance: str | None = None
