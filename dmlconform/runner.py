"""One runner for every backend: ask, bind, run, then judge.

DESIGN.md, "Data flow" and "Comparison, verdicts and reports".  For each case
the runner asks the backend whether it supports the configuration, binds the
buffers (an in-place output gets the very array of the input it aliases;
other outputs are poisoned so that an element the backend never writes cannot
pass) and runs it: one case at a time, or, for a backend with ``run_batch``,
the small cases of one operator in one call (`plan.BATCH_CASE_ELEMENTS`,
`plan.BATCH_ELEMENTS`).  A case that ends there (rejected, raised) gets its
result at once; the others are grouped into batches that share operator,
tensors, data types and attributes and handed to `judge` with their oracle.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from dmlconform.backends.base import (
    Backend,
    BackendCrashError,
    DeviceLimitError,
    Implements,
    NotSupportedError,
    RunBatch,
    implements_of,
    run_batch_of,
)
from dmlconform.cases.model import Case, Planned
from dmlconform.families import Oracles, make
from dmlconform.judge import Judging, Ran, harness_error, judge, verdict
from dmlconform.memory import available, keep_freed_memory, needed, size_text
from dmlconform.plan import BATCH_CASE_ELEMENTS, BATCH_ELEMENTS, LARGE_ELEMENTS, pack
from dmlconform.results import REFUSED_PREFIX, CaseResult, Outcome, ToleranceOverride
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

#: Written into output buffers before a run: finite, odd, and unlikely to be
#: a correct result, so an element the backend never writes FAILs.
_POISON_FLOAT = -7.0e-3 - 2.0 ** -20
_POISON_INT = 0x5A

#: (operator, data type name) -> the team's override of the comparison.
Overrides = Mapping[tuple[str, str], ToleranceOverride]


def bind(case: Case) -> dict[str, np.ndarray]:
    """Fresh writable buffers: copies of the inputs, poisoned outputs, and for
    an in-place output the input's own array."""
    buffers = {t.name: t.buffer.copy() for t in case.inputs}
    aliases = dict(case.aliases)
    for out in case.outputs:
        if out.name in aliases:
            buffers[out.name] = buffers[aliases[out.name]]
            continue
        buffers[out.name] = buffer = np.empty(out.buffer.shape, numpy_dtype(out.dtype))
        np.copyto(buffer, _poison(out.dtype))
    return buffers


@functools.cache
def _poison(dtype: m.DataType) -> np.ndarray:
    """The poison value of an output of ``dtype``, in its storage type."""
    store = numpy_dtype(dtype)
    poison = np.array(_POISON_FLOAT if store.kind in "fV" else _POISON_INT).astype(store)
    poison.flags.writeable = False
    return poison


@dataclass(frozen=True, slots=True)
class _Queued:
    """A case waiting for a ``run_batch`` call: its place in the run."""

    position: int
    spec: m.Spec
    case: Case


def run_case(spec: m.Spec, case: Case, backend: Backend) -> CaseResult:
    """The outcome of one case (a run of one).  Never raises: a harness
    failure is ERROR."""
    return run_cases([(spec, case)], backend)[0]


def run_cases(pairs: Iterable[tuple[m.Spec, Case | Planned]], backend: Backend, *,
              progress: Callable[[CaseResult], None] | None = None,
              overrides: Overrides | None = None,
              on_start: Callable[[int], None] | None = None,
              on_made: Callable[[int, Case], None] | None = None) -> tuple[CaseResult, ...]:
    """Every case, results in input order; ``progress`` is called after each
    result (batched results come after their batch is judged, so not in
    input order).  ``overrides`` loosens the comparison per (operator, data
    type); ``on_start(i)`` is called just before the backend runs the i-th
    case (a worker reports it to its parent, which then knows the case in
    flight; with ``run_batch`` every case of a call is started before it).

    A `Planned` case (a ``--large`` one) is made when its turn comes
    (``on_made(i, case)`` then: the parent of a worker learns its facts);
    it and any other large case (`is_large`) are held to the memory left
    (NOT_SUPPORTED with both figures where they cannot fit), never queued
    for ``run_batch`` (a REDUCE of 2^22 terms has one output element) and
    judged as soon as they ran, so that the run holds the values of one
    large case at a time.  A MemoryError in any case is that case's ERROR (issue #33).
    Memory freed between cases stays in the process (`memory.keep_freed_memory`)."""
    keep_freed_memory()
    info = backend.info()
    judging = Judging(flush_subnormals=info.flush_subnormals, overrides=dict(overrides or {}),
                      float16_accumulation=info.float16_accumulation)
    results: list[CaseResult | None] = []
    ran: list[Ran] = []
    queued: dict[str, list[_Queued]] = {}   # operator -> cases for run_batch
    run_batch = run_batch_of(backend)
    refusals = _Refusals(implements_of(backend))
    subset = info.subset
    oracles = Oracles()

    def done(result: CaseResult | Ran, position: int) -> None:
        if isinstance(result, Ran):
            ran.append(result)
            return
        results[position] = result
        if progress is not None:
            progress(result)

    def take(position: int, spec: m.Spec, given: Case | Planned) -> None:
        """Case ``position`` (a function: a large case made here is let go when it returns)."""
        case = _made(spec, given) if isinstance(given, Planned) else given
        if isinstance(case, CaseResult):
            done(case, position)
            return
        if on_made is not None and isinstance(given, Planned):
            on_made(position, case)
        large = isinstance(given, Planned) or is_large(case)
        refused = refusals.of(spec, case) or (_no_room(case) if large else None)
        if refused is not None:
            if on_start is not None:
                on_start(position)
            done(refused, position)
            return
        if run_batch is not None and not large and 0 < _size(case) <= BATCH_CASE_ELEMENTS:
            queued.setdefault(spec.operator, []).append(_Queued(position, spec, case))
            return
        if on_start is not None:
            on_start(position)
        outcome = _run_one(position, spec, case, backend, subset=subset)
        if isinstance(outcome, Ran) and large:   # judged now: its buffers go before the next case
            outcome = _judged([outcome], oracles, judging)[0]
        done(outcome, position)

    for position, (spec, given) in enumerate(pairs):
        results.append(None)
        take(position, spec, given)
    for group in queued.values():
        assert run_batch is not None  # cases are queued only then (for mypy)
        for part in pack([_size(q.case) for q in group], most=BATCH_ELEMENTS):
            for position, result in _run_batch([group[i] for i in part], backend, run_batch, on_start,
                                               subset=subset):
                done(result, position)
    for batch in _batches(ran):
        for item, result in zip(batch, _judged(batch, oracles, judging)):
            done(result, item.position)
    return tuple(r for r in results if r is not None)


