"""The oracle: expected values, error bounds and accepted alternatives, from the
formula alone.

DESIGN.md, "The oracle and the CPU reference are two things": the tree is
evaluated in float64 (exact integers for integer tensors), with extra precision
only where float64 cannot decide the rounding (`formula.refine`) or leaves its
range although the exact value is finite (long double, then mpmath: tanh
written with exp(-2x) is -1 for x = -1e6, not inf/inf), then rounded ONCE to
the target type, round-to-nearest-even.  Alongside the values:

* ``bound_strict``: per element, the absolute error an honest implementation in
  the target type may make (`formula.evaluate`'s running bound), so that a
  cancellation point such as ``Alpha*x + Beta`` near 0 gets its slack and
  nowhere else; ``bound_relaxed`` is a documented multiple of it;
* ``alternatives``: other values a conforming backend may produce where the doc
  is ambiguous: IEEE maxNum/minNum for NaN operands of min/max (accepted as
  PASS, and reported), the limit where the literal formula gives NaN for an
  infinite input (softsign(inf), swish(-inf): accepted as QUALITY_WARNING), the
  formula computed step by step in the target type (and in float32 for half
  types) where that differs from the exact value because an intermediate
  overflows, a divisor cancels or the bound reaches the value itself (Adam's
  ``G * G``, ``1 - pow(Beta1, T)`` for a tiny T, softplus's ``0 * inf``:
  accepted as QUALITY_WARNING, never PASS), the value with subnormal inputs
  flushed (only from a backend that flushes);
* ``ambiguous``: the elements where any of that applies.

Attributes of C type FLOAT are float32 in the struct: a Python float attribute
is rounded to float32 first (0.2 -> 0.20000000298...); an exact text such as
``"1/6"`` is rounded once from its exact value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dmlconform.compare import RELAXED_FACTOR, Alternative, Policy, is_float, ml_dtypes_module
from dmlconform.errors import InputError
from dmlconform.families.elementwise import flushing
from dmlconform.families.elementwise.floatrun import FloatRun, Outcome, Prepared, SharedPass, frozen, has_minmax
from dmlconform.formula.evaluate import Evaluator, Settings, Val, decides, final_statements
from dmlconform.formula.expand import expand
from dmlconform.formula.functions import CONSTANTS, LibraryFunction, is_enum_constant
from dmlconform.formula.refine import rounds_to_integer
from dmlconform.formula.rounding import fraction_to_float, to_float
from dmlconform.formula.tolerance import default_ulp, signed_zero
from dmlconform.formula.tree import Binary, Call, FormulaTree, Name, Unary, names, walk
from dmlconform.limits import MAX_EXACT_ROWS
from dmlconform.spec import model as m
from dmlconform.spec.model import NanPolicy, Overflow, numpy_dtype


@dataclass(frozen=True, slots=True, eq=False)
class OracleResult:
    """Expected values in the target type (read-only) and what to accept.

    ``bound_strict`` is None for integer targets (exact).  ``uncertain`` marks
    elements next to a discontinuity that the implementation's own rounding
    may cross; the relaxed tier accepts anything finite there."""

    expected: np.ndarray
    bound_strict: np.ndarray | None
    ambiguous: np.ndarray
    alternatives: tuple[Alternative, ...]
    ulp: int
    signed_zero: bool
    relaxed_factor: float
    refined: int
    uncertain: np.ndarray | None = None
    notes: tuple[str, ...] = ()
    #: For an integer target: the values with the other `Overflow` (saturated
    #: where ``expected`` wraps, and the reverse), from the same evaluation, so
    #: that the other reading of an overflow costs no second one
    #: (`families.elementwise.readings`).  None for a float target.
    other_overflow: np.ndarray | None = None

    @property
    def bound_relaxed(self) -> np.ndarray | None:
        if self.bound_strict is None:
            return None
        relaxed = self.bound_strict * self.relaxed_factor
        if self.uncertain is not None:
            relaxed = np.where(self.uncertain, np.inf, relaxed)
        return relaxed

    def policy(self, *, flush_subnormals: bool = False) -> Policy:
        """The comparator policy this result implies."""
        return Policy(ulp=self.ulp, relaxed_factor=self.relaxed_factor, signed_zero=self.signed_zero,
                      flush_subnormals=flush_subnormals)


def target_dtype(dtype: Any) -> np.dtype:
    """numpy dtype for a `DataType`, a dtype or a name (``bfloat16`` works)."""
    if isinstance(dtype, m.DataType):
        return numpy_dtype(dtype)
    if isinstance(dtype, str):
        try:
            return np.dtype(dtype)
        except TypeError:  # not a name numpy knows: one of ml_dtypes', imported only then
            return np.dtype(getattr(ml_dtypes_module(), dtype, dtype))
    return np.dtype(dtype)


def evaluate(
    tree: FormulaTree | Prepared,
    inputs: Mapping[str, np.ndarray],
    attrs: Mapping[str, Any] | None = None,
    *,
    dtype: Any,
    nan_policy: NanPolicy = NanPolicy.PROPAGATE,
    overflow: Overflow = Overflow.WRAP,
    flush_subnormals: bool = False,
    output: str | None = None,
    library: Mapping[str, LibraryFunction] | None = None,
    relaxed_factor: float = RELAXED_FACTOR,
    refine: bool = True,
) -> OracleResult:
    """Evaluate ``tree`` on ``inputs`` (keyed by the names the formula reads)
    with ``attrs`` and round once to ``dtype``.  ``tree`` is a parsed tree,
    expanded with ``library`` (the default one when None), or a `Prepared`
    formula (``library`` is then the one it was prepared with).

    ``attrs`` values: a Python float is a FLOAT member (rounded to float32); an
    int an integer member; a `Fraction` or a text such as ``"1/6"`` an exact
    value rounded once to float32; a numpy scalar is taken as it is; a text
    ``DML_...`` an enum constant.  ``flush_subnormals`` adds the values with
    subnormal inputs flushed as FLUSH alternatives.  ``refine`` False skips the
    exact re-evaluation where float64 cannot decide the rounding.  Integer
    results out of range wrap or saturate per ``overflow``."""
    return evaluate_many(tree, inputs, attrs, outputs=(output,), dtype=dtype, nan_policy=nan_policy,
                         overflow=overflow, flush_subnormals=flush_subnormals, library=library,
                         relaxed_factor=relaxed_factor, refine=refine)[0]


def evaluate_many(
    tree: FormulaTree | Prepared,
    inputs: Mapping[str, np.ndarray],
    attrs: Mapping[str, Any] | None = None,
    *,
    outputs: Sequence[str | None],
    dtype: Any,
    nan_policy: NanPolicy = NanPolicy.PROPAGATE,
    overflow: Overflow = Overflow.WRAP,
    flush_subnormals: bool = False,
    library: Mapping[str, LibraryFunction] | None = None,
    relaxed_factor: float = RELAXED_FACTOR,
    refine: bool = True,
) -> tuple[OracleResult, ...]:
    """`evaluate` for several ``outputs`` of one tree on the same inputs,
    attributes and target type: one result per output, in order, each the
    one ``evaluate(..., output=o)`` gives.  What the outputs have in common
    runs once: every statement is evaluated whichever output is asked (the
    tracked float64 evaluation for float targets, the exact one for integer
    targets), so Adam's three outputs cost one such evaluation, not three.
    A float run keeps the shared evaluation of a block until every output
    has used it."""
    out_dtype = target_dtype(dtype)
    formula = tree if isinstance(tree, Prepared) else prepare(tree, library)
    arrays = _check_inputs(formula.free, inputs, attrs or {})
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
    integer = bool(arrays) and all(a.dtype.kind in "iub" for a in arrays.values())
    attr_env = {n: _attribute(n, v, integer) for n, v in (attrs or {}).items()}
    distinct = tuple(dict.fromkeys(outputs))
    with np.errstate(all="ignore"):  # NaN, infinities and overflow are the inputs' and the oracle's business
        if not integer and formula.bitwise and arrays:
            results = _encoding_results(formula, arrays, attr_env, shape, out_dtype, relaxed_factor, distinct)
        elif integer:
            results = _integer_results(formula, arrays, attr_env, shape, out_dtype, overflow, relaxed_factor,
                                       distinct)
        else:
            shared = SharedPass(distinct) if len(distinct) > 1 else None
            runs = [FloatRun(formula, arrays, attr_env, shape, out_dtype, output=o, shared=shared,
                             propagate_nan=nan_policy is NanPolicy.PROPAGATE)
                    for o in distinct]
            if not runs[0].float_target:
                results = [_float_to_integer_result(run, nan_policy, overflow, relaxed_factor, flush=flush_subnormals)
                           for run in runs]
            else:  # every output's tracked pass first: then each kind of second look is one pass for them all
                scanned = [run.scan_blocks(refine=refine) for run in runs]
                for run, (_, _, blocks) in zip(runs, scanned):
                    run.plan(blocks)
                results = [_float_result(formula, run.finish(*s, flush=flush_subnormals), relaxed_factor)
                           for run, s in zip(runs, scanned)]
    found = dict(zip(distinct, results))
    return tuple(found[o] for o in outputs)


def literal(
    tree: FormulaTree | Prepared,
    inputs: Mapping[str, np.ndarray],
    attrs: Mapping[str, Any] | None = None,
    *,
    dtype: Any,
    output: str | None = None,
    library: Mapping[str, LibraryFunction] | None = None,
) -> np.ndarray:
    """The formula computed step by step in ``dtype`` itself (numpy; float32
    for types numpy cannot compute in): what a naive but honest
    implementation produces.  Not an oracle: every step rounds.  The tests
    hold it against `evaluate`'s tolerance, and the oracle offers it where an
    intermediate overflows (the ``target_literal`` alternative)."""
    out_dtype = target_dtype(dtype)
    formula = tree if isinstance(tree, Prepared) else prepare(tree, library)
    arrays = _check_inputs(formula.free, inputs, attrs or {})
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
    attr_env = {n: _attribute(n, v, False) for n, v in (attrs or {}).items()}
    run = FloatRun(formula, arrays, attr_env, shape, out_dtype, output=output, propagate_nan=False)
    values, _, _ = run.run(arrays, track=False, work=run.literal_type)
    return to_float(np.broadcast_to(values, shape).astype(np.float64), out_dtype)


# -- a formula, prepared once ------------------------------------------------


def prepare(tree: FormulaTree, library: Mapping[str, LibraryFunction] | None = None) -> Prepared:
    """``tree`` ready to evaluate, expanded with ``library`` (the default one
    when None)."""
    expanded = expand(tree, library)
    let = {s.target for s in expanded.assignments if s.params is None}
    free = set().union(*(names(s.value) for s in expanded.assignments)) - let - set(CONSTANTS)
    return Prepared(expanded, frozenset(n for n in free if not is_enum_constant(n)), default_ulp(expanded),
                    signed_zero(expanded), decides(expanded), has_minmax(expanded), rounds_to_integer(expanded),
                    final_statements(expanded), on_encodings(expanded))


#: The operations of the formula language that read an element's encoding, not its value.
_BITWISE_OPERATORS = frozenset({"&", "|", "~"})
_BITWISE_CALLS = frozenset({"popcount"})


def bitwise_operations(tree: FormulaTree) -> bool:
    """Whether ``tree`` uses any operation of `on_encodings`'s kind."""
    return any((isinstance(n, (Unary, Binary)) and n.op in _BITWISE_OPERATORS)
               or (isinstance(n, Call) and n.func.lower() in _BITWISE_CALLS)
               for s in tree.assignments for n in walk(s.value))


