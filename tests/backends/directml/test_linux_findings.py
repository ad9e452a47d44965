"""Two findings of the real DirectML, reproduced at every element (issue #37), marked ``real_directml``.

docs/results/directml-linux-notes.yaml explains every FAIL of the real
library; these tests hold the two rules that were read from the shaders'
DXIL (dumped with ``VKD3D_SHADER_DUMP_PATH`` and disassembled with the
stack's ``vkd3d-compiler -x dxbc-dxil -b d3d-asm``) and from the root
constants DirectML gives them (read at ``SetComputeRoot32BitConstants`` in
vkd3d with gdb), and check that each rule gives every element DirectML gives,
bit for bit, over both Mesas.  The cases are the default suite's, run through
the project's directml backend in its worker process.

- RESAMPLE and RESAMPLE1, NEAREST_NEIGHBOR, INT8 and UINT8: DirectML runs
  them as itof, its FLOAT32 resample shader, ftoi.  That shader takes, per
  dimension, ``floor((o - C6) * C5 - C7)`` in float32 (``C5`` the float32
  reciprocal of the scale), then ``umin`` with the last index.  For FLOAT32
  DirectML gives it ``C7 = InputPixelOffset - 0.5`` (round half up: the
  nearest element); for the 8-bit types ``C7 = InputPixelOffset``, so the
  element at or below the coordinate (floor), not the nearest one.
- SCATTER and SCATTER_ND with indices outside their dimension: each index is
  read as one 32-bit word (a 64-bit one's low word; the sign from its high
  word), a negative one (INT32, INT64, and UINT64, which runs INT64's shader)
  gets its dimension's size added, the element's place is the sum of index x
  stride in 32-bit wrap-around arithmetic, and the only check is that place
  <= element count - 1: an update lands on another element, or is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from dmlconform.backends.base import Backend
from dmlconform.backends.directml.linux_stack import Stack
from dmlconform.backends.registry import load_backend
from dmlconform.cases.model import Case, Layout
from dmlconform.commands.options import load_specs
from dmlconform.packaged import shipped_specs_arg
from dmlconform.runner import bind
from dmlconform.spec.model import FeatureLevel, Spec
from dmlconform.suite import Selection, pairs

pytestmark = pytest.mark.real_directml

WRAP = np.uint64(2**32)


@pytest.fixture(scope="module", params=["host", "sid"])
def directml(request: pytest.FixtureRequest) -> Backend:
    """The directml backend over the stack with the machine's lavapipe, then sid's."""
    stack: Stack = request.getfixturevalue("linux_stack" if request.param == "host" else "sid_mesa")
    return load_backend("directml", {"stack": str(stack.root), "mesa": request.param})


def _cases(operator: str, pattern: str, dtypes: Sequence[str]) -> list[tuple[Spec, Case]]:
    specs = load_specs(shipped_specs_arg(), (operator,))
    made, _ = pairs(specs, FeatureLevel.FL_6_2, seed=0, large=False, cases=None,
                    selection=Selection(patterns=(pattern,), dtypes=frozenset(dtypes)))
    return [(spec, case) for spec, case in made if isinstance(case, Case) and not case.id.endswith("/unsupported")]


def _ran(backend: Backend, operator: str, pattern: str, dtypes: Sequence[str]) -> Iterator[tuple[Case, np.ndarray]]:
    """Each packed case of ``operator`` whose id holds ``pattern``, with DirectML's OutputTensor."""
    found = _cases(operator, pattern, dtypes)
    assert found, f"no {operator} case matches {pattern!r}"
    for spec, case in found:
        assert case.layout is Layout.PACKED, case.id
        buffers = bind(case)
        backend.run(spec, case, buffers)
        yield case, case.outputs[0].view(buffers[case.outputs[0].name])


