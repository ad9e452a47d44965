"""The run command starts its workers before it loads anything heavy
(`commands/run_commands.py`'s docstring; issue #31, item 6): what a
process has imported once the command's module and its options are
loaded, which is when `Workers` starts the first worker."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

#: What the workers' start must overlap, not follow.
HEAVY = ("numpy", "dmlconform.families", "dmlconform.runner", "dmlconform.judge", "dmlconform.suite",
         "dmlconform.report.html", "dmlconform.report.terminal", "dmlconform.catalog")


def _imported(*modules: str) -> set[str]:
    """The modules a fresh interpreter holds after importing ``modules``."""
    code = f"import json, sys\nfor m in {list(modules)!r}: __import__(m)\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("module", ["dmlconform.commands.run_commands", "dmlconform.parallel"])
def test_the_run_command_starts_light(module: str) -> None:
    loaded = _imported("dmlconform.cli", module)
    assert not loaded & set(HEAVY), f"{module} brings {sorted(loaded & set(HEAVY))} before the workers start"


def test_the_heavy_part_is_what_the_run_then_imports() -> None:
    # The check above can fail: what the command imports once the workers have started, and what a worker
    # imports, bring every one of them.
    assert set(HEAVY) <= _imported("dmlconform.commands.running", "dmlconform.runner", "dmlconform.catalog")
