"""The exact rounding of refined values: the vectorised decision agrees with
picking the nearest of the float64 guess and its neighbours one by one."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from dmlconform.compare import finfo, ordered_bits
from dmlconform.formula.functions import mp_context
from dmlconform.formula.refine import PRECISION, _round
from dmlconform.formula.rounding import neighbours, to_float

DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float64))


def _nearest(ctx, exacts, dtype):
    """One value at a time: the nearest of the guess and its two neighbours,
    ties to even (the definition the vectorised path must agree with)."""
    info = finfo(dtype)
    largest = ctx.mpf(float(info.max))
    half_top = ctx.ldexp(1, int(info.maxexp) - 2 - int(info.nmant))
    out = []
    for exact in exacts:
        if ctx.isnan(exact) or ctx.isinf(exact):
            out.append(np.asarray([float(exact)]).astype(dtype)[0])
            continue
        if abs(exact) >= largest + half_top:
            out.append(np.asarray([math.copysign(math.inf, float(ctx.sign(exact)))]).astype(dtype)[0])
            continue
        guess = to_float(np.asarray([float(exact)]), dtype)
        cands = [c for c in (guess, neighbours(guess, -1), neighbours(guess, 1)) if math.isfinite(float(c[0]))]
        best = min(cands, key=lambda c: (abs(ctx.mpf(float(c[0])) - exact), bool(ordered_bits(c)[0] & 1)))
        out.append(best[0])
    return np.asarray(out, dtype=dtype)


def _hard_values(ctx, dtype, rng):
    """Midpoints of the type's grid and values within a few 2**-256 of them,
    the overflow threshold, subnormals and values far below them, signs."""
    info = finfo(dtype)
    grid = np.concatenate([
        rng.standard_normal(200) * np.exp2(rng.integers(-30, 30, 200)),
        [float(info.max), float(info.smallest_normal), float(info.smallest_subnormal), 1.0, 0.5],
        rng.random(50) * float(info.smallest_normal),
    ])
    grid = to_float(grid, dtype)
    values = []
    for g, up in zip(grid, neighbours(grid, 1)):
        lo, hi = float(g), float(up)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            hi = lo + float(ctx.ldexp(1, int(info.maxexp) - 2 - int(info.nmant))) * 2  # toward the threshold
        mid = (ctx.mpf(lo) + ctx.mpf(hi)) / 2
        tiny = ctx.ldexp(abs(mid) if mid else 1, -PRECISION + 8)
        for v in (mid, mid + tiny, mid - tiny, ctx.mpf(lo), mid + (hi - lo) / 7, ctx.mpf(lo) * (1 + ctx.ldexp(1, -60))):
            values += [v, -v]
    values += [ctx.ldexp(1, -2000), -ctx.ldexp(1, -2000), ctx.ldexp(1, 2000), ctx.nan, ctx.inf, -ctx.inf]
    return values


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_agrees_with_the_nearest_of_three(dtype) -> None:
    ctx = mp_context(PRECISION)
    values = [v for v in _hard_values(ctx, dtype, np.random.default_rng(0)) if v != 0]
    got, want = _round(ctx, values, dtype), _nearest(ctx, values, dtype)
    assert got.dtype == want.dtype
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
