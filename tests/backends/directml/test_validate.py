"""validate: planning descs from the tables, judging answers, the page, the command's errors."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from dmlconform.backends.directml import abi
from dmlconform.backends.directml import validate as v
from dmlconform.cli import main
from dmlconform.spec.model import FeatureLevel
from tests.backends.directml.conftest import spec

FL62 = FeatureLevel.FL_6_2


def test_plan_covers_every_dtype_and_dim_and_just_outside() -> None:
    configs = v.plan(spec("ACTIVATION_SOFTSIGN"), FL62)
    inside = [c for c in configs if c.expect]
    labels = {c.label for c in inside}
    assert "InputTensor FLOAT16 4d, OutputTensor FLOAT16 4d" in labels
    assert "InputTensor FLOAT32 1d, OutputTensor FLOAT32 1d" in labels
    assert all(c.level <= FL62 for c in configs)
    outside = {(c.what, c.label) for c in configs if not c.expect}
    assert ("data type outside", "InputTensor FLOAT64 4d, OutputTensor FLOAT64 4d") in outside
    assert ("data type outside", "InputTensor INT64 4d, OutputTensor INT64 4d") in outside
    assert ("mismatched DataType", "InputTensor FLOAT32 4d, OutputTensor FLOAT16 4d") in outside
    assert ("mismatched Sizes", "InputTensor FLOAT32 4d, OutputTensor FLOAT32 4d 1x1x1x3") in outside
    assert len({c.label for c in configs}) == len(configs)


def test_plan_of_an_operator_newer_than_the_library() -> None:
    configs = v.plan(spec("ACTIVATION_SOFTSIGN"), FeatureLevel.FL_1_0)
    assert [c.what for c in configs if not c.expect][-1] != ""
    newer = dataclasses.replace(spec("ACTIVATION_SWISH"))
    assert [c.what for c in v.plan(newer, FeatureLevel.FL_6_1)] == ["operator newer than the library"]


def test_summarize_both_directions_and_unverified() -> None:
    s = spec("ACTIVATION_SOFTSIGN")
    configs = v.plan(s, FL62)
    answers = [0 if c.expect else abi.E_INVALIDARG for c in configs]
    first_in = next(i for i, c in enumerate(configs) if c.expect and "FLOAT16" in c.label)
    first_out = next(i for i, c in enumerate(configs) if not c.expect)
    answers[first_in], answers[first_out] = abi.E_INVALIDARG, 0
    ops, found = v.summarize([s], {s.operator: configs}, {s.operator: answers}, FL62)
    assert ops[0].status == "checked" and ops[0].disagreements == 2
    assert {(d.doc, d.library.split(":")[0]) for d in found} == {("supported", "rejected"), ("unsupported", "accepted")}
    ops, found = v.summarize([s], {s.operator: configs}, {s.operator: [abi.E_INVALIDARG] * len(configs)}, FL62)
    assert (ops[0].status, found) == ("unverified", [])


def test_validate_unavailable_exits_3_or_0(tmp_path) -> None:  # type: ignore[no-untyped-def]
    missing = str(tmp_path / "nope" / "libdirectml.so")
    result = CliRunner().invoke(main, ["validate", "--op", "ACTIVATION_SOFTSIGN", "--backend-arg",
                                       f"dml_path={missing}", "-o", str(tmp_path)])
    assert result.exit_code == 3
    assert f"backend directml cannot validate here: DML_PATH {missing} does not exist" in result.output
    result = CliRunner().invoke(main, ["validate", "--op", "ACTIVATION_SOFTSIGN", "--backend-arg",
                                       f"dml_path={missing}", "--skip-unavailable"])
    assert result.exit_code == 0


def test_validate_usage_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    result = runner.invoke(main, ["validate", "--backend", "cpu"])
    assert (result.exit_code, result.output.strip()) == (
        2, "error: --backend cpu: validate needs the directml backend's library")
    result = runner.invoke(main, ["validate", "--capabilities", "fp8"])
    assert result.exit_code == 2 and "--capabilities: unknown capability fp8" in result.output
    result = runner.invoke(main, ["validate", "--backend-arg", "x=1"])
    assert result.exit_code == 2 and "validate knows dml_path=PATH" in result.output
    bad = tmp_path / "r.json"
    bad.write_text("{}")
    result = runner.invoke(main, ["validate", "--from-report", str(bad), "--markdown", str(tmp_path / "m.md")])
    assert result.exit_code == 2 and "not a validate report (missing command" in result.output
    assert "validate: 0 the library and the docs agree" in runner.invoke(main, ["validate", "--help"]).output


def test_run_with_an_unavailable_directml_backend(tmp_path) -> None:  # type: ignore[no-untyped-def]
    missing = str(tmp_path / "libdirectml.so")
    args = ["run", "--backend", "directml", "--backend-arg", f"dml_path={missing}", "--op", "ACTIVATION_SOFTSIGN"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3
    assert f"backend directml is unavailable: DML_PATH {missing} does not exist" in result.output
    assert CliRunner().invoke(main, [*args, "--skip-unavailable"]).exit_code == 0
