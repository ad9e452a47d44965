"""report.json: the whole truth of a run, machine readable, and read back.

``dumps`` writes strict JSON (no NaN/Infinity tokens: non-finite floats and
-0.0 become the strings ``"nan"``, ``"inf"``, ``"-inf"``, ``"-0"``), sorted
keys, so the same `RunResult` always gives the same bytes.  ``loads`` is its
inverse over the ``run`` and ``cases`` members (``summary``, ``groups`` and
``coverage`` are derived, written for readers, and ignored on load).  The
schema is documented in docs/report-json.md.

DESIGN.md "Comparison, verdicts and reports".
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from dmlconform import limits
from dmlconform.errors import InputError
from dmlconform.report.coverage import count_outcomes, group_rows, summarise
from dmlconform.report.distance import distance_text
from dmlconform.report.readings import summarize as summarize_readings
from dmlconform.results import (
    OUTCOME_ORDER,
    AmbiguityWords,
    Baseline,
    BaselineEntry,
    CaseResult,
    ElementDiff,
    Outcome,
    RunResult,
    ToleranceOverride,
)
from dmlconform.userfiles import loads_json, read_text

FORMAT = "dmlconform-report"
VERSION = 1

#: Spellings of the floats strict JSON has no number for.
_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}

T = TypeVar("T")


def encode_float(x: float) -> float | str:
    """A JSON value for ``x``: a number, or one of the strings in ``_SPECIAL``."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0.0 and math.copysign(1.0, x) < 0:
        return "-0"
    return x


def _diff_json(d: ElementDiff) -> dict[str, Any]:
    return {
        "output": d.output, "index": list(d.index),
        "inputs": [[name, encode_float(v)] for name, v in d.inputs],
        "expected": encode_float(d.expected), "actual": encode_float(d.actual),
        "ulp": d.ulp, "distance": distance_text(d.expected, d.actual, d.ulp),
        "bound": encode_float(d.bound), "verdict": d.verdict,
    }


def _case_json(c: CaseResult) -> dict[str, Any]:
    out = {
        "case_id": c.case_id, "operator": c.operator, "dtype": c.dtype, "level": c.level,
        "dims": c.dims, "layout": c.layout, "outcome": c.outcome.value, "message": c.message,
        "expect_supported": c.expect_supported, "elements": c.elements, "counts": list(c.counts),
        "max_ulp": c.max_ulp, "worst": [_diff_json(d) for d in c.worst],
        "alternatives": [[name, n] for name, n in c.alternatives], "edges": list(c.edges),
        "seconds": encode_float(c.seconds), "repro": c.repro,
    }
    if c.readings:  # only where a reading was in play: reports without ambiguities stay as they were
        out["readings"] = [list(r) for r in c.readings]
    if c.refused:  # only where the backend refused a configuration the table supports
        out["refused"] = True
    return out


def _run_json(run: RunResult) -> dict[str, Any]:
    out = _run_facts(run)
    declared = run.float16_accumulation  # only where declared: reports of other backends stay as they were
    if declared:  # True, or the operators named (none: nothing to show)
        out["float16_accumulation"] = list(declared) if isinstance(declared, tuple) else True
    if run.subset:  # only where declared: a backend that claims the tables writes what it always wrote
        out["subset"] = True
    if run.ambiguities:  # only where a case told readings apart
        out["ambiguities"] = [{"operator": a.operator, "ambiguity": a.ambiguity, "question": a.question,
                               "readings": [list(r) for r in a.readings]} for a in run.ambiguities]
    return out


def _run_facts(run: RunResult) -> dict[str, Any]:
    return {
        "run_id": run.run_id, "backend": run.backend, "device": run.device,
        "backend_version": run.backend_version, "feature_level": run.feature_level,
        "flush_subnormals": run.flush_subnormals, "seed": run.seed, "command": run.command,
        "started": run.started, "finished": run.finished,
        "strict": run.strict, "shard": run.shard, "merged_from": list(run.merged_from),
        "tolerances": run.tolerances, "overrides": [_override_json(o) for o in run.overrides],
        "baseline": None if run.baseline is None else _baseline_json(run.baseline),
        "interrupted": run.interrupted, "seconds": encode_float(run.seconds),
    }


def _override_json(o: ToleranceOverride) -> dict[str, Any]:
    return {"operator": o.operator, "dtype": o.dtype, "ulp": o.ulp,
            "bound_factor": None if o.bound_factor is None else encode_float(o.bound_factor), "reason": o.reason}


