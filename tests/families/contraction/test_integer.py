"""The quantized contractions (issue #24 item 1): MATRIX_MULTIPLY_INTEGER
and MATRIX_MULTIPLY_INTEGER_TO_FLOAT, their overlays, cases, oracle,
readings and the CPU reference."""

from __future__ import annotations

import dataclasses
import shutil
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.families import cases_of, family_of
from dmlconform.families.contraction.cases_integer import OVERFLOW_K, quantized_operands, value_range
from dmlconform.families.contraction.oracle import ContractionOracle
from dmlconform.families.contraction.oracle_integer import differences
from dmlconform.families.contraction.semantics import Contraction
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

MMI = "MATRIX_MULTIPLY_INTEGER"
TO_FLOAT = "MATRIX_MULTIPLY_INTEGER_TO_FLOAT"


@cache
def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


@cache
def _cases(op: str, level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[Case, ...]:
    return tuple(cases_of(_spec(op), level, seed=0))


def _case(op: str, case_id: str) -> Case:
    return next(c for c in _cases(op) if c.id == case_id)


def test_both_load_with_quantized_semantics_and_are_claimed() -> None:
    for op in (MMI, TO_FLOAT):
        sem = _spec(op).semantics
        assert isinstance(sem, Contraction) and sem.quantized
        family, _ = family_of(_spec(op))
        assert family is not None and family.name == "contraction"
    sem = _spec(TO_FLOAT).semantics
    assert isinstance(sem, Contraction)
    assert (sem.a.zero_point, sem.a.scale, sem.b.scale, sem.c) == \
        ("AZeroPointTensor", "AScaleTensor", "BScaleTensor", "BiasTensor")


def test_the_cases_cover_types_levels_and_zero_points() -> None:
    ids = [c.id for c in _cases(MMI)]
    assert len(ids) == len(set(ids)) == 34
    for wanted in (f"{MMI}/INT8/4d/k1000/random/zp=row,column", f"{MMI}/UINT8/4d/k33/random/zp=tensor-1d",
                   f"{MMI}/INT8/4d/k33/random/B=UINT8", f"{MMI}/UINT8/4d/k33/limits", f"{MMI}/INT8/2d/k7/random",
                   f"{MMI}/INT8/4d/k{OVERFLOW_K}/overflow", f"{MMI}/INT8/4d/k7/random/broadcastB-batch",
                   f"{MMI}/FLOAT32/4d/k7/random/unsupported", f"{MMI}/INT8/5d/k7/random/unsupported"):
        assert wanted in ids
    at_2_1 = _cases(MMI, m.FeatureLevel.FL_2_1)
    assert {c.dimension_count for c in at_2_1 if c.expect_supported} == {4}
    assert all(len(t.sizes) == 4 for c in at_2_1 if c.expect_supported for t in c.inputs)  # zero points too
    float_ids = [c.id for c in _cases(TO_FLOAT)]
    assert len(float_ids) == 46
    assert {c.outputs[0].dtype for c in _cases(TO_FLOAT) if c.dtype is m.DataType.INT16} == \
        {m.DataType.FLOAT32, m.DataType.FLOAT16}
    assert {c.dtype for c in _cases(TO_FLOAT) if c.expect_supported} == \
        {m.DataType.INT32, m.DataType.INT16, m.DataType.INT8, m.DataType.UINT32, m.DataType.UINT16, m.DataType.UINT8}


def test_the_overflow_case_leaves_int32_and_the_limits_case_reaches_255() -> None:
    sem = _spec(MMI).semantics
    assert isinstance(sem, Contraction)
    a, b = differences(sem, _case(MMI, f"{MMI}/INT8/4d/k{OVERFLOW_K}/overflow"))
    sums = np.matmul(a, b)
    assert sums[..., 0, 0].min() == OVERFLOW_K * 255 ** 2 > 2 ** 31 - 1
    assert sums[..., 1, 0].max() == -OVERFLOW_K * 255 ** 2 < -(2 ** 31)
    assert not sums[..., -1].any()
    a, b = differences(sem, _case(MMI, f"{MMI}/UINT8/4d/k33/limits"))
    assert set(np.unique(a)) <= {-255, 0, 255} and np.abs(a).max() == 255 and np.abs(b).max() == 255


def test_a_1d_zero_point_of_a_is_per_row() -> None:
    sem = _spec(MMI).semantics
    assert isinstance(sem, Contraction)
    q = quantized_operands(sem, _case(MMI, f"{MMI}/INT8/4d/k33/random/zp=rows-1d"))
    assert q.a_zero is not None and q.b_zero is not None
    assert (q.a_zero.shape, q.b_zero.shape) == ((3, 1), (5,))


def test_wide_types_keep_every_reading_of_the_accumulator_in_int32() -> None:
    for dtype in (m.DataType.INT32, m.DataType.UINT32, m.DataType.INT16, m.DataType.UINT16):
        for k in (1, 33, 1000):
            lo, hi = value_range(dtype, k)
            assert k * (hi - lo) ** 2 < 2 ** 31 and hi - lo <= 2 ** 15


@pytest.mark.parametrize(("op", "level"), [(MMI, m.FeatureLevel.FL_6_4), (MMI, m.FeatureLevel.FL_4_0),
                                           (MMI, m.FeatureLevel.FL_2_1), (TO_FLOAT, m.FeatureLevel.FL_6_4)])
def test_the_cpu_reference_passes_every_case(op: str, level: m.FeatureLevel) -> None:
    results = run_cases([(_spec(op), c) for c in _cases(op, level)], CpuBackend())
    counts = Counter(r.outcome for r in results)
    assert set(counts) == {Outcome.PASS, Outcome.NOT_SUPPORTED}, [
        (r.case_id, r.message) for r in results if r.outcome not in (Outcome.PASS, Outcome.NOT_SUPPORTED)]
    assert all(not r.expect_supported for r in results if r.outcome is Outcome.NOT_SUPPORTED)


def test_integer_results_are_exact_and_wrap_by_the_primary_reading() -> None:
    case = _case(MMI, f"{MMI}/UINT8/4d/k{OVERFLOW_K}/overflow")
    exp = ContractionOracle.of(_spec(MMI)).bind([case], flush_subnormals=False).expect(0, 36)[0]
    assert exp.expected.dtype == np.int32 and exp.ulp == 0 and exp.bound_strict is None
    wrapped = np.int64(OVERFLOW_K * 255 ** 2) - 2 ** 32
    assert exp.expected.reshape(2, 3, 2, 3)[0, 0, 0, 0] == wrapped
    names = [a.name for a in exp.alternatives]
    assert names == ["reading:int32-overflow=wrap", "reading:int32-overflow:saturate"]
    saturated = exp.alternatives[1]
    assert saturated.index.size == 24 and set(saturated.values.tolist()) == {2 ** 31 - 1, -(2 ** 31)}


class _Saturating(CpuBackend):
    """The reference, its INT32 results clamped instead of wrapped (the other honest reading)."""

    def run(self, spec: m.Spec, case: Case, buffers: dict[str, np.ndarray]) -> None:  # type: ignore[override]
        super().run(spec, case, buffers)
        sem = spec.semantics
        assert isinstance(sem, Contraction)
        a, b = differences(sem, case)
        exact = np.matmul(a, b).reshape(-1)
        buffers["OutputTensor"][...] = np.clip(exact, -(2 ** 31), 2 ** 31 - 1).astype(np.int32)


def test_a_saturating_backend_passes_and_the_report_names_its_reading() -> None:
    case = _case(MMI, f"{MMI}/INT8/4d/k{OVERFLOW_K}/overflow")
    saturating = run_cases([(_spec(MMI), case)], _Saturating())[0]
    assert saturating.outcome is Outcome.PASS, saturating.message
    assert dict((n, took) for n, _, took in saturating.readings) == \
        {"reading:int32-overflow=wrap": 0, "reading:int32-overflow:saturate": 24}
    wrapping = run_cases([(_spec(MMI), case)], CpuBackend())[0]
    assert dict((n, took) for n, _, took in wrapping.readings)["reading:int32-overflow=wrap"] == 24


class _Trailing(CpuBackend):
    """A backend that takes the ``trailing`` reading of zero-point-shape: a 1-D zero point of M is rejected."""

    def run(self, spec: m.Spec, case: Case, buffers: dict[str, np.ndarray]) -> None:  # type: ignore[override]
        if any(t.name == "AZeroPointTensor" and t.sizes != (1,) and len(t.sizes) == 1 for t in case.inputs):
            raise NotSupportedError("AZeroPointTensor: a 1-D zero point aligns with K")
        super().run(spec, case, buffers)


def test_either_reading_of_a_1d_zero_point_is_no_fail() -> None:
    pairs = [(_spec(op), c) for op in (MMI, TO_FLOAT) for c in _cases(op) if "rows-1d" in c.id]
    assert len(pairs) == 4
    assert {r.outcome for r in run_cases(pairs, _Trailing())} == {Outcome.NOT_SUPPORTED}
    assert {r.outcome for r in run_cases(pairs, CpuBackend())} == {Outcome.PASS}


def _with_values(case: Case, a: np.ndarray, b: np.ndarray) -> Case:
    """``case`` (2-D, per-tensor 4-D zero points) with A and B replaced."""
    tensors = [dataclasses.replace(t, sizes=x.shape, strides=(x.shape[1], 1), buffer=x.reshape(-1))
               if x is not None else t for t, x in zip(case.inputs, (a, None, None, b, None, None, None))]
    tensors = [t for t in tensors if t.name != "BiasTensor"]
    out = dataclasses.replace(case.outputs[0], sizes=(a.shape[0], b.shape[1]), strides=(b.shape[1], 1),
                              buffer=np.zeros(a.shape[0] * b.shape[1], np.float32))
    return dataclasses.replace(case, inputs=tuple(tensors), outputs=(out,))


@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 400), seed=st.integers(0, 2 ** 32 - 1))
def test_dequantizing_first_in_any_order_is_within_the_worst_case(k: int, seed: int) -> None:
    """The ``float`` reading of integer-accumulator: (A - za) * sa and
    (B - zb) * sb rounded to float32, their products summed in any order:
    within the bound with K + 3 roundings (docs/contraction.md)."""
    base = _case(TO_FLOAT, f"{TO_FLOAT}/INT8/2d/k7/random/out=FLOAT32")
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (3, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, 5)).astype(np.int8)
    case = _with_values(base, a, b)
    sem = _spec(TO_FLOAT).semantics
    assert isinstance(sem, Contraction)
    q = quantized_operands(sem, case)
    assert q.a_zero is not None and q.b_zero is not None and q.a_scale is not None and q.b_scale is not None
    a32 = ((a.astype(np.float32) - q.a_zero.astype(np.float32)) * q.a_scale).astype(np.float32)
    b32 = ((b.astype(np.float32) - q.b_zero.astype(np.float32)) * q.b_scale).astype(np.float32)
    exp = ContractionOracle.of(_spec(TO_FLOAT)).bind([case], flush_subnormals=False).expect(0, 15)[0]
    assert exp.bound_relaxed is not None
    for order in (np.arange(k), rng.permutation(k)):
        total = np.zeros((3, 5), np.float32)
        for i in order:
            total = (total + np.outer(a32[:, i], b32[i, :])).astype(np.float32)
        error = np.abs(total.reshape(-1).astype(np.float64) - exp.expected.astype(np.float64))
        assert np.all(error <= exp.bound_relaxed), (error, exp.bound_relaxed)