def on_encodings(tree: FormulaTree) -> bool:
    """Whether every operation of ``tree`` is bitwise (``& | ~``,
    ``popcount``), so that on float tensors it works on their encodings: the
    bitwise pages say "the tensor data type is ignored except for
    determining the width of each element".  A formula that also does
    arithmetic or comparisons has a value semantics and is not one, nor
    is a shift (its count is a value; the shift pages allow no float type)."""
    found = False
    for statement in tree.assignments:
        for node in walk(statement.value):
            if isinstance(node, (Unary, Binary)):
                found = True
                if node.op not in _BITWISE_OPERATORS:
                    return False
            elif isinstance(node, Call):
                found = True
                if node.func.lower() not in _BITWISE_CALLS:
                    return False
            elif not isinstance(node, Name):
                return False
    return found


# -- arguments -------------------------------------------------------------
def _check_inputs(
    free: frozenset[str], inputs: Mapping[str, np.ndarray], attrs: Mapping[str, Any]
) -> dict[str, np.ndarray]:
    missing = sorted(free - set(inputs) - set(attrs))
    if missing:
        raise InputError(
            f"no value for {', '.join(missing)}; give inputs ({', '.join(sorted(set(inputs))) or 'none'}) "
            f"and attributes ({', '.join(sorted(set(attrs))) or 'none'}) for every name the formula reads"
        )
    unknown = sorted(set(inputs) - free)
    if unknown:
        reads = ", ".join(sorted(free))
        raise InputError(f"inputs {', '.join(unknown)} are not read by the formula (it reads {reads})")
    return {n: np.asarray(v) for n, v in inputs.items()}


