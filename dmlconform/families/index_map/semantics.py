"""Reviewed semantics of the index-map family: operators whose every
output element is one element of the input, picked by coordinates the
operator computes (GATHER, GATHER_ELEMENTS, GATHER_ND, GATHER_ND1).

Issue #34 item 2; docs/index-map.md.  The pages give these operators as
pseudocode (``output[...] = input[..., indices[...], ...]``) and prose on
sizes; one record (`IndexMap`) holds what a reviewer read there: which
operation, which tensors and attributes play which part, whether the page
says what an index outside its dimension gives, the dimension counts per
level and the page's worked examples.  Nothing here does I/O.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dmlconform.spec.model import DataType, FeatureLevel, Semantics
from dmlconform.spec.semantics import DimensionCounted


class Operation(enum.Enum):
    """How an output coordinate finds its input element."""

    GATHER = "gather"                    # one axis of the input replaced by IndexDimensions of the indices
    GATHER_ELEMENTS = "gather-elements"  # the index at the same coordinate replaces the coordinate on Axis
    GATHER_ND = "gather-nd"              # a tuple of indices (the indices' last dimension) picks a sub-block
    SLICE = "slice"                      # Offsets + Strides * coordinate (SLICE: strides >= 1)
    SLICE_WINDOW = "slice-window"        # the same from the window's far end where a stride is negative (SLICE1)
    TILE = "tile"                        # the coordinate modulo the input's sizes
    PAD = "pad"                          # a constant, the edge, or the fold of the coordinate (pads.py)
    DEPTH_TO_SPACE = "depth-to-space"    # channels into blocks of height and width, by Order (blocks.py)
    SPACE_TO_DEPTH = "space-to-depth"    # blocks of height and width into channels, by Order
    SCATTER_ELEMENTS = "scatter-elements"  # the input, each update written where GATHER_ELEMENTS would read it
    SCATTER_ND = "scatter-nd"            # the input, each update block written where GATHER_ND would read it
    ONE_HOT = "one-hot"                  # OnValue where the coordinate on Axis is the index, else OffValue
    NONZERO = "nonzero-coordinates"      # the coordinates of the input's non-zero elements, and their count
    CAST = "cast"                        # the element at the same coordinate, converted (`generated`)
    FILL_CONSTANT = "fill-constant"      # Value everywhere
    FILL_SEQUENCE = "fill-sequence"      # ValueStart + (C-order position) * ValueDelta
    DIAGONAL = "diagonal"                # Value where column == row + Offset, 0 elsewhere
    DIAGONAL_SPAN = "diagonal-span"      # Value where column - row lies in [Begin, End) (inverted: outside)
    RANDOM = "random"                    # Philox 4x32-10 bits from the state tensor's counter and key
    JOIN = "join"                        # the input of the array whose range on Axis holds the coordinate (joins.py)
    SPLIT = "split"                      # the input at the coordinate plus the earlier outputs' sizes on Axis

    @property
    def is_slice(self) -> bool:
        return self in (Operation.SLICE, Operation.SLICE_WINDOW)

    @property
    def is_scatter(self) -> bool:
        return self in (Operation.SCATTER_ELEMENTS, Operation.SCATTER_ND)

    @property
    def has_indices(self) -> bool:
        return not self.is_slice and not self.is_generated and self not in (
            Operation.TILE, Operation.PAD, Operation.DEPTH_TO_SPACE, Operation.SPACE_TO_DEPTH, Operation.NONZERO,
            Operation.JOIN, Operation.SPLIT)

    @property
    def is_generated(self) -> bool:
        """A conversion or a generator (`families.index_map.generated`): no index map of an input."""
        return self in GENERATED


#: The attributes each operation reads, by their part (the overlay's keys).
ATTRIBUTES = {
    Operation.GATHER: ("axis", "index_dimensions"),
    Operation.GATHER_ELEMENTS: ("axis",),
    Operation.GATHER_ND: ("input_dimension_count", "indices_dimension_count"),
    Operation.SLICE: ("dimension_count", "offsets", "sizes", "strides"),
    Operation.SLICE_WINDOW: ("dimension_count", "offsets", "sizes", "strides"),
    Operation.TILE: ("dimension_count", "repeats"),
    Operation.PAD: ("dimension_count", "start_padding", "end_padding", "padding_mode", "padding_value"),
    Operation.DEPTH_TO_SPACE: ("block_size",),
    Operation.SPACE_TO_DEPTH: ("block_size",),
    Operation.SCATTER_ELEMENTS: ("axis",),
    Operation.SCATTER_ND: ("input_dimension_count", "indices_dimension_count"),
    Operation.ONE_HOT: ("axis",),
    Operation.NONZERO: (),
    Operation.CAST: (),
    Operation.FILL_CONSTANT: ("value_data_type", "value"),
    Operation.FILL_SEQUENCE: ("value_data_type", "value_start", "value_delta"),
    Operation.DIAGONAL: ("offset", "value"),
    Operation.DIAGONAL_SPAN: ("value_data_type", "value", "fill_begin", "fill_end"),
    Operation.RANDOM: ("generator_type",),
    Operation.JOIN: ("axis",),
    Operation.SPLIT: ("axis",),
}
#: The operations of `families.index_map.generated` (CAST, the fills, the diagonals, RANDOM_GENERATOR).
GENERATED = frozenset({Operation.CAST, Operation.FILL_CONSTANT, Operation.FILL_SEQUENCE, Operation.DIAGONAL,
                       Operation.DIAGONAL_SPAN, Operation.RANDOM})
#: The parts that name an array attribute (the others a UINT).
ARRAYS = ("offsets", "sizes", "strides", "repeats", "start_padding", "end_padding")
#: Those an operation may name besides (GATHER_ND1's batch count; GATHER_ND has none: 0).
OPTIONAL = {Operation.GATHER_ND: ("batch_dimension_count",), Operation.PAD: ("padding_value_type",),
            Operation.DEPTH_TO_SPACE: ("order",), Operation.SPACE_TO_DEPTH: ("order",),
            Operation.RANDOM: ("state_output",)}
#: The operations without an input tensor (DIAGONAL_MATRIX1's is optional: it may name one).
NO_INPUT = frozenset({Operation.FILL_CONSTANT, Operation.FILL_SEQUENCE, Operation.DIAGONAL, Operation.DIAGONAL_SPAN})


@dataclass(frozen=True, slots=True)
class ExampleTensor:
    """One tensor of an example's tensor array (JOIN's inputs, SPLIT's outputs)."""

    type: DataType
    sizes: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Example:
    """One worked example of a page, as the reviewer transcribed it: the
    input and the indices (type, sizes, row-major values; a slice has none:
    empty, type None), the attributes (by name; an array a tuple) and the
    output the page prints (type, sizes and values); a scatter's updates
    (sizes and values; empty for the others); JOIN's inputs or SPLIT's
    outputs as ``array`` (the single tensor is the other side; the array's
    side then has no sizes nor values, the array's type).
    ``index`` is its place in the overlay's ``examples`` (lint reports there)."""

    name: str
    source: str
    index: int
    input_type: DataType
    input_sizes: tuple[int, ...]
    input_values: tuple[float, ...]
    indices_sizes: tuple[int, ...]
    indices_values: tuple[int, ...]
    indices_type: DataType | None
    attributes: tuple[tuple[str, int | float | str | tuple[int, ...]], ...]
    output_type: DataType
    output_sizes: tuple[int, ...]
    output_values: tuple[float, ...]
    updates_sizes: tuple[int, ...] = ()
    updates_values: tuple[float, ...] = ()
    #: A generated operation's attributes that are no whole number: a float Value, a ValueDataType's name.
    scalars: tuple[tuple[str, float | str], ...] = ()
    #: JOIN's ``InputTensors`` or SPLIT's ``OutputTensors``, in the array's order (empty for the others).
    array: tuple[ExampleTensor, ...] = ()


