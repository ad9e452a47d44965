"""GATHER's page: "the original rank of InputTensor + IndexDimensions - 1
... must be less than or equal to the DimensionCount of OutputTensor".  A
case beyond it is a negative one (rejected cleanly, or computed with the
indices' leading ones cropped), never one a backend must run: DirectML's
own CreateOperator takes such a desc and writes past a heap block
(docs/results/directml-linux.md), and an implementation that rejects it
as the page asks must not FAIL."""

from __future__ import annotations

from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.spec import model as m
from tests.conftest import REPO


def _original_rank(sizes: tuple[int, ...]) -> int:
    leading = next((d for d, s in enumerate(sizes) if s != 1), len(sizes))
    return len(sizes) - leading


def test_gather_cases_beyond_the_pages_rank_rule_are_negative() -> None:
    spec = load_spec(REPO / "specs" / "GATHER.yaml")
    level = next(lv for lv in m.FeatureLevel if lv.short == "6_4")
    checked = beyond = 0
    for case in cases_of(spec, level, seed=0):
        attrs = dict(case.attributes)
        if "example" in case.id or "unsupported" in case.id:
            continue
        x, out = case.input("InputTensor"), case.outputs[0]
        over = _original_rank(x.sizes) + int(attrs["IndexDimensions"]) - 1 > len(out.sizes)
        assert case.expect_supported is not over, case.id
        assert (case.out_of_domain == ("Axis", "IndexDimensions")) is over, case.id
        checked += 1
        beyond += over
    assert checked > 20 and beyond == 3  # axis=0 with k=2 and 3, axis=1 with k=3, at 4 dimensions