def _baseline_json(b: Baseline) -> dict[str, Any]:
    return {"path": b.path, "stale": list(b.stale), "entries": [
        {"key": e.key, "pattern": e.pattern, "reason": e.reason, "issue": e.issue,
         "outcomes": [o.value for o in e.outcomes]} for e in b.entries]}


def _outcomes_json(counts: tuple[tuple[Outcome, int], ...]) -> dict[str, int]:
    return {o.value: n for o, n in counts}


def _members(record: Any) -> dict[str, Any]:
    """A flat record's fields by name, as they are (``dataclasses.asdict``
    deep-copies every value: most of a report's coverage time)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


def to_json(run: RunResult) -> dict[str, Any]:
    """The report as plain JSON data (see docs/report-json.md); ``readings``
    (which reading of each ambiguity the backend took) only where a case
    told readings apart, so reports without ambiguities stay as they were."""
    out = _report_json(run)
    taken = summarize_readings(run.cases)
    if taken:
        out["readings"] = [t.to_json() for t in taken]
    return out


def _report_json(run: RunResult) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "run": _run_json(run),
        "summary": {"cases": len(run.cases), "failed": run.failed,
                    "outcomes": _outcomes_json(count_outcomes(run.cases)),
                    "wrong_values": run.wrong_values, "refused": run.refused},
        "groups": [
            {"operator": g.operator, "dtype": g.dtype, "level": g.level, "cases": len(g.cases),
             "worst": g.worst.value, "outcomes": _outcomes_json(g.counts),
             "seconds": encode_float(g.seconds)}
            for g in group_rows(run)
        ],
        "cases": [_case_json(c) for c in run.cases],
        "coverage": [
            {**_members(op), "dims": [[k, n] for k, n in op.dims],
             "layouts": [[k, n] for k, n in op.layouts], "edges": [[k, n] for k, n in op.edges],
             "dtypes": list(op.dtypes), "levels": list(op.levels)}
            for op in summarise(run).operators
        ],
    }


#: One line of JSON per value, by the C encoder (``indent`` would take the
#: pure-Python one, about five times slower on a suite's report).
_LINE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def dumps(run: RunResult) -> str:
    """report.json text: strict JSON, sorted keys, one top-level member per
    line, and in the arrays (``cases``, ``groups``, ``coverage``...) one
    element per line; newline at the end (docs/report-json.md, Encoding)."""
    members = sorted(to_json(run).items())
    lines = ["{"]
    for k, (key, value) in enumerate(members):
        comma = "," if k < len(members) - 1 else ""
        if isinstance(value, list) and value:
            elements = ",\n".join("  " + _LINE.encode(v) for v in value)
            lines.append(f" {_LINE.encode(key)}: [\n{elements}\n ]{comma}")
        else:
            lines.append(f" {_LINE.encode(key)}: {_LINE.encode(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- reading back


class _Bad(Exception):
    """A value at ``where`` (a JSON path such as ``cases[3].worst[0].ulp``) is wrong."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")


def _type_name(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null",
            int: "integer", float: "number"}.get(type(value), type(value).__name__)


def _get(obj: dict[str, Any], key: str, where: str, check: Callable[[Any, str], T]) -> T:
    if key not in obj:
        raise _Bad(where, f"missing member {key!r}")
    return check(obj[key], f"{where}.{key}" if where else key)


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(where, f"expected an object, got {_type_name(value)}")
    return value


