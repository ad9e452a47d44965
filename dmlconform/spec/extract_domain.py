"""Attribute domains and typical values from a field's text (issue #22 item 4).

The docs state what an attribute may hold in a handful of phrasings (found
by reading every field description of the corpus; each has a test in
tests/spec/test_extract_domain.py):

* "This value cannot be less than 1" (SOFTPLUS Steepness): ``[1, inf)``;
* "This value should be between 0.0 and 1.0" (ADAM Beta1/Beta2), "must be
  between 1 and 8, inclusively" (SLICE DimensionCount): ``[a, b]``;
* "This value must be greater than 0" (JOIN InputCount, SPLIT OutputCount,
  TOP_K K): ``(0, inf)``; "must be at least 1" (LRN LocalSize): ``[1, inf)``;
* "must be in the range [0, InputTensor.DimensionCount - 1]" (axes) and
  "must be in the range [1, 6]" (UNFOLD DimensionCount);
* "must be less than the DimensionCount of the InputTensor" (axes) and "but
  less than the number of elements in the InputTensor along the dimension
  specified by Axis" (TOP_K K): a bound through a tensor's property, kept
  as a symbol.

Typical values that are not called a default: "A value of 0.9f is typical"
(ADAM Beta1), "typical values include 1e-8 or FLT_EPSILON" (ADAM Epsilon),
"typically either 0 or 0.5" (ROI_ALIGN1 pixel offsets): the first number.

A sentence about the field itself that states a limit in words this module
does not read becomes a warning naming it: nothing is dropped in silence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from dmlconform.spec import markdown as md
from dmlconform.spec import model as m

Warn = Callable[[int, str], None]

_N = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)f?"
#: A bound through a tensor's property: ``InputTensor.DimensionCount - 1``.
_SYM = r"([A-Za-z_]\w*\.[A-Za-z_]\w*(?:\s*-\s*\d+)?|-?\d+(?:\.\d+)?)"
_MUST = r"(?:must|should|shall)\s+be"
_NOT = r"(?:cannot|can\s?not|must\s+not|should\s+not|may\s+not)\s+be"


@dataclass(frozen=True, slots=True)
class _Bound:
    """One side of a domain, as one phrase states it."""

    side: str                 # "min" or "max"
    value: float | None
    inclusive: bool
    symbol: str | None = None


def _num(side: str, inclusive: bool) -> Callable[[re.Match[str]], tuple[_Bound, ...]]:
    return lambda mo: (_Bound(side, float(mo.group(1)), inclusive),)


def _between(mo: re.Match[str]) -> tuple[_Bound, ...]:
    return _Bound("min", float(mo.group(1)), True), _Bound("max", float(mo.group(2)), True)


def _symbol_or_number(side: str, text: str, inclusive: bool) -> _Bound:
    text = re.sub(r"\s+", " ", text.strip())
    if re.fullmatch(r"-?\d+(?:\.\d+)?", text):
        return _Bound(side, float(text), inclusive)
    return _Bound(side, None, inclusive, text)


def _property(mo: re.Match[str]) -> tuple[_Bound, ...]:
    return (_Bound("max", None, False, f"{mo.group(2)}.{mo.group(1)}"),)


def _along(mo: re.Match[str]) -> tuple[_Bound, ...]:
    return (_Bound("max", None, False, f"{mo.group(1)}.Sizes[{mo.group(2)}]"),)


#: (phrase, the bounds it states), tried in order on every sentence about the field.
_PHRASES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], tuple[_Bound, ...]]], ...] = (
    (re.compile(rf"{_NOT}\s+less\s+than\s+{_N}"), _num("min", True)),
    (re.compile(rf"{_NOT}\s+(?:greater|more)\s+than\s+{_N}"), _num("max", True)),
    (re.compile(rf"{_MUST}\s+(?:greater\s+than\s+or\s+equal\s+to|at\s+least)\s+{_N}"), _num("min", True)),
    (re.compile(rf"{_MUST}\s+(?:less\s+than\s+or\s+equal\s+to|at\s+most)\s+{_N}"), _num("max", True)),
    (re.compile(rf"{_MUST}\s+greater\s+than\s+{_N}"), _num("min", False)),
    (re.compile(rf"{_MUST}\s+less\s+than\s+{_N}"), _num("max", False)),
    (re.compile(rf"{_MUST}\s+between\s+{_N}\s+and\s+{_N}"), _between),
    (re.compile(rf"{_MUST}\s+in\s+the\s+range\s+([\[(])\s*{_SYM}\s*,\s*{_SYM}\s*([\])])"),
     lambda mo: (_symbol_or_number("min", mo.group(2), mo.group(1) == "["),
                 _symbol_or_number("max", mo.group(3), mo.group(4) == "]"))),
    (re.compile(rf"{_MUST}\s+less\s+than\s+the\s+([A-Za-z_]\w*)\s+of\s+the\s+([A-Za-z_]\w*)"), _property),
    (re.compile(r"less\s+than\s+the\s+number\s+of\s+elements\s+in\s+the\s+([A-Za-z_]\w*)\s+along\s+the\s+"
                r"dimension\s+specified\s+by\s+([A-Za-z_]\w*)"), _along),
)

#: A sentence that seems to state a limit: warned about when no phrase reads it.
_LIMIT_WORDS = re.compile(r"\b(?:must|cannot|should|shall|requires?)\b.*\b(?:less|greater|more|between|range|"
                          r"least|most|zero|non-?zero|positive|negative)\b", re.I)

_TYPICAL = (
    re.compile(rf"\bA\s+value\s+of\s+{_N}\s+is\s+typical"),
    re.compile(rf"\btypical\s+values?\s+(?:include|is|are)\s+{_N}"),
    re.compile(rf"\btypically\s+(?:either\s+)?{_N}\b"),
)


@dataclass(frozen=True, slots=True)
class DomainFacts:
    """What one field's text says of its values."""

    domain: m.Domain | None
    typical: float | None


