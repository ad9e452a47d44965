"""The run command starts its workers before it loads anything heavy
(`commands/run_commands.py`'s docstring; issue #31, item 6): what a
process has imported once the command's module and its options are
loaded, which is when `Workers` starts the first worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dmlconform.catalog import load_spec
from dmlconform.errors import InputError
from dmlconform.families import reference_of
from tests.conftest import REPO

#: What the workers' start must overlap, not follow.
HEAVY = ("numpy", "dmlconform.families", "dmlconform.runner", "dmlconform.judge", "dmlconform.suite",
         "dmlconform.report.html", "dmlconform.report.terminal", "dmlconform.catalog", "yaml", "rich.console",
         "dmlconform.spec.load", "dmlconform.spec.model")


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


#: What the run's process of a one-case repro has no use for: its worker judges the case, and
#: ``--no-progress`` draws no bar (issue #31: a one-case repro at most 5x ``import numpy``).
WORKERS_ONLY = ("dmlconform.runner", "dmlconform.judge", "dmlconform.memory", "rich.progress")


def test_a_one_case_run_leaves_judging_to_its_worker(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = ("import json, sys\nfrom click.testing import CliRunner\nfrom dmlconform.cli import main\n"
            "done = CliRunner().invoke(main, ['run', '--case', 'ELEMENT_WISE_ADD/FLOAT32/4d/edges', '--no-progress', "
            f"'-o', {str(tmp_path / 'r')!r}])\n"
            "print(json.dumps([done.exit_code, sorted(sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    exit_code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert exit_code == 0
    assert (tmp_path / "r" / "report.json").is_file()
    assert not set(loaded) & set(WORKERS_ONLY), f"the run's process imported {sorted(set(loaded) & set(WORKERS_ONLY))}"


def test_a_worker_does_not_run_the_main_script_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The console script `dmlconform` is a file: ``spawn`` runs such a main script again in each worker (as
    # ``__mp_main__``), importing the CLI there (issue #31). This script notes each process that runs it.
    noted = tmp_path / "ran"
    script = tmp_path / "console.py"
    script.write_text("import os, sys\n"
                      f"with open({str(noted)!r}, 'a') as f:\n    f.write(f'{{os.getpid()}}\\n')\n"
                      "from dmlconform.cli import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n")
    done = subprocess.run([sys.executable, str(script), "run", "--case", "ELEMENT_WISE_ADD/FLOAT32/4d/edges",
                           "--no-progress", "-o", str(tmp_path / "r")], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r" / "report.json").is_file()
    assert len(noted.read_text().split()) == 1, "a worker ran the main script again"


def test_the_run_names_its_families_before_importing_their_generators() -> None:
    # The workers import the oracles of the families a run names while the run imports their generators; named
    # after those imports, a one-case repro's worker sat idle meanwhile (issue #31). The element-wise family's
    # claim parses the formula (`families.elementwise.binding`) without its generator.
    code = ("import json, sys\nfrom dmlconform import suite\nfrom dmlconform.commands.options import load_specs\n"
            "specs = load_specs('specs', ('ELEMENT_WISE_ADD', 'CONVOLUTION'))\n"
            "told = []\n"
            "generators = lambda: sorted(m for m in sys.modules if m.startswith('dmlconform.families.') and m.endswith('.cases'))\n"
            "suite.prepare(specs, lambda names: told.append([list(names), generators()]))\n"
            "print(json.dumps([told, generators()]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    told, after = json.loads(done.stdout)
    assert told == [[["element-wise formula", "window"], []]]
    assert {"dmlconform.families.elementwise.cases", "dmlconform.families.window.cases"} <= set(after)


def _family_modules(loaded: set[str]) -> set[str]:
    return {m for m in loaded if m.startswith("dmlconform.families.") and m.endswith(("overlay", "semantics"))}


def test_a_family_overlay_is_imported_when_a_spec_needs_it() -> None:
    # The families' records name their overlay kinds and semantics records without importing them: a worker, which
    # reads no overlay, imports none (issue #31); a spec's overlay brings its own family's alone.
    assert not _family_modules(_imported("dmlconform.families", "dmlconform.backends.cpu"))
    code = ("import json, sys\nfrom pathlib import Path\nfrom dmlconform.catalog import load_spec\n"
            "from dmlconform.families import family_of\n"
            "spec = load_spec(Path('specs/CONVOLUTION.yaml'))\n"
            "print(json.dumps([family_of(spec)[0].name, sorted(sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    family, loaded = json.loads(done.stdout)
    assert family == "window"
    assert _family_modules(set(loaded)) == {"dmlconform.families.window.overlay", "dmlconform.families.window.semantics"}


def test_a_spec_whose_family_has_no_cpu_reference_is_named() -> None:
    # `reference_of` serves the specs with reviewed semantics; the element-wise family computes from the formula.
    assert callable(reference_of(load_spec(REPO / "specs" / "CONVOLUTION.yaml")))
    with pytest.raises(InputError, match="ELEMENT_WISE_ADD: no CPU reference .*element-wise formula has none"):
        reference_of(load_spec(REPO / "specs" / "ELEMENT_WISE_ADD.yaml"))


@pytest.mark.parametrize(("argv", "status"), [(["run", "--op", "NO_SUCH_OPERATOR"], 2), (["--help"], 0),
                                               (["lint", "--no-such-option"], 2)])
def test_the_console_entry_exits_at_once_keeping_status_output_and_exit_handlers(
        tmp_path, argv: list[str], status: int) -> None:  # type: ignore[no-untyped-def]
    # `cli.run` (the console script, `python -m dmlconform`) skips the interpreter's teardown of its modules
    # (issue #31: about 90 ms of a one-case repro), not the exit status, the output or the `atexit` handlers.
    marker = tmp_path / "atexit"
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
            f"sys.argv = ['dmlconform', *{argv!r}]\n"
            "sys.stdout.write('buffered|')\n"  # a pipe's stdout is block-buffered: lost unless flushed
            "from dmlconform.cli import run\nrun()\n")
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=buffered)
    assert done.returncode == status, done.stderr
    assert marker.read_text() == "ran"
    assert done.stdout.startswith("buffered|")
    if status == 0:
        assert done.stdout.rstrip().endswith("run writes the partial report first")  # the help's last line
    else:
        assert "NO_SUCH_OPERATOR" in done.stderr or "--no-such-option" in done.stderr


def test_the_console_entry_keeps_a_text_exit_status() -> None:
    code = ("import sys\nimport dmlconform.cli as cli\n"
            "def fails():\n    sys.exit('no way')\n"
            "cli.main = fails\ncli.run()\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert (done.returncode, done.stderr.strip()) == (1, "no way")
