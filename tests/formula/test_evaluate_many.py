"""evaluate_many: several outputs of one tree at once give, output by output,
exactly what one evaluate call per output gives."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.families.elementwise import floatrun
from dmlconform.families.elementwise.formula_oracle import OracleResult, evaluate, evaluate_many
from dmlconform.formula import parse, to_text
from dmlconform.spec.model import Overflow
from tests.formula.test_oracle import ADAM as ONE_OUTPUT_ADAM

#: test_oracle's Adam with its two other outputs
ADAM = parse(to_text(ONE_OUTPUT_ADAM) + "\nOutputFirstMomentTensor = M\nOutputSecondMomentTensor = V")
OUTPUTS = ("OutputParametersTensor", "OutputFirstMomentTensor", "OutputSecondMomentTensor")
NAMES = ("InputParametersTensor", "InputFirstMomentTensor", "InputSecondMomentTensor", "GradientTensor",
         "TrainingStepTensor")


def _bits(a: np.ndarray | None) -> object:
    return None if a is None else (a.dtype.str, a.shape, np.ascontiguousarray(a).view(np.uint8).tobytes())


def _same(a: OracleResult, b: OracleResult) -> None:
    for name in ("expected", "bound_strict", "bound_relaxed", "ambiguous", "uncertain"):
        assert _bits(getattr(a, name)) == _bits(getattr(b, name)), name
    assert [(x.name, _bits(x.index), _bits(x.values), x.tier) for x in a.alternatives] == \
           [(x.name, _bits(x.index), _bits(x.values), x.tier) for x in b.alternatives]
    assert (a.ulp, a.signed_zero, a.relaxed_factor, a.refined, a.notes) == \
           (b.ulp, b.signed_zero, b.relaxed_factor, b.refined, b.notes)


def _adam_inputs(dtype: type, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    info = np.finfo(dtype)
    edges = np.asarray([0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max), -float(info.max),
                        float(info.smallest_subnormal), 1e-30, -3.5])
    out = {}
    for k, name in enumerate(NAMES):
        x = rng.standard_normal(n) * np.exp2(rng.integers(-40, 40, n))
        x[k::7][: edges.size] = edges[: x[k::7].size]
        with np.errstate(over="ignore", invalid="ignore"):  # float16: the large ones overflow to inf on purpose
            out[name] = x.astype(dtype)
    return out


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """The evaluation passes made from now on, each as (track, minmax,
    exact64, work)."""
    passes: list[tuple[object, ...]] = []
    original = floatrun.FloatRun.run_many

    def counted(self: floatrun.FloatRun, arrays: dict, outputs: tuple, **kwargs: object) -> object:
        passes.append(tuple(kwargs.get(k) for k in ("track", "minmax", "exact64", "work")))
        return original(self, arrays, outputs, **kwargs)

    monkeypatch.setattr(floatrun.FloatRun, "run_many", counted)
    return passes


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("block", [floatrun.ORACLE_BLOCK, 64])
@pytest.mark.parametrize("prefetch", [floatrun.PREFETCH_LIMIT, 0])
def test_adams_outputs_at_once_are_the_outputs_one_by_one(dtype: type, block: int, prefetch: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(floatrun, "ORACLE_BLOCK", block)  # several blocks: each shared evaluation used by every output
    monkeypatch.setattr(floatrun, "PREFETCH_LIMIT", prefetch)  # 0: every second look at its own elements
    inputs = _adam_inputs(dtype, 300)
    attrs = {"LearningRate": 0.5, "Beta1": 2.0, "Beta2": 0.25, "Epsilon": 1.5}
    asked = (*OUTPUTS, OUTPUTS[1], None)  # a repeat and the main statement too
    together = evaluate_many(ADAM, inputs, attrs, outputs=asked, dtype=dtype)
    assert len(together) == len(asked)
    for output, result in zip(asked, together):
        _same(result, evaluate(ADAM, inputs, attrs, dtype=dtype, output=output))


def test_integer_outputs_at_once() -> None:
    tree = parse("Q = A / B\nR = A - B * Q\nOutQ = Q\nOutR = R")
    rng = np.random.default_rng(1)
    inputs = {"A": rng.integers(-1000, 1000, 50).astype(np.int32), "B": rng.integers(-9, 9, 50).astype(np.int32)}
    together = evaluate_many(tree, inputs, outputs=("OutQ", "OutR"), dtype=np.int8, overflow=Overflow.SATURATE)
    for output, result in zip(("OutQ", "OutR"), together):
        _same(result, evaluate(tree, inputs, dtype=np.int8, overflow=Overflow.SATURATE, output=output))


def test_positions_in_a_sorted_set() -> None:
    held = np.asarray([2, 5, 9, 40])
    assert floatrun._positions(held, np.asarray([5, 40])).tolist() == [1, 3]
    assert floatrun._positions(held, np.asarray([], dtype=np.intp)).tolist() == []
    for outside in ([5, 41], [3], [0, 2], [100]):
        assert floatrun._positions(held, np.asarray(outside)) is None, outside


def test_plans_are_sorted_sets() -> None:
    for index in ([], [4], [1, 5, 9], [9, 1, 5], [3, 3, 1], [2, 7, 7]):
        a = np.asarray(index, dtype=np.intp)
        assert floatrun._sorted_set(a).tolist() == np.unique(a).tolist(), index


def test_second_looks_are_shared_between_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The untracked evaluations of the later outputs (literal variants,
    exactness checks) mostly come from the first output's: fewer evaluations
    than one evaluate call per output, with the same results (above)."""
    inputs = _adam_inputs(np.float32, 300)
    attrs = {"LearningRate": 0.5, "Beta1": 2.0, "Beta2": 0.25, "Epsilon": 1.5}
    runs: list[int] = []
    original = floatrun.FloatRun.run_many

    def counted(self: floatrun.FloatRun, *args: object, **kwargs: object) -> object:
        runs.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(floatrun.FloatRun, "run_many", counted)
    evaluate_many(ADAM, inputs, attrs, outputs=OUTPUTS, dtype=np.float32)
    together = len(runs)
    runs.clear()
    for output in OUTPUTS:
        evaluate(ADAM, inputs, attrs, dtype=np.float32, output=output)
    assert together < len(runs) - 2  # the tracked pass once, not thrice, and shared second looks


