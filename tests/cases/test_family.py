"""What the families' case generators share (`cases.family`): one padded
layout, one reason there are no cases, one ``generable`` answer, one
reading of ``Axes`` as text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dmlconform.cases import family
from dmlconform.catalog import load_spec
from dmlconform.errors import InputError
from dmlconform.families.contraction import suite as contraction
from dmlconform.families.reduction import cases as reduction
from dmlconform.families.sequence import cases as sequence
from dmlconform.families.softmax import cases as softmax
from dmlconform.spec import model as m
from tests.conftest import REPO


def test_padded_strides_leave_the_gap_after_every_innermost_row() -> None:
    assert family.padded_strides((2, 3, 4)) == (21, 7, 1)
    assert family.padded_strides((2, 3, 4), gap=2) == (18, 6, 1)
    assert family.padded_strides((5,)) == (1,)


def test_rows_at_names_the_operator_and_level_where_there_are_none() -> None:
    spec = load_spec(REPO / "specs" / "GEMM.yaml")
    level = m.FeatureLevel.FL_6_4
    (row,) = family.rows_at(spec, level, (2,), "OutputTensor")
    assert row.tensor == "OutputTensor"
    with pytest.raises(InputError, match=r"^GEMM: no cases at 6_4: no support table or dimension count there$"):
        family.rows_at(spec, level, (), "OutputTensor")
    with pytest.raises(InputError, match="no support table or dimension count"):
        family.rows_at(spec, level, (2,), "OutputTensor", "NoSuchTensor")


@pytest.mark.parametrize(("module", "op"), [(contraction, "GEMM"), (contraction, "MATRIX_MULTIPLY_INTEGER"),
                                            (softmax, "ACTIVATION_SOFTMAX1"), (reduction, "REDUCE"),
                                            (sequence, "TOP_K")])
def test_every_family_answers_generable_through_the_shared_rule(module: object, op: str) -> None:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    assert module.generable(spec, m.FeatureLevel.FL_6_4) == (True, "ok")  # type: ignore[attr-defined]
    if op not in ("GEMM", "REDUCE"):   # these have cases since 1_0; the others no table there (the reason)
        ok, reason = module.generable(spec, m.FeatureLevel.FL_1_0)  # type: ignore[attr-defined]
        assert not ok and reason.startswith(f"{op}: no cases at 1_0: no support table")


def test_an_oracle_of_a_spec_without_its_semantics_is_an_input_error() -> None:
    from dmlconform.families.reduction.oracle import ReductionOracle
    from dmlconform.families.sequence.oracle import SequenceOracle
    from dmlconform.families.softmax.oracle import SoftmaxOracle

    spec = load_spec(REPO / "specs" / "GEMM.yaml")
    for oracle, name in ((SoftmaxOracle, "softmax"), (SequenceOracle, "sequence"), (ReductionOracle, "reduction")):
        with pytest.raises(InputError, match=rf"^GEMM: no reviewed {name} semantics \(specs/reviewed/GEMM.yaml\)$"):
            oracle.of(spec)



_ONE_OP = {"contraction": "GEMM", "softmax": "ACTIVATION_SOFTMAX", "reduction": "REDUCE", "sequence": "TOP_K"}


@pytest.mark.parametrize(("seed", "shown"), [(-1, "-1"), (1.5, "1.5"), ("0", "'0'")])
@pytest.mark.parametrize("module", [contraction, softmax, reduction, sequence])
def test_every_family_refuses_a_bad_seed_showing_it(module: object, seed: object, shown: str) -> None:
    spec = load_spec(REPO / "specs" / f"{_ONE_OP[module.__name__.split('.')[2]]}.yaml")
    with pytest.raises(InputError) as raised:
        next(module.generate(spec, m.FeatureLevel.FL_6_4, seed=seed))  # type: ignore[attr-defined]
    assert str(raised.value) == f"seed={shown} must be an integer >= 0"


@given(st.lists(st.integers(0, 10**9 - 1), min_size=1, max_size=8).map(tuple))
def test_axes_text_round_trips(axes: tuple[int, ...]) -> None:
    assert family.parse_axes(",".join(map(str, axes))) == axes
    assert family.parse_axes(" , ".join(map(str, axes)), empty=True) == axes


@pytest.mark.parametrize(("value", "axes"), [("2,0", (2, 0)), (" 3 ", (3,)), (7, (7,))])
def test_axes_text(value: object, axes: tuple[int, ...]) -> None:
    assert family.parse_axes(value) == axes


@pytest.mark.parametrize("value", ["", "1,,2", "²", "-1", "+1", "1_0", " -0", True, "1234567890"])
def test_axes_text_refused(value: object) -> None:
    with pytest.raises(ValueError) as raised:
        family.parse_axes(value, name="Dims")
    assert str(raised.value) == f"Dims={value!r} is not a list of dimension numbers; write them comma-separated, e.g. \"2,0\""


def test_no_axis_at_all_only_where_the_family_allows_it() -> None:
    assert family.parse_axes("  ", empty=True) == ()
    with pytest.raises(ValueError, match="is not a list of dimension numbers"):
        family.parse_axes(True, empty=True)
    assert family.axes_problem({"Axes": ""}, "Axes", tensor="X", rank=2, empty=True) is None
    assert family.axes_problem({"Axes": ""}, "Axes", tensor="X", rank=2) == (
        "Axes='' is not a list of dimension numbers; write them comma-separated, e.g. \"2,0\"")


@pytest.mark.parametrize(("attributes", "problem"), [
    ({"Axes": "3,1"}, None),
    ({}, 'attribute Axes is missing: give the reduced dimensions as text, e.g. ["Axes", "3"]'),
    ({"Axes": "-1"}, "Axes='-1' is not a list of dimension numbers; write them comma-separated, e.g. \"2,0\""),
    ({"Axes": "1, 4"}, "Axes=1,4: 4 is no dimension of the 4-D InputTensor: give dimensions 0 to 3"),
    ({"Axes": "2,1,2"}, "Axes=2,1,2 names dimension 2 twice: give each dimension once"),
])
def test_one_axes_check_with_one_wording(attributes: dict[str, object], problem: str | None) -> None:
    assert family.axes_problem(attributes, "Axes", tensor="InputTensor", rank=4) == problem


@pytest.mark.parametrize(("count", "axes", "problem"), [
    (None, (0,), None), (2, (0, 2), None),
    (2, (0,), "AxisCount=2 but Axes=0 lists 1 dimension: give AxisCount=1"),
    ("2", (0, 2), "AxisCount='2' but Axes=0,2 lists 2 dimensions: give AxisCount=2"),
])
def test_axis_count_is_the_count_of_axes(count: object, axes: tuple[int, ...], problem: str | None) -> None:
    attributes = {"Axes": ",".join(map(str, axes))} | ({} if count is None else {"AxisCount": count})
    assert family.count_problem(attributes, "AxisCount", axes, axes_name="Axes") == problem
