"""The hostile corpus (tests/hostile/, issue 20): every command that reads a
user's file, on every hostile file, run once per session by the driver under
a memory limit and a time limit per entry (`tests.hostile.driver`).

Each entry must end with an exit code of the documented set and never 4 (an
internal error is a bug of ours, never the input's fault), print no
traceback, name its input in every error line, change no file that existed
before when it failed, and take bounded time.  What each entry says is kept
in a golden file (tests/golden/hostile-corpus.txt, paths made neutral), so a
change of any message or exit code shows up in review.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.golden_plugin import Golden
from tests.hostile.corpus import REPO, entries

ENTRIES = {e.name: e for e in entries()}
NAMES = list(ENTRIES)
#: Exit codes a command may end with on hostile input (README "Exit codes"):
#: success, findings, input error, backend unavailable.
DOCUMENTED = {0, 1, 2, 3}
#: Seconds any entry may take: the honest ones take well under one.
BOUNDED = 10.0


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every entry's outcome (one driver process for the corpus), with the
    paths of this run made neutral."""
    folder = tmp_path_factory.mktemp("hostile")
    out, work = folder / "out.jsonl", folder / "work"
    proc = subprocess.run([sys.executable, "-m", "tests.hostile.driver", str(out), str(work)], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line.replace(str(work), "{work}").replace(str(REPO), "{repo}"))
        found[record["name"]] = record
    return found


@pytest.fixture(scope="module")
def golden_text(outcomes: dict[str, Any]) -> str:
    lines = []
    for name in NAMES:
        o = outcomes[name]
        said = [line for line in o["stderr"].splitlines() if line.strip()][:3]
        lines.append(f"{name}: exit {o['exit_code']}" + "".join(f"\n    {_neutral(s)}" for s in said))
    return "\n".join(lines) + "\n"


def _neutral(line: str) -> str:
    """A line without the parts that differ between runs (numbered work folders)."""
    import re

    return re.sub(r"\{work\}/\d{3}", "{work}", line)


def test_the_corpus_covers_every_file_kind() -> None:
    kinds = {name.split("/", 1)[0] for name in NAMES}
    assert {"lint", "gen", "run", "diff", "extract", "run-cases", "run--baseline", "run--tolerances", "results",
            "merge", "baseline-update"} <= kinds
    assert len(NAMES) == len(set(NAMES)) and len(NAMES) > 100


@pytest.mark.parametrize("name", NAMES)
def test_a_hostile_input_ends_cleanly(outcomes: dict[str, Any], name: str) -> None:
    o = outcomes[name]
    output = o["stdout"] + o["stderr"]
    assert o["exit_code"] in DOCUMENTED, f"{name}: exit {o['exit_code']}: {o['stderr'][-2000:]}"
    assert "Traceback" not in output and "internal error" not in output, output[-2000:]
    assert o["seconds"] < BOUNDED, f"{name} took {o['seconds']:.1f} s"
    if o["exit_code"] != 0:
        assert not o["changed"], f"{name} failed but changed {o['changed']}"
    errors = [line for line in o["stderr"].splitlines() if "error:" in line]
    assert errors or o["exit_code"] != 2, f"{name}: exit 2 without an error line"
    named = Path(ENTRIES[name].input).name or "{work}"
    for line in errors:
        assert "{work}" in line or named in line, f"{name}: error names no input: {line}"


def test_nothing_ran_a_command(outcomes: dict[str, Any]) -> None:
    """The hostile YAML tags and ids ask for ``touch PWNED``: nothing made it."""
    assert outcomes["<strays>"]["paths"] == []


def test_what_each_entry_says(golden_text: str, golden: Golden) -> None:
    golden.check("hostile-corpus.txt", golden_text)


def test_the_golden_file_is_not_stale() -> None:
    """Every entry listed in the golden file is still in the corpus."""
    text = (Path(__file__).parent / "golden" / "hostile-corpus.txt").read_text(encoding="utf-8")
    listed = [line.split(": exit ")[0] for line in text.splitlines() if ": exit " in line and not line.startswith(" ")]
    assert listed == NAMES
