"""The index-map family's planted faults (issue #34 item 7): each is caught
by name, where it should be and nowhere else."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest

from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.families.index_map.faults import FAULTS
from dmlconform.families.index_map.generated_faults import FAULTS as GENERATED_FAULTS
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

GATHERS = ("GATHER", "GATHER_ELEMENTS", "GATHER_ND", "GATHER_ND1")
PADS = ("PADDING", "PADDING1")
BLOCKS = ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1")
SCATTERS = ("SCATTER", "SCATTER_ND")
JOINS = ("JOIN", "SPLIT")
OPERATORS = (*GATHERS, "SLICE", "SLICE1", "TILE", *PADS, *BLOCKS, *SCATTERS, "ONE_HOT", "NONZERO_COORDINATES", *JOINS)


@cache
def _suite() -> tuple[tuple[m.Spec, Case], ...]:
    specs = [load_spec(REPO / "specs" / f"{op}.yaml") for op in OPERATORS]
    return tuple((s, c) for s in specs for c in cases_of(s, m.FeatureLevel.FL_6_4, seed=0))


@cache
def _failed(fault: str) -> tuple[str, ...]:
    return tuple(r.case_id for r in run_cases(list(_suite()), FaultyBackend(fault)) if r.outcome is Outcome.FAIL)


#: Fault -> (the operators it must be caught on, what holds of every failing case's id).
WHERE: dict[str, tuple[tuple[str, ...], Callable[[str], bool] | None]] = {
    "gather-negative-index-not-wrapped": (GATHERS, lambda i: "/INT64/" in i or "/INT32/" in i),
    "gather-axis-ignored": (("GATHER", "GATHER_ELEMENTS"), lambda i: "/axis=0/" not in i),
    "gather-last-index-unreachable": (GATHERS, None),  # every kind of case holds size - 1 or -1
    "gather-batch-ignored": (("GATHER_ND1",), lambda i: "/batch=0/" not in i),
    "gather-64-bit-index-truncated": (GATHERS, lambda i: "/INT64/" in i),
    "slice-negative-stride-near-end": (("SLICE1",),  # where a negative stride leaves the window's far end unread
                                       lambda i: i.endswith(("/negative", "/unreached", "/partial", "/example2"))),
    "slice-stride-magnitude-ignored": (("SLICE", "SLICE1"), lambda i: "/ends" not in i and "/contiguous" not in i),
    "tile-each-element-repeated": (("TILE",), lambda i: "/copy" not in i),
    "padding-reflection-symmetric-swapped": (PADS, lambda i: "/reflection/" in i or "/symmetric/" in i
                                             or i.endswith(("/example3", "/example4"))),
    "padding-start-end-swapped": (PADS, lambda i: "/none" not in i),
    "depth-space-order-swapped": (BLOCKS, lambda i: "/b1" not in i and "/single" not in i),  # one channel: alike
    "scatter-wrong-axis": (("SCATTER",), lambda i: "/narrower" not in i),
    "scatter-negative-index-not-wrapped": (SCATTERS, lambda i: i.split("/")[4 if i.startswith("SCATTER/") else 6]
                                           in ("INT32", "INT64")),
    "scatter-nd-tuple-reversed": (("SCATTER_ND",), lambda i: "/q=1/" not in i),
    "one-hot-off-by-one": (("ONE_HOT",), None),
    "one-hot-negative-index-not-wrapped": (("ONE_HOT",), lambda i: i.split("/")[5] in ("INT32", "INT64")),
    "nonzero-coordinates-wrong-order": (("NONZERO_COORDINATES",), lambda i: "/zeros" not in i),
    "nonzero-negative-zero-counted": (("NONZERO_COORDINATES",), lambda i: i.split("/")[1].startswith("FLOAT")),
    # end to end is right on axis 0, and where every dimension before Axis has size 1
    "join-split-axis-ignored": (JOINS, lambda i: "/axis=0/" not in i),
    "join-split-order-swapped": (JOINS, lambda i: "/n=1/" not in i),  # one tensor: no order
}


def test_every_fault_has_its_place() -> None:
    assert sorted(WHERE) == sorted(set(FAULTS) - set(GENERATED_FAULTS))  # those: test_faults_generated.py


@pytest.mark.parametrize("fault", sorted(WHERE))
def test_each_fault_is_caught_where_it_bites(fault: str) -> None:
    operators, holds = WHERE[fault]
    failed = _failed(fault)
    assert {i.split("/")[0] for i in failed} == set(operators)
    if holds is not None:
        assert all(holds(i) for i in failed), [i for i in failed if not holds(i)][:3]
