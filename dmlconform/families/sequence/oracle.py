"""The sequence family's oracle (TOP_K, TOP_K1, CUMULATIVE_SUMMATION,
CUMULATIVE_PRODUCT): expected values, bounds and readings per output.

Issue #24 item 2; DESIGN.md "Operator families" and "Tolerances";
docs/sequence.md derives the bounds and works one real case through them.

* **Top-k** is exact: the values are input elements (their sign of zero
  included) and the indices integers.  The order is the reviewed one: by
  value, ties by ascending index in either direction (the page's line 75
  and its Example 3).  The ambiguities ``nan-order`` (NaN above +inf or
  below -inf) and ``signed-zero-order`` (-0 and +0 tie, or -0 ranks below)
  are evaluated where a batch can tell them apart (NaN among the inputs; -0
  among them) and offered as STRICT alternatives
  ``reading:<ambiguity>:<reading>`` (`families.elementwise.readings` names).
* **A running sum** of float values: element i of a sequence (in traversal
  order) is a sum of n_i terms (i + 1, or i when exclusive) whose
  magnitudes sum to S_i.  Summed in any order (sequentially, or as any
  parallel scan's tree) in an accumulator of unit roundoff u, its error is
  at most gamma_{n_i - 1}(u) S_i (Higham, "Accuracy and Stability of
  Numerical Algorithms", 2nd ed., eq. 4.6).  FAIL beyond gamma_{n_i}(u)
  S_i plus the oracle's own float64 error and one spacing of the output
  type (its rounding); QUALITY_WARNING beyond the probabilistic gamma~ of
  Higham and Mary (`families.contraction.oracle.gamma_probable`).  u is float32's
  for FLOAT16 tensors (the reviewed ``float16-accumulator``) unless the
  backend declares FLOAT16 accumulation.
* **A running product**: relative, gamma_{n_i}(u) |P_i| the same way
  (each of the n_i - 1 multiplications rounds once, in any order).  The
  cases keep products far from overflow and underflow (no bound holds
  across gradual underflow).
* Integer-valued data whose every partial result fits the accumulator and
  the output give bound 0 (a dropped or doubled term cannot hide).
* **Integers** are exact; ``integer-overflow`` evaluates wrap-around
  (primary) and a tally saturated at each step.

NaN and infinite results are compared as values (any NaN matches).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import RELAXED_FACTOR, Alternative, Tier, finfo
from dmlconform.families.sequence.cases import Attributes, attributes_of, placed, semantics_of, sequences
from dmlconform.families.sequence.semantics import Operation, SequenceOp
from dmlconform.oracles.base import (
    PREFIX,
    Expectation,
    gamma,
    gamma_probable,
    marker_name,
    spacing_above,
    unit_roundoff,
)
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype

__all__ = ["SequenceBatch", "SequenceOracle", "scan", "select"]

_U64 = 2.0 ** -53


@dataclass(frozen=True, slots=True)
class Order:
    """How top-k ranks: NaN above every value or below, -0 below +0 or tied with it."""

    nan_largest: bool = True
    zero_total_order: bool = False


#: Each reading of the top-k ambiguities the oracle evaluates, as the order it gives.
TOP_K_READINGS = {("nan-order", "smallest"): Order(nan_largest=False),
                  ("signed-zero-order", "total-order"): Order(zero_total_order=True)}


def select(x: np.ndarray, k: int, *, increasing: bool, order: Order = Order()) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` values of each sequence (``x``'s last axis) and
    their indices, ranked by value (``increasing`` or not) and ``order``,
    ties by ascending index.  Descending with ties ascending: the
    sequence reversed, sorted ascending (stable), reversed again."""
    n = x.shape[-1]
    if increasing:
        chosen = np.lexsort(_keys(x, order), axis=-1)[..., :k]
    else:
        backwards = np.lexsort(_keys(x[..., ::-1], order), axis=-1)[..., ::-1]
        chosen = (n - 1) - backwards[..., :k]
    return np.take_along_axis(x, chosen, axis=-1), chosen


