"""Tensor arrays (issue #34: JOIN's InputTensors, SPLIT's OutputTensors): one
naming convention, ``Field[k]``, understood by the spec model, case folders,
the case store and the cpu reference's table checks."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.case_folders import case_problems
from dmlconform.cases.model import Case, TensorData
from dmlconform.cases.store import read_cases, write_cases
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.spec import model as m
from dmlconform.spec.model import element_name, field_name, split_element
from tests.conftest import REPO


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _case(op: str, level: m.FeatureLevel = m.FeatureLevel.FL_6_4, part: str = "/n=3/") -> Case:
    return next(c for c in cases_of(_spec(op), level, seed=0) if part in c.id)


def _renamed(tensors: tuple[TensorData, ...], old: str, new: str) -> tuple[TensorData, ...]:
    return tuple(replace(t, name=new) if t.name == old else t for t in tensors)


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True).filter(lambda s: "[" not in s).map(str),
       st.integers(0, 10**6))
def test_element_names_round_trip(field: str, index: int) -> None:
    assert split_element(element_name(field, index)) == (field, index)
    assert field_name(element_name(field, index)) == field
    assert split_element(field) == (field, None)


def test_names_that_are_no_element_stay_whole() -> None:
    for name in ("InputTensors[01]", "InputTensors[-1]", "InputTensors[]", "InputTensors[1]x", "[1]"):
        assert split_element(name) == (name, None)


def test_an_array_field_binds_only_its_elements() -> None:
    spec = _spec("JOIN")
    assert spec.tensor_field("InputTensors[3]") is spec.field("InputTensors")
    assert spec.tensor_field("InputTensors") is None
    assert spec.tensor_field("OutputTensor") is spec.field("OutputTensor")
    assert spec.tensor_field("OutputTensor[0]") is None
    assert spec.tensor_field("InputCount[0]") is None


def test_generated_array_cases_have_no_problem() -> None:
    for op in ("JOIN", "SPLIT"):
        case = _case(op)
        assert [t.name for t in (*case.inputs, *case.outputs) if "[" in t.name][-1].endswith("[2]")
        assert list(case_problems(_spec(op), case)) == []


def test_an_array_named_without_index_says_the_convention() -> None:
    case = _case("JOIN")
    bad = replace(case, inputs=_renamed(case.inputs, "InputTensors[0]", "InputTensors"))
    found = list(case_problems(_spec("JOIN"), bad))
    assert any("InputTensors is an array of tensors (InputCount of them); name each InputTensors[0], "
               "InputTensors[1], ... in order" in p for p in found), found


def test_a_gap_in_the_numbering_is_located() -> None:
    case = _case("JOIN")
    bad = replace(case, inputs=_renamed(case.inputs, "InputTensors[1]", "InputTensors[5]"))
    found = list(case_problems(_spec("JOIN"), bad))
    assert "tensors InputTensors are numbered [0, 2, 5], without InputTensors[1]: number them 0 to 2 in order" \
        in found, found


def test_a_count_other_than_the_arrays_length_is_named() -> None:
    case = _case("SPLIT")
    bad = replace(case, attributes=tuple((n, 4 if n == "OutputCount" else v) for n, v in case.attributes))
    found = list(case_problems(_spec("SPLIT"), bad))
    assert "attribute OutputCount=4 but the case gives 3 tensors OutputTensors: set OutputCount to 3" in found, found


def test_a_single_tensor_with_an_index_is_named() -> None:
    case = _case("SPLIT")
    bad = replace(case, inputs=_renamed(case.inputs, "InputTensor", "InputTensor[0]"))
    found = list(case_problems(_spec("SPLIT"), bad))
    assert any("InputTensor is a single tensor, not an array: name it InputTensor" in p for p in found), found


def test_an_element_of_another_type_breaks_the_same_type_rule() -> None:
    case = _case("JOIN")
    odd = tuple(replace(t, dtype=m.DataType.INT32, buffer=t.buffer.view(np.int32)) if t.name == "InputTensors[1]"
                else t for t in case.inputs)
    bad = replace(case, inputs=odd)
    found = list(case_problems(_spec("JOIN"), bad))
    assert any("needs the same DataType" in p and "InputTensors[1]=INT32" in p for p in found), found
    support = CpuBackend().supports(_spec("JOIN"), bad)
    assert not support.supported and "InputTensors[1]=INT32" in (support.reason or "")


def test_the_cpu_reference_checks_elements_against_their_fields_row() -> None:
    case = _case("JOIN", m.FeatureLevel.FL_1_0, "/unsupported")
    support = CpuBackend(feature_level="1_0").supports(_spec("JOIN"), case)
    assert support.reason == ("InputTensors[0] data type FLOAT64 is not supported at feature level 1_0 "
                              "(supported: FLOAT32, FLOAT16, INT32, INT16, UINT32, UINT16)")
    for op in ("JOIN", "SPLIT"):
        assert CpuBackend(feature_level="1_0").supports(_spec(op), _case(op, m.FeatureLevel.FL_1_0)).supported


def test_array_cases_round_trip_through_a_folder(tmp_path: Path) -> None:
    cases = [_case("JOIN"), _case("SPLIT")]
    write_cases(cases, tmp_path)
    assert (tmp_path / "00000.InputTensors-2.npy").exists() and (tmp_path / "00001.OutputTensors-0.npy").exists()
    back = read_cases(tmp_path)
    for a, b in zip(cases, back):
        assert [t.name for t in (*a.inputs, *a.outputs)] == [t.name for t in (*b.inputs, *b.outputs)]
        assert all(np.array_equal(x.buffer, y.buffer, equal_nan=True) for x, y in zip(a.inputs, b.inputs))
