"""Baselines: reading (errors at file:line:col), matching ids and patterns,
XFAIL/XPASS/stale, strictness, and `update` keeping what still applies."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.errors import SpecError
from dmlconform.gating.baseline import (
    apply_baseline,
    dumps_baseline,
    original_outcome,
    read_baseline,
    stale_keys,
    update,
)
from dmlconform.results import Baseline, BaselineEntry, Outcome
from tests.fifos import fifo, needs_fifos
from tests.gating.helpers import case, run_of, write

#: A case id with glob characters in it, as the generator writes them.
STAR_ID = "ACTIVATION_HARD_SIGMOID/FLOAT32/4d/boundary(0==Alpha*x+Beta)/Alpha=0.2,Beta=0.5"

BASELINE = f"""\
version: 1
cases:
  ELEMENT_WISE_SIGN/FLOAT32/1d/edges:
    reason: sign(-0) is -1
    issue: https://example.com/issues/12
  '{STAR_ID}':
    reason: hard sigmoid kink
    outcomes: [CRASH]
patterns:
  'ACTIVATION_SOFTSIGN/*/8d/*':
    reason: 8-D tensors are wrong
  'NOTHING/*':
    reason: old
"""


def _baseline(tmp_path) -> Baseline:  # type: ignore[no-untyped-def]
    return read_baseline(write(tmp_path, "baseline.yaml", BASELINE))


def test_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    b = _baseline(tmp_path)
    assert b.path.endswith("baseline.yaml") and b.stale == ()
    assert b.entries == (
        BaselineEntry("ELEMENT_WISE_SIGN/FLOAT32/1d/edges", "sign(-0) is -1", issue="https://example.com/issues/12"),
        BaselineEntry(STAR_ID, "hard sigmoid kink", outcomes=(Outcome.CRASH,)),
        BaselineEntry("ACTIVATION_SOFTSIGN/*/8d/*", "8-D tensors are wrong", pattern=True),
        BaselineEntry("NOTHING/*", "old", pattern=True),
    )


def test_apply(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = run_of(
        case("ELEMENT_WISE_SIGN/FLOAT32/1d/edges", Outcome.FAIL, "2 of 67 elements"),
        case("ACTIVATION_SOFTSIGN/FLOAT16/8d/edges", Outcome.TIMEOUT, "no result in 60 s"),
        case("ACTIVATION_SOFTSIGN/FLOAT32/8d/edges", Outcome.PASS),
        case("ACTIVATION_SOFTSIGN/INT8/8d/edges", Outcome.QUALITY_WARNING, "1 of 8 within the relaxed bound"),
        case("ACTIVATION_SOFTSIGN/FLOAT32/4d/edges", Outcome.FAIL, "new"),
        case(STAR_ID, Outcome.FAIL, "not a crash"),                      # the entry covers CRASH only
        case("ACTIVATION_SOFTSIGN/FLOAT64/8d/edges", Outcome.ERROR, "oracle failed"),   # never baselined
        case("ACTIVATION_SOFTSIGN/UINT8/8d/edges", Outcome.NOT_SUPPORTED, "rejected"),
    )
    out = apply_baseline(run, _baseline(tmp_path))
    got = [(c.outcome, c.message) for c in out.cases]
    assert got == [
        (Outcome.XFAIL, "FAIL: 2 of 67 elements (baseline: sign(-0) is -1, https://example.com/issues/12)"),
        (Outcome.XFAIL, "TIMEOUT: no result in 60 s (baseline: 8-D tensors are wrong)"),
        (Outcome.XPASS, "PASS; expected to fail (baseline: 8-D tensors are wrong)"),
        (Outcome.XPASS, "QUALITY_WARNING: 1 of 8 within the relaxed bound; expected to fail "
                        "(baseline: 8-D tensors are wrong)"),
        (Outcome.FAIL, "new"),
        (Outcome.FAIL, "not a crash"),
        (Outcome.ERROR, "oracle failed"),
        (Outcome.XPASS, "NOT_SUPPORTED: rejected; expected to fail (baseline: 8-D tensors are wrong)"),
    ]
    assert out.baseline is not None and out.baseline.stale == ("NOTHING/*",)
    assert [original_outcome(c) for c in out.cases[:4]] == [Outcome.FAIL, Outcome.TIMEOUT, Outcome.PASS,
                                                           Outcome.QUALITY_WARNING]


def test_an_interrupted_run_reports_no_stale_entry(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Cases a Ctrl-C'd run never reached may be the very ones an entry names."""
    run = replace(run_of(case("ELEMENT_WISE_SIGN/FLOAT32/1d/edges", Outcome.FAIL, "x")), interrupted=True)
    out = apply_baseline(run, _baseline(tmp_path))
    assert out.cases[0].outcome is Outcome.XFAIL
    assert out.baseline is not None and out.baseline.stale == ()


