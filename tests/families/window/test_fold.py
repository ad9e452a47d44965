"""The window family on FOLD and UNFOLD (issue #35): the pages' worked
examples, the oracle against the reference over random geometries, the
CPU reference at 0 FAIL and the planted faults caught by name."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.backends.faulty import FaultyBackend
from dmlconform.cases import family
from dmlconform.cases.model import Case
from dmlconform.families.window import fold as shapes
from dmlconform.families.window.fold import Geometry, blocks
from dmlconform.families.window.fold_reference import fold, unfold
from dmlconform.families.window.oracle import WindowOracle
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.families.window.suites import cases as _cases
from tests.families.window.suites import spec as _spec

OPS = ("UNFOLD", "FOLD")
_IMAGE = np.arange(25.0).reshape(1, 1, 5, 5)


def _call(op: str, x: np.ndarray, geo: Geometry, made: tuple[int, ...], dtype: m.DataType = m.DataType.FLOAT32) -> Case:
    """One case of ``op`` over ``x`` (packed), its output of sizes ``made``."""
    spec = _spec(op)
    sem = spec.semantics
    assert sem is not None
    return Case(id=f"{op}/test", operator=op, level=m.FeatureLevel.FL_6_4, dtype=dtype,
                inputs=(family.input_tensor("InputTensor", dtype, x.astype(m.numpy_dtype(dtype))),),
                outputs=(family.output_tensor("OutputTensor", dtype, made),),
                attributes=shapes.attributes(spec, sem, geo))  # type: ignore[arg-type]


def _expected(op: str, case: Case) -> np.ndarray:
    (e,) = WindowOracle.of(_spec(op)).bind([case], flush_subnormals=False).expect(0, math.prod(case.outputs[0].sizes))
    return e.expected.reshape(case.outputs[0].sizes)


def _geo(start: tuple[int, int], end: tuple[int, int]) -> Geometry:
    return Geometry((3, 3), (1, 1), (1, 1), start, end)


def test_the_unfold_pages_examples() -> None:
    """UNFOLD Examples 1 and 2: the first column of each, and Example 2's padded rows (+0)."""
    one = unfold(_IMAGE, _geo((0, 0), (0, 0)))
    assert one.shape == (1, 9, 9) and one[0, :, 0].tolist() == [0, 1, 2, 5, 6, 7, 10, 11, 12]
    assert one[0, 0].tolist() == [0, 1, 2, 5, 6, 7, 10, 11, 12] and one[0, 8].tolist()[-1] == 24
    two = unfold(_IMAGE, _geo((1, 0), (1, 0)))
    assert two.shape == (1, 9, 15)
    assert two[0, 0].tolist() == [0, 0, 0, 0, 1, 2, 5, 6, 7, 10, 11, 12, 15, 16, 17]
    assert two[0, 8].tolist() == [7, 8, 9, 12, 13, 14, 17, 18, 19, 22, 23, 24, 0, 0, 0]
    case = _call("UNFOLD", _IMAGE, _geo((1, 0), (1, 0)), (1, 9, 15))
    assert np.array_equal(_expected("UNFOLD", case), two)


def test_the_fold_pages_examples() -> None:
    """FOLD Examples 1 and 3 (Example 2 is Example 3's first channel), by the reference and the oracle."""
    first = [[0, 5, 13, 9], [14, 38, 54, 32], [38, 86, 102, 56], [26, 57, 65, 35]]
    x = np.arange(36.0).reshape(1, 9, 4)
    assert fold(x, _geo((0, 0), (0, 0)), (1, 1, 4, 4))[0, 0].tolist() == first
    third = [[[26, 70, 102, 60], [78, 183, 231, 129], [84, 195, 243, 135], [82, 182, 214, 116]],
             [[170, 358, 390, 204], [294, 615, 663, 345], [300, 627, 675, 351], [226, 470, 502, 260]]]
    x = np.arange(144.0).reshape(1, 18, 8)
    assert fold(x, _geo((1, 0), (1, 0)), (1, 2, 4, 4))[0].tolist() == third
    case = _call("FOLD", x, _geo((1, 0), (1, 0)), (1, 2, 4, 4))
    assert _expected("FOLD", case)[0].tolist() == third


@st.composite
def _geometries(draw: st.DrawFn) -> tuple[Geometry, tuple[int, ...]]:
    d = draw(st.integers(1, 3), label="spatial")
    dims = [draw(st.tuples(st.integers(1, 6), st.integers(1, 3), st.integers(1, 3), st.integers(1, 2),
                           st.integers(0, 2), st.integers(0, 2)), label=f"dim{j}") for j in range(d)]
    dims = [(max(s, (k - 1) * dl + 1 - a - b), k, stv, dl, a, b) for s, k, stv, dl, a, b in dims]
    return Geometry(*(tuple(v[i] for v in dims) for i in range(1, 6))), tuple(v[0] for v in dims)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(_geometries(), st.integers(1, 2), st.integers(1, 3), st.integers(0, 2 ** 31))
def test_the_oracle_agrees_with_the_reference(drawn: tuple[Geometry, tuple[int, ...]], n: int, c: int,
                                              seed: int) -> None:
    """Any geometry: the oracle's UNFOLD (the window map) is the reference's (strided slices), bit for bit,
    and FOLD of small integers exactly so; fold(unfold(x)) is x times each position's block count."""
    geo, spatial = drawn
    rng = np.random.default_rng(seed)
    image = rng.integers(-8, 9, size=(n, c, *spatial)).astype(np.float64)
    columns = unfold(image, geo)
    assert np.array_equal(_expected("UNFOLD", _call("UNFOLD", image, geo, columns.shape)), columns)
    summed = fold(columns, geo, image.shape)
    assert np.array_equal(_expected("FOLD", _call("FOLD", columns, geo, image.shape)), summed)
    count = fold(unfold(np.ones_like(image), geo), geo, image.shape)
    assert np.array_equal(summed, image * count)
    assert columns.shape[2] == math.prod(blocks(geo, spatial))


