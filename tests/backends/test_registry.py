"""The backend registry and `dmlconform backends`.

The third-party package under ``fake_backend_pkg`` is "installed" the way pip
lays out a wheel: its module and a ``*.dist-info`` (METADATA and
entry_points.txt, written from its pyproject.toml) in a temporary folder put
on ``sys.path``.  No pip, no network, fast.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from io import StringIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from dmlconform.backends.base import Backend
from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FAULTS
from dmlconform.backends.registry import GROUP, available_backends, load_backend
from dmlconform.cli import main
from dmlconform.commands.backend_commands import (
    BackendRow,
    backend_rows,
    backends_table,
)
from dmlconform.errors import BackendLoadError, ExitCode

#: The faulty backend's fault names as its messages list them.
KNOWN_FAULTS = ", ".join(FAULTS)

PKG = Path(__file__).parent / "fake_backend_pkg"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the fake package as installed, first on sys.path."""
    project = tomllib.loads((PKG / "pyproject.toml").read_text())["project"]
    shutil.copytree(PKG / "fake_dml_backend", tmp_path / "fake_dml_backend")
    info = tmp_path / f"fake_dml_backend-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    points = project["entry-points"][GROUP]
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_the_cpu_entry_point_loads() -> None:
    entries = {e.name: e for e in available_backends()}
    assert entries["cpu"].value == "dmlconform.backends.cpu:CpuBackend"
    assert entries["cpu"].label == "dmlconform[cpu]"
    backend = load_backend("cpu", {"feature_level": "3_0"})
    assert isinstance(backend, CpuBackend) and backend.info().feature_level.short == "3_0"


def test_third_party_package_is_discovered(site: Path) -> None:
    names = [(e.name, e.dist, e.dist_version) for e in available_backends(path=[str(site)])]
    assert names == [("fake", "fake-dml-backend", "1.2.3"), ("fake-broken", "fake-dml-backend", "1.2.3"),
                     ("fake-not-a-backend", "fake-dml-backend", "1.2.3"),
                     ("fake-offline", "fake-dml-backend", "1.2.3")]
    backend = load_backend("fake", {"device": "gpu0"})
    assert isinstance(backend, Backend) and backend.info().device == "gpu0"


def test_broken_import_names_dist_and_cause(site: Path) -> None:
    with pytest.raises(BackendLoadError) as err:
        load_backend("fake-broken", {})
    assert err.value.message.startswith(
        "fake-dml-backend[fake-broken]: cannot import fake_dml_backend.missing_module:Nothing: ModuleNotFoundError:")
    assert err.value.exit_code == ExitCode.BACKEND_UNAVAILABLE


def test_object_failing_the_protocol_is_refused(site: Path) -> None:
    with pytest.raises(BackendLoadError) as err:
        load_backend("fake-not-a-backend", {})
    assert err.value.message == (
        "fake-dml-backend[fake-not-a-backend]: fake_dml_backend:NotABackend gave a NotABackend, which is not a "
        "dmlconform Backend (missing or not callable: supports, run); it must define info(), supports(spec, case) "
        "and run(spec, case, buffers)")


