"""``run`` and ``merge`` print the summary `--worst`, `--show-failures` and
`--verbose` ask for: the first failing cases in full, the rest counted with
where report.html is, the facts and the totals last."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from dmlconform.cli import main

FAULTY = ["run", "--backend", "faulty", "--backend-arg", "faults=one-ulp", "--op", "ELEMENT_WISE_IDENTITY",
          "--no-isolate", "--no-progress"]


def _run(tmp_path: Path, *options: str) -> list[str]:
    # a terminal wide enough for the element table's rows (as narrow ones fold them); pinned, so that the
    # test does not depend on the terminal pytest runs in (an xdist worker's is 80 columns)
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, [*FAULTY, "-o", str(tmp_path / "out"), *options])
    assert result.exit_code == 1, result.output
    return result.stdout.splitlines()


def test_show_failures_and_the_end_of_the_log(tmp_path: Path) -> None:
    lines = _run(tmp_path, "--show-failures", "1", "--worst", "2")
    assert sum(1 for line in lines if line.startswith("FAIL  ELEMENT_WISE_IDENTITY")) == 1
    assert sum(1 for line in lines if line.startswith("OutputTensor")) == 2
    assert f"and 32 more failing cases: see {tmp_path / 'out' / 'report.html'} (--show-failures N shows more)" in lines
    assert lines[-4].startswith("faulty 0.1.0 on ") and "planted faults: one-ulp, feature level 6_4, seed 0" in lines[-4]
    assert lines[-3].startswith("command: dmlconform ")   # sys.argv: pytest's here
    assert lines[-2] == "33 wrong values, 0 refused"
    assert lines[-1].startswith("FAILED  122 cases: 88 PASS, 33 FAIL, 1 NOT_SUPPORTED in ")
    assert lines[1].rstrip() == "Operators"
    assert lines[2].split() == ["!", "ELEMENT_WISE_IDENTITY", "FLOAT64,FLOAT32,FLOAT16", "+8", "88", "PASS", "33",
                                "FAIL", "1", "NS"]


def test_defaults_show_ten(tmp_path: Path) -> None:
    lines = _run(tmp_path)
    assert sum(1 for line in lines if line.startswith("FAIL  ")) == 10
    assert any(line.startswith("and 23 more failing cases: see ") for line in lines)


def test_verbose_shows_the_full_table_and_every_failure(tmp_path: Path) -> None:
    lines = _run(tmp_path, "--verbose")
    assert lines[1].rstrip() == "Outcomes" and sum(1 for line in lines if line.startswith("FAIL  ")) == 33
    assert not any(line.startswith("and ") for line in lines)
    shown = _run(tmp_path, "-v", "--show-failures", "3")
    assert sum(1 for line in shown if line.startswith("FAIL  ")) == 3 and shown[1].rstrip() == "Outcomes"


def test_a_negative_count_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [*FAULTY, "-o", str(tmp_path / "out"), "--show-failures", "-1"])
    assert result.exit_code == 2
    assert "Invalid value for '--show-failures': -1 is not in the range x>=0." in result.output
    assert not (tmp_path / "out").exists()
