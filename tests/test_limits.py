"""dmlconform/limits.py: every limit in one place, each with the reason for
its number, and each far above the real files it bounds."""

from __future__ import annotations

import ast
import inspect

import pytest

from dmlconform import limits
from tests.conftest import DOCS, OPERATORS, REPO, require_corpus


def test_every_limit_has_a_docstring() -> None:
    """A limit without the measurement behind it cannot be raised safely."""
    body = ast.parse(inspect.getsource(limits)).body
    missing = []
    for i, node in enumerate(body):
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets):
            names = [t.id for t in node.targets]  # type: ignore[attr-defined]
            if names[0] in ("KiB", "MiB", "GiB"):
                continue
            following = body[i + 1] if i + 1 < len(body) else None
            documented = isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
            grouped = isinstance(following, ast.Assign)  # MIN_/MAX_ pairs share the docstring after them
            if not (documented or grouped):
                missing.extend(names)
    assert missing == []


def _file_limits() -> list[limits.FileLimit]:
    return [v for v in vars(limits).values() if isinstance(v, limits.FileLimit)]


def test_file_limits_name_their_kind_and_what_real_files_measure() -> None:
    assert len(_file_limits()) >= 8
    for limit in _file_limits():
        assert limit.kind.startswith(("a ", "an ")) and limit.typical and limit.max_bytes >= limits.MiB


def test_real_specs_are_far_below_the_spec_limit() -> None:
    biggest = max(p.stat().st_size for p in (REPO / "specs").glob("*.yaml"))
    assert biggest * 100 < limits.SPEC.max_bytes


def test_real_pages_are_far_below_the_page_limit() -> None:
    require_corpus()
    assert max(p.stat().st_size for p in DOCS.rglob("*.md")) * 10 < limits.DOC_PAGE.max_bytes
    assert max(p.stat().st_size for p in OPERATORS.rglob("meta/*")) * 100 < limits.DOC_SIDECAR.max_bytes


@pytest.mark.parametrize("name", ["notes.yaml", "torch-cpu.summary.json", "onnxruntime-cpu.summary.json"])
def test_committed_results_inputs_are_far_below_their_limits(name: str) -> None:
    limit = limits.NOTES if name.endswith(".yaml") else limits.REPORT
    assert (REPO / "docs" / "results" / name).stat().st_size * 100 < limit.max_bytes


def test_nesting_limits_leave_room() -> None:
    assert limits.MAX_NESTING >= 32 and limits.MAX_FORMULA_DEPTH >= 4 * 8  # 8: the docs' deepest formula
    assert (limits.MIN_DIMENSION_COUNT, limits.MAX_DIMENSION_COUNT) == (1, 8)
