"""The README's tables are written from the code (dmlconform/docs_tables.py):
the lint rules once stopped at DML120 while `lint --list` went to DML123."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform import docs_tables
from dmlconform.errors import EXIT_CODE_MEANINGS, EXIT_CODES_HELP, ExitCode
from dmlconform.lint.checks import RULES
from tests.conftest import REPO

README = REPO / "README.md"
REGIONS = "".join(f"<!-- {name} -->\nstale\n<!-- /{name} -->\n" for name in docs_tables.TABLES)


def test_the_readme_tables_are_up_to_date() -> None:
    """If this fails: python -m dmlconform.docs_tables README.md"""
    text = README.read_text(encoding="utf-8")
    assert docs_tables.rewrite(text) == text


def test_every_rule_exit_code_and_command_has_a_row() -> None:
    text = docs_tables.rewrite(REGIONS)
    assert "stale" not in text
    assert all(f"| {r.code} | {r.severity} | {r.name} |" in text for r in RULES)
    assert all(f"| {code.value} | {EXIT_CODE_MEANINGS[code].full} |" in text for code in ExitCode)
    for command in ("run", "lint [PATHS]...", "extract SOURCES...", "baseline update REPORT.json", "import onnx"):
        assert f"| `dmlconform {command}` |" in text


def test_a_missing_region_is_named() -> None:
    with pytest.raises(ValueError, match="^no <!-- lint-rules --> ... <!-- /lint-rules --> region$"):
        docs_tables.rewrite(REGIONS.replace("<!-- /lint-rules -->", ""))


def test_help_lists_every_exit_code() -> None:
    codes = [line.split()[0] for line in EXIT_CODES_HELP.splitlines()[2:] if not line.startswith("       ")]
    assert codes == [str(code.value) for code in ExitCode]


def test_check_exits_1_until_rewritten(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(REGIONS, encoding="utf-8")
    result = CliRunner().invoke(docs_tables.main, [str(readme), "--check"])
    assert (result.exit_code, result.output) == (
        1, f"{readme}: tables out of date; run python -m dmlconform.docs_tables {readme}\n")
    assert readme.read_text(encoding="utf-8") == REGIONS
    assert CliRunner().invoke(docs_tables.main, [str(readme)]).exit_code == 0
    assert CliRunner().invoke(docs_tables.main, [str(readme), "--check"]).exit_code == 0
