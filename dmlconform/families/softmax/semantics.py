"""Reviewed semantics of the softmax family (issue #24): ACTIVATION_SOFTMAX,
LOG_SOFTMAX and HARDMAX, and their ``1`` versions with ``Axes``.

The pages give a formula "for 1-D InputTensor" (softmax, log-softmax), a
sentence (HARDMAX: "1 for the first occurrence of the largest value") or
pseudocode over ReduceArgMax (HARDMAX1); which dimensions are reduced is in
prose (the older operators: an "effective rank no greater than 2", so the
last dimension; the ``1`` versions: ``Axes``, jointly).  A person wrote that
down in ``specs/reviewed/<OP>.yaml`` (`families.softmax.overlay` reads it);
docs/softmax.md explains it.  `exact` is the mathematical function the
semantics describe, in float64: the oracle's expected values and the check
of the doc's worked examples both come from it.  Nothing here does I/O.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from dmlconform.spec.model import DataType, FeatureLevel, Semantics
from dmlconform.spec.semantics import Accumulated, DimensionCounted


class Function(enum.Enum):
    """What the operator computes over each group of reduced elements."""

    SOFTMAX = "softmax"
    LOG_SOFTMAX = "log-softmax"
    HARDMAX = "hardmax"


@dataclass(frozen=True, slots=True)
class Example:
    """One worked example of the doc: the input's ``sizes`` and values
    (flat, C order), the ``axes`` reduced, the output the doc prints
    (``printed``) and, where the reviewer found it wrong, why
    (``mistake``: the example then checks only that it is wrong)."""

    name: str
    source: str
    sizes: tuple[int, ...]
    values: tuple[float, ...]
    axes: tuple[int, ...]
    printed: tuple[float, ...]
    mistake: str | None = None


@dataclass(frozen=True, slots=True)
class Softmax(Semantics, Accumulated, DimensionCounted):
    """``function`` over groups of ``input``'s elements, written to
    ``output``.  A group is every element that shares the coordinates of
    the dimensions not reduced: the ``axes`` attribute's dimensions (an
    array, its length in ``axis_count``), or the last dimension where the
    operator has none (``axes`` None).  ``effective_rank`` is the largest
    count of dimensions left of size > 1 the doc allows (None: any).
    ``dimension_counts`` per feature level and ``accumulators`` (tensor type
    -> the type sums are bounded in, the primary reading) as in
    `spec.semantics.Contraction`; ``examples`` the doc's worked examples."""

    function: Function
    input: str
    output: str
    axes: str | None = None
    axis_count: str | None = None
    effective_rank: int | None = None
    dimension_counts: tuple[tuple[FeatureLevel, tuple[int, ...]], ...] = ()
    accumulators: tuple[tuple[DataType, DataType], ...] = ()
    examples: tuple[Example, ...] = ()


def grouped(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``x`` with the reduced ``axes`` moved last (in increasing dimension
    order) and flattened into one: shape (..., n), a group per row.  The
    order of the group's elements is the row-major order of the reduced
    dimensions (the primary reading of ``axes-order``, docs/softmax.md)."""
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + sorted(axes))
    return moved.reshape(moved.shape[:len(kept)] + (-1,))


def ungrouped(y: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...]) -> np.ndarray:
    """The inverse of `grouped`: rows of ``y`` back to a tensor of ``shape``."""
    kept = [d for d in range(len(shape)) if d not in axes]
    order = kept + sorted(axes)
    moved = y.reshape(tuple(shape[d] for d in order))
    return np.transpose(moved, np.argsort(order))


def exact(function: Function, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The function in float64 on finite ``x`` (the stable form: the max
    subtracted first, which is the formula's value in real arithmetic;
    hardmax: 1 at the first largest element of each group, IEEE comparison)."""
    rows = grouped(np.asarray(x, dtype=np.float64), axes)
    if function is Function.HARDMAX:
        out = np.zeros(rows.shape)
        np.put_along_axis(out, np.argmax(rows, axis=-1)[..., None], 1.0, axis=-1)
        return ungrouped(out, x.shape, axes)
    shifted = rows - rows.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)
    out = shifted - np.log(total) if function is Function.LOG_SOFTMAX else e / total
    return ungrouped(out, x.shape, axes)
