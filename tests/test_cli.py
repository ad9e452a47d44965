"""The command line: exit codes, error rendering, extract --check, schema."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from dmlconform import __version__
from dmlconform.cli import main
from tests.conftest import DOCS, OPERATORS, REPO, require_corpus
from tests.fifos import fifo, needs_fifos

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
    """The README's command, from the corpus root (before: "177 out of date":
    INDEX.md and reference/ were read as pages and paths began with
    directml-docs/); operators/ gives the same (tests/spec/test_extract.py)."""
    require_corpus()
    result = run("extract", str(DOCS), "-o", str(REPO / "specs"), "--check", "-q")
    assert (result.exit_code, result.output) == (0, "176 specs from 331 pages: up to date\n")


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
    rows = [line.split() for line in result.output.splitlines() if "ELEMENT_WISE_THRESHOLD " in line]
    assert rows[0][:2] == ["ELEMENT_WISE_THRESHOLD", "FLOAT32"] and "PASS" in rows[0]


def test_an_unexpected_exception_is_one_line_and_exit_4(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A bug of ours (any exception that is not a DmlconformError) is not the
    user's fault: exit 4, not 1 (a failed case), one line, no traceback; with
    --debug the traceback too."""
    import dmlconform.commands.spec_commands as spec_commands

    def broken() -> dict:  # type: ignore[type-arg]
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(spec_commands, "spec_schema", broken)
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 4
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert lines[0].startswith("internal error (a bug in dmlconform, exit 4): ZeroDivisionError: planted;")
    assert "--debug" in lines[0]
    debug = CliRunner().invoke(main, ["--debug", "schema"])
    assert debug.exit_code == 4 and "Traceback" in debug.output and "planted" in debug.output


# --- issue #20: hostile inputs give one located line, never a traceback or a hang ------------

HOSTILE = REPO / "tests" / "hostile"


def _lines(result) -> list[str]:  # type: ignore[no-untyped-def]
    return result.output.strip().splitlines()


@needs_fifos
def test_lint_of_a_fifo_named_directly_does_not_hang(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with fifo(tmp_path / "A.yaml") as pipe:
        proc = subprocess.run([sys.executable, "-m", "dmlconform", "lint", str(pipe)],
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"{pipe}: error: a FIFO (named pipe), not a regular file: only regular files "
                                   "are read; name the file itself")


def _only_entry(tmp_path, kind: str):  # type: ignore[no-untyped-def]
    """A folder whose only *.yaml is ``kind``, and the line lint prints for
    it (a FIFO is made by the caller, with a writer: `tests.fifos`)."""
    folder = tmp_path / "specs"
    folder.mkdir(exist_ok=True)
    entry = folder / "A.yaml"
    if kind == "fifo":
        return folder, (f"{entry}: error: a FIFO (named pipe), not a regular file: only regular files are read; "
                        "name the file itself")
    if kind == "folder":
        entry.mkdir()
        return folder, (f"{entry}: error: a folder, not a regular file: only regular files are read; name the "
                        "file itself")
    if kind == "dangling link":
        entry.symlink_to(folder / "gone.yaml")
        return folder, (f"{entry}: error: dangling symbolic link: its target {str(folder / 'gone.yaml')!r} does not "
                        "exist; fix the link or remove it")
    (tmp_path / "elsewhere.yaml").write_text("x: 1\n")
    entry.symlink_to(tmp_path / "elsewhere.yaml")
    return folder, (f"{entry}: error: symbolic link to {str(tmp_path / 'elsewhere.yaml')!r}, outside {str(folder)!r}: "
                    "not followed; copy the file into the folder or name it on the command line")


@needs_fifos
@pytest.mark.parametrize("kind", ["fifo", "folder", "dangling link", "link out of the folder"])
def test_lint_of_a_folder_with_no_readable_spec_is_an_input_error(tmp_path, kind) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "specs").mkdir()
    with (fifo(tmp_path / "specs" / "A.yaml") if kind == "fifo" else contextlib.nullcontext()):
        folder, line = _only_entry(tmp_path, kind)
        for command in (["lint", str(folder)], ["gen", "--specs", str(folder), "-o", str(tmp_path / "c")]):
            result = run(*command)
            assert (result.exit_code, _lines(result)) == (2, [line]), command