def test_an_unknown_option_is_a_usage_error_naming_the_known_ones(site: Path) -> None:
    """Issue #20: a key the factory does not take is the command line's
    fault (exit 2), found from its signature before it is called."""
    with pytest.raises(BackendLoadError) as err:
        load_backend("fake", {"colour": "red", "devic": "gpu0"})
    assert err.value.message == ("fake-dml-backend[fake]: unknown options colour, devic (--backend-arg); "
                                 "it knows device; did you mean device?")
    assert err.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(("backend", "arg", "message"), [
    ("cpu", "colour=red", "error: dmlconform[cpu]: cpu backend: unknown option colour (--backend-arg); "
                          "it knows feature_level"),
    ("cpu", "feature_levle=5_0", "error: dmlconform[cpu]: cpu backend: unknown option feature_levle "
                                 "(--backend-arg); it knows feature_level; did you mean feature_level?"),
    ("faulty", "fault=one-ulp", "error: dmlconform[faulty]: unknown option fault (--backend-arg); it knows faults, "
                                "feature_level; did you mean faults?"),
    ("onnxruntime", "thread=2", "error: dmlconform[onnxruntime]: onnxruntime backend: unknown option thread "
                                "(--backend-arg); it knows provider, feature_level, threads; did you mean threads?"),
    ("torch", "devcie=cpu", "error: dmlconform[torch]: torch backend: unknown option devcie (--backend-arg); "
                            "it knows device, feature_level, tf32; did you mean device?"),
    ("directml", "path=x", "error: dmlconform[directml]: directml backend: unknown option path (--backend-arg); "
                           "it knows dml_path, feature_level, stack, mesa; did you mean dml_path?"),
    ("cpu", "feature_level=9_9", "error: dmlconform[cpu]: cpu backend: feature_level: unknown feature level '9_9' "
                                 "(known: 1_0, 2_0, 2_1, 3_0, 3_1, 4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4)"),
    ("faulty", "faults=bogus", "error: dmlconform[faulty]: faulty backend: faults='bogus': unknown fault(s) bogus; "
                               f"known: {KNOWN_FAULTS}"),
    ("faulty", "faults=", "error: dmlconform[faulty]: faulty backend: name the faults to plant: --backend-arg "
                          f"faults=NAME[,NAME...] (known: {KNOWN_FAULTS}); the cpu backend is this one without faults"),
    ("onnxruntime", "threads=two", "error: dmlconform[onnxruntime]: onnxruntime backend: threads='two' is not a "
                                   "whole number"),
])
def test_run_with_a_bad_backend_option_exits_2(backend: str, arg: str, message: str) -> None:
    """Issue #20: a bad --backend-arg of a backend that is there exits 2
    (usage) with one line naming the key and the known ones, not 3
    (unavailable); nothing runs."""
    result = CliRunner().invoke(main, ["run", "--backend", backend, "--backend-arg", arg, "--op", "ACTIVATION_SHRINK",
                                       "--no-progress"])
    assert (result.exit_code, result.output) == (ExitCode.USAGE, message + "\n")


def test_faulty_without_faults_is_a_usage_error_listing_them() -> None:
    """Issue #23: `--backend faulty` with no faults= planted nothing and passed."""
    result = CliRunner().invoke(main, ["run", "--backend", "faulty", "--op", "ACTIVATION_SHRINK", "--no-progress"])
    assert result.exit_code == ExitCode.USAGE
    assert result.output == ("error: dmlconform[faulty]: faulty backend: name the faults to plant: --backend-arg "
                             f"faults=NAME[,NAME...] (known: {KNOWN_FAULTS}); the cpu backend is this one without faults\n")


def test_unknown_name_lists_installed_and_suggests(site: Path) -> None:
    with pytest.raises(BackendLoadError) as err:
        load_backend("cpuu", {})
    # the package's own entry points (external, onnxruntime, ...) are listed too, between these
    assert err.value.message.startswith("no backend named 'cpuu' (installed: cpu, ")
    assert "fake, fake-broken, fake-not-a-backend, fake-offline" in err.value.message
    assert err.value.message.endswith("); did you mean 'cpu'?")


def test_unavailable_backend_loads_and_says_why(site: Path) -> None:
    backend = load_backend("fake-offline", {})
    info = backend.info()
    assert (info.available, info.reason) == (False, "libfake.so not found")


