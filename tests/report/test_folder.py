"""The report folder of a run (issue 20): reserved before the first case,
exclusive per run, written as one set, stale temp folders cleaned, a failed
write at the end costs no run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import dmlconform.report.folder as folder_module
from dmlconform.cli import main
from dmlconform.errors import InputError
from dmlconform.report import json_report
from dmlconform.report.folder import commit_reports, reserve, write_reports
from tests.report.fixtures import sample_run

SOFTSIGN = ["run", "--op", "ACTIVATION_SOFTSIGN", "--dtype", "FLOAT32", "--no-progress", "-j", "1"]


def _names(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def test_two_runs_in_the_same_second_get_folders_of_their_own(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    first, second = reserve(None, "20261127T000000Z-cpu-6_4-s0"), reserve(None, "20261127T000000Z-cpu-6_4-s0")
    assert (first.run_id, second.run_id) == ("20261127T000000Z-cpu-6_4-s0", "20261127T000000Z-cpu-6_4-s0-2")
    assert first.final != second.final and first.final.is_dir() and second.final.is_dir()
    run = sample_run()
    commit_reports(run, second)
    commit_reports(run, first)
    assert _names(tmp_path / "reports") == ["20261127T000000Z-cpu-6_4-s0", "20261127T000000Z-cpu-6_4-s0-2"]
    for reserved in (first, second):
        assert _names(reserved.final) == ["junit.xml", "report.html", "report.json"]


def test_a_default_folder_left_unused_is_removed(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    reserved = reserve(None, "run")
    reserved.abandon()
    assert _names(tmp_path / "reports") == []


def test_a_write_that_breaks_half_way_leaves_the_old_set_whole(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """As kill -9 between two files: the folder still holds the old run's
    three files, none of the new run's."""
    out = tmp_path / "out"
    old = write_reports(sample_run(), out)
    before = {kind: path.read_bytes() for kind, path in old.items()}
    newer = sample_run().__class__(**{**{f: getattr(sample_run(), f) for f in sample_run().__slots__},
                                      "run_id": "a-newer-run"})
    real = json_report.dumps

    def dies(run):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(json_report, "dumps", dies)
    reserved = reserve(out, newer.run_id)
    with pytest.raises(KeyboardInterrupt):
        commit_reports(newer, reserved)
    assert {kind: path.read_bytes() for kind, path in old.items()} == before
    monkeypatch.setattr(json_report, "dumps", real)
    commit_reports(newer, reserve(out, newer.run_id))
    assert all("a-newer-run" in path.read_text(encoding="utf-8") for path in old.values())


def test_stale_temp_folders_of_dead_runs_are_removed_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".out.{dead_pid}.0123abcd.tmp"
    swapped = tmp_path / f".out.{dead_pid}.89abcdef.old"
    live = tmp_path / f".out.{os.getppid()}.deadbeef.tmp"
    mine = tmp_path / "..hidden.1.x.tmp"   # not one of ours: no 8-hex part
    for path in (stale, swapped, live, mine):
        path.mkdir()
        (path / "report.json").write_text("{}", encoding="utf-8")
    reserved = reserve(tmp_path / "out", "run")
    assert not stale.exists() and not swapped.exists() and live.exists() and mine.exists()
    reserved.abandon()


def test_a_folder_with_other_files_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(main, [*SOFTSIGN, "-o", str(out)])
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: -o {out}: holds files that are not a dmlconform report (notes.txt); "
                                     "the folder's report set is replaced whole, so name a new or empty folder, or "
                                     "one an earlier run wrote")
    assert _names(out) == ["notes.txt"] and _names(tmp_path) == ["mine"]


def test_an_unwritable_output_is_exit_2_before_the_first_case(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    import dmlconform.suite as suite

    def never(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("cases were generated before the output was checked")

    monkeypatch.setattr(suite, "pairs", never)
    result = CliRunner().invoke(main, [*SOFTSIGN, "-o", str(blocker / "reports")])
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: cannot write the reports to {blocker / 'reports'}: {blocker} is a file, "
                                     "not a folder; name a folder with -o DIR")


def test_a_write_that_fails_at_the_end_keeps_the_run(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The folder was fine at the start and is not at the end: the summary is
    printed, the reports go to a temp folder, one error line, exit 2."""
    commit = folder_module.ReportFolder.commit

    def full(self, writers):  # type: ignore[no-untyped-def]
        if self.final == tmp_path / "out":
            raise OSError(28, "No space left on device")
        return commit(self, writers)

    monkeypatch.setattr(folder_module.ReportFolder, "commit", full)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    result = CliRunner().invoke(main, [*SOFTSIGN, "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "OK  13 cases" in result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"error: cannot write the reports to {tmp_path / 'out'}: No space left on device; "
                           f"they were written to {tmp_path}/dmlconform-")
    rescued = Path(last.rsplit(" to ", 1)[1].removesuffix(" instead"))
    assert len(json.loads((rescued / "report.json").read_text(encoding="utf-8"))["cases"]) == 13


def test_negative_worst_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, [*SOFTSIGN, "--worst", "-5"])
    assert result.exit_code == 2 and "--worst" in result.output and "Traceback" not in result.output


def test_reserve_refuses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="exists and is not a folder"):
        reserve(target, "run")
