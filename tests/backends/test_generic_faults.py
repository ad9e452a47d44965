"""The generic planted faults (issue #32 item 1) over the whole default
suite: every check can fail.  Each fault breaks every operator of every
family; on each operator x data type where it changes an output it must
FAIL at least one case, and ``zero-output`` must FAIL every float case with
an expected element of magnitude 1 or more (a bound wider than the value it
bounds is a bug).  A family added later is covered with no work of its own:
the suite is every spec a family tests.

Slow (the whole suite once per fault, in this process, about 10 s each on
an idle core): .ci/run runs this file with ``-m slow``.  The oracle never
sees what a backend wrote, so the faults of one process are judged against
expectations computed once (`kept`): about half of a fault's time was its
oracles computing the same values again."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from dmlconform import runner
from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import GENERIC, FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import Oracles, cases_of, family_of
from dmlconform.oracles.base import BatchExpectation, Expectation, FamilyOracle, compare_elements
from dmlconform.plan import COMPARE_ELEMENTS
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec.files import spec_files
from dmlconform.spec.model import DataType, FeatureLevel
from tests.conftest import REPO

LEVEL = max(FeatureLevel)
FAULTS = ("zero-output", "negate-output", "scaled-output", "nan-output", "input-copied")
PASSING = (Outcome.PASS, Outcome.QUALITY_WARNING)


@pytest.fixture(scope="module")
def suite() -> list:
    specs = [load_spec(p) for p in spec_files([REPO / "specs"])]
    return [(spec, case) for spec in specs if family_of(spec)[0] is not None
            for case in cases_of(spec, LEVEL, seed=0) if case.expect_supported]


class _Kept:
    """A batch's expectations, each range computed once."""

    def __init__(self, bound: BatchExpectation) -> None:
        self.bound = bound
        self.made: dict[tuple[int, int], tuple[Expectation, ...]] = {}
        # the blocks its family asks the judge for (`oracles.base.compare_elements`), as the run asks them
        self.compare_elements = compare_elements(bound, COMPARE_ELEMENTS)

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        if (lo, hi) not in self.made:
            self.made[lo, hi] = self.bound.expect(lo, hi)
        return self.made[lo, hi]

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        return self.bound.inputs_at(output, flat)


class _KeptOracle:
    """An operator's oracle whose batches are kept in ``kept`` by what
    decides their values: the cases (ids of one suite) and the binding's options."""

    def __init__(self, oracle: FamilyOracle, kept: dict) -> None:  # type: ignore[type-arg]
        self.oracle, self.kept = oracle, kept

    def bind(self, cases: list[Case], *, flush_subnormals: bool, float16_accumulation: bool = False) -> _Kept:
        key = (tuple(c.id for c in cases), flush_subnormals, float16_accumulation)
        if key not in self.kept:
            self.kept[key] = _Kept(self.oracle.bind(cases, flush_subnormals=flush_subnormals,
                                                    float16_accumulation=float16_accumulation))
        return self.kept[key]


@pytest.fixture(scope="module")
def kept() -> dict:  # type: ignore[type-arg]
    """The suite's expectations, shared by the faults this process runs."""
    return {}


def _changes(spec, case, fault) -> bool:
    """Whether ``fault`` changes an output of ``case`` (bits, NaN payloads aside)."""
    buffers = {t.name: np.array(t.buffer) for t in (*case.inputs, *case.outputs)}
    for out, inp in case.aliases:
        buffers[out] = buffers[inp]
    CpuBackend().run(spec, case, buffers)
    before = {t.name: np.array(t.view(buffers[t.name])) for t in case.outputs}
    with np.errstate(all="ignore"):  # as the faulty backend plants it
        GENERIC[fault](spec, case, buffers)
    for t in case.outputs:
        a, b = before[t.name], t.view(buffers[t.name])
        same = (a == b) | ((a != a) & (b != b)) if a.dtype.kind == "f" else a == b
        if not np.all(same):
            return True
    return False


def _within_budget(fault: str, case) -> bool:
    """Whether ``fault`` may stay within an honest budget of ``case``: 1 + 2^-8
    is 2 to 4 ULP of a FLOAT16 output, which the doc-derived budgets of
    several operators allow (ERF 5 ULP, PARAMETRIC_SOFTPLUS 8 ULP strict) and
    the relaxed tier (RELAXED_FACTOR x 2 ULP) of the others reports as a
    QUALITY_WARNING; in FLOAT32 it is 2^15 ULP and must FAIL."""
    return fault == "scaled-output" and any(t.dtype is DataType.FLOAT16 for t in case.outputs)


def _largest_expected(oracles: Oracles, spec, case) -> float:
    n = int(np.prod(case.outputs[0].sizes))
    expected = oracles.get(spec).bind([case], flush_subnormals=False).expect(0, n)[0].expected
    finite = expected[np.isfinite(expected.astype(np.float64))] if expected.dtype.kind == "f" else expected
    return float(np.max(np.abs(finite.astype(np.float64)))) if finite.size else 0.0


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_every_generic_fault_fails_where_it_changes_the_output(fault: str, suite: list, kept: dict,  # type: ignore[type-arg]
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    class KeptOracles(Oracles):
        def get(self, spec):  # type: ignore[no-untyped-def]
            return _KeptOracle(super().get(spec), kept)

    monkeypatch.setattr(runner, "Oracles", KeptOracles)
    results = run_cases(suite, FaultyBackend(faults=fault))
    caught: dict[tuple[str, str], bool] = defaultdict(bool)
    changed: set[tuple[str, str]] = set()
    through: list[str] = []
    oracles = Oracles()
    for (spec, case), result in zip(suite, results):
        group = (spec.operator, case.dtype.name)
        if result.outcome not in PASSING:
            caught[group] = True
            continue
        if _within_budget(fault, case):
            continue
        if not _changes(spec, case, fault):
            continue
        changed.add(group)
        if fault == "zero-output" and case.outputs[0].dtype.is_float and _largest_expected(oracles, spec, case) >= 1:
            through.append(f"{case.id}: {result.outcome.name} with every output 0")
    through += [f"{op}/{dtype}: no case FAILs" for op, dtype in sorted(changed) if not caught[(op, dtype)]]
    assert not through, "\n".join(through)
