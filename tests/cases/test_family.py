"""What the families' case generators share (`cases.family`): one padded
layout, one reason there are no cases, one ``generable`` answer."""

from __future__ import annotations

import pytest

from dmlconform.cases import contraction, family, reduction, sequence, softmax
from dmlconform.errors import InputError
from dmlconform.spec import model as m
from dmlconform.spec.load import load_spec
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
    from dmlconform.oracles.reduction import ReductionOracle
    from dmlconform.oracles.sequence import SequenceOracle
    from dmlconform.oracles.softmax import SoftmaxOracle

    spec = load_spec(REPO / "specs" / "GEMM.yaml")
    for oracle, name in ((SoftmaxOracle, "softmax"), (SequenceOracle, "sequence"), (ReductionOracle, "reduction")):
        with pytest.raises(InputError, match=rf"^GEMM: no reviewed {name} semantics \(specs/reviewed/GEMM.yaml\)$"):
            oracle.of(spec)



_ONE_OP = {"contraction": "GEMM", "softmax": "ACTIVATION_SOFTMAX", "reduction": "REDUCE", "sequence": "TOP_K"}


@pytest.mark.parametrize(("seed", "shown"), [(-1, "-1"), (1.5, "1.5"), ("0", "'0'")])
@pytest.mark.parametrize("module", [contraction, softmax, reduction, sequence])
def test_every_family_refuses_a_bad_seed_showing_it(module: object, seed: object, shown: str) -> None:
    spec = load_spec(REPO / "specs" / f"{_ONE_OP[module.__name__.rsplit('.', 1)[1]]}.yaml")
    with pytest.raises(InputError) as raised:
        next(module.generate(spec, m.FeatureLevel.FL_6_4, seed=seed))  # type: ignore[attr-defined]
    assert str(raised.value) == f"seed={shown} must be an integer >= 0"
