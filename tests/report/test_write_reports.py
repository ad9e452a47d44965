"""write_reports: the three files, written atomically, read back."""

from __future__ import annotations

from pathlib import Path

from dmlconform.report import html, json_report, junit
from dmlconform.report.folder import write_reports
from tests.report.fixtures import sample_run


def test_writes_three_files(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "folder"
    run = sample_run()
    written = write_reports(run, folder)
    assert written == {"html": folder / "report.html", "json": folder / "report.json", "junit": folder / "junit.xml"}
    assert written["json"].read_text(encoding="utf-8") == json_report.dumps(run)
    assert written["junit"].read_text(encoding="utf-8") == junit.dumps(run)
    assert written["html"].read_text(encoding="utf-8") == html.dumps(run)
    assert sorted(p.name for p in folder.iterdir()) == ["junit.xml", "report.html", "report.json"]   # no temp files
    assert repr(json_report.loads(written["json"].read_text(encoding="utf-8"), path=written["json"])) == repr(run)


def test_overwrites(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("old", encoding="utf-8")
    write_reports(sample_run(), tmp_path)
    assert (tmp_path / "report.json").read_text(encoding="utf-8").startswith("{")
