"""Reviewed semantics of the ``formula`` kind: a formula, in the formula
language, for an element-wise operator whose page states it only in prose.

Issue #24 item 1 (the bitwise operators, IS_NAN, ROUND: docs/bitwise.md).
The page says "computes the bitwise AND", "rounds ... with halfway values
rounded toward the nearest even integer", "returns 1 if the input is NaN":
exact, but no formula block, so extract leaves the spec without one.  The
reviewer writes the formula in the overlay; `attach` gives it to the spec as
its formula (``Formula.reviewed`` says where it came from), so the whole
element-wise family applies unchanged: edges, layouts, broadcast, in-place,
levels, readings of the ambiguities beside it.  extract never writes it
(`spec.store` writes the spec file only) and never counts it as lost
(`extract.losses`).  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dmlconform.spec import model as m
from dmlconform.spec.model import Semantics


@dataclass(frozen=True, slots=True)
class ReviewedFormula(Semantics):
    """``text``: the formula (``f(a, b) = a & b``), naming the spec's tensors
    and attributes; ``nan_policy`` and ``signed_zero`` the stated choices
    (None: what extract would derive from the formula)."""

    text: str
    nan_policy: m.NanPolicy | None = None
    signed_zero: bool | None = None

    def attach(self, spec: m.Spec) -> m.Spec:
        """``spec`` with this formula as its own (parsed and classified as
        extract does with a page's formula; `reviewed_formula.against_spec`
        has checked that it binds to the fields and is evaluable)."""
        from dmlconform.spec.extract_formula import analyse  # noqa: PLC0415 - the formula engine only for overlays that give one

        def ignore(line: int, message: str) -> None:
            """`against_spec` already refused a formula that does not parse."""

        stated = m.Formula(m.FormulaSource.CODE, text=self.text)
        parsed, _ = analyse(stated, line=0, category=spec.category, fields=spec.fields, support=spec.support,
                            display=self.source, warn=ignore)
        formula = replace(parsed, source=spec.formula.source, reviewed=self.source,
                          nan_policy=self.nan_policy or parsed.nan_policy,
                          signed_zero=self.signed_zero if self.signed_zero is not None else parsed.signed_zero)
        return replace(spec, formula=formula)
