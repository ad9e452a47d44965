"""The shape rules of NONZERO_COORDINATES (issue #34): the count output has
sizes all 1; the coordinates output `{1,...,1,M,N}` (M the input's element
count, N from the input's effective rank, its dimension count without the
leading ones, up to its dimension count); each row holds the last N
coordinates of a non-zero element (the page's example: {1,1,2,4} with N 3
gives rows [0, 0, 3]). What the cases module, the oracle and the
reference share; nothing here imports them.
"""

from __future__ import annotations

import math


def effective_rank(sizes: tuple[int, ...]) -> int:
    """The dimension count without the leading dimensions of size 1."""
    lead = next((d for d, s in enumerate(sizes) if s != 1), len(sizes))
    return len(sizes) - lead


def columns(input_sizes: tuple[int, ...], coordinates: tuple[int, ...], count: tuple[int, ...]) -> int:
    """N, the coordinates' columns; ValueError saying what does not fit the page."""
    m_, n = math.prod(input_sizes), coordinates[-1] if coordinates else 0
    if len(coordinates) < 2 or any(s != 1 for s in coordinates[:-2]) or coordinates[-2] != m_:
        raise ValueError(f"the coordinates' sizes {list(coordinates)} must be {{1,...,1,{m_},N}} "
                         f"(M = the input's {m_} elements)")
    if not max(effective_rank(input_sizes), 1) <= n <= len(input_sizes):
        raise ValueError(f"N={n} must be from the input's effective rank {effective_rank(input_sizes)} "
                         f"to its dimension count {len(input_sizes)}")
    if any(s != 1 for s in count):
        raise ValueError(f"the count's sizes {list(count)} must all be 1")
    return n