def is_large(case: Case) -> bool:
    """Whether ``case`` has `plan.LARGE_ELEMENTS` or more."""
    return case.elements >= LARGE_ELEMENTS


def _made(spec: m.Spec, planned: Planned) -> Case | CaseResult:
    """The case ``planned`` stands for, or its ERROR where making it failed
    (out of memory, most likely: the values are the biggest part of it)."""
    started = time.perf_counter()
    try:
        return make(spec, planned)
    except Exception as exc:  # noqa: BLE001 - the harness itself: this case's ERROR, the run goes on
        return harness_error(planned, exc, time.perf_counter() - started, doing="making the case")


def _no_room(case: Case) -> CaseResult | None:
    """NOT_SUPPORTED, with the figures, for a case that needs more memory
    than this process has left (its own tensors, made already, count as
    room it has); None where it fits or nothing is known."""
    left = available()
    if left is None:
        return None
    held = sum(t.buffer.nbytes for t in (*case.inputs, *case.outputs))
    need = needed(held)
    if need <= left + held:
        return None
    return verdict(case, Outcome.NOT_SUPPORTED, f"not run: needs {size_text(need)} of memory, {size_text(left + held)} "
                                                f"available (the least of the address-space limit and the free "
                                                f"physical memory, less what this process holds)")


class _Refusals:
    """A run's answers of the backend's ``implements`` (`backends.base.
    ImplementingBackend`), asked once per operator: a case of an operator the
    backend does not implement is NOT_SUPPORTED with its reason, before any
    support query (issue #22 item 5)."""

    def __init__(self, implements: Implements | None) -> None:
        self.implements = implements
        self.answers: dict[str, tuple[Outcome, str] | None] = {}   # operator -> refusal (None: implemented)

    def of(self, spec: m.Spec, case: Case) -> CaseResult | None:
        """The result of ``case`` when the backend does not implement its
        operator (or ``implements`` raised: FAIL, a backend bug), else None."""
        if self.implements is None:
            return None
        started = time.perf_counter()
        if spec.operator not in self.answers:
            self.answers[spec.operator] = self._ask(spec)
        answer = self.answers[spec.operator]
        if answer is None:
            return None
        return verdict(case, answer[0], answer[1], seconds=time.perf_counter() - started)

    def _ask(self, spec: m.Spec) -> tuple[Outcome, str] | None:
        """The backend's answer for ``spec``'s operator, asked once."""
        assert self.implements is not None  # `of` asks only then
        try:
            reason = self.implements(spec)
        except Exception as exc:  # noqa: BLE001 - a backend bug is a FAIL of its cases, the run goes on
            return Outcome.FAIL, f"the backend's implements() raised {type(exc).__name__}: {exc}"
        return None if reason is None else (Outcome.NOT_SUPPORTED, f"not implemented: {reason}")


def _judged(batch: list[Ran], oracles: Oracles, judging: Judging) -> list[CaseResult]:
    """`judge` with the batch's oracle; without one (no family tests the
    spec), every case is a harness ERROR saying why."""
    try:
        oracle = oracles.get(batch[0].spec)
    except Exception as exc:  # noqa: BLE001 - no family tests the spec (ValueError), or no memory to make its oracle
        return [harness_error(r.case, exc, r.seconds) for r in batch]
    return judge(batch, oracle, judging)


