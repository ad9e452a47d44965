"""The formula block of a page through the formula engine: its parsed form,
whether the oracle can evaluate it, the NaN policy, and default tolerances.

Issue 4: "The parsed form is stored in the spec by extract".  The policy
choices made here are stated in the spec, so a spec writer can change them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from dmlconform.formula import Parsed, classify, to_text
from dmlconform.formula.expand import expand
from dmlconform.formula.tolerance import default_ulp, signed_zero
from dmlconform.formula.tree import FormulaTree, otherwise_branches
from dmlconform.spec import model as m

Warn = Callable[[int, str], None]


def _output_dtypes(fields: tuple[m.Field, ...], support: tuple[m.SupportTable, ...]) -> set[m.DataType]:
    outputs = {f.name for f in fields if f.role is m.TensorRole.OUTPUT}
    return {t for table in support for row in table.rows if row.tensor in outputs for t in row.dtypes}


def nan_policy(category: str, tree: FormulaTree, out_types: set[m.DataType]) -> m.NanPolicy:
    """Activations propagate NaN (IEEE).  Other operators whose formula has an
    ``otherwise`` branch (sign, if) or whose outputs are integers only
    (comparisons, is_nan) take the formula literally: NaN fails every
    comparison and lands in ``otherwise``."""
    if category == "activation":
        return m.NanPolicy.PROPAGATE
    if bool(otherwise_branches(tree)) or (out_types and not any(t.is_float for t in out_types)):
        return m.NanPolicy.FORMULA
    return m.NanPolicy.PROPAGATE


def analyse(formula: m.Formula, *, line: int, category: str, fields: tuple[m.Field, ...],
            support: tuple[m.SupportTable, ...], display: str, warn: Warn) -> tuple[m.Formula, tuple[m.Tolerance, ...]]:
    """(formula with parsed form and policies, default tolerance per data type)."""
    if formula.source not in (m.FormulaSource.CODE, m.FormulaSource.INLINE) or not formula.text:
        return formula, ()
    tensors = [f for f in fields if f.is_tensor]
    result = classify(formula.text, [f.name for f in fields],
                      inputs=[f.name for f in tensors if f.role is m.TensorRole.INPUT],
                      outputs=[f.name for f in tensors if f.role is m.TensorRole.OUTPUT],
                      origin=display, first_line=line + 1)
    if not isinstance(result, Parsed):
        warn(result.line or line, f"formula not parsed ({result.category.value}): {result.reason}")
        return replace(formula, reason=result.reason), ()

    out_types = _output_dtypes(fields, support)
    parsed = replace(
        formula, parsed=to_text(result.tree), evaluable=result.evaluable, reason=result.reason,
        notes=tuple(dict.fromkeys(result.notes)), nan_policy=nan_policy(category, result.tree, out_types),
        signed_zero=True if signed_zero(result.tree) else None,
    )
    if not result.evaluable:
        return parsed, ()
    # integers are always compared exactly: only float types get a budget
    expanded = expand(result.tree)
    tolerance = tuple(m.Tolerance(t, default_ulp(expanded, t)) for t in m.sort_dtypes(out_types) if t.is_float)
    return parsed, tolerance
