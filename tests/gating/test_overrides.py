"""Tolerance override files: validated at file:line:col, sorted, and what
the runner does with them."""

from __future__ import annotations

import pytest

from dmlconform.backends.faulty import FaultyBackend
from dmlconform.catalog import load_spec
from dmlconform.errors import SpecError
from dmlconform.families.elementwise.cases import generate
from dmlconform.gating.overrides import by_pair, read_overrides
from dmlconform.results import Outcome, ToleranceOverride
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO
from tests.gating.helpers import write

OPS = {"ACTIVATION_SOFTSIGN", "ELEMENT_WISE_IDENTITY"}


def test_read_sorted(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "t.yaml", """\
version: 1
overrides:
- {operator: ELEMENT_WISE_IDENTITY, dtype: FLOAT16, bound_factor: 2, reason: fp16 via fp32}
- operator: ACTIVATION_SOFTSIGN
  dtype: FLOAT16
  ulp: 4
  bound_factor: 1.5
  reason: division is approximate
- {operator: ELEMENT_WISE_IDENTITY, dtype: FLOAT32, ulp: 1, reason: x}
""")
    assert read_overrides(path, operators=OPS) == (
        ToleranceOverride("ACTIVATION_SOFTSIGN", "FLOAT16", 4, 1.5, "division is approximate"),
        ToleranceOverride("ELEMENT_WISE_IDENTITY", "FLOAT32", 1, None, "x"),
        ToleranceOverride("ELEMENT_WISE_IDENTITY", "FLOAT16", None, 2.0, "fp16 via fp32"),
    )


BAD = """\
overrides:
  - operator: ACTIVATION_SOFTSIGM
    dtype: FLOAT16
    ulp: 4
    reason: x
  - operator: ACTIVATION_SOFTSIGN
    dtype: INT8
    ulp: 1
    reason: x
  - operator: ACTIVATION_SOFTSIGN
    dtype: FLOAT32
    bound_factor: 2
    reason: first
  - operator: ACTIVATION_SOFTSIGN
    dtype: FLOAT32
    ulp: -1
    reason: ""
  - operator: ACTIVATION_SOFTSIGN
    dtype: FLOAT61
    reason: r
  - {operator: ACTIVATION_SOFTSIGN, dtype: FLOAT16, ulp: true, bound_factor: .inf, reason: r, why: x}
"""


def test_every_problem_at_its_place(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError) as info:
        read_overrides(write(tmp_path, "t.yaml", BAD), operators=OPS)
    assert info.value.render().replace(str(tmp_path) + "/", "").splitlines() == [
        "t.yaml:2:15: error: overrides[0].operator: unknown operator 'ACTIVATION_SOFTSIGM'; "
        "did you mean 'ACTIVATION_SOFTSIGN'?",
        "t.yaml:7:12: error: overrides[1].dtype: INT8 is an integer type, which compares exactly; "
        "overrides apply to FLOAT32, FLOAT16, FLOAT64",
        "t.yaml:14:5: error: overrides[3]: ACTIVATION_SOFTSIGN FLOAT32 is overridden twice (first at 10:5)",
        "t.yaml:16:10: error: overrides[3].ulp: -1 must be 0 or more",
        "t.yaml:17:13: error: overrides[3].reason: must not be empty",
        "t.yaml:18:5: error: overrides[4]: give ulp (the ULP budget) or bound_factor (a multiplier of the error "
        "bound), or both",
        "t.yaml:19:12: error: overrides[4].dtype: unknown float data type 'FLOAT61'; did you mean 'FLOAT64'?",
        "t.yaml:21:58: error: overrides[5].ulp: expected a whole number of ULPs, got a boolean True",
        "t.yaml:21:78: error: overrides[5].bound_factor: inf must be a finite number above 0 (2 doubles the error "
        "bound)",
        "t.yaml:21:95: error: overrides[5].why: unknown key 'why'; allowed keys: operator, dtype, ulp, "
        "bound_factor, reason",
    ]


@pytest.mark.parametrize(("text", "expected"), [
    ("overrides: {}\n", "t.yaml:1:12: error: overrides: expected a list of overrides, got a mapping"),
    ("version: 1\n", "t.yaml:1:1: error: top level: missing 'overrides'"),
])
def test_shape_errors(tmp_path, text: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError) as info:
        read_overrides(write(tmp_path, "t.yaml", text), operators=OPS)
    assert info.value.render().replace(str(tmp_path) + "/", "") == expected


def _identity() -> list:  # type: ignore[type-arg]
    spec = load_spec(REPO / "specs" / "ELEMENT_WISE_IDENTITY.yaml")
    return [(spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is m.DataType.FLOAT32]


def test_an_override_loosens_only_its_operator_and_type() -> None:
    """A backend one ULP off fails identity; a 1-ULP budget for FLOAT32 passes it."""
    pairs = _identity()
    backend = FaultyBackend("one-ulp")
    plain = run_cases(pairs, backend)
    assert any(r.outcome is Outcome.FAIL for r in plain)
    loose = run_cases(pairs, backend, overrides=by_pair(
        [ToleranceOverride("ELEMENT_WISE_IDENTITY", "FLOAT32", ulp=1, reason="r")]))
    assert {r.outcome for r in loose} <= {Outcome.PASS, Outcome.NOT_SUPPORTED}
    other = run_cases(pairs, backend, overrides=by_pair(
        [ToleranceOverride("ELEMENT_WISE_IDENTITY", "FLOAT16", ulp=1, reason="r")]))
    assert [r.outcome for r in other] == [r.outcome for r in plain]
