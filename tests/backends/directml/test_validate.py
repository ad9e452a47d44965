"""validate: planning descs from the tables, judging answers, the page, the command's errors."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from dmlconform.backends.directml import abi
from dmlconform.backends.directml import tables as v
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


def test_rules_name_real_operators_tensors_and_fields(all_specs) -> None:  # type: ignore[no-untyped-def]
    specs = {s.operator: s for s in all_specs}
    for op, rule in v.RULES.items():
        s = specs[op]
        names = {f.name for f in s.fields}
        assert set(rule.include) | set(rule.dtypes) <= names, op
        for n in (3, 4, 5):
            assert set(rule.sizes(n)) <= names, op


def _in_table(op: str) -> list[v.Config]:
    return [c for c in v.plan(spec(op), FL62) if c.expect]


def test_spatial_rule_gives_one_window_value_per_spatial_dimension() -> None:
    for cfg in _in_table("MAX_POOLING2"):
        n = int(cfg.label.split()[2][0])
        attrs = cfg.job.attributes
        assert attrs["Strides"] == attrs["WindowSize"] == attrs["Dilations"] == [1] * (n - 2)
        assert attrs["StartPadding"] == attrs["EndPadding"] == [0] * (n - 2)
    conv = _in_table("CONVOLUTION")[0].job.attributes
    assert (conv["GroupCount"], conv["OutputPadding"]) == (1, [0, 0])


def test_rule_sizes_attributes_and_included_tensors() -> None:
    d2s = _in_table("DEPTH_TO_SPACE")[0]
    assert d2s.job.tensors["InputTensor"][1] == [1, 4, 1, 1] and d2s.job.tensors["OutputTensor"][1] == [1, 1, 2, 2]
    assert d2s.job.attributes["BlockSize"] == 2
    lstm = _in_table("LSTM")[0].job
    assert lstm.tensors["WeightTensor"][1] == [1, 1, 4, 1] and "OutputSequenceTensor" in lstm.tensors
    assert [a["op"] for a in lstm.attributes["ActivationDescs"]] == ["ACTIVATION_SIGMOID", "ACTIVATION_TANH",
                                                                      "ACTIVATION_TANH"]
    roi = {c.label for c in _in_table("ROI_ALIGN")}  # a 2-d ROI tensor: the rule's sizes right-aligned
    assert any("ROITensor FLOAT32 2d 1x4" in label for label in roi)
    grown = [c for c in v.plan(spec("SCATTER_ND"), FL62) if c.what == "mismatched Sizes"]
    assert all("1x1x1x4" in c.label for c in grown)


def test_a_pinned_data_type_is_tried_once_as_the_row_gives_it() -> None:
    labels = [c.label for c in _in_table("ADAM_OPTIMIZER")]
    assert sum("TrainingStepTensor UINT32" in label for label in labels) == len(labels) - 1
    assert sum("TrainingStepTensor FLOAT32" in label for label in labels) == 1


def test_plan_tries_optional_tensors_present_and_real_sizes() -> None:
    """Issue #25 part 5: beyond size-1 leading dimensions and the required tensors only
    (every other configuration leaves the optional tensors out)."""
    add = {(c.what, c.label) for c in v.plan(spec("ELEMENT_WISE_ADD"), FL62) if c.expect}
    assert ("real sizes", "ATensor FLOAT32 4d 5x4x3x2, BTensor FLOAT32 4d 5x4x3x2, OutputTensor FLOAT32 4d 5x4x3x2") \
        in add
    gemm = {(c.what, c.label) for c in v.plan(spec("GEMM"), FL62) if c.expect}
    assert ("optional CTensor present",
            "ATensor FLOAT32 4d, BTensor FLOAT32 4d, CTensor FLOAT32 4d, OutputTensor FLOAT32 4d") in gemm
    assert not any(c.what.startswith("optional") for c in v.plan(spec("GRU"), FL62))  # a rule shapes its tensors
    softmax = [c.label for c in v.plan(spec("ACTIVATION_SOFTMAX"), FL62) if c.what == "real sizes"]
    assert softmax == ["InputTensor FLOAT32 4d 1x1x3x2, OutputTensor FLOAT32 4d 1x1x3x2"]  # effective rank <= 2