def _floats(case: Case, name: str, default: float) -> list[float]:
    attributes = dict(case.attributes)
    count = len(case.inputs[0].sizes)
    return [float(v) for v in str(attributes.get(name, ",".join([str(default)] * count))).split(",")]


# ------------------------------------------------------------------ RESAMPLE nearest
def resample_nearest(x: np.ndarray, out_sizes: Sequence[int], scales: Sequence[float], input_offsets: Sequence[float],
                     output_offsets: Sequence[float], *, rounding_offset: float) -> np.ndarray:
    """DirectML's resample shader: per dimension the source index
    ``min(n - 1, ftou(floor((o - OutputPixelOffset) * (1 / Scale) - (InputPixelOffset - rounding_offset))))``,
    each step in float32 (the reciprocal too); ``rounding_offset`` 0.5 is
    what DirectML gives the shader for FLOAT32, 0 for INT8 and UINT8."""
    f32 = np.float32
    picks = []
    for n_in, n_out, scale, ipo, opo in zip(x.shape, out_sizes, scales, input_offsets, output_offsets, strict=True):
        o = np.arange(n_out, dtype=f32)
        c = (o - f32(opo)) * (f32(1) / f32(scale)) - (f32(ipo) - f32(rounding_offset))
        picks.append(np.minimum(np.maximum(np.floor(c), 0), n_in - 1).astype(np.int64))
    return x[np.ix_(*picks)]


def _resample_rule(case: Case, *, rounding_offset: float) -> np.ndarray:
    x = case.inputs[0].view()
    return resample_nearest(x, case.outputs[0].sizes, _floats(case, "Scales", 1.0),
                            _floats(case, "InputPixelOffsets", 0.5), _floats(case, "OutputPixelOffsets", -0.5),
                            rounding_offset=rounding_offset)


@pytest.mark.parametrize("operator", ["RESAMPLE", "RESAMPLE1"])
def test_8_bit_nearest_resample_takes_the_element_at_or_below_the_float32_coordinate(
        directml: Backend, operator: str) -> None:
    elements = differ_from_nearest = 0
    for case, actual in _ran(directml, operator, "nearest", ("INT8", "UINT8")):
        floor = _resample_rule(case, rounding_offset=0.0)
        np.testing.assert_array_equal(actual, floor, err_msg=case.id)
        elements += actual.size
        differ_from_nearest += int((floor != _resample_rule(case, rounding_offset=0.5)).sum())
    assert elements > 5000
    assert differ_from_nearest > elements // 10    # the finding: the nearest element is not what 8-bit takes


@pytest.mark.parametrize("operator", ["RESAMPLE", "RESAMPLE1"])
def test_float32_nearest_resample_is_the_same_shader_rounding_half_up(directml: Backend, operator: str) -> None:
    for case, actual in _ran(directml, operator, "nearest", ("FLOAT32",)):
        np.testing.assert_array_equal(actual, _resample_rule(case, rounding_offset=0.5), err_msg=case.id)


# ------------------------------------------------------------------ SCATTER, SCATTER_ND out of range
def index_words(indices: np.ndarray, sizes: Sequence[int] | np.ndarray, *, signed: bool) -> np.ndarray:
    """Each index as DirectML's scatter shaders take it: its (low) 32-bit
    word, plus the dimension's size (mod 2^32) where the sign of its (high)
    word is set and the shader is a signed one."""
    wide = np.ascontiguousarray(indices)
    words = wide.view(np.uint32).reshape(*wide.shape, -1)          # [..., 1] or [..., 2] (low, high)
    low, high = words[..., 0].astype(np.uint64), words[..., -1].view(np.int32)
    if not signed:
        return low
    return np.where(high < 0, (low + np.asarray(sizes, dtype=np.uint64)) % WRAP, low)


