"""The CPU reference's mean-variance normalization takes its steps in place
(issue #36's large case: one allocation of the tensor, not one a step); it
gives, bit for bit, what the formula taken a fresh array a step gives (the
same operations in the same order), leaves its inputs alone and returns an
array of its own, over every case of the default suites and with each of
the planted faults' changes (the sample variance, Epsilon outside the root,
the addend after the activation)."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.cases.model import Case
from dmlconform.families.contraction.cases import Activation
from dmlconform.families.elementwise.reference import OPS, Call
from dmlconform.families.normalization.cases import (
    Operands,
    activation_of,
    axes_of,
    centres,
    divides,
    epsilon_of,
    operands,
    semantics_of,
)
from dmlconform.families.normalization.reference import mean_variance
from dmlconform.spec.model import DataType, numpy_dtype
from tests.families.normalization import suites

OPERATORS = ("MEAN_VARIANCE_NORMALIZATION", "MEAN_VARIANCE_NORMALIZATION1", "MEAN_VARIANCE_NORMALIZATION2",
             "BATCH_NORMALIZATION_TRAINING")
#: The planted faults' changes (`families.normalization.faults`), and none.
CHANGES = ({}, {"ddof": 1}, {"outside": True}, {"add_after": True})


def _plain(ops: Operands, axes: tuple[int, ...], epsilon: float, divide: bool, dtype: DataType, *, centre: bool,
           fused: Activation | None, ddof: int = 0, outside: bool = False, add_after: bool = False) -> np.ndarray:
    """The formula a fresh array a step: the reference as it read before its steps were taken in place."""
    work = np.dtype(np.float32) if dtype is DataType.FLOAT16 else numpy_dtype(dtype)
    x = ops.x.astype(work)
    with np.errstate(all="ignore"):
        centred = x - x.mean(axis=axes, keepdims=True, dtype=work) if centre else x
        y = centred
        if divide:
            n = int(np.prod([x.shape[a] for a in axes])) - ddof
            variance = (centred * centred).sum(axis=axes, keepdims=True, dtype=work) / work.type(n)
            eps = work.type(epsilon)
            y = centred / (np.sqrt(variance) + eps if outside else np.sqrt(variance + eps))
        for term in (ops.scale, ops.bias, None if add_after else ops.add):
            if term is not None:
                y = y * term.astype(work) if term is ops.scale else y + term.astype(work)
        if fused is not None:
            call_type = DataType.FLOAT64 if work == np.float64 else DataType.FLOAT32
            y = np.asarray(OPS[fused.operator](Call({"InputTensor": y}, dict(fused.attributes), call_type,
                                                    {"OutputTensor": work})))
        if ops.add is not None and add_after:
            y = y + ops.add.astype(work)
    return y.astype(numpy_dtype(dtype))


def _cases() -> list[tuple[str, Case]]:
    return [(op, case) for op in OPERATORS for case in suites.cases(op)
            if semantics_of(suites.spec(op)).operation in ("mean_variance", "batch_training")]


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: ",".join(c) or "primary")
def test_in_place_steps_give_the_plain_formula_bit_for_bit(change: dict[str, object]) -> None:
    checked = 0
    for op, case in _cases():
        sem = semantics_of(suites.spec(op))
        buffers = {t.name: t.buffer.copy() for t in case.inputs}
        before = {name: b.copy() for name, b in buffers.items()}
        ops = operands(sem, case, buffers)
        settings = dict(axes=axes_of(sem, case), epsilon=epsilon_of(sem, case), divide=divides(sem, case),
                        dtype=case.outputs[0].dtype, centre=centres(sem, case), fused=activation_of(sem, case))
        got = mean_variance(ops, **settings, **change)  # type: ignore[arg-type]
        wanted = _plain(ops, **settings, **change)  # type: ignore[arg-type]
        assert got.dtype == wanted.dtype and got.shape == wanted.shape, case.id
        assert got.tobytes() == wanted.tobytes(), case.id
        assert all(buffers[name].tobytes() == b.tobytes() for name, b in before.items()), f"{case.id}: an input changed"
        assert not any(np.may_share_memory(got, b) for b in buffers.values()), f"{case.id}: the output is an input"
        checked += 1
    assert checked > 50  # every configuration the suites hold: centred or not, divided or not, fused, FLOAT16
