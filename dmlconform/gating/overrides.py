"""Tolerance override files (``run --tolerances FILE``, docs/baseline.md):
a team loosens the comparison of one operator x data type, with a reason,
instead of skipping it.  The runner applies them (``run_cases(overrides=)``)
and every report lists them.  DESIGN.md "Comparison, verdicts and reports".
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from dmlconform.gating.files import Problems, check_version, read_document
from dmlconform.results import ToleranceOverride
from dmlconform.spec.model import DATA_TYPE_ORDER, DataType

_KEYS = ("operator", "dtype", "ulp", "bound_factor", "reason")


def _number(problems: Problems, at: tuple[Any, ...], value: Any) -> float | None:
    if not problems.typed(at, value, (int, float), "a number"):
        return None
    if not (math.isfinite(value) and value > 0):
        problems.add(at, f"{value!r} must be a finite number above 0 (2 doubles the error bound)")
        return None
    return float(value)


def _ulp(problems: Problems, at: tuple[Any, ...], value: Any) -> int | None:
    if not problems.typed(at, value, int, "a whole number of ULPs"):
        return None
    if value < 0:
        problems.add(at, f"{value!r} must be 0 or more")
        return None
    return value


def _override(problems: Problems, at: tuple[Any, ...], item: Any, operators: Collection[str]) -> ToleranceOverride | None:
    if not problems.typed(at, item, dict, "a mapping with operator, dtype, ulp and/or bound_factor, reason"):
        return None
    problems.keys(at, item, allowed=_KEYS, required=("operator", "dtype", "reason"))
    operator = problems.name(at + ("operator",), item["operator"], operators, "operator") \
        if "operator" in item else None
    floats = [t.name for t in DataType if t.is_float]
    dtype = None
    if "dtype" in item:
        value = item["dtype"]
        if isinstance(value, str) and value in DataType.__members__ and value not in floats:
            problems.add(at + ("dtype",), f"{value} is an integer type, which compares exactly; "
                                          f"overrides apply to {', '.join(floats)}")
        else:
            dtype = problems.name(at + ("dtype",), value, floats, "float data type")
    ulp = _ulp(problems, at + ("ulp",), item["ulp"]) if "ulp" in item else None
    factor = _number(problems, at + ("bound_factor",), item["bound_factor"]) if "bound_factor" in item else None
    if "ulp" not in item and "bound_factor" not in item:
        problems.add(at, "give ulp (the ULP budget) or bound_factor (a multiplier of the error bound), or both")
    reason = problems.text(at + ("reason",), item.get("reason", "x"), required=True)
    if operator is None or dtype is None:
        return None
    return ToleranceOverride(operator=operator, dtype=dtype, ulp=ulp, bound_factor=factor, reason=reason)


def read_overrides(path: Path, *, operators: Collection[str]) -> tuple[ToleranceOverride, ...]:
    """The overrides in ``path``, sorted by operator and data type.  An unknown
    operator (not in ``operators``) or data type, an integer type, a duplicate
    pair or a missing reason is a `SpecError` at file:line:col (exit 2)."""
    doc = read_document(path, what="a tolerance override file")
    problems = Problems(doc)
    problems.keys((), doc.data, allowed=("version", "overrides"), required=("overrides",))
    check_version(problems, doc.data)
    items = doc.data.get("overrides", [])
    found: dict[tuple[str, str], tuple[int, int]] = {}
    out: list[ToleranceOverride] = []
    if problems.typed(("overrides",), items, list, "a list of overrides"):
        for i, item in enumerate(items):
            override = _override(problems, ("overrides", i), item, operators)
            if override is None:
                continue
            pair = (override.operator, override.dtype)
            if pair in found:
                line, column = found[pair]
                problems.add(("overrides", i), f"{pair[0]} {pair[1]} is overridden twice (first at {line}:{column})")
                continue
            found[pair] = doc.where(("overrides", i))
            out.append(override)
    problems.raise_if_any()
    return sort_overrides(out)


def sort_overrides(overrides: Iterable[ToleranceOverride]) -> tuple[ToleranceOverride, ...]:
    """By operator, then data type in canonical order."""
    order = {t.name: i for i, t in enumerate(DATA_TYPE_ORDER)}
    return tuple(sorted(overrides, key=lambda o: (o.operator, order.get(o.dtype, len(order)), o.dtype)))


def by_pair(overrides: Iterable[ToleranceOverride]) -> Mapping[tuple[str, str], ToleranceOverride]:
    """What ``run_cases(overrides=)`` takes: (operator, data type name) -> override."""
    return {(o.operator, o.dtype): o for o in overrides}

