"""families.elementwise.readings: the fast paths give what the general path gives.

Another NaN policy than the primary is evaluated only at the elements with
a NaN input (`ReadingOracle._evaluated`); evaluated over the whole batch
instead, every alternative (name, elements, values to the bit, reason) is
the same, on random float batches with NaN, infinities and signed zeros."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.compare import Alternative
from dmlconform.families import cases_of
from dmlconform.families.elementwise import readings
from dmlconform.families.elementwise.formula_oracle import evaluate_many
from dmlconform.families.elementwise.oracle import FormulaOracle
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype
from tests.conftest import REPO

#: Operators with a NaN reading, each primary policy (propagate: Shrink; formula: the others).
OPS = ("ACTIVATION_SHRINK", "ELEMENT_WISE_CLIP_GRAD", "ACTIVATION_THRESHOLDED_RELU", "ELEMENT_WISE_IF")
SPECIAL = (np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5)


@cache
def _oracle(op: str) -> tuple[FormulaOracle, tuple[Case, ...]]:
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    cases = tuple(c for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype.is_float)
    return FormulaOracle.of(spec), cases


def _alternatives(oracle: FormulaOracle, case: Case, chunk: dict[str, np.ndarray]) -> list[tuple[Alternative, ...]]:
    spec, names = oracle.spec, [oracle.outputs.get(o.name) for o in case.outputs]
    primary = evaluate_many(oracle.formula, chunk, case.attribute_map(), dtype=case.dtype, outputs=names,
                            nan_policy=spec.formula.nan_policy, overflow=spec.formula.integer_overflow)
    assert oracle.readings is not None
    return oracle.readings.alternatives(chunk, case.attribute_map(), dtype=case.dtype, outputs=names,
                                        primary=primary, signed_zero=[True] * len(names))


def _same(a: tuple[Alternative, ...], b: tuple[Alternative, ...]) -> bool:
    return [(x.name, x.index.tolist(), x.values.tobytes(), x.reason) for x in a] == \
        [(x.name, x.index.tolist(), x.values.tobytes(), x.reason) for x in b]


@pytest.mark.parametrize("op", OPS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_nan_policy_on_the_nan_elements_alone_gives_the_whole_batchs_values(
        op: str, data: st.DataObject) -> None:
    oracle, cases = _oracle(op)
    case = data.draw(st.sampled_from(cases), label="case")
    size = data.draw(st.integers(1, 40), label="size")
    numbers = st.one_of(st.sampled_from(SPECIAL), st.floats(-1e6, 1e6, width=32))
    dtype = numpy_dtype(case.dtype)
    with np.errstate(over="ignore"):  # 1e6 is inf in float16: one more special value
        chunk = {name: np.array(data.draw(st.lists(numbers, min_size=size, max_size=size), label=name)).astype(dtype)
                 for name in oracle.inputs.values()}
    fast = _alternatives(oracle, case, chunk)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(readings, "_nan_inputs", lambda chunk: None)  # the general path: the whole batch
        general = _alternatives(oracle, case, chunk)
    assert all(_same(a, b) for a, b in zip(fast, general, strict=True))
