"""The fixed cost every process pays, and a shard's share of the suite, side by
side in one run (issue #31, item 6, "Done means").

(a) ``python -c "import numpy"``: the yardstick of a bare start.
(b) A one-case repro, ``dmlconform run --case CASE --no-progress -o TMP``,
    with its worker (the default isolation), through the console script
    ``dmlconform`` as a user pastes it: the one the tree's pyproject.toml
    defines, written as pip writes it (`_script`).  Target: at most 5x (a).
(c) The full default run and ``--shard 1/16`` (cpu, default ``-j``).
    Target: the shard at most 0.4 of the full run.

Each command runs as its own process with ``PYTHONPATH`` set to ``--tree``
(default: this checkout; ``python -P``, so the current folder does not come
first on ``sys.path``), in that tree's root, with a cache folder of its own
(``DMLCONFORM_CACHE``) that one untimed shard run fills first: what a user's
second run finds.  The commands alternate round by round (numpy, case,
shard, full, numpy, ...), so a busy machine slows them alike; the median
wall time of each is kept, and the CPU time (the process and its workers)
is shown beside it.  ``--base`` (an older tree, e.g. ``git archive REV``
unpacked) is measured in the same rounds, each command right after the
same one in ``--tree``, for a before/after side by side.

    python bench/bench_startup.py [--tree PATH] [--base PATH] [--rounds 5] [--case ID] [--only numpy,case]

``--only`` measures some of the commands (numpy and case: the one-case
ratio alone, without the full runs).  Exit status 0 when the targets of
the commands measured hold, else 1.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

CASE = "ELEMENT_WISE_ADD/FLOAT32/4d/edges"
TARGET_CASE = 5.0
TARGET_SHARD = 0.4
#: name -> the command after the interpreter ({out}: a fresh report folder; {case}: --case's id).
COMMANDS = {
    "numpy": ["-c", "import numpy"],
    "case": ["{dmlconform}", "run", "--case", "{case}", "--no-progress", "-o", "{out}"],
    "shard": ["-P", "-m", "dmlconform", "run", "--shard", "1/16", "--no-progress", "-o", "{out}"],
    "full": ["-P", "-m", "dmlconform", "run", "--no-progress", "-o", "{out}"],
}


def _script(tree: Path, folder: Path) -> Path:
    """The console script ``dmlconform`` as ``tree``'s pyproject.toml
    defines it (``[project.scripts]``), written into ``folder`` as pip
    writes one: a file run as the main script (``spawn`` treats such a
    file so) that calls the tree's entry point.  Not the interpreter's
    installed one, which calls the installed tree's: an older ``--base``'s
    entry point may be another (``cli:main`` before ``cli:run``)."""
    entry = tomllib.loads((tree / "pyproject.toml").read_text())["project"]["scripts"]["dmlconform"]
    module, _, function = entry.partition(":")
    script = folder / "dmlconform"
    script.write_text(f"import sys\nfrom {module} import {function}\n\n"
                      f"if __name__ == '__main__':\n    sys.exit({function}())\n")
    return script


def _argv(args: list[str], script: Path | str = "dmlconform") -> list[str]:
    """The command line of ``args``: the interpreter's, or ``script``'s (`_script`)."""
    if args[0] != "{dmlconform}":
        return [sys.executable, *args]
    return [sys.executable, str(script), *args[1:]]


def _once(tree: Path, args: list[str], scratch: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one
    command run in ``tree``, its reports and cache in ``scratch``; one that
    exits 2 or more measured nothing, so it stops the bench (1 is a run with
    findings: it ran whole)."""
    out = Path(tempfile.mkdtemp(dir=scratch)) / "r"
    # Bytecode caching on, as an installed package has it (bench_cli.py says why).
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "PYTHONPATH": str(tree), "DMLCONFORM_CACHE": str(scratch / "cache")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([a.format(out=out) for a in _argv(args, scratch / "dmlconform")], env=env, cwd=tree,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    if done.returncode >= 2:
        raise SystemExit(f"{tree}: {' '.join(args)} exited {done.returncode}: "
                         f"{done.stderr.decode(errors='replace').strip()[-400:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _measure(trees: list[Path], rounds: int, case: str,
             names: tuple[str, ...]) -> dict[tuple[Path, str], list[tuple[float, float]]]:
    """Each tree's commands ``names``' (wall, cpu) per round, the commands
    (and the trees, per command) alternating, after one untimed case run
    (bytecode) and one shard run (the spec cache) in each tree."""
    commands = {name: [a.replace("{case}", case) for a in COMMANDS[name]] for name in names}
    warm = {name: [a.replace("{case}", case) for a in COMMANDS[name]] for name in ("case", "shard")}
    times: dict[tuple[Path, str], list[tuple[float, float]]] = {(t, n): [] for t in trees for n in commands}
    with tempfile.TemporaryDirectory() as scratch:
        caches = {tree: Path(scratch) / f"tree{i}" for i, tree in enumerate(trees)}
        for tree in trees:
            caches[tree].mkdir()
            _script(tree, caches[tree])
            for name in ("case", "shard"):
                _once(tree, warm[name], caches[tree])
        for _ in range(rounds):
            for name, args in commands.items():
                for tree in trees:
                    times[tree, name].append(_once(tree, args, caches[tree]))
    return times


def _report(tree: Path, times: dict[tuple[Path, str], list[tuple[float, float]]], case: str,
            names: tuple[str, ...]) -> bool:
    """Print ``tree``'s medians and the ratios of the commands measured;
    whether their targets hold."""
    wall = {name: statistics.median(w for w, _ in times[tree, name]) for name in names}
    cpu = {name: statistics.median(c for _, c in times[tree, name]) for name in names}
    print(tree)
    for name in names:
        shown = " ".join(_argv(COMMANDS[name])).replace("{case}", case).replace("{out}", "TMP")
        print(f"  {name:6} {wall[name]:7.2f} s wall {cpu[name]:7.2f} s cpu   {shown}")
    met = True
    if {"case", "numpy"} <= wall.keys():
        case_ratio = wall["case"] / wall["numpy"]
        print(f"  one-case repro / import numpy: {case_ratio:.2f}x (target <= {TARGET_CASE:g}x)")
        met = met and case_ratio <= TARGET_CASE
    if {"shard", "full"} <= wall.keys():
        shard_ratio = wall["shard"] / wall["full"]
        print(f"  --shard 1/16 / full run: {shard_ratio:.2f} (target <= {TARGET_SHARD:g})")
        met = met and shard_ratio <= TARGET_SHARD
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout to measure (default: this one)")
    parser.add_argument("--base", type=Path, help="an older checkout, measured in the same rounds")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--case", default=CASE, help=f"the one case of (b) (default {CASE})")
    parser.add_argument("--only", default=",".join(COMMANDS), help="the commands to measure, comma-separated "
                        f"(default all: {','.join(COMMANDS)})")
    args = parser.parse_args()
    names = tuple(n for n in COMMANDS if n in args.only.split(","))
    unknown = sorted(set(args.only.split(",")) - set(COMMANDS))
    if unknown or not names:
        parser.error(f"--only {args.only}: give some of {','.join(COMMANDS)}")
    trees = [args.tree.resolve()] + ([args.base.resolve()] if args.base else [])
    times = _measure(trees, args.rounds, args.case, names)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} cores; load average {load} at the end; medians of {args.rounds} rounds, alternating")
    met = _report(trees[0], times, args.case, names)
    if args.base:
        _report(trees[1], times, args.case, names)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
