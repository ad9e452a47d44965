"""Hypothesis strategies for `dmlconform.spec.model` records.

Every strategy here generates only values the JSON Schema accepts, so
``loads_spec(dumps_spec(spec)) == spec`` must hold for all of them
(tests/spec/test_store.py).  Other tests reuse them: the linter, the case
generator and the diff all take a `Spec`.  Every draw carries a ``label=``
(STYLE.md, Tests) so a failing example names what it drew.

Text is any Unicode except lone surrogates, which a UTF-8 file cannot hold;
free text leans towards what breaks YAML emitters: line breaks, trailing and
leading spaces, quotes, ``:``, ``#``, and words that YAML 1.1 or 1.2 read as
numbers, booleans or null.

Strategies are built once, as module constants, and drawn from inside the
composites: building them per draw costs more than the drawing.
"""

from __future__ import annotations

from hypothesis import strategies as st

from dmlconform.spec import model as m

#: Words a YAML reader may turn into something other than a string.
TRICKY_WORDS: tuple[str, ...] = (
    "", " ", "yes", "No", "on", "OFF", "y", "n", "true", "False", "null", "Null", "~", "none",
    "1_0", "2_0", "6_4", "1.0", "1e5", "1E-5", ".5", "5.", "0x1F", "0o17", "0b101", "012",
    "1:30", "-0", "+1", ".inf", "-.Inf", ".nan", "2020-01-01", "2001-12-14t21:59:43.10-05:00",
    "=", "<<", "- a", "a: b", "a #b", "#", "'", '"', "@x", "`x`", "!tag", "&a", "*a",
    "%TAG", "---", "...", "[", "]", "{", "}", "?", "|", ">", ",", "\t", "a\tb",
)

#: Pieces that free text is built from.
_FRAGMENTS = st.sampled_from((
    *TRICKY_WORDS, "\n", "\n\n", "  ", " \n", "\r\n", "\r", "\x85", "\u2028", "\u2029",
    "\ufeff", "\x00", "\x1b", "\x7f", "é", "\u00a0", "Δ", "💥", "\U0010fffd", "x = max(0, y)",
))

_ANY_CHAR = st.characters(exclude_categories=("Cs",))
_TEXT_PARTS = st.lists(st.one_of(_FRAGMENTS, st.text(_ANY_CHAR, max_size=8)), max_size=6)
_PADDING = st.text(_ANY_CHAR, min_size=1, max_size=4)


@st.composite
def free_text(draw: st.DrawFn, *, min_size: int = 0) -> str:
    """Arbitrary text, mostly glued from YAML-hostile fragments."""
    text = "".join(draw(_TEXT_PARTS, label="text parts"))
    while len(text) < min_size:
        text += draw(_PADDING, label="text padding")
    return text


def _word(first: str, rest: str, *, max_size: int = 12, prefix: str = "", suffix: str = "") -> st.SearchStrategy[str]:
    """``prefix + [first][rest]* + suffix``: a regex-shaped name, drawn faster than ``from_regex``."""
    return st.builds(lambda a, b: prefix + a + b + suffix,
                     st.sampled_from(first), st.text(st.sampled_from(rest), max_size=max_size))


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_DIGITS = "0123456789"
_LOWER = _UPPER.lower()

#: Names matching the schema's patterns.
identifiers = _word(_UPPER + _LOWER + "_", _UPPER + _LOWER + _DIGITS + "_")
operator_names = _word(_UPPER, _UPPER + _DIGITS + "_", max_size=20)
struct_names = _word(_UPPER + _DIGITS + "_", _UPPER + _DIGITS + "_", max_size=20,
                     prefix="DML_", suffix="_OPERATOR_DESC")
categories = _word(_LOWER, _LOWER + _DIGITS + "_")
enum_values = _word(_UPPER + _DIGITS + "_", _UPPER + _DIGITS + "_")
levels = st.sampled_from(m.FeatureLevel)
dtypes = st.sampled_from(m.DataType)
#: ``default_exact``: the schema's ``-?\d+(\.\d+)?(/\d+)?`` in ASCII digits.
exact_numbers = st.builds(
    lambda sign, whole, frac, den: sign + str(whole) + (f".{frac}" if frac is not None else "")
    + (f"/{den}" if den is not None else ""),
    st.sampled_from(("", "-")), st.integers(0, 10**6), st.none() | st.integers(0, 999),
    st.none() | st.integers(1, 999))