def test_known_failures_do_not_fail_the_run_and_xpass_fails_only_strict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    b = _baseline(tmp_path)
    failing = run_of(case("ELEMENT_WISE_SIGN/FLOAT32/1d/edges", Outcome.CRASH), case("X/FLOAT32/a", Outcome.PASS))
    assert failing.failed and not apply_baseline(failing, b).failed
    fixed = apply_baseline(run_of(case("ELEMENT_WISE_SIGN/FLOAT32/1d/edges", Outcome.PASS)), b)
    assert fixed.cases[0].outcome is Outcome.XPASS and not fixed.failed
    strict = apply_baseline(run_of(case("ELEMENT_WISE_SIGN/FLOAT32/1d/edges", Outcome.PASS), strict=True), b)
    assert strict.failed
    assert run_of(case("X/FLOAT32/a", Outcome.QUALITY_WARNING), strict=True).failed
    assert not run_of(case("X/FLOAT32/a", Outcome.QUALITY_WARNING)).failed


def test_an_exact_id_with_glob_characters_is_not_a_pattern() -> None:
    entry = BaselineEntry(STAR_ID, "r")
    similar = STAR_ID.replace("Alpha*x", "Alpha*2*x")
    assert stale_keys((entry,), [similar]) == (STAR_ID,)
    assert stale_keys((entry,), [STAR_ID]) == ()
    as_pattern = BaselineEntry(STAR_ID, "r", pattern=True)
    assert stale_keys((as_pattern,), [similar]) == ()


def test_first_matching_pattern_gives_the_reason() -> None:
    b = Baseline("b.yaml", (BaselineEntry("A/*", "first", pattern=True), BaselineEntry("A/F*", "second", pattern=True)))
    out = apply_baseline(run_of(case("A/FLOAT32/x", Outcome.FAIL, "m")), b)
    assert out.cases[0].message == "FAIL: m (baseline: first)" and out.baseline.stale == ()  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "expected"), [
    ("cases:\n  A/B:\n    reasn: typo\n",
     "b.yaml:3:5: error: cases['A/B'].reasn: unknown key 'reasn'; did you mean 'reason'?\n"
     "b.yaml:3:5: error: cases['A/B']: missing 'reason'"),
    ("cases:\n  A/B:\n    reason: r\n    outcomes: [FAIL, BOOM]\n",
     "b.yaml:4:22: error: cases['A/B'].outcomes[1]: unknown outcome 'BOOM'; expected one of FAIL, CRASH, TIMEOUT"),
    ("patterns:\n  'C/*': just a string\n",
     "b.yaml:2:10: error: patterns['C/*']: expected a mapping with reason (and issue, outcomes), got a string "
     "'just a string'"),
    ("cases:\n  A/B:\n    reason: '  '\n", "b.yaml:3:13: error: cases['A/B'].reason: must not be empty"),
    ("version: 2\ncases: {}\n", "b.yaml:1:10: error: version: 2 is not supported; this dmlconform reads version 1"),
    ("extra: 1\n", "b.yaml:1:1: error: extra: unknown key 'extra'; allowed keys: version, cases, patterns"),
    ("# only a comment\n", "b.yaml:1:1: error: empty file: a baseline is a YAML mapping (docs/baseline.md)"),
    ("- a list\n", "b.yaml:1:1: error: a baseline is a YAML mapping, not a list"),
    ("cases:\n  A/B: {reason: r}\n  A/B: {reason: s}\n", "b.yaml:3:3: error: duplicate key 'A/B' (first at 2:3)"),
    ("cases: !!python/object:os.system {}\n", "b.yaml:1:8: error: unsupported YAML tag '!!python/object:os.system'; "
                                             "use plain strings, numbers, booleans, lists and mappings"),
])
def test_bad_files_name_every_problem_at_its_place(tmp_path, text: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "b.yaml", text)
    with pytest.raises(SpecError) as info:
        read_baseline(path)
    assert info.value.render().replace(str(tmp_path) + "/", "") == expected
    assert info.value.exit_code == 2


