"""Tests for dmlconform.spec.load: YAML text -> Spec, every problem as one
``path:line:col: error: message`` line, and nothing but SpecError escaping."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.catalog import load_spec
from dmlconform.errors import SpecError
from dmlconform.spec import load
from dmlconform.spec import model as m
from dmlconform.spec.files import spec_files
from dmlconform.spec.load import Document, loads_spec, parse_document, read_text
from tests.conftest import REPO
from tests.strategies import specs

VALID = """\
operator: ACTIVATION_SHRINK
struct: DML_ACTIVATION_SHRINK_OPERATOR_DESC
category: activation
introduced: 3_1
sources:
- path: operators/activation_shrink.md
  variant: A
  date: 2024-01-31
fields:
- name: InputTensor
  c_type: const DML_TENSOR_DESC*
  kind: tensor
  role: input
- name: Bias
  c_type: FLOAT
  kind: scalar
  default: 0.5
formula:
  source: code
  text: |
    f(x) = x - Bias, if x > Threshold
support:
- level: 3_1
  rows:
  - tensor: InputTensor
    kind: Input
    dims: [1, 2, 3, 4]
    dtypes: [FLOAT32, FLOAT16]
tolerance:
  FLOAT16:
    ulp: 2
"""

ALLOWED_FIELD_KEYS = "name, c_type, kind, role, optional, count_field, default, default_exact, domain, typical"


def _edit(old: str, new: str) -> str:
    """VALID with ``old`` (which must occur once) replaced by ``new``."""
    assert VALID.count(old) == 1, old
    return VALID.replace(old, new)


def _errors(text: str) -> list[str]:
    with pytest.raises(SpecError) as info:
        loads_spec(text, path="op.yaml")
    return info.value.render().splitlines()


# --- the happy path ---------------------------------------------------------


def test_valid_spec_loads_into_records() -> None:
    spec = loads_spec(VALID, path="op.yaml")
    assert spec.operator == "ACTIVATION_SHRINK"
    assert spec.introduced is m.FeatureLevel.FL_3_1
    assert spec.sources == (m.SourcePage("operators/activation_shrink.md", "A", "2024-01-31"),)
    assert spec.fields[1] == m.Field("Bias", "FLOAT", m.FieldKind.SCALAR, default=0.5)
    assert spec.formula == m.Formula(m.FormulaSource.CODE, "f(x) = x - Bias, if x > Threshold\n")
    assert spec.support == (m.SupportTable(m.FeatureLevel.FL_3_1, (
        m.TensorSupport("InputTensor", "Input", (1, 2, 3, 4), (m.DataType.FLOAT32, m.DataType.FLOAT16)),
    )),)
    assert spec.tolerance == (m.Tolerance(m.DataType.FLOAT16, 2),)


def test_integral_floats_become_ints() -> None:
    """JSON Schema counts 2.0 as an integer; the records must still hold ints."""
    text = _edit("dims: [1, 2, 3, 4]", "dims: [1.0, 2]").replace("ulp: 2", "ulp: 2.0")
    text += "constraints:\n- kind: other\n  tensors: []\n  doc_line: 7.0\n"
    spec = loads_spec(text)
    assert [type(n) for n in spec.support[0].rows[0].dims] == [int, int]
    assert type(spec.tolerance[0].ulp) is int
    assert type(spec.constraints[0].doc_line) is int


# YAML 1.2 core schema, not PyYAML's 1.1: what a hand-written value means.
@pytest.mark.parametrize(("text", "value"), [
    ("2_0", "2_0"), ("6_4", "6_4"), ("yes", "yes"), ("No", "No"), ("on", "on"), ("y", "y"),
    ("2020-01-01", "2020-01-01"), ("1:30", "1:30"), ("0b101", "0b101"), ("1_000", "1_000"),
    ("=", "="), ("<<", "<<"), ("none", "none"), ("'12'", "12"), ("!!str 12", "12"),
    ("12", 12), ("-7", -7), ("+3", 3), ("012", 12), ("0x1F", 31), ("0o17", 15), ("!!int 12", 12),
    ("1e-5", 1e-05), ("1E5", 100000.0), (".5", 0.5), ("5.", 5.0), ("-0.0", -0.0), ("!!float 3", 3.0),
    (".inf", math.inf), ("-.Inf", -math.inf), ("+.INF", math.inf),
    ("true", True), ("False", False), ("TRUE", True), ("!!bool false", False),
    ("~", None), ("null", None), ("NULL", None), ("", None),
])
def test_plain_scalars_follow_yaml_1_2_core(text: str, value: object) -> None:
    got = parse_document(f"v: {text}\n", path="x.yaml").data["v"]
    assert (type(got), repr(got)) == (type(value), repr(value))


def test_nan_is_a_float() -> None:
    assert math.isnan(parse_document("v: .NaN\n", path="x.yaml").data["v"])


def test_positions_of_values_and_keys() -> None:
    doc = parse_document(VALID, path="op.yaml")
    assert doc.where(("fields", 1, "default")) == (17, 12)
    assert doc.where(("fields", 1, "default"), key=True) == (17, 3)
    assert doc.where(("support", 0, "rows", 0, "dtypes", 1)) == (28, 23)
    assert doc.where(("support", 0, "nothing", "here")) == (23, 3)  # nearest parent
    assert doc.where(()) == (1, 1)


def test_document_where_without_positions() -> None:
    assert Document("x.yaml", {}, {}).where(("a", 1)) == (1, 1)


# --- exact error lines --------------------------------------------------------


def test_invalid_yaml_unclosed_bracket() -> None:
    assert _errors(_edit("dims: [1, 2, 3, 4]", "dims: [1, 2, 3, 4")) == [
        "op.yaml:28:11: error: not valid YAML: expected ',' or ']', but got ':' "
        "(while parsing a flow sequence at 27:11)",
    ]


def test_invalid_yaml_unclosed_quote() -> None:
    assert _errors("operator: 'ACT\n") == [
        "op.yaml:2:1: error: not valid YAML: found unexpected end of stream "
        "(while scanning a quoted scalar at 1:11)",
    ]


def test_tab_indentation_says_to_use_spaces() -> None:
    assert _errors("fields:\n\t- name: x\n") == [
        "op.yaml:2:1: error: not valid YAML: found character '\\t' that cannot start any token; "
        "indent with spaces, not tabs",
    ]


def test_unknown_key_is_reported_at_the_key() -> None:
    assert _errors(_edit("  default: 0.5\n", "  default: 0.5\n  colour: red\n")) == [
        f"op.yaml:18:3: error: fields.1: unknown key 'colour' (allowed keys: {ALLOWED_FIELD_KEYS})",
    ]


def test_each_unknown_key_gets_its_own_line() -> None:
    assert _errors(_edit("  default: 0.5\n", "  zeta: 1\n  default: 0.5\n  alpha: 2\n")) == [
        f"op.yaml:17:3: error: fields.1: unknown key 'zeta' (allowed keys: {ALLOWED_FIELD_KEYS})",
        f"op.yaml:19:3: error: fields.1: unknown key 'alpha' (allowed keys: {ALLOWED_FIELD_KEYS})",
    ]


def test_wrong_type_names_expected_and_got() -> None:
    assert _errors(_edit("  kind: scalar\n", "  kind: scalar\n  optional: yes\n")) == [
        "op.yaml:17:13: error: fields.1.optional: expected a boolean, got a string 'yes'",
    ]


def test_wrong_type_of_a_collection() -> None:
    assert _errors(_edit("dims: [1, 2, 3, 4]", "dims: {a: 1}")) == [
        "op.yaml:27:11: error: support.0.rows.0.dims: expected a list, got a mapping",
    ]


def test_wrong_type_with_two_allowed_types() -> None:
    assert _errors(_edit("  date: 2024-01-31", "  date: 20240131")) == [
        "op.yaml:8:9: error: sources.0.date: expected a string or null, got an integer 20240131",
    ]


def test_unknown_feature_level_suggests_the_closest() -> None:
    assert _errors(_edit("introduced: 3_1", "introduced: 3_2")) == [
        "op.yaml:4:13: error: introduced: '3_2' is not allowed; did you mean '3_1'?",
    ]


def test_feature_level_far_from_all_lists_them() -> None:
    assert _errors(_edit("introduced: 3_1", "introduced: DML_FEATURE_LEVEL_3_1")) == [
        "op.yaml:4:13: error: introduced: 'DML_FEATURE_LEVEL_3_1' is not allowed; expected one of "
        "1_0, 2_0, 2_1, 3_0, 3_1, 4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4",
    ]


def test_unknown_data_type_in_a_row() -> None:
    assert _errors(_edit("[FLOAT32, FLOAT16]", "[FLOAT32, FLAOT16]")) == [
        "op.yaml:28:23: error: support.0.rows.0.dtypes.1: 'FLAOT16' is not allowed; did you mean 'FLOAT16'?",
    ]


def test_unknown_data_type_as_tolerance_key() -> None:
    assert _errors(_edit("  FLOAT16:\n", "  float16:\n")) == [
        "op.yaml:30:3: error: tolerance: key 'float16' is not allowed; expected one of FLOAT64, FLOAT32, "
        "FLOAT16, INT64, INT32, INT16, INT8, INT4, UINT64, UINT32, UINT16, UINT8, UINT4",
    ]


def test_missing_required_key() -> None:
    assert _errors(_edit("struct: DML_ACTIVATION_SHRINK_OPERATOR_DESC\n", "")) == [
        "op.yaml:1:1: error: top level: 'struct' is a required property",
    ]


def test_missing_required_key_in_a_list_item() -> None:
    assert _errors(_edit("  kind: scalar\n", "")) == [
        "op.yaml:14:3: error: fields.1: 'kind' is a required property",
    ]


def test_pattern_mismatch_shows_the_pattern() -> None:
    assert _errors(_edit("operator: ACTIVATION_SHRINK", "operator: activation-shrink")) == [
        "op.yaml:1:11: error: operator: 'activation-shrink' does not match the pattern ^[A-Z][A-Z0-9_]*$",
    ]


def test_anchor_is_rejected() -> None:
    assert _errors(_edit("dims: [1, 2, 3, 4]", "dims: &d [1, 2, 3, 4]")) == [
        "op.yaml:27:11: error: YAML anchors and aliases (&name, *name) are not allowed here; "
        "write the value out",
    ]


def test_alias_is_rejected() -> None:
    assert _errors(_edit("  default: 0.5", "  default: *zero")) == [
        "op.yaml:17:12: error: YAML anchors and aliases (&name, *name) are not allowed here; "
        "write the value out",
    ]


def test_alias_bomb_is_refused_quickly() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi"))
    assert _errors(bomb) == [
        "op.yaml:1:4: error: YAML anchors and aliases (&name, *name) are not allowed here; "
        "write the value out",
    ]


def test_duplicate_key_names_the_first() -> None:
    assert _errors(_edit("  default: 0.5\n", "  default: 0.5\n  kind: enum\n")) == [
        "op.yaml:18:3: error: duplicate key 'kind' (first at 16:3)",
    ]


def test_duplicate_key_quoted_and_plain() -> None:
    assert _errors("a: 1\n'a': 2\n") == ["op.yaml:2:1: error: duplicate key 'a' (first at 1:1)"]


def test_unsupported_tag() -> None:
    assert _errors(_edit("default: 0.5", "default: !!python/object:os.system 0.5")) == [
        "op.yaml:17:12: error: unsupported YAML tag '!!python/object:os.system'; use plain strings, "
        "numbers, booleans, lists and mappings",
    ]


def test_unsupported_tag_on_a_collection_and_a_key() -> None:
    assert _errors("a: !!set {x: null}\n") == [
        "op.yaml:1:4: error: unsupported YAML tag '!!set'; use plain strings, numbers, booleans, lists and mappings",
    ]
    assert _errors("!!python/name:os.system a: 1\n") == [
        "op.yaml:1:1: error: unsupported YAML tag '!!python/name:os.system'; use plain strings, numbers, "
        "booleans, lists and mappings",
    ]


def test_explicit_timestamp_is_an_unsupported_tag() -> None:
    assert _errors("a: !!timestamp 2020-01-01\n") == [
        "op.yaml:1:4: error: unsupported YAML tag '!!timestamp'; use plain strings, numbers, booleans, "
        "lists and mappings",
    ]


def test_bad_explicitly_tagged_scalar() -> None:
    assert _errors("a: !!bool maybe\n") == ["op.yaml:1:4: error: 'maybe' is not a valid bool"]
    assert _errors("a: !!int 1_0\n") == ["op.yaml:1:4: error: '1_0' is not a valid int"]


def test_complex_key() -> None:
    assert _errors("? [a, b]\n: c\n") == [
        "op.yaml:1:3: error: mapping keys must be plain strings, not lists or mappings",
    ]


def test_top_level_list() -> None:
    assert _errors("- operator: X\n- struct: Y\n") == [
        "op.yaml:1:1: error: a spec must be a YAML mapping, not a list",
    ]


def test_top_level_scalar() -> None:
    assert _errors("   hello\n") == ["op.yaml:1:4: error: a spec must be a YAML mapping, not a string 'hello'"]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n"])
def test_empty_file(text: str) -> None:
    assert _errors(text) == [
        "op.yaml:1:1: error: empty file: a spec is a YAML mapping with at least "
        "operator, struct, category, introduced, fields, formula, support",
    ]


def test_null_document_is_not_a_mapping() -> None:
    assert _errors("~\n") == ["op.yaml:1:1: error: a spec must be a YAML mapping, not null"]


def test_two_documents() -> None:
    assert _errors("a: 1\n---\nb: 2\n") == [
        "op.yaml:2:1: error: not valid YAML: expected a single document in the stream, but found another document",
    ]


def test_control_character() -> None:
    assert _errors("a: b\nc: d\x00\n") == [
        "op.yaml:2:5: error: not valid YAML: special character U+0000 is not allowed; "
        "write it as an escape in a double-quoted string",
    ]


def test_deep_nesting() -> None:
    assert _errors("[" * 100) == ["op.yaml:1:65: error: nesting deeper than 64 levels"]


def test_huge_integer() -> None:
    assert _errors("a: " + "9" * 5000 + "\n") == [
        "op.yaml:1:4: error: '99999999999999999999999999999999999999… has too many digits (5000)",
    ]


def test_several_problems_one_line_each_in_document_order() -> None:
    text = (_edit("  default: 0.5\n", "  default: 0.5\n  colour: red\n")
            .replace("introduced: 3_1", "introduced: 3_2")
            .replace("[FLOAT32, FLOAT16]", "[FLOAT32, FLAOT16]")
            .replace("  variant: A", "  variant: D"))
    assert _errors(text) == [
        "op.yaml:4:13: error: introduced: '3_2' is not allowed; did you mean '3_1'?",
        "op.yaml:7:12: error: sources.0.variant: 'D' is not allowed; expected one of A, B, C",
        f"op.yaml:18:3: error: fields.1: unknown key 'colour' (allowed keys: {ALLOWED_FIELD_KEYS})",
        "op.yaml:29:23: error: support.0.rows.0.dtypes.1: 'FLAOT16' is not allowed; did you mean 'FLOAT16'?",
    ]


def test_spec_error_location_is_the_first_problem() -> None:
    with pytest.raises(SpecError) as info:
        loads_spec(_edit("introduced: 3_1", "introduced: 3_2").replace("variant: A", "variant: D"), path="op.yaml")
    error = info.value
    assert (error.path, error.line, error.column) == ("op.yaml", 4, 13)
    assert error.message == "introduced: '3_2' is not allowed; did you mean '3_1'?"
    assert len(error.problems) == 2


def test_long_values_are_cut_in_messages() -> None:
    assert _errors(_edit("  default: 0.5\n", "  default: 0.5\n  " + "k" * 60 + ": 1\n")) == [
        f"op.yaml:18:3: error: fields.1: unknown key 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk… "
        f"(allowed keys: {ALLOWED_FIELD_KEYS})",
    ]


# --- files ------------------------------------------------------------------


def test_load_spec_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "ACTIVATION_SHRINK.yaml"
    path.write_bytes(VALID.replace("\n", "\r\n").encode())
    assert load_spec(path) == loads_spec(VALID)


def test_load_spec_invalid_utf8_points_at_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"operator: X\nstruct: D\xc3\xa9\xff\n")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.render() == (
        f"{path}:2:11: error: not UTF-8 text: byte 0xFF at offset 23 (invalid start byte); save the file as UTF-8"
    )


def test_load_spec_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.render() == f"{path}: error: cannot read: No such file or directory"
    assert (info.value.line, info.value.column) == (0, 0)


def test_read_text_of_a_folder(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        read_text(tmp_path)
    assert info.value.render() == (f"{tmp_path}: error: a folder, not a regular file: only regular files are read; "
                                   "name the file itself")


def test_load_spec_errors_carry_the_file_path(tmp_path: Path) -> None:
    path = tmp_path / "op.yaml"
    path.write_text(_edit("introduced: 3_1", "introduced: 3_2"), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.render() == f"{path}:4:13: error: introduced: '3_2' is not allowed; did you mean '3_1'?"


def test_spec_files_searches_folders_recursively_and_sorts(tmp_path: Path) -> None:
    for name in ("b/Z.yaml", "b/deep/er/A.yaml", "a.yaml", "notes.txt", "c.yml", "b/deep/x.YAML.bak"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x: 1\n")
    outside = tmp_path.parent / f"{tmp_path.name}-other.txt"
    outside.write_text("x: 1\n")
    found = spec_files([tmp_path / "b", outside, tmp_path / "a.yaml", tmp_path / "b" / "Z.yaml"])
    assert found == sorted([
        tmp_path / "a.yaml", tmp_path / "b" / "Z.yaml", tmp_path / "b" / "deep" / "er" / "A.yaml", outside,
    ])
    assert spec_files([tmp_path]) == sorted([
        tmp_path / "a.yaml", tmp_path / "b" / "Z.yaml", tmp_path / "b" / "deep" / "er" / "A.yaml",
    ])


def test_spec_files_names_what_is_not_a_spec_file(tmp_path: Path) -> None:
    """A folder named like a spec, a dangling link or a missing file is an
    error naming each one, never left out in silence (issue #20)."""
    (tmp_path / "a.yaml").write_text("x: 1\n")
    (tmp_path / "dir.yaml").mkdir()
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    missing = tmp_path / "missing.yaml"
    with pytest.raises(SpecError) as info:
        spec_files([tmp_path, missing])
    assert info.value.render().splitlines() == [
        f"{tmp_path / 'dir.yaml'}: error: a folder, not a regular file: only regular files are read; "
        "name the file itself",
        f"{tmp_path / 'gone.yaml'}: error: dangling symbolic link: its target {str(tmp_path / 'nowhere.yaml')!r} "
        "does not exist; fix the link or remove it",
        f"{missing}: error: cannot read: No such file or directory",
    ]


def test_spec_files_of_nothing() -> None:
    assert spec_files([]) == []


# --- properties: nothing but SpecError, always located ---------------------------

_YAMLISH = st.sampled_from((
    ":", ": ", "-", "- ", "[", "]", "{", "}", ",", "? ", "&a ", "*a", "*b", "!!python/object:os.system ",
    "!!int ", "!!bool ", "!!float ", "!!str ", "!!timestamp ", "!!set ", "!!binary ", "!<%0A> ", "!foo ",
    "!e!x ", "%YAML 1.1\n", "%TAG !e! tag:x,2000:\n", "---\n", "...\n", "\t", "\n", "  ", "    ", "#",
    "'", '"', "|", "|-", ">+", "\\", "\\x", "9" * 5000, "1_0", "0x", "0o9", "1e999", ".nan", "-.inf",
    "yes", "~", "<<", "<<: *a", "a: 1\na: 2\n", "operator", "fields", "introduced: ", "dims: [",
    "\x00", "\x07", "\x85", "\u2028", "\ufeff", "\udc80", "\uffff", "é", "💥", "[" * 70, "{a: " * 70,
    "- " * 70, "a:\n" + "  " * 8,
))


def _assert_located(error: SpecError, text: str, path: str) -> None:
    """Every problem: this path, one line, and a real position in ``text``."""
    lines = len(re.split(r"\r\n|[\n\r\x85\u2028\u2029]", text)) + 1
    rendered = error.render().split("\n")
    assert len(rendered) == len(error.problems) >= 1
    for problem, line in zip(error.problems, rendered):
        assert problem.path == path
        assert 1 <= problem.line <= lines, line
        assert problem.column >= 1, line
        assert line.startswith(f"{path}:{problem.line}:{problem.column}: error: ")


def _load_or_located(text: str) -> None:
    try:
        loads_spec(text, path="fuzz.yaml")
    except SpecError as error:
        _assert_located(error, text, "fuzz.yaml")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_arbitrary_text_raises_only_located_spec_errors(text: str) -> None:
    _load_or_located(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_YAMLISH, st.text(max_size=4)), max_size=20))
