"""extract over the real corpus: the seed facts, counts, revisions, determinism,
and robustness on mutated pages (hypothesis)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dmlconform.errors import ExtractError, InputError
from dmlconform.spec import load, store
from dmlconform.spec import model as m
from dmlconform.spec.corpus import skipped_summary
from dmlconform.spec.extract import extract, extract_page
from dmlconform.spec.extract_fields import parse_default, parse_type_line
from tests.conftest import OPERATORS, SEEDS, require_corpus
from tests.fifos import fifo, needs_fifos

FL = m.FeatureLevel
DT = m.DataType


def _table(spec: m.Spec, level: str) -> m.SupportTable:
    (table,) = [t for t in spec.support if t.level is FL.parse(level) and t.condition is None]
    return table


def test_softsign_tables(corpus_specs):
    s = corpus_specs["ACTIVATION_SOFTSIGN"]
    assert s.introduced is FL.FL_1_0
    assert [t.level.short for t in s.support] == ["1_0", "2_0", "3_0"]
    assert {r.dims for r in _table(s, "1_0").rows} == {(4,)}
    assert {r.dims for r in _table(s, "2_0").rows} == {(4, 5)}
    assert {r.dims for r in _table(s, "3_0").rows} == {tuple(range(1, 9))}
    for t in s.support:
        assert {r.dtypes for r in t.rows} == {(DT.FLOAT32, DT.FLOAT16)}
    assert s.formula.source is m.FormulaSource.CODE
    assert s.formula.text == "f(x) = x / (1 + abs(x))\n"


def test_shrink_fields(corpus_specs):
    s = corpus_specs["ACTIVATION_SHRINK"]
    assert s.introduced is FL.FL_2_0
    assert [(f.name, f.c_type, f.kind, f.default) for f in s.fields] == [
        ("InputTensor", "const DML_TENSOR_DESC*", m.FieldKind.TENSOR, None),
        ("OutputTensor", "const DML_TENSOR_DESC*", m.FieldKind.TENSOR, None),
        ("Bias", "FLOAT", m.FieldKind.SCALAR, 0.0),
        ("Threshold", "FLOAT", m.FieldKind.SCALAR, 0.5),
    ]
    assert s.in_place == (m.InPlace("OutputTensor", "InputTensor"),)
    assert s.constraints == (m.Constraint(m.ConstraintKind.SAME, ("InputTensor", "OutputTensor"),
                                          ("DataType", "DimensionCount", "Sizes")),)
    assert [t.level.short for t in s.support] == ["2_0", "3_0", "5_1"]
    assert "if x > Threshold" in s.formula.text and "otherwise" in s.formula.text


def test_sign_4_1_has_64_bit_integers(corpus_specs):
    s = corpus_specs["ELEMENT_WISE_SIGN"]
    row = _table(s, "4_1").row("InputTensor")
    assert row is not None and {DT.INT64, DT.UINT64} <= set(row.dtypes)
    older = _table(s, "3_0").row("InputTensor")
    assert older is not None and DT.INT64 not in older.dtypes


def test_swish(corpus_specs):
    s = corpus_specs["ACTIVATION_SWISH"]
    assert s.introduced is FL.FL_6_2
    scale = s.field("SigmoidInputScale")
    assert scale is not None and scale.default == 1.0 and scale.c_type == "FLOAT"
    assert [t.level for t in s.support] == [FL.FL_6_2]  # single table, no heading: from `introduced`
    assert s.sources[0].variant == "B"


def test_hard_sigmoid(corpus_specs):
    s = corpus_specs["ACTIVATION_HARD_SIGMOID"]
    assert (s.field("Alpha").default, s.field("Beta").default) == (0.2, 0.5)
    assert s.formula.text == "f(x) = max(0, min(Alpha * x + Beta, 1))\n"


def test_exact_default_kept(corpus_specs):
    alpha = corpus_specs["ACTIVATION_HARD_SWISH"].field("Alpha")
    assert (alpha.default, alpha.default_exact) == (0.166667, "1/6")


def test_corpus_counts(corpus):
    assert corpus.pages == 331
    assert len(corpus.specs) == 176
    assert len({s.struct for s in corpus.specs}) == 176


def test_every_spec_round_trips_and_validates(corpus):
    for spec in corpus.specs:
        text = store.dumps_spec(spec)
        assert load.loads_spec(text, path=spec.operator) == spec


def test_stale_revisions_show_up(corpus_specs):
    """INDEX.md lists the sdk-api pages older than the scraper copy."""
    facts = {op: {d.fact for d in corpus_specs[op].disagreements}
             for op in ("ELEMENT_WISE_CLIP", "ELEMENT_WISE_MAX", "ELEMENT_WISE_MIN",
                        "ELEMENT_WISE_QUANTIZED_LINEAR_ADD", "FILL_VALUE_SEQUENCE", "PADDING")}
    assert {"formula", "date", "section 'remarks'"} <= facts["ELEMENT_WISE_CLIP"]
    assert "text of section 'description'" in facts["ELEMENT_WISE_MAX"]
    assert "text of section 'description'" in facts["ELEMENT_WISE_MIN"]
    assert "date" in facts["ELEMENT_WISE_QUANTIZED_LINEAR_ADD"]
    assert any(f.startswith("text of section 'field") for f in facts["ELEMENT_WISE_QUANTIZED_LINEAR_ADD"])
    assert "formula" in facts["FILL_VALUE_SEQUENCE"]
    assert facts["PADDING"] == {"date"}
    clip = corpus_specs["ELEMENT_WISE_CLIP"]
    assert clip.sources[0].path.startswith("operators/windows-docs-scraper/")  # newest wins


def test_no_disagreement_where_revisions_agree(corpus_specs):
    assert corpus_specs["ACTIVATION_SHRINK"].disagreements == ()
    assert len(corpus_specs["ACTIVATION_SHRINK"].sources) == 2


def test_hazards_survived(corpus_specs):
    relu_grad = corpus_specs["ACTIVATION_RELU_GRAD"]
    assert [f.name for f in relu_grad.fields] == ["InputTensor", "InputGradientTensor", "OutputGradientTensor"]
    mmitf = corpus_specs["MATRIX_MULTIPLY_INTEGER_TO_FLOAT"]
    assert "OutputScaleTensor" not in {f.name for f in mmitf.fields} and len(mmitf.fields) == 8
    assert corpus_specs["SCATTER_ND"].struct == "DML_SCATTER_ND_OPERATOR_DESC"
    le = corpus_specs["ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL"]
    assert le.introduced is FL.FL_3_0 and le.introduced_also == (FL.FL_1_0,)
    conv = corpus_specs["CONVOLUTION_INTEGER"]
    assert conv.support, "H1 '# Tensor support' heading"
    reduce = corpus_specs["REDUCE"]
    conditions = {t.condition for t in reduce.support}
    assert m.Condition("Function", ("ARGMIN", "ARGMAX")) in conditions and len(conditions) == 5
    assert corpus_specs["ACTIVATION_CELU"].support, "Title Case header row"
    assert corpus_specs["GRU"].formula.source is m.FormulaSource.IMAGE
    assert corpus_specs["BATCH_NORMALIZATION"].formula.source is m.FormulaSource.INLINE
    padding1 = corpus_specs["PADDING1"].field("PaddingMode")
    assert padding1.kind is m.FieldKind.ENUM and padding1.c_type == "DML_PADDING_MODE"
    join = corpus_specs["JOIN"].field("InputTensors")
    assert join.kind is m.FieldKind.TENSOR_ARRAY and join.count_field == "InputCount"
    dq = corpus_specs["DEQUANTIZE"].support[0].row("QuantizationTensors")
    assert dq.kind == "Array of inputs" and DT.INT4 in dq.dtypes
    conv_bias = corpus_specs["CONVOLUTION"].field("BiasTensor")
    assert conv_bias.optional and corpus_specs["CONVOLUTION"].support[0].row("BiasTensor").dimensions


def test_adam_in_place_excludes_training_step(corpus_specs):
    pairs = corpus_specs["ADAM_OPTIMIZER"].in_place
    assert pairs and all(p.input != "TrainingStepTensor" for p in pairs)
    assert m.InPlace("OutputParametersTensor", "InputParametersTensor") in pairs


def test_extract_is_deterministic(corpus):
    again = extract([OPERATORS])
    assert [store.dumps_spec(s) for s in again.specs] == [store.dumps_spec(s) for s in corpus.specs]


def test_warnings_name_file_and_line(corpus):
    assert corpus.warnings
    for w in corpus.warnings:
        assert w.line >= 1 and w.path.startswith("operators/")
        assert re.match(r"^operators/\S+\.md:\d+: warning: ", w.render())


def test_older_seed_revision_alone():
    """Seed 001 is an older shrink revision without the 5_1 table."""
    require_corpus()
    result = extract([SEEDS / "001_e9f1c70498edb4bb.txt"])
    (spec,) = result.specs
    assert spec.operator == "ACTIVATION_SHRINK"
    assert FL.FL_5_1 not in {t.level for t in spec.support}
    assert spec.sources[0].date == "2020-10-28"


@pytest.mark.parametrize("text, expected", [
    (r"Type: **const [DML_TENSOR_DESC](./ns-directml-dml_tensor_desc.md)\***", ("const DML_TENSOR_DESC*", False, None)),
    (r"Type: \_Maybenull\_ **const [DML_TENSOR_DESC](x)\***", ("const DML_TENSOR_DESC*", True, None)),
    (r"Type: _Maybenull\_ **const [DML_TENSOR_DESC](x)\***", ("const DML_TENSOR_DESC*", True, None)),
    (r"Type: [**FLOAT**](/windows/win32/winprog/windows-data-types)", ("FLOAT", False, None)),
    (r"Type: **[UINT](x)**", ("UINT", False, None)),
    (r"Type: <b><a href=" + '"/windows/desktop/WinProg/windows-data-types"' + r">FLOAT</a></b>", ("FLOAT", False, None)),
    (r"Type: \_Field\_size\_(DimensionCount) <b>const [UINT](x)*</b>", ("const UINT*", False, "DimensionCount")),
    (r"Type: \_Field\_size\_\(AxisCount\) **const [UINT](x)\***", ("const UINT*", False, "AxisCount")),
    (r"Type: \_Field_size\_(InputCount) **const [DML_TENSOR_DESC](x)\***", ("const DML_TENSOR_DESC*", False, "InputCount")),
    (r"Type: **float**", ("float", False, None)),
    (r"Type: **DML_QUANTIZATION_TYPE**", ("DML_QUANTIZATION_TYPE", False, None)),
    (r"Type: <b>const <a href=" + '"x"' + r">FLOAT</a>*</b>", ("const FLOAT*", False, None)),
])
def test_type_line_shapes(text, expected):
    info = parse_type_line(text.split(":", 1)[1])
    assert (info.c_type, info.maybenull, info.count) == expected


@pytest.mark.parametrize("text, expected", [
    ("The value of the bias. A typical default for this value is 0.0.", (0.0, None)),
    ("The scale coefficient. A typical default for this value is 0.166667 (1/6).", (0.166667, "1/6")),
    ("The value of bias. We recommend a value of 1 as default.", (1.0, None)),
    ("The epsilon. A value of 0.00001 is recommended as default.", (0.00001, None)),
    ("The default value is **FALSE**, which is the same", (False, None)),
    ("No default here.", (None, None)),
])
def test_defaults(text, expected):
    assert parse_default(text) == expected


def _page_texts() -> list[tuple[str, str]]:
    if not OPERATORS.is_dir():
        return [("none.md", "")]
    names = ["sdk-api/ns-directml-dml_activation_shrink_operator_desc.md",
             "windows-ai-docs/ns-directml-dml_activation_swish_operator_desc.md",
             "windows-docs-scraper/ns-directml-dml_reduce_operator_desc.md",
             "sdk-api/ns-directml-dml_adam_optimizer_operator_desc.md"]
    return [(n, (OPERATORS / n).read_text(encoding="utf-8")) for n in names]


PAGES = _page_texts()


@st.composite
def mutated_pages(draw):  # type: ignore[no-untyped-def]
    name, text = draw(st.sampled_from(PAGES), label="page")
    lines = text.splitlines()
    op = draw(st.sampled_from(["delete", "shuffle", "garbage", "duplicate", "truncate"]), label="mutation")
    if op == "delete" and lines:
        for _ in range(draw(st.integers(1, 20), label="deletions")):
            if lines:
                del lines[draw(st.integers(0, len(lines) - 1), label="line")]
    elif op == "shuffle":
        blocks, current = [], []
        for line in lines:
            if line.startswith("#") and current:
                blocks.append(current)
                current = []
            current.append(line)
        blocks.append(current)
        order = draw(st.permutations(range(len(blocks))), label="order")
        lines = [line for i in order for line in blocks[i]]
    elif op == "garbage" and lines:
        i = draw(st.integers(0, len(lines) - 1), label="line")
        lines.insert(i, draw(st.text(min_size=1, max_size=80), label="garbage"))
    elif op == "duplicate" and lines:
        i = draw(st.integers(0, len(lines) - 1), label="start")
        lines[i:i] = lines[i: i + draw(st.integers(1, 30), label="length")]
    elif op == "truncate":
        lines = lines[: draw(st.integers(0, len(lines)), label="keep")]
    return name, "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_pages())
def test_extract_survives_mutations(page):
    name, text = page
    try:
        facts = extract_page(text, path=Path(name), display=name)
    except ExtractError as exc:
        assert exc.path == name and exc.line >= 1
        return
    for w in facts.warnings:
        assert w.path == name and w.line >= 1
    assert not list(load.schema_problems(load.Document(name, store.to_data(facts.spec), {})))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400))
def test_extract_survives_garbage_bytes(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("garbage")
    page = folder / "ns-directml-dml_activation_softsign_operator_desc.md"
    page.write_bytes(data)
    result = extract([folder])
    assert result.pages == 1
    for w in result.warnings:
        assert w.line >= 1 and w.path.endswith(".md")


def _index_rows() -> dict[str, tuple[str, int, str, str]]:
    """INDEX.md's computed per-page columns: struct, tables, introduced, formula kind."""
    rows: dict[str, tuple[str, int, str, str]] = {}
    section = None
    for line in (OPERATORS.parent / "INDEX.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("### `operators/"):
            section = line.split("`")[1]
        mo = re.match(r"\| `(ns-directml-[^`]+)` \| (DML_\w+) \| \w \| (\w+) \| [^|]* \| (\d+) \| (\d_\d)", line)
        if mo and section:
            rows[section + mo.group(1)] = (mo.group(2), int(mo.group(4)), mo.group(5), mo.group(3))
    return rows


def test_every_page_agrees_with_index():
    """Each of the 331 pages, extracted alone, matches INDEX.md's computed columns."""
    require_corpus()
    from dmlconform.spec.extract import collect_prototypes, read_meta

    rows = _index_rows()
    assert len(rows) == 331
    prototypes = collect_prototypes([OPERATORS])
    mismatches = {}
    for key, expected in rows.items():
        path = OPERATORS.parent / key
        spec = extract_page(path.read_text(encoding="utf-8"), path=path, display=key,
                            meta=read_meta(path), prototypes=prototypes).spec
        source = {"example": "code"}.get(spec.formula.source.value, spec.formula.source.value)
        got = (spec.struct, len(spec.support), spec.introduced.short, source)
        if got != expected:
            mismatches[key.rsplit("/", 1)[-1]] = got
    # the one intended difference: the page claims 1_0 and 3_0; INDEX shows the first claim,
    # extract takes 3_0, which its oldest table agrees with (introduced_also keeps 1_0)
    assert set(mismatches) == {"ns-directml-dml_element_wise_logical_less_than_or_equal_operator_desc.md"}


def test_formula_engine_results_are_stored(corpus_specs):
    from dmlconform.formula import parse, to_text

    shrink = corpus_specs["ACTIVATION_SHRINK"].formula
    assert shrink.evaluable and shrink.nan_policy is m.NanPolicy.PROPAGATE
    assert to_text(parse(shrink.parsed)) == shrink.parsed  # stored in canonical form
    sign = corpus_specs["ELEMENT_WISE_SIGN"].formula
    assert sign.nan_policy is m.NanPolicy.FORMULA and sign.signed_zero is True
    assert corpus_specs["ACTIVATION_SOFTSIGN"].formula.signed_zero is None
    gemm = corpus_specs["GEMM"].formula
    assert gemm.parsed is None and gemm.reason.startswith("does not parse")
    assert corpus_specs["REDUCE"].formula.parsed is None


def test_default_tolerances(corpus_specs):
    def ulps(op: str) -> dict[str, int]:
        return {t.dtype.name: t.ulp for t in corpus_specs[op].tolerance}

    assert ulps("ACTIVATION_SOFTSIGN") == {"FLOAT32": 3, "FLOAT16": 3}
    assert ulps("ACTIVATION_HARD_SIGMOID") == {"FLOAT32": 2, "FLOAT16": 2}
    assert ulps("ELEMENT_WISE_SIGN") == {"FLOAT32": 0, "FLOAT16": 0}  # integers are always exact: not listed
    assert ulps("ACTIVATION_SWISH") == {"FLOAT32": 7, "FLOAT16": 7}  # sigmoid expanded: exp, add, divide, multiply
    assert corpus_specs["GEMM"].tolerance == ()


def test_formula_coverage(corpus):
    specs = corpus.specs
    with_text = [s for s in specs if s.formula.text]
    assert len(with_text) == 117
    assert sum(s.formula.parsed is not None for s in specs) == 91
    assert sum(s.formula.evaluable for s in specs) == 80
    assert all(s.formula.reason for s in with_text if not s.formula.evaluable)


# --- issue #20: bounded, honest extraction ------------------------------------------------

HOSTILE = Path(__file__).resolve().parents[1] / "hostile" / "extract"
SHRINK_PAGE = OPERATORS / "sdk-api" / "ns-directml-dml_activation_shrink_operator_desc.md"


def _warnings(name: str) -> list[str]:
    """The warnings of the hostile page ``name``, extracted alone, as printed."""
    text = (HOSTILE / name).read_text(encoding="utf-8")
    facts = extract_page(text, path=SHRINK_PAGE, display=name)
    return [w.render() for w in facts.warnings]


@pytest.mark.parametrize("cell, expected", [
    ("1 to 8", tuple(range(1, 9))), ("4", (4,)), ("3, 4", (3, 4)), ("4 to 5", (4, 5)), ("*words*", None),
    ("1 to 999999999", "dimension count '1 to 999999999' is outside 1 to 8 (a DirectML tensor has 1 to 8 dimensions)"),
    ("0 to 4", "dimension count '0 to 4' is outside 1 to 8 (a DirectML tensor has 1 to 8 dimensions)"),
    ("4, 9", "dimension count '4, 9' is outside 1 to 8 (a DirectML tensor has 1 to 8 dimensions)"),
    ("9" * 5000, f"dimension count '{'9' * 5000}' is outside 1 to 8 (a DirectML tensor has 1 to 8 dimensions)"),
])
def test_dimension_counts_are_bounded_as_they_are_parsed(cell: str, expected: object) -> None:
    from dmlconform.spec.extract import _dims

    assert _dims(cell) == expected


def test_a_billion_dimension_counts_is_a_located_warning() -> None:
    require_corpus()
    assert _warnings("dims-one-to-a-billion.md") == [
        "dims-one-to-a-billion.md:89: warning: tensor-support row '| InputTensor | Input | 1 to 999999999 | FLOAT32, "
        "FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8 |': dimension count '1 to 999999999' is outside 1 to 8 "
        "(a DirectML tensor has 1 to 8 dimensions): row skipped"]


@pytest.mark.parametrize("name, expected", [
    ("truncated-in-a-table-row.md", [
        "truncated-in-a-table-row.md:102: warning: tensor-support row '| OutputTensor | Out' has 2 of the header's 4 "
        "cells: the page may be truncated",
        "truncated-in-a-table-row.md:102: warning: tensor-support row '| OutputTensor | Out' has an unreadable "
        "tensor name, kind or dimension count: row skipped"]),
    ("truncated-mid-cell.md", [
        "truncated-mid-cell.md:102: warning: tensor-support row '| OutputTensor | Output | 4 to 5 | FLOAT' has no "
        "closing '|': the page may be truncated",
        "truncated-mid-cell.md:102: warning: unknown data type 'FLOAT' in a tensor-support table: skipped",
        "truncated-mid-cell.md:102: warning: tensor-support row for OutputTensor lists no data types"]),
    ("truncated-after-a-table-header.md", [
        "truncated-after-a-table-header.md:99: warning: tensor-support table has a header but no rows: the page "
        "may be truncated"]),
    ("truncated-after-a-level-heading.md", [
        "truncated-after-a-level-heading.md:98: warning: no tensor-support table under the heading "
        "'DML_FEATURE_LEVEL_2_0 and above': the page may be truncated"]),
])
def test_a_truncated_page_says_so(name: str, expected: list[str]) -> None:
    require_corpus()
    assert _warnings(name) == expected


def test_a_page_ending_inside_a_code_block_says_so() -> None:
    require_corpus()
    assert _warnings("truncated-in-a-code-block.md")[0] == (
        "truncated-in-a-code-block.md:43: warning: code block never closed (no ``` after it): the page may be "
        "truncated; the rest of the page is read as code")


def test_front_matter_nested_too_deep_is_read_line_by_line() -> None:
    require_corpus()
    assert _warnings("nested-front-matter.md") == [
        "nested-front-matter.md:1: warning: front matter is not valid YAML (line 37: nesting deeper than 64 "
        "levels); read it line by line"]


def test_a_formula_nested_too_deep_is_a_warning() -> None:
    """(The line is not checked: extract_formula.analyse adds the block's line
    to a parse error's line that already counts from it, a separate bug.)"""
    require_corpus()
    (warning,) = _warnings("nested-formula.md")
    assert warning.startswith("nested-formula.md:") and warning.split(": ", 1)[1] == (
        "warning: formula not parsed (syntax): does not parse: nesting deeper than 32 levels (brackets, operators, "
        "calls and branches inside one another); split the formula into named steps (M = ...)")


def test_the_real_pages_give_no_truncation_warnings(corpus) -> None:
    assert not [w for w in corpus.warnings if "truncated" in w.message or "outside 1 to 8" in w.message]


# --- which files are pages ---------------------------------------------------------------


@needs_fifos
def test_pages_are_regular_files_inside_the_folder(tmp_path: Path) -> None:
    require_corpus()
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SHRINK_PAGE, docs / SHRINK_PAGE.name)
    (docs / "again.md").symlink_to(docs / SHRINK_PAGE.name)  # inside: followed, read once
    (tmp_path / "outside.md").write_text("# outside\n")
    (docs / "out.md").symlink_to(tmp_path / "outside.md")
    (docs / "gone.md").symlink_to(docs / "nothing.md")
    with fifo(docs / "pipe.md"):
        result = extract([docs])
    assert result.pages == 1 and [s.operator for s in result.specs] == ["ACTIVATION_SHRINK"]
    assert [w.render() for w in result.warnings] == [
        f"{docs / 'gone.md'}:1: warning: dangling symbolic link: its target {str(docs / 'nothing.md')!r} does not "
        "exist; fix the link or remove it: page skipped",
        f"{docs / 'out.md'}:1: warning: symbolic link to {str(tmp_path / 'outside.md')!r}, outside {str(docs)!r}: "
        "not followed; copy the file into the folder or name it on the command line: page skipped",
        f"{docs / 'pipe.md'}:1: warning: a FIFO (named pipe), not a regular file: only regular files are read; name "
        "the file itself: page skipped",
    ]


