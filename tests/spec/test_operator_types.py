"""The shipped operator type numbers match the ABI facts, and every spec carries its number."""

from __future__ import annotations

import json

import pytest

from dmlconform.spec.load import load_spec, spec_files
from dmlconform.spec.operator_types import DATA_FILE, dumps, from_facts, operator_type, operator_types
from tests.conftest import REPO, SHARED

FACTS = SHARED / "directml-abi" / "abi-facts.json"


def test_data_file_matches_abi_facts() -> None:
    if not FACTS.is_file():
        pytest.skip(f"the ABI facts are not at {FACTS} (they sit beside the checkout in CI)")
    expected = dumps(from_facts(json.loads(FACTS.read_text(encoding="utf-8"))))
    shipped = (REPO / "dmlconform" / "spec" / DATA_FILE).read_text(encoding="utf-8")
    assert shipped == expected, "regenerate with: python -m dmlconform.spec.operator_types " + str(FACTS)


def test_known_numbers() -> None:
    assert operator_type("ACTIVATION_SOFTSIGN") == 50
    assert operator_type("ACTIVATION_SHRINK") == 90
    assert operator_type("ACTIVATION_SWISH") == 167
    assert operator_type("NO_SUCH_OPERATOR") is None
    assert "INVALID" not in operator_types()


def test_every_committed_spec_carries_its_type() -> None:
    for path in spec_files([REPO / "specs"]):
        spec = load_spec(path)
        assert spec.operator_type == operator_type(spec.operator), f"{path}: operator_type={spec.operator_type}"
        assert spec.operator_type is not None, f"{path}: no operator_type"
