"""The CPU reference of the reviewed-formula operators passes their default
suite, and the pages' worked examples hold for the oracle and the reference
alike (docs/bitwise.md)."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.elementwise.formula_oracle import evaluate
from dmlconform.families.elementwise.reference import OPS, Call
from dmlconform.formula import parse
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO
from tests.families.elementwise.test_overlay import OPERATORS


def test_cpu_passes_every_case_of_the_family() -> None:
    pairs = []
    for op in OPERATORS:
        spec = load_spec(REPO / "specs" / f"{op}.yaml")
        pairs += [(spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0)]
    results = run_cases(pairs, CpuBackend())
    assert {r.outcome for r in results} == {Outcome.PASS, Outcome.NOT_SUPPORTED}
    assert len(results) > 600


def _oracle(op: str, x: np.ndarray, out: type, **attrs: str) -> list[float]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    assert spec.formula.parsed is not None
    return evaluate(parse(spec.formula.parsed), {"x": x}, attrs, dtype=out,
                    nan_policy=spec.formula.nan_policy).expected.tolist()


def _cpu(op: str, x: np.ndarray, out: type, **attrs: str) -> list[float]:
    call = Call({"InputTensor": x}, attrs, m.DataType.FLOAT32, {"OutputTensor": np.dtype(out)})
    return np.asarray(OPS[op](call)).astype(out).tolist()


def test_the_bit_count_example() -> None:
    x = np.uint32([[0, 123], [456, 789]])  # the BIT_COUNT page's example
    assert _oracle("ELEMENT_WISE_BIT_COUNT", x, np.uint32) == _cpu("ELEMENT_WISE_BIT_COUNT", x, np.uint32) \
        == [[0, 6], [4, 5]]


def test_the_bit_not_example() -> None:
    x = np.uint8([[0, 128], [42, 255]])  # the BIT_NOT page's example (the BIT_XOR page repeats it)
    assert _oracle("ELEMENT_WISE_BIT_NOT", x, np.uint8) == _cpu("ELEMENT_WISE_BIT_NOT", x, np.uint8) \
        == [[255, 127], [213, 0]]


@pytest.mark.parametrize(("mode", "row"), [
    ("DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN", [-2, -2, -2, -1, 0, 1, 2, 2, 2]),
    ("DML_ROUNDING_MODE_TOWARD_ZERO", [-2, -1, -1, -1, 0, 1, 1, 1, 2]),
    ("DML_ROUNDING_MODE_TOWARD_INFINITY", [-3, -2, -2, -1, 0, 1, 2, 2, 3]),
])
def test_the_rounding_mode_table(mode: str, row: list[int]) -> None:
    """DML_ROUNDING_MODE's remarks table, for FLOAT32 and FLOAT16."""
    for dtype in (np.float32, np.float16):
        x = np.asarray([-2.5, -1.75, -1.5, -1.25, 0, 1.25, 1.5, 1.75, 2.5], dtype=dtype)
        assert _oracle("ELEMENT_WISE_ROUND", x, dtype, RoundingMode=mode) == row
        assert _cpu("ELEMENT_WISE_ROUND", x, dtype, RoundingMode=mode) == row


def test_is_nan_is_one_for_every_nan_encoding_of_float16() -> None:
    x = np.uint16([0x7E00, 0xFE00, 0x7C01, 0x7FFF, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001]).view(np.float16)
    want = [1, 1, 1, 1, 0, 0, 0, 0, 0]
    assert _oracle("ELEMENT_WISE_IS_NAN", x, np.uint8) == _cpu("ELEMENT_WISE_IS_NAN", x, np.uint8) == want