def _attribute(name: str, value: Any, integer: bool) -> Val:
    """The value an implementation sees for one attribute: a FLOAT member
    rounded to float32, an exact integer, or an enum constant by name
    (`evaluate`'s ``attrs``)."""
    if isinstance(value, str) and is_enum_constant(value):
        return Val(value)
    if isinstance(value, np.generic):
        exact = Fraction(value.item()) if not isinstance(value, np.bool_) else Fraction(int(value))
    elif isinstance(value, bool):
        exact = Fraction(int(value))
    elif isinstance(value, int):
        exact = Fraction(value)
    elif isinstance(value, float):
        exact = Fraction(float(np.float32(value)))
    elif isinstance(value, (Fraction, str)):
        try:
            exact = Fraction(fraction_to_float(Fraction(value), np.float32))
        except ValueError:
            fix = "give a number, a ratio such as '1/6' or a DML_ constant"
            raise InputError(f"attribute {name}={value!r} is not a number; {fix}") from None
    else:
        raise InputError(f"attribute {name}={value!r} has type {type(value).__name__}; give a number")
    if integer:
        return Val(int(exact) if exact.denominator == 1 else exact)
    f = np.float64(float(exact))
    return Val(f, sign=1 if f >= 0 else -1)


def _float_to_integer_result(run: FloatRun, nan_policy: NanPolicy, overflow: Overflow,
                             relaxed_factor: float, *, flush: bool) -> OracleResult:
    """Comparisons and logic on float tensors into an integer type; with
    ``flush``, the values flushed per operation (`flushing`) as well."""
    values, _, _ = run.run(run.arrays, track=False)
    if nan_policy is NanPolicy.PROPAGATE and run.scan().has_nan:
        values[run.mask(np.isnan)] = np.nan
    expected, ambiguous = _float_to_integer(values, run.dtype, overflow)
    other, _ = _float_to_integer(values, run.dtype, _OTHER[overflow])
    alternatives = _flushed_integers(run, expected, nan_policy, overflow) if flush else ()
    return OracleResult(frozen(expected), None, frozen(ambiguous), alternatives, 0, False, relaxed_factor, 0,
                        other_overflow=frozen(other))


