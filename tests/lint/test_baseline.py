"""lint's baseline of known findings (dmlconform/lint/baseline.py): the
shipped specs pass with their known doc mistakes (issue #33: lint exited 1
on them), a new finding fails, an edit elsewhere keeps an entry matching, a
fixed finding is named at its entry, a bad baseline is a located error."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dmlconform.cli import main
from dmlconform.lint import baseline as known
from dmlconform.lint.checks import RULES, Finding, lint_paths
from tests.conftest import REPO

SPECS = REPO / "specs"


def lint(*args: str) -> Result:
    return CliRunner().invoke(main, ["lint", *args])


def test_the_shipped_specs_pass_with_every_finding_known() -> None:
    """Every finding of the shipped specs (6 errors among them) is in the
    shipped baseline: exit 0, each counted as known, none printed as new;
    without the baseline the same specs exit 1."""
    findings = lint_paths([SPECS])
    assert sum(f.severity == "error" for f in findings) >= 1
    result = lint()
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    files = len({f.path for f in findings})
    assert re.fullmatch(rf"0 errors, 0 warnings in 0 files; {len(findings)} known in {files} files "
                        rf"\(.*{known.FILE_NAME}; -v lists them\)\n", result.stderr), result.stderr
    verbose = lint("-v").stderr
    assert all(f"{Path(f.path).name}:{f.line}:{f.column}: {f.code} {f.message}" in verbose for f in findings)
    assert lint("--no-baseline").exit_code == 1


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """ACTIVATION_LINEAR (two DML106 warnings) and ACTIVATION_SOFTSIGN
    (clean) in specs/, with a baseline beside specs/ that knows LINEAR's two
    findings (as specs/ACTIVATION_LINEAR.yaml: relative to its folder)."""
    specs = tmp_path / "specs"
    specs.mkdir()
    for name in ("ACTIVATION_LINEAR", "ACTIVATION_SOFTSIGN"):
        shutil.copy(SPECS / f"{name}.yaml", specs / f"{name}.yaml")
    assert lint(str(specs), "--baseline", str(tmp_path / "b.yml"), "--write-baseline").exit_code == 0
    return specs


def test_known_warnings_pass_strict_and_a_new_error_fails(folder: Path) -> None:
    base = str(folder.parent / "b.yml")
    result = lint(str(folder), "--baseline", base, "--strict")
    assert result.exit_code == 0 and result.stderr.startswith("0 errors, 0 warnings in 0 files; 2 known in 1 files")
    spec = folder / "ACTIVATION_SOFTSIGN.yaml"
    spec.write_text(spec.read_text().replace("introduced: '1_0'", "introduced: '3_O'"))
    result = lint(str(folder), "--baseline", base)
    assert result.exit_code == 1
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["DML003"]
    assert result.stderr.startswith("1 errors, 0 warnings in 1 files; 2 known in 1 files")


def test_an_edit_elsewhere_in_the_file_keeps_the_entries(folder: Path) -> None:
    """Entries are keyed by file, code and message, not by line."""
    spec = folder / "ACTIVATION_LINEAR.yaml"
    before = {(f.line, f.code) for f in lint_paths([spec])}
    spec.write_text("# a comment\n# and another\n\n" + spec.read_text())
    assert {(f.line, f.code) for f in lint_paths([spec])} == {(line + 3, code) for line, code in before}
    result = lint(str(folder), "--baseline", str(folder.parent / "b.yml"), "--strict")
    assert result.exit_code == 0 and "2 known in 1 files" in result.stderr, result.output


def test_a_fixed_finding_is_named_at_its_entry(folder: Path) -> None:
    """A baseline entry whose finding is gone is reported at its own line
    (--strict fails on it, so that the baseline shrinks); an entry of a
    file not linted this time is not."""
    base = folder.parent / "b.yml"
    spec = folder / "ACTIVATION_LINEAR.yaml"
    text = spec.read_text()
    spec.write_text(text.replace("- name: Alpha\n", "- name: Alpha\n  default: 1.0\n", 1))
    assert len(lint_paths([spec])) == 1
    line = base.read_text().splitlines().index("- file: specs/ACTIVATION_LINEAR.yaml") + 1
    result = lint(str(folder), "--baseline", str(base))
    assert result.exit_code == 0
    assert result.stderr.splitlines()[0] == (
        f"{base}:{line}:3: fixed: no finding DML106 in specs/ACTIVATION_LINEAR.yaml says this any more; remove the "
        "entry (lint --write-baseline rewrites the baseline)")
    assert result.stderr.splitlines()[1].endswith(", 1 fixed")
    assert lint(str(folder), "--baseline", str(base), "--strict").exit_code == 1
    alone = lint(str(folder / "ACTIVATION_SOFTSIGN.yaml"), "--baseline", str(base))
    assert (alone.exit_code, alone.stderr) == (0, "0 errors, 0 warnings in 0 files\n")


def test_write_baseline_keeps_reasons_and_other_files(folder: Path) -> None:
    base = folder.parent / "b.yml"
    base.write_text(base.read_text().replace("if it gives one'\n", "if it gives one'\n  reason: the doc gives none\n", 1))
    softsign = folder / "ACTIVATION_SOFTSIGN.yaml"
    softsign.write_text(softsign.read_text().replace("introduced: '1_0'", "introduced: '3_O'"))
    result = lint(str(softsign), "--baseline", str(base), "--write-baseline")
    assert result.exit_code == 0
    data = known.read_baseline(base)
    assert [(e.file, e.code) for e in data.entries] == [
        ("specs/ACTIVATION_LINEAR.yaml", "DML106"), ("specs/ACTIVATION_LINEAR.yaml", "DML106"),
        ("specs/ACTIVATION_SOFTSIGN.yaml", "DML003")]
    assert [e.reason for e in data.entries] == ["the doc gives none", "", ""]
    assert lint(str(folder), "--baseline", str(base), "--strict").exit_code == 0


BAD = """version: 1
findings:
- file: /abs/GEMM.yaml
  code: DML121
  message: m
