"""The reviewed overlay of a spec: ``specs/reviewed/<OPERATOR>.yaml``,
written by hand, never by extract.

Issue #24 item 1; the folder is the one the ambiguity overlays use
(docs/ambiguities.md: its ``ambiguities`` key).  This module owns the
``semantics`` key: its ``family`` names a kind (`Kind`), whose schema,
record and checks live in their family's package
(`families.<family>.overlay`, given by `families.Family.overlay`).  In the overlay `load.read_overlay` parsed and checked once, it checks
their shape and then checks them against the spec's fields (names, kinds,
roles) and support tables (dimension counts per level, data types), every
problem located at its line and column of the overlay.  `catalog.load_spec`
attaches the semantics to the spec it loads; `lint` reports the same
problems (through it).  ``ambiguities`` are `load`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from dmlconform.errors import LocatedError, SpecError
from dmlconform.spec import load
from dmlconform.spec import model as m
from dmlconform.spec.reviewed_checks import JsonPath, Kind, Located


def with_semantics(spec: m.Spec, doc: load.Document, kinds: Mapping[str, Kind]) -> m.Spec:
    """``spec`` with the semantics of its overlay ``doc`` (read and checked
    as an overlay by `load.read_overlay`), where it has any, built by their
    kind in ``kinds`` (``semantics.family`` -> kind: every family's,
    `catalog`); a problem in them is a SpecError at its place in the overlay."""
    semantics = doc.data.get("semantics")
    if semantics is None:
        return spec
    given = semantics.get("family")  # the overlay's schema made it a mapping
    kind = kinds.get(given) if isinstance(given, str) else None
    if kind is None:
        where = ("semantics", "family") if "family" in semantics else ("semantics",)
        raise _error(doc, [(where, f"semantics.family is {given!r}, no kind of semantics; write one of "
                                   f"{', '.join(kinds)}")])
    problems = list(_shape_problems(semantics, kind)) or list(kind.against_spec(semantics, spec))
    if problems:
        raise _error(doc, problems)
    return kind.build(semantics).attach(spec)


def _shape_problems(semantics: Any, kind: Kind) -> Iterator[Located]:
    """What ``kind``'s schema finds, at paths from the overlay's top."""
    for error in sorted(_validator(kind).iter_errors(semantics),
                        key=lambda e: [str(p) for p in e.absolute_path]):
        leaf = min(error.context, key=lambda e: -len(e.absolute_path)) if error.context else error
        where = ("semantics", *leaf.absolute_path)
        yield where, f"{'.'.join(str(p) for p in where)}: {leaf.message}"


@functools.cache
def _validator(kind: Kind) -> Any:
    import jsonschema  # noqa: PLC0415 - jsonschema (~0.1 s) only where an overlay is read

    schema = kind.schema
    return jsonschema.validators.validator_for(schema)(schema)


def _at(doc: load.Document, where: JsonPath, message: str) -> LocatedError:
    line, column = doc.where(where)
    return LocatedError(message, path=doc.path, line=line, column=column)


def _error(doc: load.Document, problems: list[Located]) -> SpecError:
    located = tuple(_at(doc, where, message) for where, message in problems)
    first = located[0]
    return SpecError(first.message, path=doc.path, line=first.line, column=first.column, problems=located)
