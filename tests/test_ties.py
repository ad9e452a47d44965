"""Issue #32 item 4: readings the doc ties together must agree across a
run's cases (`dmlconform.ties`, docs/ambiguities.md "Readings that must
agree").  A backend whose REDUCE MAX/MIN skip NaN while its ARGMAX/ARGMIN
pick it passed, reported "mixed (propagate 8, ignore 8)"; it now FAILs,
naming both readings.  Backends that take one reading everywhere, or mix
them element by element (a left fold whose NaN rule depends on where the
NaN is), still pass, and readings that real hardware mixes element by
element (numpy's conversions) are no tie."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, writable_view
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.reduction.cases import axes_of, function_of, last_wins, semantics_of
from dmlconform.report.readings import summarize
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from dmlconform.ties import agreed
from tests.conftest import REPO

OPS = ("REDUCE", "ARGMAX", "ARGMIN")


@cache
def _pairs() -> tuple[tuple[m.Spec, Case], ...]:
    """The NaN cases of REDUCE's MAX, MIN, ARGMAX, ARGMIN and of ARGMAX and ARGMIN, FLOAT32."""
    found = []
    for op in OPS:
        spec = load_spec(REPO / "specs" / f"{op}.yaml")
        found += [(spec, c) for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0)
                  if c.dtype is m.DataType.FLOAT32 and "nan" in c.id
                  and (op != "REDUCE" or any(f"/{f}/" in c.id for f in ("max", "min", "argmax", "argmin")))]
    return tuple(found)


