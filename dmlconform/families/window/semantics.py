"""The window family's reviewed semantics: `Window`, as the overlay's
``semantics`` (family ``window``, `families.window.overlay`) gives it:
which tensors are the input, the filter, the bias and the output, which
attributes give the window's geometry (strides, dilations, paddings,
groups, the mode and direction of a convolution), the dimension counts per
feature level and the accumulator of each tensor type (the primary
reading of the ambiguity beside it).  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from dmlconform.spec.model import DataType, FeatureLevel, Semantics
from dmlconform.spec.semantics import Accumulated, DimensionCounted

#: The ``DML_CONVOLUTION_MODE`` and ``DML_CONVOLUTION_DIRECTION`` constants.
CONVOLUTION = "DML_CONVOLUTION_MODE_CONVOLUTION"
CROSS_CORRELATION = "DML_CONVOLUTION_MODE_CROSS_CORRELATION"
FORWARD = "DML_CONVOLUTION_DIRECTION_FORWARD"
BACKWARD = "DML_CONVOLUTION_DIRECTION_BACKWARD"
#: What a window operator computes over its window: a convolution with a filter, or the average of the window.
OPERATIONS = ("convolution", "average_pooling", "max_pooling", "lp_pooling", "convolution_integer", "max_unpooling",
              "fold", "unfold")


@dataclass(frozen=True, slots=True)
class WindowExample:
    """One worked example of a page as the reviewer transcribed it (FOLD,
    UNFOLD): the input's type, sizes and row-major values, the attributes
    (an array a tuple), the output the page prints; ``index`` is its place
    in the overlay's ``examples`` (lint reports there)."""

    name: str
    source: str
    index: int
    dtype: DataType
    input_sizes: tuple[int, ...]
    input_values: tuple[float, ...]
    attributes: tuple[tuple[str, int | tuple[int, ...]], ...]
    output_sizes: tuple[int, ...]
    output_values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Window(Semantics, Accumulated, DimensionCounted):
    """``output[n, m, o] = sum over the window of o of input x filter (+ bias[m])``
    (``operation`` ``convolution``), or ``output[n, c, o] = sum over the
    window of input / divisor`` (``average_pooling``: the divisor the
    window's size where ``include_padding`` is TRUE, else its taps inside
    the input), or its largest element (``max_pooling``; ``indices``, an
    optional output, the flat index of that element in the logical input,
    the first of equal ones), or ``(sum over the window of |input|^P)^(1/P)``
    (``lp_pooling``, ``power`` the UINT field giving P; |.| the primary
    reading of the ``lp-sign`` ambiguity), or ``output[n, m, o] = sum over
    the window of (input - input_zero_point) x (filter - filter_zero_point[m])``
    in integers (``convolution_integer``; the zero points optional tensors,
    the filter's per tensor or per output channel), or the input's values
    written at the flat logical output positions ``input_indices`` (an
    input tensor) names, zero elsewhere (``max_unpooling``,
    `families.window.unpool`).

    The tensors are ``input``, ``output``, ``filter`` and the optional
    ``bias`` (None: the operator has none); the attributes, by role, name
    the fields that give them (None: the operator has none: a stride of 1,
    no dilation, no padding, one group).  ``spatial_count`` names the UINT
    giving the number of spatial dimensions (the arrays' length).
    ``dimension_counts`` per feature level (oldest first) and
    ``accumulators`` (tensor type -> the type sums are bounded in) are what
    the reviewer read; lint checks the first against the support tables.
    ``source`` is ``doc path:line`` of the sentence the semantics come from."""

    operation: str
    input: str
    output: str
    filter: str | None = None
    bias: str | None = None
    indices: str | None = None
    mode: str | None = None
    direction: str | None = None
    spatial_count: str | None = None
    strides: str | None = None
    dilations: str | None = None
    start_padding: str | None = None
    end_padding: str | None = None
    output_padding: str | None = None
    group_count: str | None = None
    window_size: str | None = None
    include_padding: str | None = None
    fused_activation: str | None = None
    power: str | None = None
    input_zero_point: str | None = None
    filter_zero_point: str | None = None
    dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...] = ()
    accumulators: tuple[tuple[DataType, DataType], ...] = ()
    input_indices: str | None = None
    examples: tuple[WindowExample, ...] = ()
