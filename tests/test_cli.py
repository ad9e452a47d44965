"""The command line: exit codes, error rendering, extract --check, schema."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from click.testing import CliRunner

from dmlconform import __version__
from dmlconform.cli import main
from tests.conftest import OPERATORS, REPO, require_corpus

SHRINK = "sdk-api/ns-directml-dml_activation_shrink_operator_desc.md"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_help_documents_exit_codes():
    for args in ([], ["extract"], ["schema"]):
        out = run(*args, "--help").output
        assert "Exit codes:" in out and "130" in out and "usage or input error" in out


def test_schema_is_json_schema():
    data = json.loads(run("schema").output)
    assert data["$schema"].startswith("https://json-schema.org/") and "fields" in data["properties"]


def test_missing_source_is_an_input_error():
    result = run("extract", "no/such/dir", "-o", "x")
    assert result.exit_code == 2
    assert result.output.strip() == "error: source 'no/such/dir' does not exist"


def test_unknown_option_is_usage_error():
    assert run("extract", "--frobnicate").exit_code == 2


def test_extract_then_check(tmp_path):
    require_corpus()
    docs = tmp_path / "docs"
    (docs / "sdk-api").mkdir(parents=True)
    shutil.copy(OPERATORS / SHRINK, docs / SHRINK)
    out = tmp_path / "specs"
    result = run("extract", str(docs), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["ACTIVATION_SHRINK.yaml"]
    assert "wrote 1 specs from 1 pages" in result.output
    assert run("extract", str(docs), "-o", str(out), "--check").exit_code == 0
    spec = out / "ACTIVATION_SHRINK.yaml"
    spec.write_text(spec.read_text().replace("default: 0.5", "default: 0.25"))
    result = run("extract", str(docs), "-o", str(out), "--check")
    assert result.exit_code == 1
    assert f"{spec}: out of date" in result.output
    (out / "EXTRA.yaml").write_text("x: 1\n")
    assert f"{out / 'EXTRA.yaml'}: not produced by these sources" in run("extract", str(docs), "-o", str(out), "--check").output


def test_extract_is_byte_identical_across_runs(tmp_path):
    require_corpus()
    a, b = tmp_path / "a", tmp_path / "b"
    assert run("extract", str(OPERATORS), "-o", str(a), "-q").exit_code == 0
    assert run("extract", str(OPERATORS), "-o", str(b), "-q").exit_code == 0
    names = sorted(p.name for p in a.iterdir())
    assert len(names) == 176 and names == sorted(p.name for p in b.iterdir())
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in names)


def test_committed_specs_are_up_to_date():
    require_corpus()
    result = run("extract", str(OPERATORS), "-o", str(REPO / "specs"), "--check", "-q")
    assert result.exit_code == 0, result.output


def test_no_traceback_in_a_real_process(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe not an operator page")
    proc = subprocess.run([sys.executable, "-m", "dmlconform", "extract", str(bad), "-o", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert "Traceback" not in proc.stderr
    assert "not a DirectML operator page" in proc.stderr


def _spec_copy(tmp_path, name="ACTIVATION_SOFTSIGN"):  # type: ignore[no-untyped-def]
    folder = tmp_path / "specs"
    folder.mkdir(exist_ok=True)
    target = folder / f"{name}.yaml"
    shutil.copy(REPO / "specs" / f"{name}.yaml", target)
    return folder, target


def test_lint_clean_spec_exits_0(tmp_path):
    folder, _ = _spec_copy(tmp_path)
    result = CliRunner().invoke(main, ["lint", str(folder)])
    assert result.exit_code == 0
    assert result.output == "0 errors, 0 warnings in 0 files\n"


def test_lint_error_exits_1_with_location(tmp_path):
    folder, spec = _spec_copy(tmp_path)
    text = spec.read_text().replace("introduced: '1_0'", "introduced: '3_O'")
    spec.write_text(text)
    line = text.splitlines().index("introduced: '3_O'") + 1
    result = CliRunner().invoke(main, ["lint", str(folder)])
    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert first.startswith(f"{spec}:{line}:13: DML003 ") and "3_0" in first


def test_lint_warnings_fail_only_when_strict(tmp_path):
    folder, _ = _spec_copy(tmp_path, "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL")
    assert CliRunner().invoke(main, ["lint", str(folder)]).exit_code == 0
    result = CliRunner().invoke(main, ["lint", str(folder), "--strict"])
    assert result.exit_code == 1 and "DML111" in result.output


def test_lint_sarif_to_file(tmp_path):
    folder, spec = _spec_copy(tmp_path)
    spec.write_text(spec.read_text().replace("dims: [4, 5]", "dims: [5, 4]", 1))
    out = tmp_path / "lint.sarif"
    result = CliRunner().invoke(main, ["lint", str(folder), "--format", "sarif", "-o", str(out)])
    assert result.exit_code == 1
    log = json.loads(out.read_text())
    assert log["version"] == "2.1.0"
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["DML110"]


def test_lint_missing_path_is_input_error():
    result = CliRunner().invoke(main, ["lint", "no/such/specs"])
    assert result.exit_code == 2 and result.output == "error: spec path 'no/such/specs' does not exist\n"


def test_lint_list_rules():
    out = run("lint", "--list").output
    assert out.splitlines()[0].startswith("DML001  error") and "DML102" in out


def test_output_to_a_log_is_wide_enough_for_operator_names(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Not a terminal (a CI log): the summary keeps each operator name on one line."""
    monkeypatch.delenv("COLUMNS", raising=False)
    result = CliRunner().invoke(main, ["run", "--no-progress", "--no-isolate", "--op", "ELEMENT_WISE_THRESHOLD",
                                       "--dtype", "FLOAT32", "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("ELEMENT_WISE_THRESHOLD ")]
    assert rows and all("FLOAT32 @ 6_4" in line for line in rows)


def test_an_unexpected_exception_is_one_line_and_exit_4(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A bug of ours (any exception that is not a DmlconformError) is not the
    user's fault: exit 4, not 1 (a failed case), one line, no traceback; with
    --debug the traceback too."""
    import dmlconform.spec.load as load

    def broken() -> dict:  # type: ignore[type-arg]
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(load, "schema", broken)
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 4
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert lines[0].startswith("internal error (a bug in dmlconform, exit 4): ZeroDivisionError: planted;")
    assert "--debug" in lines[0]
    debug = CliRunner().invoke(main, ["--debug", "schema"])
    assert debug.exit_code == 4 and "Traceback" in debug.output and "planted" in debug.output
