"""The shipped operator type numbers match the ABI facts, and every spec carries its number."""

from __future__ import annotations

import json

import pytest

from dmlconform.catalog import load_spec
from dmlconform.spec.files import spec_files
from dmlconform.spec.operator_types import (
    DATA_FILE,
    ENUM_FILE,
    attribute_enums_from_facts,
    dumps,
    from_facts,
    operator_type,
    operator_types,
)
from tests.conftest import REPO, SHARED

FACTS = SHARED / "directml-abi" / "abi-facts.json"


@pytest.mark.parametrize("path, derive", [
    (("spec", DATA_FILE), from_facts),
    (ENUM_FILE, attribute_enums_from_facts),
], ids=["operator_types", "attribute_enums"])
def test_data_files_match_abi_facts(path, derive) -> None:  # type: ignore[no-untyped-def]
    if not FACTS.is_file():
        pytest.skip(f"the ABI facts are not at {FACTS} (they sit beside the checkout in CI)")
    expected = dumps(derive(json.loads(FACTS.read_text(encoding="utf-8"))))
    shipped = REPO.joinpath("dmlconform", *path).read_text(encoding="utf-8")
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