def sentences(text: str) -> list[str]:
    """``text`` cut after each full stop that ends a sentence (not one inside a number)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*`_])", text) if s.strip()]


def _about_field(sentence: str, name: str) -> bool:
    """Whether ``sentence`` speaks of the field itself (not of a tensor or another field)."""
    return re.match(rf"(?:This\s+value|These\s+values|Values|Each\s+value|The\s+value|It|{re.escape(name)})\b",
                    sentence) is not None


def _bounds(sentence: str) -> list[_Bound]:
    found: list[_Bound] = []
    taken: list[tuple[int, int]] = []
    for pattern, read in _PHRASES:
        for mo in pattern.finditer(sentence):
            if any(a < mo.end() and mo.start() < b for a, b in taken):
                continue  # a longer phrase already read these words
            taken.append(mo.span())
            found.extend(read(mo))
    return found


def _line_of(sentence: str, body: Sequence[md.Line], fallback: int) -> int:
    """The number of the body line where ``sentence`` starts."""
    head = sentence[:40]
    return next((ln.number for ln in body if head in md.plain(ln.text)), fallback)


def read_domain(name: str, text: str, body: Sequence[md.Line], *, line: int, path: str,
                warn: Warn) -> DomainFacts:
    """The domain and typical value field ``name``'s ``text`` states;
    ``body`` (the field's lines) places each sentence for ``source``."""
    stated: list[tuple[str, _Bound]] = []
    for sentence in sentences(text):
        if not _about_field(sentence, name):
            if _LIMIT_WORDS.search(sentence) and not _bounds(sentence):
                _unread(name, sentence, body, line, warn)
            continue
        bounds = _bounds(sentence)
        if not bounds and _LIMIT_WORDS.search(sentence):
            _unread(name, sentence, body, line, warn)
        stated.extend((sentence, b) for b in bounds)
    return DomainFacts(_domain(name, stated, body, line=line, path=path, warn=warn), _typical(text))


def _unread(name: str, sentence: str, body: Sequence[md.Line], line: int, warn: Warn) -> None:
    warn(_line_of(sentence, body, line), f"field {name}: a limit the extractor does not read, not in its "
                                         f"domain: {sentence!r}")


def _domain(name: str, stated: list[tuple[str, _Bound]], body: Sequence[md.Line], *, line: int, path: str,
            warn: Warn) -> m.Domain | None:
    """One domain from the bounds stated; a second bound on a side is warned
    about and dropped (the first one stated wins)."""
    if not stated:
        return None
    dom = m.Domain()
    texts: list[str] = []
    for sentence, b in stated:
        if getattr(dom, b.side) is not None or getattr(dom, f"{b.side}_symbol") is not None:
            warn(_line_of(sentence, body, line), f"field {name}: a second {b.side}imum in {sentence!r}: "
                                                 f"keeping {dom.render()}")
            continue
        if b.side == "min":
            dom = replace(dom, min=b.value, min_symbol=b.symbol, min_inclusive=b.inclusive)
        else:
            dom = replace(dom, max=b.value, max_symbol=b.symbol, max_inclusive=b.inclusive)
        if sentence not in texts:
            texts.append(sentence)
    first = _line_of(stated[0][0], body, line)
    return replace(dom, text=" ".join(texts), source=f"{path}:{first}" if path else str(first))


def _typical(text: str) -> float | None:
    for pattern in _TYPICAL:
        mo = pattern.search(text)
        if mo:
            return float(mo.group(1))
    return None


def describes_other(text: str, names: Iterator[str] | Sequence[str]) -> str | None:
    """The field a description names as its subject ("The Steepness
    coefficient. ..."), where that is one of ``names``: the doc put that
    field's text under another heading (ACTIVATION_SOFTPLUS)."""
    mo = re.match(r"The\s+([A-Za-z_]\w*)\s+(?:coefficient|value|attribute)\b", text.strip())
    return mo.group(1) if mo and mo.group(1) in names else None
