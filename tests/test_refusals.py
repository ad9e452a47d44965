"""Refusals are not wrong values (issue #33 item 4): a backend that
implements a subset of DirectML's tables (`BackendInfo.subset`) refuses a
configuration the table supports as NOT_SUPPORTED with its own reason; one
that claims the tables FAILs there.  Either way the case is counted as
refused, apart from wrong values, in every report, and a refusal is never
printed before a wrong value."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from click.testing import CliRunner
from rich.console import Console

from dmlconform.backends.base import BackendInfo, Support
from dmlconform.backends.cpu import CpuBackend
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.families.elementwise.cases import generate
from dmlconform.report.json_report import dumps, loads
from dmlconform.report.terminal import render
from dmlconform.results import CaseResult, Outcome, RunResult
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.backends.test_external import fake, identity_pairs
from tests.conftest import REPO


class _NoFloat16(CpuBackend):
    """The reference, refusing every FLOAT16 case; ``subset`` as declared."""

    def __init__(self, subset: bool) -> None:
        super().__init__()
        self.subset = subset

    def info(self) -> BackendInfo:
        return dataclasses.replace(super().info(), subset=self.subset)

    def supports(self, spec: m.Spec, case):  # type: ignore[no-untyped-def]
        if case.dtype is m.DataType.FLOAT16:
            return Support(False, "no FLOAT16 kernel")
        return super().supports(spec, case)


class _NotImplemented(CpuBackend):
    def implements(self, spec: m.Spec) -> str | None:
        return "no such kernel"


def _softsign():  # type: ignore[no-untyped-def]
    spec = load_spec(REPO / "specs" / "ACTIVATION_SOFTSIGN.yaml")
    return [(spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)]


def test_a_subset_backends_refusal_is_not_supported_with_its_own_reason() -> None:
    pairs = _softsign()
    supported = {c.id for _, c in pairs if c.expect_supported and c.dtype is m.DataType.FLOAT16}
    assert supported
    for result in run_cases(pairs, _NoFloat16(subset=True)):
        if result.case_id in supported:
            assert (result.outcome, result.message, result.refused) == (Outcome.NOT_SUPPORTED, "no FLOAT16 kernel",
                                                                          True)
        elif result.dtype == "FLOAT16" or not result.expect_supported:   # outside the table: no refusal
            assert result.outcome is Outcome.NOT_SUPPORTED and not result.refused
        else:
            assert result.outcome is Outcome.PASS and not result.refused


def test_a_backend_that_claims_the_tables_keeps_its_fail() -> None:
    results = [r for r in run_cases(_softsign(), _NoFloat16(subset=False)) if r.dtype == "FLOAT16"]
    refused = [r for r in results if r.refused]
    assert refused and all(r.outcome is Outcome.FAIL for r in refused)
    assert all(r.message == "rejected a configuration that the 6_4 table supports: no FLOAT16 kernel" for r in refused)
    assert all(r.outcome is Outcome.NOT_SUPPORTED for r in results if not r.refused)


def test_an_operator_not_implemented_is_not_supported_and_no_refusal() -> None:
    """issue #22 item 5: NOT_SUPPORTED whatever the backend claims; not
    counted as refused (those are the configurations of what it implements)."""
    results = run_cases(_softsign(), _NotImplemented())
    assert {r.outcome for r in results} == {Outcome.NOT_SUPPORTED}
    assert not any(r.refused for r in results)


@pytest.mark.parametrize(("declared", "outcome"), [("true", Outcome.NOT_SUPPORTED), ("false", Outcome.FAIL)])
def test_the_external_hello_declares_a_subset(declared: str, outcome: Outcome) -> None:
    backend = fake("subset", declared)
    try:
        assert backend.info().subset is (declared == "true")
        pairs = [(s, c) for s, c in identity_pairs() if c.expect_supported][:3]
        results = run_cases(pairs, backend)
        assert [(r.outcome, r.refused) for r in results] == [(outcome, True)] * 3
        assert all(r.message.endswith("no strided tensors here") for r in results)
    finally:
        backend.close()


def test_a_hello_without_subset_claims_the_tables_and_a_bad_one_is_named() -> None:
    backend = fake("ok")
    try:
        assert backend.info().subset is False
    finally:
        backend.close()
    backend = fake("subset", '"yes"')
    try:
        info = backend.info()
        assert not info.available and "bad hello reply: subset='yes' must be true" in str(info.reason)
    finally:
        backend.close()


def test_only_the_engines_declare_a_subset() -> None:
    from dmlconform.backends.faulty import FaultyBackend
    assert CpuBackend().info().subset is False
    assert FaultyBackend("one-ulp").info().subset is False
    for module, name in (("onnxruntime", "OnnxRuntimeBackend"), ("torch", "TorchBackend")):
        pytest.importorskip(module)
        backend = getattr(__import__(f"dmlconform.backends.{module}.backend", fromlist=[name]), name)()
        assert backend.info().subset is True, module


# -- reports ---------------------------------------------------------------------------------
def _case(case_id: str, operator: str, outcome: Outcome, *, refused: bool = False, message: str = "") -> CaseResult:
    return CaseResult(case_id=case_id, operator=operator, dtype="FLOAT32", level="6_4", dims=1, layout="packed",
                      outcome=outcome, message=message, refused=refused)


def _run(*, subset: bool) -> RunResult:
    """A refusal in the first group (``A_OP``), a wrong value in the last."""
    refusal = Outcome.NOT_SUPPORTED if subset else Outcome.FAIL
    cases = (_case("A_OP/1", "A_OP", refusal, refused=True, message="no kernel"),
             _case("A_OP/2", "A_OP", refusal, refused=True, message="no kernel"),
             _case("A_OP/3", "A_OP", Outcome.NOT_SUPPORTED, message="outside the table"),
             _case("Z_OP/1", "Z_OP", Outcome.FAIL, message="1 of 4 elements beyond the bound"),
             _case("Z_OP/2", "Z_OP", Outcome.PASS))
    return RunResult(run_id="r", backend="engine", device="d", backend_version="1", feature_level="6_4",
                     flush_subnormals=False, seed=0, command="dmlconform run", started="", finished="",
                     cases=cases, subset=subset)


def _render(run: RunResult) -> str:
    out = io.StringIO()
    render(run, Console(file=out, width=200, color_system=None))
    return out.getvalue()


def test_the_summary_counts_wrong_values_apart_from_refusals() -> None:
    lines = _render(_run(subset=True)).splitlines()
    assert lines[-2] == ("1 wrong value, 2 refused: engine implements a subset of DirectML's tables, so its refusal "
                         "of a configuration the table supports is NOT_SUPPORTED and does not fail the run")
    assert _render(_run(subset=False)).splitlines()[-2] == (
        "1 wrong value, 2 refused: engine claims DirectML's tables, so its refusal of a configuration the table "
        "supports is a FAIL")


def test_a_wrong_value_is_printed_before_any_refusal() -> None:
    headings = [line for line in _render(_run(subset=False)).splitlines() if line.startswith("FAIL  ")]
    assert [h.split()[5].rstrip(":") for h in headings] == ["Z_OP/1", "A_OP/1", "A_OP/2"]


def test_report_json_carries_the_counts_and_reads_the_flags_back() -> None:
    run = _run(subset=True)
    text = dumps(run)
    data = json.loads(text)
    assert (data["summary"]["wrong_values"], data["summary"]["refused"]) == (1, 2)
    assert data["run"]["subset"] is True
    assert [c.get("refused", False) for c in data["cases"]] == [True, True, False, False, False]
    assert loads(text, path="report.json") == run
    older = dumps(dataclasses.replace(run, subset=False, cases=run.cases[2:]))   # nothing new to say: as before
    assert '"subset"' not in older and '"refused": true' not in older


def test_refusals_of_a_subset_backend_do_not_fail_the_run_and_wrong_values_do(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """onnxruntime rounds halves to even only; ROUND's other modes are refused
    (docs/bitwise.md).  Today's main exits 1 on them."""
    pytest.importorskip("onnxruntime")
    args = ["run", "--backend", "onnxruntime", "--op", "ELEMENT_WISE_ROUND", "--dtype", "FLOAT16", "--no-isolate"]
    result = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert "0 wrong values, 2 refused" in result.output.replace("\n", " ")
    faulty = ["run", "--backend", "faulty", "--backend-arg", "faults=rejects-float16", "--op", "ELEMENT_WISE_ROUND",
              "--dtype", "FLOAT16", "--no-isolate", "-o", str(tmp_path / "b")]
    result = CliRunner().invoke(main, faulty)
    assert result.exit_code == 1, result.output
    assert "claims DirectML's tables" in result.output
