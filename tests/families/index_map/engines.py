"""What the index-map family's engine tests share: a suite through a real
engine, every result PASS or NOT_SUPPORTED, every refusal one of the
reasons docs/index-map.md "Engines" gives."""

from __future__ import annotations

from collections.abc import Sequence

from dmlconform.cases.model import Case
from dmlconform.results import CaseResult, Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m


def through(pairs: Sequence[tuple[m.Spec, Case]], backend: object, refusals: tuple[str, ...]) -> list[CaseResult]:
    """The results of ``pairs`` on ``backend``, after asserting that none
    FAILs and that each refusal gives one of ``refusals``."""
    results = list(run_cases(list(pairs), backend))
    wrong = [f"{r.case_id}: {r.message}" for r in results if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert not wrong, wrong[:3]
    refused = [r.message for r in results if r.outcome is Outcome.NOT_SUPPORTED]
    assert all(any(s in message for s in refusals) for message in refused), refused[:3]
    return results
