"""The doc corpus's layout, as `extract` needs it: which pages are operator
pages and what their ``sources`` paths are relative to.

The corpus root is the folder that holds ``operators/`` (beside INDEX.md,
``reference/`` and ``seeds/``, which are not operator pages).  Whatever folder
a user names -- one above the root, the root, ``operators/`` or a folder or
page under it -- a page's path in the specs is relative to that root
(``operators/sdk-api/ns-…md``), so the same pages give the same specs.
Outside any corpus (pages in a folder of their own) paths stay relative to
the named folder's parent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dmlconform import userfiles

#: The corpus folder that holds the operator pages.
OPERATORS = "operators"


@dataclass(frozen=True, slots=True, order=True)
class Skipped:
    """A page under a named corpus root (or a folder above one) that is not
    an operator page."""

    #: Relative to the folder named (a corpus root: the root).
    path: str
    #: Where it lies, for the summary line: the first folder (or the page) outside the corpus's
    #: operators/, as ``reference/`` or ``directml-docs/reference/``.
    place: str


@dataclass(frozen=True, slots=True)
class Sources:
    """What extract reads for the sources a user named."""

    #: Where to search for pages: each named source, a corpus root replaced by its ``operators/``.
    pages: tuple[Path, ...]
    #: Where to search for struct prototypes (``meta/*.c``): a corpus's whole ``operators/`` wherever
    #: in it the source lies (a sdk-api page borrows the scraper's), else the source itself.
    prototypes: tuple[Path, ...]
    #: Pages under a named corpus root (or a folder above one) that are not operator pages, sorted.
    skipped: tuple[Skipped, ...]


def corpus_root(source: Path) -> Path | None:
    """The resolved corpus root ``source`` is, or lies in (under its
    ``operators/``); None outside a corpus.  The nearest such folder wins; a
    folder that merely has an ``operators`` sibling somewhere above is not
    in a corpus."""
    resolved = source.resolve()
    for folder in (resolved, *resolved.parents):
        operators = folder / OPERATORS
        if operators.is_dir() and (resolved == folder or resolved.is_relative_to(operators)):
            return folder
    return None


def display_base(source: Path) -> Path:
    """The folder the paths of ``source``'s pages are written relative to."""
    root = corpus_root(source)
    return root if root is not None else source.resolve().parent


def extract_sources(sources: Iterable[Path]) -> Sources:
    """The `Sources` of the named ``sources``: a folder inside a corpus's
    ``operators/`` is read as it is; a corpus root, or a folder above one
    (``../shared``), reads the ``operators/`` of every corpus in it and skips
    its other pages; a folder in no corpus is read whole, as before."""
    pages: list[Path] = []
    prototypes: list[Path] = []
    skipped: list[Skipped] = []
    for source in sources:
        root = corpus_root(source)
        if root is not None and source.resolve() != root:
            pages.append(source)
            prototypes.append(root / OPERATORS)
            continue
        roots = _roots_in(source)
        if not roots:
            pages.append(source)
            prototypes.append(source)
            continue
        pages.extend(r / OPERATORS for r in roots)
        prototypes.extend(r / OPERATORS for r in roots)
        skipped.extend(_non_operator_pages(source, roots))
    return Sources(tuple(pages), tuple(dict.fromkeys(prototypes)), tuple(sorted(set(skipped))))


def _roots_in(source: Path) -> list[Path]:
    """The corpus roots at or under the folder ``source`` (each folder that
    holds an ``operators`` folder; an ``operators/`` is not searched for
    more), spelled under ``source``; none for a file."""
    if not source.is_dir():
        return []
    roots = []
    for folder, subfolders, _ in os.walk(source):
        if OPERATORS in subfolders and (Path(folder) / OPERATORS).is_dir():
            roots.append(Path(folder))
            subfolders.remove(OPERATORS)
    return sorted(roots)


def _non_operator_pages(source: Path, roots: list[Path]) -> list[Skipped]:
    """The pages under ``source`` outside the ``operators/`` of ``roots``."""
    base = source.resolve()
    resolved_roots = [r.resolve() for r in roots]
    found = (p.resolve() for p in userfiles.find_files([source], ".md").files)
    return [_skipped(p, base, resolved_roots) for p in found if p.is_relative_to(base)
            and not any(p.is_relative_to(r / OPERATORS) for r in resolved_roots)]


def _skipped(page: Path, base: Path, roots: list[Path]) -> Skipped:
    """``page`` relative to ``base``; its place is one component past the
    corpus root that holds it (``directml-docs/reference/``), else past
    ``base`` (``directml-abi/``)."""
    parts = page.relative_to(base).parts
    holders = [len(r.relative_to(base).parts) for r in roots if page.is_relative_to(r)]
    depth = max(holders, default=0) + 1
    place = "/".join(parts[:depth]) + ("/" if depth < len(parts) else "")
    return Skipped("/".join(parts), place)


def skipped_summary(skipped: tuple[Skipped, ...]) -> str:
    """One line for the pages outside ``operators/`` that a corpus root (or
    a folder above one) holds, naming the places they are in."""
    places = sorted({s.place for s in skipped})
    return (f"skipped {len(skipped)} pages that are not operator pages ({', '.join(places)}): "
            "--all-warnings lists them")
