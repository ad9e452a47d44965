"""A backend's FLOAT16 accumulation declaration, per operator: it widens the
bound of the operators it names and of no other, and every report shows it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dmlconform.backends.base import BackendInfo, declares_float16, reported_float16
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.judge import Judging
from dmlconform.report.coverage import gating_facts
from dmlconform.report.json_report import dumps, from_json
from dmlconform.results import Outcome, RunResult
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.contraction.test_oracle import _cases, _spec


class _Declaring(FaultyBackend):
    """The faulty backend (GEMM summed in FLOAT16) declaring ``declared``."""

    def __init__(self, declared: bool | frozenset[str]) -> None:
        super().__init__("gemm-float16-accumulation")
        self.declared = declared

    def info(self) -> BackendInfo:
        return dataclasses.replace(super().info(), float16_accumulation=self.declared)


@pytest.mark.parametrize(("declared", "fails"), [
    (False, True), (frozenset(), True), (frozenset({"REDUCE", "CUMULATIVE_SUMMATION"}), True),
    (frozenset({"GEMM"}), False), (True, False)])
def test_a_declaration_widens_only_the_operators_it_names(declared: bool | frozenset[str], fails: bool) -> None:
    pairs = [(_spec(), c) for c in _cases() if c.dtype is m.DataType.FLOAT16]
    results = run_cases(pairs, _Declaring(declared))
    failed = sum(r.outcome is Outcome.FAIL for r in results)
    assert failed >= 20 if fails else {r.outcome for r in results} == {Outcome.PASS}


def test_judging_reads_the_declaration_per_operator() -> None:
    some = Judging(float16_accumulation=frozenset({"GEMM"}))
    assert some.accumulates_float16("GEMM") and not some.accumulates_float16("REDUCE")
    assert Judging(float16_accumulation=True).accumulates_float16("REDUCE")
    assert not Judging().accumulates_float16("GEMM")
    assert declares_float16(frozenset({"REDUCE"}), "REDUCE")


def test_a_declaration_may_name_one_attribute_value_of_an_operator() -> None:
    """``REDUCE:DML_REDUCE_FUNCTION_MULTIPLY``: the cases with that Function only."""
    declared = frozenset({"REDUCE:DML_REDUCE_FUNCTION_MULTIPLY"})
    multiply = (("Function", "DML_REDUCE_FUNCTION_MULTIPLY"), ("AxisCount", 1), ("Axes", "0"))
    total = (("Function", "DML_REDUCE_FUNCTION_SUM"), ("AxisCount", 1), ("Axes", "0"))
    assert declares_float16(declared, "REDUCE", multiply)
    assert not declares_float16(declared, "REDUCE", total)
    assert not declares_float16(declared, "REDUCE")
    assert not declares_float16(declared, "ARGMAX", multiply)


def test_a_declaration_of_another_function_leaves_the_sums_at_float32() -> None:
    """The fault that sums REDUCE's FLOAT16 SUM, AVERAGE, L1 and SUM_SQUARE in
    FLOAT16 is still caught when only MULTIPLY is declared, and passes when
    REDUCE is."""
    from dmlconform.catalog import load_spec
    from dmlconform.families import cases_of
    from tests.conftest import REPO

    spec = load_spec(REPO / "specs" / "REDUCE.yaml")
    pairs = [(spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is m.DataType.FLOAT16]

    def failed(declared: frozenset[str]) -> int:
        class Declaring(FaultyBackend):
            def info(self) -> BackendInfo:
                return dataclasses.replace(super().info(), float16_accumulation=declared)
        return sum(r.outcome is Outcome.FAIL for r in run_cases(pairs, Declaring("reduce-float16-accumulation")))

    assert failed(frozenset({"REDUCE:DML_REDUCE_FUNCTION_MULTIPLY"})) > 0
    assert failed(frozenset({"REDUCE"})) == 0


@pytest.mark.parametrize("bad", ["GEMM", ["GEMM"], {"GEMM"}, frozenset({1})])
def test_a_declaration_of_another_type_is_refused(bad: object) -> None:
    with pytest.raises(TypeError, match=r"give True, False or a frozenset of operator names"):
        BackendInfo("x", "d", "1", m.FeatureLevel.FL_6_4, float16_accumulation=bad)  # type: ignore[arg-type]


def _run(declared: bool | tuple[str, ...]) -> RunResult:
    return RunResult(run_id="r", backend="torch", device="cpu", backend_version="2", feature_level="6_4",
                     flush_subnormals=False, seed=0, command="dmlconform run", started="s", finished="f",
                     cases=(), float16_accumulation=declared)


@pytest.mark.parametrize(("declared", "shown"), [
    (reported_float16(frozenset({"B_OP", "A_OP"})), "A_OP, B_OP"), (reported_float16(True), "every operator")])
def test_reports_show_the_declaration_and_read_it_back(declared: bool | tuple[str, ...], shown: str) -> None:
    run = _run(declared)
    assert ("float16 accumulation", shown) in gating_facts(run)
    assert from_json(json.loads(dumps(run))).float16_accumulation == declared


def test_a_run_without_a_declaration_writes_none() -> None:
    run = _run(reported_float16(False))
    text = dumps(run)
    assert "float16_accumulation" not in text and gating_facts(run) == ()
    assert from_json(json.loads(text)).float16_accumulation == ()
