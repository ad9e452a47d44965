"""One runner for every backend: bind buffers, run, compare with the oracle.

DESIGN.md, "Data flow" and "Comparison, verdicts and reports".  For each case
the runner asks the backend whether it supports the configuration, binds the
buffers (an in-place output gets the very array of the input it aliases;
other outputs are poisoned so that an element the backend never writes cannot
pass), runs it, computes the expected values from the spec's formula with the
oracle, and compares.  Everything a person needs to see a failure and redo it
goes into the `CaseResult`.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from dmlconform.backends.base import (Backend, BackendCrashError, BackendInfo, NotSupportedError, flat_view,
                                     joined, run_batch_of)
from dmlconform.cases.model import Case, TensorData, numpy_dtype
from dmlconform.collector import paused
from dmlconform.results import CaseResult, ElementDiff, Outcome, ToleranceOverride
from dmlconform.spec import model as m

#: Written into output buffers before a run: finite, odd, and unlikely to be
#: a correct result, so an element the backend never writes FAILs.
_POISON_FLOAT = -7.0e-3 - 2.0 ** -20
_POISON_INT = 0x5A
#: ULP distances from here up mean "not comparable" (NaN against a number);
#: results report them as -1.
NOT_COMPARABLE_ULP = 2 ** 62
#: Elements a case's result shows at most per output (those with the largest ULP distance).
WORST = 10
#: The message of a negative case computed correctly.
_ALLOWED = "computed correctly a configuration outside the table (allowed)"


@dataclass
class _Formula:
    """A spec's formula, parsed and bound to its tensors once per run."""

    tree: object
    inputs: dict[str, str]            # tensor field -> formula name
    outputs: dict[str, str]           # tensor field -> formula name
    tolerance: dict[m.DataType, int]
    overrides: dict[m.DataType, ToleranceOverride] = field(default_factory=dict)


#: (operator, data type name) -> the team's override of the comparison.
Overrides = Mapping[tuple[str, str], ToleranceOverride]


@dataclass
class Oracles:
    """Per-run cache of parsed formulas, keyed by operator, with the run's
    tolerance overrides."""

    cache: dict[str, _Formula] = field(default_factory=dict)
    overrides: Overrides = field(default_factory=dict)

    def get(self, spec: m.Spec) -> _Formula:
        if spec.operator not in self.cache:
            from dmlconform.formula import Parsed, classified, parse  # classified: the binding generate made

            if not spec.formula.evaluable or not spec.formula.parsed:
                raise ValueError(f"{spec.operator}: the formula is not evaluable ({spec.formula.reason or 'no formula'})")
            tensors = [f for f in spec.fields if f.is_tensor]
            bound = classified(spec.formula.parsed, tuple(f.name for f in spec.fields),
                               tuple(f.name for f in tensors if f.role is m.TensorRole.INPUT),
                               tuple(f.name for f in tensors if f.role is m.TensorRole.OUTPUT))
            tree = bound.tree if isinstance(bound, Parsed) else parse(spec.formula.parsed)
            self.cache[spec.operator] = _Formula(
                tree=tree,
                inputs={tensor: name for name, tensor in getattr(bound, "inputs", ())},
                outputs={tensor: name for name, tensor in getattr(bound, "outputs", ())},
                tolerance={t.dtype: t.ulp for t in spec.tolerance},
                overrides={m.DataType[dtype]: o for (op, dtype), o in self.overrides.items()
                           if op == spec.operator and dtype in m.DataType.__members__},
            )
        return self.cache[spec.operator]


def bind(case: Case) -> dict[str, np.ndarray]:
    """Fresh writable buffers: copies of the inputs, poisoned outputs, and for
    an in-place output the input's own array."""
    buffers = {t.name: t.buffer.copy() for t in case.inputs}
    aliases = dict(case.aliases) if case.aliases else {}
    for out in case.outputs:
        if out.name in aliases:
            buffers[out.name] = buffers[aliases[out.name]]
            continue
        poison = _poison(out.dtype._name_)  # by name: an enum's hash is Python code
        buffers[out.name] = buffer = np.empty(out.buffer.shape, poison.dtype)
        np.copyto(buffer, poison)
    return buffers


