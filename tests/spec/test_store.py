"""Tests for dmlconform.spec.store: Spec -> YAML text that loads back to the
same Spec, byte-identical every time, and reads the same in any YAML 1.1 tool."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.spec import model as m
from dmlconform.spec.load import loads_spec, parse_document, schema
from dmlconform.spec.store import HEADER, dumps_spec, spec_filename, to_data, write_spec
from tests.strategies import TRICKY_WORDS, free_text, specs

FL, DT = m.FeatureLevel, m.DataType

SHRINK = m.Spec(
    operator="ACTIVATION_SHRINK", struct="DML_ACTIVATION_SHRINK_OPERATOR_DESC", category="activation",
    introduced=FL.FL_3_1, introduced_also=(FL.FL_5_0,),
    sources=(m.SourcePage("operators/activation_shrink.md", "A", "2024-01-31"), m.SourcePage("b.md", "B", None)),
    fields=(
        m.Field("InputTensor", "const DML_TENSOR_DESC*", m.FieldKind.TENSOR, m.TensorRole.INPUT),
        m.Field("OutputTensor", "const DML_TENSOR_DESC*", m.FieldKind.TENSOR, m.TensorRole.OUTPUT, optional=True),
        m.Field("Bias", "FLOAT", m.FieldKind.SCALAR, default=1e-05),
        m.Field("Threshold", "FLOAT", m.FieldKind.SCALAR, default="1e5", default_exact="1/6"),
        m.Field("Mode", "DML_MODE", m.FieldKind.ENUM, default="yes"),
        m.Field("Sizes", "const UINT*", m.FieldKind.ARRAY, count_field="DimensionCount"),
    ),
    formula=m.Formula(m.FormulaSource.CODE, "f(x) = x - Bias, if x > Threshold\n     x + Bias, otherwise\n",
                      "x - Bias"),
    support=(
        m.SupportTable(FL.FL_3_1, (m.TensorSupport("InputTensor", "Input", (1, 2, 3, 4), (DT.FLOAT32, DT.FLOAT16)),)),
        m.SupportTable(FL.FL_5_0, (m.TensorSupport("InputTensor", "Optional input", (4,), (DT.INT8,), "{ N, C, H, W }"),),
                       m.Condition("Mode", ("A", "1_0"))),
    ),
    in_place=(m.InPlace("OutputTensor", "InputTensor"),),
    constraints=(
        m.Constraint(m.ConstraintKind.SAME, ("InputTensor", "OutputTensor"), ("DataType", "Sizes")),
        m.Constraint(m.ConstraintKind.OTHER, ("InputTensor",), doc_line=42),
    ),
    tolerance=(m.Tolerance(DT.FLOAT16, 2), m.Tolerance(DT.INT8, 0)),
    disagreements=(m.Disagreement("introduced", "3_1", "3_0", "b.md"),),
)

SHRINK_YAML = HEADER + """\
operator: ACTIVATION_SHRINK
struct: DML_ACTIVATION_SHRINK_OPERATOR_DESC
category: activation
introduced: '3_1'
introduced_also: ['5_0']
sources:
- path: operators/activation_shrink.md
  variant: A
  date: '2024-01-31'
- path: b.md
  variant: B
  date: null
fields:
- name: InputTensor
  c_type: const DML_TENSOR_DESC*
  kind: tensor
  role: input
- name: OutputTensor
  c_type: const DML_TENSOR_DESC*
  kind: tensor
  role: output
  optional: true
- name: Bias
  c_type: FLOAT
  kind: scalar
  default: 1.0e-05
- name: Threshold
  c_type: FLOAT
  kind: scalar
  default: '1e5'
  default_exact: 1/6
- name: Mode
  c_type: DML_MODE
  kind: enum
  default: 'yes'
- name: Sizes
  c_type: const UINT*
  kind: array
  count_field: DimensionCount
formula:
  source: code
  text: |
    f(x) = x - Bias, if x > Threshold
         x + Bias, otherwise
  parsed: x - Bias
in_place:
- output: OutputTensor
  input: InputTensor
constraints:
- kind: same
  tensors: [InputTensor, OutputTensor]
  properties: [DataType, Sizes]
- kind: other
  tensors: [InputTensor]
  doc_line: 42
support:
- level: '3_1'
  rows:
  - tensor: InputTensor
    kind: Input
    dims: [1, 2, 3, 4]
    dtypes: [FLOAT32, FLOAT16]
- level: '5_0'
  condition:
    field: Mode
    values: [A, '1_0']
  rows:
  - tensor: InputTensor
    kind: Optional input
    dims: [4]
    dtypes: [INT8]
    dimensions: '{ N, C, H, W }'
tolerance:
  FLOAT16:
    ulp: 2
  INT8:
    ulp: 0
disagreements:
- fact: introduced
  chosen: '3_1'
  other: '3_0'
  other_path: b.md