def _flushed_integers(run: FloatRun, expected: np.ndarray, nan_policy: NanPolicy,
                      overflow: Overflow) -> tuple[Alternative, ...]:
    """Where a comparison (or other step) flushed per operation gives
    another integer than ``expected``: ``1.4e-45 == 0`` is 1 when the
    comparison flushes its operand (`flushing`)."""
    got = run.flushed_each(minmax="propagate")
    values = got.values
    if nan_policy is NanPolicy.PROPAGATE:
        values[run.mask(np.isnan).reshape(-1)[got.index]] = np.nan
    ints, _ = _float_to_integer(values, run.dtype, overflow)
    keep = ints != expected.reshape(-1)[got.index]
    if not keep.any():
        return ()
    return (Alternative(flushing.NAME, frozen(got.index[keep]), frozen(ints[keep]), flushing.TIER, flushing.REASON),)


def _float_result(formula: Prepared, out: Outcome, relaxed_factor: float) -> OracleResult:
    notes: tuple[str, ...] = ()
    if out.uncertain is not None and out.left_out < int(out.uncertain.sum()):
        notes += ("discontinuity within rounding error at some elements",)
    if out.left_out:
        notes += (f"{out.left_out} elements past the exact evaluation's budget of {MAX_EXACT_ROWS} distinct "
                  "rows of operands: any finite value accepted there (relaxed tier)",)
    return OracleResult(
        frozen(out.expected), frozen(out.bound), frozen(out.ambiguous), out.alternatives,
        formula.ulp, formula.signed_zero, relaxed_factor, out.refined,
        None if out.uncertain is None else frozen(out.uncertain), notes,
    )


