"""`dmlconform.diff`, its renderers and the `diff`/`matrix` commands (issue 6).

Facts come from the committed corpus (specs/); edits are made on tmp copies.
Markdown, text and HTML outputs are compared with golden files in
tests/golden/diff/, which only ``pytest --update-golden`` rewrites.
"""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from dmlconform import diff as d
from dmlconform import diff_render as r
from dmlconform.cli import main
from dmlconform.commands.diff_commands import load_tree
from dmlconform.spec.model import DataType, FeatureLevel, Spec
from tests.conftest import REPO
from tests.golden_plugin import Golden, golden_for

SPECS = REPO / "specs"
F = FeatureLevel
#: A small, varied tree for golden files: a late operator, conditions, a kind change, dims and dtype growth.
SUBSET = ("ACTIVATION_GELU", "ACTIVATION_SOFTSIGN", "ELEMENT_WISE_DEQUANTIZE_LINEAR", "ELEMENT_WISE_SIGN", "REDUCE")
LEVELS = "1_0, 2_0, 2_1, 3_0, 3_1, 4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4"


@pytest.fixture(scope="module")
def corpus() -> dict[str, Spec]:
    return {s.operator: s for s in load_tree(str(SPECS))}


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """The plugin's fixture, defined here too so these tests run before conftest registers the plugin."""
    return golden_for(request.config)


def run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)


def copy_specs(folder: Path, names: tuple[str, ...] = SUBSET) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(SPECS / f"{name}.yaml", folder / f"{name}.yaml")
    return folder


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path``."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: {old!r} occurs {text.count(old)} times"
    path.write_text(text.replace(old, new), encoding="utf-8")


#: The start of a 1-8 dims input row, as the spec files write it.
INPUT_1_8 = "kind: Input\n    dims: [1, 2, 3, 4, 5, 6, 7, 8]"


def drop_sign_int64(path: Path) -> None:
    """ELEMENT_WISE_SIGN's 4_1 table (the only one with INT64) loses INT64 on its input."""
    edit(path, f"{INPUT_1_8}\n    dtypes: [FLOAT32, FLOAT16, INT64,", f"{INPUT_1_8}\n    dtypes: [FLOAT32, FLOAT16,")


def rich_text(renderable: object) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


@pytest.fixture
def subset(tmp_path: Path) -> Path:
    """A copy of the SUBSET specs."""
    return copy_specs(tmp_path / "specs")


# --------------------------------------------------------------------------- facts of the corpus


def test_softsign_2_0_to_3_0_gains_dimension_counts(corpus):
    change = d.operator_level_diff(corpus["ACTIVATION_SOFTSIGN"], F.FL_2_0, F.FL_3_0)
    assert change is not None and not change.is_new and not change.has_removals
    for tensor in ("InputTensor", "OutputTensor"):
        assert d.TensorChange(None, tensor, added_dims=(1, 2, 3, 6, 7, 8)) in change.tensors
    assert len(change.tensors) == 2


def test_sign_3_0_to_4_1_gains_int64_and_uint64(corpus):
    change = d.operator_level_diff(corpus["ELEMENT_WISE_SIGN"], F.FL_3_0, F.FL_4_1)
    assert change is not None
    assert change.tensors == tuple(
        d.TensorChange(None, t, added_dtypes=(DataType.INT64, DataType.UINT64)) for t in ("InputTensor", "OutputTensor")
    )


def test_corpus_1_0_to_6_4_only_grows(corpus):
    result = d.level_diff(corpus.values(), F.FL_1_0, F.FL_6_4)
    by_name = {o.operator: o for o in result.operators}
    assert not result.has_removals
    assert by_name["UNFOLD"].is_new and not by_name["ACTIVATION_SOFTSIGN"].is_new
    assert "UPSAMPLE_2D" not in by_name  # a 1_0 table that never changed
    assert all(o.is_new == (o.operator in corpus and corpus[o.operator].introduced > F.FL_1_0)
               for o in result.operators)


def test_a_tensor_that_becomes_optional_gains_support(corpus):
    change = d.operator_level_diff(corpus["ELEMENT_WISE_DEQUANTIZE_LINEAR"], F.FL_6_1, F.FL_6_2)
    assert change is not None and change.tensors == (
        d.TensorChange(None, "ZeroPointTensor", old_kind="Input", new_kind="Optional input"),
    )
    assert change.tensors[0].became_optional and not change.has_removals


