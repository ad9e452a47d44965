"""The reviewed semantics of the ROI operators (ROI_ALIGN, ROI_ALIGN1,
ROI_POOLING), as the overlay's ``semantics`` (family ``roi``,
`families.interpolation.roi_overlay`) gives them: which tensors hold the
input, the regions, their batch indices and the output, and which
attributes give the reduction, the interpolation mode, the spatial scales,
the pixel offsets, the value outside the input, the sample counts' clamps
and AlignRegionsToCorners.  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from dmlconform.spec.model import Semantics

#: The ``DML_REDUCE_FUNCTION`` constants ROI_ALIGN(1) takes.
AVERAGE = "DML_REDUCE_FUNCTION_AVERAGE"
MAX = "DML_REDUCE_FUNCTION_MAX"


@dataclass(frozen=True, slots=True)
class Roi(Semantics):
    """One ROI operator.

    ROI_ALIGN(1) (``pooled_size`` None): per region the page's pseudocode
    (docs/interpolation.md "ROI_ALIGN1"): ``reduction`` and ``mode`` name
    the enums, ``scale_x``/``scale_y`` the FLOATs, ``input_offset_field``
    and ``output_offset_field`` the pixel offsets (None: ROI_ALIGN, whose
    fixed ``input_offset`` 0.5 and ``output_offset`` -0.5 its successor's
    page gives), ``out_of_bounds`` the FLOAT read outside the input,
    ``min_samples``/``max_samples`` the UINT clamps, ``align_corners`` the
    BOOL (None: FALSE, ROI_ALIGN).  ``batch_indices`` names the index tensor.

    ROI_POOLING (``pooled_size`` the DML_SIZE_2D): ``scale_x`` names its one
    SpatialScale, the batch index is each region's first value (no
    ``batch_indices``), the bins the page's integer formula.
    ``source`` is ``doc path:line`` of the text the semantics come from."""

    input: str
    rois: str
    output: str
    scale_x: str
    batch_indices: str | None = None
    scale_y: str | None = None
    reduction: str | None = None
    mode: str | None = None
    input_offset_field: str | None = None
    output_offset_field: str | None = None
    input_offset: float = 0.5
    output_offset: float = -0.5
    out_of_bounds: str | None = None
    min_samples: str | None = None
    max_samples: str | None = None
    align_corners: str | None = None
    pooled_size: str | None = None
