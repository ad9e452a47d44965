"""The results page: rows per operator x type x backend, every FAIL with
its minimal repro and analysis, rejected configurations apart, byte-stable."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dmlconform.cli import main
from dmlconform.errors import InputError
from dmlconform.report.json_report import dumps
from dmlconform.report.results_page import load_notes, read_input, render, summarise, summary_json
from dmlconform.results import CaseResult, ElementDiff, Outcome, RunResult


def _case(case_id: str, outcome: Outcome, *, elements: int = 4, message: str = "", ulp: int = 0) -> CaseResult:
    op, dtype = case_id.split("/")[:2]
    worst = (ElementDiff("OutputTensor", (0,), (("InputTensor", float("nan")),), float("nan"), 0.0, None, 0.0,
                         "FAIL"),) if outcome is Outcome.FAIL and not message else ()
    return CaseResult(case_id=case_id, operator=op, dtype=dtype, level="6_4", dims=1, layout="packed",
                      outcome=outcome, message=message, elements=elements, max_ulp=ulp, worst=worst,
                      repro=f"dmlconform run --case '{case_id}'")


def _run() -> RunResult:
    cases = (_case("ACTIVATION_SHRINK/FLOAT32/1d/edges", Outcome.FAIL, elements=67),
             _case("ACTIVATION_SHRINK/FLOAT32/4d/edges", Outcome.FAIL, elements=66),
             _case("ACTIVATION_SHRINK/FLOAT32/4d/x", Outcome.PASS),
             _case("ACTIVATION_SHRINK/FLOAT32/4d/q", Outcome.QUALITY_WARNING, ulp=3),
             _case("ACTIVATION_SHRINK/INT8/4d/y", Outcome.FAIL,
                   message="rejected a configuration that the 6_4 table supports: no kernel"))
    return RunResult(run_id="r", backend="onnxruntime", device="onnxruntime 1.31.1 CPUExecutionProvider",
                     backend_version="1.31.1", feature_level="6_4", flush_subnormals=False, seed=0,
                     command="dmlconform run", started="s", finished="f", cases=cases)


NOTES = load_notes([{"match": "ACTIVATION_SHRINK/FLOAT*", "class": "doc", "note": "NaN gives 0."}], path="n")


def test_rows_findings_and_gaps() -> None:
    page = render([summarise(_run())], NOTES)
    assert "| ACTIVATION_SHRINK | FLOAT32 | onnxruntime-cpu | 1 | 1 | 2 | 0 | 0 | 3 |" in page
    assert ("| onnxruntime-cpu | ACTIVATION_SHRINK | FLOAT32 | 2 | `dmlconform run --case "
            "'ACTIVATION_SHRINK/FLOAT32/4d/edges'` | InputTensor=nan -> nan vs 0.0 (NaN vs 0) | "
            "doc ambiguity or semantic difference | NaN gives 0. |") in page
    assert "| onnxruntime-cpu | ACTIVATION_SHRINK | INT8 | 1 | no kernel |" in page


def test_an_unexplained_fail_is_listed_not_dropped() -> None:
    page = render([summarise(_run())], ())
    assert "| 2 | `dmlconform run --case 'ACTIVATION_SHRINK/FLOAT32/4d/edges'`" in page
    assert "not analysed" in page


def test_summary_round_trip_gives_the_same_page() -> None:
    summary, rows = summarise(_run())
    again = read_input(summary_json(summary, rows), path="x.summary.json")
    assert render([again], NOTES) == render([(summary, rows)], NOTES)


def test_command_writes_the_page_and_summaries(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(dumps(_run()), encoding="utf-8")
    (tmp_path / "notes.yaml").write_text("- match: 'ACTIVATION_SHRINK/FLOAT*'\n  class: doc\n  note: NaN gives 0.\n")
    out = tmp_path / "README.md"
    result = CliRunner().invoke(main, ["results", str(report), "-o", str(out), "--summaries", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "NaN gives 0." in out.read_text(encoding="utf-8")
    assert (tmp_path / "onnxruntime-cpu.summary.json").is_file()
    first = out.read_bytes()
    CliRunner().invoke(main, ["results", str(report), "-o", str(out)])
    assert out.read_bytes() == first


def test_distances_are_written_for_people() -> None:
    """The worst element's distance in words, never -1 (also from a summary
    written before: -1 there reads as no distance), and max ULP in 2
    significant digits from 100000 on."""
    run = _run()
    big = dataclasses.replace(run.cases[3], max_ulp=2130706432)
    summary, rows = summarise(dataclasses.replace(run, cases=(*run.cases[:3], big, run.cases[4])))
    text = summary_json(summary, rows)
    assert '"ulp": null' in text
    old = text.replace('"ulp": null', '"ulp": -1')
    page = render([read_input(old, path="old.summary.json")], NOTES)
    assert "InputTensor=nan -> nan vs 0.0 (NaN vs 0)" in page and "-1 ULP" not in page
    assert "| ACTIVATION_SHRINK | FLOAT32 | onnxruntime-cpu | 1 | 1 | 2 | 0 | 0 | 2.1e9 |" in page


def test_the_committed_page_regenerates_from_the_committed_summaries(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/results/README.md is what `results` makes of the committed
    summaries and notes (older summaries: -1 where a distance is missing)."""
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    names = [f"docs/results/{label}.summary.json" for label in ("onnxruntime-cpu", "torch-cpu", "torch-cuda")]
    out = tmp_path / "README.md"
    result = CliRunner().invoke(main, ["results", *names, "--notes", "docs/results/notes.yaml", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8").replace(f"-o {out}`", "-o docs/results/README.md`", 1)
    assert page == Path("docs/results/README.md").read_text(encoding="utf-8")


def _run_with_readings() -> RunResult:
    """A backend that took ONNX's reading of Shrink's NaN (issue #22 item 6)."""
    run = _run()
    nan = dataclasses.replace(_case("ACTIVATION_SHRINK/FLOAT32/4d/ambiguity(nan)", Outcome.PASS),
                              readings=(("reading:nan=propagate", 6, 0), ("reading:nan:formula", 6, 6)))
    return dataclasses.replace(run, cases=run.cases + (nan,))


def test_the_page_says_which_reading_each_backend_took() -> None:
    page = render([summarise(_run_with_readings())], NOTES)
    assert "## Readings taken of the doc's ambiguities" in page
    assert "| onnxruntime-cpu | ACTIVATION_SHRINK | nan | took formula | 6 | propagate 0, formula 6 |" in page
    summary, rows = summarise(_run_with_readings())
    again = read_input(summary_json(summary, rows), path="x.summary.json")
    assert render([again], NOTES) == page


def test_a_summary_without_readings_still_loads_and_a_bad_one_is_named() -> None:
    summary, rows = summarise(_run_with_readings())
    data = json.loads(summary_json(summary, rows))
    old = {k: v for k, v in data.items() if k != "readings"}
    assert read_input(json.dumps(old), path="old.summary.json")[0].readings == ()
    data["readings"][0]["elements"] = "6"
    bad = json.dumps(data)
    with pytest.raises(InputError, match=r"^bad.summary.json: bad summary: readings\[0\]: expected an object"):
        read_input(bad, path="bad.summary.json")
