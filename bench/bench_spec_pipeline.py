"""Benchmark: extract of the whole doc corpus and lint of the extracted specs.

Targets (issue 3): extract of all 331 pages < 2 s, lint of the 176 specs < 1 s
on a 2-core machine.  Run: python bench/bench_spec_pipeline.py [DOCS_OPERATORS]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from dmlconform.spec.extract import extract
from dmlconform.spec.store import write_spec


def _best(fn, repeat: int = 3) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main() -> None:
    docs = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1].parent / "shared/directml-docs/operators"
    t_extract, result = _best(lambda: extract([docs]))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t_write, _ = _best(lambda: [write_spec(s, folder) for s in result.specs])
        try:
            from dmlconform.lint.checks import lint_paths
        except ImportError:
            lint_paths = None
        t_lint, findings = _best(lambda: lint_paths([folder])) if lint_paths else (float("nan"), [])
    print(f"extract: {result.pages} pages -> {len(result.specs)} specs in {t_extract:.3f} s (target < 2 s)")
    print(f"write:   {len(result.specs)} spec files in {t_write:.3f} s")
    print(f"lint:    {len(result.specs)} specs -> {len(findings)} findings in {t_lint:.3f} s (target < 1 s)")


if __name__ == "__main__":
    main()
