"""DirectML operator doc pages in, one `Spec` per operator out.

Three page formats (../shared/directml-docs/INDEX.md): A (sdk-api: front
matter, ``## -description``, ``### -field X``), B (windows-ai-docs: H1,
``## Syntax`` struct, bare `` `X` `` member paragraphs) and C (scraper: no
front matter, ``### `X` ``; front matter and struct prototype in ``meta/``).
Each page becomes a `PageFacts`; pages of one operator are merged by taking the
newest revision and recording every fact on which the others disagree.

Nothing is dropped in silence: whatever a page has that cannot be parsed
becomes an `ExtractWarning` naming the file, the line and the part skipped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dmlconform import limits, userfiles
from dmlconform.errors import ExtractError, InputError, LocatedError
from dmlconform.spec import markdown as md
from dmlconform.spec import model as m
from dmlconform.spec.ambiguity import derive as derive_ambiguities
from dmlconform.spec.corpus import Skipped, display_base, extract_sources
from dmlconform.spec.extract_fields import (
    RawField,
    build_fields,
    owned_lines,
    parse_prototype,
    raw_fields,
)
from dmlconform.spec.extract_formula import analyse
from dmlconform.spec.operator_types import operator_type

_STRUCT_RE = re.compile(r"\bDML_[A-Z0-9_]+_OPERATOR_DESC\b")
_LEVEL_TOKEN = re.compile(r"DML_FEATURE_LEVEL_(\d+)_(\d+)")
_INTRODUCED = re.compile(r"introduced in\s+[`*]*DML_FEATURE_LEVEL_(\d+_\d+)", re.I)
_FL_HEADING = re.compile(r"DML_FEATURE_LEVEL_(\d+_\d+)\s+and\s+above", re.I)


@dataclass(frozen=True, slots=True)
class ExtractWarning:
    """Something a page has that the extractor skipped or had to guess."""

    path: str
    line: int
    message: str

    def render(self) -> str:
        return f"{self.path}:{self.line}: warning: {self.message}"


@dataclass(frozen=True, slots=True)
class PageFacts:
    """What one page says, before pages of one operator are merged."""

    spec: m.Spec
    source: m.SourcePage
    section_texts: tuple[tuple[str, str], ...]   # (section key, normalised text)
    warnings: tuple[ExtractWarning, ...]


@dataclass(frozen=True, slots=True)
class ExtractResult:
    specs: tuple[m.Spec, ...]
    warnings: tuple[ExtractWarning, ...]
    pages: int
    #: Pages under a named corpus root that are not operator pages (`corpus.extract_sources`).
    skipped: tuple[Skipped, ...] = ()


class _Notes:
    """Collects warnings for one page."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[ExtractWarning] = []

    def warn(self, line: int, message: str) -> None:
        self.items.append(ExtractWarning(self.path, max(line, 1), message))


# ---------------------------------------------------------------- identity


def _struct_name(front: dict[str, object], page: list[md.Line], path: Path, prototype: str | None) -> tuple[str, int]:
    """The struct name and the line it came from.  UID/api_name first (the
    title can be wrong: scatter_nd), then the H1, the file name, the prototype."""
    for key in ("UID", "api_name", "title"):
        value = front.get(key)
        text = " ".join(map(str, value)) if isinstance(value, list) else str(value or "")
        found = _STRUCT_RE.findall(text)
        if found:
            return found[0], 1
    for line in page:
        if line.text.startswith("# "):
            found = _STRUCT_RE.findall(line.text)
            if found:
                return found[0], line.number
    stem = path.stem.removeprefix("ns-directml-").upper()
    if _STRUCT_RE.fullmatch(stem):
        return stem, 1
    if prototype:
        found = _STRUCT_RE.findall(prototype)
        if found:
            return found[0], 1
    raise ExtractError("not a DirectML operator page: no DML_*_OPERATOR_DESC name in the front matter, "
                       "title or file name", path=str(path), line=1, column=1)


