"""The docs' attribute domains held against the real DirectML library.

Issue #22 item 4.  For each attribute with a `Domain` (the doc's "This value
cannot be less than 1", "should be between 0.0 and 1.0", "must be less than
the DimensionCount of the InputTensor" ...), `plan` takes one in-table
configuration of its operator (the first `validate.plan` makes) and sets the
attribute just inside and just outside each bound: the bound itself where
it is inclusive and its neighbour outward (float32 for FLOAT, 1 for an
integer), or the reverse where it is exclusive.  A bound through a tensor's
DimensionCount is evaluated on that configuration.  `summarize` compares
CreateOperator's answers with the doc: a value the doc forbids that the
library accepts, or one it allows that the library rejects, is a
disagreement.  The base configuration is tried too: where the library
rejects it, the probes of that operator say nothing (unverified); so does
the rejection of an allowed value other than the one the configuration's
tensors were sized for (JOIN's Axis: unverified, not a disagreement).
Count fields (InputCount, DimensionCount) size arrays and are not probed
alone.

Pure functions; `commands/validate_commands.py` runs the jobs and writes
the report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dmlconform.backends.directml import tables as v
from dmlconform.backends.directml.desc_worker import DescJob
from dmlconform.spec.model import Domain, FeatureLevel, Field, FieldKind, Spec

#: Integer C types an attribute domain applies to, with their range.
_INTEGERS = {"UINT": (0, 2 ** 32 - 1), "INT": (-(2 ** 31), 2 ** 31 - 1)}
_DIMENSION_COUNT = re.compile(r"^([A-Za-z_]\w*)\.DimensionCount(?:\s*-\s*(\d+))?$")
BASE = "base"


@dataclass(frozen=True, slots=True)
class Probe:
    """One desc: ``attribute`` set to ``value`` (``BASE``: the untouched
    configuration), ``allowed`` whether the doc's domain holds it."""

    operator: str
    attribute: str
    value: float | int | None
    allowed: bool
    domain: str
    source: str
    job: DescJob
    fixed: Any = None     # the value the base configuration was built for (`validate.RULES`), if any


@dataclass(frozen=True, slots=True)
class DomainCheck:
    """One probe's outcome: the library's answer and whether it agrees."""

    operator: str
    attribute: str
    domain: str
    value: str
    doc: str            # "allowed" / "forbidden"
    library: str        # "accepted" / "rejected: E_INVALIDARG (0x80070057)" / "crash" / "not built: ..."
    verdict: str        # "agree" / "disagree" / "unverified"
    source: str

    def as_dict(self) -> dict[str, str]:
        return {"operator": self.operator, "attribute": self.attribute, "domain": self.domain, "value": self.value,
                "doc": self.doc, "library": self.library, "verdict": self.verdict, "source": self.source}


def _checked(f: Field) -> bool:
    """Whether ``f``'s domain can be probed: a FLOAT or integer scalar, or an
    integer array (each element), with a bound that is a number or a
    tensor's DimensionCount."""
    if f.domain is None:
        return False
    base = f.c_type.removeprefix("const ").removesuffix("*").strip()
    if f.kind is FieldKind.SCALAR and base in ("FLOAT", *_INTEGERS):
        return True
    return f.kind is FieldKind.ARRAY and base in _INTEGERS


def _bound(value: float | None, symbol: str | None, job: DescJob) -> float | None:
    """A bound as a number on ``job``'s configuration (None: no bound, or a
    symbol it cannot evaluate)."""
    if value is not None:
        return value
    mo = _DIMENSION_COUNT.match(symbol or "")
    tensor = job.tensors.get(mo.group(1)) if mo else None
    if mo is None or not isinstance(tensor, list) or not tensor or not isinstance(tensor[0], str):
        return None
    return len(tensor[1]) - int(mo.group(2) or 0)


def _step(value: float, direction: float, c_type: str) -> float | int:
    """The next value of ``c_type`` from ``value`` towards ``direction``."""
    if c_type in _INTEGERS:
        return int(value) + (1 if direction > 0 else -1)
    return float(np.nextafter(np.float32(value), np.float32(direction)))


