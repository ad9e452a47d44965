"""NONZERO_COORDINATES in the index-map family (issue #34): the oracle's
rows against a loop over the elements (-0 zero, NaN not), the rows past
the count left open, the page's example, the CPU reference at 0 FAIL, and
the engines (docs/index-map.md "NONZERO_COORDINATES")."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families.index_map.nonzero import columns, effective_rank
from dmlconform.families.index_map.nonzero_oracle import nonzero_rows
from dmlconform.families.index_map.oracle import example_problems
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO
from tests.families.index_map import test_scatters as scatter_tests


def _pairs() -> tuple[tuple[m.Spec, Case], ...]:
    return scatter_tests._pairs("NONZERO_COORDINATES")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.data())
def test_rows_are_the_non_zero_elements_in_element_order(sizes: list[int], data: st.DataObject) -> None:
    count = int(np.prod(sizes))
    pool = [0.0, -0.0, 1.0, -2.5, float("nan"), 5e-45]
    x = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count)),
                 dtype=np.float32).reshape(sizes)
    n = data.draw(st.integers(max(effective_rank(tuple(sizes)), 1), len(sizes)))
    found, rows, defined = nonzero_rows(x, n)
    want = [list(c)[len(sizes) - n:] for c in np.ndindex(*sizes) if not x[c] == 0]  # NaN: not zero
    assert found == len(want) == int(defined.sum())
    assert rows[:found].tolist() == want
    assert not defined[found:].any()


def test_shape_rules_say_what_is_wrong() -> None:
    assert columns((1, 1, 12, 5), (1, 1, 60, 2), (1, 1, 1, 1)) == 2
    with pytest.raises(ValueError, match="effective rank"):
        columns((1, 1, 12, 5), (1, 1, 60, 1), (1, 1, 1, 1))
    with pytest.raises(ValueError, match="M = the input's 60"):
        columns((1, 1, 12, 5), (1, 1, 59, 2), (1, 1, 1, 1))


def test_the_pages_example_holds() -> None:
    sem = load_spec(REPO / "specs" / "NONZERO_COORDINATES.yaml").semantics
    assert isinstance(sem, IndexMap) and [example_problems(sem, e) for e in sem.examples] == [[]]


def test_cpu_passes_every_case() -> None:
    results = run_cases(list(_pairs()), CpuBackend())
    assert [r.case_id for r in results if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)] == []
    assert [r.case_id.split("/")[-1] for r in results if r.outcome is Outcome.NOT_SUPPORTED] == ["unsupported"]


def test_onnxruntime_passes_but_the_input_types_it_lacks() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    for r in run_cases(list(_pairs()), OnnxRuntimeBackend()):
        if r.outcome is Outcome.NOT_SUPPORTED:
            assert "NOT_IMPLEMENTED" in r.message or "unsupported" in r.case_id, r.message
        else:
            assert r.outcome is Outcome.PASS, f"{r.case_id}: {r.message}"
