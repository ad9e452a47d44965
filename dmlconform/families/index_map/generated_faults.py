"""Planted faults of the index-map family's generated operations (issue #34
item 7), each rewriting an output the reference computed the way a
plausible bug would; `faults.FAULTS` names them."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.families.index_map import generated_reference as ref
from dmlconform.families.index_map.generated import output_of
from dmlconform.families.index_map.semantics import IndexMap, Operation
from dmlconform.spec import model as m
from dmlconform.spec.model import DataType, numpy_dtype


def _only(operation: Operation, body: Callable[[IndexMap, Case, Buffers], None]) -> Fault:
    def fault(spec: m.Spec, case: Case, buffers: Buffers) -> None:
        sem = spec.semantics
        if isinstance(sem, IndexMap) and sem.operation is operation:
            body(sem, case, buffers)
    return fault


def _cast_rounds(sem: IndexMap, case: Case, buffers: Buffers) -> None:
    """A float into an integer type rounded to nearest (np.rint) where it must be truncated toward zero."""
    x = np.asarray(case.input(sem.input).view(buffers[sem.input]))
    out = output_of(sem, case)
    if x.dtype.kind == "f" and not out.dtype.is_float:
        with np.errstate(invalid="ignore"):
            writable_view(out, buffers[sem.output])[...] = ref.cast(np.rint(x), out.dtype)


def _float16_clamped(sem: IndexMap, case: Case, buffers: Buffers) -> None:
    """A conversion to FLOAT16 clamped into its finite range, infinities
    included: an infinity stays one under every reading."""
    x = np.asarray(case.input(sem.input).view(buffers[sem.input]))
    out = output_of(sem, case)
    if x.dtype.kind == "f" and out.dtype is DataType.FLOAT16:
        with np.errstate(over="ignore", invalid="ignore"):
            writable_view(out, buffers[sem.output])[...] = np.clip(x, -65504, 65504).astype(np.float16)


def _counter_per_element(sem: IndexMap, case: Case, buffers: Buffers) -> None:
    """Philox's counter advanced once per output element (each element word
    0 of its own block), and the state by the element count."""
    state = np.asarray(case.input(sem.input).view(buffers[sem.input])).reshape(-1)
    out = output_of(sem, case)
    count = math.prod(out.sizes)
    words, advanced = ref.random_words(state, 4 * count)
    writable_view(out, buffers[sem.output])[...] = words.reshape(-1, 4)[:, 0].reshape(out.sizes)
    for t in case.outputs:
        if t.name == sem.state_output:
            writable_view(t, buffers[t.name])[...] = advanced.reshape(t.sizes)


def _offset_off_by_one(sem: IndexMap, case: Case, buffers: Buffers) -> None:
    """The diagonal one column to the right: Offset + 1 (DIAGONAL_MATRIX) or
    both bounds + 1 (DIAGONAL_MATRIX1)."""
    out = output_of(sem, case)
    attrs = dict(case.attributes)
    for part in ("offset", "fill_begin", "fill_end"):
        name = sem.attribute(part)
        if name is not None and isinstance(attrs.get(name), int) and abs(int(attrs[name])) < 2 ** 30:
            attrs[name] = int(attrs[name]) + 1
    moved = Case(case.id, case.operator, case.level, case.dtype, case.inputs, case.outputs,
                 tuple(attrs.items()), case.layout)
    found = ref.compute(sem, moved, buffers)
    writable_view(out, buffers[sem.output])[...] = found[sem.output].astype(numpy_dtype(out.dtype))


#: The generated operations' faults by name (merged into `faults.FAULTS`).
FAULTS = {
    "cast-rounds-to-nearest": _only(Operation.CAST, _cast_rounds),
    "cast-float16-infinity-clamped": _only(Operation.CAST, _float16_clamped),
    "random-counter-advanced-per-element": _only(Operation.RANDOM, _counter_per_element),
    "diagonal-offset-off-by-one": _only(Operation.DIAGONAL, _offset_off_by_one),
    "diagonal-span-off-by-one": _only(Operation.DIAGONAL_SPAN, _offset_off_by_one),
}
