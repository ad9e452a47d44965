"""The softmax family (issue #24): ACTIVATION_SOFTMAX, LOG_SOFTMAX, HARDMAX
and their ``1`` versions.  Its claim, its cases, the oracle's values,
bounds and readings, the CPU reference at 0 FAIL, the planted faults caught
where they break, and the doc's worked examples (docs/softmax.md)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.errors import SpecError
from dmlconform.families import family_of
from dmlconform.families.elementwise import oracle as elementwise
from dmlconform.families.softmax.cases import generable, generate
from dmlconform.families.softmax.oracle import SoftmaxOracle, bounds, expected_values
from dmlconform.families.softmax.semantics import Function, Softmax
from dmlconform.report.readings import summarize
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

OPS = ("ACTIVATION_SOFTMAX", "ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1",
       "ACTIVATION_HARDMAX", "ACTIVATION_HARDMAX1")


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


@cache
def _cases(op: str, level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[Case, ...]:
    return tuple(generate(_spec(op), level, seed=0))


def _run(backend: CpuBackend, op: str, level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[CaseResult, ...]:
    return run_cases([(_spec(op), c) for c in _cases(op, level)], backend)


def _by_id(op: str, case_id: str) -> Case:
    return next(c for c in _cases(op) if c.id == case_id)


@pytest.mark.parametrize("op", OPS)
def test_the_softmax_family_claims_each_operator_and_the_formula_family_none(op: str) -> None:
    family, reason = family_of(_spec(op))
    assert family is not None and family.name == "softmax" and reason == "ok"
    assert not elementwise.claims(_spec(op))[0]  # tested once, by this family only


def test_the_suite_has_what_the_issue_asks_for() -> None:
    ids = {c.id for c in _cases("ACTIVATION_SOFTMAX1")}
    for n in (1, 2, 7, 33, 257, 1000):
        assert f"ACTIVATION_SOFTMAX1/FLOAT32/4d/axes=3/n{n}/random" in ids
    for part in ("axes=2,0/n8/random", "axes=0,1,2,3/n120/random", "axes=3/n7/posinf", "axes=3/n7/neginf",
                 "axes=3/n33/large", "axes=3/n7/random/padded", "axes=3/n7/random/broadcast", "1d/axes=0/n3/random",
                 "8d/axes=7/n2/random", "axes=0,2/n8/nan"):
        assert f"ACTIVATION_SOFTMAX1/FLOAT16/{part.replace('4d/', '')}" in ids or \
            f"ACTIVATION_SOFTMAX1/FLOAT16/4d/{part}" in ids, part
    assert "ACTIVATION_HARDMAX1/FLOAT32/3d/axes=0,2/n4/example3" in {c.id for c in _cases("ACTIVATION_HARDMAX1")}
    negatives = [c.id for c in _cases("ACTIVATION_SOFTMAX") if not c.expect_supported]
    assert negatives == ["ACTIVATION_SOFTMAX/FLOAT32/4d/n5/random/unsupported",  # effective rank 3
                         "ACTIVATION_SOFTMAX/FLOAT16/4d/n5/random/unsupported",
                         "ACTIVATION_SOFTMAX/FLOAT64/4d/n1/random/unsupported"]
    assert {c.dimension_count for c in _cases("ACTIVATION_SOFTMAX", m.FeatureLevel.FL_1_0)} == {4}
    assert not list(generate(_spec("ACTIVATION_SOFTMAX1"), m.FeatureLevel.FL_6_4, seed=0,
                             keep=lambda i, t: t is m.DataType.INT8))


def test_cases_are_reproducible_and_differ_by_seed() -> None:
    spec = _spec("ACTIVATION_LOG_SOFTMAX1")
    one = {c.id: c.inputs[0].buffer for c in generate(spec, m.FeatureLevel.FL_6_4, seed=3)}
    again = {c.id: c.inputs[0].buffer for c in generate(spec, m.FeatureLevel.FL_6_4, seed=3)}
    other = {c.id: c.inputs[0].buffer for c in generate(spec, m.FeatureLevel.FL_6_4, seed=4)}
    key = "ACTIVATION_LOG_SOFTMAX1/FLOAT32/4d/axes=1,3/n15/random"
    assert all(np.array_equal(one[k], again[k], equal_nan=True) for k in one)
    assert not np.array_equal(one[key], other[key])


@pytest.mark.parametrize("level", [m.FeatureLevel.FL_6_4, m.FeatureLevel.FL_1_0])
@pytest.mark.parametrize("op", OPS)
def test_the_cpu_reference_passes_every_case(op: str, level: m.FeatureLevel) -> None:
    if level < m.FeatureLevel.FL_5_1 and op.endswith("1"):  # introduced at 5_1
        assert generable(_spec(op), level) == (False, f"{op}: no cases at {level.short}: no support table or "
                                                      "dimension count there")
        return
    results = _run(CpuBackend(feature_level=level.short), op, level)
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results
           if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert not bad, "\n".join(bad[:5])
    assert all(r.outcome is Outcome.PASS for r in results if r.expect_supported)


@pytest.mark.parametrize(("fault", "op", "where"), [
    ("softmax-no-max-subtraction", "ACTIVATION_SOFTMAX", {"large", "small"}),
    # exp(234) of the doc's examples overflows too.  ``range`` (every value -1 to -200) does not overflow:
    # there the fault is the log of an underflowed softmax: -inf where the exact result is finite, a loss
    # of range that FAILs (issue #32 item 2), as log(softmax(x)) does (log-softmax-of-softmax)
    ("softmax-no-max-subtraction", "ACTIVATION_LOG_SOFTMAX1", {"large", "small", "example1", "example2",
                                                               "example3", "range"}),
    ("log-softmax-of-softmax", "ACTIVATION_LOG_SOFTMAX", {"range"}),
    ("hardmax-last-tie", "ACTIVATION_HARDMAX", {"equal", "ties", "zeros", "neginf", "posinf"}),
    ("hardmax-last-tie", "ACTIVATION_HARDMAX1", {"equal", "ties", "zeros", "neginf", "posinf"}),
])
def test_each_fault_fails_where_it_breaks(fault: str, op: str, where: set[str]) -> None:
    """Exactly there (hardmax: also where FLOAT16 rounding makes ties of random values)."""
    results = _run(FaultyBackend(fault), op)
    failed = {r.case_id.split("/")[-1] for r in results if r.outcome is Outcome.FAIL}
    if fault == "hardmax-last-tie":
        failed -= {r.case_id.split("/")[-1] for r in results if r.outcome is Outcome.FAIL and r.dtype == "FLOAT16"
                   and any(k in r.case_id for k in ("/random", "/small", "/large", "/range"))}
    assert failed == where


def test_a_dropped_term_and_the_wrong_axis_fail_the_random_cases() -> None:
    dropped = {r.case_id for r in _run(FaultyBackend("softmax-dropped-term"), "ACTIVATION_SOFTMAX1")
               if r.outcome is Outcome.FAIL}
    assert "ACTIVATION_SOFTMAX1/FLOAT32/4d/axes=3/n1000/random" in dropped
    assert "ACTIVATION_SOFTMAX1/FLOAT16/4d/axes=3/n8/equal" in dropped
    wrong = {r.case_id for r in _run(FaultyBackend("softmax-wrong-axis"), "ACTIVATION_LOG_SOFTMAX")
             if r.outcome is Outcome.FAIL}
    assert "ACTIVATION_LOG_SOFTMAX/FLOAT32/4d/n7/random" in wrong


def _expect(op: str, case_id: str) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    batch = SoftmaxOracle.of(_spec(op)).bind([_by_id(op, case_id)], flush_subnormals=False)
    (e,) = batch.expect(0, batch.expected.size)
    return e.expected, {a.name: (a.index, a.values) for a in e.alternatives}


def test_positive_infinity_readings_are_offered_and_the_reference_took_nan() -> None:
    expected, alts = _expect("ACTIVATION_SOFTMAX", "ACTIVATION_SOFTMAX/FLOAT32/4d/n7/posinf")
    assert np.isnan(expected[3]) and np.all(expected[[0, 1, 2, 4, 5, 6]] == 0)  # literal: inf / inf, x / inf
    index, values = alts["reading:positive-infinity:limit"]
    assert values[index == 3] == 1.0 and values[index == 7] == 0.5 and values[index == 13] == 0.5
    assert np.isnan(alts["reading:positive-infinity:nan"][1]).all()
    results = _run(CpuBackend(), "ACTIVATION_SOFTMAX")
    taken = {(t.ambiguity, t.status) for t in summarize(results)}
    assert ("positive-infinity", "took nan") in taken


def test_hardmax_readings_nan_signed_zero_and_axes_order() -> None:
    expected, alts = _expect("ACTIVATION_HARDMAX", "ACTIVATION_HARDMAX/FLOAT32/4d/n7/nan")
    groups = expected.reshape(3, 7)
    assert groups[0, 3] == 1 and groups[1, 0] == 1  # the first NaN is the largest
    assert {"reading:nan:skipped", "reading:nan:running"} <= set(alts)
    assert 7 not in alts["reading:nan:running"][0].tolist()  # a group that starts with NaN keeps its first
    _, zeros = _expect("ACTIVATION_HARDMAX", "ACTIVATION_HARDMAX/FLOAT32/4d/n7/zeros")
    index, values = zeros["reading:signed-zero-tie:total-order"]
    assert index.tolist() == [0, 1] and values.tolist() == [0.0, 1.0]  # -0 then +0: totalOrder picks +0
    _, ties = _expect("ACTIVATION_HARDMAX1", "ACTIVATION_HARDMAX1/FLOAT32/4d/axes=2,0/n8/ties")
    assert ties["reading:axes-order:axes-order"][0].size > 0
    _, same = _expect("ACTIVATION_HARDMAX1", "ACTIVATION_HARDMAX1/FLOAT32/4d/axes=0,2/n8/ties")
    assert "reading:axes-order:axes-order" not in same  # in increasing order both readings agree


def test_all_negative_infinity_and_log_of_underflow_readings() -> None:
    expected, alts = _expect("ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX/FLOAT32/4d/n7/neginf")
    assert expected[3] == -np.inf and np.isnan(expected[7:14]).all()
    np.testing.assert_array_equal(alts["reading:all-negative-infinity:uniform"][1], np.float32(-np.log(7)))
    # log-of-underflow's literal reading is -inf where the softmax underflows float32: there the exact
    # result (down to -199) is finite and normal, so the reading would be a loss of range and is not
    # offered (issue #32 item 2; docs/ambiguities.md): a backend giving -inf FAILs.
    expected, alts = _expect("ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX/FLOAT32/4d/n33/range")
    assert np.min(expected) < np.log(2.0 ** -126) and np.all(np.isfinite(expected))
    assert "reading:log-of-underflow:literal" not in alts


def test_the_effective_rank_reading_reduces_the_trailing_dimensions() -> None:
    spec = _spec("ACTIVATION_SOFTMAX")
    assert isinstance(spec.semantics, Softmax)
    x = np.arange(30, dtype=np.float64).reshape(1, 2, 3, 5) / 10
    last = expected_values(spec.semantics, x, (3,), m.DataType.FLOAT32)
    trailing = expected_values(spec.semantics, x, (3,), m.DataType.FLOAT32, frozenset({("effective-rank", "trailing")}))
    np.testing.assert_allclose(last.sum(axis=3), 1.0)
    np.testing.assert_allclose(trailing.sum(axis=(2, 3)), 1.0)


def test_softmax_of_equal_values_in_a_power_of_two_group_is_exact() -> None:
    batch = SoftmaxOracle.of(_spec("ACTIVATION_SOFTMAX")).bind(
        [_by_id("ACTIVATION_SOFTMAX", "ACTIVATION_SOFTMAX/FLOAT32/4d/n8/equal")], flush_subnormals=False)
    (e,) = batch.expect(0, 24)
    assert np.all(e.expected == 0.125) and e.bound_strict is not None and not e.bound_strict.any()


def test_the_doc_examples_are_cases_and_hardmax1_prints_them_right() -> None:
    spec = _spec("ACTIVATION_HARDMAX1")
    assert isinstance(spec.semantics, Softmax)
    for example in spec.semantics.examples:
        expected, _ = _expect("ACTIVATION_HARDMAX1", f"ACTIVATION_HARDMAX1/FLOAT32/3d/axes={','.join(map(str, example.axes))}"
                                                     f"/n{2 * len(example.axes)}/{example.name}")
        assert expected.tolist() == list(example.printed)


def _overlay(tmp_path: Path, op: str, edit: str, replacement: str) -> Path:
    (tmp_path / "reviewed").mkdir()
    (tmp_path / f"{op}.yaml").write_text((REPO / "specs" / f"{op}.yaml").read_text())
    text = (REPO / "specs" / "reviewed" / f"{op}.yaml").read_text()
    assert edit in text
    (tmp_path / "reviewed" / f"{op}.yaml").write_text(text.replace(edit, replacement, 1))
    return tmp_path / f"{op}.yaml"


def test_log_softmax1_examples_are_hardmax_outputs_and_must_be_recorded(tmp_path: Path) -> None:
    path = _overlay(tmp_path, "ACTIVATION_LOG_SOFTMAX1", "    mistake: \"the page prints the HARDMAX1 "
                    "example output (1 at each group largest element), not log-softmax values\"\n", "")
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    assert raised.value.message == (
        "example example1: the doc's output disagrees with the log-softmax of its input at 8 of 8 elements ([0] "
        "prints 1, is 0, [1] prints 0, is -11, [2] prints 0, is -113); fix the semantics, or record the doc's "
        "error under `mistake`")
    assert (raised.value.line, raised.value.column) == (22, 13)


def test_a_recorded_mistake_that_is_none_is_refused(tmp_path: Path) -> None:
    path = _overlay(tmp_path, "ACTIVATION_HARDMAX1", "    output: [1, 0, 0, 1, 1, 1, 0, 0]\n",
                    "    output: [1, 0, 0, 1, 1, 1, 0, 0]\n    mistake: wrong\n")
    with pytest.raises(SpecError, match="example example1: the doc's output agrees with the hardmax of its input, "
                                        "but `mistake` says it is wrong; delete `mistake`"):
        load_spec(path)


def _sloppy(function: Function, x: np.ndarray, axes: tuple[int, ...], work: type) -> list[np.ndarray]:
    """Honest implementations other than the reference's, computing in ``work``."""
    f = x.astype(work)
    shifted = f - f.max(axis=axes, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=axes, keepdims=True, dtype=work)
    if function is Function.SOFTMAX:
        return [e * (work(1) / total), np.exp(shifted - np.log(total))]
    y = e / total
    # the log of a softmax below the normal range lost its range before the log (issue #32 item 2):
    # honest only where the softmax is normal, NaN elsewhere (not compared)
    normal = np.abs(y) >= np.finfo(work).smallest_normal
    with np.errstate(divide="ignore"):
        return [np.where(normal, np.log(np.where(normal, y, 1)), np.nan).astype(work), shifted - np.log(total)]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_honest_implementations_stay_within_the_strict_bound(data: st.DataObject) -> None:
    """In float32, and in FLOAT16 throughout (the bound a backend that
    declares FLOAT16 accumulation gets), over ranges wide enough that the
    softmax underflows the accumulator, its subnormals and float64 (a log
    of such a softmax once got a NaN bound, which FAILed every value)."""
    function = data.draw(st.sampled_from([Function.SOFTMAX, Function.LOG_SOFTMAX]), label="function")
    work, acc, unit = data.draw(st.sampled_from([(np.float32, m.DataType.FLOAT32, 2.0 ** -24),
                                                 (np.float16, m.DataType.FLOAT16, 2.0 ** -11)]), label="type")
    sizes = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=4), label="sizes")
    scale = data.draw(st.floats(0.1, 60.0) | st.floats(60.0, 800.0 if work is np.float32 else 30000.0),
                      label="scale")
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label="seed")
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(sizes) - 1), min_size=1), label="axes")))
    x = np.random.default_rng(seed).uniform(-scale, scale, size=sizes).astype(work).astype(np.float64)
    sem = _spec("ACTIVATION_SOFTMAX1").semantics if function is Function.SOFTMAX else \
        _spec("ACTIVATION_LOG_SOFTMAX1").semantics
    assert isinstance(sem, Softmax)
    value = expected_values(sem, x, axes, acc)
    strict, _ = bounds(sem, x, axes, value, unit, acc, np.dtype(work))
    expected = value.astype(work).astype(np.float64)
    assert not np.isnan(strict[np.isfinite(expected)]).any()
    for got in _sloppy(function, x, axes, work):
        error = np.abs(got.astype(np.float64) - expected)
        finite = np.isfinite(got) & np.isfinite(expected)
        assert np.all(error[finite] <= strict[finite]), (function, sizes, axes, float(np.max(error - strict)))


