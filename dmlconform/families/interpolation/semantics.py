"""The interpolation family's reviewed semantics: `Resample`, as the
overlay's ``semantics`` (family ``interpolation``,
`families.interpolation.overlay`) gives it: which tensors are the input
and the output, which attributes give the mode, the scales, the pixel
offsets, the rounding direction of ties and the antialiasing flag, and the
dimension counts per feature level.  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from dmlconform.spec.model import FeatureLevel, Semantics
from dmlconform.spec.semantics import DimensionCounted

#: The ``DML_INTERPOLATION_MODE`` and ``DML_AXIS_DIRECTION`` constants.
NEAREST = "DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR"
LINEAR = "DML_INTERPOLATION_MODE_LINEAR"
INCREASING = "DML_AXIS_DIRECTION_INCREASING"
DECREASING = "DML_AXIS_DIRECTION_DECREASING"


@dataclass(frozen=True, slots=True)
class Resample(Semantics, DimensionCounted):
    """``output[o] = input at the source coordinate of o``: per dimension
    ``c = (o - OutputPixelOffset) / Scale - InputPixelOffset`` (the page's
    ``OutputTensorX = (InputTensorX + InputPixelOffset) * Scale +
    OutputPixelOffset`` solved for the input), clamped to the input's
    range; NEAREST_NEIGHBOR takes the element nearest to ``c``, LINEAR the
    separable multilinear weighted average of the 2 neighbours per
    dimension.

    ``mode`` names the enum attribute, ``scales`` the FLOAT array (None:
    UPSAMPLE_2D, whose ``scale_size`` names the DML_SIZE_2D of whole
    height and width scales, the others 1);
    ``input_offsets`` and ``output_offsets`` the FLOAT arrays of pixel
    offsets (None: the operator has none and uses ``input_offset`` and
    ``output_offset``, RESAMPLE's 0.5 and -0.5); ``rounding`` the
    ``DML_AXIS_DIRECTION`` deciding ties (None: the operator leaves ties
    open); ``antialiased`` the BOOL of RESAMPLE3 (None: none);
    ``dimension_count`` the UINT giving the arrays' length.
    ``source`` is ``doc path:line`` of the sentence the semantics come from."""

    input: str
    output: str
    mode: str
    scales: str | None = None
    dimension_count: str | None = None
    scale_size: str | None = None
    input_offsets: str | None = None
    output_offsets: str | None = None
    input_offset: float = 0.5
    output_offset: float = -0.5
    rounding: str | None = None
    antialiased: str | None = None
    dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...] = ()