def test_no_page_at_all_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "out.md").symlink_to(tmp_path.parent / "nowhere.md")
    with pytest.raises(InputError) as info:
        extract([tmp_path])
    assert info.value.render() == (
        f"error: no doc page (*.md) to read in {str(tmp_path)!r} ({tmp_path / 'out.md'}: dangling symbolic link: its "
        f"target {str(tmp_path.parent / 'nowhere.md')!r} does not exist; fix the link or remove it: page skipped)")


def test_an_oversized_page_is_skipped_with_its_size(tmp_path: Path) -> None:
    require_corpus()
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SHRINK_PAGE, docs / SHRINK_PAGE.name)
    big = docs / "ns-directml-dml_activation_elu_operator_desc.md"
    big.write_bytes(b"x" * (2 * 1024 * 1024 + 1))
    result = extract([docs])
    assert [w.render() for w in result.warnings] == [
        "docs/ns-directml-dml_activation_elu_operator_desc.md:1: warning: 2,097,153 bytes is more than a doc page "
        "may hold (2 MiB); real operator pages are under 20 KB: check that this is the right file: page skipped"]


# --- never a poorer spec in silence --------------------------------------------------------


def test_losses_name_what_a_spec_would_lose(corpus_specs) -> None:
    from dataclasses import replace

    from dmlconform.spec.extract import losses

    old = corpus_specs["ACTIVATION_SHRINK"]
    assert losses(old, old) == []
    table = old.support[0]
    cut = replace(table, rows=(replace(table.rows[0], dtypes=table.rows[0].dtypes[:1]),))
    new = replace(old, fields=old.fields[:2], support=(cut,) + old.support[2:],
                  formula=replace(old.formula, text=None, parsed=None))
    assert losses(new, old) == [
        "fields Bias, Threshold",
        f"rows OutputTensor of the {table.level.short} support table",
        f"data types {', '.join(t.name for t in table.rows[0].dtypes[1:])} of InputTensor in the "
        f"{table.level.short} support table",
        f"the {old.support[1].level.short} support table",
        "the formula",
    ]