_CATEGORIES = (
    ("ACTIVATION_", "activation"), ("ELEMENT_WISE_", "element_wise"), ("REDUCE", "reduction"),
    ("ARGM", "reduction"), ("CUMULATIVE_", "reduction"), ("POOLING", "pooling"),
    ("NORMALIZATION", "normalization"), ("QUANTIZ", "quantization"), ("CONVOLUTION", "convolution"),
    ("GEMM", "matrix"), ("MATRIX_MULTIPLY", "matrix"), ("ATTENTION", "attention"),
    ("GRU", "recurrent"), ("LSTM", "recurrent"), ("RNN", "recurrent"), ("RESAMPLE", "resampling"),
    ("UPSAMPLE", "resampling"), ("ROI_", "roi"), ("GATHER", "data_movement"), ("SCATTER", "data_movement"),
    ("SLICE", "data_movement"), ("PADDING", "data_movement"), ("JOIN", "data_movement"),
    ("SPLIT", "data_movement"), ("TILE", "data_movement"), ("DEPTH_TO_SPACE", "data_movement"),
    ("SPACE_TO_DEPTH", "data_movement"), ("CAST", "data_movement"), ("FOLD", "data_movement"),
    ("FILL_VALUE", "generator"), ("RANDOM", "generator"), ("ONE_HOT", "generator"),
    ("DIAGONAL_MATRIX", "generator"), ("TOP_K", "reduction"), ("NONZERO", "data_movement"),
    ("ADAM", "training"), ("VALUE_SCALE", "element_wise"),
)


def category(operator: str) -> str:
    for key, name in _CATEGORIES:
        if operator.startswith(key) or key in operator:
            return name
    return "other"


def _iso_date(value: object) -> str | None:
    text = str(value or "").strip()
    for fmt in ("%m/%d/%Y", "%Y-%m-%d", "%m/%d/%y"):
        try:
            return dt.datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None


# ---------------------------------------------------------------- sections


def _find(secs: list[md.Section], *keys: str) -> list[md.Section]:
    return [s for s in secs if s.key in keys]


def _description(secs: list[md.Section], struct: str) -> list[md.Line]:
    """The description: A ``-description``, C ``Description``, B the text
    under the H1 (before ``## Syntax``)."""
    found = _find(secs, "description")
    if found:
        return md.subtree(secs, found[0])
    h1 = [s for s in secs if s.level == 1 and struct in s.title]
    if h1:
        return list(h1[0].lines)
    return list(secs[0].lines) if secs and secs[0].level == 0 else []


_IN_PLACE = re.compile(r"permitted to alias", re.I)


def _formula(desc: list[md.Line], notes: _Notes) -> tuple[m.Formula, int]:
    blocks = [b for b in md.code_blocks(desc) if b.info.lower() not in ("cpp", "c", "c++", "json")]
    examples = [b for b in blocks if _is_example(b.text)]
    blocks = [b for b in blocks if b not in examples]
    if examples and not blocks:
        notes.warn(examples[0].line, "description has only worked examples (input --> output diagrams), no formula")
        return m.Formula(m.FormulaSource.EXAMPLE), examples[0].line
    if blocks:
        if len(blocks) > 1:
            notes.warn(blocks[1].line, f"description has {len(blocks)} code blocks; the first is taken as the formula")
        return m.Formula(m.FormulaSource.CODE, blocks[0].text), blocks[0].line
    text_lines = md.outside_code(desc)
    if any(re.search(r"!\[[^\]]*\]\(", line.text) for line in text_lines):
        line = next(line for line in text_lines if "![" in line.text)
        notes.warn(line.number, "formula only as an image: no formula text to extract")
        return m.Formula(m.FormulaSource.IMAGE), line.number
    inline = [(line.number, c) for line in text_lines for c in re.findall(r"`([^`]+)`", line.text)
              if "=" in c or "(" in c]
    if inline:
        return m.Formula(m.FormulaSource.INLINE, "".join(c.strip() + "\n" for _, c in inline)), inline[0][0] - 1
    return m.Formula(m.FormulaSource.NONE), 1


def _is_example(text: str) -> bool:
    """A worked example: an ``-->`` arrow between tensors of literal numbers."""
    return "-->" in text and bool(re.search(r"\[\s*-?[\w.]+\s*,", text))


def _introduced(secs: list[md.Section], notes: _Notes) -> list[tuple[m.FeatureLevel, int]]:
    claims: list[tuple[m.FeatureLevel, int]] = []
    for sec in _find(secs, "availability"):
        for line in sec.lines:
            for token in _INTRODUCED.findall(line.text):
                try:
                    claims.append((m.FeatureLevel.parse(token), line.number))
                except ValueError as exc:
                    notes.warn(line.number, str(exc))
    return claims


