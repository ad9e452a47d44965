"""The ``formula`` kind of reviewed semantics (`spec.semantics_formula`):
its schema, its record and its checks against the spec.  `spec.reviewed`
registers it in `KINDS`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc
from dmlconform.spec.semantics_formula import ReviewedFormula

SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["family", "source", "formula"],
    "properties": {
        "family": {"const": "formula"}, "source": rc.SOURCE,
        "formula": {"type": "string", "minLength": 1, "maxLength": 2000},
        "nan_policy": {"enum": [p.value for p in m.NanPolicy]},
        "signed_zero": {"type": "boolean"},
    },
}


def build(data: dict[str, Any]) -> ReviewedFormula:
    """Shape-checked ``semantics`` data -> `ReviewedFormula`."""
    policy = data.get("nan_policy")
    return ReviewedFormula(source=data["source"], text=data["formula"],
                           nan_policy=m.NanPolicy(policy) if policy is not None else None,
                           signed_zero=data.get("signed_zero"))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """The formula parses, reads only the spec's fields, assigns its
    outputs, and is one the element-wise oracle can evaluate; the spec has
    no formula of its own to replace."""
    from dmlconform.formula import Parsed, classify  # noqa: PLC0415 - the formula engine only for overlays that give one

    where = (*rc.AT, "formula")
    if spec.formula.text:
        yield where, (f"{spec.operator}'s page has a formula of its own ({spec.formula.text.strip()!r}); "
                      "a reviewed formula is only for pages without one: drop it, or fix the spec's")
        return
    tensors = spec.tensors
    result = classify(data["formula"], [f.name for f in spec.fields],
                      inputs=[f.name for f in tensors if f.role is m.TensorRole.INPUT],
                      outputs=[f.name for f in tensors if f.role is m.TensorRole.OUTPUT])
    if not isinstance(result, Parsed):
        yield where, f"formula {data['formula'].strip()!r}: {result.reason}; write it in the formula language " \
                     "(docs/bitwise.md)"
    elif not result.evaluable:
        yield where, f"formula {data['formula'].strip()!r} is not one the element-wise oracle can evaluate " \
                     f"({result.reason}); write it with the spec's tensors and attributes"