def _arr(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Bad(where, f"expected an array, got {_type_name(value)}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Bad(where, f"expected a string, got {_type_name(value)} {value!r}")
    return value


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(where, f"expected an integer, got {_type_name(value)} {value!r}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _Bad(where, f"expected true or false, got {_type_name(value)} {value!r}")
    return value


def decode_float(value: Any, where: str) -> float:
    """Inverse of `encode_float`."""
    if isinstance(value, str) and value in _SPECIAL:
        return _SPECIAL[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(where, f"expected a number or one of {sorted(_SPECIAL)}, got {value!r}")
    return float(value)


def _outcome(value: Any, where: str) -> Outcome:
    text = _str(value, where)
    try:
        return Outcome(text)
    except ValueError:
        raise _Bad(where, f"unknown outcome {text!r} (known: {', '.join(o.value for o in OUTCOME_ORDER)})") from None


def _items(value: Any, where: str, item: Callable[[Any, str], T]) -> tuple[T, ...]:
    return tuple(item(v, f"{where}[{i}]") for i, v in enumerate(_arr(value, where)))


def _pair(first: Callable[[Any, str], Any], second: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    def check(value: Any, where: str) -> tuple[Any, Any]:
        if not isinstance(value, list) or len(value) != 2:
            raise _Bad(where, f"expected a [name, value] pair, got {value!r}")
        return first(value[0], f"{where}[0]"), second(value[1], f"{where}[1]")
    return check


def _ulp(value: Any, where: str) -> int | None:
    """A ULP distance: 0 or more, or null where there is none.  Reports
    written before null was (version 1 all the same) hold -1 there: read as null."""
    if value is None:
        return None
    ulp = _int(value, where)
    if ulp == -1:
        return None
    if ulp < 0:
        raise _Bad(where, f"expected an integer of 0 or more, or null (not comparable), got {ulp!r}")
    return ulp


def _diff(value: Any, where: str) -> ElementDiff:
    o = _obj(value, where)
    return ElementDiff(
        output=_get(o, "output", where, _str),
        index=_get(o, "index", where, lambda v, w: _items(v, w, _int)),
        inputs=_get(o, "inputs", where, lambda v, w: _items(v, w, _pair(_str, decode_float))),
        expected=_get(o, "expected", where, decode_float),
        actual=_get(o, "actual", where, decode_float),
        ulp=_get(o, "ulp", where, _ulp),
        bound=_get(o, "bound", where, decode_float),
        verdict=_get(o, "verdict", where, _str),
    )


def _counts(value: Any, where: str) -> tuple[int, int, int]:
    counts = _items(value, where, _int)
    if len(counts) != 3:
        raise _Bad(where, f"expected 3 counts [PASS, QUALITY_WARNING, FAIL], got {len(counts)}")
    return counts[0], counts[1], counts[2]


def _opt(obj: dict[str, Any], key: str, where: str, check: Callable[[Any, str], T], default: T) -> T:
    """A member added after version 1 was first written: absent in older reports."""
    return _get(obj, key, where, check) if key in obj else default


#: ``run.float16_accumulation`` of a report that has none: no operator declared.
_NONE_DECLARED: bool | tuple[str, ...] = ()


def _float16(value: Any, where: str) -> bool | tuple[str, ...]:
    """``run.float16_accumulation``: true (every operator), false, or the operator names."""
    if isinstance(value, bool):
        return value or ()
    if not isinstance(value, list):
        raise _Bad(where, f"expected true, false or an array of operator names, got {_type_name(value)} {value!r}")
    return tuple(sorted(_items(value, where, _str)))


def _nullable(check: Callable[[Any, str], T]) -> Callable[[Any, str], T | None]:
    return lambda v, w: None if v is None else check(v, w)


def _override(value: Any, where: str) -> ToleranceOverride:
    o = _obj(value, where)
    return ToleranceOverride(
        operator=_get(o, "operator", where, _str), dtype=_get(o, "dtype", where, _str),
        ulp=_get(o, "ulp", where, _nullable(_int)), bound_factor=_get(o, "bound_factor", where, _nullable(decode_float)),
        reason=_get(o, "reason", where, _str))


def _entry(value: Any, where: str) -> BaselineEntry:
    o = _obj(value, where)
    return BaselineEntry(
        key=_get(o, "key", where, _str), reason=_get(o, "reason", where, _str),
        pattern=_get(o, "pattern", where, _bool), issue=_get(o, "issue", where, _str),
        outcomes=_get(o, "outcomes", where, lambda v, w: _items(v, w, _outcome)))


def _baseline(value: Any, where: str) -> Baseline:
    o = _obj(value, where)
    return Baseline(path=_get(o, "path", where, _str),
                    entries=_get(o, "entries", where, lambda v, w: _items(v, w, _entry)),
                    stale=_get(o, "stale", where, lambda v, w: _items(v, w, _str)))


def _case(value: Any, where: str) -> CaseResult:
    o = _obj(value, where)
    return CaseResult(
        case_id=_get(o, "case_id", where, _str), operator=_get(o, "operator", where, _str),
        dtype=_get(o, "dtype", where, _str), level=_get(o, "level", where, _str),
        dims=_get(o, "dims", where, _int), layout=_get(o, "layout", where, _str),
        outcome=_get(o, "outcome", where, _outcome), message=_get(o, "message", where, _str),
        expect_supported=_get(o, "expect_supported", where, _bool),
        elements=_get(o, "elements", where, _int), counts=_get(o, "counts", where, _counts),
        max_ulp=_get(o, "max_ulp", where, _int),
        worst=_get(o, "worst", where, lambda v, w: _items(v, w, _diff)),
        alternatives=_get(o, "alternatives", where, lambda v, w: _items(v, w, _pair(_str, _int))),
        edges=_get(o, "edges", where, lambda v, w: _items(v, w, _str)),
        seconds=_get(o, "seconds", where, decode_float), repro=_get(o, "repro", where, _str),
        readings=_get(o, "readings", where, _reading_uses) if "readings" in o else (),
        refused=_opt(o, "refused", where, _bool, False),
    )


def _reading_uses(value: Any, where: str) -> tuple[tuple[str, int, int], ...]:
    """A case's ``readings``: [name, elements, matched] each."""
    def use(item: Any, at: str) -> tuple[str, int, int]:
        if not isinstance(item, list) or len(item) != 3:
            raise _Bad(at, f"expected [name, elements, matched], got {item!r}")
        return _str(item[0], f"{at}[0]"), _int(item[1], f"{at}[1]"), _int(item[2], f"{at}[2]")
    return _items(value, where, use)


def from_json(data: Any) -> RunResult:
    """A `RunResult` from parsed report.json data; raises `_Bad` naming the JSON path."""
    top = _obj(data, "$")
    if top.get("format") != FORMAT:
        raise _Bad("format", f"expected {FORMAT!r}, got {top.get('format')!r}: not a dmlconform report")
    if top.get("version") != VERSION:
        raise _Bad("version", f"expected {VERSION}, got {top.get('version')!r}; "
                   "write the report again with this dmlconform version")
    run = _get(top, "run", "", _obj)
    return RunResult(
        run_id=_get(run, "run_id", "run", _str), backend=_get(run, "backend", "run", _str),
        device=_get(run, "device", "run", _str), backend_version=_get(run, "backend_version", "run", _str),
        feature_level=_get(run, "feature_level", "run", _str),
        flush_subnormals=_get(run, "flush_subnormals", "run", _bool), seed=_get(run, "seed", "run", _int),
        command=_get(run, "command", "run", _str), started=_get(run, "started", "run", _str),
        finished=_get(run, "finished", "run", _str),
        cases=_get(top, "cases", "", lambda v, w: _items(v, w, _case)),
        strict=_opt(run, "strict", "run", _bool, False), shard=_opt(run, "shard", "run", _str, ""),
        merged_from=_opt(run, "merged_from", "run", lambda v, w: _items(v, w, _str), ()),
        tolerances=_opt(run, "tolerances", "run", _str, ""),
        overrides=_opt(run, "overrides", "run", lambda v, w: _items(v, w, _override), ()),
        baseline=_opt(run, "baseline", "run", _nullable(_baseline), None),
        interrupted=_opt(run, "interrupted", "run", _bool, False),
        seconds=_opt(run, "seconds", "run", decode_float, 0.0),
        float16_accumulation=_opt(run, "float16_accumulation", "run", _float16, _NONE_DECLARED),
        subset=_opt(run, "subset", "run", _bool, False),
        ambiguities=_opt(run, "ambiguities", "run", lambda v, w: _items(v, w, _ambiguity_words), ()),
    )


def _ambiguity_words(value: Any, where: str) -> AmbiguityWords:
    o = _obj(value, where)
    return AmbiguityWords(operator=_get(o, "operator", where, _str), ambiguity=_get(o, "ambiguity", where, _str),
                          question=_get(o, "question", where, _str),
                          readings=_get(o, "readings", where, lambda v, w: _items(v, w, _pair(_str, _str))))


def from_data(data: Any, *, path: str | Path) -> RunResult:
    """`from_json`, a bad value being an `InputError` naming ``path`` and the
    JSON path of the value."""
    try:
        return from_json(data)
    except _Bad as exc:
        raise InputError(f"{path}: bad report: {exc}") from None


def loads(text: str, *, path: str | Path) -> RunResult:
    """Read report.json text back into the `RunResult` it was written from.

    Raises a `LocatedError` at the line and column of a JSON syntax error (or
    of nesting deeper than `limits.MAX_NESTING`), an `InputError` naming
    ``path`` and, for a bad value, where in the document it is."""
    return from_data(loads_json(text, path=path, strict=True), path=path)


def read(path: Path) -> RunResult:
    """The report.json file ``path``: a regular file within `limits.REPORT`,
    read only after that is checked (see `dmlconform.userfiles`)."""
    return loads(read_text(path, limits.REPORT), path=path)
