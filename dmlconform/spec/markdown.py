"""Just enough Markdown for the DirectML docs: front matter, sections, fenced
code, pipe tables and inline markup, every piece keeping its 1-based line.

No Markdown library: the docs use a small subset, and what we need from each
piece is its line number, which general renderers throw away.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from dmlconform.errors import SpecError
from dmlconform.spec.load import parse_document

_HEADING = re.compile(r"^(#{1,6})\s*(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    text: str


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the lines up to the next heading of the same or higher level."""

    title: str
    level: int          # 1-6; 0 for the text before the first heading
    line: int           # line of the heading (or 1)
    lines: tuple[Line, ...]
    heading: Line | None = None

    @property
    def key(self) -> str:
        """Normalised title: lower case, leading '-' dropped, spaces collapsed."""
        return re.sub(r"\s+", " ", self.title.lstrip("-").strip().lower())


@dataclass(frozen=True, slots=True)
class CodeBlock:
    line: int           # line of the opening fence
    info: str           # the fence's info string, e.g. "cpp"
    text: str           # the content, verbatim, newline-terminated


@dataclass(frozen=True, slots=True)
class Table:
    line: int
    header: tuple[str, ...]
    rows: tuple[tuple[Line, tuple[str, ...]], ...]
    header_text: str = ""   # the header row as written


def split_front_matter(lines: list[Line]) -> tuple[dict[str, object], list[Line], str | None]:
    """(front matter, remaining lines, problem).  The front matter is read with
    the safe loader; a block that does not parse falls back to ``key: value`` lines."""
    if not lines or lines[0].text.strip() != "---":
        return {}, lines, None
    end = next((i for i in range(1, len(lines)) if lines[i].text.strip() == "---"), None)
    if end is None:
        return {}, lines, "front matter opened with '---' on line 1 is never closed"
    block = "\n".join(line.text for line in lines[1:end])
    data, problem = _front_matter_yaml(block)
    if not isinstance(data, dict):
        problem = problem or "front matter is not a YAML mapping; read it line by line"
        pairs: dict[str, str] = {}
        for line in lines[1:end]:
            key, sep, value = line.text.partition(":")
            if sep and not key.startswith((" ", "-")):
                pairs[key.strip()] = value.strip()
        data = pairs
    return {str(k): v for k, v in data.items()}, lines[end + 1:], problem


def _front_matter_yaml(block: str) -> tuple[object, str | None]:
    """The front matter's data, read with the spec loader's guarded reader
    (no aliases, nesting bounded: a page is untrusted input), or why not."""

    if not block.strip():
        return None, None
    try:
        return parse_document(block, path="front matter").data, None
    except SpecError as exc:
        if exc.message.startswith("empty file"):  # comments only
            return None, None
        return None, (f"front matter is not valid YAML (line {exc.line + 1}: {exc.message}); "
                      "read it line by line")


def to_lines(text: str) -> list[Line]:
    return [Line(i + 1, t) for i, t in enumerate(text.splitlines())]


def sections(lines: list[Line]) -> list[Section]:
    """Flat list of sections in page order: each heading with the lines up to
    the next heading of any level.  Headings inside fenced code are text."""
    out: list[Section] = []
    title, level, start = "", 0, lines[0].number if lines else 1
    body: list[Line] = []
    heading: Line | None = None
    in_fence = False
    for line in lines:
        if _FENCE.match(line.text):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line.text)
        if m and line.text.startswith("#"):
            out.append(Section(title, level, start, tuple(body), heading))
            title, level, start, body, heading = m.group(2), len(m.group(1)), line.number, [], line
        else:
            body.append(line)
    out.append(Section(title, level, start, tuple(body), heading))
    return out


def subtree(secs: list[Section], sec: Section) -> list[Line]:
    """``sec``'s lines followed by those of the deeper sections under it,
    their heading lines included."""
    i = next(k for k, s in enumerate(secs) if s is sec)
    out = list(sec.lines)
    for s in secs[i + 1:]:
        if s.level <= sec.level:
            break
        out.extend(([s.heading] if s.heading else []) + list(s.lines))
    return out


def code_blocks(lines: tuple[Line, ...] | list[Line]) -> list[CodeBlock]:
    blocks: list[CodeBlock] = []
    opening: Line | None = None
    info = ""
    content: list[str] = []
    for line in lines:
        m = _FENCE.match(line.text)
        if opening is None and m:
            opening, info, content = line, m.group(2), []
        elif opening is not None and line.text.strip() in ("```", "~~~"):
            blocks.append(CodeBlock(opening.number, info, "".join(c + "\n" for c in content)))
            opening = None
        elif opening is not None:
            content.append(line.text)
    return blocks


def unclosed_fence(lines: tuple[Line, ...] | list[Line]) -> Line | None:
    """The opening fence of a code block that is never closed (a truncated
    page), or None.  Fences pair up as `code_blocks` pairs them."""
    opening: Line | None = None
    for line in lines:
        if opening is None and _FENCE.match(line.text):
            opening = line
        elif opening is not None and line.text.strip() in ("```", "~~~"):
            opening = None
    return opening


def outside_code(lines: tuple[Line, ...] | list[Line]) -> list[Line]:
    """The lines that are not inside fenced code blocks (fences excluded)."""
    out, in_fence = [], False
    for line in lines:
        if _FENCE.match(line.text):
            in_fence = not in_fence
            continue
        if not in_fence:
            out.append(line)
    return out


def _cells(text: str) -> tuple[str, ...]:
    s = text.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    parts = re.split(r"(?<!\\)\|", s)
    return tuple(p.strip().replace("\\|", "|") for p in parts)


_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def tables(lines: tuple[Line, ...] | list[Line]) -> list[Table]:
    """Pipe tables: a header row, a ``---`` separator row, then body rows."""
    found: list[Table] = []
    lines = list(lines)
    i = 0
    while i + 1 < len(lines):
        if "|" in lines[i].text and _SEPARATOR.match(lines[i + 1].text):
            header = _cells(lines[i].text)
            rows = []
            j = i + 2
            while j < len(lines) and "|" in lines[j].text and lines[j].text.strip():
                rows.append((lines[j], _cells(lines[j].text)))
                j += 1
            found.append(Table(lines[i].number, header, tuple(rows), lines[i].text))
            i = j
        else:
            i += 1
    return found


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")


def plain(text: str) -> str:
    """Inline markup removed: links keep their text, HTML tags and entities are
    resolved, emphasis and backslash escapes dropped, spaces collapsed."""
    s = _LINK.sub(r"\1", text)
    s = _TAG.sub("", s)
    s = html.unescape(s)
    s = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|])", r"\1", s)
    s = s.replace("**", "").replace("`", "")
    s = re.sub(r"(?<![\w*])\*(?!\s)|(?<=\S)\*(?![\w*])", "", s)
    return re.sub(r"\s+", " ", s.replace("\u00a0", " ")).strip()


def emphasised_names(text: str) -> list[str]:
    """Identifiers written in italics or backticks (``*InputTensor*``, `` `X` ``), in order."""
    return re.findall(r"(?:(?<!\*)\*|`)([A-Za-z_][A-Za-z0-9_]*)(?:\*(?!\*)|`)", text)
