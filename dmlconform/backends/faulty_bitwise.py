"""Planted faults of the reviewed-formula operators (bitwise, ROUND:
docs/bitwise.md) for the ``faulty`` backend: each rewrites an output the
way a plausible bug would, after the reference computed it.
`backends.faulty.BREAKS` names them; tests/bitwise/test_faults.py checks
that each is caught."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.backends.cpu_bitwise import as_bits
from dmlconform.cases.model import Case
from dmlconform.spec import model as m

Buffers = Mapping[str, np.ndarray]


def _output(case: Case, buffers: Buffers) -> np.ndarray:
    """The first output's logical view, writable."""
    out = case.outputs[0]
    buf = buffers[out.name]
    return np.lib.stride_tricks.as_strided(buf, out.sizes, tuple(s * buf.itemsize for s in out.strides))


def _input(case: Case, index: int = 0) -> np.ndarray:
    """An input's logical values as the case holds them (before any in-place write)."""
    t = case.inputs[index]
    return np.broadcast_to(t.view(), case.outputs[0].sizes)


def round_half_away(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """ROUND's HALVES_TO_NEAREST_EVEN computed with halves away from zero (C's ``round``)."""
    if spec.operator != "ELEMENT_WISE_ROUND" or not str(case.attribute_map().get("RoundingMode", "")).endswith(
            "HALVES_TO_NEAREST_EVEN"):
        return
    x = _input(case).astype(np.float64)
    _output(case, buffers)[...] = np.copysign(np.floor(np.abs(x) + 0.5), x)


def bit_count_low_byte(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """BIT_COUNT counting the set bits of the lowest byte only."""
    if spec.operator == "ELEMENT_WISE_BIT_COUNT":
        _output(case, buffers)[...] = np.bitwise_count(as_bits(np.ascontiguousarray(_input(case))) & 0xFF)


def bitwise_float_values(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """BIT_AND/OR/XOR/NOT on float tensors computed on their values converted
    to integers, not on their encodings."""
    ops = {"ELEMENT_WISE_BIT_AND": np.bitwise_and, "ELEMENT_WISE_BIT_OR": np.bitwise_or,
           "ELEMENT_WISE_BIT_XOR": np.bitwise_xor}
    if not case.dtype.is_float or (spec.operator not in ops and spec.operator != "ELEMENT_WISE_BIT_NOT"):
        return
    ints = [np.nan_to_num(_input(case, i).astype(np.float64)).clip(-2.0**62, 2.0**62).astype(np.int64)
            for i in range(len(case.inputs))]
    result = np.invert(ints[0]) if spec.operator == "ELEMENT_WISE_BIT_NOT" else ops[spec.operator](*ints)
    _output(case, buffers)[...] = result.astype(np.float64)
