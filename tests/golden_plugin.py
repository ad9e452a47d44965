"""Golden files: expected report outputs kept in tests/golden/, rewritten only
by ``pytest --update-golden`` (STYLE.md "Tests"; the habit comes from
hypothesis's ghostwriter tests).

Registered by ``pytest_plugins = ["tests.golden_plugin"]`` in tests/conftest.py,
or for one run by ``pytest -p tests.golden_plugin``.  Test modules that use the
``golden`` fixture define it with ``golden_for``, so they also run where the plugin is
not registered (then golden files are compared, never rewritten).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="Rewrite the golden files in tests/golden/ with the current output.")


@dataclass(frozen=True, slots=True)
class Golden:
    """Compares text with tests/golden/<name>, or rewrites the file when ``update``."""

    root: Path
    update: bool

    def check(self, name: str, actual: str) -> None:
        path = self.root / name
        if self.update:
            from dmlconform.atomic import write_atomic

            write_atomic(path, actual)
            return
        if not path.is_file():
            pytest.fail(f"golden file {path} is missing; run pytest --update-golden to create it")
        expected = path.read_text(encoding="utf-8")
        if actual != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                                fromfile=f"golden/{name}", tofile="actual"))
            pytest.fail(f"output differs from golden/{name} (run pytest --update-golden to accept):\n{diff}")


def golden_for(config: pytest.Config) -> Golden:
    """The Golden of this run: it rewrites only under ``--update-golden`` (an
    unregistered option reads as off)."""
    return Golden(GOLDEN, bool(config.getoption("--update-golden", default=False)))


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return golden_for(request.config)
