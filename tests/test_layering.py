"""The case generators and the families depend on no backend (DESIGN: cases
come from the spec and the level; a backend is what they test, so it must
not shape them).  CI checks the whole layering with `lint-imports`
(pyproject.toml); this holds the part that matters most without it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

_CASES = sorted([*(REPO / "dmlconform" / "cases").glob("*.py"), *(REPO / "dmlconform" / "families").rglob("*.py")])


def _imported(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    return names


@pytest.mark.parametrize("path", _CASES, ids=lambda p: str(p.relative_to(REPO / "dmlconform")))
def test_no_case_module_imports_a_backend(path: Path) -> None:
    assert [n for n in _imported(path) if n.startswith("dmlconform.backends")] == []
