"""The bound audit (issue #32 item 1): how wide each FAIL bound is, against
the value it bounds and against the errors honest implementations make.

Over the default suite (every family, the newest feature level, seed 0;
``-k`` and ``--family`` narrow it), per operator x output type, over the
float outputs of the cases the cpu reference supports:

* **value**: the FAIL bound over |expected|, per element whose expected
  value is normal in the output type; the worst (largest) and the median.
  Above 2^-8 a backend may be off by more than 0.4% and PASS.  Also the
  worst over elements of magnitude 1 or more, where the generic fault
  ``zero-output`` must FAIL (near 0 a bound may exceed a value by design:
  cancellation).
* **honest**: per case, the FAIL bound over the largest error that the
  honest implementations make at the element where they come nearest to
  it (min over elements of bound / max over implementations of |error|);
  the worst (the loosest case: largest) and the median over the cases, and
  the tightest (smallest: below 1 an honest implementation FAILs).  The
  implementations are the cpu reference, `honest_backends.F64Once` and
  `honest_backends.F32Sequential`.  Where all of them are exact in every
  case the row says ``exact`` rather than dividing by zero.

The FAIL bound of an element is what the comparator (`compare`) lets
through below FAIL: the larger of the relaxed ULP budget
(ceil(ulp x relaxed_factor) ULPs, the spec's tolerance taking precedence,
as `judge` does) measured away from zero, and the relaxed bound (the
family's ``bound_relaxed``, else ``relaxed_factor`` x ``bound_strict``).
Alternatives (readings, limits) accept other values at some elements: an
honest value that matches one counts as exact there; they are no part of
the bound.

A row is an outlier when the value ratio's worst is above 2^-8 or the
honest ratio's worst above 64; outliers sort first.  The markdown table
replaces the generated part of ``--markdown`` (between its markers, so the
explanations written below it stay); every outlier must be named in those
explanations as ``OPERATOR/TYPE``: exit 1 when one is not (or when an
honest implementation FAILs), else 0.

    nice -n 10 python bench/bench_bounds.py [-k PATTERN] [--family NAME] \\
        [--markdown docs/bounds.md] [--json docs/bounds.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
from honest_backends import VARIANTS  # beside this script: on sys.path when it runs

from dmlconform.atomic import write_atomic
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Case, flat_view
from dmlconform.catalog import load_spec
from dmlconform.compare import Alternative, Tier, finfo, nan_mask, ulp_distance
from dmlconform.families import Oracles, family_of
from dmlconform.families.reduction.cases import function_of
from dmlconform.families.reduction.semantics import Reduction
from dmlconform.oracles.base import Expectation
from dmlconform.runner import bind
from dmlconform.spec.files import spec_files
from dmlconform.spec.model import FeatureLevel, Spec
from dmlconform.suite import Selection, pairs

REPO = Path(__file__).resolve().parents[1]
VALUE_LIMIT = 2.0 ** -8
HONEST_LIMIT = 64.0
BEGIN = "<!-- bench_bounds.py: generated from here -->"
END = "<!-- bench_bounds.py: generated to here -->"


# -- one output of one case -------------------------------------------------------------------

def ulp_reach(expected: np.ndarray, k: int) -> np.ndarray:
    """float64: how far from each element of ``expected`` (a float type) a
    value k ULPs away may be: the distance to the k-th float above |e|
    (the larger side), or below it where that one is infinite."""
    magnitude = np.abs(expected)
    bits_type = np.dtype(f"i{expected.dtype.itemsize}")
    bits = magnitude.view(bits_type).astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = magnitude.astype(np.float64)
        above = (bits + k).astype(bits_type).view(expected.dtype).astype(np.float64) - e
        down = e - np.maximum(bits - k, 0).astype(bits_type).view(expected.dtype).astype(np.float64)
        return np.where(np.isfinite(above), above, down)


def fail_bound(expectation: Expectation, ulp: int) -> np.ndarray:
    """float64 per element: the largest error that is not a FAIL (see the module's docstring)."""
    expected = expectation.expected
    reach = ulp_reach(expected, math.ceil(ulp * expectation.relaxed_factor))
    relaxed = expectation.bound_relaxed
    if relaxed is None and expectation.bound_strict is not None:
        with np.errstate(over="ignore"):
            relaxed = expectation.bound_strict * expectation.relaxed_factor
    if relaxed is None:
        return reach
    # a NaN bound accepts nothing (`compare`: error <= NaN is false), so the ULP budget alone counts there
    return np.fmax(reach, np.broadcast_to(np.asarray(relaxed, dtype=np.float64), expected.shape))


def honest_error(expected: np.ndarray, actual: np.ndarray, alternatives: Sequence[Alternative],
                 ulp: int) -> np.ndarray:
    """float64 |actual - expected| per element: 0 where both are NaN or the
    same infinity, or where ``actual`` matches an alternative the
    comparator accepts (within ``ulp``, as `compare` matches them);
    infinite where NaN-ness differs."""
    with np.errstate(invalid="ignore", over="ignore"):
        e, a = expected.astype(np.float64), actual.astype(np.float64)
        error = np.abs(a - e)
    error[(e == a)] = 0
    error[nan_mask(expected) != nan_mask(actual)] = np.inf
    error[nan_mask(expected) & nan_mask(actual)] = 0
    for alt in alternatives:
        if alt.tier is Tier.FLUSH:
            continue
        matched = ulp_distance(alt.values.astype(actual.dtype), actual[alt.index]) <= ulp
        error[alt.index[matched]] = 0
    return error


@dataclass(frozen=True, slots=True)
class Measured:
    """One float output of one case: the value ratios at its normal
    elements, and the honest ratio (None: every implementation exact)."""

    case: str
    value: np.ndarray
    large: float | None  # the worst value ratio where |expected| >= 1 (None: no such element)
    honest: float | None
    beyond: int  # elements where an honest implementation is past the bound


def measure(case_id: str, expectation: Expectation, ulp: int, actuals: Iterable[np.ndarray]) -> Measured:
    """`Measured` of one output from its expectation and the honest outputs (flat)."""
    expected = expectation.expected
    bound = fail_bound(expectation, ulp)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.abs(expected.astype(np.float64))
        normal = np.isfinite(e) & (e >= float(finfo(expected.dtype).smallest_normal))
        value = (bound[normal] / e[normal]).astype(np.float64)
        at_least_one = e[normal] >= 1
        large = float(np.max(value[at_least_one])) if at_least_one.any() else None
    error = np.zeros(expected.shape, np.float64)
    for actual in actuals:
        np.maximum(error, honest_error(expected, actual, expectation.alternatives, ulp), out=error)
    erring = error > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = bound[erring] / error[erring]
    ratio[np.isnan(ratio)] = np.inf  # an infinite bound over an infinite error: that bound takes anything
    honest = float(np.min(ratio)) if erring.any() else None
    return Measured(case_id, value, large, honest, int(np.count_nonzero(error > bound)))


# -- the suite ----------------------------------------------------------------------------------

@dataclass
class Group:
    """What one operator x output type gathered, case by case."""

    values: list[np.ndarray] = field(default_factory=list)
    value_worst: tuple[float, str] = (0.0, "")
    large_worst: tuple[float, str] | None = None
    honest: list[tuple[float, str]] = field(default_factory=list)
    cases: int = 0
    beyond: int = 0

    def add(self, m: Measured) -> None:
        self.cases += 1
        self.beyond += m.beyond
        if m.value.size:
            self.values.append(m.value)
            worst = float(np.max(m.value))
            if worst > self.value_worst[0] or not self.value_worst[1]:
                self.value_worst = (worst, m.case)
        if m.large is not None and (self.large_worst is None or m.large > self.large_worst[0]):
            self.large_worst = (m.large, m.case)
        if m.honest is not None:
            self.honest.append((m.honest, m.case))


def audit(suite: Sequence[tuple[Spec, Case]]) -> dict[tuple[str, str], Group]:
    """Every float output of every case the cpu reference supports, measured."""
    cpu, oracles = CpuBackend(), Oracles()
    variants = {name: make() for name, make in VARIANTS.items()}
    groups: dict[tuple[str, str], Group] = defaultdict(Group)
    for spec, case in suite:
        floats = [j for j, t in enumerate(case.outputs) if t.dtype.is_float]
        if not case.expect_supported or not floats or not cpu.supports(spec, case).supported:
            continue
        outputs = _honest_outputs(spec, case, variants)
        size = max(math.prod(t.sizes) for t in case.outputs)
        with np.errstate(all="ignore"):
            expectations = oracles.get(spec).bind([case], flush_subnormals=False).expect(0, size)
        for j in floats:
            dtype = case.outputs[j].dtype
            ulp = {t.dtype: t.ulp for t in spec.tolerance}.get(dtype, expectations[j].ulp)
            m = measure(case.id, expectations[j], ulp, [out[j] for out in outputs])
            groups[(operator_of(spec, case), dtype.name)].add(m)
    return groups


def operator_of(spec: Spec, case: Case) -> str:
    """The row's operator: REDUCE's functions (SUM, LOG_SUM_EXP, ...) are
    operators of their own, with bounds of their own."""
    if isinstance(spec.semantics, Reduction):
        return f"{spec.operator}:{function_of(spec.semantics, case)}"
    return spec.operator


def _honest_outputs(spec: Spec, case: Case, variants: dict) -> list[list[np.ndarray]]:
    """Each honest implementation's outputs of ``case`` (flat, in order);
    one that is the cpu reference for ``spec`` is not run again."""
    found = []
    for backend in variants.values():
        if getattr(backend, "same_as_cpu", lambda s: False)(spec):
            continue
        buffers = bind(case)
        with np.errstate(all="ignore"):
            backend.run(spec, case, buffers)
        found.append([flat_view(t, buffers[t.name], t.sizes) for t in case.outputs])
    return found


def default_suite(patterns: Sequence[str], family: str | None) -> list[tuple[Spec, Case]]:
    specs = [(p, load_spec(p)) for p in spec_files([REPO / "specs"])]
    if family is not None:
        specs = [(p, s) for p, s in specs if (f := family_of(s)[0]) is not None and f.name == family]
    chosen, _ = pairs(specs, max(FeatureLevel), seed=0, large=False, cases=None,
                      selection=Selection(patterns=tuple(patterns)))
    return chosen


# -- the results --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Row:
    operator: str
    dtype: str
    cases: int
    value_worst: float | None
    value_worst_case: str
    value_median: float | None
    large_worst: float | None
    large_worst_case: str
    honest_worst: float | None
    honest_worst_case: str
    honest_median: float | None
    honest_tightest: float | None
    honest_tightest_case: str
    exact_cases: int
    beyond: int

    @property
    def severity(self) -> float:
        """How far past the outlier limits (above 1: an outlier)."""
        return max((self.value_worst or 0) / VALUE_LIMIT, (self.honest_worst or 0) / HONEST_LIMIT)

    @property
    def outlier(self) -> bool:
        return self.severity > 1

    @property
    def name(self) -> str:
        return f"{self.operator}/{self.dtype}"


def row(key: tuple[str, str], g: Group) -> Row:
    values = np.concatenate(g.values) if g.values else np.zeros(0)
    honest = sorted(g.honest)
    ratios = [r for r, _ in honest]
    return Row(key[0], key[1], g.cases,
               g.value_worst[0] if values.size else None, g.value_worst[1],
               float(np.median(values)) if values.size else None,
               g.large_worst[0] if g.large_worst else None, g.large_worst[1] if g.large_worst else "",
               honest[-1][0] if honest else None, honest[-1][1] if honest else "",
               float(np.median(ratios)) if honest else None,
               honest[0][0] if honest else None, honest[0][1] if honest else "",
               g.cases - len(honest), g.beyond)


def rows(groups: dict[tuple[str, str], Group]) -> list[Row]:
    """Outliers first, the most severe first; then by name."""
    made = [row(k, g) for k, g in groups.items()]
    return sorted(made, key=lambda r: (not r.outlier, -r.severity if r.outlier else 0, r.name))


def _number(x: float | None) -> str:
    return "-" if x is None else "inf" if math.isinf(x) else f"{x:.3g}"


def markdown(found: Sequence[Row], command: str) -> str:
    lines = [BEGIN, "",
             f"Generated by `nice -n 10 {command}`; do not edit between the markers.",
             "`bench/bench_bounds.py`'s docstring defines every column.  value: FAIL bound / |expected|",
             "over elements normal in the output type.  honest: per case, FAIL bound / the largest honest",
             "error at the element where the honest implementations come nearest to it (cpu, f64-once,",
             "f32-sequential); worst is the loosest case, tightest below 1 would be an honest FAIL.",
             "value >= 1: the worst value ratio over elements of magnitude 1 or more (where `zero-output`",
             "must FAIL).  exact: cases where every honest implementation gave the expected value everywhere.", "",
             f"{sum(r.outlier for r in found)} of {len(found)} operator x type rows are outliers "
             f"(value worst > 2^-8 or honest worst > {HONEST_LIMIT:g}).", "",
             "| operator/type | cases | value worst | value median | value >= 1 | honest worst | honest median "
             "| honest tightest | exact | outlier |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in found:
        honest_worst = "exact" if r.honest_worst is None else _number(r.honest_worst)
        lines.append(f"| {r.name} | {r.cases} | {_number(r.value_worst)} | {_number(r.value_median)} "
                     f"| {_number(r.large_worst)} | {honest_worst} | {_number(r.honest_median)} "
                     f"| {_number(r.honest_tightest)} | {r.exact_cases} | {'yes' if r.outlier else ''} |")
    lines += ["", "The case behind each outlier's worst ratios:", ""]
    for r in (r for r in found if r.outlier):
        large = (f"; value >= 1 {_number(r.large_worst)} at `{r.large_worst_case}`"
                 if (r.large_worst or 0) > VALUE_LIMIT else "")
        lines.append(f"- {r.name}: value {_number(r.value_worst)} at `{r.value_worst_case}`; "
                     f"honest {_number(r.honest_worst)} at `{r.honest_worst_case or '-'}`{large}")
    return "\n".join([*lines, "", END])


def as_json(r: Row) -> dict[str, object]:
    """``r`` as strict JSON: an infinite ratio as the text "inf"."""
    def plain(v: object) -> object:
        return str(v) if isinstance(v, float) and not math.isfinite(v) else v
    return {**{f.name: plain(getattr(r, f.name)) for f in fields(Row)}, "outlier": r.outlier}


def merged(path: Path, generated: str) -> str:
    """``path``'s text with its generated part replaced (the whole text when it has none)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + generated + rest.split(END, 1)[1]
    return f"# The bound audit\n\n{generated}\n"


def unexplained(found: Sequence[Row], text: str) -> list[str]:
    """Outliers that the hand-written part of ``text`` does not name."""
    written = text.split(END, 1)[1] if END in text else ""
    return [r.name for r in found if r.outlier and r.name not in written]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="patterns", action="append", default=[], help="case id pattern, as run's -k")
    parser.add_argument("--family", help="only the specs of this family (elementwise, reduction, ...)")
    parser.add_argument("--markdown", type=Path, help="the page whose generated part is replaced")
    parser.add_argument("--json", type=Path, help="where the rows go as JSON")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    suite = default_suite(args.patterns, args.family)
    found = rows(audit(suite))
    seconds = time.perf_counter() - began
    shown = " ".join(["python bench/bench_bounds.py", *(f"-k {p}" for p in args.patterns),
                      *([f"--family {args.family}"] if args.family else []),
                      *([f"--markdown {args.markdown}"] if args.markdown else []),
                      *([f"--json {args.json}"] if args.json else [])])
    generated = markdown(found, shown)
    text = generated
    if args.markdown is not None:
        text = merged(args.markdown, generated)
        write_atomic(args.markdown, text)
    else:
        print(generated)
    if args.json is not None:
        lines = ",\n".join(json.dumps(as_json(r), allow_nan=False) for r in found)  # a row a line: short diffs
        write_atomic(args.json, f"[\n{lines}\n]\n")
    missing = unexplained(found, text) if args.markdown is not None else []
    honest_fails = [r.name for r in found if r.beyond]
    for name in missing:
        print(f"outlier not explained below the table: {name}", file=sys.stderr)
    for name in honest_fails:
        print(f"an honest implementation is past the FAIL bound: {name}", file=sys.stderr)
    print(f"{len(suite)} cases, {len(found)} rows, {sum(r.outlier for r in found)} outliers, "
          f"{seconds:.0f} s", file=sys.stderr)
    return 1 if missing or honest_fails else 0


if __name__ == "__main__":
    sys.exit(main())
