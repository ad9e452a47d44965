"""What every operator family's oracle gives the runner.

DESIGN.md "Operator families": an oracle per family (element-wise formula,
contraction, index map, window, normalization, interpolation, ...), behind
one protocol, so that the runner, the comparator and the reports never care
which family an operator belongs to.  docs/architecture.md shows the whole
data flow and how to add a family.

The runner hands a family a *batch*: cases of one operator with the same
tensor names, data types and attributes (`runner` decides which).  The
family answers, per output tensor, what it expects over the batch's cases
*end to end*: output j of case 0 in C order of its sizes, then output j of
case 1, and so on.  The runner flattens the backend's outputs the same way,
compares a range of elements at a time (so that no large case needs all of
its temporaries at once) and turns the comparison into one result per case
(`judge`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.compare import Alternative, Tier, finfo
from dmlconform.spec import model as m
from dmlconform.spec.model import numpy_dtype


@dataclass(frozen=True, slots=True, eq=False)
class Expectation:
    """What a family expects of one output over a range [lo, hi) of its
    elements end to end: values in the output's type (flat, read-only), the
    absolute error an honest implementation may make at each element
    (``bound_strict``; None: none beyond ``ulp``), the relaxed tier's bound
    where it is not ``relaxed_factor`` times the strict one
    (``bound_relaxed``, e.g. infinite next to a discontinuity), other values
    to accept (`Alternative`, flat indices counted from ``lo``), the ULP
    budget the family proposes (a spec's ``tolerance`` and a run's
    ``--tolerances`` take precedence, in the runner) and whether the sign
    of zero counts.  ``bias_scale``, where a family gives it, is one
    rounding's error at each element: the judge then checks the whole
    output for a systematic bias of its errors (`bias`)."""

    expected: np.ndarray
    bound_strict: np.ndarray | None
    bound_relaxed: np.ndarray | None
    alternatives: tuple[Alternative, ...]
    ulp: int
    relaxed_factor: float
    signed_zero: bool
    bias_scale: np.ndarray | None = None


class BatchExpectation(Protocol):
    """A family's oracle bound to one batch (`FamilyOracle.bind`)."""

    def expect(self, lo: int, hi: int) -> tuple[Expectation, ...]:
        """Per output, in the cases' output order, the expectation over its
        elements [lo, hi) end to end (an output with fewer elements gets the
        part of the range it has)."""
        ...

    def inputs_at(self, output: int, flat: np.ndarray) -> tuple[tuple[str, list[float]], ...]:
        """The input values a person should see beside elements ``flat``
        (end-to-end indices) of output ``output``, by input name: for an
        element-wise operator the inputs at the same place; a family whose
        elements depend on many inputs gives what identifies them, or
        nothing."""
        ...


def compare_elements(bound: BatchExpectation, most: int) -> int:
    """The elements the judge asks ``bound`` for at a time: at most
    ``most``, fewer where its family asks so by a class attribute
    ``compare_elements`` (an oracle of many float64 passes a block, whose
    arrays the caches should hold between them: the normalization family's,
    `plan.CACHED_COMPARE_ELEMENTS`)."""
    return min(most, int(getattr(bound, "compare_elements", most)))


class FamilyOracle(Protocol):
    """The oracle of one operator (one spec), made once per run by its
    family (`families.Oracles`)."""

    def bind(self, cases: Sequence[Case], *, flush_subnormals: bool,
             float16_accumulation: bool = False) -> BatchExpectation:
        """The expectations of ``cases`` (a batch: one operator, the same
        tensors, data types and attributes), for a backend that flushes
        subnormals or not, and that declares it sums FLOAT16 tensors in
        FLOAT16 or not (`BackendInfo.float16_accumulation`: the
        contraction family's bound)."""
        ...


def spacing_above(x: np.ndarray, nt: np.dtype) -> np.ndarray:
    """One spacing of the output type ``nt`` at ``x`` >= 0 (float64), or
    above, in ``nt``: a bound's room for the result's rounding to the output
    type and the expected value's (rounding to nearest never lands in a
    lower binade).  From the type's largest value on, infinite (no finite
    value of the type is farther): a bound past the type's range stays a
    bound, never the NaN of infinity's spacing, which FAILed every value."""
    with np.errstate(over="ignore", invalid="ignore"):
        step = np.asarray(x).astype(nt)  # past the range: infinite
        if step.dtype in _BINADE and not np.signbit(step).any():
            return _binade_spacing(step)
        np.spacing(step, out=step)
    np.copyto(step, np.inf, where=np.isnan(step))  # infinity's spacing (and a NaN x's: no family keeps a bound there)
    return step


