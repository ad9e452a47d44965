"""Tests for dmlconform.lint.checks: one case per rule, asserting code and line:col."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.lint import checks as lint
from dmlconform.lint.checks import RULES, Finding, formula_identifiers, lint_paths, lint_text
from dmlconform.spec import model as m
from dmlconform.spec import store

DT = m.DataType
FL = m.FeatureLevel
TENSOR = "const DML_TENSOR_DESC*"


def _row(tensor: str, kind: str, dims: tuple[int, ...], dtypes: tuple[DT, ...]) -> m.TensorSupport:
    return m.TensorSupport(tensor, kind, dims, dtypes)


def _table(level: FL, dims: tuple[int, ...], out: tuple[DT, ...] = (DT.FLOAT32, DT.FLOAT16),
           inp: tuple[DT, ...] = (DT.FLOAT32, DT.FLOAT16)) -> m.SupportTable:
    return m.SupportTable(level, (_row("InputTensor", "Input", dims, inp), _row("OutputTensor", "Output", dims, out)))


def base_spec() -> m.Spec:
    """A clean spec; its dump has these lines (see test_base_layout):
    5 introduced, 7/11/15 the fields, 21 formula text, 23-24 in_place,
    27 constraint tensors, 30 the 3_0 table (rows 32-39), 40 the 2_0 table
    (rows 42-49), 51/53 tolerance keys."""
    return m.Spec(
        operator="ACTIVATION_TEST", struct="DML_ACTIVATION_TEST_OPERATOR_DESC", category="activation",
        introduced=FL.FL_2_0,
        fields=(
            m.Field("InputTensor", TENSOR, m.FieldKind.TENSOR, m.TensorRole.INPUT),
            m.Field("OutputTensor", TENSOR, m.FieldKind.TENSOR, m.TensorRole.OUTPUT),
            m.Field("Alpha", "FLOAT", m.FieldKind.SCALAR, default=1.0),
        ),
        formula=m.Formula(m.FormulaSource.CODE, "f(x) = Alpha * x"),
        in_place=(m.InPlace("OutputTensor", "InputTensor"),),
        constraints=(m.Constraint(m.ConstraintKind.SAME, ("InputTensor", "OutputTensor"), m.TENSOR_PROPERTIES),),
        support=(_table(FL.FL_3_0, tuple(range(1, 9))), _table(FL.FL_2_0, (4, 5))),
        tolerance=(m.Tolerance(DT.FLOAT32, 1), m.Tolerance(DT.FLOAT16, 1)),
    )


def base_text() -> str:
    return store.dumps_spec(base_spec())


def where(findings: list[Finding]) -> list[tuple[str, int, int]]:
    return [(f.code, f.line, f.column) for f in findings]


def lint_spec(spec: m.Spec) -> list[Finding]:
    return lint_text(store.dumps_spec(spec), path="spec.yaml")


def replace_text(old: str, new: str, *, count: int = 1) -> str:
    text = base_text()
    assert text.count(old) >= count, f"{old!r} not in the base spec"
    return text.replace(old, new, count)


def test_base_layout() -> None:
    lines = base_text().splitlines()
    assert lines[4] == "introduced: '2_0'"
    assert lines[20] == "  text: f(x) = Alpha * x"
    assert lines[29] == "- level: '3_0'" and lines[39] == "- level: '2_0'"
    assert lines[34] == "    dtypes: [FLOAT32, FLOAT16]"
    assert lines[50] == "  FLOAT32:"


def test_clean_spec_has_no_findings() -> None:
    assert lint_text(base_text(), path="spec.yaml") == []


# --- file and schema rules ---------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("operator: [unclosed\n", [("DML001", 2, 1)]),
    ("", [("DML001", 1, 1)]),
    ("a: 1\na: 2\n", [("DML001", 2, 1)]),
    ("x: !custom 1\n", [("DML001", 1, 4)]),
])
def test_yaml_syntax(text: str, expected: list[tuple[str, int, int]]) -> None:
    findings = lint_text(text, path="bad.yaml")
    assert where(findings) == expected
    assert findings[0].path == "bad.yaml" and findings[0].severity == "error"


def test_schema_problem_is_located_and_stops_semantic_rules() -> None:
    text = replace_text("category: activation\n", "category: activation\ncolour: red\n")
    text = text.replace("  default: 1.0\n", "")  # would be DML106, but the schema problem comes first
    findings = lint_text(text, path="spec.yaml")
    assert where(findings) == [("DML002", 5, 1)]
    assert "unknown key 'colour'" in findings[0].message


def test_not_a_mapping() -> None:
    findings = lint_text("- 1\n- 2\n", path="list.yaml")
    assert where(findings) == [("DML002", 1, 1)]


@pytest.mark.parametrize("old, new, expected, hint", [
    ("introduced: '2_0'", "introduced: '2_O'", ("DML003", 5, 13), "did you mean 2_0?"),
    ("- level: '3_0'", "- level: 3.0", ("DML003", 30, 10), "write '3_0' (as written, YAML reads the number 3.0)"),
    ("- level: '3_0'", "- level: 30", ("DML003", 30, 10), "write '3_0'"),
    ("- level: '3_0'", "- level: DML_FEATURE_LEVEL_3_0", ("DML003", 30, 10), "short form '3_0'"),
    ("- level: '3_0'", "- level: banana", ("DML003", 30, 10), "use one of 1_0"),
    ("dtypes: [FLOAT32, FLOAT16]", "dtypes: [FLOAT32, FLAOT16]", ("DML004", 35, 23), "did you mean FLOAT16?"),
    ("dtypes: [FLOAT32, FLOAT16]", "dtypes: [float32, FLOAT16]", ("DML004", 35, 14), "write FLOAT32"),
    ("  FLOAT16:\n", "  FLAOT16:\n", ("DML004", 53, 3), "did you mean FLOAT16?"),
])
def test_unknown_level_and_dtype(old: str, new: str, expected: tuple[str, int, int], hint: str) -> None:
    findings = lint_text(replace_text(old, new), path="spec.yaml")
    assert where(findings) == [expected]
    assert hint in findings[0].message


def test_unquoted_level_is_read_as_the_level() -> None:
    assert lint_text(replace_text("- level: '3_0'", "- level: 3_0"), path="spec.yaml") == []


def test_introduced_also_level_is_checked() -> None:
    text = replace_text("introduced: '2_0'\n", "introduced: '2_0'\nintroduced_also: ['1_O']\n")
    findings = lint_text(text, path="spec.yaml")
    assert where(findings) == [("DML003", 6, 19)]
    assert "did you mean 1_0?" in findings[0].message


# --- semantic rules: one mutation of the base spec per case -------------------------

def _replace_table(spec: m.Spec, i: int, table: m.SupportTable) -> m.Spec:
    support = list(spec.support)
    support[i] = table
    return dataclasses.replace(spec, support=tuple(support))


def _with_field(spec: m.Spec, name: str, **changes: Any) -> m.Spec:
    fields = tuple(dataclasses.replace(f, **changes) if f.name == name else f for f in spec.fields)
    return dataclasses.replace(spec, fields=fields)


def _add_field(spec: m.Spec, field: m.Field) -> m.Spec:
    return dataclasses.replace(spec, fields=spec.fields + (field,))


R = dataclasses.replace
SHRINK_PARSED = "f(x) = x - Alpha, if x > Alpha\n       x + Alpha, if x < -Alpha\n       x, otherwise"

SEMANTIC_CASES: list[tuple[str, Callable[[m.Spec], m.Spec], list[tuple[str, int, int]], str]] = [
    ("DML101", lambda s: R(s, introduced=FL.FL_3_0), [("DML101", 40, 10)], "older than introduced: 3_0"),
    ("DML102-dtype", lambda s: _replace_table(s, 0, _table(FL.FL_3_0, tuple(range(1, 9)), (DT.FLOAT32,), (DT.FLOAT32,))),
     [("DML102", 35, 13), ("DML102", 39, 13)], "InputTensor at 3_0 drops FLOAT16"),
    ("DML102-dims", lambda s: _replace_table(s, 0, _table(FL.FL_3_0, (1, 2, 3, 4))),
     [("DML102", 34, 11), ("DML102", 38, 11)], "drops dimension counts 5"),
    ("DML103", lambda s: R(s, support=s.support + (s.support[0],)), [("DML103", 50, 10)], "(the first is support.0)"),
    ("DML104-constraint", lambda s: R(s, constraints=(m.Constraint(m.ConstraintKind.SAME, ("InputTensr", "OutputTensor"), ("DataType",)),)),
     [("DML104", 27, 13)], "did you mean InputTensor?"),
    ("DML104-in-place", lambda s: R(s, in_place=(m.InPlace("InputTensor", "Alpha"),)),
     [("DML104", 23, 11), ("DML104", 24, 10)], "'Alpha' is a FLOAT attribute, not a tensor"),
    ("DML104-row", lambda s: _replace_table(s, 1, R(s.support[1], rows=s.support[1].rows + (_row("BiasTensor", "Input", (4,), (DT.FLOAT32,)),))),
     [("DML104", 50, 13)], "'BiasTensor' is not a field"),
    ("DML104-condition", lambda s: _replace_table(s, 1, R(s.support[1], condition=m.Condition("InputTensor", ("A",)))),
     [("DML104", 42, 12)], "name an attribute"),
    ("DML105", lambda s: R(s, formula=m.Formula(m.FormulaSource.CODE, "f(x) = Alpha * x + Betta")),
     [("DML105", 21, 9)], "formula uses Betta, which is neither a tensor nor an attribute"),
    ("DML106", lambda s: _with_field(s, "Alpha", default=None), [("DML106", 15, 9)], "FLOAT attribute Alpha has no typical default"),
    ("DML107", lambda s: R(_replace_table(s, 0, _table(FL.FL_3_0, tuple(range(1, 9)), out=(DT.FLOAT32, DT.FLOAT16, DT.INT32))), constraints=()),
     [("DML107", 35, 13)], "OutputTensor allows FLOAT32, FLOAT16, INT32 and InputTensor allows FLOAT32, FLOAT16"),
    ("DML108", lambda s: _replace_table(s, 0, _table(FL.FL_3_0, tuple(range(1, 9)), out=(DT.FLOAT32, DT.FLOAT16, DT.INT32))),
     [("DML108", 39, 13)], "must have the same DataType"),
    ("DML109-unsupported", lambda s: R(s, tolerance=s.tolerance + (m.Tolerance(DT.FLOAT64, 0),)),
     [("DML109", 55, 3)], "FLOAT64, which no support table allows"),
    ("DML109-integer", lambda s: R(_replace_table(s, 1, _table(FL.FL_2_0, (4, 5), out=(DT.FLOAT32, DT.FLOAT16), inp=(DT.FLOAT32, DT.FLOAT16))),
                                   tolerance=(m.Tolerance(DT.INT32, 2),)),
     [("DML109", 51, 3)], "INT32, which no support table allows"),
    ("DML110-dims", lambda s: _replace_table(s, 1, R(s.support[1], rows=(_row("InputTensor", "Input", (5, 4), (DT.FLOAT32, DT.FLOAT16)), s.support[1].rows[1]))),
     [("DML110", 44, 11)], "write [4, 5]"),
    ("DML110-dtypes", lambda s: _replace_table(s, 1, _table(FL.FL_2_0, (4, 5), out=(DT.FLOAT32, DT.FLOAT16, DT.FLOAT32), inp=(DT.FLOAT32, DT.FLOAT16, DT.FLOAT32))),
     [("DML110", 45, 32), ("DML110", 49, 32)], "lists FLOAT32 twice"),
    ("DML111", lambda s: R(s, introduced_also=(FL.FL_1_0,)), [("DML111", 6, 18)], "also claims introduction at 1_0"),
    ("DML112", lambda s: R(s, disagreements=(m.Disagreement("introduced", "2_0", "1_0", "other/page.md"),)),
     [("DML112", 56, 3)], "other/page.md has '1_0'"),
    ("DML113-missing", lambda s: _with_field(s, "InputTensor", count_field="InputCount"),
     [("DML113", 11, 16)], "count_field 'InputCount' is not a field"),
    ("DML113-type", lambda s: _with_field(s, "InputTensor", count_field="Alpha"),
     [("DML113", 11, 16)], "count_field Alpha is a FLOAT scalar"),
    ("DML114-optional-field", lambda s: _with_field(s, "InputTensor", optional=True),
     [("DML114", 34, 11)], "at 3_0 (one of its 2 rows), but the field is optional and no table says so"),
    ("DML114-optional-row", lambda s: _replace_table(s, 1, R(s.support[1], rows=(R(s.support[1].rows[0], kind="Optional input"), s.support[1].rows[1]))),
     [("DML114", 43, 11)], "the field is not optional: mark it `optional: true`"),
    ("DML114-role", lambda s: _replace_table(s, 0, R(s.support[0], rows=(R(s.support[0].rows[0], kind="Output"), s.support[0].rows[1]))),
     [("DML114", 33, 11)], "the field is an input"),
    ("DML114-array", lambda s: _replace_table(s, 0, R(s.support[0], rows=(s.support[0].rows[0], R(s.support[0].rows[1], kind="Array of outputs")))),
     [("DML114", 37, 11)], "make it `kind: tensor_array`"),
    ("DML115-no-row", lambda s: _add_field(s, m.Field("BiasTensor", TENSOR, m.FieldKind.TENSOR, m.TensorRole.INPUT, optional=True)),
     [("DML115", 19, 9)], "tensor BiasTensor has no row"),
    ("DML115-no-table", lambda s: R(s, support=(), tolerance=(), in_place=(), constraints=()),
     [("DML115", 22, 10)], "has no support table"),
    ("DML116", lambda s: _replace_table(s, 1, R(s.support[1], rows=s.support[1].rows + s.support[1].rows[:1])),
     [("DML116", 50, 13)], "InputTensor has a second row in the 2_0 table"),
    ("DML117", lambda s: R(s, introduced=FL.FL_1_0), [("DML117", 40, 10)], "covers 1_0 (introduced) up to 2_0"),
    ("DML118", lambda s: R(s, formula=m.Formula(m.FormulaSource.CODE, "InputTensor   OutputTensor\n[1, 2]  Foo  [2, 4]\n        -->\n")),
     [("DML118", 21, 9)], "worked example"),
    ("DML119", lambda s: _replace_table(s, 1, _table(FL.FL_2_0, (4, 5), out=(), inp=())),
     [("DML119", 45, 13), ("DML119", 49, 13)], "InputTensor at 2_0 lists no data types"),
    ("DML120", lambda s: _replace_table(s, 0, _table(FL.FL_3_0, (4, 5))),
     [("DML120", 30, 10)], "the 3_0 table repeats the 2_0 table"),
    ("DML121", lambda s: R(s, formula=m.Formula(m.FormulaSource.CODE, "f(x) = Alpha x x",
                                                reason="does not parse: expected ',' or ')', found 'x'")),
     [("DML121", 21, 9)], "does not parse: expected ',' or ')'"),
    ("DML122", lambda s: R(s, formula=R(s.formula, parsed=SHRINK_PARSED, evaluable=True, nan_policy=m.NanPolicy.FORMULA)),
     [("DML122", 22, 11)], "the first one listed wins"),
    ("DML123", lambda s: R(s, formula=R(s.formula, parsed="f(x) = x, if x > Alpha\n       0, otherwise", evaluable=True)),
     [("DML123", 22, 11)], "gives its `otherwise` value"),
    ("DML124-default", lambda s: _with_field(s, "Alpha", default=0.5, domain=m.Domain(
        min=1.0, text="This value cannot be less than 1.", source="softplus.md:72")),
     [("DML124", 18, 12)], "Alpha: default=0.5 lies outside its domain [1, inf) (the doc: "
                           "'This value cannot be less than 1.', softplus.md:72); fix the default or the domain"),
    ("DML124-typical", lambda s: _with_field(s, "Alpha", default=None, typical=2.0, domain=m.Domain(min=0.0, max=1.0)),
     [("DML124", 21, 12)], "Alpha: typical=2.0 lies outside its domain [0, 1]"),
    ("DML124-empty", lambda s: _with_field(s, "Alpha", domain=m.Domain(min=1.0, max=1.0, max_inclusive=False)),
     [("DML124", 19, 3)], "Alpha: the domain [1, 1) holds no value; fix min or max"),
    ("DML124-nan-bound", lambda s: _with_field(s, "Alpha", domain=m.Domain(min=float("nan"))),
     [("DML124", 20, 10)], "Alpha: domain min=nan is not a finite number; give a finite bound or leave it out"),
    ("DML124-nan-typical", lambda s: _with_field(s, "Alpha", typical=float("nan")),
     [("DML124", 19, 12)], "Alpha: typical=nan is not a finite number; give the doc's value or leave it out"),
    ("DML125", lambda s: R(s, ambiguities=(m.Ambiguity(
        "nan", m.AmbiguityKind.NAN, "What does NaN give?", "doc.md:3",
        (m.Reading("propagate", "NaN", m.NanPolicy.PROPAGATE), m.Reading("formula", "0", m.NanPolicy.FORMULA)),
        "formula"),)),
     [("DML125", 60, 12)], "the primary reading 'formula' sets nan_policy: formula, but the oracle's expected values "
                           "take nan_policy: propagate"),
]


@pytest.mark.parametrize("name, mutate, expected, fragment", SEMANTIC_CASES, ids=[c[0] for c in SEMANTIC_CASES])
def test_semantic_rule(name: str, mutate: Callable[[m.Spec], m.Spec], expected: list[tuple[str, int, int]],
                       fragment: str) -> None:
    findings = lint_spec(mutate(base_spec()))
    assert where(findings) == expected
    assert any(fragment in f.message for f in findings)
    rule = lint.rule_for(expected[0][0])
    assert rule is not None and all(f.severity == rule.severity for f in findings)


def test_every_rule_has_a_case() -> None:
    tested = {c[2][0][0] for c in SEMANTIC_CASES} | {"DML001", "DML002", "DML003", "DML004", "DML005", "DML006",
                                                     "DML131"}  # DML131: tests/families/reduction/test_overlay.py
    assert tested == {r.code for r in RULES}


def test_rules_are_unique_and_documented() -> None:
    codes = [r.code for r in RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert len({r.name for r in RULES}) == len(RULES)
    assert all(r.severity in ("error", "warning") and r.summary and "\n" not in r.summary for r in RULES)


def test_conditional_tables_compare_within_their_condition() -> None:
    spec = _add_field(base_spec(), m.Field("Function", "DML_REDUCE_FUNCTION", m.FieldKind.ENUM))
    narrow = R(_table(FL.FL_3_0, (4,), (DT.FLOAT32,), (DT.FLOAT32,)), condition=m.Condition("Function", ("ARGMAX",)))
    spec = R(spec, support=spec.support + (narrow,))
    assert where(lint_spec(spec)) == []


def test_findings_are_sorted_and_deduplicated() -> None:
    spec = R(base_spec(), introduced=FL.FL_3_0, introduced_also=(FL.FL_1_0,),
             formula=m.Formula(m.FormulaSource.CODE, "f(x) = Gamma * x"))
    findings = lint_spec(spec)
    assert findings == sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code))
    assert [f.code for f in findings] == ["DML111", "DML105", "DML101"]


# --- formula identifiers -------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("f(x) = max(Min, min(x, Max))", ("Max", "Min")),
    ("f(x) = x * Sigmoid(SigmoidInputScale * x)", ("SigmoidInputScale",)),
    ("// For uint8 output, Min = 0, Max = 255\nf(input, scale, zero_point) = clamp(round(input / scale) + zero_point, Min, Max)", ()),
    ("f(Input, Scale, ZeroPoint) = clamp(round(Input / Scale) + ZeroPoint, Min, Max)", ("Max", "Min")),
    ("X = InputParametersTensor\nM = Beta1 * M + (1.0 - Beta1) * G\nX -= LearningRate * M", ("Beta1", "G", "InputParametersTensor", "LearningRate")),
    ("For 1-D InputTensor:\nf(x[i]) = exp(x[i]) / sum(exp(x[0]), ..., exp(x[j-1]))", ()),
    ("StartY = (OutputIndices.Y * RegionHeight) / PooledSize.Height + y1", ("OutputIndices", "PooledSize", "RegionHeight")),
    ("assert(inputTensors[i]->DimensionCount == outputTensor->Sizes[Axis]);", ("Axis",)),
    ("OutputTensor[OutputCoordinates] = InputTensor[Offsets + Strides * OutputCoordinates]", ("InputTensor", "Offsets", "Strides")),
    ("f(x) = isinf(x) && (InfinityMode == DML_IS_INFINITY_MODE_EITHER)", ("InfinityMode",)),
    ("", ()),
])
def test_formula_identifiers(text: str, expected: tuple[str, ...]) -> None:
    assert formula_identifiers(text) == expected


@pytest.mark.parametrize("formula, unknown", [
    ("Output = Input * Alpha", ""),  # short for InputTensor / OutputTensor
    ("OutputTensorX = InputTensorX * Scale + Offset", "Offset"),  # coordinates; Scale is one of Scales
    ("f(x) = x * Count", "Count (did you mean Counts?)"),  # Counts is a scalar, not an array
    ("f(x) = Delta * x + Alpah", "Alpah (did you mean Alpha?), Delta"),
])
def test_formula_names(formula: str, unknown: str) -> None:
    spec = _add_field(base_spec(), m.Field("Scales", "FLOAT*", m.FieldKind.ARRAY))
    spec = _add_field(spec, m.Field("Counts", "UINT", m.FieldKind.SCALAR))
    findings = lint_spec(R(spec, formula=m.Formula(m.FormulaSource.CODE, formula)))
    assert [f.message.split(", which")[0] for f in findings] == ([f"formula uses {unknown}"] if unknown else [])


# --- lint_paths: files, folders and cross-file rules ---------------------------------

def test_lint_paths_file_name_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "ACTIVATION_TEST.yaml").write_text(base_text(), encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "copy.yaml").write_text(base_text(), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a spec", encoding="utf-8")
    findings = lint_paths([tmp_path])
    copy = str(tmp_path / "sub" / "copy.yaml")
    assert [(f.path, *w) for f, w in zip(findings, where(findings))] == [
        (copy, "DML005", 2, 11), (copy, "DML006", 2, 11)]
    assert "rename it to ACTIVATION_TEST.yaml" in findings[0].message
    assert str(tmp_path / "ACTIVATION_TEST.yaml") in findings[1].message


def test_lint_paths_unreadable_and_invalid_files(tmp_path: Path) -> None:
    bad = tmp_path / "BAD.yaml"
    bad.write_bytes(b"operator: \xff\n")
    broken = tmp_path / "BROKEN.yaml"
    broken.write_text("operator: [\n", encoding="utf-8")
    findings = lint_paths([bad, broken])
    assert [(Path(f.path).name, f.code, f.line) for f in findings] == [("BAD.yaml", "DML001", 1), ("BROKEN.yaml", "DML001", 2)]
    assert "not UTF-8" in findings[0].message


def test_lint_paths_clean_folder(tmp_path: Path) -> None:
    (tmp_path / "ACTIVATION_TEST.yaml").write_text(base_text(), encoding="utf-8")
    assert lint_paths([tmp_path]) == []


# --- robustness ---------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_lint_text_never_raises_on_any_text(text: str) -> None:
    findings = lint_text(text, path="fuzz.yaml")
    assert all(isinstance(f, Finding) and f.line >= 1 and f.column >= 1 for f in findings)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 40), st.sampled_from(["2_0", "3_0", "FLOAT32", "x", "InputTensor"]))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_lint_text_never_raises_on_mutated_specs(data: st.DataObject) -> None:
    lines = base_text().splitlines()
    i = data.draw(st.integers(1, len(lines) - 1), label="line")
    key = lines[i].split(":", 1)[0]
    value = data.draw(_scalars, label="value")
    lines[i] = f"{key}: {value!r}" if ":" in lines[i] else lines[i]
    drop = data.draw(st.booleans(), label="drop")
    text = "\n".join(lines[:i] + lines[i + 1:] if drop else lines) + "\n"
    findings = lint_text(text, path="fuzz.yaml")
    assert all(isinstance(f, Finding) for f in findings)
    assert findings == sorted(findings, key=lambda f: f.sort_key)
