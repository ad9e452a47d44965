"""The ambiguities extract can find in a spec: what the doc leaves undecided
that the formula and the support tables show (docs/ambiguities.md).

Issue #22 item 1: an ambiguity is data.  Four kinds are found here, each
with every reading the harness can evaluate; the first reading listed is
the one the spec's own settings already take (the primary):

* ``nan``: a branch condition reads an input that a branch's value does
  not: taken literally, NaN fails the comparison and that branch turns it
  into a number; IEEE propagation gives NaN (DML123 found the plainest case);
* ``branch-overlap``: two piecewise branches hold together with different
  values (DML122), so the order they are tested in decides;
* ``integer-float-attribute``: the table allows integer outputs and the
  formula reads a FLOAT attribute: exact arithmetic, float64, float32 or the
  attribute converted to the integer type first all exist;
* ``integer-overflow``: integer outputs and arithmetic that can leave the
  type's range: wrap or saturate;
* ``integer-division-by-zero``: integer outputs and a division by an input
  tensor, which may be 0 (C and ONNX leave it undefined; AArch64 gives a
  quotient of 0, numpy a result of 0, CUDA every bit set);
* ``infinite-divisor``: a float ``a - b * floor(a / b)`` (or trunc) with b
  = +-inf: the formula gives NaN (inf * 0), C's fmod gives a;
* ``ieee-pow``: a result ``pow(x, y)`` on float tensors: IEEE 754's pow has
  its own special values (pow(-inf, 0.5) = +inf, pow(-1, inf) = 1,
  pow(NaN, 0) = 1), where the real x^y is NaN or propagates the NaN;
* ``float-to-integer-conversion``: integer outputs computed through float
  (a FLOAT attribute, an integer pow in double): a float out of the type's
  range converts as C leaves undefined (wrap, saturate, or x86's "integer
  indefinite").

A signed zero where the doc is silent needs no entry: the comparator takes
either sign unless the doc speaks of it (`formula.tolerance.signed_zero`).
What no rule can find is written by hand in the reviewed overlay
(`spec.load.read_overlay`).  Nothing here does I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from dmlconform.formula import Parsed, classified, expr_text
from dmlconform.formula.boundaries import overlaps
from dmlconform.formula.tree import (
    Binary,
    Branch,
    Call,
    Conditional,
    FormulaTree,
    Name,
    Node,
    Piecewise,
    Unary,
    children,
    names,
    walk,
)
from dmlconform.spec import model as m

#: Operators whose result can leave an integer type's range.
_ARITHMETIC = frozenset({"+", "-", "*", "/", "^", "<<"})


def derive(spec: m.Spec, *, source: str) -> tuple[m.Ambiguity, ...]:
    """The ambiguities of ``spec`` that its formula and tables show, each
    placed at ``source`` (``doc path:line`` of the formula); none where the
    formula does not parse or bind."""
    parsed = _parsed(spec)
    if parsed is None:
        return ()
    checks = (_nan, _overlap, _integer_float, _overflow, _division_by_zero, _infinite_divisor, _ieee_pow,
              _float_to_integer)
    return tuple(found for check in checks for found in check(spec, parsed, source))


def _parsed(spec: m.Spec) -> Parsed | None:
    if not spec.formula.evaluable or not spec.formula.parsed:
        return None
    tensors = spec.tensors
    bound = classified(spec.formula.parsed, tuple(f.name for f in spec.fields),
                       tuple(f.name for f in tensors if f.role is m.TensorRole.INPUT),
                       tuple(f.name for f in tensors if f.role is m.TensorRole.OUTPUT))
    return bound if isinstance(bound, Parsed) else None


def _types(spec: m.Spec, role: m.TensorRole) -> set[m.DataType]:
    tensors = {f.name for f in spec.tensors if f.role is role}
    return {t for table in spec.support for row in table.rows if row.tensor in tensors for t in row.dtypes}


def nan_dropping(tree: FormulaTree, inputs: frozenset[str]) -> tuple[str, ...]:
    """The values (as text) of the branches that do not read an input the
    choice reads (in a condition or another branch): a NaN there, failing
    every comparison or simply not read, becomes a number (PRelu's ``x``
    for a NaN slope at x >= 0)."""
    out: list[str] = []
    for a in tree.assignments:
        for node in walk(a.value):
            if isinstance(node, Piecewise):
                read: frozenset[str] = frozenset().union(
                    *(names(b.cond) for b in node.branches if b.cond is not None),
                    *(names(b.value) for b in node.branches)) & inputs
                out.extend(expr_text(b.value) for b in node.branches if read - names(b.value))
            elif isinstance(node, Conditional):
                read = (names(node.cond) | names(node.then) | names(node.otherwise)) & inputs
                out.extend(expr_text(v) for v in (node.then, node.otherwise) if read - names(v))
    return tuple(dict.fromkeys(out))


def _is_pow(node: object) -> bool:
    """``pow(a, b)`` or ``a ^ b``: C's and IEEE 754's pow give a number for
    some NaN arguments (``pow(NaN, 0) = 1``), where NaN-in-NaN-out does not."""
    return ((isinstance(node, Call) and node.func.lower() == "pow")
            or (isinstance(node, Binary) and node.op == "^"))


def _nan(spec: m.Spec, parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    if not any(t.is_float for t in _types(spec, m.TensorRole.INPUT) | _types(spec, m.TensorRole.OUTPUT)):
        return
    dropping = nan_dropping(parsed.tree, frozenset(name for name, _ in parsed.inputs))
    if not dropping:
        return
    values = ", ".join(dropping)
    literal = f"NaN fails every comparison and the formula taken literally gives its branch's value ({values}), like ONNX"
    question = f"What does a NaN input give, where a branch that it reaches gives {values}?"
    readings: dict[enum.Enum, m.Reading] = {
        m.NanPolicy.PROPAGATE: m.Reading("propagate", "a NaN input gives NaN (IEEE), whichever branch",
                                         m.NanPolicy.PROPAGATE),
        m.NanPolicy.FORMULA: m.Reading("formula", literal, m.NanPolicy.FORMULA),
    }
    primary = spec.formula.nan_policy
    yield m.Ambiguity("nan", m.AmbiguityKind.NAN, question, source,
                      _primary_first(readings, primary), readings[primary].id)


def _overlap(spec: m.Spec, parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    found = [o for o in overlaps(parsed.tree) if not o.same_value]
    if not found:
        return
    o = found[0]
    at = ", ".join(f"{k}={v:g}" for k, v in o.attrs + o.inputs)
    question = (f"Which branch wins where branches {o.first + 1} ({o.first_cond}) and {o.second + 1} "
                f"({o.second_cond}) both hold (e.g. {at})?")
    readings = (
        m.Reading("first-match", "the branch the doc lists first wins (conditions tested in doc order)",
                  m.BranchOrder.FIRST),
        m.Reading("last-match", "the later branch wins (conditions tested in the other order)", m.BranchOrder.LAST),
    )
    yield m.Ambiguity("branch-overlap", m.AmbiguityKind.BRANCH_OVERLAP, question, source, readings, "first-match")


def _integer_float(spec: m.Spec, parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    if not any(not t.is_float for t in _types(spec, m.TensorRole.OUTPUT)):
        return
    floats = [f.name for f in spec.attributes if f.c_type == "FLOAT" and f.name in parsed.attributes]
    if not floats:
        yield from _pow_arithmetic(parsed, source)
        return
    shown = ", ".join(floats)
    readings = (
        m.Reading("exact", "exact arithmetic, the result truncated toward zero", m.IntegerArithmetic.EXACT),
        m.Reading("float64", "computed in double, converted toward zero", m.IntegerArithmetic.FLOAT64),
        m.Reading("float32", "computed in float, converted toward zero", m.IntegerArithmetic.FLOAT32),
        m.Reading("attribute-to-integer", f"{shown} converted to the integer type first (toward zero), then "
                                          "integer arithmetic", m.IntegerArithmetic.ATTRIBUTE_TO_INTEGER),
    )
    yield m.Ambiguity("integer-float-attribute", m.AmbiguityKind.INTEGER_FLOAT_ATTRIBUTE,
                      f"How do integer tensors meet the FLOAT attribute{'s' if len(floats) > 1 else ''} {shown}?",
                      source, readings, "exact")


def _pow_arithmetic(parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    """An integer pow of two tensors: exact, or C's pow in double converted
    back (onnxruntime: 3^39 in INT64 gives 4052555153018976256, 47^97 in
    INT32 gives INT32_MIN)."""
    if not _integer_pow(parsed):
        return
    readings = (
        m.Reading("exact", "exact integer arithmetic", m.IntegerArithmetic.EXACT),
        m.Reading("float64", "C's pow in double, converted toward zero, as onnxruntime computes it",
                  m.IntegerArithmetic.FLOAT64),
    )
    yield m.Ambiguity("integer-pow", m.AmbiguityKind.INTEGER_FLOAT_ATTRIBUTE,
                      "Is an integer pow computed exactly, or in double and converted back?", source, readings, "exact")


def _overflow(spec: m.Spec, parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    if not any(not t.is_float for t in _types(spec, m.TensorRole.OUTPUT)) or not _can_overflow(parsed.tree):
        return
    readings: dict[enum.Enum, m.Reading] = {
        m.Overflow.WRAP: m.Reading("wrap", "wraps modulo 2^bits (two's complement)", m.Overflow.WRAP),
        m.Overflow.SATURATE: m.Reading("saturate", "saturates to the type's minimum or maximum",
                                       m.Overflow.SATURATE),
    }
    primary = spec.formula.integer_overflow
    yield m.Ambiguity("integer-overflow", m.AmbiguityKind.INTEGER_OVERFLOW,
                      "What does an integer result out of the type's range give?", source,
                      _primary_first(readings, primary), readings[primary].id)


def _can_overflow(tree: FormulaTree) -> bool:
    """Whether a value the formula gives (conditions aside) does arithmetic
    that can leave an integer range: a sum, a product, a negation of a name,
    abs (of the minimum), pow."""
    for a in tree.assignments:
        for node in _values(a.value):
            if isinstance(node, Binary) and node.op in _ARITHMETIC:
                return True
            if isinstance(node, Unary) and node.op == "-" and names(node.operand):
                return True
            if isinstance(node, Call) and node.func in ("abs", "pow"):
                return True
    return False


@dataclass(frozen=True, slots=True)
class Modulus:
    """A formula whose result is ``dividend - divisor * rounding(dividend /
    divisor)`` (the modulus pages), names of input tensors."""

    dividend: str
    divisor: str
    rounding: str


def _result(tree: FormulaTree) -> Node | None:
    """The value of a one-statement formula: the result itself (a reading
    that replaces a result needs no other statement to follow)."""
    return tree.assignments[0].value if len(tree.assignments) == 1 and len(tree.statements) == 1 else None


def modulus(tree: FormulaTree) -> Modulus | None:
    """The formula as a `Modulus`, or None where it is not one."""
    value = _result(tree)
    if not (isinstance(value, Binary) and value.op == "-" and isinstance(value.left, Name)):
        return None
    product = value.right
    if not (isinstance(product, Binary) and product.op == "*" and isinstance(product.left, Name)
            and isinstance(product.right, Call) and product.right.func in ("floor", "trunc")
            and len(product.right.args) == 1):
        return None
    quotient = product.right.args[0]
    a, b = value.left.id, product.left.id
    if quotient != Binary("/", Name(a), Name(b)):
        return None
    return Modulus(a, b, product.right.func)


def integer_divisors(tree: FormulaTree, inputs: frozenset[str]) -> tuple[str, ...]:
    """The inputs (names) that a value of the formula divides by: where one
    is 0 an integer division has no value.  Only a one-statement formula
    (the readings replace its result where a divisor is 0)."""
    value = _result(tree)
    if value is None:
        return ()
    found = [n.right.id for n in _values(value)
             if isinstance(n, Binary) and n.op == "/" and isinstance(n.right, Name) and n.right.id in inputs]
    return tuple(dict.fromkeys(found))


def integer_dividend(tree: FormulaTree, inputs: frozenset[str]) -> str | None:
    """The input a one-statement formula divides by an input, where it
    divides once and that dividend is an input (``a`` of ``a / b``)."""
    value = _result(tree)
    found = [n.left.id for n in (_values(value) if value is not None else ())
             if isinstance(n, Binary) and n.op == "/" and isinstance(n.right, Name) and n.right.id in inputs
             and isinstance(n.left, Name) and n.left.id in inputs]
    return found[0] if len(found) == 1 else None


def pow_arguments(tree: FormulaTree) -> tuple[str, str] | None:
    """(base, exponent), the names of a formula whose result is ``pow(x, y)``
    (or ``x ^ y``); None otherwise."""
    value = _result(tree)
    if isinstance(value, Call) and _is_pow(value) and len(value.args) == 2:
        base, exponent = value.args
    elif isinstance(value, Binary) and _is_pow(value):
        base, exponent = value.left, value.right
    else:
        return None
    if isinstance(base, Name) and isinstance(exponent, Name):
        return base.id, exponent.id
    return None


def _division_by_zero(spec: m.Spec, parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    if not any(not t.is_float for t in _types(spec, m.TensorRole.OUTPUT)):
        return
    divisors = integer_divisors(parsed.tree, frozenset(name for name, _ in parsed.inputs))
    if not divisors:
        return
    bare = isinstance(_result(parsed.tree), Binary) and _result(parsed.tree).op == "/"  # type: ignore[union-attr]
    readings = [
        m.Reading("quotient-zero", "a / 0 is 0, as AArch64's SDIV and UDIV give (a - b * floor(a / b) then gives a)",
                  m.DivisionByZero.QUOTIENT_ZERO),
        m.Reading("zero", "the result is 0, as numpy's integer // and % give", m.DivisionByZero.ZERO),
        m.Reading("all-ones", "the result has every bit set (-1, or the unsigned maximum), as torch on CUDA gives "
                              "(2^32 - 1 for a 64-bit a in [0, 2^32): CUDA's 32-bit path)", m.DivisionByZero.ALL_ONES),
    ]
    if bare:  # a / b itself: a quotient of 0 is a result of 0
        del readings[1]
    shown = ", ".join(divisors)
    yield m.Ambiguity("integer-division-by-zero", m.AmbiguityKind.DIVISION_BY_ZERO,
                      f"What does an integer division by {shown} = 0 give (C and ONNX leave it undefined)?",
                      source, tuple(readings), "quotient-zero")


def _infinite_divisor(spec: m.Spec, parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    found = modulus(parsed.tree)
    if found is None or not any(t.is_float for t in _types(spec, m.TensorRole.OUTPUT)):
        return
    fmod = ("C's fmod(a, +-inf) = a, the floor modulus adding b where a and b differ in sign (a, or b), "
            "as numpy, torch and Python give" if found.rounding == "floor"
            else "C's fmod(a, +-inf) = a, as numpy, torch and onnxruntime give")
    readings = (
        m.Reading("formula", f"the formula step by step: {found.divisor} * {found.rounding}(a / +-inf) is inf * 0, "
                             "NaN (or +-inf where the rounded quotient is -1)", m.InfiniteDivisor.FORMULA),
        m.Reading("fmod", fmod, m.InfiniteDivisor.FMOD),
    )
    yield m.Ambiguity("infinite-divisor", m.AmbiguityKind.INFINITE_DIVISOR,
                      f"What does a finite {found.dividend} give for {found.divisor} = +-inf?", source, readings,
                      "formula")


def _ieee_pow(spec: m.Spec, parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    args = pow_arguments(parsed.tree)
    if args is None or not any(t.is_float for t in _types(spec, m.TensorRole.OUTPUT)):
        return
    base, exponent = args
    readings = (
        m.Reading("formula", f"the real {base}^{exponent}: NaN for a negative base to a non-integer power, a NaN "
                             "input gives NaN, limits elsewhere", m.IeeePow.FORMULA),
        m.Reading("ieee-754", "IEEE 754 pow (9.2.1), as C, numpy, torch and onnxruntime give: pow(-inf, 0.5) = +inf, "
                              "pow(-0, -3) = -inf, pow(-1, +-inf) = 1, pow(NaN, 0) = pow(1, NaN) = 1",
                  m.IeeePow.IEEE_754),
    )
    yield m.Ambiguity("ieee-pow", m.AmbiguityKind.IEEE_POW,
                      f"What does pow({base}, {exponent}) give at IEEE 754's special values?", source, readings,
                      "formula")


def _float_to_integer(spec: m.Spec, parsed: Parsed, source: str) -> Iterator[m.Ambiguity]:
    if not any(not t.is_float for t in _types(spec, m.TensorRole.OUTPUT)):
        return
    floats = [f.name for f in spec.attributes if f.c_type == "FLOAT" and f.name in parsed.attributes]
    if not floats and not _integer_pow(parsed):
        return
    readings = (
        m.Reading("as-overflow", "as an exact result out of range: the integer-overflow reading, wrap (modulo 2^bits) "
                                 "or saturate (CUDA's cvt.rzi; NaN gives 0)", m.FloatToInteger.AS_OVERFLOW),
        m.Reading("indefinite", "x86's scalar cvttss2si/cvttsd2si: out of int32's range (int64's for 64-bit types and "
                                "UINT32) or NaN gives its minimum, narrower types keep its low bits (0); UINT64 by a "
                                "sign bias (2^63 below -2^63 and for NaN, 0 from 2^64), as onnxruntime, torch and "
                                "numpy give on x86", m.FloatToInteger.INDEFINITE),
        m.Reading("wide-saturate", "saturated to int32 (int64 for 64-bit types and UINT32), NaN to 0, narrower types "
                                   "keep its low bits (3e38 gives -1 in INT8), as ARM's scalar FCVTZS and torch on "
                                   "CUDA give", m.FloatToInteger.WIDE_SATURATE),
        m.Reading("x86-vector", "x86's SSE2/AVX2 loops (gcc -O3, numpy's contiguous casts): UINT32 through cvttps2dq/"
                                "cvttpd2dq with a sign bias, 2^31 below -2^31 and for NaN, 0 from 2^32; other types as "
                                "indefinite", m.FloatToInteger.X86_VECTOR),
        m.Reading("unsigned-indefinite", "AVX-512's vcvttsd2usi/vcvttpd2udq: out of UINT32's (UINT64's) range or NaN "
                                         "gives 2^bits - 1; other types as indefinite",
                  m.FloatToInteger.UNSIGNED_INDEFINITE),
        m.Reading("arm-unsigned", "ARM's scalar FCVTZU for unsigned types: saturated to uint32 (uint64), NaN to 0, "
                                  "narrower types keep its low bits (70000 gives 112 in UINT8); signed types as "
                                  "wide-saturate", m.FloatToInteger.ARM_UNSIGNED),
        m.Reading("arm-vector", "ARM's NEON loops: saturated on lanes of the source's width (int64 for double, "
                                "unsigned for a target of that width), narrower types keep the low bits (double 3e9 "
                                "gives -1294967296 in INT32)", m.FloatToInteger.ARM_VECTOR),
    )
    yield m.Ambiguity("float-to-integer-conversion", m.AmbiguityKind.FLOAT_TO_INTEGER,
                      "What does a value computed in float give where it is out of the integer type's range?",
                      source, readings, "as-overflow")


def _integer_pow(parsed: Parsed) -> bool:
    """Whether the formula is a pow of two input tensors: C's pow computes it in double."""
    args = pow_arguments(parsed.tree)
    return args is not None and {args[0], args[1]} <= {name for name, _ in parsed.inputs}