def scatter_rule(x: np.ndarray, places: np.ndarray, updates: np.ndarray) -> np.ndarray:
    """``x`` with ``updates`` stored at the flat ``places`` (32-bit) that are
    <= the element count - 1; where several land on one element, the last
    in row-major order (lavapipe's order)."""
    out = x.reshape(-1).copy()
    keep = np.flatnonzero(places <= np.uint64(x.size - 1))
    last = keep[::-1][np.unique(places[keep][::-1], return_index=True)[1]]
    out[places[last].astype(np.int64)] = updates.reshape(-1)[last]
    return out.reshape(x.shape)


def _row_major(sizes: Sequence[int]) -> np.ndarray:
    return np.array([int(np.prod(sizes[i + 1:])) for i in range(len(sizes))], dtype=np.uint64)


def _in_range(indices: np.ndarray, sizes: Sequence[int] | int) -> np.ndarray:
    """Whether each index names an element by the pages (a negative one of a
    signed type counts from the end)."""
    bound = np.asarray(sizes, dtype=np.int64)
    if indices.dtype.kind == "u":
        return indices < bound.astype(np.uint64)
    wide = indices.astype(np.int64)
    return (wide >= -bound) & (wide < bound)


def _scatter_nd_places(case: Case, *, signed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each update's place by the rule, the update, and whether its index tuple is in range."""
    x, indices, updates = (t.view() for t in case.inputs)
    k = indices.shape[-1]
    tuples = indices.reshape(-1, k)
    base = (index_words(tuples, x.shape[:k], signed=signed) * _row_major(x.shape)[:k]).sum(axis=1) % WRAP
    slice_length = int(np.prod(x.shape[k:]))
    places = (base[:, None] + np.arange(slice_length, dtype=np.uint64)) % WRAP    # imul/imad: 32 bits
    valid = np.repeat(_in_range(tuples, x.shape[:k]).all(axis=1), slice_length)
    return places.reshape(-1), updates.reshape(-1), valid


def _scatter_places(case: Case, *, signed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, indices, updates = (t.view() for t in case.inputs)
    axis = int(dict(case.attributes)["Axis"])
    coords = np.indices(indices.shape).reshape(indices.ndim, -1).astype(np.uint64)
    coords[axis] = index_words(indices.reshape(-1), x.shape[axis], signed=signed)
    places = (coords * _row_major(x.shape)[:, None]).sum(axis=0) % WRAP
    return places, updates.reshape(-1), _in_range(indices.reshape(-1), x.shape[axis])


SIGNED_SHADER = {"INT32": True, "INT64": True, "UINT64": True, "UINT32": False}
PLACES = {"SCATTER": _scatter_places, "SCATTER_ND": _scatter_nd_places}


@pytest.mark.parametrize("operator", ["SCATTER", "SCATTER_ND"])
def test_out_of_range_scatter_indices_wrap_into_other_elements(directml: Backend, operator: str) -> None:
    landed_elsewhere = 0
    for case, actual in _ran(directml, operator, "out-of-range", ("FLOAT32",)):
        x = case.inputs[0].view()
        index_type = case.inputs[1].dtype.name
        places, updates, valid = PLACES[operator](case, signed=SIGNED_SHADER[index_type])
        expected = scatter_rule(x, places, updates)
        np.testing.assert_array_equal(actual.view(np.uint32), expected.view(np.uint32), err_msg=case.id)
        in_range_only = scatter_rule(x, np.where(valid, places, WRAP - 1), updates)   # out-of-range ones dropped
        landed_elsewhere += int((expected.view(np.uint32) != in_range_only.view(np.uint32)).sum())
        if index_type == "UINT64" and operator == "SCATTER":
            # UINT64 runs INT64's shader: 2^64 - 1 is -1, the last element; read unsigned it lands elsewhere
            unsigned, _, _ = PLACES[operator](case, signed=False)
            assert (scatter_rule(x, unsigned, updates).view(np.uint32) != actual.view(np.uint32)).any(), case.id
    assert landed_elsewhere > 0     # the finding: updates of out-of-range indices land on other elements
