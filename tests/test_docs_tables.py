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
        1, f"{readme}: tables or numbers out of date; run python -m dmlconform.docs_tables {readme}\n")
    assert readme.read_text(encoding="utf-8") == REGIONS
    assert CliRunner().invoke(docs_tables.main, [str(readme)]).exit_code == 0
    assert CliRunner().invoke(docs_tables.main, [str(readme), "--check"]).exit_code == 0


DOCS_WITH_NUMBERS = (README, REPO / "docs" / "import-onnx.md")


@pytest.fixture(scope="module")
def numbers() -> dict[str, str]:
    return docs_tables.numbers(REPO)


def test_the_readme_numbers_come_from_the_code(numbers: dict[str, str]) -> None:
    """Issue #33: the README said `import onnx` covers 72 operators, where it
    wrote 310 cases of 63 DirectML operators (72 is the ONNX operators).
    Every count the code can give is marked and up to date.  If this fails:
    python -m dmlconform.docs_tables README.md docs/import-onnx.md"""
    assert set(numbers) == set(docs_tables.NUMBERS)
    text = README.read_text(encoding="utf-8")
    assert all(f"<!-- n:{name} -->" in text for name in docs_tables.NUMBERS)
    for path in DOCS_WITH_NUMBERS:
        text = path.read_text(encoding="utf-8")
        assert docs_tables.rewrite_numbers(text, numbers) == text, path
    onnx = (f"<!-- n:onnx-operators -->{numbers['onnx-operators']}<!-- /n --> ONNX operators, "
            f"<!-- n:onnx-cases -->{numbers['onnx-cases']}<!-- /n --> cases of\n"
            f"<!-- n:onnx-dml-operators -->{numbers['onnx-dml-operators']}<!-- /n --> DirectML operators")
    assert onnx in README.read_text(encoding="utf-8")


def test_a_number_that_drifted_is_rewritten_and_fails_check(tmp_path: Path, numbers: dict[str, str]) -> None:
    """The README's tables and numbers checked together: one stale count exits 1, naming the file."""
    text = README.read_text(encoding="utf-8")
    stale = text.replace(f"<!-- n:default-cases -->{numbers['default-cases']}<!-- /n -->",
                         "<!-- n:default-cases -->8,239<!-- /n -->", 1)
    assert stale != text and docs_tables.rewrite_numbers(stale, numbers) == text
    readme = tmp_path / "README.md"
    readme.write_text(stale, encoding="utf-8")
    (tmp_path / "cases").symlink_to(REPO / "cases")
    result = CliRunner().invoke(docs_tables.main, [str(readme), "--check"])
    assert result.exit_code == 1 and result.output.startswith(f"{readme}: tables or numbers out of date")
    assert CliRunner().invoke(docs_tables.main, [str(readme)]).exit_code == 0
    assert readme.read_text(encoding="utf-8") == text


def test_a_marker_naming_no_number_is_named() -> None:
    with pytest.raises(ValueError, match=r"^<!-- n:onnx-ops --> names no number; known: default-cases$"):
        docs_tables.rewrite_numbers("<!-- n:onnx-ops -->3<!-- /n -->", {"default-cases": "1"})


def test_the_readme_says_to_install_build_before_python_m_build() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "`pip install build` once, then `python -m build`" in text
    assert text.index("pip install build") < text.index("python -m build")
