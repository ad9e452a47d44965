"""floatrun's shortcuts change nothing: the IEEE min/max variant skipped where
a NaN input reaches the output through arithmetic alone."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.families.elementwise import floatrun
from dmlconform.families.elementwise.formula_oracle import evaluate
from dmlconform.formula import parse


@pytest.mark.parametrize(("text", "strict"), [
    ("f(x) = x * max(0, min(1, a * x + b))", {"x"}),
    ("f(x) = max(0, x) + min(0, a * (exp(x / a) - 1))", set()),
    ("Y = -x / y\nZ = max(Y, 0) + w\nY -= exp(v)\nW = Y * 2", {"x", "y"}),
    ("Y = pow(x, y) + z", {"z"}),
])
def test_nan_strict_names_pass_arithmetic_only(text: str, strict: set[str]) -> None:
    assert floatrun._nan_strict(parse(text))[None] == strict


@pytest.mark.parametrize("text", ["f(x) = x * max(0, min(1, 0.25 * x + y))", "f(x) = max(x, y) + y"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_minmax_variant_skips_only_elements_it_cannot_change(text: str, dtype: type,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    tree = parse(text)
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(200).astype(dtype) for _ in range(2))
    x[::5], y[::7] = np.nan, np.nan
    inputs = {"x": x, "y": y}
    got = evaluate(tree, inputs, dtype=dtype)
    monkeypatch.setattr(floatrun.FloatRun, "minmax_open", lambda self, index: index)
    want = evaluate(tree, inputs, dtype=dtype)
    assert [(a.name, a.index.tolist(), a.values.tobytes()) for a in got.alternatives] == \
           [(a.name, a.index.tolist(), a.values.tobytes()) for a in want.alternatives]
    assert got.ambiguous.tolist() == want.ambiguous.tolist()
    assert got.expected.tobytes() == want.expected.tobytes()