def _in_place(lines: list[tuple[md.Line, str | None]], fields: tuple[m.Field, ...],
              notes: _Notes) -> tuple[m.InPlace, ...]:
    """Pairs (output, input) from "… is permitted to alias …" sentences.

    A sentence in an output field's own text ("this tensor is permitted to
    alias an eligible input tensor") is about that field; "eligible" inputs are
    all inputs less those the page names "with the exception of" anywhere."""
    inputs = [f.name for f in fields if f.is_tensor and f.role is m.TensorRole.INPUT]
    outputs = [f.name for f in fields if f.is_tensor and f.role is m.TensorRole.OUTPUT]
    excluded = {n for line, _ in lines
                for clause in re.findall(r"with the exception of (.*?)(?:, are\b|\.\s|$)", line.text)
                for n in md.emphasised_names(clause)}
    pairs: list[m.InPlace] = []
    for line, owner in lines:
        if not _IN_PLACE.search(line.text):
            continue
        before, _, after = line.text.partition("permitted to alias")
        after = after.split("during binding")[0]
        if owner in outputs and re.search(r"\bthis tensor\b", before, re.I):
            outs = [owner]
        else:
            outs = [n for n in md.emphasised_names(before) if n in outputs] or outputs
        named = [n for n in md.emphasised_names(after) if n in inputs]
        generic = not named or re.search(r"\beligible\b|\bone (or more )?of\b", after)
        ins = [i for i in inputs if i not in excluded] if generic else named
        if not outs or not ins:
            notes.warn(line.number, "in-place sentence names no tensor that is a field")
            continue
        pairs.extend(m.InPlace(o, i) for o in outs for i in ins)
    return tuple(dict.fromkeys(pairs))


_SAME = re.compile(r"must have the same\s+(.*?)\.?\s*$")


def _constraints(secs: list[md.Section], names: set[str], notes: _Notes) -> tuple[m.Constraint, ...]:
    out: list[m.Constraint] = []
    for sec in _find(secs, "tensor constraints"):
        for line in sec.lines:
            text = line.text.strip().lstrip("*-").strip() if line.text.lstrip().startswith(("* ", "- ")) else line.text.strip()
            if not text:
                continue
            mentioned = [n for n in md.emphasised_names(text) if n in names]
            props = [p for p in m.TENSOR_PROPERTIES if re.search(rf"\*{p}\*|`{p}`|\b{p}\b", text)]
            same = _SAME.search(text)
            subject = text[: same.start()] if same else ""
            subject_names = [n for n in md.emphasised_names(subject) if n in names]
            if same and len(subject_names) >= 2 and props:
                c = m.Constraint(m.ConstraintKind.SAME, tuple(subject_names), tuple(props))
            else:
                notes.warn(line.number, "tensor constraint not in the form '<tensors> must have the same <properties>': kept as kind 'other'")
                c = m.Constraint(m.ConstraintKind.OTHER, tuple(dict.fromkeys(mentioned)), tuple(props), line.number)
            if c not in out:
                out.append(c)
            elif c.kind is m.ConstraintKind.SAME:
                notes.warn(line.number, "the same tensor constraint is stated twice")
    return tuple(out)


# ---------------------------------------------------------------- support tables


_DIM_RANGE = re.compile(r"(\d+)\s*(?:to|-|–)\s*(\d+)")