def _values(f: Field, job: DescJob) -> Iterator[float | int]:
    """Per bound of ``f``'s domain: the value just inside, just outside,
    and one further out (the bound's size, at least 1, away: Beta1 = 2 for
    ADAM's [0, 1], the value the issue saw rejected); each once."""
    dom = f.domain
    assert dom is not None
    c_type = f.c_type.removeprefix("const ").removesuffix("*").strip()
    for value, symbol, inclusive, inward in ((dom.min, dom.min_symbol, dom.min_inclusive, math.inf),
                                             (dom.max, dom.max_symbol, dom.max_inclusive, -math.inf)):
        bound = _bound(value, symbol, job)
        if bound is None:
            continue
        at = int(bound) if c_type in _INTEGERS else float(np.float32(bound))
        inside, outside = (at, _step(at, -inward, c_type)) if inclusive else (_step(at, inward, c_type), at)
        far = at - math.copysign(max(1, abs(at)), inward)
        far = int(far) if c_type in _INTEGERS else far
        low, high = _INTEGERS.get(c_type, (-float(np.finfo(np.float32).max), float(np.finfo(np.float32).max)))
        yield from dict.fromkeys(x for x in (inside, outside, far) if low <= x <= high)


def _evaluated(dom: Domain, job: DescJob) -> Domain:
    """``dom`` with the bounds a configuration fixes made numbers."""
    return replace(dom, min=_bound(dom.min, dom.min_symbol, job), max=_bound(dom.max, dom.max_symbol, job))


def plan(spec: Spec, max_level: FeatureLevel) -> list[Probe]:
    """The base configuration and the probes of every attribute of ``spec``
    with a domain (none where the operator is newer than the library or has
    no in-table configuration)."""
    counts = {f.count_field for f in spec.fields if f.count_field}
    fields = [f for f in spec.attributes if _checked(f) and f.name not in counts]  # a count sizes arrays: not alone
    base = next((c for c in v.plan(spec, max_level) if c.expect), None) if fields else None
    if base is None:
        return []
    out = [Probe(spec.operator, BASE, None, True, "", "", base.job)]
    for f in fields:
        assert f.domain is not None
        numeric = _evaluated(f.domain, base.job)
        for value in _values(f, base.job):
            current = base.job.attributes.get(f.name)
            setting: Any = [value] * len(current) if isinstance(current, list) and current else \
                ([value] if f.kind is FieldKind.ARRAY else value)
            job = replace(base.job, attributes={**base.job.attributes, f.name: setting})
            out.append(Probe(spec.operator, f.name, value, numeric.contains(value), f.domain.render(),
                             f.domain.source or "", job, current))
    return out


def summarize(probes: Sequence[Probe], results: Sequence[int | str]) -> list[DomainCheck]:
    """One check per probe (the base configurations left out), in order."""
    base: dict[str, str] = {}
    out = []
    for p, r in zip(probes, results):
        answer = v._answer(r)
        if p.attribute == BASE:
            base[p.operator] = answer
            continue
        accepted = answer == v.ACCEPT
        verdict = "agree" if accepted == p.allowed else "disagree"
        if p.allowed and not accepted and p.fixed is not None and p.fixed != p.value and p.fixed != [p.value]:
            verdict = "unverified"  # the tensors were sized for the base value: they may be what is refused
            answer = f"{answer} (the configuration was built for {p.attribute}={_text(p.fixed)})"
        if base.get(p.operator) != v.ACCEPT:
            verdict = "unverified"
            answer = f"{answer} (the base configuration: {base.get(p.operator, '?')})"
        out.append(DomainCheck(p.operator, p.attribute, p.domain, _text(p.value), "allowed" if p.allowed else
                               "forbidden", answer, verdict, p.source))
    return out


def _text(value: Any) -> str:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, float):
        return str(np.float32(value)).removesuffix(".0") if value == float(np.float32(value)) else repr(value)
    return str(value)


def markdown(report: Mapping[str, Any]) -> str:
    """The attribute-domain section of the results page ("" for a report
    without one, written before domains existed)."""
    rows = report.get("domains")
    if not rows:
        return ""
    counts = {k: sum(1 for r in rows if r["verdict"] == k) for k in ("agree", "disagree", "unverified")}
    lines = ["", "## Attribute domains: the doc's ranges vs. the library", "",
             f"Each attribute whose doc states a range, set just inside and just outside each bound on one "
             f"in-table configuration: {counts['agree']} agree, {counts['disagree']} disagree, "
             f"{counts['unverified']} unverified (the base configuration was rejected, or its tensors were sized for another value).", "",
             "| operator | attribute | domain (doc) | value | doc | library | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['operator']} | {r['attribute']} | `{r['domain']}` | {r['value']} | {r['doc']} | "
              f"{r['library']} | {r['verdict']} |" for r in rows]
    return "\n".join(lines) + "\n"