@functools.lru_cache(maxsize=None)
def _poison(dtype: str) -> np.ndarray:
    """The poison value of an output of data type ``dtype`` (a name), in its
    storage type (a 0-d array: one per data type, found once)."""
    store = numpy_dtype(m.DataType[dtype])
    poison = np.array(_POISON_FLOAT if store.kind == "f" or store.kind == "V" else _POISON_INT).astype(store)
    poison.flags.writeable = False
    return poison


def _relaxed(result: object) -> np.ndarray | None:
    """The oracle's relaxed bound only where it is not simply factor x strict
    (near a discontinuity); elsewhere `compare` scales the strict bound itself,
    at the elements that differ, without a full-size array."""
    return result.bound_relaxed if getattr(result, "uncertain", None) is not None else None  # type: ignore[attr-defined]


def verdict(case: Case, outcome: Outcome, message: str, info: BackendInfo | None, *, seconds: float = 0.0,
            **more: object) -> CaseResult:
    """The result of ``case``: its facts and the outcome (the run command
    adds the repro line, which needs the run's options: `invocation`)."""
    # the enums' names and values as plain attributes (``.name``/``.value``/``.short`` are Python properties)
    return CaseResult(
        case_id=case.id, operator=case.operator, dtype=case.dtype._name_, level=case.level._name_[3:],
        dims=len(case.outputs[0].sizes) if case.outputs else 0, layout=case.layout._value_, outcome=outcome,
        message=message,
        expect_supported=case.expect_supported, edges=case.edges, seconds=round(seconds, 6),
        **more,  # type: ignore[arg-type]
    )


def _result(case: Case, outcome: Outcome, message: str, info: BackendInfo, started: float,
            **more: object) -> CaseResult:
    return verdict(case, outcome, message, info, seconds=time.perf_counter() - started, **more)


def _execute(spec: m.Spec, case: Case, backend: Backend, info: BackendInfo,
             started: float) -> tuple[CaseResult | None, dict[str, np.ndarray]]:
    """Support query, binding and the backend's run: a final result when the
    case ends there (rejected, raised), else the bound buffers to compare."""
    support = backend.supports(spec, case)
    if not support.supported:
        return _rejected(case, info, started, support.reason or "not supported"), {}
    buffers = bind(case)
    try:
        backend.run(spec, case, buffers)
    except Exception as exc:  # noqa: BLE001 - a backend bug is a FAIL, not a harness error
        return _failed(case, exc, info, started), {}
    return None, buffers


def run_case(spec: m.Spec, case: Case, backend: Backend, info: BackendInfo, oracles: Oracles) -> CaseResult:
    """The outcome of one case.  Never raises: a harness failure is ERROR."""
    started = time.perf_counter()
    try:
        early, buffers = _execute(spec, case, backend, info, started)
    except Exception as exc:  # noqa: BLE001 - the harness itself
        return _harness_error(case, exc, info, started)
    if early is not None:
        return early
    return _one((0, spec, case, buffers, time.perf_counter() - started), info, oracles)


def _harness_error(case: Case, exc: Exception, info: BackendInfo, started: float) -> CaseResult:
    return _result(case, Outcome.ERROR, f"harness error: {type(exc).__name__}: {exc}", info, started)


def _rejected(case: Case, info: BackendInfo, started: float, reason: str) -> CaseResult:
    if case.expect_supported:
        return _result(case, Outcome.FAIL, f"rejected a configuration that the {case.level.short} table "
                                           f"supports: {reason}", info, started)
    return _result(case, Outcome.NOT_SUPPORTED, reason, info, started)