def _dims(text: str) -> tuple[int, ...] | str | None:
    """The dimension counts a cell lists (``1 to 8``, ``4``, ``3, 4``); None
    when the cell is no such list; a sentence saying why when a count is
    outside 1 to 8.  The bounds are checked before a range is expanded:
    ``1 to 999999999`` must not become a billion counts."""
    s = md.plain(text)
    m_range = _DIM_RANGE.fullmatch(s)
    parts = m_range.groups() if m_range else [p.strip() for p in re.split(r",|\bor\b|\band\b", s) if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        return None
    lowest, highest = limits.MIN_DIMENSION_COUNT, limits.MAX_DIMENSION_COUNT
    if any(len(p) > 2 or not lowest <= int(p) <= highest for p in parts):
        return (f"dimension count {s!r} is outside {lowest} to {highest} (a DirectML tensor has {lowest} to "
                f"{highest} dimensions)")
    if m_range:
        lo, hi = int(parts[0]), int(parts[1])
        return tuple(range(lo, hi + 1)) if lo <= hi else None
    return tuple(sorted({int(p) for p in parts}))


def _dtypes(text: str, line: int, notes: _Notes) -> tuple[m.DataType, ...]:
    out = []
    for token in [t.strip() for t in md.plain(text).split(",") if t.strip()]:
        try:
            out.append(m.DataType.parse(token))
        except ValueError:
            notes.warn(line, f"unknown data type {token!r} in a tensor-support table: skipped")
    return tuple(out)


_COLUMNS = {
    "tensor": "tensor", "kind": "kind", "dimensions": "dimensions",
    "supported dimension counts": "dims", "supported data types": "dtypes",
}


def _support_rows(table: md.Table, notes: _Notes) -> tuple[m.TensorSupport, ...]:
    cols = {_COLUMNS.get(h.strip().lower()): i for i, h in enumerate(table.header)}
    if not {"tensor", "kind", "dims", "dtypes"} <= cols.keys():
        notes.warn(table.line, f"tensor-support table header {' | '.join(table.header)!r} lacks a Tensor, Kind, "
                               "Supported dimension counts or Supported data types column: table skipped")
        return ()
    if not table.rows:
        notes.warn(table.line, "tensor-support table has a header but no rows: the page may be truncated")
    rows = []
    for line, cells in table.rows:
        _cut_row(table, line, cells, notes)
        if len(cells) < len(table.header):
            cells = cells + ("",) * (len(table.header) - len(cells))
        name = md.plain(cells[cols["tensor"]])
        kind = md.plain(cells[cols["kind"]]).capitalize()
        dims = _dims(cells[cols["dims"]])
        if isinstance(dims, str):
            notes.warn(line.number, f"tensor-support row {line.text.strip()!r}: {dims}: row skipped")
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or dims is None or kind not in _KINDS:
            notes.warn(line.number, f"tensor-support row {line.text.strip()!r} has an unreadable tensor name, "
                                    "kind or dimension count: row skipped")
            continue
        dtypes = _dtypes(cells[cols["dtypes"]], line.number, notes)
        if not dtypes:
            notes.warn(line.number, f"tensor-support row for {name} lists no data types")
        dimensions = md.plain(cells[cols["dimensions"]]) if "dimensions" in cols else None
        rows.append(m.TensorSupport(name, kind, dims, dtypes, dimensions or None))
    return tuple(rows)


def _cut_row(table: md.Table, line: md.Line, cells: tuple[str, ...], notes: _Notes) -> None:
    """A row with fewer cells than the header, or not closed by ``|`` where the
    header is, was cut: warn, since what it lost cannot be told."""
    if len(cells) < len(table.header):
        cut = f"has {len(cells)} of the header's {len(table.header)} cells"
    elif table.header_text.rstrip().endswith("|") and not line.text.rstrip().endswith("|"):
        cut = "has no closing '|'"
    else:
        return
    notes.warn(line.number, f"tensor-support row {line.text.strip()!r} {cut}: the page may be truncated")


_KINDS = {"Input", "Output", "Optional input", "Optional output", "Array of inputs", "Array of outputs"}


def _condition(title: str, fields: tuple[m.Field, ...], line: int, notes: _Notes) -> m.Condition | None:
    """A non-level heading inside the support section (``### ARGMIN and ARGMAX``)
    names the values of an enum field for which the tables below it hold."""
    values = tuple(v for v in re.findall(r"\b[A-Z][A-Z0-9_]+\b", md.plain(title)) if v != "DML")
    enums = [f for f in fields if f.kind is m.FieldKind.ENUM]
    if not values or not enums:
        notes.warn(line, f"heading {title!r} in the tensor-support section is neither a feature level nor a list of enum values: ignored")
        return None
    if len(enums) > 1:
        notes.warn(line, f"heading {title!r}: several enum fields; the condition is put on {enums[0].name}")
    return m.Condition(enums[0].name, values)


def _support(secs: list[md.Section], fields: tuple[m.Field, ...], introduced: m.FeatureLevel | None,
             notes: _Notes) -> tuple[m.SupportTable, ...]:
    start = next((i for i, s in enumerate(secs) if s.key.startswith("tensor support")), None)
    if start is None:
        notes.warn(1, "no tensor-support section")
        return ()
    top = secs[start].level
    tables: list[m.SupportTable] = []
    level: m.FeatureLevel | None = None
    condition: m.Condition | None = None
    for sec in secs[start:]:
        if sec is not secs[start]:
            if sec.level <= top:
                break
            fl = _FL_HEADING.search(sec.title)
            if fl:
                level = m.FeatureLevel.parse(fl.group(1))
                if not md.tables(sec.lines):
                    notes.warn(sec.line, f"no tensor-support table under the heading {sec.title!r}: the page may be "
                                         "truncated")
            else:
                condition, level = _condition(sec.title, fields, sec.line, notes), None
        for table in md.tables(sec.lines):
            rows = _support_rows(table, notes)
            at = level or introduced
            if at is None:
                notes.warn(table.line, "tensor-support table with no feature-level heading and no Availability level: skipped")
                continue
            if not rows:
                continue
            tables.append(m.SupportTable(at, rows, condition))
    groups = list(dict.fromkeys(t.condition for t in tables))
    return tuple(sorted(tables, key=lambda t: (groups.index(t.condition), t.level)))


# ---------------------------------------------------------------- one page


_VARIANT_NAMES = {"A": "sdk-api", "B": "windows-ai-docs", "C": "windows-docs-scraper"}


def _variant(front: dict[str, object], secs: list[md.Section]) -> str:
    if any(s.title.startswith("-") for s in secs):
        return "A"
    if _find(secs, "syntax"):
        return "B"
    return "C"


def _normalised_sections(secs: list[md.Section]) -> tuple[tuple[str, str], ...]:
    """Section text with markup and links stripped, for comparing revisions."""
    out: dict[str, str] = {}
    aliases = {"struct-fields": "members", "see-also": "see also"}
    for sec in secs:
        field = re.fullmatch(r"-field\s+(\w+)(?::\S*)?|`(\w+)`", sec.title.strip())
        key = f"field {field.group(1) or field.group(2)}" if field else aliases.get(sec.key, sec.key)
        text = md.plain(" ".join(line.text for line in sec.lines))
        text = re.sub(r"https?://\S+|\(\S*\.md\)", "", text)
        out[key] = (out.get(key, "") + " " + text).strip()
    return tuple(sorted(out.items()))


@dataclass(frozen=True, slots=True)
class Meta:
    """Sidecar files of the scraper pages: front matter (.json), struct
    prototype (.c), and why a sidecar that is there could not be used."""

    front: dict[str, object]
    prototype: str | None
    problems: tuple[str, ...] = ()


def read_meta(page: Path) -> Meta:
    """The sidecars of ``page`` (``meta/<page>.json``, ``meta/<page>.c``), each
    read only if it is a regular file within `limits.DOC_SIDECAR`; one that
    cannot be used is named in ``problems``."""
    folder = page.parent / "meta"
    problems: list[str] = []

    def sidecar(path: Path, read: Callable[[Path, limits.FileLimit], Any]) -> Any:
        if not (path.exists() or path.is_symlink()):
            return None
        try:
            return read(path, limits.DOC_SIDECAR)
        except LocatedError as exc:
            problems.append(f"{exc.location()}: {exc.message}: ignored")
            return None

    front = sidecar(folder / (page.stem + ".json"), userfiles.read_json)
    prototype = sidecar(folder / (page.stem + ".c"), userfiles.read_text)
    return Meta(front if isinstance(front, dict) else {}, prototype, tuple(problems))


def extract_page(text: str, *, path: Path, display: str, meta: Meta | None = None,
                 prototypes: dict[str, str] | None = None) -> PageFacts:
    """One page's facts.  Raises ExtractError only for a page that is not an
    operator page at all; everything else becomes warnings."""
    notes = _Notes(display)
    lines = md.to_lines(text)
    front, body, problem = md.split_front_matter(lines)
    if problem:
        notes.warn(1, problem)
    unclosed = md.unclosed_fence(body)
    if unclosed is not None:
        notes.warn(unclosed.number, "code block never closed (no ``` after it): the page may be truncated; "
                                    "the rest of the page is read as code")
    meta = meta or Meta({}, None)
    front = {**meta.front, **front}
    try:
        struct, _ = _struct_name(front, body, path, meta.prototype)
    except ExtractError as exc:
        raise ExtractError(exc.message, path=display, line=1, column=1) from None
    secs = md.sections(body)
    variant = _variant(front, secs)
    syntax = [b.text for s in _find(secs, "syntax") for b in md.code_blocks(s.lines)]
    prototype = syntax[0] if syntax else meta.prototype or (prototypes or {}).get(struct)
    proto = parse_prototype(prototype, struct) if prototype else None
    if prototype and proto is None:
        notes.warn(1, f"struct prototype does not declare {struct}: field types taken from the Type lines")
    members = _find(secs, "struct-fields", "members")
    raw: list[RawField] = []
    for sec in members:
        raw.extend(raw_fields(md.subtree(secs, sec), notes.warn, path=display))
    member_start = members[0].line if members else 1
    if not raw and not proto:
        notes.warn(member_start, "no struct members found")
    claims = _introduced(secs, notes)
    support_pre = _support(secs, (), claims[0][0] if claims else None, _Notes(display))
    fields = build_fields(raw, proto, support_pre, notes.warn, member_start)
    introduced, also = _resolve_introduced(claims, fields, secs, notes)
    support = _support(secs, fields, introduced, notes)
    if introduced is None:
        introduced = min((t.level for t in support), default=m.FeatureLevel.FL_1_0)
        notes.warn(1, f"no 'introduced in DML_FEATURE_LEVEL_x_y' in an Availability section: taking {introduced.short}, the oldest table")
    desc = _description(secs, struct)
    names = {f.name for f in fields}
    operator = struct.removeprefix("DML_").removesuffix("_OPERATOR_DESC")
    member_lines = [pair for s in members for pair in owned_lines(md.subtree(secs, s))]
    remark_lines: list[tuple[md.Line, str | None]] = [(line, None) for s in _find(secs, "remarks") for line in md.subtree(secs, s)]
    formula, formula_line = _formula(desc, notes)
    formula, tolerance = analyse(formula, line=formula_line, category=category(operator), fields=fields,
                                 support=support, display=display, warn=notes.warn)
    spec = m.Spec(
        operator=operator, struct=struct, category=category(operator), introduced=introduced,
        introduced_also=also, operator_type=operator_type(operator), fields=fields, formula=formula, tolerance=tolerance,
        support=support, in_place=_in_place([(line, None) for line in desc] + member_lines + remark_lines, fields, notes),
        constraints=_constraints(secs, names, notes),
    )
    spec = replace(spec, ambiguities=derive_ambiguities(spec, source=f"{display}:{formula_line + 1}"))
    source = m.SourcePage(display, variant, _iso_date(front.get("ms.date")))
    return PageFacts(replace(spec, sources=(source,)), source, _normalised_sections(secs), tuple(notes.items))


def _resolve_introduced(claims: list[tuple[m.FeatureLevel, int]], fields: tuple[m.Field, ...],
                        secs: list[md.Section], notes: _Notes) -> tuple[m.FeatureLevel | None, tuple[m.FeatureLevel, ...]]:
    """One introduction level.  Where the page claims several (two Availability
    sections), take the one the oldest support table agrees with."""
    levels = sorted({level for level, _ in claims})
    if len(levels) <= 1:
        return (levels[0] if levels else None), ()
    oldest_table = min((t.level for t in _support(secs, fields, levels[0], _Notes(""))), default=None)
    chosen = oldest_table if oldest_table in levels else levels[-1]
    notes.warn(claims[1][1], f"the page claims introduction at {', '.join(x.short for x in levels)}; "
                             f"taking {chosen.short} (the oldest tensor-support table)")
    return chosen, tuple(x for x in levels if x != chosen)


# ---------------------------------------------------------------- many pages


def select_pages(sources: Iterable[Path]) -> tuple[list[tuple[Path, str]], list[ExtractWarning]]:
    """(page path, display path) for every .md page under ``sources``, sorted,
    and a warning for each path found or named that is not read (a FIFO, a
    folder named *.md, a dangling link, a link out of the folder given).
    Display paths are relative to the corpus root (`corpus.display_base`), so
    they read ``operators/sdk-api/ns-…md`` whichever folder of the corpus was
    named, and do not depend on the working directory."""
    seen: set[Path] = set()
    pages: list[tuple[Path, str]] = []
    refused: list[ExtractWarning] = []
    for src in sources:
        found = userfiles.find_files([src], ".md")
        base = display_base(src)
        refused.extend(ExtractWarning(str(r.path), 1, f"{r.reason}: page skipped") for r in found.refused)
        for p in found.files:
            r = p.resolve()
            if r not in seen:
                seen.add(r)
                pages.append((p, r.relative_to(base).as_posix() if base in r.parents else p.name))
    return pages, refused


def collect_prototypes(sources: Iterable[Path]) -> dict[str, str]:
    """Struct prototypes (``meta/*.c``) found under the sources, by struct name;
    A pages have no struct block of their own and borrow the scraper's.  A file
    that cannot be read is left to `read_meta`, which names it."""
    found: dict[str, str] = {}
    for src in sources:
        folder = src if src.is_dir() else src.parent
        files = userfiles.find_files([folder], ".c").files if folder.is_dir() else ()
        for c in (f for f in files if f.parent.name == "meta"):
            try:
                text = userfiles.read_text(c, limits.DOC_SIDECAR)
            except LocatedError:
                continue
            for name in _STRUCT_RE.findall(text)[:1]:
                found.setdefault(name, text)
    return found


_VARIANT_RANK = {"A": 0, "C": 1, "B": 2}


def _newest_first(pages: list[PageFacts]) -> list[PageFacts]:
    """Newest revision first: by ms.date; on a tie the scraper copy (C, made
    from the newest sources) beats the sdk-api copy (A); the path breaks ties."""
    return sorted(pages, key=lambda p: (p.source.date or "", _VARIANT_RANK[p.source.variant], p.source.path),
                  reverse=True)


def extract(sources: Iterable[Path]) -> ExtractResult:
    """Every page under ``sources`` -> one spec per operator, sorted by name.
    A corpus root among them reads its ``operators/`` alone (`corpus`).  No page to read at all is an `InputError` (exit 2), naming what was
    refused: an extract that read nothing must not look like a success."""
    named = list(sources)
    read = extract_sources(named)
    prototypes = collect_prototypes(read.prototypes)
    selected, warnings = select_pages(read.pages)
    if not selected:
        refused = "; ".join(f"{w.path}: {w.message}" for w in warnings[:3])
        raise InputError(f"no doc page (*.md) to read in {', '.join(repr(str(s)) for s in named)}"
                         + (f" ({refused})" if refused else ""))
    by_struct: dict[str, list[PageFacts]] = {}
    for path, display in selected:
        facts = _page_facts(path, display, prototypes, warnings)
        if facts is not None:
            by_struct.setdefault(facts.spec.struct, []).append(facts)
    specs = []
    for struct in sorted(by_struct):
        spec, notes = merge_revisions(by_struct[struct])
        specs.append(spec)
        warnings.extend(notes)
    return ExtractResult(tuple(specs), tuple(warnings), len(selected), read.skipped)


def _page_facts(path: Path, display: str, prototypes: dict[str, str],
                warnings: list[ExtractWarning]) -> PageFacts | None:
    """One page's facts, its warnings added to ``warnings``; None (and a
    warning) for a page that cannot be read or is not an operator page."""
    try:
        raw = userfiles.read_bytes(path, limits.DOC_PAGE)
    except LocatedError as exc:
        warnings.append(ExtractWarning(display, 1, f"{exc.message}: page skipped"))
        return None
    text, bad = _decode(raw)
    if bad is not None:
        warnings.append(ExtractWarning(display, bad, "bytes that are not UTF-8 replaced by U+FFFD"))
    meta = read_meta(path)
    warnings.extend(ExtractWarning(display, 1, problem) for problem in meta.problems)
    try:
        facts = extract_page(text, path=path, display=display, meta=meta, prototypes=prototypes)
    except ExtractError as exc:
        warnings.append(ExtractWarning(display, exc.line, exc.message + ": page skipped"))
        return None
    warnings.extend(facts.warnings)
    return facts


def _decode(raw: bytes) -> tuple[str, int | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return raw.decode("utf-8", errors="replace"), raw[: exc.start].count(b"\n") + 1


# ---------------------------------------------------------------- poorer specs


def _table_label(table: m.SupportTable) -> str:
    c = table.condition
    return table.level.short + ("" if c is None else f" ({c.field} in {', '.join(c.values)})")


def _row_losses(old: m.TensorSupport, new: m.TensorSupport | None) -> list[str]:
    """The data types and dimension counts ``new`` lacks of ``old`` (a row cut mid-cell)."""
    if new is None:
        return []
    dtypes = [t.name for t in old.dtypes if t not in new.dtypes]
    dims = [str(d) for d in old.dims if d not in new.dims]
    return ([f"data types {', '.join(dtypes)}"] if dtypes else []) + \
        ([f"dimension counts {', '.join(dims)}"] if dims else [])


def losses(new: m.Spec, old: m.Spec) -> list[str]:
    """What ``new`` lacks that ``old`` (the spec already in the output folder)
    has: fields, support tables or rows of them, the formula or its parsed
    form.  A page that lost them was most likely truncated or damaged; item 4
    of issue #20: extract never replaces a spec with a poorer one in silence."""
    out = []
    fields = {f.name for f in new.fields}
    gone = [f.name for f in old.fields if f.name not in fields]
    if gone:
        out.append(f"fields {', '.join(gone)}")
    tables = {(t.level, t.condition): t for t in new.support}
    for table in old.support:
        kept = tables.get((table.level, table.condition))
        if kept is None:
            out.append(f"the {_table_label(table)} support table")
            continue
        rows = [r.tensor for r in table.rows if kept.row(r.tensor) is None]
        if rows:
            out.append(f"rows {', '.join(rows)} of the {_table_label(table)} support table")
        out.extend(f"{what} of {row.tensor} in the {_table_label(table)} support table"
                   for row in table.rows for what in _row_losses(row, kept.row(row.tensor)))
    if old.formula.reviewed is not None:
        pass  # the overlay's formula, not the page's: the page never had one to lose
    elif old.formula.text and not new.formula.text:
        out.append("the formula")
    elif old.formula.parsed and not new.formula.parsed:
        out.append("the parsed formula")
    return out


# ---------------------------------------------------------------- revisions


def _facts_of(spec: m.Spec) -> dict[str, str]:
    """Comparable renderings of each fact of a spec (no prose)."""
    facts: dict[str, str] = {
        "introduced": spec.introduced.short,
        "fields": ", ".join(f.name for f in spec.fields),
        "formula": re.sub(r"\s+", " ", spec.formula.text or f"({spec.formula.source.value})").strip(),
        "in_place": ", ".join(f"{p.output}<-{p.input}" for p in spec.in_place) or "none",
        "constraints": "; ".join(
            f"{c.kind.value}({','.join(c.tensors)}:{','.join(c.properties)})" for c in spec.constraints) or "none",
    }
    for f in spec.fields:
        facts[f"field {f.name}"] = (f"{f.c_type} {f.kind.value}{' optional' if f.optional else ''}"
                                    f"{' count=' + f.count_field if f.count_field else ''}"
                                    f"{' default=' + str(f.default) if f.default is not None else ''}"
                                    f"{' domain=' + f.domain.render() if f.domain is not None else ''}")
    for t in spec.support:
        key = f"support {t.level.short}" + (f" {t.condition.field}={'/'.join(t.condition.values)}" if t.condition else "")
        facts[key] = "; ".join(f"{r.tensor} {r.kind} {_dims_text(r.dims)} {','.join(d.name for d in r.dtypes)}"
                               for r in t.rows)
    return facts


def _dims_text(dims: tuple[int, ...]) -> str:
    if dims and list(dims) == list(range(dims[0], dims[-1] + 1)) and len(dims) > 1:
        return f"{dims[0]}-{dims[-1]}"
    return ",".join(map(str, dims))


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def merge_revisions(pages: list[PageFacts]) -> tuple[m.Spec, list[ExtractWarning]]:
    """The newest page's spec, with every disagreement of the older pages."""
    ordered = _newest_first(pages)
    chosen = ordered[0]
    disagreements: list[m.Disagreement] = []
    mine = _facts_of(chosen.spec)
    my_text = dict(chosen.section_texts)
    for other in ordered[1:]:
        theirs = _facts_of(other.spec)
        for key in sorted(mine.keys() | theirs.keys()):
            if mine.get(key) != theirs.get(key):
                disagreements.append(m.Disagreement(key, _short(mine.get(key, "(absent)")),
                                                    _short(theirs.get(key, "(absent)")), other.source.path))
        if chosen.source.date != other.source.date:
            disagreements.append(m.Disagreement("date", str(chosen.source.date), str(other.source.date), other.source.path))
        their_text = dict(other.section_texts)
        for key in sorted(my_text.keys() | their_text.keys()):
            mine_t, theirs_t = my_text.get(key, ""), their_text.get(key, "")
            if key in ("", "requirements") or mine_t == theirs_t:
                continue
            if not mine_t or not theirs_t:
                disagreements.append(m.Disagreement(
                    f"section {key!r}", "present" if mine_t else "absent or empty",
                    "present" if theirs_t else "absent or empty", other.source.path))
            else:
                disagreements.append(m.Disagreement(
                    f"text of section {key!r}", f"{len(mine_t)} characters",
                    f"{len(theirs_t)} characters, differs", other.source.path))
    spec = replace(chosen.spec, sources=tuple(p.source for p in ordered), disagreements=tuple(disagreements))
    notes = [ExtractWarning(chosen.source.path, 1,
                            f"revisions disagree on {d.fact}: this page {d.chosen!r}, {d.other_path} {d.other!r}")
             for d in disagreements]
    return spec, notes
