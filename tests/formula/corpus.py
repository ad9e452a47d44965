"""Formula coverage over the doc corpus (DESIGN.md, "The spec"; issue 4 part 2).

A test helper and a script: ``python tests/formula/corpus.py [DOCS_ROOT]`` prints
per folder the pages with a formula block, those whose blocks all parse, and
those the oracle can evaluate, then every page that is not evaluable with its
reason.  The block and field finders here are deliberately small: the real
extractor lives in ``spec/extract.py``; this only has to find fenced blocks in
the description section and the documented field names.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from dmlconform.formula.classify import NotParsed, Parsed, classify

FOLDERS = ("sdk-api", "windows-ai-docs", "windows-docs-scraper")
DEFAULT_ROOT = Path(__file__).resolve().parents[3] / "shared" / "directml-docs"

_DESCRIPTION = re.compile(r"^(?:## -description|## Description|# DML_\w+ structure.*)\s*$", re.M)
_NEXT_SECTION = re.compile(r"^##? ", re.M)
_BLOCK = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
_FIELD = re.compile(r"^(?:### -field (\w+)|### `(\w+)`|`(\w+)`)\s*\n\s*\nType: (.*)$", re.M)
_ROW = re.compile(r"^\| (\w+) \| ((?:Optional )?(?:input|output)|Array of (?:inputs|outputs)) \|", re.M | re.I)


@dataclass(frozen=True)
class Block:
    text: str
    first_line: int


@dataclass(frozen=True)
class PageResult:
    path: str
    results: tuple[Parsed | NotParsed, ...]

    @property
    def parsed(self) -> bool:
        return all(isinstance(r, Parsed) for r in self.results)

    @property
    def evaluable(self) -> bool:
        return len(self.results) == 1 and isinstance(self.results[0], Parsed) and self.results[0].evaluable

    @property
    def reason(self) -> str:
        for r in self.results:
            if isinstance(r, NotParsed):
                return f"{r.category.value}: {r.reason}"
            if not r.evaluable:
                return f"parsed, not evaluable: {r.reason}"
        return "several formula blocks (steps of one operator)" if len(self.results) > 1 else ""


def description_blocks(text: str) -> tuple[Block, ...]:
    m = _DESCRIPTION.search(text)
    if not m:
        return ()
    end = _NEXT_SECTION.search(text, m.end())
    section_start = m.end()
    section = text[section_start: end.start() if end else len(text)]
    base = text[:section_start].count("\n") + 1
    return tuple(Block(b.group(1), base + section[: b.start(1)].count("\n")) for b in _BLOCK.finditer(section))


def fields(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(documented field names in order, input tensors, output tensors).  The
    role of a tensor comes from the support table's Kind column, else from its
    name."""
    found = [(next(g for g in m.groups()[:3] if g), m.group(4)) for m in _FIELD.finditer(text)]
    names = tuple(dict.fromkeys(n for n, _ in found))
    kinds = {m.group(1): m.group(2).lower() for m in _ROW.finditer(text)}
    tensors = [n for n, t in found if "DML_TENSOR_DESC" in t]
    outputs = tuple(t for t in tensors if "output" in kinds.get(t, t.lower()[:6]))
    return names, tuple(t for t in tensors if t not in outputs), outputs


def classify_page(path: Path) -> PageResult | None:
    text = path.read_text(encoding="utf-8")
    blocks = description_blocks(text)
    if not blocks:
        return None
    names, inputs, outputs = fields(text)
    results = tuple(
        classify(b.text, names, inputs=inputs, outputs=outputs, origin=str(path), first_line=b.first_line)
        for b in blocks
    )
    return PageResult(str(path), results)


def survey(root: Path = DEFAULT_ROOT) -> dict[str, tuple[PageResult, ...]]:
    out = {}
    for folder in FOLDERS:
        pages = sorted((root / "operators" / folder).glob("*.md"))
        out[folder] = tuple(r for r in map(classify_page, pages) if r is not None)
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else DEFAULT_ROOT
    table = survey(root)
    print(f"{'folder':<22}{'formula pages':>14}{'parsed':>8}{'evaluable':>11}")
    for folder, pages in table.items():
        parsed = sum(p.parsed for p in pages)
        evaluable = sum(p.evaluable for p in pages)
        print(f"{folder:<22}{len(pages):>14}{parsed:>8}{evaluable:>11}")
    for folder, pages in table.items():
        print(f"\n{folder}: not evaluable")
        for p in pages:
            if not p.evaluable:
                print(f"  {Path(p.path).name[15:-3]}: {p.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
