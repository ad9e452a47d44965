"""The doc corpus's layout, as `extract` needs it: which pages are operator
pages and what their ``sources`` paths are relative to.

The corpus root is the folder that holds ``operators/`` (beside INDEX.md,
``reference/`` and ``seeds/``, which are not operator pages).  Whatever folder
of the corpus a user names -- the root, ``operators/`` or a folder or page
under it -- a page's path in the specs is relative to that root
(``operators/sdk-api/ns-…md``), so the same pages give the same specs.
Outside any corpus (pages in a folder of their own) paths stay relative to
the named folder's parent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dmlconform import userfiles

#: The corpus folder that holds the operator pages.
OPERATORS = "operators"


@dataclass(frozen=True, slots=True)
class Sources:
    """What extract reads for the sources a user named."""

    #: Where to search for pages: each named source, a corpus root replaced by its ``operators/``.
    pages: tuple[Path, ...]
    #: Where to search for struct prototypes (``meta/*.c``): a corpus's whole ``operators/`` wherever
    #: in it the source lies (a sdk-api page borrows the scraper's), else the source itself.
    prototypes: tuple[Path, ...]
    #: Pages under a named corpus root that are not operator pages, root-relative, sorted.
    skipped: tuple[str, ...]


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
    """The `Sources` of the named ``sources``."""
    pages: list[Path] = []
    prototypes: list[Path] = []
    skipped: list[str] = []
    for source in sources:
        root = corpus_root(source)
        if root is None:
            pages.append(source)
            prototypes.append(source)
            continue
        prototypes.append(root / OPERATORS)
        if source.resolve() != root:
            pages.append(source)
            continue
        pages.append(source / OPERATORS)
        skipped.extend(_non_operator_pages(source, root))
    return Sources(tuple(pages), tuple(dict.fromkeys(prototypes)), tuple(sorted(set(skipped))))


def _non_operator_pages(source: Path, root: Path) -> list[str]:
    """The pages under a corpus root that are not under its ``operators/``."""
    operators = root / OPERATORS
    found = userfiles.find_files([source], ".md").files
    resolved = (p.resolve() for p in found)
    return [p.relative_to(root).as_posix() for p in resolved if not p.is_relative_to(operators)]


def skipped_summary(skipped: tuple[str, ...]) -> str:
    """One line for the pages a corpus root holds that are not operator
    pages, naming the folders (and top-level pages) they are in."""
    places = sorted({p.split("/", 1)[0] + ("/" if "/" in p else "") for p in skipped})
    return (f"skipped {len(skipped)} pages that are not operator pages ({', '.join(places)}): "
            "--all-warnings lists them")
