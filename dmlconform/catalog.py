"""The specs as the operator families read them: a spec file with its
reviewed overlay's ambiguities and ``semantics``, the latter built by the
kind their family gives (`families.Family.overlay`).

`spec.load` reads a spec and its overlay and knows no family; this is the
one place the two meet, above the families (docs/architecture.md, Layers).
"""

from __future__ import annotations

from pathlib import Path

from dmlconform.families import overlay_kinds
from dmlconform.spec import model as m
from dmlconform.spec.load import corrected, read_spec
from dmlconform.spec.reviewed import with_semantics


def load_spec(path: Path) -> m.Spec:
    """The spec in ``path``, with the reviewed ambiguities and semantics of
    its overlay (``reviewed/<file name>`` beside it, where there is one)
    merged in; a problem anywhere is a SpecError at its place."""
    spec, overlay = read_spec(path)
    return spec if overlay is None else with_semantics(corrected(spec, overlay), overlay, overlay_kinds())
