"""The cases of JOIN and SPLIT (issue #34 item 3), and their shape rules
as a case folder's checks.

Per data type of the table: three parts of unequal sizes on axis 1 (4
dimensions, or the table's last count), each with the type's edge values;
with FLOAT32: three parts on every axis of every dimension count in force,
arrays of 1, 2 and 4 tensors, and the padded, permuted and broadcast
layouts (of JOIN's inputs or SPLIT's input; the outputs then padded);
the page's worked examples (``example<k>``, their values; those whose
sizes break the page's rules or whose type or dimension count is outside
the table are lint's, `join_examples`).
Negative: a data type and a dimension count outside the tables.  A case
names the array's tensors by `spec.model.element_name` and gives the
count field their number.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from dmlconform.cases import family
from dmlconform.cases.draws import stream_key
from dmlconform.cases.model import Case, Layout, TensorData
from dmlconform.families.index_map.cases import Shape, data_values, semantics_of, tensor
from dmlconform.families.index_map.join_examples import example_call
from dmlconform.families.index_map.joins import JoinPlan, array_name, join_call, join_problem, plan
from dmlconform.families.index_map.semantics import Example, IndexMap, Operation
from dmlconform.spec.model import DataType, FeatureLevel, Spec, element_name, numpy_dtype

#: Data types tried outside a table (negative cases), the first one it lacks.
_OUTSIDE = (DataType.FLOAT64, DataType.INT64, DataType.INT8, DataType.UINT8)
_LAYOUTS = {"packed": Layout.PACKED, "padded": Layout.PADDED, "permuted": Layout.PADDED,
            "broadcast": Layout.BROADCAST}


@dataclass(frozen=True, slots=True)
class JoinShape:
    """One case before its values: its data type, sizes (`JoinPlan`) and layout."""

    dtype: DataType
    plan: JoinPlan
    layout: str = "packed"
    supported: bool = True
    example: Example | None = None

    def case_id(self, operator: str) -> str:
        p = self.plan
        parts = [operator, self.dtype.name, f"{len(p.whole)}d", f"axis={p.axis}", f"n={len(p.lengths)}", p.variant]
        return "/".join(parts + ([self.layout] if self.layout != "packed" else []))


def single_name(sem: IndexMap) -> str:
    """The single tensor: JOIN's output, SPLIT's input."""
    return sem.output if sem.operation is Operation.JOIN else sem.input


def shapes(spec: Spec, level: FeatureLevel) -> list[JoinShape]:
    """Every case of ``spec`` at ``level`` before its values, in a fixed order."""
    sem = semantics_of(spec)
    ranks = sem.dims_at(level)
    row, _ = family.rows_at(spec, level, ranks, array_name(sem), single_name(sem))
    rep = 4 if 4 in ranks else ranks[-1]
    first = DataType.FLOAT32 if DataType.FLOAT32 in row.dtypes else row.dtypes[0]
    axis = min(1, rep - 1)
    out = [JoinShape(t, plan(rep, axis, 3, "edges")) for t in row.dtypes]
    out += [JoinShape(first, plan(r, a, 3, "unequal")) for r in ranks for a in range(r)]
    out += [JoinShape(first, plan(rep, rep - 1, n, "unequal")) for n in (1, 2, 4)]
    out += [JoinShape(first, plan(rep, axis, 3, "unequal"), layout) for layout in ("padded", "permuted", "broadcast")]
    out += list(_examples(sem, ranks, row.dtypes))
    bad_type = next((t for t in _OUTSIDE if t not in row.dtypes), None)
    if bad_type is not None:
        out.append(JoinShape(bad_type, plan(rep, axis, 3, "unsupported"), supported=False))
    bad_rank = next((r for r in (3, 5, 2) if r not in ranks), None)
    if bad_rank is not None:
        out.append(JoinShape(first, plan(bad_rank, min(1, bad_rank - 1), 3, "unsupported"), supported=False))
    return list(dict.fromkeys(out))


def _examples(sem: IndexMap, ranks: tuple[int, ...], dtypes: tuple[DataType, ...]) -> Iterator[JoinShape]:
    """The page's worked examples that follow its rules, at a type and dimension count of the table."""
    for e in sem.examples:
        try:
            call = example_call(sem, e)
        except ValueError:
            continue
        dtype = e.output_type if call.join else e.input_type
        if (join_problem(call) is None and len(call.whole) in ranks and dtype in dtypes
                and all(t.type is dtype for t in e.array)):
            lengths = tuple(p[call.axis] for p in call.parts)
            yield JoinShape(dtype, JoinPlan(e.name, call.whole, call.axis, lengths), example=e)


def generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether there are cases of ``spec`` at ``level``, and if not, why."""
    return family.generable(lambda: shapes(spec, level))


def generate(spec: Spec, level: FeatureLevel, *, seed: int, negative: bool = True,
             keep: Callable[[str, DataType], bool] | None = None) -> Iterator[Case]:
    """The cases of ``spec`` at ``level``, only those ``keep(id, data type)``
    accepts, without the negative ones where not ``negative``; identical
    for a ``seed``."""
    family.check_seed(seed)
    sem = semantics_of(spec)
    for case_id, shape in family.selected(shapes(spec, level), lambda s: s.case_id(spec.operator), keep,
                                          negative=negative):
        yield _case(spec, sem, level, seed, case_id, shape)


def _case(spec: Spec, sem: IndexMap, level: FeatureLevel, seed: int, case_id: str, shape: JoinShape) -> Case:
    p = shape.plan
    array = array_name(sem)
    names = [element_name(array, k) for k in range(len(p.lengths))]
    out_layout = "padded" if shape.layout == "broadcast" else shape.layout

    def given(name: str, sizes: tuple[int, ...]) -> TensorData:
        if shape.example is not None:
            e = shape.example
            values = e.array[names.index(name)].values if name in names else e.input_values
            x = np.array(values, dtype=numpy_dtype(shape.dtype)).reshape(sizes)
            return tensor(name, shape.dtype, x, sizes, out_layout)
        broadcast = next((d for d, s in enumerate(sizes) if s > 1), None) if shape.layout == "broadcast" else None
        rng = np.random.default_rng(stream_key(seed, case_id, name))
        x = data_values(Shape(shape.dtype, sizes, (), (), None, indices="join"), rng, broadcast)
        return tensor(name, shape.dtype, x, sizes, out_layout if broadcast is None else "broadcast", broadcast)

    inputs: tuple[TensorData, ...]
    outputs: tuple[TensorData, ...]
    if sem.operation is Operation.JOIN:
        inputs = tuple(given(n, s) for n, s in zip(names, p.parts()))
        outputs = (tensor(sem.output, shape.dtype, None, p.whole, out_layout),)
    else:
        inputs = (given(sem.input, p.whole),)
        outputs = tuple(tensor(n, shape.dtype, None, s, out_layout) for n, s in zip(names, p.parts()))
    count = spec.field(array).count_field  # type: ignore[union-attr]  # the overlay names a tensor array
    named: dict[str | None, int] = {count: len(names), sem.axis: p.axis}
    attributes = tuple((f.name, named[f.name]) for f in spec.attributes if f.name in named)
    return Case(id=case_id, operator=spec.operator, level=level, dtype=shape.dtype, inputs=inputs, outputs=outputs,
                attributes=attributes, layout=_LAYOUTS[shape.layout], expect_supported=shape.supported,
                edges=("join", p.variant), seed=seed)


def case_problems(spec: Spec, case: Case) -> Iterator[str]:
    """What makes ``case`` no JOIN or SPLIT the page describes: an Axis
    outside the dimensions, parts that do not lie end to end along it."""
    sem = semantics_of(spec)
    try:
        call = join_call(sem, case)
    except ValueError as exc:
        yield str(exc)
        return
    if not call.whole or not call.parts:
        return  # a missing tensor is reported as such (`case_folders`)
    problem = join_problem(call)
    if problem is not None:
        yield f"{problem}: give sizes and an Axis the page allows"