def test_lint_of_an_empty_folder_is_an_input_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run("lint", str(tmp_path))
    assert (result.exit_code, _lines(result)) == (2, [
        f"error: no spec file (*.yaml) in {str(tmp_path)!r}: nothing to lint; name spec files or a folder that "
        "holds them"])


def test_lint_names_what_it_cannot_read_beside_good_specs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder, _ = _spec_copy(tmp_path)
    (folder / "B.yaml").mkdir()
    result = run("lint", str(folder))
    assert result.exit_code == 1
    assert _lines(result) == [
        f"{folder / 'B.yaml'}:1:1: DML001 a folder, not a regular file: only regular files are read; name the file "
        "itself", "1 errors, 0 warnings in 1 files"]


def test_lint_of_an_oversized_spec_says_size_limit_and_fix(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder, spec = _spec_copy(tmp_path)
    spec.write_text(spec.read_text() + "# padding\n" * 110_000)
    size = spec.stat().st_size
    result = run("lint", str(folder))
    assert result.exit_code == 1
    assert _lines(result)[0] == (f"{spec}:1:1: DML001 {size:,} bytes is more than a spec file may hold (1 MiB); "
                                 "real specs are under 10 KB: check that this is the right file")
    result = run("gen", "--specs", str(folder), "-o", str(tmp_path / "cases"))
    assert result.exit_code == 2 and _lines(result)[0].startswith(f"{spec}: error: {size:,} bytes is more than")


def test_lint_output_into_a_place_that_cannot_be_written(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder, _ = _spec_copy(tmp_path)
    (tmp_path / "file").write_text("keep me")
    target = tmp_path / "file" / "lint.txt"
    result = run("lint", str(folder), "-o", str(target))
    assert (result.exit_code, _lines(result)) == (2, [
        f"{target}: error: {str(tmp_path / 'file')!r} is a file, not a folder: cannot write the output"])
    assert (tmp_path / "file").read_text() == "keep me"


def test_lint_output_refused_by_the_system_is_one_line(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import dmlconform.userfiles as userfiles

    def refuse(path, data) -> None:  # type: ignore[no-untyped-def]
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(userfiles, "write_atomic", refuse)
    folder, _ = _spec_copy(tmp_path)
    result = run("lint", str(folder), "-o", str(tmp_path / "lint.txt"))
    assert (result.exit_code, _lines(result)) == (2, [
        f"{tmp_path / 'lint.txt'}: error: cannot write the output: Permission denied; name a file in a folder you "
        "can write to"])


@needs_fifos
def test_lint_output_onto_a_fifo_keeps_the_fifo(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder, _ = _spec_copy(tmp_path)
    pipe = tmp_path / "out.sarif"
    os.mkfifo(pipe)  # the old code replaced it by a regular file (and /dev/full, as root)
    result = run("lint", str(folder), "-o", str(pipe))
    assert result.exit_code == 2 and _lines(result)[0].startswith(f"{pipe}: error: a FIFO (named pipe)")
    assert pipe.is_fifo()


def test_nested_formulas_in_specs_are_findings_not_crashes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for name, column in (("nested-formula.yaml", 50), ("long-sum-formula.yaml", 1), ("unary-chain-formula.yaml", 50)):
        spec = HOSTILE / "spec" / name
        result = run("lint", str(spec))
        assert result.exit_code == 1, name  # DML005: the file name is not the operator's
        assert f"DML121 formula.parsed does not parse (line 1, column {column}: nesting deeper than 32 levels" \
            in result.output, name
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(spec, folder / "ACTIVATION_SHRINK.yaml")
        result = run("gen", "--specs", str(folder), "-o", str(tmp_path / "cases"))
        assert result.exit_code == 2, name
        assert _lines(result)[0] == (
            f"{folder / 'ACTIVATION_SHRINK.yaml'}: skipped: formula does not bind to the fields (does not parse: "
            "nesting deeper than 32 levels (brackets, operators, calls and branches inside one another); split the "
            "formula into named steps (M = ...))"), name


@pytest.mark.parametrize("command", [["results", "-o", "{tmp}/page.md"], ["merge", "-o", "{tmp}/merged"],
                                     ["baseline", "update", "-o", "{tmp}/b.yaml"]])
def test_broken_reports_are_one_located_line(tmp_path, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    args = [a.format(tmp=tmp_path) for a in command]
    for name, where, message in (
        ("truncated-report.json", "7:359", "not valid JSON: Expecting ',' delimiter"),
        ("deep-report.json", "1:117", "JSON nesting deeper than 64 levels; this is not a file dmlconform wrote"),
    ):
        report = HOSTILE / "results" / name
        at = args.index("-o")
        result = run(*args[:at], str(report), *args[at:])
        assert (result.exit_code, _lines(result)) == (2, [f"{report}:{where}: error: {message}"]), (command, name)
    assert not list(tmp_path.iterdir())


def test_results_notes_nested_too_deep(tmp_path) -> None:  # type: ignore[no-untyped-def]
    report = REPO / "docs" / "results" / "torch-cpu.summary.json"
    notes = HOSTILE / "results" / "deep-notes.yaml"
    result = run("results", str(report), "-o", str(tmp_path / "page.md"), "--notes", str(notes))
    assert (result.exit_code, _lines(result)) == (2, [f"{notes}:3:71: error: nesting deeper than 64 levels"])


def test_results_of_a_summary_with_bad_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    summary = json.loads((REPO / "docs" / "results" / "torch-cpu.summary.json").read_text())
    summary["rows"][0]["passed"] = "many"
    bad = tmp_path / "x.summary.json"
    bad.write_text(json.dumps(summary))
    result = run("results", str(bad), "-o", str(tmp_path / "page.md"))
    assert result.exit_code == 2
    assert _lines(result)[0].startswith(f"error: {bad}: bad summary: rows[0]: expected an object of backend, operator")
    summary["failures"] = {}
    bad.write_text(json.dumps(summary))
    result = run("results", str(bad), "-o", str(tmp_path / "page.md"))
    assert (result.exit_code, _lines(result)) == (2, [
        f"error: {bad} (failures): bad report: format: expected 'dmlconform-report', got None: not a dmlconform "
        "report"])


def test_run_of_a_case_folder_whose_npy_header_claims_10e12_elements(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Was a MemoryError (3.64 TiB) before any size check; the manifest's
    nesting is covered in tests/cases/test_store.py."""
    cases = HOSTILE / "run" / "npy-header-claims-10e12-elements"
    result = run("run", "--cases", str(cases), "--no-progress", "--no-isolate", "-o", str(tmp_path / "r"))
    assert (result.exit_code, _lines(result)) == (2, [
        f"{cases / '00001.InputTensor.npy'}: error: the header claims 1000000000000 elements of float16 but the "
        "file holds 32: it is truncated or not what it says"])


def test_extract_check_over_a_spec_that_is_not_utf8(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Was a UnicodeDecodeError (exit 4): the old file is compared as bytes."""
    require_corpus()
    out = tmp_path / "specs"
    assert run("extract", str(OPERATORS / SHRINK), "-o", str(out), "-q").exit_code == 0
    (out / "ACTIVATION_SHRINK.yaml").write_bytes(b"\xff\xfe")
    result = run("extract", str(OPERATORS / SHRINK), "-o", str(out), "--check", "-q")
    assert (result.exit_code, _lines(result)) == (1, [f"{out / 'ACTIVATION_SHRINK.yaml'}: out of date",
                                                      "1 specs from 1 pages: 1 out of date"])


def test_the_default_suite_at_an_old_level_skips_operators_introduced_later(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """At 1_0 the operators introduced later (ACTIVATION_CELU, 3_0) are skipped with their reason, not an error
    that stops the whole run; one named with --op alone is still refused, saying why."""
    specs = ["--specs", str(REPO / "specs")]
    some = ["--op", "ELEMENT_WISE_ADD", "--op", "ACTIVATION_CELU", "--op", "REDUCE"]
    run = CliRunner().invoke(main, ["run", "--backend", "cpu", "--feature-level", "1_0", *specs, *some,
                                    "--show-skipped", "-o", str(tmp_path / "r")])
    assert run.exit_code == 0, run.output
    assert "ACTIVATION_CELU.yaml: no support table at 1_0 (introduced 3_0)" in run.output
    alone = CliRunner().invoke(main, ["run", "--backend", "cpu", "--feature-level", "1_0", *specs,
                                      "--op", "ACTIVATION_CELU", "-o", str(tmp_path / "s")])
    assert alone.exit_code == 2 and "no support table at 1_0 (introduced 3_0)" in alone.output
