"""Repro lines: one function (`Invocation.repro`) from the run's real
options, every argument shell-quoted (issue 20: a hostile case id ran code
when its repro line was pasted; a repro of a --cases run re-ran another case)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from dmlconform.cli import main
from dmlconform.invocation import Invocation
from tests.conftest import REPO

HOSTILE = ("x'$(touch PWNED)'", "`touch PWNED`", "a; touch PWNED", "$(touch PWNED)", "x\"$(touch PWNED)\"",
           "x'\n touch PWNED\n'", "-o PWNED", "ACTIVATION_SOFTSIGN/FLOAT32/8d/edges' --seed '9")


def test_every_option_that_decides_a_verdict_is_in_the_line() -> None:
    inv = Invocation(backend="faulty", backend_args=(("faults", "one-ulp,wrong-in-8d"), ("weird", "a b'c")),
                     level="5_1", seed=7, specs="my specs", cases=None, tolerances="tol.yaml", large=True,
                     timeout=2.5)
    assert inv.repro("OP/FLOAT32/4d/edges") == (
        "dmlconform run --backend faulty --backend-arg faults=one-ulp,wrong-in-8d --backend-arg 'weird=a b'\"'\"'c' "
        "--specs 'my specs' --tolerances tol.yaml --large --timeout 2.5 --feature-level 5_1 "
        "--case OP/FLOAT32/4d/edges --seed 7")


def test_replayed_cases_name_their_folder_and_no_seed() -> None:
    inv = Invocation(backend="cpu", level="6_4", cases="cases/onnx")
    assert inv.repro("id") == "dmlconform run --backend cpu --cases cases/onnx --feature-level 6_4 --case id"


_TEXT = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")


@given(case_id=st.text(_TEXT, min_size=1, max_size=40),
       key=st.text(_TEXT, min_size=1, max_size=8).filter(lambda k: "=" not in k),
       value=st.text(_TEXT, max_size=12))
def test_a_shell_splits_the_line_back_into_the_same_arguments(case_id: str, key: str, value: str) -> None:
    """Whatever the id and options hold, a POSIX shell's word splitting (shlex
    in POSIX mode) gives back exactly the arguments: nothing is expanded,
    substituted or split."""
    line = Invocation(backend="cpu", backend_args=((key, value),), level="6_4", seed=0).repro(case_id)
    assert shlex.split(line) == ["dmlconform", "run", "--backend", "cpu", "--backend-arg", f"{key}={value}",
                                 "--feature-level", "6_4", "--case", case_id, "--seed", "0"]


def _shim(folder: Path) -> dict[str, str]:
    """A `dmlconform` on PATH that runs this interpreter's dmlconform, so the
    pasted line runs exactly as a user's shell would run it."""
    folder.mkdir()
    shim = folder / "dmlconform"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m dmlconform \"$@\"\n", encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.slow  # about 12 s on 2 idle cores: run by .ci/run
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to paste the repro lines into")
def test_pasted_repro_lines_of_hostile_ids_run_nothing_and_give_the_same_verdict(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    made = CliRunner().invoke(main, ["gen", "--op", "ACTIVATION_SOFTSIGN", "--dtype", "FLOAT32", "-o", str(cases)])
    assert made.exit_code == 0, made.output
    manifest = json.loads((cases / "manifest.json").read_text(encoding="utf-8"))
    eight = [c for c in manifest["cases"] if c["id"] == "ACTIVATION_SOFTSIGN/FLOAT32/8d/edges"]
    four = [c for c in manifest["cases"] if c["id"] == "ACTIVATION_SOFTSIGN/FLOAT32/4d/edges"]
    manifest["cases"] = [{**(eight if i % 2 == 0 else four)[0], "id": hostile} for i, hostile in enumerate(HOSTILE)]
    (cases / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    env = _shim(tmp_path / "bin")
    first = subprocess.run(["dmlconform", "run", "--backend", "faulty", "--backend-arg", "faults=wrong-in-8d",
                            "--specs", str(REPO / "specs"), "--cases", str(cases), "--no-progress", "-o", str(tmp_path / "first")],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 1, first.stderr
    results = json.loads((tmp_path / "first" / "report.json").read_text(encoding="utf-8"))["cases"]
    assert sorted(r["case_id"] for r in results) == sorted(HOSTILE)
    for n, result in enumerate(results):
        again = tmp_path / f"again{n}"
        pasted = subprocess.run(["bash", "-c", f"{result['repro']} --no-progress -o {shlex.quote(str(again))}"],
                                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert not list(tmp_path.rglob("PWNED")), f"{result['repro']!r} ran a command"
        redone = json.loads((again / "report.json").read_text(encoding="utf-8"))["cases"]
        assert [(r["case_id"], r["outcome"]) for r in redone] == [(result["case_id"], result["outcome"])]
        assert pasted.returncode == (1 if result["outcome"] == "FAIL" else 0), pasted.stderr
    assert {r["outcome"] for r in results} == {"FAIL", "PASS"}