def test_the_suites_cover_the_table() -> None:
    assert [len(_cases(op)) for op in OPS] == [66, 53]  # the pages' examples: 2 and 3
    for op in OPS:
        supported = {(c.dtype.name, c.id.split("/")[2]) for c in _cases(op) if c.expect_supported}
        assert supported == {(t, f"{r}d") for t in ("FLOAT32", "FLOAT16") for r in (3, 4, 5, 8)}
    special = next(c for c in _cases("UNFOLD") if c.id == "UNFOLD/FLOAT16/4d/k3/special").input("InputTensor").view()
    assert np.isnan(special).any() and np.signbit(special[special == 0]).any()


@pytest.mark.parametrize("op", OPS)
def test_the_cpu_reference_passes(op: str) -> None:
    results = run_cases([(_spec(op), c) for c in _cases(op)], CpuBackend())
    assert Counter(r.outcome for r in results) == {Outcome.PASS: len(results) - 2, Outcome.NOT_SUPPORTED: 2}


@pytest.mark.parametrize(("fault", "op", "where"), [
    ("fold-no-sum", "FOLD", "/k3/exact"), ("fold-padding-swapped", "FOLD", "/asym-pad/"),
    ("unfold-dilation-ignored", "UNFOLD", "/dilation2/"), ("unfold-padding-swapped", "UNFOLD", "/asym-pad/"),
    ("unfold-negative-zero-lost", "UNFOLD", "/special")])
def test_the_faults_are_caught(fault: str, op: str, where: str) -> None:
    failed = [r.case_id for r in run_cases([(_spec(op), c) for c in _cases(op)], FaultyBackend(fault))
              if r.outcome is Outcome.FAIL]
    assert any(where in i for i in failed)
    if fault == "unfold-negative-zero-lost":  # only the special values hold -0: the sign of zero counts
        assert all(i.endswith("/special") for i in failed)
    elif fault != "fold-no-sum":  # without padding or dilation the fault changes nothing: no FAIL there
        assert not any("/k1/" in i or "/stride3-k2/" in i for i in failed)


@pytest.mark.slow  # about 40 s: torch's fold over both suites
def test_torch_passes_with_its_declared_float16_fold_sums() -> None:
    """torch's CPU col2im adds FLOAT16 in FLOAT16 (declared); 2 spatial dimensions only, the rest refused."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from dmlconform.backends.torch.backend import TorchBackend

    results = run_cases([(_spec(op), c) for op in OPS for c in _cases(op)], TorchBackend())
    assert {r.outcome for r in results} == {Outcome.PASS, Outcome.NOT_SUPPORTED}
    assert all("/4d/" not in r.case_id or "unsupported" in r.case_id
               for r in results if r.outcome is Outcome.NOT_SUPPORTED)


@pytest.mark.slow  # about 20 s
def test_onnxruntime_col2im_fails_only_its_nd_dilated_channels() -> None:
    """onnxruntime's Col2Im outside 2 spatial dimensions, with channels and dilation: a channel's values land
    in the one before (reproduced on a 1x4x8 input, dilation 2); every other FOLD case passes."""
    pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed")
    from dmlconform.backends.onnxruntime.backend import OnnxRuntimeBackend

    results = run_cases([(_spec(op), c) for op in OPS for c in _cases(op)], OnnxRuntimeBackend())
    failed = sorted(r.case_id for r in results if r.outcome is Outcome.FAIL)
    assert failed == ["FOLD/FLOAT16/3d/mixed/exact", "FOLD/FLOAT16/5d/mixed/exact", "FOLD/FLOAT32/3d/mixed/exact",
                      "FOLD/FLOAT32/5d/mixed/exact"] or all(r.outcome is not Outcome.FAIL for r in results)
    assert all("Im2Col" in r.message for r in results if r.operator == "UNFOLD" and r.expect_supported)


def test_lint_checks_the_pages_examples() -> None:
    """The transcribed examples agree with the oracle (no finding); one printed value changed is a finding
    naming the example, the element and both values."""
    import dataclasses

    from dmlconform.lint.examples import findings

    for op in OPS:
        assert list(findings(_spec(op))) == []
    spec = _spec("FOLD")
    sem = spec.semantics
    assert sem is not None and len(sem.examples) == 3  # type: ignore[attr-defined]
    first = sem.examples[0]  # type: ignore[attr-defined]
    wrong = dataclasses.replace(first, output_values=(0.0, 5.0, 13.0, 9.0, 15.0, *first.output_values[5:]))
    broken = dataclasses.replace(spec, semantics=dataclasses.replace(sem, examples=(wrong,)))
    ((where, message),) = findings(broken)
    assert where == ("semantics", "examples", 0, "output")
    assert message.startswith("example1 prints 15 at flat element 4") and "give 14" in message
    nan = next(c for c in _cases("FOLD") if c.id.endswith("/k3-s2/nan"))
    assert np.isnan(_expected("FOLD", nan)).sum() == 1  # stride 2: the tap lands on one image element
    assert [c.id for c in _cases("FOLD")][-3:] == ["FOLD/FLOAT32/3d/example1", "FOLD/FLOAT32/3d/example2",
                                                   "FOLD/FLOAT32/3d/example3"]