def test_yamlish_text_raises_only_located_spec_errors(parts: list[str]) -> None:
    _load_or_located("".join(parts))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_mutated_valid_spec_raises_only_located_spec_errors(data: st.DataObject) -> None:
    """Valid specs with fragments spliced in reach the schema checks and build_spec."""
    from dmlconform.spec.store import dumps_spec

    text = data.draw(st.one_of(st.just(VALID), specs().map(dumps_spec)), label="base spec")
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        at = data.draw(st.integers(0, len(text)), label="edit at")
        cut = data.draw(st.integers(0, 8), label="cut length")
        text = text[:at] + data.draw(_YAMLISH | st.text(max_size=3), label="insert") + text[at + cut:]
    _load_or_located(text)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_on_disk_raise_only_spec_errors(tmp_path_factory: pytest.TempPathFactory, raw: bytes) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "x.yaml"
    path.write_bytes(raw)
    try:
        load_spec(path)
    except SpecError as error:
        assert error.path == str(path)
        assert all(p.path == str(path) for p in error.problems)


def test_libyaml_and_python_paths_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path (libyaml events) gives the same data and positions as the
    pure-Python reader, on every committed spec and on broken text."""
    if load._CParser is None:
        pytest.skip("this PyYAML has no libyaml")
    from tests.conftest import REPO

    texts = [(p.name, p.read_text(encoding="utf-8")) for p in sorted((REPO / "specs").glob("*.yaml"))]
    texts += [("bad1", "a: [1, 2\n"), ("bad2", "a: &x 1\nb: *x\n"), ("bad3", "a:\n\tb: 1\n"), ("ok", "é: 'ü'\nx: [1, 2]\n")]

    def read(name: str, text: str) -> tuple[Any, ...]:
        try:
            doc = load.parse_document(text, path=name)
            return doc.data, doc.positions, doc.key_positions
        except SpecError as exc:
            return (exc.render(),)

    fast = [read(n, t) for n, t in texts]
    monkeypatch.setattr(load, "_CParser", None)
    assert fast == [read(n, t) for n, t in texts]


def test_a_text_that_passed_the_schema_is_not_validated_again(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The cache says which exact texts passed; a changed text, or no cache
    folder to write, means validating again."""
    import dmlconform.spec.load as load

    monkeypatch.setenv("DMLCONFORM_CACHE", str(tmp_path / "cache"))
    text = (REPO / "specs" / "ACTIVATION_SHRINK.yaml").read_text(encoding="utf-8")
    calls: list[str] = []
    real = load.schema_problems
    monkeypatch.setattr(load, "schema_problems", lambda doc: (calls.append(doc.path), real(doc))[1])
    spec = load.loads_spec(text, path="a.yaml")
    assert load.loads_spec(text, path="b.yaml") == spec and calls == ["a.yaml"]
    assert len(list((tmp_path / "cache" / "parsed-specs").iterdir())) == 1
    broken = text.replace("category: activation", "category: 7")
    for _ in range(2):  # an invalid text is never remembered: each load finds its problem
        with pytest.raises(SpecError, match="category"):
            load.loads_spec(broken, path="c.yaml")
    assert calls == ["a.yaml", "c.yaml", "c.yaml"]
    monkeypatch.setenv("DMLCONFORM_CACHE", str(tmp_path / "a-file" / "cache"))
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    assert load.loads_spec(text, path="d.yaml") == spec and calls[-1] == "d.yaml"   # nowhere to remember: fine