def test_backends_json_lists_every_backend(site: Path) -> None:
    result = CliRunner().invoke(main, ["backends", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert {"cpu", "fake", "fake-broken", "fake-not-a-backend", "fake-offline"} <= set(rows)
    assert rows["cpu"]["available"] is True and rows["cpu"]["feature_level"] == "6_4"
    assert rows["fake-offline"] == {"available": False, "device": "none", "distribution": "fake-dml-backend 1.2.3",
                                    "feature_level": "6_4", "name": "fake-offline", "reason": "libfake.so not found",
                                    "tables": "all", "version": "1.2.3"}
    assert rows["fake-broken"]["available"] is False
    assert rows["fake-broken"]["reason"].startswith("fake-dml-backend[fake-broken]: cannot import")


#: One package: no package column; rows a line each.
TABLE = (
    "dmlconform backends                                             \n"
    "name           level   tables   available   device, or why not  \n"
    "────────────────────────────────────────────────────────────────\n"
    "fake           5_0     all      yes         fake device         \n"
    "fake-offline   6_4     all      no          libfake.so not found\n")


def test_backends_table_renders(site: Path) -> None:
    rows = tuple(r for r in backend_rows(path=[str(site)]) if r.name in ("fake", "fake-offline"))
    console = Console(file=StringIO(), width=100)
    console.print(backends_table(rows))
    assert console.file.getvalue() == TABLE  # type: ignore[attr-defined]
    cpu = BackendRow("cpu", "dmlconform 0.1.0", "0.1.0", "numpy", "6_4", True, "", tables="all")
    console = Console(file=StringIO(), width=100)
    console.print(backends_table((cpu, *rows)))   # two packages: a column says which
    assert "package" in console.file.getvalue() and "fake-dml-backend 1.2.3" in console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("width", [80, 100, 140])
def test_the_listing_wraps_at_word_boundaries_and_summarises_the_faults(width: int) -> None:
    """issue #33 item 5: words were split mid-word, and the faulty backend's
    row listed every fault over 40 lines, headed ``dmlconform[faulty]:``."""
    rows = backend_rows()
    console = Console(file=StringIO(), width=width)
    console.print(backends_table(rows))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    words = set(text.split())
    for row in rows:
        shown = row.device if row.available else row.summary
        assert set(shown.split()) <= words, (row.name, set(shown.split()) - words)
    assert "dmlconform[faulty]" not in text and "gemm-dropped-term" not in text
    faulty = next(r for r in rows if r.name == "faulty")
    assert faulty.status == "needs options"
    assert f"from {len(FAULTS)} planted faults ('dmlconform backends faulty' lists them)" in faulty.summary
    # a few lines a row (the faulty row was 40 lines alone): an uninstalled engine's reason wraps at 80 columns
    assert len([line for line in text.splitlines() if line.strip()]) <= 3 + 4 * len(rows) + 6


def test_backends_name_shows_one_backend_in_full() -> None:
    result = CliRunner().invoke(main, ["backends", "faulty"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert result.output.startswith("faulty\n") and "dmlconform[faulty]" not in result.output
    assert set(FAULTS) <= {word.strip("(),;") for word in result.output.split()}
    assert all(len(line) <= 100 for line in result.output.splitlines())
    onnx = CliRunner().invoke(main, ["backends", "cpu", "--format", "json"])
    assert [r["name"] for r in json.loads(onnx.output)] == ["cpu"]
    assert json.loads(onnx.output)[0]["tables"] == "all"
    unknown = CliRunner().invoke(main, ["backends", "cpuu"])
    assert unknown.exit_code == ExitCode.BACKEND_UNAVAILABLE and "did you mean 'cpu'?" in unknown.output


def test_backends_table_exit_zero() -> None:
    result = CliRunner().invoke(main, ["backends"])
    assert result.exit_code == 0
    assert "cpu" in result.output


def test_row_as_dict_is_sorted_data() -> None:
    row = BackendRow("x", "d 1", "1", "dev", "6_4", True, "")
    assert list(row.as_dict()) == ["name", "distribution", "version", "device", "feature_level", "available", "reason",
                                   "tables"]


def test_backends_table_shows_brackets_as_written() -> None:
    """A reason like "pip install 'dmlconform[torch]'" is text, not rich markup."""
    row = BackendRow("torch", "dmlconform 0.1.0", "not installed", "cpu", "6_4", False,
                     "torch is not installed (pip install 'dmlconform[torch]')")
    console = Console(file=StringIO(), width=200)
    console.print(backends_table((row,)))
    assert "pip install 'dmlconform[torch]'" in console.file.getvalue()  # type: ignore[attr-defined]
