"""State belongs to a run (issue #21): evaluating formulas, refining,
generating cases and running them leaves every module-level container of
dmlconform as it was, and a result depends on a tree's value, never on which
object holds it."""

from __future__ import annotations

import sys

import numpy as np

import dmlconform.backends.cpu
import dmlconform.cases.draws
import dmlconform.families.elementwise.cases
import dmlconform.families.elementwise.floatrun
import dmlconform.formula.boundaries
import dmlconform.formula.refine
import dmlconform.runner  # noqa: F401 (every module the work below uses, imported before the snapshot)
from dmlconform.backends.cpu import CpuBackend
from dmlconform.catalog import load_spec
from dmlconform.families.elementwise.cases import generate
from dmlconform.families.elementwise.formula_oracle import evaluate, literal, prepare
from dmlconform.formula import parse
from dmlconform.formula.evaluate import Evaluator, Settings, Val
from dmlconform.formula.refine import refine
from dmlconform.formula.tree import Assign, Binary, FormulaTree, Name, Num
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

EDGES = np.asarray([0.0, -0.0, 1.0, -1.0, 0.5, 3.0e38, -3.0e38, 1e-45, 1e-30, np.inf, -np.inf, np.nan])


def _edges(dtype: type) -> np.ndarray:
    with np.errstate(over="ignore"):  # 3e38 is inf in float16
        return EDGES.astype(dtype)


def _containers() -> dict[str, object]:
    """Every module-level dict, list and set of dmlconform: its keys (or
    length).  Constant tables compare equal before and after; a cache
    filled at run time does not."""
    out: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if name != "dmlconform" and not name.startswith("dmlconform."):
            continue
        for attr, value in vars(module).items():
            if attr.startswith("__") or not isinstance(value, (dict, list, set)):
                continue
            out[f"{name}.{attr}"] = sorted(map(repr, value)) if isinstance(value, (dict, set)) else len(value)
    return out


def _work() -> None:
    """A little of everything a run does with formulas, cases and the CPU backend."""
    for text in ("f(x) = x / (1 + abs(x))", "f(x) = max(0, min(Alpha * x + Beta, 1))", "f(x) = tanh(x) * 2"):
        tree = parse(text)
        attrs = {"Alpha": 0.2, "Beta": 0.5} if "Alpha" in text else {}
        for dtype in (np.float32, np.float16):
            evaluate(tree, {"x": _edges(dtype)}, attrs, dtype=dtype)
            literal(tree, {"x": _edges(dtype)}, attrs, dtype=dtype)
    evaluate(parse("f(x) = x > 2.5"), {"x": np.arange(-4, 5, dtype=np.int32)}, dtype=np.uint8)
    refine(parse("f(x) = exp(x) - 1"), {"x": EDGES}, np.arange(EDGES.size), EDGES.shape, np.dtype(np.float32),
           minmax="propagate")
    for op in ("ACTIVATION_HARD_SIGMOID", "ELEMENT_WISE_CLIP", "ADAM_OPTIMIZER"):
        spec = load_spec(REPO / "specs" / f"{op}.yaml")
        run_cases([(spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=2)], CpuBackend())


def test_a_run_leaves_every_module_global_as_it_was() -> None:
    before = _containers()
    _work()
    after = _containers()
    changed = sorted(k for k in before if after.get(k) != before[k])
    assert changed == []


def test_results_are_the_same_for_an_equal_tree_in_another_object() -> None:
    text = "f(x) = x * (1 / (1 + exp(-x)))"
    x = {"x": np.linspace(-90.0, 90.0, 301).astype(np.float32)}
    first, second = evaluate(parse(text), x, dtype=np.float32), evaluate(parse(text), x, dtype=np.float32)
    assert first.expected.tobytes() == second.expected.tobytes()
    assert first.bound_strict.tobytes() == second.bound_strict.tobytes()


def test_a_prepared_formula_evaluates_as_its_tree() -> None:
    tree = parse("f(x) = HardSigmoid(x, Alpha, Beta) * x")
    x = {"x": _edges(np.float16)}
    attrs = {"Alpha": 0.2, "Beta": 0.5}
    once, each = evaluate(prepare(tree), x, attrs, dtype=np.float16), evaluate(tree, x, attrs, dtype=np.float16)
    assert (once.expected.tobytes(), once.bound_strict.tobytes(), once.ulp, once.signed_zero) == \
           (each.expected.tobytes(), each.bound_strict.tobytes(), each.ulp, each.signed_zero)


def test_a_value_shared_by_two_statements_is_final_only_in_the_last() -> None:
    """``t = x*x`` is read by ``u`` and ``v = x*x`` by no one: only v's
    product is a final step (its underflow the result's own rounding).  The
    same product object in both statements must not make t's final too:
    its underflow, scaled up by 1e30 in u, belongs in u's bound."""
    shared = Binary("*", Name("x"), Name("x"))
    tree = FormulaTree((Assign("t", None, "=", shared),
                        Assign("u", None, "=", Binary("*", Name("t"), Num("1e30"))),
                        Assign("v", None, "=", shared)))
    alike = parse("t = x * x\nu = t * 1e30\nv = x * x")
    assert alike == tree
    x = np.asarray([1e-25, 3e-24, 1e-20, 0.5])
    settings = Settings(unit=2.0 ** -24, tiny=float(np.finfo(np.float32).smallest_normal))
    [got] = Evaluator({"x": Val(x.copy(), exact=True)}, settings).run_many(tree, ("u",))
    [want] = Evaluator({"x": Val(x.copy(), exact=True)}, settings).run_many(alike, ("u",))
    assert want.err.abs.tolist() == [2.0 ** -126 * 1e30] * 3 + [0.0]
    assert (got.err.rel, got.err.abs.tolist()) == (want.err.rel, want.err.abs.tolist())
