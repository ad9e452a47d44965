"""The normalization family's default suites (seed 0, level 6_4 unless named), loaded once per test run."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from types import ModuleType

from dmlconform.cases.model import Case
from dmlconform.catalog import load_spec
from dmlconform.families import cases_of
from dmlconform.spec import model as m
from tests.conftest import REPO


@cache
def spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


@cache
def cases(op: str, level: m.FeatureLevel = m.FeatureLevel.FL_6_4) -> tuple[Case, ...]:
    return tuple(cases_of(spec(op), level, seed=0))


def case(op: str, suffix: str) -> Case:
    """The case ``<op>/<suffix>`` of the suite."""
    return next(c for c in cases(op) if c.id == f"{op}/{suffix}")


@cache
def honest() -> ModuleType:
    """bench/honest_backends.py: the float32 kernels (sequential sums, one-pass variance) an honest backend runs."""
    sys.path.insert(0, str(REPO / "bench"))
    found = importlib.util.spec_from_file_location("honest_backends", REPO / "bench" / "honest_backends.py")
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    sys.modules["honest_backends"] = module
    found.loader.exec_module(module)
    return module
