"""Reviewed semantics of the reduction family: REDUCE (every
``DML_REDUCE_FUNCTION``), ARGMAX and ARGMIN.

Issue #24 item 1; docs/reduction.md.  The REDUCE page says in prose that
each output element is a function of the input elements over ``Axes``, and
that the output has the input's sizes with the reduced axes set to 1; the
function itself is a one-line formula in the enum's page
(ne-directml-dml_reduce_function.md).  ARGMAX and ARGMIN are REDUCE's
ARGMAX and ARGMIN with a tie rule (``AxisDirection``).  A person wrote that
down in ``specs/reviewed/<OP>.yaml`` (`families.reduction.overlay` checks it);
nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from dmlconform.spec.model import DataType, Semantics
from dmlconform.spec.semantics import Accumulated

#: Every DML_REDUCE_FUNCTION, by the suffix its constant and the support tables' conditions use.
FUNCTIONS = ("ARGMAX", "ARGMIN", "AVERAGE", "L1", "L2", "LOG_SUM", "LOG_SUM_EXP", "MAX", "MIN", "MULTIPLY", "SUM",
             "SUM_SQUARE")
#: The functions whose output is an index, not a value of the input's type.
ARG_FUNCTIONS = ("ARGMAX", "ARGMIN")
FUNCTION_PREFIX = "DML_REDUCE_FUNCTION_"
INCREASING = "DML_AXIS_DIRECTION_INCREASING"
DECREASING = "DML_AXIS_DIRECTION_DECREASING"


@dataclass(frozen=True, slots=True)
class Example:
    """One worked example of the doc, as the reviewer transcribed it:
    the input (``sizes``, row-major ``values``), the call (``function``,
    ``axes``, ``direction``: None where the operator has none), the output
    the doc prints and, per output element, the terms its comment lists
    (``terms``; empty where the doc gives none).  ``index`` is its place in
    the overlay's ``examples`` (lint reports there)."""

    name: str
    source: str
    index: int
    sizes: tuple[int, ...]
    values: tuple[float, ...]
    function: str
    axes: tuple[int, ...]
    direction: str | None
    output: tuple[float, ...]
    output_type: DataType
    terms: tuple[tuple[float, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Reduction(Semantics, Accumulated):
    """``output[i] = f(input over the reduced axes at i)``, the output of
    the input's sizes with every axis of ``Axes`` at 1.

    ``function`` names the ``DML_REDUCE_FUNCTION`` attribute (REDUCE);
    ``fixed`` the function an operator without one computes (ARGMAX,
    ARGMIN); ``direction`` the ``DML_AXIS_DIRECTION`` attribute that picks
    the first or the last of tied indices (None: the first, as the ARGMAX
    page says REDUCE's ARGMAX does).  ``axes`` and ``axis_count`` name the
    array and its count.  ``accumulators``: tensor type -> the type sums
    are bounded in (the primary reading of ``float16-accumulator``)."""

    input: str
    output: str
    axes: str
    axis_count: str
    function: str | None = None
    fixed: str | None = None
    direction: str | None = None
    accumulators: tuple[tuple[DataType, DataType], ...] = ()
    examples: tuple[Example, ...] = ()

    @property
    def functions(self) -> tuple[str, ...]:
        """The functions the operator computes: all of them, or its fixed one."""
        return FUNCTIONS if self.fixed is None else (self.fixed,)