def test_support_before_introduced_is_empty(corpus):
    gelu = corpus["ACTIVATION_GELU"]
    assert gelu.introduced == F.FL_5_1
    assert d.support_at(gelu, F.FL_5_0) == ()
    assert [t.tensor for t in d.support_at(gelu, F.FL_5_1)] == ["InputTensor", "OutputTensor"]


def test_history_groups_reduce_tables_by_condition(corpus):
    hist = d.history(corpus["REDUCE"])
    argminmax = [row.level.short for row in hist.rows if row.condition and "ARGMIN" in row.condition.values]
    assert argminmax == ["1_0", "2_1", "3_0", "4_1"]
    assert hist.rows[0].changes == () and hist.tensor_names == ("InputTensor", "OutputTensor")
    assert not hist.has_removals


def test_matrix_row_steps(corpus):
    row = d.matrix_row(corpus["ACTIVATION_SOFTSIGN"])
    steps = {c.level.short: c.step for c in row.cells}
    assert (steps["1_0"], steps["2_0"], steps["2_1"], steps["3_0"], steps["6_4"]) == (
        d.Step.INTRODUCED, d.Step.GREW, d.Step.SAME, d.Step.GREW, d.Step.SAME)
    gelu = {c.level.short: c.step for c in d.matrix_row(corpus["ACTIVATION_GELU"]).cells}
    assert gelu["5_0"] is d.Step.ABSENT and gelu["5_1"] is d.Step.INTRODUCED


@pytest.mark.parametrize(("dims", "text"), [((), ""), ((4,), "4"), ((4, 5), "4-5"), ((1, 2, 3, 6, 7, 8), "1-3, 6-8"),
                                            ((8, 1, 1, 3), "1, 3, 8")])
def test_dims_text(dims, text):
    assert d.dims_text(dims) == text


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_level_diff_turns_the_older_support_into_the_newer(corpus, data):
    spec = data.draw(st.sampled_from(sorted(corpus.values(), key=lambda s: s.operator)), label="spec")
    levels = st.lists(st.sampled_from(list(F)), min_size=2, max_size=2, unique=True)
    old, new = sorted(data.draw(levels, label="levels"))
    before = {(t.condition, t.tensor): t for t in d.support_at(spec, old)}
    after = {(t.condition, t.tensor): t for t in d.support_at(spec, new)}
    for c in d.compare_support(tuple(before.values()), tuple(after.values())):
        b = before.get((c.condition, c.tensor))
        dims = (set(b.dims) if b else set()) - set(c.removed_dims) | set(c.added_dims)
        dtypes = (set(b.dtypes) if b else set()) - set(c.removed_dtypes) | set(c.added_dtypes)
        a = after.get((c.condition, c.tensor))
        assert (dims, dtypes) == ((set(a.dims), set(a.dtypes)) if a else (set(), set()))


def test_a_tree_compared_with_itself_has_no_changes(corpus):
    assert d.tree_diff(corpus.values(), corpus.values(), old_name="a", new_name="b").changes == ()


# --------------------------------------------------------------------------- shrinking support is flagged


@pytest.fixture
def shrunk(tmp_path: Path) -> Path:
    """SUBSET where softsign's 3_0 table lost FLOAT16 on its input (a typical doc error)."""
    folder = copy_specs(tmp_path / "specs")
    edit(folder / "ACTIVATION_SOFTSIGN.yaml", f"{INPUT_1_8}\n    dtypes: [FLOAT32, FLOAT16]",
         f"{INPUT_1_8}\n    dtypes: [FLOAT32]")
    return folder


def test_a_shrinking_table_is_a_removal_everywhere(shrunk):
    specs = load_tree(str(shrunk))
    softsign = next(s for s in specs if s.operator == "ACTIVATION_SOFTSIGN")
    assert d.level_diff(specs, F.FL_2_0, F.FL_3_0).has_removals
    assert d.changelog(specs).has_removals and d.history(softsign).has_removals
    assert d.matrix_row(softsign).cells[3].step is d.Step.CHANGED  # 3_0: more dims, one type fewer
    assert "ACTIVATION_SOFTSIGN at 3_0: InputTensor: +dims 1-3, 6-8 \u2212FLOAT16" in r.matrix_markdown(
        d.support_matrix(specs))


