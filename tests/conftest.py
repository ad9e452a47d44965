"""Shared fixtures: where the read-only doc corpus lives (``../shared`` beside
the checkout) and the corpus extracted once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# No test may depend on how busy the machine is (issue #33): hypothesis's
# per-example deadline (200 ms by default) is a wall-clock budget, which a
# loaded machine (CI runs the suite with both cores kept busy) overruns.
settings.register_profile("dmlconform", deadline=None)
settings.load_profile("dmlconform")

pytest_plugins = ["tests.golden_plugin"]

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DOCS = SHARED / "directml-docs"
OPERATORS = DOCS / "operators"
SEEDS = DOCS / "seeds"


def require_corpus() -> None:
    if not OPERATORS.is_dir():
        pytest.skip(f"the DirectML doc corpus is not at {OPERATORS} (it sits beside the checkout in CI)")


@pytest.fixture(scope="session")
def corpus():  # type: ignore[no-untyped-def]
    """ExtractResult of the whole operator corpus, extracted once."""
    require_corpus()
    from dmlconform.spec.extract import extract

    return extract([OPERATORS])


@pytest.fixture(scope="session")
def corpus_specs(corpus):  # type: ignore[no-untyped-def]
    return {s.operator: s for s in corpus.specs}
