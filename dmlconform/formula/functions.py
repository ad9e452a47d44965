"""What the formula language knows about the functions the docs call.

DESIGN.md, "The oracle": one table of primitives with the facts every later stage
needs (arity, whether the result is exact, how much error an honest
implementation may add), so that classification, tolerance and error bounds are
computed from the tree instead of from a list per operator.  No numpy here:
`formula.classify` imports this module and must stay cheap to import.

``error`` is the error an honest implementation of the primitive may add, in
units of the target type's unit roundoff u (half an ULP): 0 for exact results,
1 for correctly rounded ones, and ``TRANSCENDENTAL_ERROR`` for library functions
(2 ULP, what GPU math libraries document for single precision).

Library functions (``Sigmoid``, ``HardSigmoid``, ``FusedActivation``) are
operators of their own, defined here by their own pages' formulas (facts, in our
own notation); a call binds its arguments to the definition's parameters and
then to its attributes in order.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from typing import Any


class Kind(enum.Enum):
    EXACT = "exact"              # result representable: abs, min, floor, isinf ...
    ROUNDED = "rounded"          # one correctly rounded operation: sqrt
    TRANSCENDENTAL = "transcendental"


#: Error of one transcendental call, in units of u (2 ULP).
TRANSCENDENTAL_ERROR = 4.0


@dataclass(frozen=True, slots=True)
class Primitive:
    name: str
    arity: tuple[int, int]       # (min, max); max -1 = any
    kind: Kind

    @property
    def error(self) -> float:
        return {Kind.EXACT: 0.0, Kind.ROUNDED: 1.0, Kind.TRANSCENDENTAL: TRANSCENDENTAL_ERROR}[self.kind]


def _table(kind: Kind, arity: tuple[int, int], *names: str) -> dict[str, Primitive]:
    return {n: Primitive(n, arity, kind) for n in names}


#: Primitives by lower-case name.  ``ln`` and ``log`` are both the natural log
#: (the log page writes ``ln``); ``round`` is round-half-to-even, ``roundaway``
#: rounds halves away from zero (C's ``round``); ``popcount`` counts the set bits
#: of an element's encoding (its input's width: `formula.integers`).
PRIMITIVES: dict[str, Primitive] = {
    **_table(Kind.EXACT, (1, 1), "abs", "floor", "ceil", "round", "roundaway", "trunc", "isinf", "isnan", "sign",
             "popcount"),
    **_table(Kind.EXACT, (2, -1), "min", "max"),
    **_table(Kind.EXACT, (3, 3), "clamp"),
    **_table(Kind.ROUNDED, (1, 1), "sqrt"),
    **_table(Kind.TRANSCENDENTAL, (1, 1),
             "exp", "ln", "log", "log2", "log10", "tanh", "sinh", "cosh", "asinh", "acosh",
             "atanh", "sin", "cos", "tan", "asin", "acos", "atan", "erf"),
    **_table(Kind.TRANSCENDENTAL, (2, 2), "pow", "atan2"),
}

#: Names of functions that combine many elements: their presence makes a
#: formula not element-wise.  Lower-case; ``max``/``min`` with a single
#: argument are reductions too (``Max(InputTensor)``).
REDUCTIONS = frozenset({
    "sum", "mean", "reduceargmax", "reduceargmin", "gemm", "softmax", "broadcast",
    "interpolate2d", "getoutputvalue", "transposed",
})

#: Named constants.
CONSTANTS: dict[str, str] = {"pi": "pi"}


@dataclass(frozen=True, slots=True)
class LibraryFunction:
    """Another operator's formula, callable by name."""

    name: str
    source: str                   # its formula, in our notation
    attributes: tuple[str, ...]   # extra call arguments bind to these, in order
    note: str


#: Operators that other formulas call by name.  Each ``source`` states the
#: formula of the operator's own page; ``FusedActivation`` is the identity,
#: the value of a null fused activation (the only one a formula alone can give).
LIBRARY: dict[str, LibraryFunction] = {
    f.name: f
    for f in (
        LibraryFunction("Sigmoid", "f(x) = 1 / (1 + exp(-x))", (), "ACTIVATION_SIGMOID"),
        LibraryFunction("HardSigmoid", "f(x) = max(0, min(Alpha * x + Beta, 1))", ("Alpha", "Beta"),
                        "ACTIVATION_HARD_SIGMOID"),
        LibraryFunction("FusedActivation", "f(x) = x", (), "null FusedActivation: identity"),
    )
}


def primitive(name: str) -> Primitive | None:
    """The primitive called ``name`` (case-insensitive), if any."""
    return PRIMITIVES.get(name.lower())


def is_enum_constant(name: str) -> bool:
    """``DML_IS_INFINITY_MODE_POSITIVE`` and the like: compared by name."""
    return name.startswith("DML_") and name.upper() == name


@functools.cache
def mp_context(prec: int) -> Any:
    """An mpmath context at ``prec`` bits, made once per precision: building
    one inspects every mpmath function (milliseconds), which dominated case
    generation and refinement.  Callers must not change its precision."""
    import mpmath  # noqa: PLC0415 - mpmath (~20 ms) when exact arithmetic first runs, not with every formula module

    ctx = mpmath.mp.clone()
    ctx.prec = prec
    return ctx
