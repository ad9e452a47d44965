"""The gating options of ``run`` and the ``baseline update`` and ``merge``
commands, end to end through the CLI: exit codes for each case, what the
reports record, and the errors (exit 2) for bad files and shards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from dmlconform.cli import main
from dmlconform.errors import ExitCode

SOFTSIGN = ("--op", "ACTIVATION_SOFTSIGN", "--dtype", "FLOAT32", "--no-progress")
BOTH_FAULTS = ("--backend", "faulty", "--backend-arg", "faults=wrong-in-8d,in-place-corrupting")
ONE_FAULT = ("--backend", "faulty", "--backend-arg", "faults=wrong-in-8d")
IN_PLACE = "ACTIVATION_SOFTSIGN/FLOAT32/4d/edges/in_place"
EIGHT_D = "ACTIVATION_SOFTSIGN/FLOAT32/8d/edges"


def cli(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def report(folder: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


def outcomes(folder: Path) -> dict[str, str]:
    return {c["case_id"]: c["outcome"] for c in report(folder)["cases"] if c["outcome"] not in ("PASS", "NOT_SUPPORTED")}


def test_baseline_workflow_exit_codes(tmp_path: Path) -> None:
    """Failing backend (1); baseline written; known failures (0); a fixed case
    is XPASS (0, or 1 with --strict); a new failure (1); update drops the fixed entry."""
    first = cli("run", *SOFTSIGN, *BOTH_FAULTS, "-o", tmp_path / "first")
    assert first.exit_code == ExitCode.FINDINGS
    assert outcomes(tmp_path / "first") == {EIGHT_D: "FAIL", IN_PLACE: "FAIL"}

    baseline = tmp_path / "baseline.yaml"
    made = cli("baseline", "update", tmp_path / "first" / "report.json", "-o", baseline)
    assert made.exit_code == 0 and made.stderr == f"wrote {baseline}: 2 entries (0 kept, 2 new, 0 dropped)\n"

    known = cli("run", *SOFTSIGN, *BOTH_FAULTS, "--baseline", baseline, "-o", tmp_path / "known")
    assert known.exit_code == 0, known.output
    assert outcomes(tmp_path / "known") == {EIGHT_D: "XFAIL", IN_PLACE: "XFAIL"}
    recorded = report(tmp_path / "known")["run"]["baseline"]
    assert recorded["path"] == str(baseline) and [e["key"] for e in recorded["entries"]] == [IN_PLACE, EIGHT_D]

    fixed = cli("run", *SOFTSIGN, *ONE_FAULT, "--baseline", baseline, "-o", tmp_path / "fixed")
    assert fixed.exit_code == 0 and f"XPASS  ACTIVATION_SOFTSIGN FLOAT32 @ 6_4  {IN_PLACE}: PASS; expected to fail" \
        in fixed.stdout
    assert outcomes(tmp_path / "fixed") == {EIGHT_D: "XFAIL", IN_PLACE: "XPASS"}
    strict = cli("run", *SOFTSIGN, *ONE_FAULT, "--baseline", baseline, "--strict", "-o", tmp_path / "strict")
    assert strict.exit_code == ExitCode.FINDINGS and report(tmp_path / "strict")["summary"]["failed"] is True

    new = cli("run", *SOFTSIGN, "--backend", "faulty", "--backend-arg", "faults=wrong-in-8d,nan-to-zero",
              "--baseline", baseline, "-o", tmp_path / "new")
    assert new.exit_code == ExitCode.FINDINGS
    assert "FAIL" in outcomes(tmp_path / "new").values() and outcomes(tmp_path / "new")[EIGHT_D] == "XFAIL"

    again = cli("baseline", "update", tmp_path / "fixed", "--baseline", baseline)   # the folder, in place
    assert again.exit_code == 0
    assert again.stderr == (f"dropped {IN_PLACE}: its 1 case no longer fails\n"
                            f"wrote {baseline}: 1 entry (1 kept, 0 new, 1 dropped)\n")
    assert cli("run", *SOFTSIGN, *ONE_FAULT, "--baseline", baseline, "--strict", "-o", tmp_path / "s2").exit_code == 0


def test_stale_entries_are_reported(tmp_path: Path) -> None:
    baseline = tmp_path / "b.yaml"
    baseline.write_text("patterns:\n  'NO_SUCH_OP/*':\n    reason: removed operator\n", encoding="utf-8")
    result = cli("run", *SOFTSIGN, "--baseline", baseline, "-o", tmp_path / "r")
    assert result.exit_code == 0
    assert "stale  baseline entry 'NO_SUCH_OP/*' matches no case of this run (removed operator)" in result.stdout
    assert report(tmp_path / "r")["run"]["baseline"]["stale"] == ["NO_SUCH_OP/*"]
    assert '<property name="stale_baseline_entry" value="NO_SUCH_OP/*: removed operator"' in \
        (tmp_path / "r" / "junit.xml").read_text(encoding="utf-8")
    assert "Stale baseline entries (1)" in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")


def test_tolerance_overrides_loosen_and_show_in_every_report(tmp_path: Path) -> None:
    args = ("run", "--op", "ELEMENT_WISE_IDENTITY", "--dtype", "FLOAT32", "--no-progress",
            "--backend", "faulty", "--backend-arg", "faults=one-ulp")
    assert cli(*args, "-o", tmp_path / "strict").exit_code == ExitCode.FINDINGS
    tolerances = tmp_path / "tol.yaml"
    tolerances.write_text("overrides:\n- {operator: ELEMENT_WISE_IDENTITY, dtype: FLOAT32, ulp: 1, "
                          "reason: rounds up}\n", encoding="utf-8")
    out = tmp_path / "loose"
    result = cli(*args, "--tolerances", tolerances, "-o", out)
    assert result.exit_code == 0, result.output
    assert f"tolerances: {tolerances} (1 override)" in result.stdout
    assert "  override ELEMENT_WISE_IDENTITY FLOAT32 ulp=1: rounds up" in result.stdout
    assert report(out)["run"]["overrides"] == [{"operator": "ELEMENT_WISE_IDENTITY", "dtype": "FLOAT32", "ulp": 1,
                                                "bound_factor": None, "reason": "rounds up"}]
    assert '<property name="tolerance_override" value="ELEMENT_WISE_IDENTITY FLOAT32 ulp=1: rounds up"' in \
        (out / "junit.xml").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Tolerance overrides</h2>" in html and "<td>rounds up</td>" in html


def test_shard_and_merge(tmp_path: Path) -> None:
    args = ("run", "--op", "ELEMENT_WISE_SIGN", "--op", "ACTIVATION_SOFTSIGN", "--dtype", "FLOAT32",
            "--dtype", "FLOAT16", "--no-progress", *ONE_FAULT)
    assert cli(*args, "-o", tmp_path / "whole").exit_code == ExitCode.FINDINGS
    for k in (1, 2, 3):
        cli(*args, "--shard", f"{k}/3", "-o", tmp_path / f"s{k}")
        assert report(tmp_path / f"s{k}")["run"]["shard"] == f"{k}/3"
        assert report(tmp_path / f"s{k}")["run"]["run_id"].endswith(f"-shard{k}of3")
    merged = cli("merge", *(tmp_path / f"s{k}" / "report.json" for k in (3, 1, 2)), "-o", tmp_path / "all")
    assert merged.exit_code == ExitCode.FINDINGS, merged.output
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["junit.xml", "report.html", "report.json"]

    def cases(folder: str) -> list[dict]:  # type: ignore[type-arg]
        return sorted(({k: v for k, v in c.items() if k != "seconds"} for c in report(tmp_path / folder)["cases"]),
                      key=lambda c: c["case_id"])

    assert cases("all") == cases("whole")
    assert len(report(tmp_path / "all")["run"]["merged_from"]) == 3

    missing = cli("merge", tmp_path / "s1" / "report.json", tmp_path / "s3" / "report.json", "-o", tmp_path / "m")
    assert missing.exit_code == ExitCode.USAGE
    assert missing.stderr == "error: missing shard 2/3 (got 2 of 3 reports); give every shard's report.json\n"
    whole = cli("merge", tmp_path / "whole" / "report.json", "-o", tmp_path / "m")
    assert whole.exit_code == ExitCode.USAGE and "not a shard report" in whole.stderr


@pytest.mark.parametrize(("extra", "stderr"), [
    (("--shard", "4/3"), "error: --shard 4/3: K must be between 1 and N\n"),
    (("--shard", "half"), "error: --shard 'half' is not K/N; write e.g. 3/8 for the third of eight shards\n"),
    (("--baseline", "no/such.yaml"), "no/such.yaml: error: cannot read: No such file or directory\n"),
    (("--tolerances", "no/such.yaml"), "no/such.yaml: error: cannot read: No such file or directory\n"),
])
def test_usage_errors_exit_2(tmp_path: Path, extra: tuple[str, ...], stderr: str) -> None:
    result = cli("run", *SOFTSIGN, *extra, "-o", tmp_path)
    assert result.exit_code == ExitCode.USAGE and result.stderr == stderr


def test_bad_baseline_file_exits_2_naming_the_place(tmp_path: Path) -> None:
    bad = tmp_path / "b.yaml"
    bad.write_text("cases:\n  X/Y:\n    issue: 12\n", encoding="utf-8")
    result = cli("run", *SOFTSIGN, "--baseline", bad, "-o", tmp_path / "r")
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr == (f"{bad}:3:5: error: cases['X/Y']: missing 'reason'\n"
                             f"{bad}:3:12: error: cases['X/Y'].issue: expected a string, got an integer 12\n")
    assert not (tmp_path / "r").exists()   # checked before anything ran


def test_bad_report_for_update_and_merge(tmp_path: Path) -> None:
    bad = tmp_path / "report.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    for args in (("baseline", "update", bad), ("merge", bad, "-o", tmp_path / "m")):
        result = cli(*args)
        assert result.exit_code == ExitCode.USAGE
        assert result.stderr == (f"error: {bad}: bad report: format: expected 'dmlconform-report', got "
                                 "'something else': not a dmlconform report\n")
    assert cli("baseline", "update", tmp_path / "nothing.json").exit_code == ExitCode.USAGE


def test_help_documents_the_exit_codes() -> None:
    for args in (["run"], ["merge"], ["baseline", "update"]):
        text = cli(*args, "--help").output
        assert "Exit codes:" in text and "--strict, which fails QUALITY_WARNING and XPASS" in text
        assert "3    backend unavailable (run --skip-unavailable exits 0 instead)" in text
