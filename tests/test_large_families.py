"""The ``--large`` cases of the index-map, window, normalization and
interpolation families (issues #34, #35, #36, "Done means"): which cases
``large`` adds, their sizes, and the slow checks that the cheap ones pass
on cpu (bench/bench_large.py measures times and peak memory)."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

LARGE = {"GATHER": "GATHER/FLOAT32/4d/axis=2/k=1/UINT32/boundary/large",
         "CAST": "CAST/FLOAT32/4d/to=FLOAT16/large",
         "CONVOLUTION": "CONVOLUTION/FLOAT32/4d/forward/cross/k3/random/large",
         "MEAN_VARIANCE_NORMALIZATION1": "MEAN_VARIANCE_NORMALIZATION1/FLOAT32/4d/axes=1,2,3/normalized/random/large",
         "RESAMPLE1": "RESAMPLE1/FLOAT32/4d/linear/half-pixel/up4/random/large"}
#: Operators of the same packages that ``large`` leaves alone.
UNCHANGED = ("GATHER_ELEMENTS", "SLICE", "FILL_VALUE_SEQUENCE", "MEAN_VARIANCE_NORMALIZATION")


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _ids(op: str, *, large: bool, level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> list[str]:
    """The case ids generation offers (``keep`` sees each; no value is drawn)."""
    seen: list[str] = []

    def keep(case_id: str, _: m.DataType) -> bool:
        seen.append(case_id)
        return False

    list(cases_of(_spec(op), level, seed=0, large=large, keep=keep))
    return seen


def _large(op: str) -> Case:
    return next(cases_of(_spec(op), m.FeatureLevel.FL_6_4, seed=0, large=True, keep=lambda i, _: i == LARGE[op]))


@pytest.mark.parametrize("op", sorted(LARGE))
def test_large_adds_exactly_the_large_case(op: str) -> None:
    plain, large = _ids(op, large=False), _ids(op, large=True)
    assert [i for i in large if i not in plain] == [LARGE[op]]
    assert LARGE[op] not in plain


@pytest.mark.parametrize("op", UNCHANGED)
def test_large_adds_nothing_to_the_other_operators(op: str) -> None:
    assert _ids(op, large=True) == _ids(op, large=False)


@pytest.mark.parametrize(("op", "elements"), [("GATHER", 1 << 24), ("CAST", 1 << 24),
                                              ("MEAN_VARIANCE_NORMALIZATION1", 1 << 24)])
def test_the_new_large_cases_have_2_to_the_24_outputs(op: str, elements: int) -> None:
    case = _large(op)
    assert math.prod(case.outputs[0].sizes) == elements
    assert case.dtype is m.DataType.FLOAT32


def test_the_large_gather_reads_every_boundary_index_and_the_whole_axis() -> None:
    case = _large("GATHER")
    x, idx = (t.view(t.buffer) for t in case.inputs)
    assert idx.dtype == np.uint32 and idx.size == x.shape[2] == 1 << 12
    assert {0, x.shape[2] - 1} <= set(idx.reshape(-1)[:4].tolist())
    assert np.unique(idx).size > idx.size // 2  # random rows, not one repeated


def test_the_large_cast_holds_the_edge_values_and_values_past_float16s_range() -> None:
    x = _large("CAST").inputs[0].view()
    assert np.isnan(x).any() and np.isinf(x).any() and (x == 0).any()
    assert (np.abs(x[np.isfinite(x)]) > 65520).any() and (np.abs(x) < 6.1e-5).any()


def test_the_large_layer_normalization_normalizes_rows_of_2_to_the_12() -> None:
    case = _large("MEAN_VARIANCE_NORMALIZATION1")
    assert case.inputs[0].sizes == (1 << 12, 1 << 12, 1, 1)
    assert case.attribute_map()["Axes"] == "1,2,3"
    assert [t.sizes for t in case.inputs[1:]] == [(1, 1 << 12, 1, 1)] * 2  # scale and bias per feature


def test_before_4_0_the_large_layer_normalization_scales_per_channel() -> None:
    ids = _ids("MEAN_VARIANCE_NORMALIZATION1", large=True, level=m.FeatureLevel.FL_3_0)
    assert [i for i in ids if i.endswith("/large")] == [
        "MEAN_VARIANCE_NORMALIZATION1/FLOAT32/4d/axes=1,2,3/channel/random/large"]


@pytest.mark.slow
@pytest.mark.parametrize("op", ["GATHER", "CONVOLUTION"])
def test_a_cheap_large_case_passes_on_cpu(op: str) -> None:
    result = run_cases([(_spec(op), _large(op))], CpuBackend())[0]
    assert result.outcome is Outcome.PASS, result.message


def test_the_interpolation_oracle_gives_the_same_block_by_block(monkeypatch: pytest.MonkeyPatch) -> None:
    # A large linear resample goes through the oracle a block of channels at a time; a block of one changes nothing.
    from dmlconform.families.interpolation import oracle

    spec = _spec("RESAMPLE1")
    ids = [i for i in _ids("RESAMPLE1", large=False) if "/linear/" in i and "/random" in i and i.startswith("RESAMPLE1/FLOAT32/4d/")]
    case = next(cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, keep=lambda i, _: i == ids[0]))
    assert case.outputs[0].sizes[0] > 1 or case.outputs[0].sizes[1] > 1
    whole = oracle.InterpolationOracle.of(spec).bind([case], flush_subnormals=False)
    monkeypatch.setattr(oracle, "ORACLE_BLOCK", 1)
    blocks = oracle.InterpolationOracle.of(spec).bind([case], flush_subnormals=False)
    assert whole.strict is not None and blocks.strict is not None and whole.strict.any()
    for got, wanted in ((blocks.expected, whole.expected), (blocks.strict, whole.strict),
                        (blocks.magnitude, whole.magnitude)):
        np.testing.assert_array_equal(got, wanted)