def test_update_keeps_reasons_issues_and_patterns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    old = _baseline(tmp_path)
    report = apply_baseline(run_of(
        case("ELEMENT_WISE_SIGN/FLOAT32/1d/edges", Outcome.FAIL, "2 of 67"),     # still failing: kept
        case("ACTIVATION_SOFTSIGN/FLOAT16/8d/edges", Outcome.FAIL, "1 of 66"),   # pattern kept
        case(STAR_ID, Outcome.PASS),                                              # fixed: dropped
        case("B/FLOAT16/new", Outcome.CRASH, "signal 11"),                        # new
        case("A/FLOAT16/new", Outcome.FAIL, ""),                                  # new
        case("C/FLOAT16/err", Outcome.ERROR, "harness"),                          # never baselined
        run_id="run-7"), old)
    made = update(report, report.baseline)
    assert made.entries == (
        BaselineEntry("A/FLOAT16/new", "FAIL since run run-7", outcomes=(Outcome.FAIL,)),
        BaselineEntry("B/FLOAT16/new", "CRASH since run run-7: signal 11", outcomes=(Outcome.CRASH,)),
        BaselineEntry("ELEMENT_WISE_SIGN/FLOAT32/1d/edges", "sign(-0) is -1", issue="https://example.com/issues/12"),
        BaselineEntry("ACTIVATION_SOFTSIGN/*/8d/*", "8-D tensors are wrong", pattern=True),
    )
    assert made.kept == ("ACTIVATION_SOFTSIGN/*/8d/*", "ELEMENT_WISE_SIGN/FLOAT32/1d/edges")
    assert made.added == ("A/FLOAT16/new", "B/FLOAT16/new")
    assert made.dropped == (f"{STAR_ID}: its 1 case no longer fails", "NOTHING/*: matches no case in the report (stale)")
    assert made.skipped == ("C/FLOAT16/err",)
    text = dumps_baseline(made.entries)
    assert dumps_baseline(update(report, report.baseline).entries) == text   # deterministic
    assert read_baseline(write(tmp_path, "new.yaml", text)).entries == made.entries
    assert "    outcomes: [FAIL]\n" in text and text.startswith("# dmlconform baseline")


def test_update_without_old_baseline_uses_the_xfail_message() -> None:
    report = run_of(case("A/FLOAT32/x", Outcome.XFAIL, "TIMEOUT: no result (baseline: slow)"), run_id="r9")
    made = update(report, None)
    assert made.entries == (BaselineEntry("A/FLOAT32/x", "TIMEOUT since run r9: no result", outcomes=(Outcome.TIMEOUT,)),)


ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_written_baseline_reads_back(tmp_path_factory, data) -> None:  # type: ignore[no-untyped-def]
    """Any id (quotes, colons, '#', leading spaces, unicode) survives a write and a read."""
    keys = data.draw(st.lists(ids, unique=True, max_size=6), label="keys")
    reason = data.draw(st.text(min_size=1, max_size=20).filter(str.strip), label="reason")
    patterns = data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)), label="patterns")
    entries = tuple(BaselineEntry(k, reason, pattern=p, issue="" if p else "x")
                    for k, p in zip(keys, patterns) if not p or k.strip())
    ordered = tuple(e for e in entries if not e.pattern) + tuple(e for e in entries if e.pattern)
    path = write(tmp_path_factory.mktemp("rt"), "b.yaml", dumps_baseline(ordered))
    assert read_baseline(path).entries == ordered


# --- issue #20: the file is checked before it is read ------------------------------------


def test_an_oversized_baseline_is_refused_before_reading(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "baseline.yaml"
    with path.open("wb") as fh:
        fh.truncate(16 * 1024 * 1024 + 1)  # sparse: nothing is written, nothing need be read
    with pytest.raises(SpecError) as info:
        read_baseline(path)
    assert info.value.render() == (
        f"{path}: error: 16,777,217 bytes is more than a baseline or tolerance file may hold (16 MiB); a baseline "
        "of 2,339 failures is about 600 KB: check that this is the right file")


@needs_fifos
def test_a_fifo_baseline_is_refused_without_blocking(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with fifo(tmp_path / "baseline.yaml") as path, pytest.raises(SpecError) as info:
        read_baseline(path)
    assert info.value.render() == (f"{path}: error: a FIFO (named pipe), not a regular file: only regular files "
                                   "are read; name the file itself")