def _extract_cli(*args: str):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from dmlconform.cli import main

    return CliRunner().invoke(main, ["extract", *args])


@pytest.mark.parametrize("page, message", [
    ("garbage-page.md", "no struct fields found for DML_ACTIVATION_SHRINK_OPERATOR_DESC: not an operator page, or "
                        "a damaged one; fix or leave out the page (nothing was written)"),
    ("truncated-after-a-table-header.md", "would replace {spec} with a poorer spec, without the 2_0 support table: "
                                          "the page may be truncated or damaged; fix the page, or delete {spec} if "
                                          "the docs really dropped them (nothing was written)"),
])
def test_extract_never_replaces_a_spec_with_a_poorer_one(tmp_path: Path, page: str, message: str) -> None:
    require_corpus()
    docs, out = tmp_path / "docs", tmp_path / "specs"
    docs.mkdir()
    shutil.copy(HOSTILE / page, docs / SHRINK_PAGE.name)
    assert _extract_cli(str(SHRINK_PAGE), "-o", str(out), "-q").exit_code == 0
    spec = out / "ACTIVATION_SHRINK.yaml"
    before = spec.read_bytes()
    for check in ([], ["--check"]):
        result = _extract_cli(str(docs), "-o", str(out), "-q", *check)
        assert (result.exit_code, result.output.strip().splitlines()) == (
            2, [f"docs/{SHRINK_PAGE.name}: error: {message.format(spec=spec)}"]), check
        assert spec.read_bytes() == before