def value_names(tree: FormulaTree) -> frozenset[str]:
    """The names the formula's values read (conditions aside): an attribute
    there is in the arithmetic of a result."""
    return frozenset(n.id for a in tree.assignments for n in _values(a.value) if isinstance(n, Name))


def meeting_groups(tree: FormulaTree) -> tuple[frozenset[str], ...]:
    """Names that meet in one branch (its condition and value), one
    conditional, or one term of a sum: where two attributes together decide
    a result (`families.elementwise.cases` varies such pairs together)."""
    groups: list[frozenset[str]] = []
    for a in tree.assignments:
        for node in walk(a.value):
            if isinstance(node, Piecewise):
                groups.extend(names(b.value) | (names(b.cond) if b.cond is not None else frozenset())
                              for b in node.branches)
            elif isinstance(node, Conditional):
                groups.append(names(node))
        if not isinstance(a.value, Piecewise):
            groups.extend(names(term) for term in _terms(a.value))
    return tuple(dict.fromkeys(groups))


def _terms(node: Node) -> Iterator[Node]:
    """The terms of a sum or difference (the node itself otherwise)."""
    if isinstance(node, Binary) and node.op in ("+", "-"):
        yield from _terms(node.left)
        yield from _terms(node.right)
    else:
        yield node


def _values(node: Node) -> Iterator[Node]:
    """`walk` without the conditions of branches and conditionals."""
    yield node
    if isinstance(node, Piecewise):
        for b in node.branches:
            yield from _values(b.value)
    elif isinstance(node, Conditional):
        yield from _values(node.then)
        yield from _values(node.otherwise)
    elif not isinstance(node, Branch):
        for child in children(node):
            yield from _values(child)


def _primary_first(readings: Mapping[enum.Enum, m.Reading], primary: enum.Enum) -> tuple[m.Reading, ...]:
    """The readings, the primary one first."""
    return (readings[primary],) + tuple(r for key, r in readings.items() if key is not primary)