def _check_output(spec: m.Spec, formula: _Formula, result: Any, actual: np.ndarray, out: TensorData,
                  info: BackendInfo, *, worst: int | None = WORST) -> Any:
    """The oracle's ``result`` for output ``out`` (`_oracle_results`) compared
    with ``actual``, under the spec's tolerance and the backend's flush
    policy: a `Comparison`, or with ``worst`` None a `SparseComparison`."""
    from dmlconform.compare import Policy, compare, compare_sparse

    signed_zero = result.signed_zero if spec.formula.signed_zero is None else spec.formula.signed_zero
    ulp = formula.tolerance.get(out.dtype, result.ulp)
    bound_strict, bound_relaxed = result.bound_strict, _relaxed(result)
    override = formula.overrides.get(out.dtype)
    if override is not None:
        ulp = ulp if override.ulp is None else override.ulp
        if override.bound_factor is not None:
            bound_strict = None if bound_strict is None else bound_strict * override.bound_factor
            bound_relaxed = None if bound_relaxed is None else bound_relaxed * override.bound_factor
    policy = Policy(ulp=ulp, relaxed_factor=result.relaxed_factor,
                    signed_zero=signed_zero, flush_subnormals=info.flush_subnormals)
    if worst is None:
        return compare_sparse(result.expected, actual, policy=policy, bound_strict=bound_strict,
                              bound_relaxed=bound_relaxed, alternatives=result.alternatives)
    return compare(result.expected, actual, policy=policy, bound_strict=bound_strict,
                   bound_relaxed=bound_relaxed, alternatives=result.alternatives, worst=worst)


def _oracle_results(spec: m.Spec, formula: _Formula, views: Mapping[str, np.ndarray], outputs: Sequence[TensorData],
                    attributes: Mapping[str, object], info: BackendInfo) -> list[Any]:
    """The oracle's result for each of ``outputs`` on the same inputs: the
    outputs of one data type share one evaluation (`evaluate_many`: Adam's
    three outputs cost one tracked pass), each result what `evaluate` gives."""
    from dmlconform.formula.oracle import evaluate_many

    by_type: dict[m.DataType, list[int]] = {}
    for k, out in enumerate(outputs):
        by_type.setdefault(out.dtype, []).append(k)
    results: list[Any] = [None] * len(outputs)
    for dtype, members in by_type.items():
        found = evaluate_many(formula.tree, views, attributes, dtype=dtype,
                              outputs=[formula.outputs.get(outputs[k].name) for k in members],
                              nan_policy=spec.formula.nan_policy, overflow=spec.formula.integer_overflow,
                              flush_subnormals=info.flush_subnormals)
        for k, r in zip(members, found):
            results[k] = r
    return results


def _compare(spec: m.Spec, case: Case, buffers: Mapping[str, np.ndarray], info: BackendInfo,
             oracles: Oracles, started: float) -> CaseResult:
    from dmlconform.compare import Verdict

    formula = oracles.get(spec)
    views = {formula.inputs.get(t.name, t.name): np.ascontiguousarray(t.view()) for t in case.inputs}
    outcome, message, counts, elements, max_ulp = Outcome.PASS, "", [0, 0, 0], 0, 0
    worst: list[ElementDiff] = []
    alternatives: dict[str, int] = {}
    attributes = case.attribute_map()
    oracle = _oracle_results(spec, formula, views, case.outputs, attributes, info)
    for out, result in zip(case.outputs, oracle):
        actual = np.ascontiguousarray(out.view(buffers[out.name]))
        cmp = _check_output(spec, formula, result, actual, out, info)
        counts = [a + b for a, b in zip(counts, cmp.counts)]
        elements += int(cmp.status.size)
        bad = cmp.ulp[(cmp.status > Verdict.PASS) & (cmp.ulp < NOT_COMPARABLE_ULP)]
        max_ulp = max(max_ulp, int(bad.max()) if bad.size else 0)
        worst.extend(_diff(out.name, w, case, views, formula) for w in cmp.worst)
        for use in cmp.alternatives:
            alternatives[use.name] = alternatives.get(use.name, 0) + use.matched_alternative
        if cmp.verdict is Verdict.FAIL:
            outcome, message = Outcome.FAIL, f"{out.name}: {cmp.summary()}"
        elif cmp.verdict is Verdict.QUALITY_WARNING and outcome is Outcome.PASS:
            outcome, message = Outcome.QUALITY_WARNING, f"{out.name}: {cmp.summary()}"
    if outcome is Outcome.PASS and not case.expect_supported:
        message = _ALLOWED
    return _result(case, outcome, message, info, started, elements=elements, counts=tuple(counts),
                   max_ulp=max_ulp, worst=tuple(worst), alternatives=tuple(sorted(alternatives.items())))