def test_a_spec_from_the_cache_is_the_spec_parsed(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A text that passed is read from its cache file, not parsed again, and
    gives the same Spec; a cache file cut short, of another shape or gone
    is parsed again (time, never correctness); another parser misses."""
    import dmlconform.spec.load as load

    monkeypatch.setenv("DMLCONFORM_CACHE", str(tmp_path / "cache"))
    text = (REPO / "specs" / "ELEMENT_WISE_ADD.yaml").read_text(encoding="utf-8")
    parsed: list[str] = []
    real = load.parse_document

    def parse(text: str, *, path: str) -> Document:
        parsed.append(path)
        return real(text, path=path)

    monkeypatch.setattr(load, "parse_document", parse)
    spec = load.loads_spec(text, path="a.yaml")
    assert load.loads_spec(text, path="b.yaml") == spec and parsed == ["a.yaml"]
    [entry] = (tmp_path / "cache" / "parsed-specs").iterdir()
    for damaged in (entry.read_bytes()[:-7], b"[1, 2]", b"\xff", None):
        if damaged is None:
            entry.unlink()
        else:
            entry.write_bytes(damaged)
        assert load.loads_spec(text, path="c.yaml") == spec and parsed[-1] == "c.yaml"
    monkeypatch.setattr(load, "_parser_key", lambda: b"another parser")
    assert load.loads_spec(text, path="d.yaml") == spec and parsed[-1] == "d.yaml"
    assert len(list((tmp_path / "cache" / "parsed-specs").iterdir())) == 2


def test_the_cache_keeps_the_newest_texts_only(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A process that writes to the cache removes its files beyond the
    `plan.CACHED_SPECS` newest, once: the cache stays bounded however many
    parser versions and texts pass through it."""
    import os

    import dmlconform.spec.load as load
    from dmlconform import plan

    monkeypatch.setenv("DMLCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(plan, "CACHED_SPECS", 3)
    folder = tmp_path / "cache" / "parsed-specs"
    folder.mkdir(parents=True)
    old = [folder / f"{i:064x}.json" for i in range(5)]
    for age, path in enumerate(old):
        path.write_text("{}", encoding="utf-8")
        os.utime(path, ns=(10**18 + age * 10**9, 10**18 + age * 10**9))
    (folder / "notes.txt").write_text("not ours", encoding="utf-8")
    load._pruned.cache_clear()
    text = (REPO / "specs" / "ELEMENT_WISE_ADD.yaml").read_text(encoding="utf-8")
    spec = load.loads_spec(text, path="a.yaml")
    kept = sorted(p.name for p in folder.iterdir())
    written = load._passed(text)
    assert written is not None and written.name in kept
    assert kept == sorted([written.name, old[4].name, old[3].name, "notes.txt"])
    for path in old[:3]:  # gone; the newest two and the new one stay
        assert not path.exists()
    load._pruned.cache_clear()
    assert load.loads_spec(text, path="b.yaml") == spec   # a hit writes nothing, removes nothing
    assert sorted(p.name for p in folder.iterdir()) == kept


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_cached_data_round_trips(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    """What `_remember` keeps, `_recall` gives back exactly: the same values
    of the same types (an int stays an int, -0.0 keeps its sign, NaN and the
    infinities survive), so a spec from the cache is the spec parsed."""
    from dmlconform.spec.store import dumps_spec

    scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8))
    value = data.draw(st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                                   | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20),
                      label="value")
    entry = tmp_path_factory.mktemp("cache") / "entry.json"
    load._remember(entry, {"value": value})
    got = load._recall(entry)
    assert got is not None and _typed(got["value"]) == _typed(value)
    text = data.draw(specs().map(dumps_spec), label="spec text")
    parsed = load.parse_document(text, path="s.yaml").data
    load._remember(entry, parsed)
    recalled = load._recall(entry)
    assert recalled is not None and load.build_spec(recalled) == load.build_spec(parsed)


def _typed(value: Any) -> Any:
    """``value`` with each scalar as (type, repr): equal only where both match (1 == 1.0 == True otherwise)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return type(value).__name__, repr(value)


@pytest.mark.parametrize("escape", ["\\U12345678", "\\U99999999999"])
def test_an_escape_beyond_unicode_is_a_located_spec_error(escape: str) -> None:
    """Found by the mutation test above: PyYAML's scanner raised ValueError
    (chr() beyond U+10FFFF) or OverflowError, a traceback on bad input."""
    with pytest.raises(SpecError) as caught:
        parse_document(f'operator: "{escape}"\n', path="x.yaml")
    assert (caught.value.line, caught.value.column) == (1, 14) and "U0010FFFF" in str(caught.value)