dates = st.builds(lambda y, mo, d: f"{y:04d}-{mo:02d}-{d:02d}",
                  st.integers(0, 9999), st.integers(0, 99), st.integers(0, 99))
row_kinds = st.sampled_from(
    ("Input", "Output", "Optional input", "Optional output", "Array of inputs", "Array of outputs"))
texts = free_text()
nonempty_texts = free_text(min_size=1)
optional_texts = st.none() | texts
optional_identifiers = st.none() | identifiers

#: A field's typical default: a number, a bool, or an enum name / free text.
#: NaN is left out because ``nan != nan`` would fail every equality check.
defaults = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False),
    st.sampled_from(TRICKY_WORDS),
    texts,
)


def _tuples(elements: st.SearchStrategy, *, max_size: int = 3, min_size: int = 0) -> st.SearchStrategy:
    return st.lists(elements, min_size=min_size, max_size=max_size).map(tuple)


_BOOLS = st.booleans()
_FIELD_KINDS = st.sampled_from(m.FieldKind)
_ROLES = st.none() | st.sampled_from(m.TensorRole)
_EXACTS = st.none() | exact_numbers
_SOURCES = st.sampled_from(m.FormulaSource)
_DIMS = _tuples(st.integers(1, 8), max_size=5)  # DirectML: 1 to 8 dimensions
_DTYPE_TUPLES = _tuples(dtypes, max_size=5)
_ENUM_TUPLES = _tuples(enum_values, min_size=1)
_CONSTRAINT_KINDS = st.sampled_from(m.ConstraintKind)
_IDENT_TUPLES = _tuples(identifiers)
_PROPERTY_TUPLES = _tuples(st.sampled_from(m.TENSOR_PROPERTIES))
_DOC_LINES = st.none() | st.integers(min_value=1, max_value=10**6)
_UNIQUE_DTYPES = st.lists(dtypes, unique=True, max_size=3)
_ULPS = st.integers(0, 2**31)
_VARIANTS = st.sampled_from("ABC")
_DATES = st.none() | dates


_BOUNDS = st.none() | st.floats(allow_nan=False, allow_infinity=False)
_NUMBERS = st.none() | st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def domains(draw: st.DrawFn) -> m.Domain:
    """A field's domain (issue #22 item 4): any bounds, symbols and text (lint judges them).
    Never one that says nothing (every key at its default, written ``{}``):
    extract makes a domain only where the doc states a bound."""
    domain = m.Domain(
        min=draw(_BOUNDS, label="domain min"), max=draw(_BOUNDS, label="domain max"),
        min_inclusive=draw(_BOOLS, label="domain min_inclusive"),
        max_inclusive=draw(_BOOLS, label="domain max_inclusive"),
        min_symbol=draw(st.none() | nonempty_texts, label="domain min_symbol"),
        max_symbol=draw(st.none() | nonempty_texts, label="domain max_symbol"),
        text=draw(texts, label="domain text"), source=draw(optional_texts, label="domain source"),
    )
    return domain if domain != m.Domain() else m.Domain(text="stated in prose")


@st.composite
def fields(draw: st.DrawFn) -> m.Field:
    return m.Field(
        name=draw(identifiers, label="field name"),
        c_type=draw(nonempty_texts, label="field c_type"),
        kind=draw(_FIELD_KINDS, label="field kind"),
        role=draw(_ROLES, label="field role"),
        optional=draw(_BOOLS, label="field optional"),
        count_field=draw(optional_identifiers, label="field count_field"),
        default=draw(defaults, label="field default"),
        default_exact=draw(_EXACTS, label="field default_exact"),
        domain=draw(st.none() | domains(), label="field domain"),
        typical=draw(_NUMBERS, label="field typical"),
    )


@st.composite
def formulas(draw: st.DrawFn) -> m.Formula:
    return m.Formula(
        source=draw(_SOURCES, label="formula source"),
        text=draw(optional_texts, label="formula text"),
        parsed=draw(optional_texts, label="formula parsed"),
        evaluable=draw(_BOOLS, label="formula evaluable"),
        reason=draw(optional_texts, label="formula reason"),
        notes=tuple(draw(st.lists(nonempty_texts, max_size=2), label="formula notes")),
        nan_policy=draw(st.sampled_from(m.NanPolicy), label="formula nan_policy"),
        integer_overflow=draw(st.sampled_from(m.Overflow), label="formula integer_overflow"),
        signed_zero=draw(st.none() | _BOOLS, label="formula signed_zero"),
    )