@pytest.mark.parametrize(("acc", "out"), [(m.DataType.FLOAT32, np.float32), (m.DataType.FLOAT32, np.float16),
                                          (m.DataType.FLOAT16, np.float16)])
def test_log_softmax_bounds_stay_under_the_value_where_the_softmax_underflows(acc: m.DataType, out: type) -> None:
    """The log of a softmax below the accumulator's normal range lost its range before the log
    (issue #32 items 1 and 2): the bound that covered it was 248 at -335 in the doc's first example
    (FLOAT16), 146.7 at -234, 68.9 at -156, and let -103 (the log of float32's smallest subnormal)
    through.  Within 2^-8 of every value of magnitude 16 or more now with a float32 accumulator; with a
    FLOAT16 one, the log's own LOG_ULP ULPs are 2^-8 of the value already, so within 2^-6."""
    sem = _spec("ACTIVATION_LOG_SOFTMAX1").semantics
    assert isinstance(sem, Softmax)
    x = np.array([[0.0, -1.0, -9.0, -87.0, -104.0, -156.0, -234.0, -335.0]])
    value = expected_values(sem, x, (1,), acc)
    unit = 2.0 ** -24 if acc is m.DataType.FLOAT32 else 2.0 ** -11
    limit = 2.0 ** -8 if acc is m.DataType.FLOAT32 else 2.0 ** -6
    for bound in bounds(sem, x, (1,), value, unit, acc, np.dtype(out)):
        large = np.abs(value) >= 16  # where a softmax underflows FLOAT16 (below e^-9.7) or float32 (e^-87.3)
        assert np.all(bound[large] <= np.abs(value[large]) * limit), (bound, value)