#: IEEE binary types by their bits: the unsigned view, the exponent's mask and 2^-(mantissa bits).
_BINADE = {np.dtype(np.float16): (np.uint16, 0x7C00, 2.0 ** -10),
           np.dtype(np.float32): (np.uint32, 0x7F800000, 2.0 ** -23),
           np.dtype(np.float64): (np.uint64, 0x7FF0000000000000, 2.0 ** -52)}


def _binade_spacing(step: np.ndarray) -> np.ndarray:
    """`spacing_above`'s step of values >= 0 (or NaN) of an IEEE binary
    type, in place: the binade's power of 2 (the exponent's bits alone)
    times 2^-mantissa, at least the smallest subnormal; infinite from the
    largest value on and at NaN.  What ``np.spacing`` gives there (NaN
    made infinite), a few integer and float passes instead of its ten
    times their cost (a large normalization's 2^24 elements twice)."""
    view, mask, scale = _BINADE[step.dtype]
    info = np.finfo(step.dtype)
    # the largest value's spacing (and infinity's, NaN's) is infinite; a mask of them only where the largest
    # element (a NaN: NaN) says there is one, one reduction instead of two passes and a mask over all of them
    top = ~(step < info.max) if step.size and not step.max() < info.max else None
    bits = step.view(view)
    bits &= view(mask)
    step *= scale
    np.maximum(step, info.smallest_subnormal, out=step)
    if top is not None:
        np.copyto(step, np.inf, where=top)
    return step


# -- readings: the alternatives that name a reading of an ambiguity -----------------------

#: The name of every reading's alternative starts with it: ``reading:<ambiguity>:<reading>``
#: (`judge` counts them).
PREFIX = "reading:"


def marker_name(ambiguity: m.Ambiguity) -> str:
    """``reading:<ambiguity>=<primary reading>``: the marker's name."""
    return f"{PREFIX}{ambiguity.id}={ambiguity.primary}"


def sorted_unique(index: np.ndarray) -> np.ndarray:
    """``np.unique(index)``: ``index`` itself where it is strictly
    increasing already (an alternative's, from `np.flatnonzero`), at the
    cost of one comparison pass; numpy's unique hashes or sorts every
    element, seconds for the 2^24 of a large case's reading."""
    if index.size < 2 or bool(np.all(index[1:] > index[:-1])):
        return index
    return np.unique(index)


def marker(ambiguity: m.Ambiguity, alternatives: list[Alternative], expected: np.ndarray) -> Alternative:
    """The primary values at every element where a reading of ``ambiguity``
    (``alternatives``) gives another value.  It accepts nothing new (its
    values are the expected ones); it is there to be counted: placed before
    every other alternative, the elements it finds already passing are
    those that took the primary reading (`judge`, `report.readings`)."""
    indices = [alt.index for alt in alternatives]
    index = sorted_unique(indices[0] if len(indices) == 1 else np.concatenate(indices))
    if expected.ndim == 1:  # all of them: in order; else np.take, half the time of indexing by an array
        values = expected if index.size == expected.size else np.take(expected, index)
    else:
        values = expected[index]
    return marker_at(ambiguity, index, values)


def marker_at(ambiguity: m.Ambiguity, index: np.ndarray, values: np.ndarray) -> Alternative:
    """`marker` where its (sorted, unique) ``index`` and the primary ``values`` there are known already."""
    return Alternative(marker_name(ambiguity), index, values, Tier.STRICT,
                       f"{ambiguity.id}: the primary reading ({ambiguity.primary})")


