"""Attribute domains and typical values read from field descriptions
(dmlconform/spec/extract_domain.py; issue #22 item 4): every phrasing the
corpus uses, with its exact values, and the specs extract makes of the corpus."""

from __future__ import annotations

import pytest

from dmlconform.catalog import load_spec
from dmlconform.spec import markdown as md
from dmlconform.spec import model as m
from dmlconform.spec.extract_domain import describes_other, read_domain
from tests.conftest import REPO

INF = None


def _read(text: str, name: str = "X") -> tuple[m.Domain | None, float | None, list[tuple[int, str]]]:
    warnings: list[tuple[int, str]] = []
    body = [md.Line(10, text)]
    facts = read_domain(name, text, body, line=9, path="p.md", warn=lambda n, msg: warnings.append((n, msg)))
    return facts.domain, facts.typical, warnings


#: (the doc's sentence, where the corpus says it) -> (min, max, min_inclusive, max_inclusive, min_symbol, max_symbol)
PHRASES = [
    ("This value cannot be less than 1.", (1.0, None, True, True, None, None)),                  # SOFTPLUS Steepness
    ("This value should be between 0.0 and 1.0.", (0.0, 1.0, True, True, None, None)),          # ADAM Beta1, Beta2
    ("This value must be greater than 0.", (0.0, None, False, True, None, None)),                 # JOIN InputCount
    ("This value must be at least 1.", (1.0, None, True, True, None, None)),                      # LRN LocalSize
    ("This value must be between 1 and 8, inclusively, starting from DML_FEATURE_LEVEL_3_0; earlier feature "
     "levels require a value of either 4 or 5.", (1.0, 8.0, True, True, None, None)),             # SLICE DimensionCount
    ("X must be in the range [1, 6].", (1.0, 6.0, True, True, None, None)),                       # UNFOLD DimensionCount
    ("Values must be in the range [0, InputTensor.DimensionCount - 1].",
     (0.0, None, True, True, None, "InputTensor.DimensionCount - 1")),                            # REDUCE Axes
    ("This value must be in the range [0, OutputTensor.DimensionCount - 1].",
     (0.0, None, True, True, None, "OutputTensor.DimensionCount - 1")),                           # JOIN Axis
    ("This value must be less than the DimensionCount of the InputTensor.",
     (None, None, True, False, None, "InputTensor.DimensionCount")),                              # TOP_K Axis
    ("X must be greater than 0, but less than the number of elements in the InputTensor along the dimension "
     "specified by Axis.", (0.0, None, False, False, None, "InputTensor.Sizes[Axis]")),           # TOP_K K
]


@pytest.mark.parametrize(("text", "bounds"), PHRASES, ids=[p[0][:40] for p in PHRASES])
def test_each_corpus_phrasing_gives_its_exact_domain(text: str, bounds: tuple[object, ...]) -> None:
    dom, typical, warnings = _read(text)
    assert dom is not None and not warnings and typical is None
    assert (dom.min, dom.max, dom.min_inclusive, dom.max_inclusive, dom.min_symbol, dom.max_symbol) == bounds
    assert dom.text == text and dom.source == "p.md:10"


@pytest.mark.parametrize(("text", "typical"), [
    ("A hyperparameter ... This value should be between 0.0 and 1.0. A value of 0.9f is typical.", 0.9),
    ("A value of 0.999f is typical.", 0.999),
    ("For 32-bit floating-point inputs, typical values include 1e-8 or FLT_EPSILON.", 1e-8),
    ("The offset from (0,0) of the input coordinates to the top-left pixel center, typically either 0 or 0.5.", 0.0),
])
def test_typical_values(text: str, typical: float) -> None:
    assert _read(text)[1] == typical


@pytest.mark.parametrize("text", [
    "Clipping bounds the elements of a tensor in the range of [-ClipThreshold, +ClipThreshold].",   # LSTM
    "For example, if ROITensor contains normalized coordinates (values in the range [0..1]), then ...",
    "The epsilon value to use to avoid division by zero.",
    "This value must match the DimensionCount of the input and output tensors.",
])
def test_sentences_that_are_no_domain_give_none(text: str) -> None:
    assert _read(text) == (None, None, [])


def test_a_limit_it_cannot_read_is_a_warning_naming_it() -> None:
    text = "Note that unlike DML_SLICE1_OPERATOR_DESC, this operator requires non-zero strides."
    assert _read(text, "InputWindowStrides") == (None, None, [(10, (
        "field InputWindowStrides: a limit the extractor does not read, not in its domain: " + repr(text)))])


def test_a_second_bound_on_one_side_is_warned_and_the_first_kept() -> None:
    dom, _, warnings = _read("This value must be at least 1. This value cannot be less than 2.")
    assert dom is not None and dom.min == 1.0
    assert warnings == [(10, "field X: a second minimum in 'This value cannot be less than 2.': keeping [1, inf)")]


def test_misplaced_text_is_found_by_its_subject() -> None:
    assert describes_other("  The Steepness coefficient. A typical default ...", ("Steepness",)) == "Steepness"
    assert describes_other("The input tensor to read from.", ("Steepness",)) is None


def test_domain_contains_and_renders() -> None:
    dom = m.Domain(min=0.0, max=1.0, min_inclusive=False)
    assert [dom.contains(v) for v in (0.0, 1e-45, 1.0, 1.0000001, float("nan"))] == [False, True, True, False, False]
    assert dom.render() == "(0, 1]"
    assert m.Domain(max_symbol="InputTensor.DimensionCount", max_inclusive=False).render() == \
        "(-inf, InputTensor.DimensionCount)"


def test_corpus_specs_carry_the_domains() -> None:
    softplus = load_spec(REPO / "specs" / "ACTIVATION_SOFTPLUS.yaml")
    steep, out = softplus.field("Steepness"), softplus.field("OutputTensor")
    assert steep is not None and out is not None
    # the doc put Steepness's text under OutputTensor (both revisions): extract moves it
    assert steep.default == 1.0 and out.default is None and out.domain is None
    assert steep.domain == m.Domain(min=1.0, text="This value cannot be less than 1.", source=(
        "operators/windows-docs-scraper/ns-directml-dml_activation_softplus_operator_desc.md:25"))
    adam = load_spec(REPO / "specs" / "ADAM_OPTIMIZER.yaml")
    beta1, eps = adam.field("Beta1"), adam.field("Epsilon")
    assert beta1 is not None and eps is not None
    assert (beta1.domain and beta1.domain.render(), beta1.typical, beta1.default) == ("[0, 1]", 0.9, None)
    assert (eps.domain, eps.typical) == (None, 1e-8)
