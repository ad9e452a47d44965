"""The element-wise formula family: operators whose doc gives a formula of
each output element in terms of the input elements at the same place
(activations, element-wise math, comparisons, clip, if, ...).

The oracle is the spec's parsed formula, evaluated by `families.elementwise.formula_oracle` in
float64 (exactly where that is not enough) and rounded once to the output's
type, with a per-element bound and the alternatives an honest implementation
may give (DESIGN.md "The oracle and the CPU reference are two things").  A
batch's inputs are joined end to end, broadcast to the output's sizes, so
one evaluation covers every case of the batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from dmlconform.cases.model import Case, flat_view, joined
from dmlconform.families.elementwise.binding import is_runnable
from dmlconform.families.elementwise.floatrun import Prepared
from dmlconform.families.elementwise.formula_oracle import OracleResult, evaluate_many, prepare
from dmlconform.families.elementwise.readings import ReadingOracle, evaluable
from dmlconform.formula import Parsed, classified, parse
from dmlconform.formula.tree import FormulaTree
from dmlconform.oracles.base import Expectation
from dmlconform.spec import model as m


@dataclass(frozen=True, slots=True, eq=False)
class FormulaOracle:
    """A spec's formula, parsed and bound to its tensors (``inputs`` and
    ``outputs``: tensor field -> the name the formula uses), and prepared
    once for every batch of the run (``formula``: `families.elementwise.formula_oracle.prepare`)."""

    spec: m.Spec
    tree: FormulaTree
    inputs: Mapping[str, str]
    outputs: Mapping[str, str]
    formula: Prepared
    #: Every reading of the spec's ambiguities (`families.elementwise.readings`); None without any.
    readings: ReadingOracle | None = None

    @classmethod
    def of(cls, spec: m.Spec) -> FormulaOracle:
        """The oracle of ``spec``; a spec whose formula is not evaluable
        raises ValueError (the family does not claim it: `claims`)."""
        if not spec.formula.evaluable or not spec.formula.parsed:
            raise ValueError(f"{spec.operator}: the formula is not evaluable ({spec.formula.reason or 'no formula'})")
        tensors = [f for f in spec.fields if f.is_tensor]
        bound = classified(spec.formula.parsed, tuple(f.name for f in spec.fields),
                           tuple(f.name for f in tensors if f.role is m.TensorRole.INPUT),
                           tuple(f.name for f in tensors if f.role is m.TensorRole.OUTPUT))
        if not isinstance(bound, Parsed):
            tree = parse(spec.formula.parsed)
            return cls(spec, tree, {}, {}, prepare(tree))
        formula = prepare(bound.tree)
        readings = (ReadingOracle.of(spec, bound.tree, formula, frozenset(name for name, _ in bound.inputs))
                    if evaluable(spec) else None)
        return cls(spec, bound.tree, {tensor: name for name, tensor in bound.inputs},
                   {tensor: name for name, tensor in bound.outputs}, formula, readings)

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> FormulaBatch:
        """The batch's inputs end to end, each broadcast to its case's output
        sizes (every output of an element-wise case has those sizes).  An
        element-wise formula sums nothing: ``float16_accumulation`` changes nothing."""
        first = cases[0]
        inputs = {self.inputs.get(t.name, t.name): joined(
            [flat_view(case.inputs[j], None, case.outputs[0].sizes) for case in cases])
            for j, t in enumerate(first.inputs)}
        return FormulaBatch(self, first, inputs, flush_subnormals)


@dataclass(frozen=True, slots=True, eq=False)
class FormulaBatch:
    """`FormulaOracle` bound to a batch: ``inputs`` by formula name, flat;
    ``case`` the first case (the batch shares its tensors and attributes)."""

    oracle: FormulaOracle
    case: Case
    inputs: Mapping[str, np.ndarray]
    flush_subnormals: bool

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        """The formula over elements [lo, hi): the outputs of one data type
        share one evaluation (`evaluate_many`: Adam's three outputs cost one
        tracked pass)."""
        spec, outputs = self.oracle.spec, self.case.outputs
        chunk = {name: values[lo:hi] for name, values in self.inputs.items()}
        by_type: dict[m.DataType, list[int]] = {}
        for k, out in enumerate(outputs):
            by_type.setdefault(out.dtype, []).append(k)
        found: list[Expectation | None] = [None] * len(outputs)
        for dtype, members in by_type.items():
            names = [self.oracle.outputs.get(outputs[k].name) for k in members]
            results = evaluate_many(self.oracle.formula, chunk, self.case.attribute_map(), dtype=dtype,
                                    outputs=names, nan_policy=spec.formula.nan_policy,
                                    overflow=spec.formula.integer_overflow, flush_subnormals=self.flush_subnormals)
            expectations = [_expectation(result, spec.formula.signed_zero) for result in results]
            if self.oracle.readings is not None:
                extra = self.oracle.readings.alternatives(chunk, self.case.attribute_map(), dtype=dtype,
                                                          outputs=names, primary=results,
                                                          signed_zero=[e.signed_zero for e in expectations])
                expectations = [replace(e, alternatives=more + e.alternatives) for e, more in zip(expectations, extra)]
            for k, expectation in zip(members, expectations):
                found[k] = expectation
        return tuple(e for e in found if e is not None)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """Each input at the same place as the output elements ``flat``."""
        tensor = {name: field for field, name in self.oracle.inputs.items()}
        return tuple((tensor.get(name, name), [_number(x) for x in values[flat].tolist()])
                     for name, values in self.inputs.items())


def _expectation(result: OracleResult, signed_zero: bool | None) -> Expectation:
    """The oracle's result as the runner compares it: its relaxed bound only
    where it is not simply factor x strict (next to a discontinuity), the
    sign of zero as the doc says (the spec) or as the formula implies."""
    relaxed = result.bound_relaxed if result.uncertain is not None else None
    return Expectation(result.expected, result.bound_strict, relaxed, result.alternatives, result.ulp,
                       result.relaxed_factor, result.signed_zero if signed_zero is None else signed_zero)


def _number(value: object) -> float:
    """An input value as a report shows it (a float; NaN for what is not a number)."""
    try:
        return float(value)  # type: ignore[arg-type]  # any object: one float() refuses is the NaN case
    except (TypeError, ValueError):
        return float("nan")


def claims(spec: m.Spec) -> tuple[bool, str]:
    """Whether this family can test ``spec`` (cases from its formula), and if
    not, why: the reason a spec writer can act on."""
    return is_runnable(spec)
