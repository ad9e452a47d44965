"""The shape rules of DEPTH_TO_SPACE(1) and SPACE_TO_DEPTH(1) (issue #34):
4-D tensors ``{Batch, Channels, Height, Width}``; the depth version has
BlockSize^2 times the channels of the space version, which has BlockSize
times its height and width.  ``Order`` (the *1 operators; the others are
DEPTH_COLUMN_ROW, their Remarks) says how the depth version's channels
are flattened (the DML_DEPTH_SPACE_ORDER page): DCR ``(BlockHeight,
BlockWidth, Channels)``, CRD ``(Channels, BlockHeight, BlockWidth)``.  What
the cases module, the oracle and the reference share; nothing here says
where an output element comes from (the oracle's `moves`, the reference's
reshape and transpose).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dmlconform.families.index_map.semantics import IndexMap, Operation

ORDER_PREFIX = "DML_DEPTH_SPACE_ORDER_"
#: The orders by their constants' suffixes -> the short names the cases and ONNX use.
ORDERS = {"DEPTH_COLUMN_ROW": "DCR", "COLUMN_ROW_DEPTH": "CRD"}


@dataclass(frozen=True, slots=True)
class BlockCall:
    """A depth/space move: ``to_space`` (DEPTH_TO_SPACE) or not, the block
    size, the order (``"DCR"`` or ``"CRD"``)."""

    to_space: bool
    block: int
    order: str

    def output_sizes(self, input_sizes: tuple[int, ...]) -> tuple[int, ...]:
        """The output's sizes by the rule of the move (whole blocks assumed: `block_problem` checks)."""
        n, c, h, w = input_sizes
        b = self.block
        return (n, c // (b * b), h * b, w * b) if self.to_space else (n, c * b * b, h // b, w // b)


def block_call(sem: IndexMap, attributes: Mapping[str, object]) -> BlockCall:
    """The attributes of a case (ValueError naming a malformed or missing one)."""
    name = sem.block_size or "BlockSize"
    block = attributes.get(name)
    if isinstance(block, bool) or not isinstance(block, int):
        raise ValueError(f"{name}={block!r} is not a whole number: give the block's width and height, e.g. 2")
    order = "DCR"
    if sem.order is not None:
        given = str(attributes.get(sem.order, ""))
        if given.removeprefix(ORDER_PREFIX) not in ORDERS or not given.startswith(ORDER_PREFIX):
            raise ValueError(f"{sem.order}={given!r} is no order: give {ORDER_PREFIX}DEPTH_COLUMN_ROW or "
                             f"{ORDER_PREFIX}COLUMN_ROW_DEPTH")
        order = ORDERS[given.removeprefix(ORDER_PREFIX)]
    return BlockCall(sem.operation is Operation.DEPTH_TO_SPACE, block, order)


def block_problem(call: BlockCall, input_sizes: tuple[int, ...], output_sizes: tuple[int, ...]) -> str | None:
    """What makes ``call`` no move of ``input_sizes`` into ``output_sizes`` (None: nothing)."""
    if len(input_sizes) != 4 or len(output_sizes) != 4:
        return "the tensors must have 4 dimensions, {Batch, Channels, Height, Width}"
    b = call.block
    if b < 1:
        return f"BlockSize {b} must be at least 1"
    n, c, h, w = input_sizes
    if call.to_space and c % (b * b):
        return f"the input's {c} channels must be a multiple of BlockSize^2 = {b * b}"
    if not call.to_space and (h % b or w % b):
        return f"the input's height {h} and width {w} must be multiples of BlockSize {b}"
    if call.output_sizes(input_sizes) != output_sizes:
        return f"the output's sizes {list(output_sizes)} must be {list(call.output_sizes(input_sizes))}"
    return None


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """One case's input sizes and block size, named ``variant``."""

    variant: str
    input_sizes: tuple[int, ...]
    block: int


def plans(to_space: bool) -> list[BlockPlan]:
    """The default first: BlockSize 2 over 3 channels of the space version,
    3 over 2, 1 (a copy), and 2 over one channel of one block (`single`)."""
    def sizes(c: int, h: int, w: int, b: int) -> tuple[int, ...]:  # c, h, w: the space version's
        return (2, c * b * b, h, w) if to_space else (2, c, h * b, w * b)

    return [BlockPlan("b2", sizes(3, 2, 3, 2), 2), BlockPlan("b3", sizes(2, 2, 1, 3), 3),
            BlockPlan("b1", sizes(3, 2, 3, 1), 1), BlockPlan("single", sizes(1, 1, 1, 2), 2)]
