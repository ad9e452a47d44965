"""The package as installed (issue #23): the specs ship inside it, every
command finds them from any folder, and pyproject.toml lists what a wheel
holds.  The full check (sdist, a wheel built from it, a fresh venv, commands
run outside the clone) is .ci/check-dist; the slow test here builds a wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import zipfile
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dmlconform import packaged
from dmlconform.cli import main
from dmlconform.errors import InputError
from tests.conftest import REPO

SPECS = REPO / "specs"


def pyproject() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# --------------------------------------------------------------------------- what a wheel holds


def test_every_folder_of_modules_is_a_listed_package() -> None:
    """packages are listed, not found (the specs are mapped in from specs/):
    a new subpackage must be listed, and every one needs an __init__.py (the
    wheel once left dmlconform/spec/ out for want of one)."""
    folders = {p.parent for p in (REPO / "dmlconform").rglob("*.py") if "__pycache__" not in p.parts}
    expected = {".".join(f.relative_to(REPO).parts) for f in folders} | {"dmlconform.specs"}
    assert set(pyproject()["tool"]["setuptools"]["packages"]) == expected
    assert [f for f in folders if not (f / "__init__.py").is_file()] == []


def test_the_shipped_specs_are_every_file_of_specs() -> None:
    """dmlconform/specs/ in the package is the repository's specs/ (its one
    copy in git), and its package-data pattern takes every file there."""
    setuptools = pyproject()["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"dmlconform.specs": "specs"}
    patterns = setuptools["package-data"]["dmlconform.specs"]
    files = sorted(f.relative_to(SPECS).as_posix() for f in SPECS.rglob("*") if f.is_file())
    assert len(files) > 100 and any(f.startswith("reviewed/") for f in files)
    assert [f for f in files if not any(fnmatch(f, p) and f.count("/") == p.count("/") for p in patterns)] == []


@pytest.mark.slow
def test_a_built_wheel_holds_the_specs_byte_for_byte(tmp_path: Path) -> None:
    """The wheel setuptools builds from this tree ships specs/ as
    dmlconform/specs/, identical, and every module of the package."""
    pytest.importorskip("setuptools", minversion="77", reason="the build backend pyproject.toml names")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(REPO)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("dmlconform-*.whl")
    with zipfile.ZipFile(wheel) as z:
        shipped = {n.removeprefix("dmlconform/specs/"): z.read(n) for n in z.namelist()
                   if n.startswith("dmlconform/specs/")}
        names = set(z.namelist())
    assert shipped == {f.relative_to(SPECS).as_posix(): f.read_bytes() for f in SPECS.rglob("*") if f.is_file()}
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "dmlconform").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert modules - names == set()


# --------------------------------------------------------------------------- where the shipped specs are


def test_from_a_checkout_the_shipped_specs_are_its_specs_folder() -> None:
    assert packaged.shipped_specs() == SPECS


def test_an_installed_package_uses_its_own_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site-packages" / "dmlconform"
    (package / "specs").mkdir(parents=True)
    monkeypatch.setattr(packaged, "PACKAGE", package)
    assert packaged.shipped_specs() == package / "specs"


def test_an_install_without_its_specs_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stray specs/ beside an installed package (no pyproject.toml: not a
    checkout) is never taken for the shipped specs."""
    site = tmp_path / "site-packages"
    (site / "dmlconform").mkdir(parents=True)
    (site / "specs").mkdir()
    monkeypatch.setattr(packaged, "PACKAGE", site / "dmlconform")
    with pytest.raises(InputError) as caught:
        packaged.shipped_specs()
    assert caught.value.message == (
        f"the specs shipped with dmlconform are missing: neither {site / 'dmlconform' / 'specs'} nor "
        f"{site / 'specs'} is a folder; reinstall dmlconform (pip install --force-reinstall dmlconform) "
        "or give --specs DIR")


def test_the_default_is_relative_under_the_working_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """From the checkout's root the default reads ``specs`` as before (repro
    lines, messages, manifests); from elsewhere it is absolute."""
    monkeypatch.chdir(REPO)
    assert packaged.shipped_specs_arg() == "specs"
    monkeypatch.chdir(tmp_path)
    assert packaged.shipped_specs_arg() == str(SPECS)


# --------------------------------------------------------------------------- every command, from any folder


def test_commands_read_the_shipped_specs_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: each exited 2 with "spec folder 'specs' does not exist"."""
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "--op", "ACTIVATION_SOFTSIGN", "--dtype", "FLOAT32", "--no-isolate", "--no-progress",
                    "-o", "r")
    assert result.exit_code == 0, result.output
    result = invoke("gen", "--op", "ACTIVATION_SOFTSIGN", "-o", "cases")
    assert result.exit_code == 0, result.output
    result = invoke("diff", "--op", "ACTIVATION_SOFTSIGN", "--format", "json")
    assert result.exit_code == 0, result.output
    result = invoke("matrix", "--format", "markdown")
    assert result.exit_code == 0 and "ACTIVATION_SOFTSIGN" in result.stdout
    result = invoke("run", "--op", "ACTIVATION_SOFTSIGN", "--tolerances", str(tmp_path / "none.yaml"))
    assert result.exit_code == 2 and "none.yaml" in result.stderr  # the tolerances file is read, not the specs


def test_lint_without_paths_lints_the_shipped_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("lint", "--format", "json", "--no-baseline")
    assert result.exit_code in (0, 1), result.output  # the specs' own findings may exit 1
    paths = {Path(f["path"]).parent for f in json.loads(result.stdout)}
    assert SPECS in paths and paths <= {SPECS, SPECS / "reviewed"}  # DML131 warns at a reviewed overlay
    assert "the specs shipped with dmlconform" in invoke("lint", "--help").output
    known = invoke("lint")  # their known findings are in the baseline shipped beside them
    assert known.exit_code == 0 and " known in " in known.stderr, known.output


@pytest.mark.parametrize("command", [["run"], ["gen"], ["diff"], ["matrix"], ["validate"], ["import", "onnx"]])
def test_help_names_the_default_specs(command: list[str]) -> None:
    out = " ".join(invoke(*command, "--help").output.split())
    assert "(default: the specs shipped with dmlconform)" in out


def test_run_from_the_checkout_root_repeats_no_specs_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The default is not a given --specs: repro lines stay short."""
    monkeypatch.chdir(REPO)
    result = invoke("run", "--op", "ACTIVATION_SOFTSIGN", "--dtype", "FLOAT32", "--no-isolate", "--no-progress",
                    "-o", str(tmp_path / "r"))
    report = (tmp_path / "r" / "report.json").read_text(encoding="utf-8")
    assert result.exit_code == 0 and '"repro"' in report and "--specs" not in report