# --------------------------------------------------------------------------- the corpus root (issue #23 part 3)


def _mini_corpus(root: Path) -> Path:
    """A corpus as ../shared/directml-docs is laid out: INDEX.md and
    reference/ beside operators/; the one operator page returned."""
    page = root / "operators" / "sdk-api" / SHRINK_PAGE.name
    page.parent.mkdir(parents=True)
    shutil.copy(SHRINK_PAGE, page)
    (root / "reference" / "sdk-api").mkdir(parents=True)
    (root / "reference" / "sdk-api" / "dml_tensor_desc.md").write_text("# DML_TENSOR_DESC\n", encoding="utf-8")
    (root / "INDEX.md").write_text("# The corpus\n", encoding="utf-8")
    return page


def test_any_folder_of_the_corpus_gives_the_same_specs(tmp_path: Path) -> None:
    """The root, operators/, a folder or a page under it: same spec, its
    source path relative to the corpus root.  Before, the root gave
    ``docs/operators/...`` and read INDEX.md and reference/ as pages; a
    subfolder gave ``sdk-api/...``."""
    require_corpus()
    root = tmp_path / "docs"
    page = _mini_corpus(root)
    results = [extract([source]) for source in (root, root / "operators", page.parent, page)]
    assert {store.dumps_spec(r.specs[0]) for r in results} == {store.dumps_spec(results[1].specs[0])}
    assert results[0].specs[0].sources[0].path == f"operators/sdk-api/{SHRINK_PAGE.name}"
    assert [r.pages for r in results] == [1, 1, 1, 1]
    assert [[s.path for s in r.skipped] for r in results] == [
        ["INDEX.md", "reference/sdk-api/dml_tensor_desc.md"], [], [], []]
    assert [w for w in results[0].warnings if "INDEX" in w.path or "reference" in w.path] == []


