"""What the case generators of the reviewed-semantics families share
(contraction, softmax, reduction, sequence; issue #24 follow-up).

Each family makes its cases from its semantics, the support tables and the
level (`families.contraction.cases`, `families.softmax.cases`, `families.reduction.cases`,
`families.sequence.cases`).  Three things they all did alike live here once: the
support rows a family's shapes start from (and the one reason there are
none), the ``generable`` answer built on that reason, the padded
layout's strides, and the check that a spec has the family's semantics
(`semantics_as`, which the oracles' ``of`` use too) and the seed's.  The
softmax and reduction families also share how a case holds its ``Axes``
(text, ``"2,0"``): `parse_axes` reads it and `axes_problem` and
`count_problem` check it, with one wording.  Nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Protocol, TypeVar

import numpy as np

from dmlconform.cases.model import TensorData, buffer_elements, packed_strides
from dmlconform.errors import InputError
from dmlconform.spec.model import DataType, FeatureLevel, Semantics, Spec, TensorSupport, numpy_dtype

S = TypeVar("S", bound=Semantics)


class _Shape(Protocol):
    """What `selected` reads of a family's case before its values."""

    @property
    def supported(self) -> bool: ...

    @property
    def dtype(self) -> DataType: ...


Sh = TypeVar("Sh", bound=_Shape)


def semantics_as(spec: Spec, kind: type[S], family: str) -> S:
    """``spec``'s reviewed semantics where they are a ``kind`` (the
    ``family``'s record); InputError naming the overlay to write otherwise."""
    if not isinstance(spec.semantics, kind):
        raise InputError(f"{spec.operator}: no reviewed {family} semantics (specs/reviewed/{spec.operator}.yaml)")
    return spec.semantics


def rows_at(spec: Spec, level: FeatureLevel, ranks: tuple[int, ...], *tensors: str) -> list[TensorSupport]:
    """The support rows of ``tensors`` at ``level``, for a family whose
    dimension counts there are ``ranks``; InputError (the reason
    `generable` gives) where there is no table, no row of one of them or
    no dimension count at ``level``."""
    table = spec.table_at(level)
    rows = [table.row(t) for t in tensors] if table is not None else []
    found = [r for r in rows if r is not None]
    if not ranks or len(found) != len(tensors):
        raise InputError(f"{spec.operator}: no cases at {level.short}: no support table or dimension count there")
    return found


def generable(shapes: Callable[[], object]) -> tuple[bool, str]:
    """A family's ``generable(spec, level)`` answer from making its shapes
    (``shapes``): (True, "ok"), or (False, the InputError's reason)."""
    try:
        shapes()
    except InputError as exc:
        return False, str(exc)
    return True, "ok"


def selected(shapes: Iterable[Sh], case_id: Callable[[Sh], str], keep: Callable[[str, DataType], bool] | None,
             *, negative: bool) -> Iterator[tuple[str, Sh]]:
    """The (case id, shape) pairs of ``shapes`` a family's ``generate``
    makes, in order: the negative ones (not ``supported``) only where
    ``negative``, and of those only what ``keep(case id, data type)``
    accepts."""
    for shape in shapes:
        if not negative and not shape.supported:
            continue
        name = case_id(shape)
        if keep is None or keep(name, shape.dtype):
            yield name, shape


def check_seed(seed: object) -> None:
    """A family's ``generate`` takes a whole number >= 0 as its seed (the
    streams of `cases.draws.stream_key`); InputError showing the value otherwise."""
    if not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed={seed!r} must be an integer >= 0")


def parse_axes(value: object, *, name: str = "Axes", empty: bool = False) -> tuple[int, ...]:
    """An ``Axes`` attribute as a case holds it (text, ``"2,0"``, or one whole
    number) -> the dimensions in the order given; ``""`` -> ``()`` where the
    family allows no axis at all (``empty``: REDUCE's ambiguity case).
    Only ASCII digits count: a sign (``"-1"``), ``"1_0"`` or ``"²"``, which
    ``int`` would take, are no dimension numbers.  ValueError naming the
    attribute (``name``), the value and the fix otherwise."""
    text = str(value).strip()
    if empty and not isinstance(value, bool) and text == "":
        return ()
    if isinstance(value, bool) or not all(re.fullmatch("[0-9]{1,9}", p.strip()) for p in text.split(",")):
        raise ValueError(f"{name}={value!r} is not a list of dimension numbers; write them comma-separated, "
                         "e.g. \"2,0\"")
    return tuple(int(p) for p in text.split(","))