def _folder(tmp_path: Path, old: str, new: str) -> Path:
    specs = tmp_path / "specs"
    (specs / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / f"{MMI}.yaml", specs / f"{MMI}.yaml")
    text = (REPO / "specs" / "reviewed" / f"{MMI}.yaml").read_text()
    assert old in text
    (specs / "reviewed" / f"{MMI}.yaml").write_text(text.replace(old, new))
    return specs


def test_lint_passes_both_overlays() -> None:
    for op in (MMI, TO_FLOAT):
        result = CliRunner().invoke(main, ["lint", str(REPO / "specs" / "reviewed" / f"{op}.yaml")])
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("zero_point: AZeroPointTensor}", "zero_point: AZeroPoint}",
     ":12:36: DML002 AZeroPoint is not a tensor of MATRIX_MULTIPLY_INTEGER (its tensors: ATensor, "
     "AZeroPointTensor, BTensor, BZeroPointTensor, OutputTensor)"),
    ("zero_point: BZeroPointTensor}", "zero_point: OutputTensor}",
     ":13:36: DML002 OutputTensor is an output of MATRIX_MULTIPLY_INTEGER, not an input; name one of its inputs"),
])
def test_lint_locates_a_wrong_zero_point(tmp_path: Path, old: str, new: str, expected: str) -> None:
    specs = _folder(tmp_path, old, new)
    result = CliRunner().invoke(main, ["lint", str(specs)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "reviewed" in line]
    assert lines == [f"{specs / 'reviewed' / f'{MMI}.yaml'}{expected}"], result.output


def test_a_zero_point_of_the_wrong_shape_is_a_case_problem() -> None:
    from dmlconform.families.contraction.suite import case_problems

    case = _case(MMI, f"{MMI}/INT8/4d/k33/random/zp=row,column")
    zp = case.input("AZeroPointTensor")
    bad = dataclasses.replace(zp, sizes=(1, 1, 2, 1), strides=(2, 2, 1, 1), buffer=zp.buffer[:2].copy())
    broken = dataclasses.replace(case, inputs=tuple(bad if t.name == zp.name else t for t in case.inputs))
    assert list(case_problems(_spec(MMI), broken)) == [
        "AZeroPointTensor's sizes [1, 1, 2, 1] are neither per tensor nor per row: give [1, 1, 3, 1], [3] or all 1s"]
    assert not list(case_problems(_spec(MMI), case))


def test_the_reference_takes_32_bit_differences_exactly() -> None:
    """INT32 A at its maximum, its zero point at the minimum: A - AZeroPoint = 2^32 - 1, which int32 wraps."""
    case = _case(TO_FLOAT, f"{TO_FLOAT}/INT32/4d/k33/random/out=FLOAT32")
    values = {"ATensor": 2 ** 31 - 1, "AZeroPointTensor": -(2 ** 31), "BTensor": 1, "BZeroPointTensor": 0}
    inputs = tuple(dataclasses.replace(t, buffer=np.full(t.buffer.shape, values[t.name], t.buffer.dtype))
                   if t.name in values else t for t in case.inputs)
    result = run_cases([(_spec(TO_FLOAT), dataclasses.replace(case, inputs=inputs))], CpuBackend())[0]
    assert result.outcome is Outcome.PASS, result.message
