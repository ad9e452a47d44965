"""Whether two folders of reports say the same, timings and run ids aside:
the check behind a change that must not change any result (the readings'
speed-up, issue #22's cost).

Each folder holds one sub-folder per run, each with its report.json (as
``dmlconform run -o BASE/NAME`` writes it); the runs are paired by name.
Every case (outcome, message, counts, worst elements, alternatives,
readings, ...) and every other part of the report (summary, groups,
coverage, readings) must be equal once the fields that differ from run to
run are dropped (`VARYING`).  One line per run, the first differing cases
of each, and exit 1 where any differ (or is missing on one side).

    for b in cpu onnxruntime torch; do dmlconform run --backend $b -o /tmp/base/$b; done  # in each tree
    python bench/same_reports.py /tmp/base /tmp/new
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: The report fields that differ between two runs of the same cases.
VARYING = frozenset({"seconds", "run", "run_id", "started", "finished", "command"})
#: Differing cases shown per run.
SHOWN = 3


def stripped(value: Any) -> Any:
    """``value`` (decoded JSON) without the `VARYING` fields, at any depth."""
    if isinstance(value, dict):
        return {k: stripped(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [stripped(v) for v in value]
    return value


def differences(base: Path, new: Path) -> list[str]:
    """What differs between the reports of one run in two trees, each as a line."""
    a = stripped(json.loads((base / "report.json").read_text(encoding="utf-8")))
    b = stripped(json.loads((new / "report.json").read_text(encoding="utf-8")))
    cases_a = {c["case_id"]: c for c in a.pop("cases")}
    cases_b = {c["case_id"]: c for c in b.pop("cases")}
    found = [f"  case {k}: only in {base if k in cases_a else new}" for k in sorted(cases_a.keys() ^ cases_b.keys())]
    for k in sorted(cases_a.keys() & cases_b.keys()):
        fields = sorted(f for f in cases_a[k].keys() | cases_b[k].keys() if cases_a[k].get(f) != cases_b[k].get(f))
        found += [f"  case {k}: {', '.join(fields)}"] if fields else []
    return found + [f"  {key}" for key in sorted(a.keys() | b.keys()) if a.get(key) != b.get(key)]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python bench/same_reports.py BASE_DIR NEW_DIR", file=sys.stderr)
        return 2
    base, new = (Path(p) for p in argv)
    for folder in (base, new):
        if not folder.is_dir():
            print(f"same_reports: {folder}: no such folder (give two folders of report folders)", file=sys.stderr)
            return 2
    names = sorted({p.name for p in base.iterdir() if (p / "report.json").is_file()}
                   | {p.name for p in new.iterdir() if (p / "report.json").is_file()})
    differing = 0
    for name in names:
        if not ((base / name / "report.json").is_file() and (new / name / "report.json").is_file()):
            print(f"{name}: missing on one side")
            differing += 1
            continue
        found = differences(base / name, new / name)
        print(f"{name}: {'identical' if not found else f'{len(found)} differences'}")
        print("\n".join(found[:SHOWN]), end="\n" if found else "")
        differing += bool(found)
    print(f"{len(names) - differing} of {len(names)} runs identical")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
