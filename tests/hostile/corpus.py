"""The fuzz corpus of hostile files: every command that reads a user's file,
run on each file of ``tests/hostile/<kind>/`` (committed, small) and on the
hostile inputs too big or too odd to commit (made here, at run time: a 20 MB
spec, FIFOs, dangling and outward symbolic links, a /dev/zero link).

`entries` lists what to run; `run_entry` runs one in this process with
click's runner and says what happened.  The driver (``python -m
tests.hostile.driver``) runs them all under a memory limit with a time limit
each, so a regression cannot take the machine down; tests/test_hostile.py
asserts on each outcome: an exit code in the documented set and never 4
(a bug of ours), no traceback, every error line naming the input, nothing
that existed before changed when the command failed, bounded time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).parent
REPO = ROOT.parent.parent
#: A small selection for the commands that run cases, so each entry costs a fraction of a second.
SMALL = ["--op", "ACTIVATION_SOFTSIGN", "--dtype", "FLOAT32", "--no-progress", "--no-isolate"]
#: The committed specs, for commands whose hostile input is something else.
SPECS = ["--specs", "{repo}/specs"]


@dataclass(frozen=True)
class Entry:
    """One command on one hostile input.  ``argv`` may hold ``{work}`` (a
    fresh folder of the entry's own) and ``{input}``; ``seed`` copies files
    into the work folder first (target name -> source); ``make`` builds an
    input there that cannot be committed (it gets the work folder)."""

    name: str
    argv: tuple[str, ...]
    input: str = ""
    seed: tuple[tuple[str, str], ...] = ()
    make: Callable[[Path], None] | None = field(default=None, compare=False)


def _files(kind: str) -> list[Path]:
    return sorted(p for p in (ROOT / kind).iterdir() if not p.name.startswith("."))


def _spec_entries() -> Iterator[Entry]:
    """A hostile spec through every command that reads specs."""
    for path in _files("spec"):
        rel = str(path.relative_to(REPO))
        folder = (("specs/ACTIVATION_SOFTSIGN.yaml", rel),)
        yield Entry(f"lint/{path.name}", ("lint", "{input}"), rel)
        yield Entry(f"gen/{path.name}", ("gen", "--specs", "{work}/specs", "-o", "{work}/cases"), rel, folder)
        yield Entry(f"run/{path.name}", ("run", "--specs", "{work}/specs", *SMALL, "-o", "{work}/out"), rel, folder)
        yield Entry(f"diff/{path.name}", ("diff", "{work}/old", "{work}/specs"), rel,
                    folder + (("old/ACTIVATION_SOFTSIGN.yaml", "specs/ACTIVATION_SOFTSIGN.yaml"),))


def _page_entries() -> Iterator[Entry]:
    """A hostile doc page through extract, over a folder that already holds
    the good specs it could replace (which must survive a refusal)."""
    keep = tuple((f"out/{name}.yaml", f"specs/{name}.yaml") for name in ("ACTIVATION_SHRINK", "ACTIVATION_SOFTSIGN"))
    for path in _files("extract"):
        rel = str(path.relative_to(REPO))
        yield Entry(f"extract/{path.name}", ("extract", "{input}", "-o", "{work}/out"), rel, keep)


def _case_entries() -> Iterator[Entry]:
    """A hostile case folder (manifest and .npy files) through run."""
    for path in [*_files("cases"), *_files("run")]:
        if path.is_dir():
            rel = str(path.relative_to(REPO))
            yield Entry(f"run-cases/{path.name}", ("run", *SPECS, "--cases", "{input}", "--no-progress",
                                                   "--no-isolate", "-o", "{work}/out"), rel)


def _gating_entries() -> Iterator[Entry]:
    """Hostile baselines and tolerance files through run, hostile reports
    through every command that reads one."""
    for option, kind in (("--baseline", "baseline"), ("--tolerances", "tolerances")):
        for path in _files(kind):
            rel = str(path.relative_to(REPO))
            yield Entry(f"run{option}/{path.name}", ("run", *SPECS, *SMALL, option, "{input}", "-o", "{work}/out"),
                        rel)
    old = (("old-baseline.yaml", "tests/hostile/good-baseline.yaml"),)
    for path in _files("results"):
        if path.suffix != ".json":
            continue
        rel = str(path.relative_to(REPO))
        yield Entry(f"results/{path.name}", ("results", "{input}", "-o", "{work}/page.md"), rel)
        yield Entry(f"merge/{path.name}", ("merge", "{input}", "-o", "{work}/merged"), rel)
        yield Entry(f"baseline-update/{path.name}", ("baseline", "update", "{input}", "-o",
                                                     "{work}/old-baseline.yaml"), rel, old)
    yield Entry("results/deep-notes.yaml", ("results", "{repo}/tests/hostile/good-report.json", "--notes",
                                            "{input}", "-o", "{work}/page.md"), "tests/hostile/results/deep-notes.yaml")


def _big_spec(work: Path) -> None:
    """A 20 MB spec: the real one padded with comments."""
    (work / "specs").mkdir()
    text = (REPO / "specs" / "ACTIVATION_SOFTSIGN.yaml").read_text(encoding="utf-8")
    (work / "specs" / "ACTIVATION_SOFTSIGN.yaml").write_text(text + ("# padding" * 100 + "\n") * 22000,
                                                             encoding="utf-8")


def _fifo(name: str) -> Callable[[Path], None]:
    def make(work: Path) -> None:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(work / name)
    return make


def _link(name: str, target: str) -> Callable[[Path], None]:
    def make(work: Path) -> None:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, work / name)
    return make


def _made_entries() -> Iterator[Entry]:
    """Hostile inputs made at run time."""
    fifo = hasattr(os, "mkfifo")
    yield Entry("lint/20MB-spec", ("lint", "{work}/specs"), make=_big_spec)
    yield Entry("run/20MB-spec", ("run", "--specs", "{work}/specs", *SMALL, "-o", "{work}/out"), make=_big_spec)
    if fifo:
        yield Entry("lint/fifo-spec", ("lint", "{work}/specs/ACTIVATION_SOFTSIGN.yaml"),
                    make=_fifo("specs/ACTIVATION_SOFTSIGN.yaml"))
        yield Entry("lint/fifo-in-folder", ("lint", "{work}/specs"), make=_fifo("specs/ACTIVATION_SOFTSIGN.yaml"))
        yield Entry("run/fifo-baseline", ("run", *SPECS, *SMALL, "--baseline", "{work}/b.yaml", "-o", "{work}/out"),
                    make=_fifo("b.yaml"))
        yield Entry("extract/fifo-page", ("extract", "{work}/pages", "-o", "{work}/out"),
                    make=_fifo("pages/page.md"))
        yield Entry("results/fifo-report", ("results", "{work}/r.json", "-o", "{work}/page.md"), make=_fifo("r.json"))
    yield Entry("lint/dangling-link", ("lint", "{work}/specs"), make=_link("specs/A.yaml", "nowhere.yaml"))
    yield Entry("lint/link-outside", ("lint", "{work}/specs"), make=_link("specs/A.yaml", "/etc/hostname"))
    yield Entry("lint/dev-zero", ("lint", "{work}/specs"), make=_link("specs/A.yaml", "/dev/zero"))
    yield Entry("extract/link-outside", ("extract", "{work}/pages", "-o", "{work}/out"),
                make=_link("pages/p.md", str(REPO / "README.md")))
    yield Entry("run-cases/dev-zero-npy", ("run", *SPECS, "--cases", "{work}/cases", "--no-progress", "--no-isolate",
                                           "-o", "{work}/out"), make=_zero_npy)
    yield Entry("run/output-onto-a-file", ("run", *SPECS, *SMALL, "-o", "{work}/file/out"), make=_plain_file("file"))
    if fifo:
        yield Entry("gen/output-onto-a-fifo", ("gen", "--specs", "{repo}/specs", "--op", "ACTIVATION_SOFTSIGN",
                                               "-o", "{work}/cases"), make=_fifo("cases/manifest.json"))


def _plain_file(name: str) -> Callable[[Path], None]:
    def make(work: Path) -> None:
        (work / name).write_text("not a folder\n", encoding="utf-8")
    return make


def _zero_npy(work: Path) -> None:
    """A case folder whose tensor file is a link to /dev/zero (endless zeros)."""
    shutil.copytree(ROOT / "cases" / "good", work / "cases")
    for npy in (work / "cases").glob("*.InputTensor.npy"):
        npy.unlink()
        os.symlink("/dev/zero", npy)


def entries() -> list[Entry]:
    """Every entry of the corpus, in a fixed order."""
    found = [*_spec_entries(), *_page_entries(), *_case_entries(), *_gating_entries(), *_made_entries()]
    return [e for e in found if e is not None]


@dataclass(frozen=True)
class Outcome:
    """What one entry did: its exit code, its output (stdout, stderr), its
    time, and the files that existed before it ran and changed."""

    name: str
    exit_code: int
    stdout: str
    stderr: str
    seconds: float
    changed: tuple[str, ...]


def _snapshot(folder: Path) -> dict[str, str]:
    """A digest of every regular file under ``folder``."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def prepare(entry: Entry, work: Path) -> tuple[list[str], dict[str, str]]:
    """The entry's folder filled; its argv; a digest of its files and of its
    input (what must not change when the command fails)."""
    work.mkdir(parents=True)
    for target, source in entry.seed:
        (work / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / source, work / target)
    if entry.make is not None:
        entry.make(work)
    argv = [a.format(work=work, input=REPO / entry.input, repo=REPO) for a in entry.argv]
    before = _snapshot(work)
    if entry.input and (REPO / entry.input).is_file():
        before["<input>"] = hashlib.sha256((REPO / entry.input).read_bytes()).hexdigest()
    return argv, before


def run_entry(entry: Entry, work: Path) -> Outcome:
    """Run one entry here with click's runner (from a scratch folder: the
    commands' relative defaults such as ``reports/`` land there)."""
    from click.testing import CliRunner

    from dmlconform.cli import main

    argv, before = prepare(entry, work)
    started = time.perf_counter()
    result = CliRunner().invoke(main, argv)
    seconds = time.perf_counter() - started
    after = _snapshot(work)
    if "<input>" in before:
        after["<input>"] = hashlib.sha256((REPO / entry.input).read_bytes()).hexdigest()
    changed = tuple(sorted(k for k, v in before.items() if after.get(k) != v))
    return Outcome(entry.name, result.exit_code, result.stdout, result.stderr, seconds, changed)