@st.composite
def rows(draw: st.DrawFn) -> m.TensorSupport:
    return m.TensorSupport(
        tensor=draw(identifiers, label="row tensor"),
        kind=draw(row_kinds, label="row kind"),
        dims=draw(_DIMS, label="row dims"),
        dtypes=draw(_DTYPE_TUPLES, label="row dtypes"),
        dimensions=draw(optional_texts, label="row dimensions"),
    )


@st.composite
def conditions(draw: st.DrawFn) -> m.Condition:
    return m.Condition(
        field=draw(identifiers, label="condition field"),
        values=draw(_ENUM_TUPLES, label="condition values"),
    )


_CONDITIONS = st.none() | conditions()
_ROW_TUPLES = _tuples(rows(), max_size=2)


@st.composite
def tables(draw: st.DrawFn) -> m.SupportTable:
    return m.SupportTable(
        level=draw(levels, label="table level"),
        rows=draw(_ROW_TUPLES, label="table rows"),
        condition=draw(_CONDITIONS, label="table condition"),
    )


@st.composite
def constraints(draw: st.DrawFn) -> m.Constraint:
    return m.Constraint(
        kind=draw(_CONSTRAINT_KINDS, label="constraint kind"),
        tensors=draw(_IDENT_TUPLES, label="constraint tensors"),
        properties=draw(_PROPERTY_TUPLES, label="constraint properties"),
        doc_line=draw(_DOC_LINES, label="constraint doc_line"),
    )


@st.composite
def tolerances(draw: st.DrawFn) -> tuple[m.Tolerance, ...]:
    """Unique data types: the YAML keys tolerance by data type."""
    types = draw(_UNIQUE_DTYPES, label="tolerance dtypes")
    return tuple(m.Tolerance(t, draw(_ULPS, label=f"ulp {t.name}")) for t in types)


@st.composite
def sources(draw: st.DrawFn) -> m.SourcePage:
    return m.SourcePage(
        path=draw(texts, label="source path"),
        variant=draw(_VARIANTS, label="source variant"),
        date=draw(_DATES, label="source date"),
    )


@st.composite
def disagreements(draw: st.DrawFn) -> m.Disagreement:
    return m.Disagreement(
        fact=draw(texts, label="disagreement fact"),
        chosen=draw(texts, label="disagreement chosen"),
        other=draw(texts, label="disagreement other"),
        other_path=draw(texts, label="disagreement other_path"),
    )


_LEVEL_TUPLES = _tuples(levels)
_FIELD_TUPLES = _tuples(fields())
_FORMULAS = formulas()
_TABLE_TUPLES = _tuples(tables(), max_size=2)
_IN_PLACES = _tuples(st.builds(m.InPlace, identifiers, identifiers), max_size=2)
_CONSTRAINT_TUPLES = _tuples(constraints(), max_size=2)
_TOLERANCES = tolerances()
_SOURCE_TUPLES = _tuples(sources(), max_size=2)
_DISAGREEMENT_TUPLES = _tuples(disagreements(), max_size=2)


@st.composite
def specs(draw: st.DrawFn) -> m.Spec:
    """A schema-valid `Spec`.  Cross-references (a row naming a field,
    ``count_field`` naming a field) are not kept consistent: that is the
    linter's business, not the file format's."""
    return m.Spec(
        operator=draw(operator_names, label="operator"),
        struct=draw(struct_names, label="struct"),
        category=draw(categories, label="category"),
        introduced=draw(levels, label="introduced"),
        introduced_also=draw(_LEVEL_TUPLES, label="introduced_also"),
        fields=draw(_FIELD_TUPLES, label="fields"),
        formula=draw(_FORMULAS, label="formula"),
        support=draw(_TABLE_TUPLES, label="support"),
        in_place=draw(_IN_PLACES, label="in_place"),
        constraints=draw(_CONSTRAINT_TUPLES, label="constraints"),
        tolerance=draw(_TOLERANCES, label="tolerance"),
        sources=draw(_SOURCE_TUPLES, label="sources"),
        disagreements=draw(_DISAGREEMENT_TUPLES, label="disagreements"),
    )