def test_a_folder_above_the_corpus_root_reads_its_operator_pages(tmp_path: Path) -> None:
    """``../shared``: the corpus in it gives the same spec; the pages beside
    it and the corpus's non-operator pages are skipped, by place."""
    require_corpus()
    page = _mini_corpus(tmp_path / "shared" / "docs")
    (tmp_path / "shared" / "abi").mkdir()
    (tmp_path / "shared" / "abi" / "structs.md").write_text("# structs\n", encoding="utf-8")
    above, root = extract([tmp_path / "shared"]), extract([tmp_path / "shared" / "docs"])
    assert [store.dumps_spec(s) for s in above.specs] == [store.dumps_spec(s) for s in root.specs]
    assert above.specs[0].sources[0].path == f"operators/sdk-api/{page.name}"
    assert [(s.path, s.place) for s in above.skipped] == [
        ("abi/structs.md", "abi/"), ("docs/INDEX.md", "docs/INDEX.md"),
        ("docs/reference/sdk-api/dml_tensor_desc.md", "docs/reference/")]
    assert skipped_summary(above.skipped) == ("skipped 3 pages that are not operator pages (abi/, docs/INDEX.md, "
                                              "docs/reference/): --all-warnings lists them")


def test_pages_outside_a_corpus_keep_paths_from_the_named_folder(tmp_path: Path) -> None:
    """An ``operators`` folder elsewhere above does not make a corpus."""
    require_corpus()
    (tmp_path / "operators").mkdir()
    pages = tmp_path / "mine" / "pages"
    pages.mkdir(parents=True)
    shutil.copy(SHRINK_PAGE, pages / SHRINK_PAGE.name)
    result = extract([pages])
    assert result.specs[0].sources[0].path == f"pages/{SHRINK_PAGE.name}" and result.skipped == ()


def test_the_corpus_root_says_once_what_it_skipped(tmp_path: Path) -> None:
    require_corpus()
    root = tmp_path / "docs"
    _mini_corpus(root)
    summary = "skipped 2 pages that are not operator pages (INDEX.md, reference/): --all-warnings lists them"
    result = _extract_cli(str(root), "-o", str(tmp_path / "specs"))
    assert result.exit_code == 0 and [line for line in result.output.splitlines() if "skipped" in line] == [summary]
    result = _extract_cli(str(root), "-o", str(tmp_path / "specs"), "--check", "--all-warnings")
    assert result.exit_code == 0 and result.output.splitlines()[-4:-1] == [
        "INDEX.md: skipped: not an operator page (outside operators/)",
        "reference/sdk-api/dml_tensor_desc.md: skipped: not an operator page (outside operators/)", summary]
    assert "skipped" not in _extract_cli(str(root), "-o", str(tmp_path / "specs"), "--check", "-q").output