def _keys(x: np.ndarray, order: Order) -> tuple[np.ndarray, ...]:
    """Sort keys, the last the first: the NaN group, the value, -0 below +0 where ``order`` says."""
    if x.dtype.kind != "f":
        return (x,)
    v = x.astype(np.float64)
    nan = np.isnan(v)
    group = np.where(nan, 2 if order.nan_largest else 0, 1)
    keys: tuple[np.ndarray, ...] = (np.where(nan, 0.0, v), group)
    if order.zero_total_order:
        keys = (((v == 0) & ~np.signbit(v)).astype(np.int8), *keys)
    return keys


@dataclass(frozen=True, slots=True, eq=False)
class Scan:
    """A running sum or product along the last axis: the tally (float64;
    integers in their own type, wrapping as two's complement does), the sum
    of the terms' magnitudes (a product: the tally's own magnitude; zero
    for integers) and the term count."""

    tally: np.ndarray
    magnitude: np.ndarray
    terms: np.ndarray


def scan(x: np.ndarray, *, product: bool, increasing: bool, exclusive: bool) -> Scan:
    """The running tally of each sequence of ``x`` (last axis) in
    traversal order, leaving the current element out where ``exclusive``.
    Integer tallies are exact modulo 2^bits in any order: wrap-around, the
    primary reading of ``integer-overflow``."""
    integer = x.dtype.kind in "iu"
    wide = x if integer else x.astype(np.float64)
    if not increasing:
        wide = wide[..., ::-1]
    with np.errstate(all="ignore"):
        tally = (np.cumprod if product else np.cumsum)(wide, axis=-1, dtype=wide.dtype)
        magnitude = np.zeros(wide.shape) if integer else np.abs(tally) if product else \
            np.cumsum(np.abs(wide), axis=-1)
    terms = np.broadcast_to(np.arange(1, x.shape[-1] + 1, dtype=np.float64), x.shape)
    if exclusive:
        tally, magnitude, terms = (_shift(a, 1 if product else 0) for a in (tally, magnitude, terms))
        if product and not integer:
            magnitude = np.abs(tally)
    if not increasing:
        tally, magnitude, terms = tally[..., ::-1], magnitude[..., ::-1], terms[..., ::-1]
    return Scan(tally, magnitude, terms)


def _shift(a: np.ndarray, first: int) -> np.ndarray:
    """``a`` moved one place along the last axis, ``first`` in front (its last element dropped)."""
    if a.shape[-1] == 0:
        return a
    front = np.full(a.shape[:-1] + (1,), first, dtype=a.dtype)
    return np.concatenate([front, a[..., :-1]], axis=-1)


def may_overflow(x: np.ndarray, *, product: bool) -> bool:
    """Whether some running tally of integers ``x`` may leave their type
    (a float64 estimate within a factor of 2 of its limit)."""
    with np.errstate(over="ignore"):
        wide = np.abs(x.astype(np.float64))
        reach = np.cumprod(np.maximum(wide, 1), axis=-1) if product else np.cumsum(wide, axis=-1)
    return bool(reach.size) and float(reach.max()) >= float(np.iinfo(x.dtype).max) / 2


def saturating(x: np.ndarray, *, product: bool, increasing: bool, exclusive: bool) -> np.ndarray:
    """The ``saturate`` reading of ``integer-overflow``: every running tally
    clamped to the range of ``x``'s type, in traversal order (a loop over
    the axis, each step vectorised over the sequences in Python integers;
    asked only where `may_overflow`)."""
    info = np.iinfo(x.dtype)
    wide = x.astype(object)
    if not increasing:
        wide = wide[..., ::-1]
    out = np.empty(wide.shape, dtype=object)
    acc = np.full(wide.shape[:-1], 1 if product else 0, dtype=object)
    for i in range(wide.shape[-1]):
        if exclusive:
            out[..., i] = acc
        acc = np.clip(acc * wide[..., i] if product else acc + wide[..., i], int(info.min), int(info.max))
        if not exclusive:
            out[..., i] = acc
    out = out[..., ::-1] if not increasing else out
    return out.astype(x.dtype)


