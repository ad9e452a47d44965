"""The mean-variance normalization's bound collected into a linear form per
group (`oracle._Form`, issue #36's large case) is the bound of the
derivation taken step by step (docs/normalization.md, "The bound"): written
out here as the oracle computed it before, per element, with each group's
factors gathered to its elements.  Over every MVN, MVN1, MVN2 and
BATCH_NORMALIZATION_TRAINING case of the default suite (scale, bias and
addend given or not, NormalizeVariance FALSE, UseMean FALSE, NaN, constant
and one-element groups, FLOAT16): the same values bit for bit, both bounds
and the variance reading's within 1e-12 relatively (the float64 roundings
of a different order), the same readings' elements and values.  The
variance's bound (`oracle.statistics`), its means of ``|d| e``, ``e^2`` and
``(|d| + e)^2`` from each group's mean ``|d|`` and ``d^2``, is the
per-element sums' likewise."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.compare import Alternative
from dmlconform.families.normalization import oracle
from dmlconform.families.normalization.cases import semantics_of
from dmlconform.families.reduction.oracle import reduced
from dmlconform.oracles.base import gamma, gamma_probable
from tests.families.normalization import suites

OPERATORS = ("MEAN_VARIANCE_NORMALIZATION", "MEAN_VARIANCE_NORMALIZATION1", "MEAN_VARIANCE_NORMALIZATION2",
             "BATCH_NORMALIZATION_TRAINING")
_U64 = 2.0 ** -53


def _normalized(d, e, row, variance, variance_error, eps, u, divide):  # type: ignore[no-untyped-def]
    if not divide:
        return d, e
    t = variance + eps
    r = (variance_error + u * (t + variance_error)) / t
    inverse = np.where(r < 1, 1 / np.sqrt(np.maximum(1 - r, 0)) - 1, np.inf)
    inverse = ((1 + inverse) * (1 + oracle.ROOT_ULPS * u) - 1)[row]
    s = np.sqrt(t)[row]
    y = d / s
    return y, np.abs(y) * inverse + e / s * (1 + inverse)


def _affine(y, e_y, a, b, u, add):  # type: ignore[no-untyped-def]
    scaled = y if a is None else a * y
    e = e_y if a is None else np.abs(a) * e_y + u * np.abs(a) * (np.abs(y) + e_y)
    for term in (b, add):
        if term is not None:
            scaled, e = scaled + term, e + u * (np.abs(scaled) + e + np.abs(term))
    return scaled, e


def _own(x, y, affine, n, divide, eps, st, row):  # type: ignore[no-untyped-def]
    k = (n + 8) * _U64
    a, b, add = affine
    spread = np.abs(x) + st.magnitude[row]
    if divide:
        spread = spread / np.sqrt(st.variance + eps)[row] + np.abs(y)
    scale = 1.0 if a is None else np.abs(a)
    return k * (scale * spread + sum(0.0 if t is None else np.abs(t) for t in (b, add)))


def _step_by_step(rows: oracle._Rows) -> oracle._Block:
    """Every element of ``rows`` as the oracle computed it step by step (before the form)."""
    n, u, eps = rows.n, rows.u, rows.eps
    row = np.arange(rows.size) // n
    x = rows.x.astype(np.float64).reshape(-1)
    a, b, add = (None if t is None else np.ascontiguousarray(t, dtype=np.float64).reshape(-1) for t in rows.affine)
    d = x - rows.primary[1].mean[row] if rows.centre else x
    value, e, bounds = x, x, []
    for st in rows.primary:
        e = st.mean_error[row] + u * (np.abs(d) + st.mean_error[row]) if rows.centre else np.zeros(d.shape)
        y, e_y = _normalized(d, e, row, st.variance, st.variance_error, eps, u, rows.divide)
        value, e_v = _affine(y, e_y, a, b, u, add)
        bounds.append(e_v + _own(x, y, (a, b, add), n, rows.divide, eps, st, row))
    found: tuple[Alternative, ...] = ()
    if rows.reading is not None:
        st = rows.reading
        if rows.centre:
            key, variance = "variance:sample", st.variance * n / (n - 1)
            variance_error = st.variance_error * n / (n - 1) + u * variance
        else:
            key, variance, variance_error = "variance-without-mean:about-the-mean", st.variance, st.variance_error
            e = np.zeros(d.shape)
        y, e_y = _normalized(d, e, row, variance, variance_error, eps, u, True)
        found = oracle._offered(rows.spec, key, *_affine(y, e_y, a, b, u, add), rows.nt, value)
    return oracle._rounded(value, bounds, found, rows.nt)


def _close(got: np.ndarray, wanted: np.ndarray) -> None:
    assert np.array_equal(np.isfinite(got), np.isfinite(wanted))
    finite = np.isfinite(wanted)
    np.testing.assert_allclose(got[finite], wanted[finite], rtol=1e-12, atol=0)


@pytest.mark.parametrize("op", OPERATORS)
def test_the_form_is_the_derivation_step_by_step(op: str) -> None:
    spec = suites.spec(op)
    sem = semantics_of(spec)
    checked = 0
    with np.errstate(all="ignore"):
        for case in suites.cases(op):
            if not case.expect_supported or case.dtype.name not in ("FLOAT16", "FLOAT32"):
                continue
            rows = oracle.mean_variance_rows(spec, sem, case)
            got, wanted = rows.block(0, rows.size), _step_by_step(rows)
            assert got.expected.tobytes() == wanted.expected.tobytes(), case.id
            _close(got.strict, wanted.strict)
            _close(got.relaxed, wanted.relaxed)
            assert [a.name for a in got.alternatives] == [a.name for a in wanted.alternatives], case.id
            for g, w in zip(got.alternatives, wanted.alternatives):
                assert g.index.tolist() == w.index.tolist() and g.values.tobytes() == w.values.tobytes(), case.id
                if w.bound is not None:
                    assert g.bound is not None
                    _close(g.bound, w.bound)
            checked += 1
    assert checked > 40


def _variance_errors(rows: np.ndarray, u: float) -> list[np.ndarray]:
    """The variance's bound per gamma as `oracle.statistics` took it before: ``e`` per element, then its sums."""
    n = rows.shape[1]
    found = []
    for g in (gamma_probable, gamma):
        m2, e_m2 = reduced(rows * rows, "AVERAGE", u, g)
        mu, e_mu = reduced(rows, "AVERAGE", u, g)
        size = np.abs(rows - mu[:, None])
        e = e_mu[:, None] + u * (size + e_mu[:, None])
        gn, g2 = (float(g(np.array([float(k)]), u)[0]) for k in (n, 2))
        q = ((size + e) ** 2).mean(axis=1)
        two_pass = 2 * (size * e).mean(axis=1) + (e * e).mean(axis=1) + (gn * (1 + g2) + g2) * q
        one_pass = e_m2 + 2 * np.abs(mu) * e_mu + e_mu ** 2 + u * (np.abs(mu) + e_mu) ** 2 + u * (m2 + e_m2)
        found.append(np.maximum(two_pass, one_pass) + (n + 8) * _U64 * m2)
    return found


@pytest.mark.parametrize("op", OPERATORS[1:3])
def test_the_variance_bound_is_the_per_element_sums(op: str) -> None:
    spec = suites.spec(op)
    sem = semantics_of(spec)
    with np.errstate(all="ignore"):
        for case in suites.cases(op):
            if not case.expect_supported or case.dtype.name != "FLOAT32":
                continue
            rows = oracle.mean_variance_rows(spec, sem, case)
            if not rows.centre:
                continue
            x = rows.x.astype(np.float64)
            for st, wanted in zip(rows.primary, _variance_errors(x, rows.u)):
                _close(st.variance_error, wanted)