def axes_problem(attributes: Mapping[str, object], name: str, *, tensor: str, rank: int,
                 empty: bool = False) -> str | None:
    """The first thing that makes the ``name`` attribute (``Axes``) of a case
    no set of dimensions of its ``rank``-D ``tensor``: missing, not a list of
    dimension numbers (`parse_axes`; ``empty`` as there), a number beyond
    the tensor's dimensions, a dimension given twice.  None where it is
    right.  The text is ``problem: fix`` and shows the value."""
    if name not in attributes:
        return f"attribute {name} is missing: give the reduced dimensions as text, e.g. [\"{name}\", \"{rank - 1}\"]"
    try:
        axes = parse_axes(attributes[name], name=name, empty=empty)
    except ValueError as exc:
        return str(exc)
    shown = f"{name}={','.join(map(str, axes))}"
    outside = [a for a in axes if a >= rank]
    twice = sorted({a for a in axes if axes.count(a) > 1})
    if outside:
        return f"{shown}: {outside[0]} is no dimension of the {rank}-D {tensor}: give dimensions 0 to {rank - 1}"
    if twice:
        return f"{shown} names dimension {twice[0]} twice: give each dimension once"
    return None


def count_problem(attributes: Mapping[str, object], name: str, axes: tuple[int, ...], *, axes_name: str) -> str | None:
    """The ``name`` attribute (``AxisCount``) where it is given and is not the
    count of ``axes`` (the ``axes_name`` attribute, read); None otherwise
    (a missing one is `validate`'s to name, as every missing number)."""
    count = attributes.get(name)
    if count is None or count == len(axes):
        return None
    dimensions = "dimension" if len(axes) == 1 else "dimensions"
    return (f"{name}={count!r} but {axes_name}={','.join(map(str, axes))} lists {len(axes)} {dimensions}: "
            f"give {name}={len(axes)}")


def padded_strides(sizes: tuple[int, ...], *, gap: int = 3) -> tuple[int, ...]:
    """Strides of the families' ``padded`` layout: row-major, with ``gap``
    elements after every innermost row (the gaps hold a value that shows
    wherever an implementation reads them)."""
    strides, step = [], 1
    for i, size in enumerate(reversed(sizes)):
        strides.append(step)
        step = step * size + (gap if i == 0 else 0)
    return tuple(reversed(strides))


def input_tensor(name: str, dtype: DataType, x: np.ndarray, *, padded: bool = False,
                 broadcast_dim: int | None = None) -> TensorData:
    """An input holding ``x`` (its sizes): packed, ``padded`` (NaN in the
    gaps, which show wherever an implementation reads them) or broadcast
    along ``broadcast_dim`` through a stride of 0 (``x`` is alike along it)."""
    sizes = tuple(x.shape)
    if broadcast_dim is not None:
        held = tuple(1 if d == broadcast_dim else s for d, s in enumerate(sizes))
        strides = tuple(0 if d == broadcast_dim else s for d, s in enumerate(packed_strides(held)))
        buf = np.ascontiguousarray(np.take(x, [0], axis=broadcast_dim)).reshape(-1)
    else:
        strides = padded_strides(sizes) if padded else packed_strides(sizes)
        buf = np.full(buffer_elements(sizes, strides), np.nan, dtype=x.dtype)
        item = x.dtype.itemsize
        np.lib.stride_tricks.as_strided(buf, sizes, tuple(s * item for s in strides), writeable=True)[...] = x
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)


def output_tensor(name: str, dtype: DataType, sizes: tuple[int, ...], *, padded: bool = False) -> TensorData:
    """An output of ``sizes``, packed or ``padded``, its buffer zeros."""
    strides = padded_strides(sizes) if padded else packed_strides(sizes)
    buf = np.zeros(buffer_elements(sizes, strides), dtype=numpy_dtype(dtype))
    buf.setflags(write=False)
    return TensorData(name, dtype, sizes, strides, buf)