- file: GEMM.yaml
  code: DML912
  message: m
  reasn: typo
- file: GEMM.yaml
  code: DML121
  message: m
- file: GEMM.yaml
  code: DML121
  message: m
"""


def test_a_bad_baseline_is_a_located_error(tmp_path: Path) -> None:
    base = tmp_path / "b.yml"
    base.write_text(BAD)
    result = lint(str(SPECS / "GEMM.yaml"), "--baseline", str(base))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"{base}:3:9: error: findings[0].file: '/abs/GEMM.yaml' must be a path relative")
    assert any(line.startswith(f"{base}:7:9: error: findings[1].code: unknown rule code 'DML912'") for line in lines)
    assert any(line.startswith(f"{base}:9:3: error: findings[1].reasn: unknown key 'reasn'; did you mean 'reason'?")
               for line in lines), lines
    assert any(line.startswith(f"{base}:13:3: error: findings[3]: the same finding as the entry at line 10")
               for line in lines), lines
    assert "Traceback" not in result.output


def test_a_missing_baseline_and_contradicting_flags_exit_2(tmp_path: Path) -> None:
    missing = lint(str(SPECS / "GEMM.yaml"), "--baseline", str(tmp_path / "none.yml"))
    assert missing.exit_code == 2 and "none.yml" in missing.stderr
    both = lint("--no-baseline", "--write-baseline")
    assert both.exit_code == 2 and "--no-baseline cannot be combined" in both.stderr


def test_the_help_states_the_exit_codes() -> None:
    text = " ".join(lint("--help").output.split())
    assert "exit 2 for a bad baseline file" in text and "--write-baseline" in text and "--no-baseline" in text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.sampled_from(["A.yaml", "reviewed/B.yaml", "sub dir/C.yaml"]),
                               st.sampled_from([r.code for r in RULES]),
                               st.text(st.characters(blacklist_categories=("Cs",)), min_size=1).filter(str.strip)),
                     max_size=8, unique=True))
def test_a_written_baseline_reads_back_as_the_same_findings(tmp_path: Path, rows: list[tuple[str, str, str]]) -> None:
    """Whatever the messages hold (quotes, colons, `yes`, `1_0`, line
    breaks, any Unicode): --write-baseline's file reads back entry for entry."""
    findings = [Finding(code, str(tmp_path / file), 1, 1, message, "error") for file, code, message in rows]
    path = tmp_path / "b.yml"
    path.write_text(known.dumps(findings, root=tmp_path.resolve()), encoding="utf-8")
    assert sorted(e.key for e in known.read_baseline(path).entries) == sorted(rows)