# -- integer targets -------------------------------------------------------
def _integer_results(formula: Prepared, arrays: dict[str, np.ndarray], attrs: dict[str, Val],
                     shape: tuple[int, ...], dtype: np.dtype, overflow: Overflow, relaxed_factor: float,
                     outputs: tuple[str | None, ...]) -> list[OracleResult]:
    env: dict[str, Any] = {n: Val(_python_ints(a)) for n, a in arrays.items()}
    env.update(attrs)
    widths = {_width(a.dtype) for a in arrays.values()}  # the inputs' encoding (popcount of int16 into uint8)
    bits = widths.pop() if len(widths) == 1 else _width(dtype)
    ev = Evaluator(env, Settings(integer=True, track=False, bits=bits))
    vals = ev.run_many(formula.expanded, outputs, finals=formula.finals)
    return [_integer_result(ev, val, shape, dtype, overflow, relaxed_factor) for val in vals]


def _width(dtype: np.dtype) -> int | None:
    """Bits of an integer type's encoding (None for other types)."""
    if dtype.kind not in "iu":
        return None
    return 4 if dtype.name in ("int4", "uint4") else dtype.itemsize * 8


def _encoding_results(formula: Prepared, arrays: dict[str, np.ndarray], attrs: dict[str, Val],
                      shape: tuple[int, ...], dtype: np.dtype, relaxed_factor: float,
                      outputs: tuple[str | None, ...]) -> list[OracleResult]:
    """A bitwise formula (`on_encodings`) on float tensors: each read as the
    unsigned integer of its encoding, the exact integer result written as
    the output's encoding.  Every bit counts: no error, and the sign of zero
    and the NaN encodings are the result's own."""
    as_bits = {n: a.view(f"u{a.dtype.itemsize}") for n, a in arrays.items()}
    int_dtype = dtype if dtype.kind in "iu" else np.dtype(f"u{dtype.itemsize}")
    results = _integer_results(formula, as_bits, attrs, shape, int_dtype, Overflow.WRAP, relaxed_factor, outputs)
    if int_dtype is dtype:
        return results
    return [OracleResult(frozen(np.ascontiguousarray(r.expected).view(dtype)), frozen(np.zeros(shape)),
                         frozen(np.zeros(shape, bool)), (), 0, True, relaxed_factor, 0) for r in results]