class _Max(CpuBackend):
    """The cpu reference with REDUCE's MAX and MIN skipping NaN (``np.fmax``),
    or with every function of the three operators a left fold of C's
    ``best < x`` (``fold``: a NaN wins only where it comes first, in MAX
    and in ARGMAX alike)."""

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def run(self, spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        super().run(spec, case, buffers)
        sem = semantics_of(spec)
        function = function_of(sem, case)
        if function not in ("MAX", "MIN", "ARGMAX", "ARGMIN") or (self.how == "skip" and function.startswith("ARG")):
            return
        x = case.inputs[0].view(buffers.get(case.inputs[0].name))
        axes = tuple(sorted(axes_of(sem, case)))
        kept = tuple(i for i in range(x.ndim) if i not in axes)
        lined = np.transpose(x, kept + axes).reshape(tuple(x.shape[i] for i in kept) + (-1,))
        out = case.outputs[0]
        if self.how == "skip":
            y = (np.fmax if function == "MAX" else np.fmin).reduce(lined, axis=-1)
        else:
            y = _fold(lined[..., ::-1] if last_wins(sem, case) else lined, function)
            if function.startswith("ARG") and last_wins(sem, case):
                y = lined.shape[-1] - 1 - y
        writable_view(out, buffers[out.name])[...] = y.astype(writable_view(out, buffers[out.name]).dtype).reshape(
            out.sizes)


def _fold(lined: np.ndarray, function: str) -> np.ndarray:
    """C's ``if (best < x) best = x`` (``>`` for MIN) along the last axis:
    the value, or the index for ARGMAX and ARGMIN."""
    best, index = lined[..., 0].copy(), np.zeros(lined.shape[:-1], dtype=np.int64)
    for k in range(1, lined.shape[-1]):
        x = lined[..., k]
        better = best < x if function in ("MAX", "ARGMAX") else best > x
        best, index = np.where(better, x, best), np.where(better, k, index)
    return index if function.startswith("ARG") else best


def _run(backend: CpuBackend) -> tuple[CaseResult, ...]:
    pairs = _pairs()
    return agreed(pairs, run_cases(pairs, backend))


def _statuses(results: tuple[CaseResult, ...]) -> dict[str, str]:
    return {f"{t.operator} {t.ambiguity}": t.status for t in summarize(results)}


def test_max_skipping_nan_beside_argmax_picking_it_fails_naming_both() -> None:
    pairs = _pairs()
    plain = run_cases(pairs, _Max("skip"))
    assert all(r.outcome is Outcome.PASS for r in plain)  # each case alone has a reading: PASS before the tie
    assert _statuses(plain)["REDUCE nan-max-min"] == "mixed"
    results = agreed(pairs, plain)
    failed = [r for r in results if r.outcome is Outcome.FAIL]
    assert {r.case_id.split("/")[0] for r in failed} == set(OPS)
    assert any("/max/" in r.case_id for r in failed) and any("/argmax/" in r.case_id for r in failed)
    message = failed[0].message
    assert message.startswith("nan-max-min readings disagree on FLOAT32: ignore (REDUCE DML_REDUCE_FUNCTION_MAX")
    assert "propagate (ARGMAX, ARGMIN, REDUCE DML_REDUCE_FUNCTION_ARGMAX" in message
    assert all(r.message == message for r in failed)


@pytest.mark.parametrize("backend", [CpuBackend(), _Max("fold")], ids=["cpu", "c-fold"])
def test_one_reading_everywhere_passes(backend: CpuBackend) -> None:
    """The cpu reference propagates NaN everywhere; the C fold in every
    function skips it everywhere in these cases (no NaN comes first)."""
    results = _run(backend)
    assert [r.case_id for r in results if r.outcome is not Outcome.PASS] == []
    taken = {t.status for t in summarize(results) if t.ambiguity == "nan-max-min"}
    assert taken == ({"took primary"} if type(backend) is CpuBackend else {"took ignore"})


def _with(result: CaseResult, explained: dict[str, int]) -> CaseResult:
    """``result`` (a case with 2 elements where NaN's readings differ) as if its elements were explained so."""
    counts = {"reading:nan-max-min=propagate": explained["propagate"],
              "reading:nan-max-min:ignore": explained["ignore"]}
    readings = tuple((name, 2, counts[name]) if name in counts else (name, elements, explained_)
                     for name, elements, explained_ in result.readings)
    return replace(result, readings=readings)


@pytest.mark.parametrize(("mine", "failed"), [
    ({"max": (1, 1), "min": (1, 1)}, []),              # MAX and MIN mixed element by element: they agree with any
    ({"max": (1, 1), "min": (0, 2)}, ["min", "argmax", "argmin", "ARGMAX", "ARGMIN"]),  # MIN ignore, ARG* propagate
    ({"max": (2, 0), "min": (2, 0)}, []),              # every side propagate
])
def test_a_side_that_mixed_agrees_and_two_single_readings_must_match(
        mine: dict[str, tuple[int, int]], failed: list[str]) -> None:
    """The rule on the cpu reference's results, with REDUCE MAX's and MIN's
    counts replaced: (propagate, ignore) elements explained of 2."""
    pairs = _pairs()
    results = list(run_cases(pairs, CpuBackend()))
    for k, r in enumerate(results):
        for function, (propagate, ignore) in mine.items():
            if r.case_id.startswith("REDUCE/") and f"/{function}/" in r.case_id:
                results[k] = _with(r, {"propagate": propagate, "ignore": ignore})
    got = [r.case_id for r in agreed(pairs, results) if r.outcome is Outcome.FAIL]
    wanted = [r.case_id for r in results if any(f"/{f}/" in r.case_id if f.islower() else r.case_id.startswith(f + "/")
                                                for f in failed)]
    assert got == wanted


def test_the_run_command_reports_the_disagreement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`dmlconform run` applies the tie: the planted backend's run exits 1."""
    from dmlconform.backends import registry
    from dmlconform.cli import main

    monkeypatch.setattr(registry, "load_backend", lambda name, options: _Max("skip"))  # --no-isolate builds it here
    args = ["run", "--backend", "nan-skipping", "--no-isolate", "--no-progress", "--op", "REDUCE", "--op", "ARGMAX",
            "--dtype", "FLOAT32", "-k", "nan", "-o", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "nan-max-min readings disagree" in (tmp_path / "out" / "report.json").read_text()


def test_only_the_orders_the_doc_defines_once_are_tied() -> None:
    """docs/ambiguities.md "Readings that must agree": NaN through max and
    min, and how arg indices flatten, in REDUCE, ARGMAX and ARGMIN; every
    other ambiguity (conversions, NaN through a formula, overflow, ...) may
    take its readings element by element."""
    tied = sorted((spec.operator, a.id, a.tie.group, a.tie.by) for path in sorted((REPO / "specs").glob("*.yaml"))
                  for spec in [load_spec(path)] for a in spec.ambiguities if a.tie is not None)
    assert tied == [(op, a, a, "Function" if op == "REDUCE" else "") for op in OPS[1:] + OPS[:1]
                    for a in ("arg-axes-order", "nan-max-min")]
