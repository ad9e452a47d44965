"""classify: every formula block parses or gets a reason (issue 4, part 2)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dmlconform.compare import Verdict
from dmlconform.families.elementwise.formula_oracle import evaluate
from dmlconform.formula import Category, NotParsed, Parsed, classify, to_text
from dmlconform.oracles.base import range_lost
from dmlconform.spec.model import Overflow
from tests.conftest import require_corpus
from tests.formula import corpus

SIGN_FIELDS = ("InputTensor", "OutputTensor")


def test_function_style_binds_parameters_in_struct_order() -> None:
    result = classify("f(x) = x * Sigmoid(SigmoidInputScale * x)", ("InputTensor", "OutputTensor", "SigmoidInputScale"))
    assert isinstance(result, Parsed) and result.evaluable
    assert result.inputs == (("x", "InputTensor"),)
    assert result.outputs == (("f", "OutputTensor"),)
    assert result.attributes == ("SigmoidInputScale",)
    assert to_text(result.tree) == "f(x) = x * Sigmoid(SigmoidInputScale * x)"


def test_program_style_binds_names_and_notes_a_mismatch() -> None:
    text = "X = InputTensor\ndY = InputGradientTensor\n\nOutputGradientTensor = (X > 0 ? dY : 0)"
    result = classify(text, ("InputTensor", "InputGradientTensor", "OutputTensor"))
    assert isinstance(result, Parsed) and result.evaluable
    assert result.inputs == (("InputTensor", "InputTensor"), ("InputGradientTensor", "InputGradientTensor"))
    assert result.outputs == (("OutputGradientTensor", "OutputTensor"),)
    assert result.notes == ("formula assigns OutputGradientTensor; the operator's only output tensor is OutputTensor",)


def test_names_given_only_in_comments() -> None:
    text = "// For uint8 output, Min = 0, Max = 255\nf(input, scale, zero_point) = clamp(round(input / scale) + zero_point, Min, Max)"
    result = classify(text, ("InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor"))
    assert isinstance(result, Parsed) and not result.evaluable
    assert result.reason == "names Max, Min are neither inputs nor attributes of the operator (Max, Min given only in a comment)"


def test_a_step_of_a_larger_operator() -> None:
    result = classify("f(Input, Scale, ZeroPoint) = (Input - ZeroPoint) * Scale",
                      ("InputTensor", "InputScaleTensor", "InputZeroPointTensor", "FilterTensor", "OutputTensor"))
    assert isinstance(result, Parsed) and not result.evaluable
    assert result.reason == "formula covers 3 of 4 input tensors (FilterTensor unused): a step of the operator"


@pytest.mark.parametrize(("text", "category", "reason"), [
    ("for each coordinate in OutputTensor\n    OutputTensor[coordinate] = Value\nendfor",
     Category.PSEUDOCODE, "loop pseudocode over coordinates or regions: not element-wise"),
    ("f(x_i) = ln(exp(x_i) / sum(exp(x_0), ..., exp(x_j)))", Category.REDUCTION,
     "reduction (sum over an axis or region): not element-wise"),
    ("output[...] = input[..., indices[...], ...]", Category.INDEXING,
     "tensor indexing (gather/scatter/slice): not element-wise"),
    ("[Add Bias] -> GEMM(Query, Key) -> Softmax", Category.DIAGRAM,
     "data-flow diagram of composed operators: not element-wise"),
    ("InputTensor   OutputTensor\n[[1, 2]]  -->  [[3]]", Category.EXAMPLE,
     "worked example of tensors (input --> output), not a formula"),
    ("InputMax = Max(InputTensor)\nOutputTensor = InputMax", Category.REDUCTION,
     "reduction Max(...) combines many elements: not element-wise"),
    ("f(x) = x +", Category.SYNTAX, "does not parse: expected a number, a name or '(', found end of line"),
])
def test_reasons(text: str, category: Category, reason: str) -> None:
    result = classify(text)
    assert isinstance(result, NotParsed)
    assert (result.category, result.reason) == (category, reason)


def test_typography_is_read_and_reported() -> None:
    result = classify("f(a, b) = (a \u2013 b) / 2")
    assert isinstance(result, Parsed) and result.notes == ("U+2013 read as '-'",)


def test_worked_example_after_the_formula_is_ignored() -> None:
    text = "f(cond, a, b) = a, if cond != 0\n                b, otherwise\n\nExample:\n    [[1, 0]] // ConditionTensor"
    result = classify(text, ("ConditionTensor", "ATensor", "BTensor", "OutputTensor"))
    assert isinstance(result, Parsed) and result.evaluable
    assert result.notes == ("worked example from block line 4 on ignored",)


def test_unknown_function() -> None:
    result = classify("f(x) = gamma(x)")
    assert isinstance(result, Parsed) and result.reason == "unknown function gamma"


def test_import_is_light() -> None:
    import subprocess

    code = "import sys, dmlconform.formula; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- the corpus ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def survey() -> dict[str, tuple[corpus.PageResult, ...]]:
    require_corpus()
    return corpus.survey()


def test_corpus_coverage(survey: dict[str, tuple[corpus.PageResult, ...]]) -> None:
    counts = {folder: (len(pages), sum(p.parsed for p in pages), sum(p.evaluable for p in pages))
              for folder, pages in survey.items()}
    assert counts == {
        "sdk-api": (105, 81, 75),
        "windows-ai-docs": (10, 4, 3),
        "windows-docs-scraper": (105, 81, 75),
    }
    for pages in survey.values():
        assert all(p.evaluable or p.reason for p in pages)  # nothing dropped in silence


def test_every_evaluable_corpus_formula_evaluates(survey: dict[str, tuple[corpus.PageResult, ...]]) -> None:
    rng = np.random.default_rng(0)
    for page in survey["sdk-api"] + survey["windows-ai-docs"]:
        if not page.evaluable:
            continue
        (result,) = page.results
        integer = any(op in to_text(result.tree) for op in ("<<", ">>"))
        inputs = {name: (rng.integers(0, 8, 16).astype(np.uint32) if integer else
                         rng.standard_normal(16).astype(np.float32)) for name, _ in result.inputs}
        attrs = {a: 0.5 for a in result.attributes}
        attrs.update({a: "DML_IS_INFINITY_MODE_EITHER" for a in result.attributes if a == "InfinityMode"})
        program = result.tree.main.params is None
        out = evaluate(result.tree, inputs, attrs, dtype=np.uint32 if integer else np.float32,
                       output=result.outputs[0][0] if program else None, overflow=Overflow.WRAP)
        assert out.expected.shape == (16,), page.path


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_every_evaluable_formula_accepts_its_literal_evaluation(
        survey: dict[str, tuple[corpus.PageResult, ...]], dtype: type) -> None:
    """Each formula computed step by step in the target type (a naive
    implementation) never FAILs against the oracle where it keeps the
    result's range: the ULP budget and the error bound cover it, and where an
    intermediate overflows the literal value is a quality warning.  Where it
    lost the range (+-inf, NaN or +-0 for a finite normal value: PARAMETRIC_SOFTPLUS's
    inf at 8.41 in float16), it may FAIL (issue #32), and only there."""
    from dmlconform.compare import compare
    from dmlconform.families.elementwise.formula_oracle import literal

    rng = np.random.default_rng(1)
    for page in survey["sdk-api"] + survey["windows-ai-docs"]:
        if not page.evaluable or any(op in to_text(page.results[0].tree) for op in ("<<", ">>")):
            continue
        (result,) = page.results
        n = 4000
        inputs = {name: _plausible(tensor, rng, n).astype(dtype) for name, tensor in result.inputs}
        attrs: dict[str, object] = {a: 0.75 for a in result.attributes}
        attrs.update({a: "DML_IS_INFINITY_MODE_EITHER" for a in result.attributes if a == "InfinityMode"})
        output = result.outputs[0][0] if result.tree.main.params is None else None
        oracle = evaluate(result.tree, inputs, attrs, dtype=dtype, output=output)
        with np.errstate(all="ignore"):
            naive = literal(result.tree, inputs, attrs, dtype=dtype, output=output)
        verdict = compare(oracle.expected, naive, policy=oracle.policy(), bound_strict=oracle.bound_strict,
                          bound_relaxed=oracle.bound_relaxed, alternatives=oracle.alternatives)
        lost = range_lost(naive, oracle.expected)
        failed = verdict.status == Verdict.FAIL
        assert not (failed & ~lost).any(), (page.path, verdict.worst[:2])


def _plausible(tensor: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Random values spread over magnitudes; a training step is a count and a
    second moment is not negative (Adam), as the operator's users give them."""
    if "Step" in tensor:
        return rng.integers(1, 100, n).astype(np.float64)
    values = rng.standard_normal(n) * np.exp2(rng.integers(-4, 5, n))
    return np.abs(values) if "SecondMoment" in tensor else values