"""

#: The smallest valid spec; the string tests put their text into its slots.
MINIMAL = m.Spec(
    operator="X", struct="DML_X_OPERATOR_DESC", category="x", introduced=FL.FL_1_0,
    fields=(), formula=m.Formula(m.FormulaSource.NONE), support=(),
)


def _round_trip(spec: m.Spec) -> m.Spec:
    return loads_spec(dumps_spec(spec), path="round-trip.yaml")


def _assert_same(got: m.Spec, want: m.Spec) -> None:
    """Equal, and with the same types: ``True == 1`` and ``1.0 == 1`` would hide a swap."""
    assert got == want
    assert repr(got) == repr(want)


# --- layout ---------------------------------------------------------------------


def test_dumps_exact_layout() -> None:
    assert dumps_spec(SHRINK) == SHRINK_YAML


def test_exact_layout_loads_back() -> None:
    _assert_same(loads_spec(SHRINK_YAML), SHRINK)


def test_spec_filename() -> None:
    assert spec_filename(SHRINK) == "ACTIVATION_SHRINK.yaml"


@pytest.mark.parametrize(("text", "line"), [
    ("1e5", "'1e5'"), ("yes", "'yes'"), ("1_0", "'1_0'"), ("0o17", "'0o17'"), ("012", "'012'"),
    ("null", "'null'"), ("", "''"), ("2020-01-01", "'2020-01-01'"), ("1:30", "'1:30'"),
    ("a #b", "'a #b'"), ("a: b", "'a: b'"), (" lead", "' lead'"), ("trail ", "'trail '"),
    ("NEL\x85here", '"NEL\\Nhere"'), ("LS\u2028", '"LS\\L"'), ("tab\there", "\"tab\\there\""),
    ("two\nlines", "|-\n    two\n    lines"), ("trailing \nspace", '"trailing \\nspace"'),
    ("  indented\nblock\n", "|2\n      indented\n    block"),
])
def test_strings_that_need_quoting(text: str, line: str) -> None:
    spec = dataclasses.replace(MINIMAL, formula=m.Formula(m.FormulaSource.CODE, text))
    assert f"  text: {line}\n" in dumps_spec(spec)
    _assert_same(_round_trip(spec), spec)


@pytest.mark.parametrize(("value", "line"), [
    (1e-05, "1.0e-05"), (0.5, "0.5"), (-0.0, "-0.0"), (1e16, "1.0e+16"), (5e-324, "5.0e-324"),
    (math.inf, ".inf"), (-math.inf, "-.inf"), (3, "3"), (-(2**64), "-18446744073709551616"),
    (True, "true"), (False, "false"), ("DML_REDUCE_FUNCTION_SUM", "DML_REDUCE_FUNCTION_SUM"), ("1/6", "1/6"),
])
def test_default_values(value: Any, line: str) -> None:
    spec = dataclasses.replace(MINIMAL, fields=(m.Field("A", "FLOAT", m.FieldKind.SCALAR, default=value),))
    assert f"  default: {line}\n" in dumps_spec(spec)
    _assert_same(_round_trip(spec), spec)


def test_nan_default_round_trips() -> None:
    spec = dataclasses.replace(MINIMAL, fields=(m.Field("A", "FLOAT", m.FieldKind.SCALAR, default=math.nan),))
    assert "  default: .nan\n" in dumps_spec(spec)
    assert math.isnan(_round_trip(spec).fields[0].default)


def test_write_spec_writes_operator_file(tmp_path: Path) -> None:
    path = write_spec(SHRINK, tmp_path / "specs")
    assert path == tmp_path / "specs" / "ACTIVATION_SHRINK.yaml"
    assert path.read_bytes() == SHRINK_YAML.encode("utf-8")
    assert write_spec(SHRINK, tmp_path / "specs") == path
    assert sorted(p.name for p in path.parent.iterdir()) == ["ACTIVATION_SHRINK.yaml"]


# --- properties --------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(specs())
def test_round_trip(spec: m.Spec) -> None:
    _assert_same(_round_trip(spec), spec)


@settings(max_examples=50, deadline=None)
@given(specs())
def test_dumps_is_deterministic_and_idempotent(spec: m.Spec) -> None:
    text = dumps_spec(spec)
    assert dumps_spec(spec) == text
    assert dumps_spec(loads_spec(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.sampled_from(TRICKY_WORDS), free_text(), st.text()))
def test_any_string_round_trips(text: str) -> None:
    spec = dataclasses.replace(
        MINIMAL, category="x", formula=m.Formula(m.FormulaSource.CODE, text, text),
        fields=(m.Field("A", text or "T", m.FieldKind.SCALAR, default=text),),
        disagreements=(m.Disagreement(text, text, text, text),),
    )
    _assert_same(_round_trip(spec), spec)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(allow_nan=False), st.integers(-(2**70), 2**70), st.booleans()))
def test_any_number_default_round_trips(value: float | int | bool) -> None:
    spec = dataclasses.replace(MINIMAL, fields=(m.Field("A", "FLOAT", m.FieldKind.SCALAR, default=value),))
    _assert_same(_round_trip(spec), spec)


def _without_flow(data: Any) -> Any:
    """Plain dicts and lists (to_data marks flow lists with a list subclass)."""
    if isinstance(data, dict):
        return {k: _without_flow(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_without_flow(v) for v in data]
    return data


@settings(max_examples=50, deadline=None)
@given(specs())
def test_yaml_1_1_tools_read_the_same_data(spec: m.Spec) -> None:
    """PyYAML's own safe_load (YAML 1.1) and our loader (YAML 1.2 core) agree
    on every written file, so other tools can read specs."""
    text = dumps_spec(spec)
    ours = parse_document(text, path="x.yaml").data
    assert repr(yaml.safe_load(text)) == repr(ours) == repr(_without_flow(to_data(spec)))


def _assert_schema_order(data: Any, node: dict[str, Any], defs: dict[str, Any]) -> None:
    if "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    if isinstance(data, dict) and "properties" in node:
        order = list(node["properties"])
        assert list(data) == sorted(data, key=order.index)
        for key, value in data.items():
            _assert_schema_order(value, node["properties"][key], defs)
    elif isinstance(data, dict) and isinstance(node.get("additionalProperties"), dict):
        for value in data.values():
            _assert_schema_order(value, node["additionalProperties"], defs)
    elif isinstance(data, list) and "items" in node:
        for value in data:
            _assert_schema_order(value, node["items"], defs)


@settings(max_examples=50, deadline=None)
@given(specs())
def test_keys_follow_schema_order(spec: m.Spec) -> None:
    _assert_schema_order(to_data(spec), schema(), schema()["$defs"])