def _integer_result(ev: Evaluator, val: Val, shape: tuple[int, ...], dtype: np.dtype, overflow: Overflow,
                    relaxed_factor: float) -> OracleResult:
    raw = np.broadcast_to(np.asarray(ev.num(val.v), dtype=object), shape)
    if is_float(dtype):
        expected = to_float(raw.astype(np.float64), dtype)
        return OracleResult(frozen(expected), frozen(np.zeros(shape)), frozen(np.zeros(shape, bool)), (),
                            0, False, relaxed_factor, 0)
    ints = np.frompyfunc(int, 1, 1)(raw)
    whole = np.equal(ints, raw, dtype=bool)  # int(x) == x: an integer, or a fraction with denominator 1
    expected = _fit(ints, dtype, overflow)
    other = _fit(ints, dtype, _OTHER[overflow])
    return OracleResult(frozen(expected), None, frozen(~whole), (), 0, False, relaxed_factor, 0,
                        other_overflow=frozen(other))


#: Each `Overflow` and the other one.
_OTHER = {Overflow.WRAP: Overflow.SATURATE, Overflow.SATURATE: Overflow.WRAP}


#: numpy's integer types, whose elements ``astype(object)`` turns into Python ints.
_NATIVE_INTS = frozenset(np.typecodes["AllInteger"])
_INT64 = np.iinfo(np.int64)


def _python_ints(a: np.ndarray) -> np.ndarray:
    """``a`` as an object array of Python ints (booleans as 0 and 1)."""
    if a.dtype.char in _NATIVE_INTS:
        return a.astype(object)
    return np.frompyfunc(int, 1, 1)(a)


def _fit(ints: np.ndarray, dtype: np.dtype, overflow: Overflow) -> np.ndarray:
    """Python integers into ``dtype``: saturated or wrapped.  Where every
    value fits in int64 (the usual case) numpy does it: a clip, and a cast
    that keeps the low bits (two's complement), which is the wrap."""
    if dtype.char in _NATIVE_INTS:
        try:
            wide = ints.astype(np.int64)
        except OverflowError:  # a value beyond int64: Python integers below
            pass
        else:
            if overflow is Overflow.SATURATE:
                native = np.iinfo(dtype)
                wide = np.clip(wide, max(int(native.min), _INT64.min), min(int(native.max), _INT64.max))
            return wide.astype(dtype)
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    lo, hi = (int(info.min), int(info.max)) if info else (0, 1)
    if overflow is Overflow.SATURATE:
        fitted = np.minimum(np.maximum(ints, lo), hi)
    else:
        span = hi - lo + 1
        fitted = np.mod(ints - lo, span) + lo
    return np.asarray(fitted.astype(object), dtype=object).astype(dtype)


def integer_from_float(values: np.ndarray, dtype: Any, overflow: Overflow) -> np.ndarray:
    """Float ``values`` in an integer ``dtype`` as a C conversion makes them:
    toward zero, NaN as 0, out-of-range values wrapped or saturated per
    ``overflow`` (an integer reading computed in float: `families.elementwise.readings`)."""
    return _float_to_integer(np.asarray(values, dtype=np.float64), target_dtype(dtype), overflow)[0]


def _float_to_integer(values: np.ndarray, dtype: np.dtype, overflow: Overflow) -> tuple[np.ndarray, np.ndarray]:
    """Float results (comparisons, logical ops on float tensors) into an
    integer type: truncated toward zero; NaN gives 0; non-integral or NaN
    results are ambiguous.  Exact in float64 for types up to 32 bits; wider
    ones go through Python integers."""
    finite = np.isfinite(values)
    truncated = np.where(finite, np.trunc(values), 0.0)
    whole = finite & (truncated == values)
    if dtype.itemsize > 4:
        ints = np.asarray(np.frompyfunc(int, 1, 1)(truncated), dtype=object)
        return _fit(ints, dtype, overflow), ~whole
    info = np.iinfo(dtype)
    lo, hi = float(info.min), float(info.max)
    if overflow is Overflow.SATURATE:
        fitted = np.clip(truncated, lo, hi)
    else:
        fitted = np.mod(truncated - lo, hi - lo + 1) + lo
    return fitted.astype(dtype), ~whole
