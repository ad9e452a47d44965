"""The checks every kind of reviewed semantics shares (`spec.reviewed_checks`):
the one loop over the names the semantics give."""

from __future__ import annotations

from dmlconform.catalog import load_spec
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc
from tests.conftest import REPO

_TENSORS = ((("input",), m.TensorRole.INPUT), (("output",), m.TensorRole.OUTPUT))


def _softmax() -> m.Spec:
    return load_spec(REPO / "specs" / "ACTIVATION_SOFTMAX.yaml")


def test_named_fields_checks_each_name_and_then_that_every_field_is_named() -> None:
    spec = _softmax()
    every = rc.named_fields({"input": "InputTensor", "output": "OutputTensor"}, spec, _TENSORS, ())
    assert every == rc.Named(("InputTensor", "OutputTensor"), ())
    short = rc.named_fields({"input": "InputTensor"}, spec, _TENSORS, ())
    assert short.problems == ((("semantics",), "semantics leave out field OutputTensor of ACTIVATION_SOFTMAX; "
                                               "name every tensor and attribute"),)


def test_a_misnamed_field_is_one_problem_not_also_left_out() -> None:
    named = rc.named_fields({"input": "InputTensor", "output": "InputTensor"}, _softmax(), _TENSORS, ())
    assert named.problems == ((("semantics", "output"), "InputTensor is an input of ACTIVATION_SOFTMAX, not an output; "
                                                        "name one of its outputs"),)


def test_an_attribute_path_takes_its_check() -> None:
    spec = load_spec(REPO / "specs" / "GEMM.yaml")
    named = rc.named_fields({"alpha": "TransA"}, spec, (), ((("alpha",), rc.is_float),))
    assert named.problems[0] == (("semantics", "alpha"), "TransA is DML_MATRIX_TRANSFORM (enum) in the spec; "
                                                        "name a FLOAT scalar here")
