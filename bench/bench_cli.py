"""Whole-process cost of the commands a user runs, for two checkouts side by
side (issue 21, "Cost follows the selection"): the full default suite on cpu
(default -j, -j 1, --no-isolate), one operator, one case (a repro line), one
shard of 16, the torch backend, and ``dmlconform --version`` as the yardstick
of a bare start.

Each command runs as its own process with ``PYTHONPATH`` set to a checkout
(and ``python -P``: the current folder would come first on ``sys.path``), so
``--base`` (an older tree, e.g. ``git worktree add /tmp/base REV``) and
``--new`` (default: this checkout) are measured by the same interpreter.  The
commands and trees are interleaved round by round, so a busy machine slows
them alike; the table shows the median wall time and CPU time (the process
and its workers) per tree and their ratio.

    python bench/bench_cli.py --base /tmp/base [--new .] [--rounds 5] [--only case shard]
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
from pathlib import Path

CASE = "ACTIVATION_SHRINK/FLOAT32/4d/edges/Bias=0,Threshold=0.5"
#: name -> arguments after ``dmlconform`` ({out}: a fresh report folder).
COMMANDS = {
    "version": ["--version"],
    "full": ["run", "--no-progress", "-o", "{out}"],
    "full -j1": ["run", "--no-progress", "-j", "1", "-o", "{out}"],
    "full -j2": ["run", "--no-progress", "-j", "2", "-o", "{out}"],
    "full --no-isolate": ["run", "--no-progress", "--no-isolate", "-o", "{out}"],
    "op": ["run", "--no-progress", "--op", "ACTIVATION_SOFTSIGN", "-o", "{out}"],
    "case": ["run", "--no-progress", "--feature-level", "6_4", "--case", CASE, "--seed", "0", "-o", "{out}"],
    "shard": ["run", "--no-progress", "--shard", "1/16", "-o", "{out}"],
    "torch": ["run", "--no-progress", "--backend", "torch", "-o", "{out}"],
}


def _once(tree: Path, args: list[str], scratch: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one
    run, in ``tree``'s root so that each tree reads its own specs/ (a tree
    whose spec schema predates the other's keys refuses them at once); a
    run that exits 2 or more measured nothing, so it stops the bench."""
    out = Path(tempfile.mkdtemp(dir=scratch)) / "r"
    # Bytecode caching on, as an installed package has it: PYTHONDONTWRITEBYTECODE=1 (set on some CI
    # images) makes every process compile every module again (0.15 s of a one-case run).
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-P", "-m", "dmlconform", *(a.format(out=out) for a in args)], env=env,
                          cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode >= 2:
        raise SystemExit(f"{tree}: dmlconform {' '.join(args)} exited {done.returncode}: "
                         f"{done.stderr.decode(errors='replace').strip()[-400:]}")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the older checkout")
    parser.add_argument("--new", type=Path, default=Path(__file__).resolve().parent.parent, help="the newer checkout")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=sorted(COMMANDS), help="these commands alone")
    opts = parser.parse_args()
    names = opts.only or list(COMMANDS)
    trees = {"base": opts.base.resolve(), "new": opts.new.resolve()}
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for tree in trees.values():  # untimed: writes each tree's bytecode caches
            _once(tree, COMMANDS["case"], Path(scratch))
        for _ in range(opts.rounds):
            for name in names:
                for label, tree in trees.items():
                    times.setdefault((name, label), []).append(_once(tree, COMMANDS[name], Path(scratch)))
    version = {label: statistics.median(w for w, _ in times.get(("version", label), [(0.0, 0.0)])) for label in trees}
    print(f"{'command':20} {'base wall':>9} {'new wall':>9} {'new/base':>8} {'base cpu':>9} {'new cpu':>8} "
          f"{'new/version':>11}")
    for name in names:
        base = [statistics.median(x) for x in zip(*times[(name, "base")])]
        new = [statistics.median(x) for x in zip(*times[(name, "new")])]
        per_version = f"{new[0] / version['new']:.1f}x" if version["new"] else ""
        print(f"{name:20} {base[0]:9.2f} {new[0]:9.2f} {new[0] / base[0]:7.2f}x {base[1]:9.2f} {new[1]:8.2f} "
              f"{per_version:>11}")
    print(f"(medians of {opts.rounds} rounds after one untimed run per tree; seconds; cpu: the process and its workers; "
          f"base version {version['base']:.3f} s)")


if __name__ == "__main__":
    main()