def kept(mask: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The flat indices where the flat ``mask`` holds, and each of ``arrays``
    (flat, of its size) there; where it holds everywhere, the arrays
    themselves (no copy: a large case's reading that differs from the
    primary value at every element of a block)."""
    where = np.flatnonzero(mask)
    if where.size == mask.size:
        return where, list(arrays)
    return where, [a[mask] for a in arrays]


def reading_alternatives(spec: m.Spec, readings: dict[str, np.ndarray], expected: np.ndarray, *,
                         evaluations: frozenset[str] = frozenset(),
                         bounds: dict[str, np.ndarray] | None = None) -> tuple[Alternative, ...]:
    """Each reading (``"<ambiguity>:<reading>"`` -> its values over the
    output, flat) as a STRICT alternative where it gives another value than
    ``expected`` (`marker` first, so that the judge counts who took the
    primary); a key the spec's ambiguities lack is left out.  A key in
    ``evaluations`` is a literal evaluation, kept only where it keeps the
    exact result's range (`range_lost`); a key in ``bounds`` carries that
    reading's own error bound per element (`Alternative.bound`).  The
    reduction and window families' one path."""
    known = {a.id: a for a in spec.ambiguities}
    markers, singles = [], []
    for key, values in sorted(readings.items()):
        ambiguity_id, reading_id = key.split(":")
        ambiguity = known.get(ambiguity_id)
        reading = ambiguity.reading(reading_id) if ambiguity is not None else None
        if ambiguity is None or reading is None:
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            cast = values.astype(expected.dtype)
        differ = cast != expected
        if cast.dtype.kind == "f":
            differ &= ~(np.isnan(cast) & np.isnan(expected))
        if key in evaluations:
            differ &= ~range_lost(cast, expected)
        where = np.flatnonzero(differ)
        if where.size:
            bound = (bounds or {}).get(key)
            alt = Alternative(f"{PREFIX}{ambiguity.id}:{reading.id}", where, cast[where], Tier.STRICT,
                              f"{ambiguity.id}: {reading.says}", None if bound is None else bound[where])
            markers.append(marker(ambiguity, [alt], expected))
            singles.append(alt)
    return tuple(markers + singles)


def end_to_end(parts: Sequence[Sequence[Alternative]], sizes: Sequence[int]) -> tuple[Alternative, ...]:
    """The alternatives of cases laid end to end (case ``i`` has ``sizes[i]``
    elements), each moved by its case's offset, its bound kept."""
    offsets = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
    return tuple(a.part(slice(None), int(offsets[i])) for i, alternatives in enumerate(parts) for a in alternatives)


def joined_blocks(parts: Sequence[tuple[Sequence[Alternative], int]]) -> tuple[Alternative, ...]:
    """The alternatives of one output's blocks (each with its offset, in
    order) as one per name, indices moved by the block's offset: an oracle
    that works a large case block by block offers what it would whole."""
    found: dict[str, list[Alternative]] = {}
    for alternatives, offset in parts:
        for alt in alternatives:
            found.setdefault(alt.name, []).append(alt.part(slice(None), offset))
    return tuple(Alternative(name, np.concatenate([a.index for a in same]), np.concatenate([a.values for a in same]),
                             same[0].tier, same[0].reason,
                             None if same[0].bound is None else np.concatenate([a.bound for a in same
                                                                                if a.bound is not None]))
                 for name, same in found.items())


def within(alternatives: tuple[Alternative, ...], lo: int, hi: int, *, empty: bool = False) -> tuple[Alternative, ...]:
    """The parts of ``alternatives`` (indices end to end) over [lo, hi),
    indices counted from ``lo``; one with no index at all kept where ``empty``."""
    out = []
    for a in alternatives:
        keep = (a.index >= lo) & (a.index < hi)
        if keep.any() or (empty and not a.index.size):
            out.append(a.part(keep, -lo))
    return tuple(out)


# -- accumulation: the error bounds of sums (DESIGN, accumulation tolerances) --------------

#: The probabilistic bound's lambda: 2 exp(-lambda^2/2) = 7.5e-6, the
#: chance that an element of an honest result is warned of, at most.
LAMBDA = 5.0

def unit_roundoff(dtype: m.DataType) -> float:
    """u = 2^-p of a float type (p its significand's digits)."""
    return float(2.0 ** -(int(finfo(numpy_dtype(dtype)).nmant) + 1))


def gamma(n: np.ndarray, u: float) -> np.ndarray:
    """gamma_n(u) = n u / (1 - n u), infinite where n u >= 1."""
    nu = n * u
    with np.errstate(divide="ignore"):
        return np.where(nu < 1, nu / np.maximum(1 - nu, 0), np.inf)


def gamma_probable(n: np.ndarray, u: float, lam: float = LAMBDA) -> np.ndarray:
    """Higham and Mary's gamma~_n(lambda) = exp(lambda sqrt(n) u + n u^2 / (1 - u)) - 1,
    never above gamma_n (it is larger for small n)."""
    return np.minimum(np.expm1(lam * np.sqrt(n) * u + n * u * u / (1 - u)), gamma(n, u))


# -- range loss: one rule for every family (DESIGN, Ambiguities; issue #32 item 2) ----------------

def range_lost(values: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per element: whether ``values``, a formula evaluated with an
    intermediate that overflows or underflows (a literal evaluation: no max
    subtraction, the log of a rounded softmax, a step-by-step evaluation in
    the target type), lost the range of ``expected``, the exact result in
    the output's type: ``expected`` finite and normal, ``values`` +-inf, NaN
    or +-0.  Such a value is wrong whichever formula was evaluated (a reading
    is a different meaning of the doc's text, never a loss of range); where
    the exact result is subnormal, zero or beyond the type's range, the
    literal evaluation's +-0 or +-inf stays an honest reading."""
    with np.errstate(invalid="ignore"):
        e = expected.astype(np.float64)
        v = values.astype(np.float64)
        normal = np.isfinite(e) & (np.abs(e) >= float(finfo(expected.dtype).smallest_normal))
        return normal & (~np.isfinite(v) | (v == 0))