@dataclass
class _Output:
    """What one output of the batch collects, case after case."""

    expected: list[np.ndarray] = field(default_factory=list)
    strict: list[np.ndarray] = field(default_factory=list)
    relaxed: list[np.ndarray] = field(default_factory=list)
    alternatives: dict[str, tuple[list[np.ndarray], list[np.ndarray], str]] = field(default_factory=dict)
    size: int = 0

    def add(self, expected: np.ndarray, strict: np.ndarray | None, relaxed: np.ndarray | None) -> None:
        self.expected.append(expected.reshape(-1))
        if strict is not None and relaxed is not None:
            self.strict.append(strict.reshape(-1))
            self.relaxed.append(relaxed.reshape(-1))

    def offer(self, name: str, index: np.ndarray, values: np.ndarray, says: str) -> None:
        """Another value accepted at ``index`` (of the case just added)."""
        indices, held, _ = self.alternatives.setdefault(name, ([], [], says))
        indices.append(index + self.size)
        held.append(values)

    def close_case(self) -> None:
        self.size += self.expected[-1].size


@dataclass(frozen=True, slots=True, eq=False)
class SequenceOracle:
    """The oracle of one sequence operator (its reviewed semantics and ambiguities)."""

    spec: m.Spec
    semantics: SequenceOp

    @classmethod
    def of(cls, spec: m.Spec) -> SequenceOracle:
        return cls(spec, semantics_of(spec))

    def bind(self, cases: Seq[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> SequenceBatch:
        """Each case's expected outputs, bounds and readings end to end.
        ``flush_subnormals`` changes nothing: no case's data is subnormal."""
        names = [t.name for t in cases[0].outputs]
        outs = {name: _Output() for name in names}
        terms, magnitude = [], []
        for case in cases:
            if self.semantics.operation is Operation.TOP_K:
                self._top_k(case, outs)
            else:
                s = self._scan(case, outs, float16_accumulation)
                terms.append(s.terms.reshape(-1))
                magnitude.append(s.magnitude.reshape(-1))
            for out in outs.values():
                out.close_case()
        signed_zero = self.semantics.operation is Operation.TOP_K
        return SequenceBatch(tuple(_Frozen.of(outs[n], signed_zero and n == self.semantics.output) for n in names),
                             np.concatenate(terms) if terms else None,
                             np.concatenate(magnitude) if magnitude else None)

    def _reading(self, ambiguity: str, reading: str) -> tuple[m.Ambiguity, m.Reading] | None:
        """The spec's ``ambiguity`` and its ``reading`` (None: it has no such one)."""
        found = next((a for a in self.spec.ambiguities if a.id == ambiguity), None)
        chosen = found.reading(reading) if found is not None else None
        return None if found is None or chosen is None else (found, chosen)

    def _top_k(self, case: Case, outs: dict[str, _Output]) -> None:
        sem = self.semantics
        a = attributes_of(sem, case)
        x = sequences(sem, case)
        primary = self._placed_top_k(case, a, x, Order())
        for name, values in primary.items():
            outs[name].add(values, None, None)
        for (ambiguity, reading), order in TOP_K_READINGS.items():
            known = self._reading(ambiguity, reading)
            if known is not None and _tells_apart(ambiguity, x):
                mine = self._placed_top_k(case, a, x, order)
                for name, values in mine.items():
                    _offer(outs[name], *known, values, primary[name])

    def _placed_top_k(self, case: Case, a: Attributes, x: np.ndarray, order: Order) -> dict[str, np.ndarray]:
        """Values and indices of ``case`` in the outputs' types and layout, ranked by ``order``."""
        values, index = select(x, a.k, increasing=a.increasing, order=order)
        out = {t.name: t.dtype for t in case.outputs}
        found = {self.semantics.output: placed(self.semantics, case, values)}
        if self.semantics.indices is not None:
            found[self.semantics.indices] = placed(self.semantics, case, index)
        return {n: v.astype(numpy_dtype(out[n])) for n, v in found.items() if n in out}

    def _scan(self, case: Case, outs: dict[str, _Output], float16_accumulation: bool) -> Scan:
        sem = self.semantics
        a = attributes_of(sem, case)
        x = sequences(sem, case)
        product = sem.operation is Operation.CUMULATIVE_PRODUCT
        s = scan(x, product=product, increasing=a.increasing, exclusive=a.exclusive)
        out = next(t for t in case.outputs if t.name == sem.output)
        nt = numpy_dtype(out.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            expected = placed(sem, case, s.tally).astype(nt)
        laid = Scan(placed(sem, case, s.tally), placed(sem, case, s.magnitude), placed(sem, case, s.terms))
        if not out.dtype.is_float:
            outs[sem.output].add(expected, None, None)
            known = self._reading("integer-overflow", "saturate")
            if known is not None and x.dtype.kind in "iu" and may_overflow(x, product=product):
                mine = placed(sem, case, saturating(x, product=product, increasing=a.increasing,
                                                    exclusive=a.exclusive)).astype(nt)
                _offer(outs[sem.output], *known, mine, expected)
            return laid
        accumulator = m.DataType.FLOAT16 if float16_accumulation and case.dtype is m.DataType.FLOAT16 \
            else sem.accumulator(case.dtype)
        strict, relaxed = _bounds(s, x, expected, placed_of=lambda v: placed(sem, case, v),
                                  unit=unit_roundoff(accumulator), digits=min(_digits(accumulator), _digits(out.dtype)),
                                  product=product)
        outs[sem.output].add(expected, strict, relaxed)
        return laid


def _bounds(s: Scan, x: np.ndarray, expected: np.ndarray, *, placed_of: Callable[[np.ndarray], np.ndarray],
            unit: float, digits: int, product: bool) -> tuple[np.ndarray, np.ndarray]:
    """The strict and relaxed bounds of a float scan's elements (the module
    docstring), 0 where the result is exact or not finite."""
    magnitude, n = placed_of(s.magnitude), placed_of(s.terms)
    own = gamma(n, _U64) * magnitude  # the oracle's own float64 tally
    worst = gamma(n, unit) * magnitude + own
    probable = gamma_probable(n, unit) * magnitude + own
    step = spacing_above(np.abs(expected.astype(np.float64)) + worst, expected.dtype)
    exact = placed_of(_exact(x, s, digits=digits, product=product, out=expected.dtype))
    zero = exact | ~np.isfinite(expected) | (n == 0)
    strict, relaxed = probable + step, worst + step
    strict[zero] = 0.0
    relaxed[zero] = 0.0
    return strict, relaxed


def _exact(x: np.ndarray, s: Scan, *, digits: int, product: bool, out: np.dtype) -> np.ndarray:
    """Where every tally is exact in any order: sums of integers whose
    magnitudes' sum fits ``digits`` bits; products of powers of two (and
    zeros) within the output type's normal range."""
    finite = x[np.isfinite(x)].astype(np.float64)
    if product:
        mantissa, _ = np.frexp(finite)
        if not np.all((mantissa == 0) | (np.abs(mantissa) == 0.5)):
            return np.zeros(s.tally.shape, dtype=bool)
        info = finfo(out)
        return (s.magnitude == 0) | ((s.magnitude >= float(info.tiny)) & (s.magnitude <= float(info.max)))
    if not np.all(np.mod(finite, 1) == 0):
        return np.zeros(s.tally.shape, dtype=bool)
    return s.magnitude <= 2.0 ** digits


def _digits(dtype: m.DataType) -> int:
    return -int(np.log2(unit_roundoff(dtype)))


def _tells_apart(ambiguity: str, x: np.ndarray) -> bool:
    """Whether the readings of ``ambiguity`` can differ on sequences ``x``."""
    if x.dtype.kind != "f":
        return False
    if ambiguity == "nan-order":
        return bool(np.isnan(x).any())
    zero = x == 0
    return bool((zero & np.signbit(x)).any() and (zero & ~np.signbit(x)).any())


def _differs(values: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Where ``values`` is another value than ``expected``: NaN is NaN, -0 is not +0."""
    if values.dtype.kind != "f":
        return values != expected
    both_nan = np.isnan(values) & np.isnan(expected)
    sign = (values == 0) & (expected == 0) & (np.signbit(values) != np.signbit(expected))
    return ((values != expected) & ~both_nan) | sign


def _offer(out: _Output, ambiguity: m.Ambiguity, reading: m.Reading, mine: np.ndarray, primary: np.ndarray) -> None:
    """The reading's values where they differ from the primary ones, and the ambiguity's marker there."""
    where = np.flatnonzero(_differs(mine.reshape(-1), primary.reshape(-1)))
    if where.size:
        out.offer(marker_name(ambiguity), where, primary.reshape(-1)[where],
                  f"{ambiguity.id}: the primary reading ({ambiguity.primary})")
        out.offer(f"{PREFIX}{ambiguity.id}:{reading.id}", where, mine.reshape(-1)[where],
                  f"{ambiguity.id}: {reading.says}")


@dataclass(frozen=True, slots=True, eq=False)
class _Frozen:
    """One output of the batch, end to end: expected values, bounds (None:
    exact) and alternatives ``(name, flat indices, values, says)``, markers first."""

    expected: np.ndarray
    strict: np.ndarray | None
    relaxed: np.ndarray | None
    alternatives: tuple[tuple[str, np.ndarray, np.ndarray, str], ...]
    signed_zero: bool

    @classmethod
    def of(cls, out: _Output, signed_zero: bool) -> _Frozen:
        expected = np.concatenate(out.expected)
        expected.setflags(write=False)
        bounds = [np.concatenate(b) if b else None for b in (out.strict, out.relaxed)]
        names = sorted(out.alternatives, key=lambda name: ("=" not in name, name))
        alternatives = tuple((name, np.concatenate(out.alternatives[name][0]), np.concatenate(out.alternatives[name][1]),
                              out.alternatives[name][2]) for name in names)
        return cls(expected, bounds[0], bounds[1], alternatives, signed_zero)

    def expect(self, lo: int, hi: int) -> Expectation:
        alternatives = []
        for name, index, values, says in self.alternatives:
            inside = (index >= lo) & (index < hi)
            alternatives.append(Alternative(name, index[inside] - lo, values[inside], Tier.STRICT, says))
        strict = None if self.strict is None else self.strict[lo:hi]
        relaxed = None if self.relaxed is None else self.relaxed[lo:hi]
        return Expectation(self.expected[lo:hi], strict, relaxed, tuple(alternatives), 0, RELAXED_FACTOR,
                           self.signed_zero)


@dataclass(frozen=True, slots=True, eq=False)
class SequenceBatch:
    """`SequenceOracle` bound to a batch: each output end to end, and for
    a scan each element's term count and magnitude (what its bound comes from)."""

    outputs: tuple[_Frozen, ...]
    terms: np.ndarray | None
    magnitude: np.ndarray | None

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        return tuple(out.expect(lo, hi) for out in self.outputs)

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """A scan's element: its term count n and the magnitude S its bound is
        made of; a top-k element depends on a whole sequence: nothing."""
        if self.terms is None or self.magnitude is None:
            return ()
        return (("n", [float(v) for v in self.terms[flat].tolist()]),
                ("S", [float(v) for v in self.magnitude[flat].tolist()]))
