"""Merging shard reports: the whole run back, or a clear error (exit 2)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dmlconform.errors import InputError
from dmlconform.gating.merge import merge_runs
from dmlconform.gating.shard import shard_of
from dmlconform.results import AmbiguityWords, Baseline, BaselineEntry, Outcome, RunResult, ToleranceOverride
from tests.gating.helpers import case, run_of

IDS = [f"OP{i % 3}/FLOAT32/{i}d/edges" for i in range(40)]


def _whole() -> RunResult:
    outcomes = [Outcome.PASS, Outcome.PASS, Outcome.XFAIL, Outcome.NOT_SUPPORTED]
    return run_of(*(case(i, outcomes[n % 4]) for n, i in enumerate(IDS)),
                  overrides=(ToleranceOverride("OP1", "FLOAT32", ulp=2, reason="r"),),
                  baseline=Baseline("b.yaml", (BaselineEntry("OP0/*", "x", pattern=True),
                                               BaselineEntry("GONE/*", "y", pattern=True))))


def _shards(run: RunResult, n: int) -> list[tuple[str, RunResult]]:
    out = []
    for k in range(1, n + 1):
        cases = tuple(c for c in run.cases if shard_of(c.case_id, n) == k)
        ids = {c.case_id for c in cases}
        stale = tuple(e.key for e in run.baseline.entries  # type: ignore[union-attr]
                      if e.key == "GONE/*" or not any(i.startswith(e.key[:-1]) for i in ids))
        out.append((f"s{k}/report.json", replace(
            run, run_id=f"2026-cpu-6_4-s0-shard{k}of{n}", shard=f"{k}/{n}", cases=cases,
            started=f"2026-01-01T00:00:0{k}+00:00", finished=f"2026-01-01T00:01:0{k}+00:00",
            baseline=replace(run.baseline, stale=stale))))  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("n", [1, 3, 8])
def test_merge_gives_the_whole_run(n: int) -> None:
    whole = _whole()
    shards = _shards(whole, n)
    merged = merge_runs(list(reversed(shards)), command="dmlconform merge x")
    assert merged.cases == tuple(sorted(whole.cases, key=lambda c: c.case_id))
    assert merged.shard == "" and merged.merged_from == tuple(r.run_id for _, r in shards)
    assert merged.run_id == f"2026-cpu-6_4-s0-merged{n}" and merged.command == "dmlconform merge x"
    assert merged.started == "2026-01-01T00:00:01+00:00" and merged.finished == f"2026-01-01T00:01:0{n}+00:00"
    assert merged.overrides == whole.overrides
    assert merged.baseline is not None and merged.baseline.stale == ("GONE/*",)   # OP0/* matched in some shard
    assert merged.failed is whole.failed


def test_merge_keeps_every_shards_words_of_the_readings() -> None:
    words = [AmbiguityWords("OP1", "nan", "What does NaN give?", (("propagate", "NaN"),)),
             AmbiguityWords("OP0", "nan", "What does NaN give?", (("formula", "the branch"),))]
    first, second = _shards(_whole(), 2)
    merged = merge_runs([(first[0], replace(first[1], ambiguities=(words[0],))),
                         (second[0], replace(second[1], ambiguities=tuple(words)))], command="m")
    assert merged.ambiguities == (words[1], words[0])


def test_merged_failure_follows_the_cases() -> None:
    whole = replace(_whole(), cases=_whole().cases + (case("OP9/FLOAT32/x", Outcome.FAIL),))
    assert merge_runs(_shards(whole, 2), command="m").failed


def _error(reports: list[tuple[str, RunResult]]) -> str:
    with pytest.raises(InputError) as info:
        merge_runs(reports, command="m")
    assert info.value.exit_code == 2
    return info.value.message


def test_missing_duplicate_and_overlapping_shards() -> None:
    shards = _shards(_whole(), 4)
    assert _error(shards[:1] + shards[3:]) == ("missing shards 2/4, 3/4 (got 2 of 4 reports); "
                                               "give every shard's report.json")
    assert _error(shards + shards[1:2]) == "shard 2/4 given twice: s2/report.json and s2/report.json"
    first, second = shards[0], shards[1]
    overlap = ("s2/report.json", replace(second[1], cases=second[1].cases + first[1].cases[:1]))
    assert _error([first, overlap, *shards[2:]]) == (
        f"overlapping shards: case {first[1].cases[0].case_id!r} is in s1/report.json and in s2/report.json; "
        "were the shards run with different selections or dmlconform versions?")


@pytest.mark.parametrize(("change", "expected"), [
    ({"seed": 7}, "mismatched runs: seed is 0 in s1/report.json but 7 in s2/report.json; merge only the shards of one run"),
    ({"backend": "cpu"}, "mismatched runs: backend is 'faulty' in s1/report.json but 'cpu' in s2/report.json"),
    ({"feature_level": "5_0"}, "mismatched runs: feature level is '6_4' in s1/report.json but '5_0'"),
    ({"strict": True}, "mismatched runs: --strict is False in s1/report.json but True"),
    ({"overrides": ()}, "mismatched runs: tolerance overrides"),
    ({"subset": True}, "mismatched runs: subset (the backend implements a subset of the tables) is False"),
    ({"baseline": None}, "mismatched runs: s1/report.json and s2/report.json were checked against different baselines"),
    ({"shard": "2/3"}, "mismatched runs: s1/report.json is one of 2 shards but s2/report.json one of 3"),
    ({"shard": ""}, "s2/report.json: not a shard report (its run had no --shard K/N)"),
])
def test_mismatched_runs(change: dict[str, object], expected: str) -> None:
    first, second = _shards(_whole(), 2)
    assert _error([first, (second[0], replace(second[1], **change))]).startswith(expected)  # type: ignore[arg-type]


def test_an_interrupted_shard_is_refused() -> None:
    first, second = _shards(_whole(), 2)
    assert _error([first, (second[0], replace(second[1], interrupted=True))]) == (
        "s2/report.json: an interrupted run (Ctrl-C) holds only part of its shard; run that shard again "
        "before merging")


def test_nothing_to_merge() -> None:
    assert _error([]) == "no reports to merge"