def test_one_pass_per_kind_of_second_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every output's second looks of one kind of evaluation (exactness in
    `widen` and `risky`, long double in `widen` and in the limit probes, the
    literal variants) are planned before any is taken: one pass each for all
    outputs and steps, besides the one tracked pass."""
    inputs = _adam_inputs(np.float32, 300)
    attrs = {"LearningRate": 0.5, "Beta1": 2.0, "Beta2": 0.25, "Epsilon": 1.5}
    passes = _passes(monkeypatch)
    results = evaluate_many(ADAM, inputs, attrs, outputs=OUTPUTS, dtype=np.float32)
    assert any(a.name == "limit" for r in results for a in r.alternatives)  # the probes ran
    assert any(r.refined for r in results)  # so did the exactness look
    assert len(passes) == len(set(passes)), passes
    assert (False, "propagate", False, np.longdouble) in passes  # widen and the probes in long double: one


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_float64_looks_ride_on_the_exactness_pass(dtype: type, monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit probes in float64 (and, into float64, the literal variant)
    need the values alone, which the exactness pass computes identically:
    they take no pass of their own, and every result is the one that looks
    at their own elements (no prefetch, so no sharing) give.  (The look at
    exact NaNs of finite inputs, `floatrun.ROUNDED_INTO_DOMAIN`, is a float64
    pass of its own over those elements alone: left out here.)"""
    monkeypatch.setattr(floatrun.FloatRun, "exact_nan_of_finite_inputs", lambda self, expected: np.zeros(0, np.intp))
    inputs = _adam_inputs(dtype, 300)
    attrs = {"LearningRate": 0.5, "Beta1": 2.0, "Beta2": 0.25, "Epsilon": 1.5}
    passes = _passes(monkeypatch)
    shared = evaluate_many(ADAM, inputs, attrs, outputs=OUTPUTS, dtype=dtype)
    assert any(a.name == "limit" for r in shared for a in r.alternatives)  # float64 probes were asked for
    assert (False, "propagate", True, np.float64) in passes
    assert (False, "propagate", False, np.float64) not in passes, passes
    monkeypatch.setattr(floatrun, "PREFETCH_LIMIT", 0)
    passes.clear()
    alone = evaluate_many(ADAM, inputs, attrs, outputs=OUTPUTS, dtype=dtype)
    assert (False, "propagate", False, np.float64) in passes  # the probes on their own this time
    for a, b in zip(shared, alone):
        _same(a, b)
