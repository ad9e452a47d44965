"""Shared fixtures of the directml backend tests: the ABI facts beside the checkout, and the
Linux CPU stack that the ``real_directml`` tests run through (set up by the documented command)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dmlconform.backends.directml.linux_stack import Stack, check, default_stack_dir
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.spec.model import Spec
from tests.conftest import REPO, SHARED

FACTS = SHARED / "directml-abi" / "abi-facts.json"
SOURCE = SHARED / "directml-linux" / "vkd3d-1.17.tar.xz"


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


@pytest.fixture(scope="session")
def linux_stack() -> Stack:
    """The default cache's stack, set up (or checked) through the documented command."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the Linux CPU stack needs Linux")
    args = ["directml", "setup-linux", *(["--vkd3d-source", str(SOURCE)] if SOURCE.is_file() else [])]
    result = CliRunner().invoke(main, args)
    if result.exit_code != 0:
        lines = [x for x in result.output.splitlines() if x.strip()] or [f"exit {result.exit_code}"]
        pytest.skip(f"the Linux CPU stack cannot be set up here: {lines[-1]}")
    stack = Stack(default_stack_dir())
    check(stack)
    return stack


@pytest.fixture(scope="session")
def sid_mesa(linux_stack: Stack) -> Stack:
    """The default cache's stack with Debian sid's lavapipe too (``setup-linux --mesa sid``)."""
    args = ["directml", "setup-linux", "--mesa", "sid", *(["--vkd3d-source", str(SOURCE)] if SOURCE.is_file() else [])]
    result = CliRunner().invoke(main, args)
    if result.exit_code != 0:
        lines = [x for x in result.output.splitlines() if x.strip()] or [f"exit {result.exit_code}"]
        pytest.skip(f"sid's Mesa cannot be set up here: {lines[-1]}")
    stack = Stack(default_stack_dir(), "sid")
    check(stack)
    return stack