def _scalar(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


def _diff(output: str, w: object, case: Case, views: Mapping[str, np.ndarray], formula: _Formula) -> ElementDiff:
    index = tuple(int(i) for i in w.index)  # type: ignore[attr-defined]
    names = {v: k for k, v in formula.inputs.items()}
    inputs = []
    for name, view in views.items():
        at = tuple(min(i, s - 1) for i, s in zip(index[-view.ndim:], view.shape)) if view.ndim else ()
        inputs.append((names.get(name, name), _scalar(view[at])))
    return _element_diff(output, index, tuple(inputs), w.expected, w.actual, int(w.ulp),  # type: ignore[attr-defined]
                         w.bound, w.verdict.name)  # type: ignore[attr-defined]


def _element_diff(output: str, index: tuple[int, ...], inputs: tuple[tuple[str, float], ...], expected: object,
                  actual: object, ulp: int, bound: object, verdict: str) -> ElementDiff:
    """An `ElementDiff` as results show it: values as floats, a distance
    that is not comparable as -1."""
    return ElementDiff(output=output, index=index, inputs=inputs, expected=_scalar(expected), actual=_scalar(actual),
                       ulp=ulp if ulp < NOT_COMPARABLE_ULP else -1, bound=_scalar(bound), verdict=verdict)


#: (position, spec, case, bound buffers, seconds spent running it)
_Pending = tuple[int, m.Spec, Case, dict[str, np.ndarray], float]


def _batch_key(spec: m.Spec, case: Case) -> tuple[object, ...]:
    """Cases with the same key share one oracle evaluation and one comparison
    (the oracle takes one set of attributes per call); its first member,
    the operator, is the key of one ``run_batch`` call.  Data types enter
    by name (``_name_``, the enum's own attribute): hashing an enum member
    runs Python code, and the key is hashed per case."""
    return (spec.operator, tuple((t.name, t.dtype._name_) for t in case.inputs),
            tuple((t.name, t.dtype._name_) for t in case.outputs), case.attributes)


def _one(item: _Pending, info: BackendInfo, oracles: Oracles) -> CaseResult:
    """One pending case compared alone; ``seconds`` adds its run time (the
    result's clock starts ``spent`` seconds before the comparison)."""
    _, spec, case, buffers, spent = item
    begin = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            return _compare(spec, case, buffers, info, oracles, begin - spent)
    except Exception as exc:  # noqa: BLE001 - the harness itself
        return _harness_error(case, exc, info, begin - spent)


#: Elements of a batch evaluated and compared at a time: the oracle's
#: temporaries and the comparison of a large case stay this small (a multiple
#: of the oracle's own block, so its blocks are the same as unchunked).
CHUNK = 1 << 19


def _compare_batch(items: list[_Pending], info: BackendInfo, oracles: Oracles) -> list[tuple[int, CaseResult]]:
    """Evaluate and compare a batch at once, block by block, output by
    output, and split the comparison per case: every result is what
    `run_case` gives (the oracle is element-wise; the tests hold the two
    paths equal).  A case whose elements all PASS (the common case) gets its
    result from its sizes and its alternatives' counts, found for the whole
    batch at once (`_passed`, `_alternatives`); only the others are taken
    apart element by element (`_case_result`)."""
    sizes = [_size(it[2]) for it in items]
    if not _whole(items):
        return [(it[0], _one(it, info, oracles)) for it in items]
    t0 = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            sparse, views = _batch_comparison(items, info, oracles)
    except Exception:  # noqa: BLE001 - the per-case path reports the error
        return [(it[0], _one(it, info, oracles)) for it in items]
    share = (time.perf_counter() - t0) / len(items)  # the batch's comparison, split evenly
    offsets = np.array([0, *itertools.accumulate(sizes)])
    cuts = [np.searchsorted(sp.index, offsets) for sp in sparse]
    flagged = np.logical_or.reduce([_flagged(sp, c) for sp, c in zip(sparse, cuts)]).tolist()
    matched = _alternatives(sparse, offsets)
    details = _details(items, sparse, offsets, flagged, views, oracles.get(items[0][1])) if any(flagged) else {}
    out = []
    for k, (it, size) in enumerate(zip(items, sizes)):
        if not flagged[k]:
            result = _passed(it[2], size, matched[k], info, it[4] + share)
        else:
            result = _case_result(it[2], size, details[k], matched[k], info, it[4] + share)
        out.append((it[0], result))
    return out


def _whole(items: list[_Pending]) -> bool:
    """Whether a batch is compared as a whole (`_batch_comparison`): its
    cases have outputs, all of one shape, and elements."""
    return bool(items[0][2].outputs) and all(
        _size(it[2]) > 0 and all(o.sizes == it[2].outputs[0].sizes for o in it[2].outputs) for it in items)


def _flagged(sparse: Any, cuts: np.ndarray) -> np.ndarray:
    """Per case, whether it has an element that is not PASS: case k holds
    positions [cuts[k], cuts[k+1]) of ``sparse``."""
    failing = np.concatenate(([0], np.cumsum(sparse.status != 0)))
    return failing[cuts[1:]] > failing[cuts[:-1]]


def _alternatives(sparse: list[Any], offsets: np.ndarray) -> list[tuple[tuple[str, int], ...]]:
    """Per case (cases end to end, case k at flat [offsets[k], offsets[k+1])),
    each alternative with an element in it and the elements that passed
    only through it, sorted by name: `_case_result`'s ``alternatives``,
    for the whole batch at once."""
    count = len(offsets) - 1
    present: dict[str, np.ndarray] = {}
    gained: dict[str, np.ndarray] = {}
    for sp in sparse:
        for trace in sp.traces:
            owner = np.searchsorted(offsets, trace.index, side="right") - 1
            mine = np.bincount(owner, minlength=count)[:count] > 0
            won = np.bincount(owner[trace.gained], minlength=count)[:count]
            known = trace.name in present
            present[trace.name] = present[trace.name] | mine if known else mine
            gained[trace.name] = gained[trace.name] + won if known else won
    if not present:
        return [()] * count
    columns = [(name, present[name].tolist(), gained[name].tolist()) for name in sorted(present)]
    return [tuple((name, won[k]) for name, mine, won in columns if mine[k]) for k in range(count)]


def _passed(case: Case, size: int, alternatives: tuple[tuple[str, int], ...], info: BackendInfo,
            seconds: float) -> CaseResult:
    """The result of a case whose every element PASSes: what `_case_result`
    finds for it, without looking."""
    elements = size * len(case.outputs)
    return verdict(case, Outcome.PASS, "" if case.expect_supported else _ALLOWED, info, seconds=seconds,
                   elements=elements, counts=(elements, 0, 0), max_ulp=0, worst=(), alternatives=alternatives)


def _batch_comparison(items: list[_Pending], info: BackendInfo, oracles: Oracles
                      ) -> tuple[list[Any], dict[str, np.ndarray]]:
    """The batch's cases end to end as one flat array per output, compared
    `CHUNK` elements at a time: a `SparseComparison` per output, and the
    inputs end to end (`_batch_inputs`).  The cases of a batch share their
    tensors' names and types in order (`_batch_key`), so the j-th tensor of
    each case is the same one."""
    from dmlconform.compare import SparseComparison

    spec, case0 = items[0][1], items[0][2]
    formula = oracles.get(spec)
    shapes = [it[2].outputs[0].sizes for it in items]
    views = _batch_inputs(items, formula)
    attributes = case0.attribute_map()
    actuals = [joined([flat_view(it[2].outputs[j], it[3][out.name], shape) for it, shape in zip(items, shapes)])
               for j, out in enumerate(case0.outputs)]
    parts: list[list[Any]] = [[] for _ in case0.outputs]
    total = actuals[0].size if actuals else 0
    for lo in range(0, total, CHUNK):
        hi = min(lo + CHUNK, total)
        chunk = {n: v[lo:hi] for n, v in views.items()}
        oracle = _oracle_results(spec, formula, chunk, case0.outputs, attributes, info)
        for j, out in enumerate(case0.outputs):
            cmp = _check_output(spec, formula, oracle[j], actuals[j][lo:hi], out, info, worst=None)
            parts[j].append(cmp.shifted(lo))
    return [SparseComparison.join(p) for p in parts], views


def _batch_inputs(items: list[_Pending], formula: _Formula) -> dict[str, np.ndarray]:
    """The inputs of a batch's cases end to end, one flat array per input,
    keyed by the formula's names."""
    shapes = [it[2].outputs[0].sizes for it in items]
    return {formula.inputs.get(t.name, t.name): joined(
        [flat_view(it[2].inputs[j], None, shape) for it, shape in zip(items, shapes)])
        for j, t in enumerate(items[0][2].inputs)}


#: Per output of a case that is not all PASS (`_details`): its (PASS,
#: QUALITY_WARNING, FAIL) counts, largest comparable ULP distance among
#: the elements that are not PASS, and its worst elements.
_Detail = tuple[tuple[int, int, int], int, tuple[ElementDiff, ...]]


def _details(items: list[_Pending], sparse: list[Any], offsets: np.ndarray, flagged: list[bool],
             views: Mapping[str, np.ndarray], formula: _Formula) -> dict[int, list[_Detail]]:
    """Per flagged case (by position in ``items``), per output in order:
    what `_compare` finds for it (its counts, largest ULP distance, and its
    `WORST` elements by ULP distance, first index first among equals, with
    their inputs), for every case of the batch at once: the cases end to end
    in ``sparse`` and ``views``, case k at flat [offsets[k], offsets[k+1])."""
    from dmlconform.compare import Verdict

    count = len(items)
    names = {v: k for k, v in formula.inputs.items()}
    shapes = [it[2].outputs[0].sizes for it in items]
    found: dict[int, list[_Detail]] = {k: [] for k in range(count) if flagged[k]}
    for j, sp in enumerate(sparse):
        out_name = items[0][2].outputs[j].name
        owner = np.searchsorted(offsets, sp.index, side="right") - 1
        status = sp.status
        warned = np.bincount(owner[status == Verdict.QUALITY_WARNING], minlength=count).tolist()
        failed = np.bincount(owner[status == Verdict.FAIL], minlength=count).tolist()
        bad = np.flatnonzero(status != Verdict.PASS)
        comparable = bad[sp.ulp[bad] < NOT_COMPARABLE_ULP]
        largest_of = np.zeros(count, sp.ulp.dtype)
        np.maximum.at(largest_of, owner[comparable], sp.ulp[comparable])
        largest = largest_of.tolist()
        order = bad[np.lexsort((bad, -sp.ulp[bad].astype(np.float64), owner[bad]))]
        who = owner[order]
        first = np.searchsorted(who, who)  # each element's case starts there (``who`` is sorted)
        kept = order[np.arange(order.size) - first < WORST]
        diffs = _element_diffs(out_name, sp, kept, owner[kept], offsets, shapes, views, names)
        starts = np.searchsorted(owner[kept], np.arange(count + 1)).tolist()
        for k, detail in found.items():
            size = int(offsets[k + 1] - offsets[k])
            counts = (size - warned[k] - failed[k], warned[k], failed[k])
            detail.append((counts, int(largest[k]), tuple(diffs[starts[k]:starts[k + 1]])))
    return found


def _element_diffs(output: str, sp: Any, kept: np.ndarray, owner: np.ndarray, offsets: np.ndarray,
                   shapes: list[tuple[int, ...]], views: Mapping[str, np.ndarray],
                   names: Mapping[str, str]) -> list[ElementDiff]:
    """The `ElementDiff` of each position ``kept`` of ``sp`` (case ``owner``
    of each): its index in its case's output, the inputs there (``views``,
    end to end as the outputs), its values and verdict, as `_diff` gives."""
    from dmlconform.compare import Verdict

    verdicts = [v.name for v in sorted(Verdict)]
    local = sp.index[kept] - offsets[owner]
    index: list[tuple[int, ...]] = [()] * kept.size
    of_shape: dict[tuple[int, ...], list[int]] = {}
    for n, k in enumerate(owner.tolist()):
        of_shape.setdefault(shapes[k], []).append(n)
    for shape, members in of_shape.items():
        where = np.array(members)
        for n, at in zip(members, zip(*(a.tolist() for a in np.unravel_index(local[where], shape)))):
            index[n] = at
    flat = sp.index[kept]
    inputs = [(names.get(name, name), [_scalar(x) for x in view[flat].tolist()]) for name, view in views.items()]
    bounds = sp.bound[kept].tolist() if sp.bound is not None else [0.0] * kept.size
    return [_element_diff(output, index[n], tuple((name, values[n]) for name, values in inputs), e, a, u, b,
                          verdicts[s])
            for n, (e, a, u, b, s) in enumerate(zip(sp.expected[kept].tolist(), sp.actual[kept].tolist(),
                                                    sp.ulp[kept].tolist(), bounds, sp.status[kept].tolist()))]


def _case_result(case: Case, size: int, details: list[_Detail], alternatives: tuple[tuple[str, int], ...],
                 info: BackendInfo, seconds: float) -> CaseResult:
    """One case's result from its outputs' `_details`, combined as
    `_compare` combines outputs."""
    from dmlconform.compare import summary

    total, max_ulp, outcome, message = [0, 0, 0], 0, Outcome.PASS, ""
    worst: list[ElementDiff] = []
    for out, (counts, largest, diffs) in zip(case.outputs, details):
        total = [a + b for a, b in zip(total, counts)]
        max_ulp = max(max_ulp, largest)
        worst.extend(diffs)
        if counts[2]:
            outcome, message = Outcome.FAIL, f"{out.name}: {summary(counts, size)}"
        elif counts[1] and outcome is Outcome.PASS:
            outcome, message = Outcome.QUALITY_WARNING, f"{out.name}: {summary(counts, size)}"
    if outcome is Outcome.PASS and not case.expect_supported:
        message = _ALLOWED
    return verdict(case, outcome, message, info, seconds=seconds, elements=size * len(case.outputs),
                   counts=tuple(total), max_ulp=max_ulp, worst=tuple(worst), alternatives=alternatives)


def run_cases(pairs: Iterable[tuple[m.Spec, Case]], backend: Backend, *,
              progress: Callable[[CaseResult], None] | None = None,
              overrides: Overrides | None = None,
              on_start: Callable[[int], None] | None = None,
              options: Mapping[str, str] | None = None) -> tuple[CaseResult, ...]:
    """Every case, results in input order; ``progress`` is called after each.

    Backends run one case at a time, or, when they have ``run_batch``
    (`backends.base.Backend`), the small cases of one operator per call,
    whatever their data types and attributes (a backend that builds
    something per combination, like onnxruntime's sessions, then sees them
    all at once); the oracle and the comparison run once per batch of cases
    that share operator, types and attributes.  With ``run_batch`` every
    case of the call is started (``on_start``) before it, so the whole batch
    is in flight during the call, and its time is split evenly among them.
    ``overrides`` loosens the comparison per (operator, data type);
    ``on_start(i)`` is called just before the backend runs the i-th case (a
    worker reports it to its parent, which then knows the case in flight).
    ``options`` are the backend's construction options (``--backend-arg``):
    every result's repro line carries them."""
    info = backend.info().with_options(options)
    oracles = Oracles(overrides=dict(overrides or {}))
    results: list[CaseResult | None] = []
    batches: dict[tuple[object, ...], list[_Pending]] = {}
    run_batch = run_batch_of(backend)
    queued: dict[str, list[tuple[int, m.Spec, Case]]] = {}  # operator -> cases for run_batch
    keys: list[tuple[object, ...]] = []  # per case, its batch key

    def pending(key: tuple[object, ...], i: int, spec: m.Spec, case: Case, early: CaseResult | None,
                buffers: dict[str, np.ndarray], spent: float) -> None:
        results[i] = early
        if early is None:  # its time so far, carried over to when the batch is compared
            batches.setdefault(key, []).append((i, spec, case, buffers, spent))
        elif progress is not None:
            progress(early)

    for i, (spec, case) in enumerate(pairs):
        results.append(None)
        key = _batch_key(spec, case)
        keys.append(key)
        if run_batch is not None and _batchable(case):
            queued.setdefault(spec.operator, []).append((i, spec, case))
            continue
        if on_start is not None:
            on_start(i)
        started = time.perf_counter()
        try:
            early, buffers = _execute(spec, case, backend, info, started)
        except Exception as exc:  # noqa: BLE001 - the harness itself
            early, buffers = _harness_error(case, exc, info, started), {}
        pending(key, i, spec, case, early, buffers, time.perf_counter() - started)
    for group in queued.values():
        for part in _parts(group):
            for item in _execute_batch(part, backend, run_batch, info, on_start):
                pending(keys[item[0]], *item)
    for items in batches.values():
        with paused():  # the oracle's and the comparison's objects hold no cycles (`collector`)
            found = _compare_batch(items, info, oracles)
        for i, result in found:
            results[i] = result
            if progress is not None:
                progress(result)
    return tuple(r for r in results if r is not None)


#: A case goes to a backend's ``run_batch`` when it has at most this many
#: output elements; one call gets cases of at most `BATCH_ELEMENTS` in all
#: (a large case runs alone through ``run``: no concatenated copy of it).
BATCH_CASE_ELEMENTS = 1 << 16
BATCH_ELEMENTS = 1 << 19


def _size(case: Case) -> int:
    return math.prod(case.outputs[0].sizes) if case.outputs else 0


def _batchable(case: Case) -> bool:
    return 0 < _size(case) <= BATCH_CASE_ELEMENTS


def _parts(group: list[tuple[int, m.Spec, Case]]) -> Iterable[list[tuple[int, m.Spec, Case]]]:
    """``group`` in input order, cut into runs of at most `BATCH_ELEMENTS`."""
    part: list[tuple[int, m.Spec, Case]] = []
    total = 0
    for item in group:
        size = _size(item[2])
        if part and total + size > BATCH_ELEMENTS:
            yield part
            part, total = [], 0
        part.append(item)
        total += size
    if part:
        yield part


def _execute_batch(part: list[tuple[int, m.Spec, Case]], backend: Backend, run_batch: Callable[..., Any],
                   info: BackendInfo, on_start: Callable[[int], None] | None
                   ) -> Iterator[tuple[int, m.Spec, Case, CaseResult | None, dict[str, np.ndarray], float]]:
    """Per case: started (``on_start``, as in one-by-one runs, before its
    support query), asked, bound; a rejected case is yielded at once.  Then
    one ``run_batch`` call for the supported ones: the whole batch is in
    flight during it, and its time is split evenly.  Yields (position, spec,
    case, final result or None, buffers, seconds)."""
    bound: list[tuple[int, m.Spec, Case, dict[str, np.ndarray], float]] = []
    for i, spec, case in part:
        if on_start is not None:
            on_start(i)
        started = time.perf_counter()
        try:
            support = backend.supports(spec, case)
            if not support.supported:
                yield i, spec, case, _rejected(case, info, started, support.reason or "not supported"), {}, 0.0
                continue
            bound.append((i, spec, case, bind(case), time.perf_counter() - started))
        except Exception as exc:  # noqa: BLE001 - the harness itself
            yield i, spec, case, _harness_error(case, exc, info, started), {}, 0.0
    if not bound:
        return
    started = time.perf_counter()
    try:
        errors: list[Exception | None] = list(run_batch([(spec, case, buffers) for _, spec, case, buffers, _ in bound]))
        if len(errors) != len(bound):
            raise ValueError(f"run_batch returned {len(errors)} outcomes for {len(bound)} cases")
    except Exception as exc:  # noqa: BLE001 - the call failed as a whole: every case gets its error
        errors = [exc] * len(bound)
    share = (time.perf_counter() - started) / len(bound)
    for (i, spec, case, buffers, spent), error in zip(bound, errors):
        early = None if error is None else _failed(case, error, info, time.perf_counter() - spent - share)
        yield i, spec, case, early, buffers if early is None else {}, spent + share


def _failed(case: Case, exc: Exception, info: BackendInfo, started: float) -> CaseResult:
    """The result of a case whose backend run raised ``exc``."""
    if isinstance(exc, NotSupportedError):
        return _rejected(case, info, started, str(exc) or "not supported")
    if isinstance(exc, BackendCrashError):
        return _result(case, Outcome.CRASH, f"the backend crashed: {exc}", info, started)
    return _result(case, Outcome.FAIL, f"the backend raised {type(exc).__name__}: {exc}", info, started)
