"""Shared fixtures of the directml backend tests: the ABI facts beside the checkout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dmlconform.catalog import load_spec
from dmlconform.spec.model import Spec
from tests.conftest import REPO, SHARED

FACTS = SHARED / "directml-abi" / "abi-facts.json"


@pytest.fixture(scope="session")
def facts() -> dict[str, Any]:
    if not FACTS.is_file():
        pytest.skip(f"the ABI facts are not at {FACTS} (they sit beside the checkout in CI)")
    return json.loads(FACTS.read_text(encoding="utf-8"))


def spec(name: str) -> Spec:
    return load_spec(REPO / "specs" / f"{name}.yaml")


@pytest.fixture(scope="session")
def all_specs() -> list[Spec]:
    return [load_spec(p) for p in sorted((REPO / "specs").glob("*.yaml"))]


def spec_paths() -> dict[str, Path]:
    return {p.stem: p for p in (REPO / "specs").glob("*.yaml")}
