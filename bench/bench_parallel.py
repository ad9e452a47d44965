"""Wall time of `dmlconform run` on the default suite with the backend in
worker processes (``-j 1``, ``-j 2``, ...) against ``--no-isolate``, and
whether every mode gives the same report (issue 7, parts 3 and 4).

Each mode runs as its own process, the modes interleaved round by round so a
busy machine slows them alike; the table shows the fastest and the median
round.  The isolation overhead per case is (``-j 1`` - ``--no-isolate``) /
cases, from the fastest rounds.  Reports are compared without ``seconds``,
the timestamps, the run id and the command line.

    python bench/bench_parallel.py [--rounds 3] [--jobs 1 2] [-- RUN OPTIONS...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN = [sys.executable, "-c", "from dmlconform.cli import main; main()", "run", "--no-progress"]


def _comparable(path: Path) -> dict:  # type: ignore[type-arg]
    report = json.loads(path.read_text())
    for key in ("started", "finished", "run_id", "command"):
        report["run"].pop(key)
    for item in report["cases"] + report["groups"]:
        item.pop("seconds")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("extra", nargs="*", help="more `run` options, after --")
    args = parser.parse_args()
    modes = {"--no-isolate": ["--no-isolate"], **{f"-j {j}": ["-j", str(j)] for j in args.jobs}}
    times: dict[str, list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name, flags in modes.items():
                out = Path(tmp) / f"{round_}{name.replace(' ', '')}"
                started = time.perf_counter()
                subprocess.run([*RUN, *flags, *args.extra, "-o", str(out)], check=True, capture_output=True)
                times[name].append(time.perf_counter() - started)
        reports = {name: _comparable(Path(tmp) / f"0{name.replace(' ', '')}" / "report.json") for name in modes}
    cases = len(reports["--no-isolate"]["cases"])
    print(f"{cases} cases, {args.rounds} rounds: wall seconds of `dmlconform run` (fastest, median)")
    for name in modes:
        print(f"  {name:12} {min(times[name]):7.2f} {statistics.median(times[name]):7.2f}")
    if "-j 1" in times:
        overhead = (min(times["-j 1"]) - min(times["--no-isolate"])) / cases
        print(f"isolation overhead (-j 1 vs --no-isolate): {overhead * 1e3:.3f} ms per case")
    same = all(r == reports["--no-isolate"] for r in reports.values())
    print(f"reports identical apart from timings: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
