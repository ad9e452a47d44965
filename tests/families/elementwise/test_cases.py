"""The case generator: determinism, edge values, boundaries, dimension counts,
layouts, negative cases, ids (dmlconform/families/elementwise/cases.py, edges.py)."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.cases import edges as ev
from dmlconform.cases.model import Case, Layout, buffer_elements
from dmlconform.catalog import load_spec
from dmlconform.errors import InputError
from dmlconform.families.elementwise.binding import is_runnable
from dmlconform.families.elementwise.cases import generate
from dmlconform.spec import model as m
from dmlconform.spec.model import DataType, FeatureLevel
from tests.conftest import REPO

SPECS = REPO / "specs"
NEWEST = FeatureLevel.FL_6_4


@functools.cache
def spec(name: str):  # type: ignore[no-untyped-def]
    return load_spec(SPECS / f"{name}.yaml")


@functools.cache
def cases(name: str, level: FeatureLevel = NEWEST, seed: int = 7) -> tuple[Case, ...]:
    return tuple(generate(spec(name), level, seed=seed))


def input_values(cs: tuple[Case, ...], dtype: DataType, tensor: str = "InputTensor") -> np.ndarray:
    return np.concatenate([c.input(tensor).view().reshape(-1) for c in cs if c.dtype == dtype and c.expect_supported])


def contains(values: np.ndarray, x: np.generic) -> bool:
    """Bit-exact membership (tells -0 from +0 and finds NaN of a sign)."""
    values = np.ascontiguousarray(values)
    target = np.asarray([x], dtype=values.dtype)
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[values.dtype.itemsize]
    return bool(np.isin(values.view(width), target.view(width)).any())


def test_same_seed_same_cases_other_seed_other_values():
    a = cases("ACTIVATION_SHRINK", seed=7)
    b = tuple(generate(spec("ACTIVATION_SHRINK"), NEWEST, seed=7))
    c = tuple(generate(spec("ACTIVATION_SHRINK"), NEWEST, seed=8))
    assert [x.id for x in a] == [x.id for x in b] == [x.id for x in c]
    for x, y in zip(a, b, strict=True):
        for s, t in zip(x.inputs + x.outputs, y.inputs + y.outputs, strict=True):
            assert s.buffer.tobytes() == t.buffer.tobytes() and s.strides == t.strides
    assert any(x.inputs[0].buffer.tobytes() != y.inputs[0].buffer.tobytes() for x, y in zip(a, c, strict=True))


@pytest.mark.parametrize("dtype,op", [(DataType.FLOAT32, "ACTIVATION_SHRINK"), (DataType.FLOAT16, "ACTIVATION_SHRINK"),
                                      (DataType.INT32, "ELEMENT_WISE_ABS")])
def test_every_edge_value_present(dtype, op):
    cs = cases(op)
    values = input_values(cs, dtype)
    classes = ev.FLOAT_CLASSES if dtype.is_float else ev.INT_CLASSES
    edges = ev.edge_values(dtype)
    assert {e.name for e in edges} == set(classes)
    for e in edges:
        assert contains(values, e.value), f"{e.name}={e.value!r} missing from {op} {dtype.name}"
        assert any(e.name in c.edges for c in cs if c.dtype == dtype)
    assert any("random" in c.edges for c in cs)


def test_float_edges_are_what_they_say():
    got = {e.name: e.value for e in ev.edge_values(DataType.FLOAT16)}
    assert np.signbit(got["-0"]) and not np.signbit(got["+0"]) and got["-0"] == 0
    assert got["subnormal_min"] == np.float16(2.0 ** -24) and got["normal_min"] == np.float16(2.0 ** -14)
    assert got["subnormal_max"] == np.nextafter(np.float16(2.0 ** -14), np.float16(0))
    assert got["max"] == np.float16(65504) and np.isposinf(got["inf"])
    assert np.isnan(got["nan"]) and np.isnan(got["-nan"]) and np.signbit(got["-nan"]) and not np.signbit(got["nan"])
    ints = {e.name: int(e.value) for e in ev.edge_values(DataType.UINT8)}
    assert ints == {"0": 0, "+1": 1, "max": 255, "max-1": 254}


def test_shrink_boundaries_and_neighbours():
    for dtype in (DataType.FLOAT32, DataType.FLOAT16):
        nt = ev.np_dtype(dtype)
        values = input_values(cases("ACTIVATION_SHRINK"), dtype)
        for t in (0.5, -0.5):
            at = nt.type(t)
            for x in (at, np.nextafter(at, nt.type(np.inf)), np.nextafter(at, nt.type(-np.inf))):
                assert contains(values, x), f"{dtype.name}: {x!r} (Threshold boundary) missing"
    ids = [c.id for c in cases("ACTIVATION_SHRINK")]
    assert "ACTIVATION_SHRINK/FLOAT16/4d/boundary(x>Threshold)/Bias=0,Threshold=0.5" in ids
    attrs = [c.attribute_map() for c in cases("ACTIVATION_SHRINK") if c.dtype == DataType.FLOAT32]
    assert any(a["Threshold"] < 0 for a in attrs)
    assert any(a["Bias"] > a["Threshold"] for a in attrs)
    assert any(a["Threshold"] == 0 for a in attrs) and any(a["Threshold"] > 1e38 for a in attrs)


def test_hard_sigmoid_boundaries():
    cs = cases("ACTIVATION_HARD_SIGMOID")
    values = input_values(cs, DataType.FLOAT32)
    alpha, beta = np.float32(0.2), np.float32(0.5)
    for exact in (-beta / np.float64(alpha), (1 - np.float64(beta)) / np.float64(alpha)):
        nearest = np.float32(exact)
        assert contains(values, nearest) and contains(values, np.nextafter(nearest, np.float32(np.inf)))
        assert contains(values, np.nextafter(nearest, np.float32(-np.inf)))


def test_sign_boundary_zero_both_signs():
    cs = [c for c in cases("ELEMENT_WISE_SIGN") if "boundary" in c.id and c.dtype == DataType.FLOAT32]
    assert cs
    values = np.concatenate([c.inputs[0].view().reshape(-1) for c in cs])
    assert contains(values, np.float32(0.0)) and contains(values, np.float32(-0.0))


def test_dimension_counts_follow_the_table():
    def ranks(level):  # type: ignore[no-untyped-def]
        return {c.dimension_count for c in cases("ACTIVATION_SOFTSIGN", level) if c.expect_supported}

    assert ranks(NEWEST) == set(range(1, 9))
    assert ranks(FeatureLevel.FL_1_0) == {4}
    negative = [c for c in cases("ACTIVATION_SOFTSIGN", FeatureLevel.FL_1_0) if not c.expect_supported]
    assert any(c.dimension_count != 4 for c in negative)


def test_layouts_are_well_formed():
    for op in ("ACTIVATION_SHRINK", "ELEMENT_WISE_ADD", "ELEMENT_WISE_IF", "ELEMENT_WISE_LOGICAL_GREATER_THAN"):
        cs = cases(op)
        assert {c.layout for c in cs} >= {Layout.PACKED, Layout.PADDED, Layout.BROADCAST}
        for c in cs:
            for t in c.inputs + c.outputs:
                assert t.buffer.ndim == 1 and not t.buffer.flags.writeable
                assert t.buffer.size >= buffer_elements(t.sizes, t.strides), c.id
                assert t.dtype.name.lower() == t.buffer.dtype.name
                assert t.view().shape == t.sizes
            assert all(t.sizes == c.outputs[0].sizes for t in c.inputs), c.id
            assert all(not t.buffer.any() for t in c.outputs), "outputs start zero-filled"
            if c.layout is Layout.BROADCAST:
                assert 0 in c.inputs[-1].strides
            if c.layout is Layout.PADDED:
                assert all(t.buffer.size > np.prod(t.sizes) for t in c.inputs + c.outputs)


def test_in_place_aliases_an_input_of_the_same_type():
    cs = [c for c in cases("ELEMENT_WISE_ADD") if c.layout is Layout.IN_PLACE]
    assert cs
    for c in cs:
        (out, inp), = c.aliases
        o, i = next(t for t in c.outputs if t.name == out), c.input(inp)
        assert (o.sizes, o.strides, o.dtype, o.buffer.size) == (i.sizes, i.strides, i.dtype, i.buffer.size)
    comparisons = cases("ELEMENT_WISE_LOGICAL_GREATER_THAN")
    assert not any(c.layout is Layout.IN_PLACE for c in comparisons)


def test_output_type_of_a_comparison_is_not_tied_to_the_inputs():
    cs = [c for c in cases("ELEMENT_WISE_LOGICAL_GREATER_THAN") if c.expect_supported]
    assert {c.outputs[0].dtype for c in cs} <= {DataType.UINT32, DataType.UINT8}
    assert DataType.FLOAT16 in {c.dtype for c in cs}


def test_pairs_cross_the_edge_values():
    c = next(c for c in cases("ELEMENT_WISE_ADD") if "/pairs" in c.id and c.dtype == DataType.FLOAT32)
    a, b = (t.view().reshape(-1) for t in c.inputs)
    assert a.size == b.size == len(ev.FLOAT_CLASSES) ** 2
    assert np.any(np.isinf(a) & np.isinf(b) & (a == b)) and np.any(np.isnan(a) & np.isfinite(b))


def test_negative_cases():
    cs = cases("ACTIVATION_SHRINK", FeatureLevel.FL_3_0)
    negative = [c for c in cs if not c.expect_supported]
    assert {c.dtype for c in negative} - {DataType.FLOAT32, DataType.FLOAT16}, "a type the 3_0 table lacks"
    assert any(c.dimension_count == 9 for c in negative), "1..8 are all allowed: 9 is not"
    assert all(c.expect_supported for c in generate(spec("ACTIVATION_SHRINK"), NEWEST, seed=1, negative=False))


def test_ids_unique_and_readable():
    ids = [c.id for c in cases("ACTIVATION_SHRINK")]
    assert len(ids) == len(set(ids))
    assert "ACTIVATION_SHRINK/FLOAT32/4d/edges/Bias=0,Threshold=0.5/padded" in ids
    assert all(i.split("/")[0] == "ACTIVATION_SHRINK" and i.split("/")[2].endswith("d") for i in ids)


def test_hard_swish_keeps_the_exact_default():
    c = cases("ACTIVATION_HARD_SWISH")[0]
    assert c.attribute_map()["Alpha"] == "1/6" and "Alpha=1/6" in c.id


def test_not_runnable_specs_say_why():
    ok, reason = is_runnable(spec("VALUE_SCALE_2D"))
    assert not ok and "ChannelCount" in reason
    ok, reason = is_runnable(spec("ACTIVATION_GELU"), FeatureLevel.FL_1_0)
    assert not ok and "5_1" in reason
    with pytest.raises(InputError, match="ACTIVATION_GELU"):
        list(generate(spec("ACTIVATION_GELU"), FeatureLevel.FL_1_0, seed=0))
    with pytest.raises(InputError, match="seed=-1"):
        list(generate(spec("ACTIVATION_GELU"), NEWEST, seed=-1))


def test_large_only_on_request():
    assert all(c.inputs[0].buffer.size < 1000 for c in cases("ACTIVATION_RELU"))
    big = next(c for c in generate(spec("ACTIVATION_RELU"), NEWEST, seed=0, large=True) if c.id.endswith("/large"))
    assert np.prod(big.outputs[0].sizes) >= 2 ** 22 and big.inputs[0].buffer.size >= 2 ** 22


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2 ** 63 - 1).map(int))
def test_any_seed_gives_valid_cases(seed):
    cs = list(generate(spec("ELEMENT_WISE_CLIP"), NEWEST, seed=seed))
    assert len({c.id for c in cs}) == len(cs)
    for c in cs:
        for t in c.inputs + c.outputs:
            assert t.buffer.size >= buffer_elements(t.sizes, t.strides)
        assert all(isinstance(v, (float, int, bool, str)) and (not isinstance(v, float) or np.isfinite(v))
                   for _, v in c.attributes)


@pytest.mark.slow
def test_default_suite_size_is_moderate():
    from dmlconform.spec.files import spec_files

    total = 0
    for path in spec_files([SPECS]):
        s = load_spec(Path(path))
        if is_runnable(s, NEWEST)[0]:
            total += sum(1 for _ in generate(s, NEWEST, seed=0))
    assert 3000 <= total <= 8000


def test_a_cases_values_do_not_depend_on_the_other_cases_of_the_suite():
    """The values of a case come from the seed and its id alone: a suite with
    more cases (negative ones, the large one) leaves the others unchanged."""
    few = {c.id: c for c in generate(spec("ELEMENT_WISE_ADD"), NEWEST, seed=3, negative=False)}
    more = [c for c in generate(spec("ELEMENT_WISE_ADD"), NEWEST, seed=3, large=True) if c.id in few]
    assert len(more) == len(few)
    for c in more:
        for s, t in zip(c.inputs, few[c.id].inputs, strict=True):
            assert s.buffer.tobytes() == t.buffer.tobytes()


# -- attribute domains (issue #22 item 4) ----------------------------------------------------
def _values(cs, name: str, *, valid: bool) -> set:  # type: ignore[no-untyped-def,type-arg]
    return {c.attribute_map()[name] for c in cs if bool(c.out_of_domain) is not valid}


def test_softplus_positive_cases_keep_steepness_in_its_domain() -> None:
    # the doc: "This value cannot be less than 1" (before: Steepness 0.5, 0, -0.5, 1.2e-38 were positive cases)
    cs = cases("ACTIVATION_SOFTPLUS")
    assert _values(cs, "Steepness", valid=True) == {1.0, float(np.nextafter(np.float32(1), np.float32(2))),
                                                   float(np.finfo(np.float32).max)}
    invalid = [c for c in cs if c.out_of_domain]
    assert {c.id for c in invalid} == {"ACTIVATION_SOFTPLUS/FLOAT32/4d/invalid/Steepness=0.99999994",
                                       "ACTIVATION_SOFTPLUS/FLOAT32/4d/invalid/Steepness=0"}
    assert all(c.out_of_domain == ("Steepness",) and not c.expect_supported for c in invalid)


def test_adam_uses_the_typical_values_and_stays_in_the_beta_domain() -> None:
    cs = cases("ADAM_OPTIMIZER")
    assert cs[0].attribute_map() == {"LearningRate": 0.5, "Beta1": float(np.float32(0.9)),
                                     "Beta2": float(np.float32(0.999)), "Epsilon": float(np.float32(1e-8))}
    assert all(0 <= v <= 1 for v in _values(cs, "Beta1", valid=True) | _values(cs, "Beta2", valid=True))
    assert _values([c for c in cs if c.out_of_domain == ("Beta1",)], "Beta1", valid=False) == {
        -float(np.nextafter(np.float32(0), np.float32(1))), -1.0,
        float(np.nextafter(np.float32(1), np.float32(2))), 2.0}
    assert "ADAM_OPTIMIZER/FLOAT32/4d/edges/LearningRate=0.5,Beta1=2,Beta2=0.25,Epsilon=1.5" not in {c.id for c in cs}


def test_no_invalid_cases_without_negative() -> None:
    assert not any(c.out_of_domain for c in generate(spec("ACTIVATION_SOFTPLUS"), NEWEST, seed=0, negative=False))


_FLOAT32 = st.floats(min_value=-(2.0 ** 99), max_value=2.0 ** 99, width=32, allow_subnormal=False)


@st.composite
def _domains(draw: st.DrawFn) -> m.Domain:
    low = draw(st.none() | _FLOAT32, label="min")
    high = draw(st.none() | _FLOAT32, label="max")
    if low is not None and high is not None:
        low, high = min(low, high), max(low, high)
        if high - low < abs(high) * 1e-3 + 1e-3:
            high = low + abs(low) * 1e-3 + 1e-3
    return m.Domain(min=low, max=high, min_inclusive=draw(st.booleans(), label="min_inclusive"),
                    max_inclusive=draw(st.booleans(), label="max_inclusive"))


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(("ACTIVATION_SHRINK", "ACTIVATION_SOFTPLUS", "ELEMENT_WISE_CLIP", "ACTIVATION_ELU")),
       data=st.data())
def test_no_positive_case_has_an_attribute_outside_its_domain(op: str, data: st.DataObject) -> None:
    base = spec(op)
    floats = [f for f in base.attributes if f.c_type == "FLOAT"]
    domains = {f.name: data.draw(st.none() | _domains(), label=f"domain of {f.name}") for f in floats}
    fields = tuple(dataclasses.replace(f, domain=domains.get(f.name)) for f in base.fields)
    s = dataclasses.replace(base, fields=fields)
    for c in generate(s, NEWEST, seed=0, keep=lambda i, d: d is DataType.FLOAT32):
        outside = tuple(n for n, v in c.attributes if domains.get(n) is not None and not domains[n].contains(v))
        assert outside == c.out_of_domain, c.id
        assert c.expect_supported is not bool(outside) or "/unsupported" in c.id, c.id


def test_a_domain_without_a_float32_value_is_an_input_error() -> None:
    base = spec("ACTIVATION_SOFTPLUS")
    narrow = m.Domain(min=1.0, max=1.0 + 1e-12, min_inclusive=False, max_inclusive=False)
    s = dataclasses.replace(base, fields=tuple(dataclasses.replace(f, domain=narrow, default=None)
                                               if f.name == "Steepness" else f for f in base.fields))
    with pytest.raises(InputError, match=r"ACTIVATION_SOFTPLUS: attribute Steepness's domain \(1, 1\) holds no "
                                         r"float32 value; fix it in the spec \(lint DML124\)"):
        list(generate(s, NEWEST, seed=0))
