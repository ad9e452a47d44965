"""``dmlconform merge``: the reports of the N shards of one run (``run
--shard K/N`` on N machines) back into the report of the whole run.

The shards must be of the same run (backend, version, feature level, seed,
N, strictness, overrides and baseline), each shard exactly once, and no case
in two shards; anything else is an `InputError` (exit 2) naming the files.
The merged cases are sorted by case id, so the merged report does not depend
on N or on the order of the files.  DESIGN.md "Who uses it, and for what".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from dmlconform.errors import InputError
from dmlconform.gating.shard import parse_shard
from dmlconform.results import Baseline, RunResult

#: Facts that must agree between the shards of one run, with how a message names them.
SAME = (("backend", "backend"), ("backend_version", "backend version"), ("feature_level", "feature level"),
        ("seed", "seed"), ("flush_subnormals", "flush_subnormals"), ("strict", "--strict"),
        ("overrides", "tolerance overrides"), ("float16_accumulation", "float16_accumulation"),
        ("subset", "subset (the backend implements a subset of the tables)"))

_SUFFIX = re.compile(r"-shard\d+of\d+$")


def _shard_of(path: str, run: RunResult) -> tuple[int, int]:
    if run.interrupted:
        raise InputError(f"{path}: an interrupted run (Ctrl-C) holds only part of its shard; run that shard "
                         "again before merging")
    if not run.shard:
        raise InputError(f"{path}: not a shard report (its run had no --shard K/N); merge combines the "
                         "report.json files of `dmlconform run --shard K/N`")
    try:
        shard = parse_shard(run.shard)
    except ValueError as exc:
        raise InputError(f"{path}: bad shard in the report: {exc}") from None
    return shard.index, shard.count


def _check_same(reports: Sequence[tuple[str, RunResult]]) -> None:
    first_path, first = reports[0]
    for path, run in reports[1:]:
        for attr, name in SAME:
            if getattr(run, attr) != getattr(first, attr):
                raise InputError(f"mismatched runs: {name} is {getattr(first, attr)!r} in {first_path} but "
                                 f"{getattr(run, attr)!r} in {path}; merge only the shards of one run")
        if _entries(first.baseline) != _entries(run.baseline):
            raise InputError(f"mismatched runs: {first_path} and {path} were checked against different "
                             "baselines; merge only the shards of one run")


def _entries(baseline: Baseline | None) -> object:
    return None if baseline is None else baseline.entries


def _check_shards(reports: Sequence[tuple[str, RunResult]]) -> int:
    """N; every shard 1..N exactly once."""
    seen: dict[int, str] = {}
    shards = [(path, _shard_of(path, run)) for path, run in reports]
    n = shards[0][1][1]
    for path, (k, count) in shards:
        if count != n:
            raise InputError(f"mismatched runs: {reports[0][0]} is one of {n} shards but {path} one of {count}")
        if k in seen:
            raise InputError(f"shard {k}/{n} given twice: {seen[k]} and {path}")
        seen[k] = path
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in seen]
    if missing:
        raise InputError(f"missing shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                         f"(got {len(seen)} of {n} reports); give every shard's report.json")
    return n


def _check_disjoint(reports: Sequence[tuple[str, RunResult]]) -> None:
    where: dict[str, str] = {}
    for path, run in reports:
        for case in run.cases:
            other = where.setdefault(case.case_id, path)
            if other != path:
                raise InputError(f"overlapping shards: case {case.case_id!r} is in {other} and in {path}; "
                                 "were the shards run with different selections or dmlconform versions?")


def _baseline(runs: Sequence[RunResult]) -> Baseline | None:
    """The shared baseline; an entry is stale only if it matched no case in any shard."""
    first = runs[0].baseline
    if first is None:
        return None
    stale = set.intersection(*(set(r.baseline.stale if r.baseline else ()) for r in runs))
    return replace(first, stale=tuple(e.key for e in first.entries if e.key in stale))


def merge_runs(reports: Sequence[tuple[str, RunResult]], *, command: str) -> RunResult:
    """The whole run from its shard reports, given as (path, report) pairs."""
    if not reports:
        raise InputError("no reports to merge")
    _check_same(reports)
    n = _check_shards(reports)
    _check_disjoint(reports)
    runs = [run for _, run in sorted(reports, key=lambda pr: parse_shard(pr[1].shard).index)]
    first = runs[0]
    devices = sorted({r.device for r in runs})
    return replace(
        first,
        run_id=_SUFFIX.sub("", min(runs, key=lambda r: r.started).run_id) + f"-merged{n}",
        device=" | ".join(devices), command=command,
        started=min(r.started for r in runs), finished=max(r.finished for r in runs),
        seconds=max(r.seconds for r in runs),  # shards run side by side: the longest is the run's
        cases=tuple(sorted((c for r in runs for c in r.cases), key=lambda c: c.case_id)),
        shard="", merged_from=tuple(r.run_id for r in runs), baseline=_baseline(runs),
        ambiguities=tuple(sorted({a for r in runs for a in r.ambiguities}, key=lambda a: (a.operator, a.ambiguity))),
    )
