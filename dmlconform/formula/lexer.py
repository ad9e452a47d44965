"""Tokens of the formula language, each with its 1-based line and column.

DESIGN.md, "The spec": formula text is parsed as the docs write it, so the lexer
accepts their habits (``// comments``, a trailing ``.`` or ``;``) and refuses
what would be guessed at (a typographic dash, stray characters), pointing at the
column.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from dmlconform.errors import FormulaError
from dmlconform.limits import MAX_LITERAL_CHARS, MAX_LITERAL_EXPONENT


class Kind(enum.Enum):
    NUM = "number"
    NAME = "name"
    OP = "operator"
    COMMENT = "comment"
    NEWLINE = "end of line"
    END = "end of formula"


@dataclass(frozen=True, slots=True)
class Token:
    kind: Kind
    text: str
    line: int
    column: int


#: Words with a meaning in the grammar; never names.
KEYWORDS = frozenset({"if", "then", "else", "otherwise"})

#: Operators, longest first so that ``<=`` wins over ``<``.
OPERATORS = (
    "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=", "*=", "/=",
    "+", "-", "*", "/", "%", "^", "(", ")", ",", "?", ":", "!", "~", "<", ">",
    "=", "&", "|", "[", "]", ".", ";",
)

_NUM = re.compile(r"(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"[ \t\r]+")
#: Typographic characters the docs may use for an operator, and the operator.
TYPOGRAPHY = {"\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00d7": "*", "\u2264": "<=", "\u2265": ">="}


def tokenize(text: str, *, origin: str = "<formula>", first_line: int = 1) -> list[Token]:
    """Split ``text`` into tokens.  Newlines inside brackets are dropped (a
    bracketed expression may span lines); others become NEWLINE tokens."""
    tokens: list[Token] = []
    depth = 0
    for row, line in enumerate(text.split("\n")):
        lineno = first_line + row
        pos = 0
        while pos < len(line):
            m = _SPACE.match(line, pos)
            if m:
                pos = m.end()
                continue
            col = pos + 1
            if line.startswith("//", pos):
                tokens.append(Token(Kind.COMMENT, line[pos + 2:].strip(), lineno, col))
                break
            token = _one(line, pos, lineno, origin)
            depth += token.text in "([" if token.kind is Kind.OP else 0
            depth -= token.text in ")]" if token.kind is Kind.OP else 0
            tokens.append(token)
            pos += len(token.text)
        if depth <= 0:
            tokens.append(Token(Kind.NEWLINE, "", lineno, len(line) + 1))
    last = first_line + text.count("\n")
    tokens.append(Token(Kind.END, "", last, len(text.split("\n")[-1]) + 1))
    return tokens


def _one(line: str, pos: int, lineno: int, origin: str) -> Token:
    for kind, pattern in ((Kind.NUM, _NUM), (Kind.NAME, _NAME)):
        m = pattern.match(line, pos)
        if m and not (kind is Kind.NUM and m.group() == "."):
            if kind is Kind.NUM:
                _check_number(m.group(), lineno, pos + 1, origin)
            return Token(kind, m.group(), lineno, pos + 1)
    for op in OPERATORS:
        if line.startswith(op, pos):
            return Token(Kind.OP, op, lineno, pos + 1)
    char = line[pos]
    hint = TYPOGRAPHY.get(char)
    fix = f"; write {hint!r} instead" if hint else ""
    raise FormulaError(
        f"unexpected character {char!r} (U+{ord(char):04X}) in formula{fix}",
        path=origin, line=lineno, column=pos + 1,
    )


def _check_number(text: str, lineno: int, col: int, origin: str) -> None:
    """A literal within `limits.MAX_LITERAL_CHARS` and whose decimal exponent
    is within `limits.MAX_LITERAL_EXPONENT`: its exact value stays cheap."""
    mantissa, _, exponent = text.lower().partition("e")
    if len(text) > MAX_LITERAL_CHARS or (exponent and abs(int(exponent)) > MAX_LITERAL_EXPONENT):
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise FormulaError(f"number {shown} is out of range (at most {MAX_LITERAL_CHARS} characters and an exponent "
                           f"within +-{MAX_LITERAL_EXPONENT}); no float type holds more: write a shorter number",
                           path=origin, line=lineno, column=col)
