"""Reading and writing the small YAML files of CI gating (baselines,
tolerance overrides) with the spec loader's safe reader: no ``yaml.load``,
YAML 1.2 core scalars, every value's line and column kept, and every
problem of a file reported at once (`SpecError` with one line per problem).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

import yaml

from dmlconform import limits
from dmlconform.errors import SpecError
from dmlconform.spec.load import Document, JsonPath, Problem, parse_document, problems_error, read_text, yaml_type
from dmlconform.spec.store import FlowList, QuotingDumper  # quotes what YAML 1.1 or 1.2 could misread


def read_document(path: Path, *, what: str) -> Document:
    """The YAML mapping in ``path``; ``what`` (``a baseline``) words the error
    for an empty file or one that is not a mapping.  The file must be a regular
    file within `limits.GATING_FILE`."""
    text = read_text(path, limit=limits.GATING_FILE)
    try:
        doc = parse_document(text, path=str(path))
    except SpecError as exc:
        if exc.message.startswith("empty file"):
            raise SpecError(f"empty file: {what} is a YAML mapping (docs/baseline.md)", path=path,
                            line=1, column=1) from None
        raise
    if not isinstance(doc.data, dict):
        line, column = doc.where(())
        raise SpecError(f"{what} is a YAML mapping, not {yaml_type(doc.data)}", path=path, line=line, column=column)
    return doc


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def dotted(at: JsonPath) -> str:
    """``overrides[2].ulp``, ``cases['A/FLOAT32/1d'].reason``: a JSON path as a message shows it."""
    out = ""
    for part in at:
        if isinstance(part, int) or not _NAME.match(part):
            out += f"[{part!r}]"
        else:
            out += f".{part}" if out else part
    return out or "top level"


class Problems:
    """Collects the problems of one document, then raises them all at once."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.items: list[Problem] = []

    def add(self, at: JsonPath, message: str, *, at_key: bool = False) -> None:
        self.items.append(Problem(at, f"{dotted(at)}: {message}", "gating", at_key=at_key))

    def keys(self, at: JsonPath, obj: dict[str, Any], *, allowed: Iterable[str], required: Iterable[str] = ()) -> None:
        """Unknown keys (at the key, with the nearest allowed one) and missing required keys."""
        allowed = tuple(allowed)
        for key in obj:
            if key not in allowed:
                near = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"did you mean {near[0]!r}?" if near else f"allowed keys: {', '.join(allowed)}"
                self.add(at + (key,), f"unknown key {key!r}; {hint}", at_key=True)
        for key in required:
            if key not in obj:
                self.add(at, f"missing {key!r}")

    def typed(self, at: JsonPath, value: Any, kind: type | tuple[type, ...], wanted: str) -> bool:
        """Whether ``value`` is of ``kind`` (bool is never a number); adds a problem if not."""
        ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
        if not ok:
            shown = "" if isinstance(value, (dict, list)) or value is None else f" {value!r}"
            self.add(at, f"expected {wanted}, got {yaml_type(value)}{shown}")
        return ok

    def text(self, at: JsonPath, value: Any, *, required: bool) -> str:
        """A string, non-empty when ``required``."""
        if not self.typed(at, value, str, "a string"):
            return ""
        if required and not value.strip():
            self.add(at, "must not be empty")
        return value

    def name(self, at: JsonPath, value: Any, known: Collection[str], what: str) -> str | None:
        """``value`` if it is one of ``known``, else a problem with the nearest name."""
        if not self.typed(at, value, str, f"{what} name"):
            return None
        if value in known:
            return value
        near = difflib.get_close_matches(value, sorted(known), n=1)
        if near:
            hint = f"did you mean {near[0]!r}?"
        elif len(known) > 20:  # every operator: a list nobody reads
            hint = f"it is none of the {len(known)} known, and none is near it"
        else:
            hint = f"expected one of {', '.join(known)}"
        self.add(at, f"unknown {what} {value!r}; {hint}")
        return None

    def raise_if_any(self) -> None:
        if self.items:
            ordered = sorted(self.items, key=lambda p: self.doc.where(p.json_path, key=p.at_key))
            raise problems_error(self.doc, ordered)


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def check_version(problems: Problems, data: dict[str, Any], supported: int = 1) -> None:
    """``version`` is optional; when given it must be ``supported``."""
    if "version" in data and data["version"] != supported:
        problems.add(("version",), f"{data['version']!r} is not supported; this dmlconform reads "
                                   f"version {supported}")


def _flow_tuples(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _flow_tuples(v) for k, v in value.items()}
    return FlowList(value) if isinstance(value, tuple) else value


def dump_yaml(data: dict[str, Any], *, header: str) -> str:
    """Deterministic block YAML (keys in the order given; tuples in flow
    style, ``[FAIL, CRASH]``) after ``header`` as comment lines."""
    body = yaml.dump(_flow_tuples(data), Dumper=QuotingDumper, sort_keys=False, allow_unicode=True, width=4096,
                     default_flow_style=False)
    return "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines()) + body
