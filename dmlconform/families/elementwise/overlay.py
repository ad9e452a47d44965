"""The ``formula`` kind of reviewed semantics (`families.elementwise.semantics`):
its schema, its record and its checks against the spec.  `families.Family.overlay` names it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dmlconform.families.elementwise.semantics import ReviewedFormula
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

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
    outputs, and is one the element-wise oracle can evaluate for every type
    the tables allow; the spec has no formula of its own to replace."""
    from dmlconform.formula import Parsed, classify  # noqa: PLC0415 - the formula engine only for overlays that give one

    where = (*rc.AT, "formula")
    shown = _short(data["formula"])
    if spec.formula.text:
        yield where, (f"{spec.operator}'s page has a formula of its own ({_short(spec.formula.text)!r}); "
                      "a reviewed formula is only for pages without one: drop it, or fix the spec's")
        return
    tensors = spec.tensors
    inputs = [f.name for f in tensors if f.role is m.TensorRole.INPUT]
    result = classify(data["formula"], [f.name for f in spec.fields], inputs=inputs,
                      outputs=[f.name for f in tensors if f.role is m.TensorRole.OUTPUT])
    if not isinstance(result, Parsed):
        yield where, f"formula {shown!r}: {result.reason}; write it in the formula language (docs/bitwise.md)"
    elif not result.evaluable:
        yield where, f"formula {shown!r} is not one the element-wise oracle can evaluate ({result.reason}); " \
                     "write it with the spec's tensors and attributes"
    else:
        yield from _bits_of_floats(result.tree, spec, inputs, where, shown)


def _bits_of_floats(tree: Any, spec: m.Spec, inputs: list[str], where: rc.JsonPath,
                    shown: str) -> Iterator[rc.Located]:
    """A formula that uses bitwise operations on inputs the tables allow as
    float types must be of bitwise operations alone: only then does it read
    their encodings (`families.elementwise.formula_oracle.on_encodings`); mixed with arithmetic it
    could not be evaluated for those types."""
    from dmlconform.families.elementwise.formula_oracle import bitwise_operations, on_encodings  # noqa: PLC0415 - as above

    floats = sorted({t.name for table in spec.support for row in table.rows if row.tensor in inputs
                     for t in row.dtypes if t.is_float})
    if floats and bitwise_operations(tree) and not on_encodings(tree):
        yield where, (f"formula {shown!r} mixes bitwise operations with other ones, and the tables allow "
                      f"{', '.join(floats)} inputs, whose bitwise operations read their encodings: write a formula "
                      "of bitwise operations alone (docs/bitwise.md)")


def _short(text: str) -> str:
    """``text`` on one line, cut to 60 characters (a message names it, not quotes it whole)."""
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:57] + "..."
