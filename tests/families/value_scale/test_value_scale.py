"""VALUE_SCALE_2D's family (issue #24): its claim, cases, the oracle's
values, bound and readings, the CPU reference at 0 FAIL, the planted
faults caught where they break, the reviewed overlay's checks and the
case folders' attribute checks (docs/value-scale.md)."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.cases.store import case_columns
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.errors import SpecError
from dmlconform.families import family_of
from dmlconform.families.elementwise import oracle as elementwise
from dmlconform.families.value_scale.cases import Operands, generate, operands, parse_bias
from dmlconform.families.value_scale.oracle import ValueScaleOracle, bound, separate
from dmlconform.families.value_scale.semantics import ValueScale
from dmlconform.formula.rounding import fraction_to_float
from dmlconform.report.readings import summarize
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

OP = "VALUE_SCALE_2D"
SPECS = str(REPO / "specs")


@cache
def _spec() -> m.Spec:
    return load_spec(REPO / "specs" / f"{OP}.yaml")


@cache
def _cases() -> tuple[Case, ...]:
    return tuple(generate(_spec(), m.FeatureLevel.FL_6_4, seed=0))


def _run(backend: CpuBackend) -> tuple[CaseResult, ...]:
    return run_cases([(_spec(), c) for c in _cases()], backend)


def test_the_family_claims_value_scale_and_the_formula_family_does_not() -> None:
    family, reason = family_of(_spec())
    assert family is not None and family.name == "value-scale" and reason == "ok"
    assert not elementwise.claims(_spec())[0]


def test_the_suite_has_what_the_brief_asks_for() -> None:
    ids = {c.id for c in _cases()}
    for dtype in ("FLOAT32", "FLOAT16"):
        for part in ("c1/1x1x1x1000/random", "c3/1x3x2x257/random", "c3/1x3x7x33/random", "c1/2x1x3x7/integer",
                     "c3/2x3x3x7/edges", "c3/2x3x3x7/overflow", "c3/2x3x3x7/bias-edges", "c3/2x3x3x7/bias-special",
                     "c3/2x3x3x7/random/padded", "c3/2x3x3x7/random/broadcast", "c7/1x7x2x5/random/unsupported",
                     "c33/1x33x2x5/random/unsupported"):
            assert f"{OP}/{dtype}/4d/{part}" in ids, part
    outside = {c.id: c.out_of_domain for c in _cases() if not c.expect_supported}
    assert outside[f"{OP}/FLOAT32/4d/c2/1x2x2x5/random/unsupported"] == ("ChannelCount",)
    assert outside[f"{OP}/FLOAT64/4d/c1/2x1x3x5/random/unsupported"] == ()
    assert outside[f"{OP}/FLOAT32/3d/c3/2x3x5/random/unsupported"] == ()
    assert {c.dimension_count for c in generate(_spec(), m.FeatureLevel.FL_1_0, seed=0) if c.expect_supported} == {4}


def test_bias_is_written_exactly_and_read_back() -> None:
    case = next(c for c in _cases() if c.id.endswith("c3/2x3x3x7/bias-edges"))
    assert case.attribute_map()["Bias"] == "3.4028235e+38,-0.0,1e-45"
    parsed = np.array(parse_bias("3.4028235e+38,-0.0,1e-45"), dtype=np.float32)
    assert parsed.tobytes() == np.array([np.finfo(np.float32).max, -0.0, 1e-45], dtype=np.float32).tobytes()
    with pytest.raises(ValueError, match="Bias='1,x' is not a list of numbers"):
        parse_bias("1,x")


def test_cpu_passes_every_case() -> None:
    results = _run(CpuBackend())
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert not bad, "\n".join(bad)
    assert sum(r.outcome is Outcome.PASS for r in results) == len(results) - 2  # FLOAT64 and 3-D refused


def test_cpu_takes_the_separate_reading() -> None:
    """The reference rounds the product before the sum; the report says so."""
    taken = {t.ambiguity: t.status for t in summarize(_run(CpuBackend()))}
    assert taken["rounding"] == "took separate"


def test_expected_values_are_exact_on_integer_data() -> None:
    case = next(c for c in _cases() if c.id == f"{OP}/FLOAT32/4d/c3/2x3x3x7/integer")
    batch = ValueScaleOracle.of(_spec()).bind([case], flush_subnormals=False)
    x = case.inputs[0].view().astype(np.float64)
    bias = np.array([float(b) for b in case.attribute_map()["Bias"].split(",")]).reshape(1, 3, 1, 1)
    assert np.array_equal(batch.expected, (3.0 * x + bias).astype(np.float32).reshape(-1))
    assert not batch.alternatives  # exact in every reading


def test_the_overflow_case_accepts_the_separate_reading_by_name() -> None:
    """Scale * Input beyond the largest value, the sum back inside: a fused
    multiply-add is finite, a rounded product infinite; both honest."""
    case = next(c for c in _cases() if c.id == f"{OP}/FLOAT32/4d/c3/2x3x3x7/overflow")
    batch = ValueScaleOracle.of(_spec()).bind([case], flush_subnormals=False)
    assert np.isfinite(batch.expected).all()
    names = {a.name: a for a in batch.alternatives}
    assert set(names) == {"reading:rounding=fused", "reading:rounding:separate"}
    assert np.isinf(names["reading:rounding:separate"].values).all()
    assert names["reading:rounding:separate"].index.size == batch.expected.size


@settings(max_examples=200, deadline=None)
@given(x=st.floats(-1e4, 1e4, width=32), scale=st.floats(-1e3, 1e3, width=32),
       b=st.floats(-1e4, 1e4, width=32), half=st.booleans())
def test_every_honest_rounding_is_within_the_bound(x: float, scale: float, b: float, half: bool) -> None:
    """Fused, separate in float32, separate in FLOAT16 (Scale and Bias
    rounded first) and float32 then FLOAT16: all within the strict bound."""
    dtype = m.DataType.FLOAT16 if half else m.DataType.FLOAT32
    nt = np.dtype(np.float16 if half else np.float32)
    ops = Operands(scale, np.array([b], dtype=np.float32), 1)
    xs = np.array([x]).astype(nt).reshape(1, 1, 1, 1)
    y = np.float64(scale) * xs.astype(np.float64) + np.float64(b)
    if np.abs(y).max() > float(np.finfo(nt).max):
        return
    limit = bound(xs.astype(np.float64), ops, y, dtype, flush=False)
    honest = [separate(xs, ops, np.dtype(np.float32), nt), separate(xs, ops, nt, nt)]
    for got in honest:
        if np.isfinite(got).all():
            assert np.abs(got.astype(np.float64) - y) <= limit + np.spacing(np.abs(y).astype(nt)).astype(np.float64)


@pytest.mark.parametrize(("fault", "spared"), [
    ("value-scale-bias-wrong-axis", "/c1/"),  # one channel: every index is channel 0, nothing to see
    ("value-scale-scale-ignored", "/identity"),  # Scale 1
])
def test_each_fault_is_caught_where_it_breaks(fault: str, spared: str) -> None:
    failed = [r for r in _run(FaultyBackend(fault)) if r.outcome is Outcome.FAIL]
    assert failed and not any(spared in r.case_id for r in failed)
    assert any(r.case_id.endswith("/integer") for r in failed)  # exact data: caught for certain


@pytest.mark.parametrize(("edit", "message"), [
    (("bias: Bias", "bias: Scale"), "Scale is FLOAT (scalar) in the spec; name a FLOAT array (the bias per channel) "
                                    "here"),
    (("channel_dimension: 1", "channel_dimension: 4"), "channel_dimension 4 is no dimension of a 4-D tensor the "
                                                       "tables allow; give one below 4"),
    (("  scale: Scale\n", ""), "semantics: 'scale' is a required property"),
])
def test_a_wrong_overlay_is_a_located_error(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    (tmp_path / "reviewed").mkdir()
    (tmp_path / f"{OP}.yaml").write_bytes((REPO / "specs" / f"{OP}.yaml").read_bytes())
    text = (REPO / "specs" / "reviewed" / f"{OP}.yaml").read_text().replace(*edit)
    (tmp_path / "reviewed" / f"{OP}.yaml").write_text(text)
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path / f"{OP}.yaml")
    assert info.value.message == message
    assert info.value.path.endswith(f"reviewed/{OP}.yaml") and info.value.line is not None


CASE = f"{OP}/FLOAT32/4d/c3/2x3x3x7/random/padded"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("value-scale") / "cases"
    result = CliRunner().invoke(main, ["gen", "--specs", SPECS, "--op", OP, "--dtype", "FLOAT32", "-o", str(out)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["cases"] = [c for c in manifest["cases"] if c["id"] == CASE]
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def _replay(folder: Path, tmp_path: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["run", "--specs", SPECS, "--op", OP, "--cases", str(folder), "--no-progress",
                                       "--no-isolate", "-o", str(tmp_path / "r")])
    return result.exit_code, result.output.splitlines()


def test_a_generated_folder_replays(folder: Path, tmp_path: Path) -> None:
    code, lines = _replay(folder, tmp_path)
    assert code == 0 and any("1 case: 1 PASS" in line for line in lines), lines


def test_an_exact_text_scale_replays(folder: Path, tmp_path: Path) -> None:
    """Scale as an exact text ("3/4", as the case format allows) is read as the float32 the struct holds."""
    edited = tmp_path / "cases"
    edited.mkdir()
    for f in folder.iterdir():
        (edited / f.name).write_bytes(f.read_bytes())
    manifest = json.loads((edited / "manifest.json").read_text())
    manifest["cases"][0]["attributes"][0] = ["Scale", "3/4"]
    (edited / "manifest.json").write_text(json.dumps(manifest))
    code, lines = _replay(edited, tmp_path)
    assert code == 0 and any("1 case: 1 PASS" in line for line in lines), lines


@pytest.mark.parametrize(("attributes", "message"), [
    ([["Scale", 0.75], ["ChannelCount", 3], ["Bias", "1,x,2"]],
     "Bias='1,x,2' is not a list of numbers; write them comma-separated, e.g. \"0.5,-1,2\""),
    ([["Scale", 0.75], ["ChannelCount", 2], ["Bias", "1,2,3"]], "ChannelCount=2 but Bias lists 3 values: give 3"),
    ([["Scale", 0.75], ["ChannelCount", 1], ["Bias", "1"]],
     "ChannelCount=1 is not the size of dimension 1 of sizes [2, 3, 3, 7]: give one Bias value per channel"),
    ([["Scale", "big"], ["ChannelCount", 3], ["Bias", "1,2,3"]],
     "attribute Scale=\"big\" is not a number: give a finite FLOAT32 value as a number (0.5) or an exact text "
     "(\"1/6\")"),
    ([["Scale", 0.75], ["ChannelCount", 3]],
     "attribute Bias is missing: give one value per channel as text, e.g. [\"Bias\", \"0.5,-1,2\"]"),
    ([["ChannelCount", 3], ["Bias", "1,2,3"]], "attribute Scale is missing: VALUE_SCALE_2D needs it; give it"),
    ([["Scale", 0.75], ["Bias", "1,2,3"]], "attribute ChannelCount is missing: VALUE_SCALE_2D needs it; give it"),
    ([["Scale", 0.75], ["ChannelCount", 3], ["Bias", True]],
     "Bias=True is not a list of numbers; write them comma-separated, e.g. \"0.5,-1,2\""),
    ([["Scale", 1e39], ["ChannelCount", 3], ["Bias", "1,2,3"]], "attribute Scale=1e+39 is beyond FLOAT32's largest value 3.4028235e+38: give a finite FLOAT32 value as a "
     "number (0.5) or an exact text (\"1/6\")"),
    ([["Scale", 0.75], ["ChannelCount", 3], ["Bias", "1," * 70000 + "1"]],
     "ChannelCount=3 but Bias lists 70001 values: give 70001"),
])
def test_a_bad_attribute_is_refused(folder: Path, tmp_path: Path, attributes: list[list[object]],
                                    message: str) -> None:
    bad = tmp_path / "cases"
    bad.mkdir()
    for f in folder.iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["cases"][0]["attributes"] = attributes
    (bad / "manifest.json").write_text(json.dumps(manifest))
    code, lines = _replay(bad, tmp_path)
    assert code == 2
    assert lines == [f"{bad}/manifest.json:1:{case_columns(bad)[0]}: error: case 0 ({CASE}): {message}"]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("text", "scale"), [
    ("1/6", float(np.float32(1 / 6))),
    ("16777217/16777216", 1.0),  # 1 + 2^-24, a float32 tie: to even
    (str(Fraction(16777217, 16777216) + Fraction(1, 2**60)), 1 + 2.0**-23),  # just above it: float64 would tie
])
def test_an_exact_text_scale_is_rounded_once_as_the_oracle_rounds_it(text: str, scale: float) -> None:
    case = next(c for c in generate(_spec(), m.FeatureLevel.FL_6_4, seed=0) if "random" in c.id)
    given = replace(case, attributes=tuple((k, text if k == "Scale" else v) for k, v in case.attributes))
    sem = _spec().semantics
    assert isinstance(sem, ValueScale)
    assert operands(sem, given).scale == scale == fraction_to_float(Fraction(text), np.float32)
