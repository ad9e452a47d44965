"""Which files of a folder are specs and which are their reviewed overlays:
paths only, nothing read, so a command can name its specs before it loads
the YAML reader and the schema (`spec.load`; issue #31: the run starts its
workers first)."""

from __future__ import annotations

from pathlib import Path

from dmlconform import userfiles
from dmlconform.errors import SpecError

#: The folder beside the specs that holds the reviewed overlays (docs/ambiguities.md).
REVIEWED = "reviewed"


def spec_files(paths: list[Path] | tuple[Path, ...]) -> list[Path]:
    """Spec files named by ``paths`` (files, or folders searched for *.yaml),
    sorted.  Whatever a folder holds or a path names that is not a readable
    regular file (a FIFO, a folder named *.yaml, a dangling symbolic link, a
    link out of the folder) is a SpecError naming each one: a spec silently
    left out would change what a run tests."""
    found = userfiles.find_files(paths, ".yaml")
    if found.refused:
        first = found.refused[0]
        raise SpecError(first.reason, path=first.path, problems=tuple(r.error() for r in found.refused))
    specs = [f for f in found.files if not is_overlay(f)]
    known = set(specs)
    orphans = [SpecError(f"overlay {f.name} has no spec {f.parent.parent / f.name}, so nothing reads it: name it "
                         "after its spec file, in the reviewed folder beside it, or remove it", path=f, line=1,
                         column=1)
               for f in found.files if is_overlay(f) and f.parent.parent / f.name not in known]
    if orphans:  # an overlay skipped in silence would leave its semantics untested (issue #33)
        raise SpecError(orphans[0].message, path=orphans[0].path, line=1, column=1, problems=tuple(orphans))
    return specs


def is_overlay(path: Path) -> bool:
    """Whether ``path`` is a reviewed overlay (in a `REVIEWED` folder), not a spec."""
    return path.parent.name == REVIEWED