def test_removals_exit_1(shrunk):
    result = run("diff", "--specs", str(shrunk), "--from", "2_0", "--to", "3_0", "--op", "ACTIVATION_SOFTSIGN",
                 "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["removals"] is True
    assert data["operators"][0]["tensors"][0] == {
        "added_dims": [1, 2, 3, 6, 7, 8], "added_dtypes": [], "condition": None, "new_kind": "", "old_kind": "",
        "removed_dims": [], "removed_dtypes": ["FLOAT16"], "tensor": "InputTensor"}
    assert run("diff", "--specs", str(shrunk), "--op", "ACTIVATION_SOFTSIGN").exit_code == 1
    assert run("diff", "--specs", str(shrunk)).exit_code == 1
    assert run("diff", "--specs", str(shrunk), "--from", "3_0").exit_code == 0


def test_a_diff_without_removals_exits_0(subset):
    result = run("diff", "--specs", str(subset), "--from", "2_0", "--to", "3_0", "--op", "ACTIVATION_SOFTSIGN",
                 "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["removals"] is False


# --------------------------------------------------------------------------- two spec trees


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    """old/ and new/ where new/ renames, retypes, reorders, changes a default,
    a formula and a constraint, drops a dtype, adds one operator and drops another."""
    ops = ("ACTIVATION_CELU", "ACTIVATION_ELU", "ACTIVATION_LINEAR", "ACTIVATION_SOFTSIGN", "ELEMENT_WISE_SIGN")
    old = copy_specs(tmp_path / "old", ops + ("ACTIVATION_HARDMAX",))
    new = copy_specs(tmp_path / "new", ops + ("ACTIVATION_GELU",))
    edit(new / "ACTIVATION_ELU.yaml", "- name: Alpha\n", "- name: AlphaScale\n")
    edit(new / "ACTIVATION_CELU.yaml", "default: 1.0", "default: 0.5")
    edit(new / "ACTIVATION_LINEAR.yaml", "- name: Beta\n  c_type: FLOAT", "- name: Beta\n  c_type: INT")
    edit(new / "ACTIVATION_LINEAR.yaml", "Alpha * x + Beta.", "Alpha * x + Beta")
    edit(new / "ACTIVATION_LINEAR.yaml", "[DataType, DimensionCount, Sizes]", "[DataType, Sizes]")
    tensors = ("- name: InputTensor\n  c_type: const DML_TENSOR_DESC*\n  kind: tensor\n  role: input\n",
               "- name: OutputTensor\n  c_type: const DML_TENSOR_DESC*\n  kind: tensor\n  role: output\n")
    edit(new / "ACTIVATION_SOFTSIGN.yaml", "".join(tensors), "".join(reversed(tensors)))
    drop_sign_int64(new / "ELEMENT_WISE_SIGN.yaml")
    return old, new


def test_tree_diff_finds_every_edit(trees):
    old, new = trees
    result = d.tree_diff(load_tree(str(old)), load_tree(str(new)), old_name="old", new_name="new")
    A, K = d.Aspect, d.ChangeKind
    assert result.changes == (
        d.SpecChange("ACTIVATION_CELU", A.DEFAULT, K.CHANGED, "Alpha", "1.0", "0.5"),
        d.SpecChange("ACTIVATION_ELU", A.FIELD, K.RENAMED, "AlphaScale", "Alpha", "AlphaScale"),
        d.SpecChange("ACTIVATION_GELU", A.OPERATOR, K.ADDED, "ACTIVATION_GELU", "", "introduced 5_1"),
        d.SpecChange("ACTIVATION_HARDMAX", A.OPERATOR, K.REMOVED, "ACTIVATION_HARDMAX", "introduced 1_0", ""),
        d.SpecChange("ACTIVATION_LINEAR", A.FIELD, K.RETYPED, "Beta", "FLOAT", "INT"),
        d.SpecChange("ACTIVATION_LINEAR", A.FORMULA, K.CHANGED, "text", "f(x) = Alpha * x + Beta.",
                     "f(x) = Alpha * x + Beta"),
        d.SpecChange("ACTIVATION_LINEAR", A.CONSTRAINT, K.REMOVED, "constraint",
                     "same DataType, DimensionCount, Sizes: InputTensor, OutputTensor", ""),
        d.SpecChange("ACTIVATION_LINEAR", A.CONSTRAINT, K.ADDED, "constraint", "",
                     "same DataType, Sizes: InputTensor, OutputTensor"),
        d.SpecChange("ACTIVATION_SOFTSIGN", A.FIELD, K.REORDERED, "struct order",
                     "InputTensor, OutputTensor", "OutputTensor, InputTensor"),
        d.SpecChange("ELEMENT_WISE_SIGN", A.SUPPORT, K.REMOVED, "4_1 InputTensor dtypes", "INT64", ""),
    )
    assert result.has_removals


def test_tree_diff_markdown_and_exit_code(trees, golden: Golden):
    old, new = trees
    result = run("diff", str(old), str(new), "--format", "markdown")
    assert result.exit_code == 1
    golden.check("diff/trees.md", result.stdout.replace(str(old), "old").replace(str(new), "new"))


def test_tree_diff_narrowed_to_one_operator(trees):
    old, new = trees
    result = run("diff", str(old), str(new), "--op", "activation_celu", "--format", "json")
    assert result.exit_code == 0
    assert [c["operator"] for c in json.loads(result.stdout)["changes"]] == ["ACTIVATION_CELU"]


def test_a_removed_field_of_another_type_is_not_a_rename(corpus):
    linear = corpus["ACTIVATION_LINEAR"]
    beta = linear.fields[3]
    gamma = dataclasses.replace(beta, name="Gamma", c_type="INT")
    changed = dataclasses.replace(linear, fields=linear.fields[:3] + (gamma,))
    bare = list(d.spec_changes(linear, changed))
    assert bare == [(d.Aspect.FIELD, d.ChangeKind.REMOVED, "Beta", "FLOAT, position 4", ""),
                    (d.Aspect.FIELD, d.ChangeKind.ADDED, "Gamma", "", "INT, position 4")]


def test_support_table_added_and_kind_changed(corpus):
    sign = corpus["ELEMENT_WISE_SIGN"]
    first = sign.support[0]
    optional_row = dataclasses.replace(first.rows[0], kind="Optional input")
    older = dataclasses.replace(sign, support=sign.support[1:])
    first_optional = dataclasses.replace(first, rows=(optional_row, first.rows[1]))
    newer = dataclasses.replace(sign, support=(first_optional,) + sign.support[1:])
    assert list(d.spec_changes(older, newer)) == [
        (d.Aspect.SUPPORT, d.ChangeKind.ADDED, "table 2_0", "",
         "InputTensor dims 4; FLOAT32, FLOAT16 / OutputTensor dims 4; FLOAT32, FLOAT16")]
    assert list(d.spec_changes(dataclasses.replace(sign, support=(first,)),
                               dataclasses.replace(sign, support=(first_optional,)))) == [
        (d.Aspect.SUPPORT, d.ChangeKind.CHANGED, "2_0 InputTensor kind", "Input", "Optional input")]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
                    *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose second commit drops INT64 from ELEMENT_WISE_SIGN's 4_1 input."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    copy_specs(repo / "specs", ("ACTIVATION_SOFTSIGN", "ELEMENT_WISE_SIGN"))
    git(repo, "init", "-q")
    git(repo, "add", "specs")
    git(repo, "commit", "-q", "-m", "one")
    drop_sign_int64(repo / "specs" / "ELEMENT_WISE_SIGN.yaml")
    git(repo, "commit", "-q", "-am", "two")
    return repo


def test_git_revisions_are_spec_trees(repo, monkeypatch):
    monkeypatch.chdir(repo)
    for args in (("git:HEAD~1", "git:HEAD"), ("git:HEAD~1:specs", "specs"), ("git:HEAD~1:specs/", "git:HEAD:specs")):
        result = run("diff", *args, "--format", "json")
        assert result.exit_code == 1, result.output
        changes = json.loads(result.stdout)["changes"]
        assert changes == [{"aspect": "support", "kind": "removed", "new": "", "old": "INT64",
                            "operator": "ELEMENT_WISE_SIGN", "subject": "4_1 InputTensor dtypes"}]
    older = run("diff", "--specs", "git:HEAD~1", "--from", "3_0", "--to", "4_1", "--op", "ELEMENT_WISE_SIGN")
    assert older.exit_code == 0


def test_git_errors_are_input_errors(repo, monkeypatch):
    monkeypatch.chdir(repo)
    result = run("diff", "git:nope", "git:HEAD")
    assert result.exit_code == 2 and result.stderr.startswith("error: git ls-tree failed: fatal: ")
    result = run("diff", "git:HEAD:docs", "git:HEAD")
    assert (result.exit_code, result.stderr) == (
        2, "error: no spec files (*.yaml) under 'docs' at git revision 'HEAD'\n")
    result = run("diff", "git:--output=x", "git:HEAD")
    assert (result.exit_code, result.stderr) == (
        2, "error: 'git:--output=x': give a revision, as in git:HEAD or git:v1.0:specs\n")


# --------------------------------------------------------------------------- bad input: exit 2, exact messages


@pytest.mark.parametrize(("args", "message"), [
    (("--from", "7_0"), f"error: --from: unknown feature level '7_0' (known: {LEVELS})"),
    (("--to", "6_5"), f"error: --to: unknown feature level '6_5' (known: {LEVELS})"),
    (("--from", "6_2", "--to", "5_0"), "error: --from 6_2 must be an older feature level than --to 5_0"),
    (("--from", "5_0", "--to", "5_0"), "error: --from 5_0 must be an older feature level than --to 5_0"),
    (("--specs", "no/such/dir"), "error: spec folder 'no/such/dir' does not exist"),
    (("specs",), "error: give two spec trees to compare (OLD NEW), got 1: 'specs'"),
    (("specs", "specs", "--from", "5_0"), "error: --from, --to and --specs work on one spec tree; "
                                          "with two trees (OLD NEW) leave them out"),
])
def test_bad_input_exits_2(args, message, monkeypatch):
    monkeypatch.chdir(REPO)
    result = run("diff", *args)
    assert (result.exit_code, result.stderr, result.stdout) == (2, message + "\n", "")


@pytest.mark.parametrize(("op", "message"), [
    ("ACTIVATION_SOFTSIGNN", "error: --op: unknown operator 'ACTIVATION_SOFTSIGNN'; did you mean "
                             "ACTIVATION_SOFTSIGN or ACTIVATION_SOFTPLUS or ACTIVATION_SOFTMAX?"),
    ("softsign", "error: --op: unknown operator 'softsign'; did you mean ACTIVATION_SOFTSIGN?"),
    ("XYZZY", "error: --op: unknown operator 'XYZZY' (4 operators known)"),
])
def test_unknown_operator_exits_2_with_a_suggestion(tmp_path, op, message):
    folder = copy_specs(tmp_path / "specs", ("ACTIVATION_SOFTMAX", "ACTIVATION_SOFTPLUS", "ACTIVATION_SOFTSIGN",
                                             "ELEMENT_WISE_SIGN"))
    for args in (("--specs", str(folder)), (str(folder), str(folder))):
        result = run("diff", *args, "--op", op)
        assert (result.exit_code, result.stderr, result.stdout) == (2, message + "\n", "")


def test_a_folder_without_specs(tmp_path):
    result = run("matrix", "--specs", str(tmp_path))
    assert (result.exit_code, result.stderr) == (2, f"error: no spec files (*.yaml) in {str(tmp_path)!r}\n")


def test_an_invalid_spec_is_reported_at_its_line(tmp_path):
    folder = copy_specs(tmp_path / "specs", ("ACTIVATION_SOFTSIGN",))
    edit(folder / "ACTIVATION_SOFTSIGN.yaml", "introduced: '1_0'", "introduced: '9_9'")
    result = run("diff", "--specs", str(folder))
    assert result.exit_code == 2 and f"{folder / 'ACTIVATION_SOFTSIGN.yaml'}:6:" in result.stderr


def test_op_accepts_the_struct_name(subset):
    result = run("diff", "--specs", str(subset), "--op", "DML_ELEMENT_WISE_SIGN_OPERATOR_DESC",
                 "--from", "3_0", "--to", "4_1", "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["operators"][0]["operator"] == "ELEMENT_WISE_SIGN"


def test_help_documents_exit_codes():
    for command in ("diff", "matrix"):
        out = run(command, "--help").output
        assert "Exit codes:" in out and "usage or input error" in out


# --------------------------------------------------------------------------- golden outputs


@pytest.mark.parametrize(("name", "args"), [
    ("levels_softsign_2_0_3_0.md", ("--from", "2_0", "--to", "3_0", "--op", "ACTIVATION_SOFTSIGN")),
    ("levels_sign_3_0_4_1.md", ("--from", "3_0", "--to", "4_1", "--op", "ELEMENT_WISE_SIGN")),
    ("levels_subset_2_0_6_2.md", ("--from", "2_0", "--to", "6_2")),
    ("levels_subset_6_3_6_4.md", ("--from", "6_3", "--to", "6_4")),
    ("history_sign.md", ("--op", "ELEMENT_WISE_SIGN")),
    ("history_reduce.md", ("--op", "REDUCE")),
    ("changelog_subset.md", ()),
])
def test_markdown_golden(subset, golden: Golden, name, args):
    result = run("diff", "--specs", str(subset), *args, "--format", "markdown")
    assert result.exit_code == 0, result.output
    golden.check(f"diff/{name}", result.stdout)


def test_table_golden(subset, golden: Golden):
    specs = load_tree(str(subset))
    by_name = {s.operator: s for s in specs}
    golden.check("diff/levels_subset_2_0_6_2.txt", rich_text(r.grid(d.level_diff(specs, F.FL_2_0, F.FL_6_2))))
    golden.check("diff/history_dequantize.txt", rich_text(r.grid(d.history(by_name["ELEMENT_WISE_DEQUANTIZE_LINEAR"]))))
    cli = run("diff", "--specs", str(subset), "--op", "ELEMENT_WISE_DEQUANTIZE_LINEAR", env={"COLUMNS": "100"})
    assert cli.exit_code == 0 and cli.stdout == rich_text(r.grid(d.history(by_name["ELEMENT_WISE_DEQUANTIZE_LINEAR"])))


def test_json_golden(subset, golden: Golden):
    result = run("diff", "--specs", str(subset), "--from", "3_0", "--to", "6_2", "--format", "json")
    assert result.exit_code == 0
    golden.check("diff/levels_subset_3_0_6_2.json", result.stdout)


def test_matrix_golden(subset, golden: Golden, tmp_path):
    result = run("matrix", "--specs", str(subset))
    assert result.exit_code == 0
    golden.check("diff/matrix_subset.md", result.stdout)
    page = tmp_path / "matrix.html"
    result = run("matrix", "--specs", str(subset), "-o", str(page))
    assert (result.exit_code, result.stderr) == (0, f"wrote {page}\n")
    golden.check("diff/matrix_subset.html", page.read_text(encoding="utf-8"))


def test_empty_diff_says_so(subset):
    result = run("diff", "--specs", str(subset), "--from", "6_0", "--to", "6_1")
    assert (result.exit_code, result.stdout) == (0, "No support changes between feature levels 6_0 and 6_1.\n")
    result = run("diff", "--specs", str(subset), "--from", "6_0", "--to", "6_1", "--format", "markdown")
    assert result.stdout == ("## Feature level 6_0 \u2192 6_1: support added and removed\n\n"
                             "No support changes between feature levels 6_0 and 6_1.\n")


def test_output_file_is_written(subset, tmp_path):
    out = tmp_path / "out" / "diff.md"
    result = run("diff", "--specs", str(subset), "--op", "REDUCE", "--format", "markdown", "-o", str(out))
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", f"wrote {out}\n")
    assert out.read_text(encoding="utf-8").startswith("## REDUCE: support by feature level")


# --------------------------------------------------------------------------- escaping


def test_html_and_markdown_escape_everything(corpus):
    evil = dataclasses.replace(corpus["ACTIVATION_SOFTSIGN"], operator="<script>alert(1)</script>|x")
    rows = d.support_matrix([evil])
    page = r.matrix_html(rows)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;|x" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\|x" in r.matrix_markdown(rows)
    assert r.md_text("a|b\n*c* `d` <e>") == "a\\|b<br>\\*c\\* \\`d\\` &lt;e&gt;"


def test_a_huge_spec_in_git_history_is_refused_unread(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A blob over the spec size limit is refused from its size alone
    (issue 20: git:REV blobs had no limit)."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("needs git")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "BIG.yaml").write_text("# padding\n" * 200_000, encoding="utf-8")
    for args in (["init", "-q"], ["add", "specs"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], check=True, capture_output=True)
    result = CliRunner().invoke(main, ["diff", "git:HEAD", "specs"])
    assert result.exit_code == 2
    assert result.output.strip() == ("git:HEAD:specs/BIG.yaml: error: 2,000,000 bytes is more than a spec file may "
                                     "hold (1 MiB); real specs are under 10 KB: check that this is the right file")