def _batches(ran: list[Ran]) -> Iterator[list[Ran]]:
    """The cases that ran, grouped by operator, tensors, data types and
    attributes (one oracle binding each), in order of first appearance."""
    groups: dict[tuple[object, ...], list[Ran]] = {}
    for item in ran:
        case = item.case
        key = (item.spec.operator, tuple((t.name, t.dtype) for t in case.inputs),
               tuple((t.name, t.dtype) for t in case.outputs), case.attributes)
        groups.setdefault(key, []).append(item)
    return iter(groups.values())


def _size(case: Case) -> int:
    """Elements of a case's (first) output: its size for batching."""
    return math.prod(case.outputs[0].sizes) if case.outputs else 0


def _run_one(position: int, spec: m.Spec, case: Case, backend: Backend, *, subset: bool) -> CaseResult | Ran:
    """Support query, binding and the backend's run of one case: its result
    when it ends there (rejected, raised), else what the backend computed.
    ``subset``: the backend implements a subset of the tables (`_rejected`)."""
    started = time.perf_counter()
    try:
        support = backend.supports(spec, case)
        if not support.supported:
            return _rejected(case, support.reason or "not supported", time.perf_counter() - started, subset=subset)
        buffers = bind(case)
    except Exception as exc:  # noqa: BLE001 - the harness itself
        return harness_error(case, exc, time.perf_counter() - started)
    try:
        backend.run(spec, case, buffers)
    except Exception as exc:  # noqa: BLE001 - a backend bug is a FAIL, not a harness error
        return _failed(case, exc, time.perf_counter() - started, subset=subset)
    return Ran(position, spec, case, buffers, time.perf_counter() - started)


def _run_batch(part: list[_Queued], backend: Backend, run_batch: RunBatch,
               on_start: Callable[[int], None] | None, *, subset: bool) -> Iterator[tuple[int, CaseResult | Ran]]:
    """Per case: started (``on_start``, before its support query), asked,
    bound; a rejected case is yielded at once.  Then one ``run_batch`` call
    for the supported ones: the whole call is in flight during it, and its
    time is split evenly among its cases."""
    bound: list[Ran] = []
    for q in part:
        if on_start is not None:
            on_start(q.position)
        started = time.perf_counter()
        try:
            support = backend.supports(q.spec, q.case)
            if not support.supported:
                yield q.position, _rejected(q.case, support.reason or "not supported", time.perf_counter() - started,
                                            subset=subset)
                continue
            bound.append(Ran(q.position, q.spec, q.case, bind(q.case), time.perf_counter() - started))
        except Exception as exc:  # noqa: BLE001 - the harness itself
            yield q.position, harness_error(q.case, exc, time.perf_counter() - started)
    if not bound:
        return
    started = time.perf_counter()
    try:
        errors = list(run_batch([(r.spec, r.case, r.buffers) for r in bound]))
        if len(errors) != len(bound):
            raise ValueError(f"run_batch returned {len(errors)} outcomes for {len(bound)} cases")
    except Exception as exc:  # noqa: BLE001 - the call failed as a whole: every case gets its error
        errors = [exc] * len(bound)
    share = (time.perf_counter() - started) / len(bound)
    for r, error in zip(bound, errors):
        seconds = r.seconds + share
        yield r.position, (Ran(r.position, r.spec, r.case, r.buffers, seconds) if error is None
                           else _failed(r.case, error, seconds, subset=subset))


def _rejected(case: Case, reason: str, seconds: float, *, subset: bool) -> CaseResult:
    """A configuration the backend refused: PASS for attribute values outside
    the doc's domain (the rejection is what the doc asks for), NOT_SUPPORTED
    outside the level's table; inside it (``refused``) FAIL from a backend
    that claims the tables, NOT_SUPPORTED with its own reason from one that
    implements a subset of them (``subset``: `BackendInfo.subset`)."""
    if case.out_of_domain:
        return verdict(case, Outcome.PASS, f"rejected cleanly {', '.join(case.out_of_domain)} outside the doc's "
                                           f"range: {reason}", seconds=seconds)
    if case.expect_supported and not subset:
        return verdict(case, Outcome.FAIL, f"{REFUSED_PREFIX} that the {case.level.short} table supports: {reason}",
                       seconds=seconds, refused=True)
    return verdict(case, Outcome.NOT_SUPPORTED, reason, seconds=seconds, refused=case.expect_supported)


def _failed(case: Case, exc: Exception, seconds: float, *, subset: bool) -> CaseResult:
    """The result of a case whose backend run raised ``exc``: a MemoryError
    is this process's (the harness's) lack, not the backend's error."""
    if isinstance(exc, MemoryError):
        return harness_error(case, exc, seconds, doing="while the backend ran")
    if isinstance(exc, DeviceLimitError):
        return verdict(case, Outcome.NOT_SUPPORTED, str(exc) or "not supported here", seconds=seconds)
    if isinstance(exc, NotSupportedError):
        return _rejected(case, str(exc) or "not supported", seconds, subset=subset)
    if isinstance(exc, BackendCrashError):
        return verdict(case, Outcome.CRASH, f"the backend crashed: {exc}", seconds=seconds)
    return verdict(case, Outcome.FAIL, f"the backend raised {type(exc).__name__}: {exc}", seconds=seconds)