@dataclass(frozen=True, slots=True)
class IndexMap(Semantics, DimensionCounted):
    """One gather or slice: ``input``, ``indices`` (None: a slice) and
    ``output`` the tensors; the attributes by their part (None where the
    operator has none): ``axis``, ``index_dimensions`` (GATHER),
    ``input_dimension_count``, ``indices_dimension_count`` and
    ``batch_dimension_count`` (GATHER_ND, GATHER_ND1), ``dimension_count``,
    ``offsets``, ``sizes`` and ``strides`` (SLICE's Sizes, SLICE1's window
    sizes), ``repeats`` (TILE; its RepeatsCount is ``dimension_count``),
    ``start_padding``, ``end_padding``, ``padding_mode``, ``padding_value``
    and ``padding_value_type`` (PADDING, PADDING1: the last PADDING1's alone),
    ``block_size`` and ``order`` (the depth/space moves: Order the *1's alone);
    the generated operations' (`GENERATED`): ``value_data_type``,
    ``value``, ``value_start``, ``value_delta`` (the fills; DIAGONAL_MATRIX's
    Value, DIAGONAL_MATRIX1's), ``offset`` (DIAGONAL_MATRIX), ``fill_begin``
    and ``fill_end`` (DIAGONAL_MATRIX1), ``generator_type`` and
    ``state_output`` (RANDOM_GENERATOR's Type and OutputStateTensor).  ``input``
    is "" where the operator has none (the fills, DIAGONAL_MATRIX; DIAGONAL_MATRIX1's is optional).  ``out_of_range_stated``: the page says an index outside
    its dimension yields an unspecified value and no failure (GATHER); where
    it is silent, a case with such indices is outside the doc's domain (a
    negative case: a clean rejection passes, and so does a result right at
    every valid index).  ``dimension_counts`` per feature level (oldest
    first), as the reviewer read the support tables.  ``updates``: a
    scatter's updates tensor (SCATTER, SCATTER_ND; scatters.py); ``count``:
    NONZERO_COORDINATES' count output (nonzero.py)."""

    operation: Operation
    input: str
    indices: str | None
    output: str
    axis: str | None = None
    index_dimensions: str | None = None
    input_dimension_count: str | None = None
    indices_dimension_count: str | None = None
    batch_dimension_count: str | None = None
    dimension_count: str | None = None
    offsets: str | None = None
    sizes: str | None = None
    strides: str | None = None
    repeats: str | None = None
    start_padding: str | None = None
    end_padding: str | None = None
    padding_mode: str | None = None
    padding_value: str | None = None
    padding_value_type: str | None = None
    block_size: str | None = None
    order: str | None = None
    value_data_type: str | None = None
    value: str | None = None
    value_start: str | None = None
    value_delta: str | None = None
    offset: str | None = None
    fill_begin: str | None = None
    fill_end: str | None = None
    generator_type: str | None = None
    state_output: str | None = None
    out_of_range_stated: bool = False
    dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...] = ()
    examples: tuple[Example, ...] = ()
    updates: str | None = None
    count: str | None = None

    def attribute(self, part: str) -> str | None:
        """The attribute named for ``part`` (``"axis"``, ...), None where none is."""
        return getattr(self, part)
